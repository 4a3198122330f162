#!/usr/bin/env python3
"""Benchmark `chatfmt dataset --tokenize` against the Python reference, in the same run.

    python3 scripts/bench_dataset.py [--rows 20000] [--sample 1000] [--memory-rows 200000]

What it does (everything under target/bench/, nothing in the repository):
  1. creates a venv with transformers 5.23.0, tokenizers 0.23.3, jinja2 3.1.6, datasets, pyarrow;
  2. builds a synthetic chat dataset: --rows multi-turn conversations (system + 3-6 user/assistant turns,
     deterministic pseudo-text, ~1,300 Qwen3 tokens each) as Parquet, `messages` column;
  3. Python reference: datasets `map` with num_proc = cores, calling
     `tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)`
     with a ChatML template that has `{% generation %}` tags, on the Qwen3 tokenizer of the tokens kit;
  4. chatfmt: `chatfmt dataset ... --tokenize` with all cores and with --jobs 1;
  5. compares input_ids / attention_mask / assistant_masks of --sample rows (evenly spread) and prints
     conversations/s, tokens/s, the ratio, and peak memory (max RSS) of each chatfmt run;
  6. with --memory-rows N: also formats an N-row dataset and prints its peak memory next to the first.

Needs a release build (`cargo build --release -p chatfmt-cli`) and the tokens kit at ../shared/conformance
(or $CHATFMT_KITS).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "target", "bench")
VENV = os.path.join(BENCH, "venv")
PY = os.path.join(VENV, "bin", "python")
CHATFMT = os.path.join(ROOT, "target", "release", "chatfmt")
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


def build_dataset(path, rows, seed=1234):
    """Writes the dataset with the venv's pyarrow (in row groups, so 200k rows stay cheap)."""
    if os.path.exists(path):
        return
    code = f"""
import json, random, sys
import pyarrow as pa, pyarrow.parquet as pq
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
from bench_dataset import conversation
rng = random.Random({seed})
schema = pa.schema([("messages", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())])))])
with pq.ParquetWriter({path!r}, schema) as w:
    left = {rows}
    while left:
        n = min(left, 10000)
        w.write_table(pa.table({{"messages": [conversation(rng) for _ in range(n)]}}, schema=schema))
        left -= n
"""
    subprocess.run([PY, "-c", code], check=True)


def run_python_reference(data, out, cores):
    code = f"""
import json, time, datasets
from transformers import AutoTokenizer
datasets.disable_progress_bars()
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
print(json.dumps({{"rows": len(res), "seconds": secs, "tokens": tokens}}))
"""
    p = subprocess.run([PY, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_chatfmt(data, out, jobs):
    """Runs chatfmt; returns its JSON summary plus max RSS (KiB) of that process."""
    args = [CHATFMT, "dataset", data, "--model", MODEL, "--template", os.path.join(BENCH, "chatml_generation.jinja"),
            "--tokenize", "--output", out, "--json"]
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


def compare(py_out, cf_out, sample):
    code = f"""
import json, pyarrow.parquet as pq
py = pq.read_table({py_out!r})
cf = pq.read_table({cf_out!r})
n = py.num_rows
assert cf.num_rows == n, (cf.num_rows, n)
idx = sorted(set(round(i * (n - 1) / max({sample} - 1, 1)) for i in range({sample})))
cf_index = cf.column("index").to_pylist()
assert cf_index == list(range(n)), "chatfmt output is not in input order"
bad = []
for col in ("input_ids", "attention_mask", "assistant_masks"):
    a, b = py.column(col), cf.column(col)
    for i in idx:
        if a[i].as_py() != b[i].as_py():
            bad.append((col, i))
print(json.dumps({{"compared_rows": len(idx), "mismatches": len(bad), "first": bad[:5]}}))
"""
    p = subprocess.run([PY, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--sample", type=int, default=1000)
    ap.add_argument("--memory-rows", type=int, default=0)
    args = ap.parse_args()
    if not os.path.exists(CHATFMT):
        sys.exit("build first: cargo build --release -p chatfmt-cli")
    os.makedirs(BENCH, exist_ok=True)
    ensure_venv()
    with open(os.path.join(BENCH, "chatml_generation.jinja"), "w") as f:
        f.write(CHATML_GENERATION)
    cores = os.cpu_count() or 1
    data = os.path.join(BENCH, f"chats-{args.rows}.parquet")
    build_dataset(data, args.rows)

    py = run_python_reference(data, os.path.join(BENCH, "python-out.parquet"), cores)
    cf = run_chatfmt(data, os.path.join(BENCH, "chatfmt-out.parquet"), 0)
    cf1 = run_chatfmt(data, os.path.join(BENCH, "chatfmt-out-1.parquet"), 1)
    check = compare(os.path.join(BENCH, "python-out.parquet"), os.path.join(BENCH, "chatfmt-out.parquet"), args.sample)

    py_cps = py["rows"] / py["seconds"]
    cf_cps = cf["rows_in"] / cf["wall_seconds"]
    cf1_cps = cf1["rows_in"] / cf1["wall_seconds"]
    print(f"dataset: {args.rows} conversations, {cf['tokens']} tokens ({cf['tokens'] / args.rows:.0f}/conversation), {cores} cores")
    print(f"python  (datasets.map, num_proc={cores}): {py_cps:9.0f} conv/s {py['tokens'] / py['seconds']:12.0f} tokens/s")
    print(f"chatfmt (--jobs {cores}):                   {cf_cps:9.0f} conv/s {cf['tokens'] / cf['wall_seconds']:12.0f} tokens/s"
          f"  max RSS {cf['max_rss_mib']:.0f} MiB  ratio {cf_cps / py_cps:.1f}x  {cf['wall_seconds']:.2f} s wall, {cf['cpu_seconds']:.2f} s CPU")
    print(f"chatfmt (--jobs 1):                   {cf1_cps:9.0f} conv/s {cf1['tokens'] / cf1['wall_seconds']:12.0f} tokens/s"
          f"  max RSS {cf1['max_rss_mib']:.0f} MiB  ratio {cf1_cps / py_cps:.1f}x  {cf1['wall_seconds']:.2f} s wall, {cf1['cpu_seconds']:.2f} s CPU")
    print(f"identical ids and masks: {check['compared_rows'] - len(set(i for _, i in check['first']))} / {check['compared_rows']} sampled rows"
          f" ({check['mismatches']} mismatching fields {check['first']})")
    if args.memory_rows:
        big = os.path.join(BENCH, f"chats-{args.memory_rows}.parquet")
        build_dataset(big, args.memory_rows, seed=99)
        m = run_chatfmt(big, os.path.join(BENCH, "chatfmt-out-big.parquet"), 0)
        print(f"memory: {args.rows} conversations max RSS {cf['max_rss_mib']:.0f} MiB; "
              f"{args.memory_rows} conversations max RSS {m['max_rss_mib']:.0f} MiB "
              f"({m['rows_in'] / m['wall_seconds']:.0f} conv/s)")
    sys.exit(1 if check["mismatches"] else 0)


if __name__ == "__main__":
    main()
