#!/usr/bin/env python3
"""Benchmark `chatfmt dataset --tokenize` against the Python reference, in the same run.

    python3 scripts/bench_dataset.py [--rows 20000] [--sample 1000] [--memory-rows 200000] [--rounds 3]
                                     [--chatfmt target/release/chatfmt] [--baseline OTHER_CHATFMT] [--provenance]

What it does (everything under target/bench/, nothing in the repository):
  1. creates a venv with transformers 5.23.0, tokenizers 0.23.3, jinja2 3.1.6, datasets, pyarrow;
  2. builds a synthetic chat dataset: --rows multi-turn conversations (system + 3-6 user/assistant turns,
     deterministic pseudo-text, ~1,300 Qwen3 tokens each) as Parquet, `messages` column;
  3. Python reference: datasets `map` with num_proc = cores, calling
     `tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)`
     with a ChatML template that has `{% generation %}` tags, on the Qwen3 tokenizer of the tokens kit;
  4. chatfmt: `chatfmt dataset ... --tokenize` with all cores and with --jobs 1 (whole process: tokenizer
     load, reading, formatting, writing the Parquet output);
  5. steps 3 and 4 are repeated --rounds times, one after the other (this machine's speed drifts by up to 2x
     over minutes, so each side is timed in every round and the medians are compared);
  6. compares input_ids / attention_mask / assistant_masks of --sample rows (evenly spread) and prints
     conversations/s, tokens/s, the ratios, and peak memory (max RSS) of each chatfmt run;
  7. with --memory-rows N: also formats an N-row dataset and prints its peak memory next to the first.

Two Python figures are printed: `map` times `datasets.map` alone (what the ratio is quoted against: stricter
for chatfmt, whose time includes loading the tokenizer and writing the output), and `end to end` times the same
work chatfmt's process does (tokenizer load, dataset load, map, Parquet write; imports excluded).

Needs a release build (`cargo build --release -p chatfmt-cli`) and the tokens kit at ../shared/conformance
(or $CHATFMT_KITS).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "target", "bench")
VENV = os.path.join(BENCH, "venv")
PY = os.path.join(VENV, "bin", "python")
CHATFMT = os.path.join(ROOT, "target", "release", "chatfmt")
CHATFMT_BIN = [CHATFMT]  # --chatfmt
KITS = os.environ.get("CHATFMT_KITS") or os.path.join(ROOT, "..", "shared", "conformance")
MODEL = os.path.join(KITS, "tokens", "tokenizers", "qwen3")
PACKAGES = ["transformers==5.23.0", "tokenizers==0.23.3", "jinja2==3.1.6", "datasets", "pyarrow"]

# ChatML with the assistant turns in {% generation %} blocks (what training-mask users write).
CHATML_GENERATION = (
    "{%- for message in messages %}"
    "{%- if message['role'] == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' }}{% generation %}{{- message['content'] + '<|im_end|>' }}{% endgeneration %}"
    "{{- '\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

WORDS = (
    "the model data token train loss mask chat user assistant system reply answer question value result "
    "fast slow exact byte code rust python table row column file stream memory core thread order index "
    "über café naïve résumé 東京 数据 模型 ответ данные 42 3.14 2025 (x) [y] {z} a-b c_d e/f g:h i,j k.l"
).split()


def ensure_venv():
    if not os.path.exists(PY):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([PY, "-m", "pip", "install", "-q", *PACKAGES], check=True)


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def conversation(rng):
    msgs = [{"role": "system", "content": sentence(rng, rng.randint(10, 30))}]
    turns = rng.randint(3, 6)
    budget = 1300 // turns
    for _ in range(turns):
        msgs.append({"role": "user", "content": sentence(rng, rng.randint(budget // 6, budget // 3))})
        msgs.append({"role": "assistant", "content": sentence(rng, rng.randint(budget // 3, budget // 2))})
    return msgs


def conversation_of(rng, messages):
    """A conversation of exactly `messages` messages of 20-60 words: system, then user and assistant in turn."""
    roles = ["system"] + [("user", "assistant")[i % 2] for i in range(messages - 1)]
    return [{"role": r, "content": sentence(rng, rng.randint(20, 60))} for r in roles]


def build_dataset(path, rows, seed=1234, messages=None):
    """Writes the dataset with the venv's pyarrow (in row groups, so 200k rows stay cheap): `conversation`s, or
    with `messages`, conversations of that many messages."""
    if os.path.exists(path):
        return
    make = "conversation(rng)" if messages is None else f"conversation_of(rng, {messages})"
    code = f"""
import json, random, sys
import pyarrow as pa, pyarrow.parquet as pq
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
from bench_dataset import conversation, conversation_of
rng = random.Random({seed})
schema = pa.schema([("messages", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())])))])
with pq.ParquetWriter({path!r}, schema) as w:
    left = {rows}
    while left:
        n = min(left, 10000)
        w.write_table(pa.table({{"messages": [{make} for _ in range(n)]}}, schema=schema))
        left -= n
