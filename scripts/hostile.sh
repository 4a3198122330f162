#!/usr/bin/env bash
# Times hostile templates through the release binary: each must end (with its error) well under a
# second and with bounded memory. Usage: scripts/hostile.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p chatfmt-cli
bin=target/release/chatfmt
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo '[{"role": "user", "content": "hi"}]' > "$dir/messages.json"
python3 - "$dir" <<'PY'
import sys, os
d = sys.argv[1]
cases = {
    "infinite-recursion": "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
    "trillion-steps": "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100) %}{% endfor %}{% endfor %}{% endfor %}",
    "string-doubled-60-times": "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "billion-range": "{% for i in range(10 ** 9) %}{% endfor %}",
    "nested-literals": "{{ " + "[" * 100000 + "1" + "]" * 100000 + " }}",
    "nested-blocks": "{% if true %}" * 100000 + "x" + "{% endif %}" * 100000,
    "nested-values": "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}",
    "ten-megabytes": "{{ 'abc' }} text " * (10 * 1024 * 1024 // 17),
}
for name, src in cases.items():
    with open(os.path.join(d, name + ".jinja"), "w") as f:
        f.write(src)
PY
printf '%-26s %8s %10s  %s\n' case seconds max-rss-kb result
for t in "$dir"/*.jinja; do
  name=$(basename "$t" .jinja)
  start=$(date +%s.%N)
  /usr/bin/time -o "$dir/rss" -f '%M' "$bin" render --template "$t" --messages "$dir/messages.json" > /dev/null 2> "$dir/err" || true
  end=$(date +%s.%N)
  rss=$(tail -n 1 "$dir/rss")
  result=$(grep -o '^error: [A-Za-z]*' "$dir/err" | head -n 1 || true)
  printf '%-26s %8.3f %10s  %s\n' "$name" "$(echo "$end - $start" | bc)" "$rss" "${result:-rendered}"
done
