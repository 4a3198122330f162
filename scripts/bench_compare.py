"""Second half of scripts/bench_compare.sh: checks every output against the kit's golden, times
transformers' render_jinja_template on the same inputs, and prints the table with criterion's medians.

Usage: bench_compare.py OUT_DIR CRITERION_DIR KITS (run by bench_compare.sh inside target/bench-venv).

The machine's speed drifts (other work on a shared host), so each case's chatfmt, minijinja and
builder timings are taken again right before transformers is timed on that case (criterion run on
just that case), and every ratio compares timings taken seconds apart rather than minutes apart.

The drift also moves within seconds, so a second table pairs the sides more tightly: for each case,
15 rounds of 100 ms bursts of every side in turn (the `paired` bench answers the Rust sides' bursts
on request, transformers is timed here), each round's ratios computed from its own bursts, and the
median of the rounds' ratios reported."""

import json
import pathlib
import re
import subprocess
import statistics
import sys
import timeit

from transformers.utils.chat_template_utils import render_jinja_template

CASES = [
    f"{t}/{s}"
    for t in ["chatml", "llama3.1", "mistral-v0.3", "qwen2.5", "gemma2"]
    for s in ["3turn", "50turn", "tools"]
    if not (t == "gemma2" and s == "tools")
]


def transformers_render(case, source):
    rendered, _ = render_jinja_template(
        conversations=[case["messages"]],
        tools=case["tools"],
        documents=None,
        chat_template=source,
        add_generation_prompt=True,
        **case["special_tokens"],
    )
    return rendered[0]


def time_us(fn):
    number = 1
    while timeit.timeit(fn, number=number) < 0.05:
        number *= 2
    runs = [timeit.timeit(fn, number=number) / number for _ in range(15)]
    return statistics.median(runs) * 1e6


def rerun_criterion(name):
    """Times one case again with criterion (chatfmt, minijinja and, for ChatML 3-turn, the builder)."""
    pattern = f"^(chatfmt|minijinja)/{re.escape(name)}$"
    if name == "chatml/3turn":
        pattern += "|^builder/chatml/3turn$"
    subprocess.run(
        ["cargo", "bench", "--quiet", "-p", "chatfmt", "--bench", "render", "--", pattern],
        check=True,
        stdout=subprocess.DEVNULL,
    )


ROUNDS = 15
BURST_S = 0.1


