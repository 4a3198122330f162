#!/usr/bin/env python3
"""Check `chatfmt templates export NAME --jinja` against the FastChat kit with Python's Jinja2.

For every template (default: all in the kit; or those named with --templates), exports the
chat template with the chatfmt binary, then renders each applicable kit scenario with Jinja2 in
the environment transformers uses (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks)
and compares with FastChat's prompt from the kit, byte for byte.

A scenario is applicable when it is an optional leading system message followed by user and
assistant string messages, optionally ending with the empty assistant turn (the generation
prompt); `update_last_message` on that turn is the same as an assistant message. Scenarios with
images, custom role strings or renamed conversations are not applicable, nor are those where
FastChat itself raises.

Usage: scripts/check_fastchat_jinja_export.py [--chatfmt BIN] [--kit DIR] [--templates A,B,...]
Exit status: 0 when every applicable scenario of every exportable template matches, else 1.
"""
import argparse
import json
import os
import subprocess
import sys

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The most used FastChat templates (checked first, and required to export).
MOST_USED = [
    "vicuna_v1.1", "llama-2", "llama-3", "mistral", "zephyr", "alpaca", "qwen-7b-chat",
    "chatglm3", "chatglm2", "gemma", "one_shot", "zero_shot", "koala_v1", "openchat_3.5",
    "tulu", "baichuan2-chat", "internlm-chat", "deepseek-chat", "Yi-34b-chat",
    "OpenHermes-2.5-Mistral-7B", "falcon", "starchat", "dolly_v2", "oasst_pythia", "chatgpt",
]


def default_kit():
    kits = os.environ.get("CHATFMT_KITS")
    if kits:
        return os.path.join(kits, "fastchat")
    return os.path.join(os.path.dirname(REPO), "shared", "conformance", "fastchat")


def to_chat(ops):
    """The (messages, add_generation_prompt) a kit scenario amounts to, or None."""
    messages, gen = [], False
    for n, op in enumerate(ops):
        last = n == len(ops) - 1
        if gen:
            # Only update_last_message may follow the generation turn.
            if op["op"] != "update_last_message" or not last or not isinstance(op["message"], str):
                return None
            messages.append({"role": "assistant", "content": op["message"]})
            gen = False
        elif op["op"] == "set_system_message":
            if messages:
                return None
            messages.append({"role": "system", "content": op["value"]})
        elif op["op"] == "append_message":
            index, message = op["role_index"], op["message"]
            if index not in (0, 1) or isinstance(message, dict):
                return None
            if message is None:
                if index != 1 or n < len(ops) - 2:
                    return None
                gen = True
            else:
                messages.append({"role": ["user", "assistant"][index], "content": message})
        else:
            return None
    return messages, gen


def raise_exception(message):
    raise TemplateError(message)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chatfmt", default=os.path.join(REPO, "target", "debug", "chatfmt"))
    parser.add_argument("--kit", default=default_kit())
    parser.add_argument("--templates", help="comma-separated names (default: all)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    with open(os.path.join(args.kit, "goldens.jsonl"), encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    scenarios = {}
    for r in records:
        if r["kind"] == "template_scenario":
            scenarios.setdefault(r["template"], []).append(r)
    names = args.templates.split(",") if args.templates else list(scenarios)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    failures, not_exported, total_checked = [], [], 0
    for name in names:
        proc = subprocess.run(
            [args.chatfmt, "templates", "export", name, "--jinja"],
            capture_output=True, text=True,
        )
        if proc.returncode != 0:
            not_exported.append((name, proc.stderr.strip()))
            continue
        template = env.from_string(proc.stdout)
        checked = 0
        for r in scenarios.get(name, []):
            chat = to_chat(r["ops"])
            if chat is None or "ok" not in r["prompt"]:
                continue
            messages, gen = chat
            try:
                got = template.render(messages=messages, add_generation_prompt=gen)
            except Exception as e:  # noqa: BLE001 - any render failure is a mismatch
                got = f"<render error: {type(e).__name__}: {e}>"
            checked += 1
            if got != r["prompt"]["ok"]:
                failures.append((r["id"], r["prompt"]["ok"], got))
        total_checked += checked
        if args.verbose:
            print(f"{name}: {checked} scenarios")
    print(f"templates: {len(names)} requested, {len(names) - len(not_exported)} exported, "
          f"{total_checked} scenarios checked, {len(failures)} mismatches")
    for name, why in not_exported:
        print(f"not exportable: {name}: {why.splitlines()[-1] if why else '?'}")
    for rid, want, got in failures[:10]:
        print(f"MISMATCH {rid}\n  want: {want!r}\n  got:  {got!r}")
    missing = [n for n, _ in not_exported if n in MOST_USED]
    if missing:
        print(f"most used templates that do not export: {missing}")
    return 1 if failures or missing else 0


if __name__ == "__main__":
    sys.exit(main())
