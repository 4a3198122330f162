#!/usr/bin/env bash
# Times chatfmt, minijinja 3.0.5, a hand-written ChatML builder (criterion, `cargo bench --bench render`) and
# transformers 5.23.0's render_jinja_template on the same kit inputs, after checking every output against the
# kit's golden, and prints medians and ratios. A first criterion run writes the outputs and times compilation;
# then each case is timed with criterion right before transformers times it (see bench_compare.py).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
target="${CARGO_TARGET_DIR:-$root/target}"
venv="$target/bench-venv"
kits="${CHATFMT_KITS:-$root/../shared/conformance}"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import transformers, jinja2' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet transformers==5.23.0 jinja2==3.1.6
fi
"$venv/bin/python" -c 'import torch' 2>/dev/null && echo "note: torch is installed in $venv (not needed)"
out="$target/bench-results"
rm -rf "$out"
CHATFMT_BENCH_OUT="$out" cargo bench -p chatfmt --bench render -- '^compile/'
CHATFMT_KITS="$kits" "$venv/bin/python" scripts/bench_compare.py "$out" "$target/criterion" "$kits" | tee "$out/summary.txt"
