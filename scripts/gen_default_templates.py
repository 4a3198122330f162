#!/usr/bin/env python3
"""Writes crates/chatfmt/templates/*.jinja: the class default chat templates transformers shipped.

transformers (up to 4.42) gave tokenizers without a chat template a class-level
`default_chat_template` property; the last release that has them is 4.42.4. This script reads those
properties out of the published source (no transformers import: the function bodies are evaluated
with a stand-in `self`), with `use_default_system_prompt=False`, the Llama tokenizers' default.

Usage:
    pip download --no-deps -d /tmp/tf442 transformers==4.42.4
    (cd /tmp/tf442 && unzip -q -o transformers-4.42.4-py3-none-any.whl 'transformers/*')
    python3 scripts/gen_default_templates.py /tmp/tf442/transformers
"""

import ast
import sys
from pathlib import Path
from types import SimpleNamespace

# built-in name -> (source file, class whose property is read)
DEFAULTS = {
    "chatml": ("tokenization_utils_base.py", "PreTrainedTokenizerBase"),
    "llama": ("models/llama/tokenization_llama.py", "LlamaTokenizer"),
    "blenderbot": ("models/blenderbot/tokenization_blenderbot.py", "BlenderbotTokenizer"),
    "gpt2": ("models/gpt2/tokenization_gpt2.py", "GPT2Tokenizer"),
}


def module_constants(tree):
    """The module's top-level string constants (the Llama default system prompt lives in one)."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value.value
    return out


def default_template(src_root, file, cls):
    tree = ast.parse((src_root / file).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "default_chat_template":
                    item.decorator_list = []
                    module = ast.Module(body=[item], type_ignores=[])
                    scope = module_constants(tree)
                    exec(compile(module, file, "exec"), scope)
                    return scope["default_chat_template"](SimpleNamespace(use_default_system_prompt=False))
    raise SystemExit(f"{file}: no {cls}.default_chat_template")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    src_root = Path(sys.argv[1])
    out_dir = Path(__file__).resolve().parent.parent / "crates" / "chatfmt" / "templates"
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, (file, cls) in DEFAULTS.items():
        text = default_template(src_root, file, cls)
        (out_dir / f"{name}.jinja").write_text(text, encoding="utf-8", newline="")
        print(f"{name}.jinja: {len(text)} chars from {cls}")


if __name__ == "__main__":
    main()