"""
    subprocess.run([PY, "-c", code], check=True)


def run_python_reference(data, out, cores):
    code = f"""
import json, time, datasets
from transformers import AutoTokenizer
datasets.disable_progress_bars()
t0 = time.perf_counter()
tok = AutoTokenizer.from_pretrained({MODEL!r})
template = {CHATML_GENERATION!r}
def fmt(row):
    r = tok.apply_chat_template(row["messages"], chat_template=template, tokenize=True, return_dict=True,
                                return_assistant_tokens_mask=True)
    return {{"input_ids": r["input_ids"], "attention_mask": r["attention_mask"], "assistant_masks": r["assistant_masks"]}}
ds = datasets.load_dataset("parquet", data_files={data!r}, split="train")
t = time.perf_counter()
res = ds.map(fmt, num_proc={cores}, remove_columns=["messages"], load_from_cache_file=False)
secs = time.perf_counter() - t
tokens = sum(len(x) for x in res["input_ids"])
res.to_parquet({out!r})
e2e = time.perf_counter() - t0
print(json.dumps({{"rows": len(res), "seconds": secs, "e2e_seconds": e2e, "tokens": tokens}}))
"""
    p = subprocess.run([PY, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_chatfmt(data, out, jobs, masks=None):
    """Runs chatfmt; returns its JSON summary plus max RSS (KiB) of that process."""
    args = [CHATFMT_BIN[0], "dataset", data, "--model", MODEL, "--template", os.path.join(BENCH, "chatml_generation.jinja"),
            "--tokenize", "--output", out, "--json"]
    if masks:
        args += ["--masks", masks]
    if jobs:
        args += ["--jobs", str(jobs)]
    t = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    stdout = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t
    if status != 0:
        sys.exit(f"chatfmt failed ({status}): {stdout}")
    s = json.loads(stdout)
    s["wall_seconds"] = secs
    s["max_rss_mib"] = usage.ru_maxrss / 1024
    s["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    return s


def compare(py_out, cf_out, sample, data):
    code = f"""
import json, pyarrow as pa, pyarrow.parquet as pq
py = pq.read_table({py_out!r})
cf = pq.read_table({cf_out!r})
n = py.num_rows
assert cf.num_rows == n, (cf.num_rows, n)
idx = sorted(set(round(i * (n - 1) / max({sample} - 1, 1)) for i in range({sample})))
# chatfmt's output starts with the input's columns: the rows are in input order.
assert cf.column("messages").equals(pq.read_table({data!r}).column("messages")), "chatfmt output is not in input order"
assert cf.column("error").null_count == n, "chatfmt failed rows"
bad = []
for col in ("input_ids", "attention_mask", "assistant_masks"):
    a, b = py.column(col), cf.column(col)
    for i in idx:
        if a[i].as_py() != b[i].as_py():
            bad.append((col, i))
# Every row, compared as Arrow arrays (the two sides store different integer widths).
whole = all(py.column(c).cast(pa.list_(pa.int64())).equals(cf.column(c).cast(pa.list_(pa.int64())))
            for c in ("input_ids", "attention_mask", "assistant_masks"))
