#!/usr/bin/env python3
"""Benchmark `chatfmt.format_batch(num_threads=1)` against a single-process transformers loop doing the same
work, in one run.

    target/py/bin/python scripts/bench_format_batch.py [--rows 20000] [--rounds 3]

Run it with a Python that has the chatfmt package and transformers 5.23.0 installed (the venv `.ci/run` makes
at target/py). The data is the synthetic dataset of `scripts/bench_dataset.py` (system + 3-6 user/assistant
turns, ~1,400 Qwen3 tokens each) as a pyarrow Table with a list<struct> `messages` column; the template is its
ChatML with `{% generation %}` tags; the tokenizer is the tokens kit's Qwen3 (`$CHATFMT_KITS` or
../shared/conformance).

- transformers: `for messages in rows: tok.apply_chat_template(messages, chat_template=..., tokenize=True,
  return_dict=True, return_assistant_tokens_mask=True)` over the rows already converted to Python lists
  (the conversion is not timed, which favours this side);
- chatfmt: `chatfmt.format_batch(table, tok, chat_template=..., num_threads=1)`, Arrow in and Arrow out.

Tokenizers are loaded before timing on both sides. The two sides alternate for --rounds rounds (this machine's
speed drifts) and the medians are compared. Every row's input_ids, attention_mask and assistant_masks are
checked to be equal.
"""
import argparse
import os
import random
import statistics
import sys
import time

import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_dataset import CHATML_GENERATION, MODEL, conversation  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    import chatfmt
    from transformers import AutoTokenizer

    rng = random.Random(1234)
    schema = pa.schema([("messages", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())])))])
    table = pa.table({"messages": [conversation(rng) for _ in range(args.rows)]}, schema=schema)
    rows = table.column("messages").to_pylist()
    hf = AutoTokenizer.from_pretrained(MODEL)
    tok = chatfmt.Tokenizer.from_pretrained(MODEL)

    def transformers_side():
        return [
            hf.apply_chat_template(
                m, chat_template=CHATML_GENERATION, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
            )
            for m in rows
        ]

    def chatfmt_side():
        return chatfmt.format_batch(table, tok, chat_template=CHATML_GENERATION, num_threads=1)

    times = {"transformers": [], "chatfmt": []}
    for r in range(args.rounds):
        for name, side in (("transformers", transformers_side), ("chatfmt", chatfmt_side)):
            start = time.perf_counter()
            out = side()
            times[name].append(time.perf_counter() - start)
            if name == "transformers":
                reference = out
            else:
                got = out
        print(f"round {r + 1}: transformers {times['transformers'][-1]:.2f} s, chatfmt {times['chatfmt'][-1]:.2f} s",
              flush=True)

    assert got.column("error").null_count == args.rows, "rows failed"
    same = all(
        got.column(c).to_pylist() == [e[c] for e in reference]
        for c in ("input_ids", "attention_mask", "assistant_masks")
    )
    tokens = sum(len(e["input_ids"]) for e in reference)
    t_hf = statistics.median(times["transformers"])
    t_cf = statistics.median(times["chatfmt"])
    print(f"{args.rows} conversations, {tokens} tokens, medians of {args.rounds} rounds")
    print(f"transformers loop:           {t_hf:8.2f} s  {args.rows / t_hf:9.0f} conv/s  {tokens / t_hf:12.0f} tokens/s")
    print(f"format_batch(num_threads=1): {t_cf:8.2f} s  {args.rows / t_cf:9.0f} conv/s  {tokens / t_cf:12.0f} tokens/s")
    print(f"ratio: {t_hf / t_cf:.1f}x; per round: "
          + ", ".join(f"{h / c:.1f}x" for h, c in zip(times["transformers"], times["chatfmt"])))
    print(f"identical ids and masks on every row: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
