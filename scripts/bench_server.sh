#!/usr/bin/env bash
# Load test of `chatfmt serve` with wrk: throughput and p50/p99 latency of vLLM's chat /tokenize and of
# /v1/render on a 3-turn ChatML conversation (the tokens kit's Qwen3 tokenizer), at 1, 16 and 64 keep-alive
# connections for 10 s each, next to the HTTP floor (crates/chatfmt-server/examples/http_floor.rs: the same
# JSON body parsed, a fixed 200-byte JSON answer) in the same run. wrk runs on the same machine as the
# servers and shares its cores.
#
#   scripts/bench_server.sh            the full run: prints a Markdown table
#   scripts/bench_server.sh --smoke    2 s per route at 4 connections; fails on any non-2xx answer or
#                                      socket error, or on a route that answers nothing
#   scripts/bench_server.sh --default-template chatml
#                                      the full run with the Qwen3 tokenizer and a built-in template in
#                                      place of Qwen3's own (saved into a copy of the folder with
#                                      `chatfmt templates set`), to see what the template costs
#
# Needs wrk (Debian: apt-get install wrk). The kits are found at $CHATFMT_KITS, else ../shared/conformance.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
target="${CARGO_TARGET_DIR:-$root/target}"
kits="${CHATFMT_KITS:-$root/../shared/conformance}"
model="$kits/tokens/tokenizers/qwen3"
smoke=false
builtin=""
case "${1:-}" in
    --smoke) smoke=true ;;
    --default-template) builtin="${2:?--default-template needs a name (chatfmt templates list)}" ;;
    "") ;;
    *) echo "bench_server.sh: unknown argument $1 (--smoke, --default-template NAME)" >&2; exit 2 ;;
esac
command -v wrk >/dev/null || { echo "bench_server.sh: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
[[ -f "$model/tokenizer.json" ]] || { echo "bench_server.sh: no Qwen3 tokenizer at $model" >&2; exit 1; }

# One build of both, so that the features of their shared dependencies are unified once.
cargo build --release --quiet -p chatfmt-cli -p chatfmt-server --bin chatfmt --example http_floor
work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
if [[ -n "$builtin" ]]; then
    mkdir "$work/model"
    cp "$model/tokenizer_config.json" "$work/model/"
    ln -s "$model/tokenizer.json" "$work/model/tokenizer.json"
    "$target/release/chatfmt" templates set --default-template "$builtin" "$work/model" >&2
    model="$work/model"
    echo "template: the built-in $builtin, in place of Qwen3's"
fi

# Starts a server whose stderr names its address (stdout and stderr to a log, so that nothing waits on
# it); sets $address.
start() {
    local log="$work/$1.log"
    shift
    "$@" >"$log" 2>&1 &
    pids+=("$!")
    for _ in $(seq 1 300); do
        # The whole address, port included (the line may be read while it is being written).
        address="$(grep -o 'http://[0-9.]*:[0-9][0-9]*' "$log" | head -1 || true)"
        [[ -n "$address" ]] && return
        sleep 0.1
    done
    echo "bench_server.sh: $* did not start: $(cat "$log")" >&2
    exit 1
}
start serve "$target/release/chatfmt" serve --model "q=$model" --port 0
server="$address"
start floor "$target/release/examples/http_floor" 0
floor="$address"

messages='[{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "What is the capital of France?"}, {"role": "assistant", "content": "The capital of France is Paris."}, {"role": "user", "content": "And of Italy?"}]'
# One wrk script per body: POST it as JSON, and print one parseable line at the end.
script() {
    cat >"$work/$1.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[$2]]
done = function(summary, latency, requests)
    local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
    io.write(string.format("RESULT %d %.1f %d %d %d %d\n", summary.requests, summary.requests / (summary.duration / 1e6),
        latency:percentile(50), latency:percentile(99), summary.errors.status, errors))
end
LUA
}
script tokenize "{\"model\": \"q\", \"messages\": $messages}"
script render "{\"model\": \"q\", \"messages\": $messages}"
script floor "{\"model\": \"q\", \"messages\": $messages}"

# One measurement: prints "requests rps p50_us p99_us non2xx socket_errors", or nothing (and why, on
# standard error) when wrk gave no result.
measure() {
    local url="$1" lua="$2" connections="$3" seconds="$4"
    local threads=$((connections < 2 ? connections : 2))
    local out
    out="$(wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency -s "$work/$lua.lua" "$url" 2>&1 || true)"
    if ! grep -q '^RESULT' <<<"$out"; then
        echo "bench_server.sh: wrk gave no result for $url: $out" >&2
        return
    fi
    awk '/^RESULT/ {print $2, $3, $4, $5, $6, $7}' <<<"$out"
}

routes=("/tokenize|$server/tokenize|tokenize" "/v1/render|$server/v1/render|render" "floor|$floor/|floor")
if $smoke; then
    failed=0
    for r in "${routes[@]}"; do
        IFS='|' read -r name url lua <<<"$r"
        read -r requests rps p50 p99 non2xx errors <<<"$(measure "$url" "$lua" 4 2)"
        [[ -n "$requests" ]] || exit 1
        echo "smoke $name: $requests requests, $rps req/s, p50 ${p50} us, p99 ${p99} us, non-2xx $non2xx, socket errors $errors"
        if [[ "$requests" -eq 0 || "$non2xx" -ne 0 || "$errors" -ne 0 ]]; then failed=1; fi
    done
    exit "$failed"
fi

echo "load before: $(uptime)"
echo
echo "| route | connections | req/s | p50 (ms) | p99 (ms) | of the floor |"
echo "|---|---:|---:|---:|---:|---:|"
for connections in 1 16 64; do
    declare -A rps_of=()
    lines=()
    # The floor first, so each route's share of it is known when its line is printed.
    for r in "${routes[2]}" "${routes[0]}" "${routes[1]}"; do
        IFS='|' read -r name url lua <<<"$r"
        read -r requests rps p50 p99 non2xx errors <<<"$(measure "$url" "$lua" "$connections" 10)"
        [[ -n "$requests" ]] || exit 1
        if [[ "$non2xx" -ne 0 || "$errors" -ne 0 ]]; then
            echo "bench_server.sh: $name at $connections connections: $non2xx non-2xx answers, $errors socket errors" >&2
            exit 1
        fi
        rps_of[$name]="$rps"
        share="$(awk -v a="$rps" -v b="${rps_of[floor]}" 'BEGIN {printf "%.2f", a / b}')"
        lines+=("| $name | $connections | ${rps%.*} | $(awk -v u="$p50" 'BEGIN {printf "%.2f", u / 1000}') | $(awk -v u="$p99" 'BEGIN {printf "%.2f", u / 1000}') | $share |")
    done
    printf '%s\n' "${lines[@]}"
    unset rps_of
done
echo
echo "load after: $(uptime)"
