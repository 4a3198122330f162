#!/usr/bin/env bash
# Builds the fuzz seed corpora in fuzz/corpus/{parse,render}/ (gitignored) from the conformance kits:
# every template of the hf kit corpus (rendered with each scenario's context) and every probe of the
# jinja kit (template + its context). The kits are read at fuzz time, never copied into the repo.
# Usage: scripts/fuzz_seeds.sh   (kits from $CHATFMT_KITS, else ../shared/conformance)
set -euo pipefail
cd "$(dirname "$0")/.."
KITS="${CHATFMT_KITS:-../shared/conformance}"
if [ ! -d "$KITS/hf/corpus" ] || [ ! -f "$KITS/jinja/probes.jsonl" ]; then
    echo "fuzz_seeds: conformance kits not found at $KITS (set CHATFMT_KITS)" >&2
    exit 1
fi
mkdir -p fuzz/corpus/parse fuzz/corpus/render
python3 - "$KITS" <<'PY'
import hashlib, json, os, sys
kits = sys.argv[1]

def put(target, data):
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join("fuzz/corpus", target, name), "wb") as f:
        f.write(data)

scenarios = json.load(open(os.path.join(kits, "hf/scenarios.json")))["scenarios"]
index = json.load(open(os.path.join(kits, "hf/index.json")))
tokens = {t["id"]: t for t in index["templates"]}
corpus = os.path.join(kits, "hf/corpus")
n = 0
for fname in sorted(os.listdir(corpus)):
    src = open(os.path.join(corpus, fname), "rb").read()
    put("parse", src)
    meta = tokens.get(fname[: -len(".jinja")], {})
    # Three contexts per template keep the corpus small: plain chat, tools, and reasoning.
    for sid in ("multi_turn", "tool_call_roundtrip", "reasoning_content"):
        sc = scenarios.get(sid)
        if sc is None:
            continue
        ctx = {"messages": sc["messages"], "tools": sc.get("tools"), "documents": sc.get("documents"),
               "add_generation_prompt": True, "bos_token": meta.get("bos_token"), "eos_token": meta.get("eos_token")}
        put("render", src + b"\0" + json.dumps(ctx).encode())
        n += 1
for line in open(os.path.join(kits, "jinja/probes.jsonl"), encoding="utf-8"):
    p = json.loads(line)
    src = p["template"].encode()
    put("parse", src)
    put("render", src + b"\0" + json.dumps(p.get("context") or {}).encode())
print("parse:", len(os.listdir("fuzz/corpus/parse")), "render:", len(os.listdir("fuzz/corpus/render")))
PY
