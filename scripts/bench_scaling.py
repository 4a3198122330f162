#!/usr/bin/env python3
"""How the cost of `chatfmt dataset` scales: with the number of rows and jobs, and with conversation length.

    python3 scripts/bench_scaling.py [--rounds 3] [--chatfmt target/release/chatfmt]

Uses the venv, dataset generator, template and tokenizer of scripts/bench_dataset.py (run that once first; all
files live under target/bench/). Each figure is the median wall time of --rounds runs of the whole process.

  1. rows and jobs: `chatfmt dataset --tokenize` on 2,000, 20,000 and 200,000 conversations (~1,400 Qwen3 tokens
     each) with --jobs 1 and --jobs 2; the fixed cost and the cost per conversation are fitted from them;
  2. conversation length: datasets of the same total size (--total-messages messages of 20-60 words) cut into
     conversations of 3 to 501 messages, formatted with --jobs 1, rendering only and with --tokenize, less the
     time of a one-conversation run (the fixed cost); the time per message stays flat when the cost is linear in
     the conversation's length.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_dataset as bd  # noqa: E402


def run(binary, data, jobs, tokenize):
    args = [binary, "dataset", data, "--template", os.path.join(bd.BENCH, "chatml_generation.jinja"),
            "--output", os.path.join(bd.BENCH, "scaling-out.parquet"), "--json", "--jobs", str(jobs)]
    if tokenize:
        args += ["--model", bd.MODEL, "--tokenize"]
    t = time.perf_counter()
    p = subprocess.run(args, check=True, capture_output=True, text=True)
    secs = time.perf_counter() - t
    return secs, json.loads(p.stdout)


def median_run(binary, data, jobs, tokenize, rounds):
    runs = [run(binary, data, jobs, tokenize) for _ in range(rounds)]
    return statistics.median(s for s, _ in runs), runs[0][1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--chatfmt", default=bd.CHATFMT)
    ap.add_argument("--total-messages", type=int, default=100_000)
    ap.add_argument("--lengths", default="3,11,51,101,501")
    args = ap.parse_args()
    if not os.path.exists(bd.PY) or not os.path.exists(os.path.join(bd.BENCH, "chatml_generation.jinja")):
        sys.exit("run scripts/bench_dataset.py first (it creates the venv and the template)")
    print(f"load: {os.getloadavg()[0]:.2f}", flush=True)

    print("| conversations | --jobs 1 s | --jobs 2 s | --jobs 2 conv/s | speed-up |")
    print("|---:|---:|---:|---:|---:|")
    fit = {}
    for rows, seed in ((2_000, 7), (20_000, 1234), (200_000, 99)):
        data = os.path.join(bd.BENCH, f"chats-{rows}.parquet")
        bd.build_dataset(data, rows, seed=seed)
        one, _ = median_run(args.chatfmt, data, 1, True, args.rounds)
        two, _ = median_run(args.chatfmt, data, 2, True, args.rounds)
        fit[rows] = (one, two)
        print(f"| {rows:,} | {one:.2f} | {two:.2f} | {rows / two:,.0f} | {one / two:.2f}x |", flush=True)
    for jobs, i in ((1, 0), (2, 1)):
        per_row = (fit[200_000][i] - fit[2_000][i]) / (200_000 - 2_000)
        fixed = fit[2_000][i] - 2_000 * per_row
        print(f"--jobs {jobs}: fixed {fixed:.2f} s + {per_row * 1e6:.1f} us per conversation")

    print()
    # The fixed cost of a run (process start, template, tokenizer load), taken off the figures below.
    one_row = os.path.join(bd.BENCH, "length-3x1.parquet")
    bd.build_dataset(one_row, 1, seed=5, messages=3)
    fixed = {t: median_run(args.chatfmt, one_row, 1, t, args.rounds)[0] for t in (False, True)}
    print(f"fixed cost (one 3-message conversation): render {fixed[False]:.2f} s, tokenize {fixed[True]:.2f} s")
    print()
    print("| messages per conversation | conversations | render µs/message | render µs/conversation "
          "| tokenize µs/message | tokenize µs/conversation |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in (int(x) for x in args.lengths.split(",")):
        rows = max(args.total_messages // n, 1)
        data = os.path.join(bd.BENCH, f"length-{n}x{rows}.parquet")
        bd.build_dataset(data, rows, seed=5, messages=n)
        cells = []
        for tokenize in (False, True):
            secs = median_run(args.chatfmt, data, 1, tokenize, args.rounds)[0] - fixed[tokenize]
            cells += [secs / (rows * n) * 1e6, secs / rows * 1e6]
        print(f"| {n} | {rows:,} | {cells[0]:.2f} | {cells[1]:,.0f} | {cells[2]:.2f} | {cells[3]:,.0f} |", flush=True)
    print(f"load: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
