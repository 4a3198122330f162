#!/usr/bin/env python3
"""Cross-checks chatfmt's GGUF reader against llama.cpp's own writer (the `gguf` Python package).

Writes a GGUF with `gguf.GGUFWriter` holding a chat template, named templates, a vocabulary, special
token ids, metadata of every value type and one tensor, then runs `chatfmt render --model` on it and
compares the prompt with the one expected from the template and tokens written.

Usage (from the workspace root, after `cargo build -p chatfmt-cli`):
    python3 -m venv /tmp/ggufenv && /tmp/ggufenv/bin/pip install gguf
    /tmp/ggufenv/bin/python scripts/check_gguf_reader.py [target/debug/chatfmt]
"""

import importlib.metadata
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np

TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TOOL_TEMPLATE = "tools={{ tools | length }} eos={{ eos_token }} unk={{ unk_token }} pad={{ pad_token }}"
TOKENS = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<pad>", "héllo", "日本"]


def write_model(path: Path, version_note: str) -> None:
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(f"chatfmt-check {version_note}")
    w.add_context_length(4096)
    w.add_rope_freq_base(10000.0)
    w.add_uint8("check.u8", 200)
    w.add_int8("check.i8", -2)
    w.add_uint16("check.u16", 513)
    w.add_int16("check.i16", -1)
    w.add_int32("check.i32", -7)
    w.add_uint64("check.u64", 2**40)
    w.add_int64("check.i64", -(2**40))
    w.add_float64("check.f64", 0.5)
    w.add_bool("check.bool", True)
    w.add_array("check.ints", [1, 2, 3])
    w.add_array("check.floats", [0.25, 0.5])
    w.add_tokenizer_model("gpt2")
    w.add_token_list(TOKENS)
    w.add_token_types([2, 3, 3, 3, 3, 3, 1, 1])
    w.add_token_scores([0.0] * len(TOKENS))
    w.add_bos_token_id(1)
    w.add_eos_token_id(4)
    w.add_unk_token_id(0)
    w.add_pad_token_id(5)
    w.add_chat_template([{"name": "default", "template": TEMPLATE}, {"name": "tool_use", "template": TOOL_TEMPLATE}])
    w.add_tensor("token_embd.weight", np.arange(16, dtype=np.float32).reshape(4, 4))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def render(chatfmt: str, model: Path, messages: Path, *extra: str) -> str:
    out = subprocess.run(
        [chatfmt, "render", "--model", str(model), "--messages", str(messages), *extra],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"chatfmt failed on {model}: {out.stderr}")
    return out.stdout


def main() -> None:
    chatfmt = sys.argv[1] if len(sys.argv) > 1 else "target/debug/chatfmt"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = tmp / "check.gguf"
        write_model(model, "v3")
        messages = tmp / "messages.json"
        messages.write_text(json.dumps([{"role": "user", "content": "héllo 日本"}]), encoding="utf-8")
        tools = tmp / "tools.json"
        tools.write_text(json.dumps([{"type": "function", "function": {"name": "f"}}]), encoding="utf-8")
        got = render(chatfmt, model, messages, "--add-generation-prompt")
        want = "<s><|im_start|>user\nhéllo 日本<|im_end|>\n<|im_start|>assistant\n"
        assert got == want, (got, want)
        got = render(chatfmt, model, messages, "--tools", str(tools))
        want = "tools=1 eos=<|im_end|> unk=<unk> pad=<pad>"
        assert got == want, (got, want)
        print(f"ok: chatfmt reads the GGUF written by gguf {importlib.metadata.version('gguf')}")


if __name__ == "__main__":
    main()
