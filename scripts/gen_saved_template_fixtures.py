#!/usr/bin/env python3
"""Writes crates/chatfmt-cli/tests/data/saved_templates/: model folders before and after saving a chat template
with transformers' `save_pretrained`, the reference for `chatfmt templates set`.

Run it twice, first with transformers 4 (the `--legacy` layout: templates in tokenizer_config.json), then with
transformers 5 (the default layout: chat_template.jinja and additional_chat_templates/NAME.jinja; this run also
records, for every case, the prompt transformers 5 renders from the saved folder):

    python3 -m venv /tmp/venv4 && /tmp/venv4/bin/pip install transformers==4.57.1 tokenizers
    python3 -m venv /tmp/venv5 && /tmp/venv5/bin/pip install transformers==5.23.0 tokenizers
    /tmp/venv4/bin/python scripts/gen_saved_template_fixtures.py legacy
    /tmp/venv5/bin/python scripts/gen_saved_template_fixtures.py default

Each case folder holds `input/` (the model folder's template files and tokenizer_config.json before),
`expected/` (the same files after save_pretrained) and `case.json` (the `templates set` arguments, the
transformers version, the messages and the prompt). The tokenizer is a tiny word-level one built with
`tokenizers`; its tokenizer_config.json holds `model_max_length` 10**30 as transformers writes it
(1000000000000000019884624838656), non-ASCII text and `\\u` escapes (control characters, which json.dumps
escapes even with ensure_ascii=False).

transformers 4 is used as a user would: the input folder is loaded with from_pretrained, the template set, and
the tokenizer saved. transformers 5 records the from_pretrained call (`is_local`, `local_files_only`) in the
tokenizer_config.json it saves, which has nothing to do with templates; so its reference is the tokenizer object
that wrote the input folder, with the template set, saved again. This run checks that from_pretrained of the
input folder yields the same templates, and that its config differs only by those recorded call arguments.
"""
import json
import os
import shutil
import sys
import tempfile

import transformers
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "chatfmt-cli", "tests", "data", "saved_templates")
VERSIONS = {"legacy": "4.57.1", "default": "5.23.0"}
CALL_ARGUMENTS = {"is_local", "local_files_only"}

# The templates given to `templates set --template`: one ends with a newline, one does not.
TEMPLATES = {
    "new.jinja": "{{ bos_token }}{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }} ✓{{ eos_token }}\n"
    "{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}\n",
    "tool_use.jinja": "{% for m in messages %}<tool-ready>{{ m['content'] }}{% endfor %}",
}
# Templates already in the input folders: a stale one whose JSON form has escapes, quotes, braces and commas.
STALE = "{{ bos_token }}{% for m in messages %}{{ m['content'] }}\x07 \"}, ✓ \\n{% endfor %}"
RAG = "{% for m in messages %}«{{ m['content'] }}»{% endfor %}"
MESSAGES = [{"role": "user", "content": "héllo wörld"}]


def tokenizer(chat_template):
    vocab = {"<s>": 0, "<｜end▁of▁turn｜>": 1, "<unk>": 2, "hello": 3, "café": 4}
    model = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    model.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=model,
        bos_token="<s>",
        eos_token="<｜end▁of▁turn｜>",
        unk_token="<unk>",
        model_max_length=int(1e30),
        note="naïve \x1b escape ✓",
    )
    tok.chat_template = chat_template
    return tok


def template_source(args):
    if "--template" in args:
        with open(os.path.join(OUT, args[args.index("--template") + 1]), encoding="utf-8", newline="") as f:
            return f.read()
    name = args[args.index("--default-template") + 1]
    with open(os.path.join(ROOT, "crates", "chatfmt", "templates", f"{name}.jinja"), encoding="utf-8", newline="") as f:
        return f.read()


def with_template(current, name, source):
    """The tokenizer's templates after `templates set --name NAME`, as a user would assign them."""
    if name == "default" and not isinstance(current, dict):
        return source
    named = dict(current) if isinstance(current, dict) else ({"default": current} if current else {})
    named[name] = source
    return named


# name -> (layout, existing templates, save the input with jinja files, `templates set` arguments)
CASES = {
    "default-single": ("default", STALE, False, ["--template", "templates/new.jinja"]),
    "default-named": (
        "default",
        {"default": STALE, "rag": RAG},
        False,
        ["--template", "templates/tool_use.jinja", "--name", "tool_use"],
    ),
    "legacy-insert": ("legacy", None, True, ["--template", "templates/new.jinja", "--legacy"]),
    "legacy-replace": ("legacy", STALE, False, ["--default-template", "chatml", "--legacy"]),
    "legacy-moved": (
        "legacy",
        {"default": STALE, "rag": RAG},
        True,
        ["--template", "templates/tool_use.jinja", "--name", "tool_use", "--legacy"],
    ),
}