def paired_timings(outputs, excluded, sources):
    """Each case's rounds of paired bursts: a list of {side: µs per render} per round."""
    proc = subprocess.Popen(
        ["cargo", "bench", "--quiet", "-p", "chatfmt", "--bench", "paired"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    if proc.stdout.readline().strip() != "ready":
        sys.exit("the paired bench did not start")

    def rust_us(name, side):
        proc.stdin.write(f"{name} {side} {int(BURST_S * 1000)}\n")
        proc.stdin.flush()
        return float(proc.stdout.readline())

    results = {}
    for name in CASES:
        case, source = outputs[name], sources[name]
        fn = lambda: transformers_render(case, source)  # noqa: E731
        number = 1
        while timeit.timeit(fn, number=number) < BURST_S:
            number *= 2
        sides = ["chatfmt", "transformers"]
        if name not in excluded:
            sides.append("minijinja")
        if name == "chatml/3turn":
            sides.append("builder")

        def measure(side):
            if side == "transformers":
                return timeit.timeit(fn, number=number) / number * 1e6
            return rust_us(name, side)

        for side in sides:  # warm-up
            measure(side)
        rounds = []
        for r in range(ROUNDS):
            k = r % len(sides)
            rounds.append({side: measure(side) for side in sides[k:] + sides[:k]})
        results[name] = rounds
    proc.stdin.close()
    proc.wait()
    return results


def paired_report(results):
    lines = [
        "| case | chatfmt µs | minijinja µs | transformers µs | chatfmt/minijinja | chatfmt/transformers |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    mj_ratios, tf_ratios = {}, {}

    def med(rounds, side):
        values = [r[side] for r in rounds if side in r]
        return statistics.median(values) if values else None

    def med_ratio(rounds, side):
        values = [r["chatfmt"] / r[side] for r in rounds if side in r]
        return statistics.median(values) if values else None

    for name, rounds in results.items():
        rm, rt = med_ratio(rounds, "minijinja"), med_ratio(rounds, "transformers")
        if rm:
            mj_ratios[name] = rm
        tf_ratios[name] = rt
        lines.append(
            f"| {name} | {fmt(med(rounds, 'chatfmt'), 2)} | {fmt(med(rounds, 'minijinja'), 2)}"
            f" | {fmt(med(rounds, 'transformers'), 1)} | {fmt(rm, 3)} | {fmt(rt, 4)} |"
        )
    print(f"\npaired: {ROUNDS} rounds of {int(BURST_S * 1000)} ms bursts per side and case;"
          " times are medians of the rounds, ratios medians of the rounds' ratios\n")
    print("\n".join(lines))
    print()
    for label, ratios, digits in [("minijinja", mj_ratios, 3), ("transformers", tf_ratios, 4)]:
        worst = max(ratios, key=ratios.get)
        print(f"paired median chatfmt/{label} over {len(ratios)} cases: {statistics.median(ratios.values()):.{digits}f}"
              f" (worst {ratios[worst]:.{digits}f} {worst}, {1 / ratios[worst]:.1f}x faster)")
    chatml = results["chatml/3turn"]
    print(f"paired ChatML 3-turn / builder: {med_ratio(chatml, 'builder'):.2f}"
          f" ({med(chatml, 'chatfmt'):.3f} / {med(chatml, 'builder'):.3f} µs)")


def criterion_us(criterion_dir, bench_id):
    path = criterion_dir / bench_id / "new" / "estimates.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())["median"]["point_estimate"] / 1000


def fmt(x, digits=1):
    return "—" if x is None else f"{x:.{digits}f}"


def main():
    out_dir, criterion_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    kits = pathlib.Path(sys.argv[3])
    outputs = json.loads((out_dir / "outputs.json").read_text())
    rows, excluded, failures, sources = [], [], [], {}
    for name in CASES:
        case = outputs[name]
        source = (kits / "hf" / "corpus" / f"{case['template']}.jinja").read_text()
        sources[name] = source
        tf = transformers_render(case, source)
        expected = case["golden"] if case["golden"] is not None else tf
        if case["golden"] is None:
            print(f"{name}: no kit golden (input not in the kit); transformers' own output is the reference")
        if tf != expected:
            failures.append(f"{name}: transformers differs from the golden")
        if case["chatfmt"] != expected:
            failures.append(f"{name}: chatfmt differs from the reference")
        if case["minijinja"] != expected:
            excluded.append(name)
        rerun_criterion(name)
        t_chatfmt = criterion_us(criterion_dir, f"chatfmt_{name.replace('/', '_')}")
        t_mj = None if name in excluded else criterion_us(criterion_dir, f"minijinja_{name.replace('/', '_')}")
        t_tf = time_us(lambda: transformers_render(case, source))
        rows.append((name, t_chatfmt, t_mj, t_tf))
    if failures:
        sys.exit("output check failed:\n" + "\n".join(failures))
    print("\nall chatfmt and transformers outputs byte-identical to the reference")
    if excluded:
        print(f"minijinja output differs (excluded from its ratios): {', '.join(excluded)}")

    lines = [
        "| case | chatfmt µs | minijinja µs | transformers µs | chatfmt/minijinja | chatfmt/transformers |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    mj_ratios, tf_ratios = [], []
    for name, c, m, t in rows:
        rm = c / m if c and m else None
        rt = c / t if c and t else None
        if rm:
            mj_ratios.append(rm)
        if rt:
            tf_ratios.append(rt)
        lines.append(f"| {name} | {fmt(c, 2)} | {fmt(m, 2)} | {fmt(t, 1)} | {fmt(rm, 3)} | {fmt(rt, 4)} |")
    print()
    print("\n".join(lines))
    print()
    if mj_ratios:
        print(f"median chatfmt/minijinja over {len(mj_ratios)} cases: {statistics.median(mj_ratios):.3f}"
              f" (worst {max(mj_ratios):.3f})")
    print(f"median chatfmt/transformers over {len(tf_ratios)} cases: {statistics.median(tf_ratios):.4f}"
          f" (worst {max(tf_ratios):.4f})")
    builder = criterion_us(criterion_dir, "builder_chatml_3turn")
    chatml = dict((r[0], r[1]) for r in rows)["chatml/3turn"]
    if builder and chatml:
        print(f"ChatML 3-turn: chatfmt {chatml:.3f} µs, hand-written builder {builder:.3f} µs,"
              f" chatfmt/builder {chatml / builder:.1f}")
    print("\nlinearity (50-turn time / 3-turn time, against their message-count ratio):")
    by_name = {r[0]: r for r in rows}
    for t in ["chatml", "llama3.1", "mistral-v0.3", "qwen2.5", "gemma2"]:
        short, long = by_name[f"{t}/3turn"], by_name[f"{t}/50turn"]
        parts = []
        for label, i in [("chatfmt", 1), ("minijinja", 2), ("transformers", 3)]:
            if short[i] and long[i]:
                parts.append(f"{label} {long[i] / short[i]:.1f}x")
        n_long, n_short = len(outputs[f"{t}/50turn"]["messages"]), len(outputs[f"{t}/3turn"]["messages"])
        print(f"  {t} ({n_long}/{n_short} messages = {n_long / n_short:.1f}x): " + ", ".join(parts))
    compile_path = out_dir / "compile.json"
    if compile_path.exists():
        times = sorted(json.loads(compile_path.read_text()).values())
        print(f"\ncompile (Template::new) over {len(times)} corpus templates: median {statistics.median(times):.1f} µs,"
              f" max {times[-1]:.1f} µs")
    paired_report(paired_timings(outputs, excluded, sources))


main()