print(json.dumps({{"compared_rows": len(idx), "mismatches": len(bad), "first": bad[:5], "all_rows": n, "all_equal": whole}}))
"""
    p = subprocess.run([PY, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--sample", type=int, default=1000)
    ap.add_argument("--memory-rows", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--chatfmt", default=CHATFMT, help="the chatfmt binary (default: target/release/chatfmt)")
    ap.add_argument("--baseline", help="another chatfmt binary, timed (2 jobs) in the same rounds for comparison")
    ap.add_argument("--provenance", action="store_true",
                    help="also time --masks provenance (2 jobs) in each round, against the template's tags")
    args = ap.parse_args()
    CHATFMT_BIN[0] = args.chatfmt
    if not os.path.exists(args.chatfmt):
        sys.exit("build first: cargo build --release -p chatfmt-cli")
    os.makedirs(BENCH, exist_ok=True)
    ensure_venv()
    with open(os.path.join(BENCH, "chatml_generation.jinja"), "w") as f:
        f.write(CHATML_GENERATION)
    cores = os.cpu_count() or 1
    data = os.path.join(BENCH, f"chats-{args.rows}.parquet")
    build_dataset(data, args.rows)

    py_runs, cf_runs, cf1_runs, base_runs, prov_runs = [], [], [], [], []
    print(f"load average: {os.getloadavg()[0]:.2f}", flush=True)
    for r in range(args.rounds):
        py_runs.append(run_python_reference(data, os.path.join(BENCH, "python-out.parquet"), cores))
        cf_runs.append(run_chatfmt(data, os.path.join(BENCH, "chatfmt-out.parquet"), 0))
        cf1_runs.append(run_chatfmt(data, os.path.join(BENCH, "chatfmt-out-1.parquet"), 1))
        base = ""
        if args.baseline:
            CHATFMT_BIN[0] = args.baseline
            base_runs.append(run_chatfmt(data, os.path.join(BENCH, "chatfmt-out-base.parquet"), 0))
            CHATFMT_BIN[0] = args.chatfmt
            base = f", baseline {base_runs[-1]['wall_seconds']:.2f} s"
        if args.provenance:
            prov_runs.append(run_chatfmt(data, os.path.join(BENCH, "chatfmt-out-provenance.parquet"), 0, "provenance"))
            base += f", provenance masks {prov_runs[-1]['wall_seconds']:.2f} s"
        print(f"round {r + 1}: python map {py_runs[-1]['seconds']:.2f} s, end to end {py_runs[-1]['e2e_seconds']:.2f} s; "
              f"chatfmt {cf_runs[-1]['wall_seconds']:.2f} s, --jobs 1 {cf1_runs[-1]['wall_seconds']:.2f} s{base}; "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)
    check = compare(os.path.join(BENCH, "python-out.parquet"), os.path.join(BENCH, "chatfmt-out.parquet"), args.sample, data)
    checks = [check]
    if args.provenance:
        checks.append(compare(os.path.join(BENCH, "python-out.parquet"),
                              os.path.join(BENCH, "chatfmt-out-provenance.parquet"), args.sample, data))

    rows = args.rows
    py_map = statistics.median(p["seconds"] for p in py_runs)
    py_e2e = statistics.median(p["e2e_seconds"] for p in py_runs)
    cf_med = statistics.median(c["wall_seconds"] for c in cf_runs)
    cf1_med = statistics.median(c["wall_seconds"] for c in cf1_runs)
    cf = sorted(cf_runs, key=lambda c: c["wall_seconds"])[len(cf_runs) // 2]
    cf1 = sorted(cf1_runs, key=lambda c: c["wall_seconds"])[len(cf1_runs) // 2]
    tokens = cf["tokens"]
    print(f"dataset: {rows} conversations, {tokens} tokens ({tokens / rows:.0f}/conversation), {cores} cores, "
          f"medians of {args.rounds} rounds")
    print(f"python  (datasets.map, num_proc={cores}) map:  {rows / py_map:9.0f} conv/s {tokens / py_map:12.0f} tokens/s")
    print(f"python  end to end (load, map, write):      {rows / py_e2e:9.0f} conv/s {tokens / py_e2e:12.0f} tokens/s")
    for label, c, med in ((f"--jobs {cores}", cf, cf_med), ("--jobs 1", cf1, cf1_med)):
        print(f"chatfmt ({label}):                        {rows / med:9.0f} conv/s {tokens / med:12.0f} tokens/s"
              f"  ratio {py_map / med:.1f}x (vs map), {py_e2e / med:.1f}x (end to end)"
              f"  max RSS {c['max_rss_mib']:.0f} MiB  {c['wall_seconds']:.2f} s wall, {c['cpu_seconds']:.2f} s CPU")
    print("per-round ratios vs map: " + ", ".join(f"{p['seconds'] / c['wall_seconds']:.1f}x" for p, c in zip(py_runs, cf_runs)))
    if base_runs:
        base_med = statistics.median(c["wall_seconds"] for c in base_runs)
        print(f"baseline ({args.baseline}, --jobs {cores}): {rows / base_med:9.0f} conv/s  ratio {py_map / base_med:.1f}x (vs map)"
              f"  per round: " + ", ".join(f"{p['seconds'] / c['wall_seconds']:.1f}x" for p, c in zip(py_runs, base_runs)))
    if prov_runs:
        prov_med = statistics.median(c["wall_seconds"] for c in prov_runs)
        print(f"provenance masks (--jobs {cores}): {rows / prov_med:9.0f} conv/s, {prov_med / cf_med:.3f}x the tag masks' time"
              f"  per round: " + ", ".join(f"{p['wall_seconds'] / c['wall_seconds']:.3f}x" for p, c in zip(prov_runs, cf_runs)))
    for label, c in zip(("tag masks", "provenance masks"), checks):
        print(f"{label}: identical ids and masks: {c['compared_rows'] - len(set(i for _, i in c['first']))} / {c['compared_rows']} "
              f"sampled rows ({c['mismatches']} mismatching fields {c['first']}); all {c['all_rows']} rows identical: {c['all_equal']}")
    if args.memory_rows:
        big = os.path.join(BENCH, f"chats-{args.memory_rows}.parquet")
        build_dataset(big, args.memory_rows, seed=99)
        m = run_chatfmt(big, os.path.join(BENCH, "chatfmt-out-big.parquet"), 0)
        print(f"memory: {args.rows} conversations max RSS {max(c['max_rss_mib'] for c in cf_runs):.0f} MiB (highest of {args.rounds} runs); "
              f"{args.memory_rows} conversations max RSS {m['max_rss_mib']:.0f} MiB "
              f"({m['rows_in'] / m['wall_seconds']:.0f} conv/s)")
    sys.exit(1 if any(c["mismatches"] or not c["all_equal"] for c in checks) else 0)


if __name__ == "__main__":
    main()
