#!/usr/bin/env python3
"""Writes crates/chatfmt/tests/data/continue_final.jsonl: what transformers 5.23.0's `render_jinja_template`
gives with `continue_final_message=True` for final messages whose content is not a plain string (content blocks
of every JSON type, blocks whose `text` is not a string, non-string content), on two templates.

    python3 -m venv /tmp/venv5 && /tmp/venv5/bin/pip install transformers==5.23.0
    /tmp/venv5/bin/python scripts/gen_continue_final_cases.py

Each line is `{"template", "content", "status": "ok", "output"}` or `{..., "status": "raised", "error":
{"name", "message"}}`.
"""
import json
import os

import transformers
from transformers.utils.chat_template_utils import render_jinja_template

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "chatfmt", "tests", "data", "continue_final.jsonl")

TEMPLATES = [
    "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
    "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}{% for b in m.content %}"
    "{{ b.text if b is mapping else b }}|{% endfor %}{% endif %}{% endfor %}",
]
CONTENTS = [
    "Sure", 42, 1.5, True, {"k": "v"}, [],
    [{"type": "text", "text": "a"}],
    [{"type": "text", "text": "a"}, "context"],
    [{"type": "text", "text": "a"}, "other"],
    ["some text"], ["plain"],
    [{"type": "image"}], [{"type": "text", "text": "a"}, {"type": "image"}],
    [{"text": 5}], [{"text": None}], [{"text": ["x"]}], [{"text": {"a": 1}}], [{"text": True}], [{"text": 2.5}],
    [5], [None], [True], [["text"]], [["x"]], [{"type": "text", "text": "a"}, ["x"]],
]


def main():
    records = []
    for template in TEMPLATES:
        for content in CONTENTS:
            chat = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": content}]
            rec = {"template": template, "content": content}
            try:
                out = render_jinja_template(conversations=[chat], chat_template=template, continue_final_message=True)
                rec.update(status="ok", output=out[0][0] if isinstance(out, tuple) else out[0])
            except Exception as e:  # noqa: BLE001 - the reference's error is the record
                rec.update(status="raised", error={"name": type(e).__name__, "message": str(e)})
            records.append(rec)
    with open(OUT, "w") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(records)} cases, transformers {transformers.__version__}")


if __name__ == "__main__":
    main()