def template_files(folder):
    """The files `templates set` reads or writes, relative to the folder."""
    found = []
    for name in ["tokenizer_config.json", "chat_template.jinja"]:
        if os.path.exists(os.path.join(folder, name)):
            found.append(name)
    extra = os.path.join(folder, "additional_chat_templates")
    if os.path.isdir(extra):
        found += sorted(f"additional_chat_templates/{n}" for n in os.listdir(extra))
    return found


def copy_files(src, dst):
    shutil.rmtree(dst, ignore_errors=True)
    for rel in template_files(src):
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copyfile(os.path.join(src, rel), os.path.join(dst, rel))


def generate(layout, work):
    for case, (case_layout, existing, jinja_input, args) in CASES.items():
        if case_layout != layout:
            continue
        name = args[args.index("--name") + 1] if "--name" in args else "default"
        source = template_source(args)
        folder = os.path.join(OUT, case)
        made = tokenizer(existing)
        made.save_pretrained(os.path.join(work, case, "input"), save_jinja_files=jinja_input)
        saved = os.path.join(work, case, "expected")
        if layout == "legacy":
            loaded = AutoTokenizer.from_pretrained(os.path.join(work, case, "input"))
            loaded.chat_template = with_template(loaded.chat_template, name, source)
            loaded.save_pretrained(saved, save_jinja_files=False)
        else:
            reloaded = AutoTokenizer.from_pretrained(os.path.join(work, case, "input"))
            assert reloaded.chat_template == made.chat_template, case
            made.chat_template = with_template(made.chat_template, name, source)
            reloaded.chat_template = with_template(reloaded.chat_template, name, source)
            made.save_pretrained(saved)
            reloaded.save_pretrained(os.path.join(work, case, "reloaded"))
            for rel in template_files(saved):
                with open(os.path.join(saved, rel), "rb") as a, open(os.path.join(work, case, "reloaded", rel), "rb") as b:
                    if rel == "tokenizer_config.json":
                        mine, theirs = json.loads(a.read()), json.loads(b.read())
                        assert set(theirs) - set(mine) == CALL_ARGUMENTS, case
                        assert {k: v for k, v in theirs.items() if k not in CALL_ARGUMENTS} == mine, case
                    else:
                        assert a.read() == b.read(), (case, rel)
        copy_files(os.path.join(work, case, "input"), os.path.join(folder, "input"))
        copy_files(saved, os.path.join(folder, "expected"))
        record = {"transformers": transformers.__version__, "args": args, "messages": MESSAGES}
        with open(os.path.join(folder, "case.json"), "w", encoding="utf-8") as f:
            f.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")


def record_prompts(work):
    """The prompt transformers 5 renders from each saved folder (the tokenizer files come from the run's copy)."""
    for case in CASES:
        folder = os.path.join(OUT, case)
        full = os.path.join(work, case, "rendered")
        tokenizer(None).save_pretrained(full)
        for rel in template_files(full):
            os.remove(os.path.join(full, rel))
        for rel in template_files(os.path.join(folder, "expected")):
            os.makedirs(os.path.dirname(os.path.join(full, rel)), exist_ok=True)
            shutil.copyfile(os.path.join(folder, "expected", rel), os.path.join(full, rel))
        with open(os.path.join(folder, "case.json"), encoding="utf-8") as f:
            record = json.load(f)
        loaded = AutoTokenizer.from_pretrained(full)
        record["prompt"] = loaded.apply_chat_template(record["messages"], tokenize=False)
        with open(os.path.join(folder, "case.json"), "w", encoding="utf-8") as f:
            f.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")


def main():
    layout = sys.argv[1] if len(sys.argv) == 2 else ""
    if layout not in VERSIONS:
        sys.exit("usage: gen_saved_template_fixtures.py legacy|default (see the docstring)")
    if transformers.__version__ != VERSIONS[layout]:
        sys.exit(f"the {layout} layout is generated with transformers {VERSIONS[layout]}, not {transformers.__version__}")
    os.makedirs(os.path.join(OUT, "templates"), exist_ok=True)
    for name, source in TEMPLATES.items():
        with open(os.path.join(OUT, "templates", name), "w", encoding="utf-8", newline="") as f:
            f.write(source)
    with tempfile.TemporaryDirectory() as work:
        generate(layout, work)
        if layout == "default":
            record_prompts(work)


if __name__ == "__main__":
    main()
