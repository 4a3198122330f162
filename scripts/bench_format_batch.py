#!/usr/bin/env python3
"""Benchmark `chatfmt.format_batch(num_threads=1)` against a single-process transformers loop doing the same
work, in one run; with --parallel also `num_threads=2` against `datasets.map(num_proc=2)` and Ray Data with
1 and 2 actors.

    target/py/bin/python scripts/bench_format_batch.py [--rows 20000] [--rounds 3] [--parallel]

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

With --parallel, three more comparisons, each side alternating the same way and checked row for row:

- `datasets.Dataset.map(num_proc=2)` calling transformers' `apply_chat_template` per row (worker start and
  the tokenizer's pickling timed, as a user waits for them; the dataset cache off) against
  `format_batch(num_threads=2)`;
- Ray Data (`ray.init(num_cpus=2)` before timing): `map_batches(chatfmt.ray.Formatter, batch_format="pyarrow",
  compute=ActorPoolStrategy(size=N))` over 8 blocks for N = 1 and 2, timed to the materialized result
  (actor start, which loads the tokenizer, included).
"""
import argparse
import contextlib
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
    ap.add_argument("--parallel", action="store_true", help="also datasets.map(num_proc=2) and Ray Data")
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
    if args.parallel:
        if not parallel(table, tok, reference, args.rounds):
            sys.exit(1)


def alternate(sides, rounds):
    """Runs each (name, function) in turn for `rounds` rounds; the medians and the last outputs."""
    times = {name: [] for name, _ in sides}
    outputs = {}
    for r in range(rounds):
        for name, side in sides:
            start = time.perf_counter()
            outputs[name] = side()
            times[name].append(time.perf_counter() - start)
        print(f"round {r + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f} s" for n, _ in sides), flush=True)
    return {n: statistics.median(t) for n, t in times.items()}, outputs


def same_rows(table, reference):
    """Whether an output Table holds `reference`'s ids and masks on every row, in order."""
    return all(
        table.column(c).to_pylist() == [e[c] for e in reference]
        for c in ("input_ids", "attention_mask", "assistant_masks")
    )


def parallel(table, tok, reference, rounds):
    """`datasets.map(num_proc=2)` vs `format_batch(num_threads=2)`, and Ray Data with 1 vs 2 actors."""
    import chatfmt
    import datasets
    import ray
    from transformers import AutoTokenizer

    datasets.disable_caching()
    hf = AutoTokenizer.from_pretrained(MODEL)
    ds = datasets.Dataset(table)

    def one_row(example):
        out = hf.apply_chat_template(
            example["messages"], chat_template=CHATML_GENERATION, tokenize=True, return_dict=True,
            return_assistant_tokens_mask=True,
        )
        return dict(out)

    def datasets_side():
        with contextlib.redirect_stderr(open(os.devnull, "w")):
            return ds.map(one_row, num_proc=2, remove_columns=["messages"]).data.table

    def threads_side():
        return chatfmt.format_batch(table, tok, chat_template=CHATML_GENERATION, num_threads=2)

    medians, outs = alternate([("datasets.map(num_proc=2)", datasets_side), ("format_batch(num_threads=2)", threads_side)], rounds)
    ok = same_rows(outs["datasets.map(num_proc=2)"], reference) and same_rows(outs["format_batch(num_threads=2)"], reference)
    d, c = medians["datasets.map(num_proc=2)"], medians["format_batch(num_threads=2)"]
    print(f"datasets.map(num_proc=2): {d:8.2f} s; format_batch(num_threads=2): {c:8.2f} s; ratio {d / c:.1f}x")

    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=512 * 1024 * 1024, log_to_driver=False)
    try:
        ray.data.DataContext.get_current().execution_options.preserve_order = True
        ray.data.DataContext.get_current().enable_progress_bars = False
        step = -(-table.num_rows // 8)
        blocks = [table.slice(i, step) for i in range(0, table.num_rows, step)]

        def ray_side(actors):
            def run():
                out = ray.data.from_arrow(blocks).map_batches(
                    chatfmt.ray.Formatter,
                    fn_constructor_kwargs={"model": MODEL, "chat_template": CHATML_GENERATION, "num_threads": 1},
                    batch_format="pyarrow",
                    batch_size=1000,
                    compute=ray.data.ActorPoolStrategy(size=actors),
                )
                return pa.concat_tables(ray.get(out.to_arrow_refs()))

            return run

        medians, outs = alternate([("ray 1 actor", ray_side(1)), ("ray 2 actors", ray_side(2))], rounds)
    finally:
        ray.shutdown()
    ok = ok and same_rows(outs["ray 1 actor"], reference) and same_rows(outs["ray 2 actors"], reference)
    one, two = medians["ray 1 actor"], medians["ray 2 actors"]
    print(f"ray 1 actor: {one:8.2f} s; ray 2 actors: {two:8.2f} s; speed-up {one / two:.2f}x")
    print(f"identical ids and masks on every row (parallel runs): {ok}")
    return ok


if __name__ == "__main__":
    main()
