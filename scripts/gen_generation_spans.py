#!/usr/bin/env python3
"""Writes crates/chatfmt/tests/data/generation_spans.jsonl: the text and the `{% generation %}` indices that
transformers 5.23.0's tracker records (`_render_with_assistant_indices`) for generation blocks wherever a
template runs them: at the top level, in loops and conditions, and where Jinja2 buffers text before it
yields it (macros, `{% set %}` and `{% filter %}` blocks, call blocks, nested generation blocks, recursive
loops). There the tracker records the length of the text yielded so far, not where the block's text ends
up, which can be elsewhere or nowhere.

    python3 -m venv /tmp/venv5 && /tmp/venv5/bin/pip install transformers==5.23.0 jinja2==3.1.6
    /tmp/venv5/bin/python scripts/gen_generation_spans.py

Each line is `{"template", "messages", "add_generation_prompt", "text", "spans"}` (spans as [start, end]
code-point indices) or `{..., "error": {"name", "message"}}`.
"""
import json
import os

from transformers.utils.chat_template_utils import _compile_jinja_template, _render_with_assistant_indices

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "chatfmt", "tests", "data", "generation_spans.jsonl")

HEAD = "<|im_start|>{{ m.role }}\n"
TEMPLATES = [
    # In place.
    "{% for m in messages %}" + HEAD + "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|im_end|>"
    "{% endgeneration %}{% else %}{{ m.content }}<|im_end|>{% endif %}\n{% endfor %}",
    "{% for m in messages %}{% with c = m.content %}{% generation %}{{ c }}{% endgeneration %}{% endwith %}|{% endfor %}",
    "{% block body %}{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %};{% endfor %}{% endblock %}",
    # In a macro, printed where it is called, after other text, twice, or not at all.
    "{% macro reply(m) %}{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}{% endmacro %}"
    "{% for m in messages %}" + HEAD + "{% if m.role == 'assistant' %}{{ reply(m) }}{% else %}{{ m.content }}"
    "<|im_end|>{% endif %}\n{% endfor %}",
    "{% macro reply(m) %}pré·{% generation %}{{ m.content }}{% endgeneration %}{% endmacro %}"
    "{% for m in messages %}" + HEAD + "{{ reply(m) }}<|im_end|>\n{% endfor %}",
    "{% macro reply(m) %}{% generation %}{{ m.content }}{% endgeneration %}{% endmacro %}"
    "{% for m in messages %}{{ m.role }}: {{ reply(m) ~ '|' ~ reply(m) }}\n{% endfor %}",
    "{% macro reply(m) %}{% generation %}{{ m.content }}{% endgeneration %}{% endmacro %}"
    "{% for m in messages %}{% set r = reply(m) %}{{ m.role }}={{ r | upper }};{% endfor %}",
    "{% macro reply(m) %}{% generation %}{{ m.content }}{% endgeneration %}{% endmacro %}"
    "{% for m in messages %}{% set r = reply(m) %}{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}",
    "{% macro outer(m) %}<{{ inner(m) }}>{% endmacro %}{% macro inner(m) %}{% generation %}{{ m.content }}"
    "{% endgeneration %}{% endmacro %}{% for m in messages %}{{ m.role }}{{ outer(m) }}{% endfor %}",
    # Captured blocks.
    "{% for m in messages %}{% set x %}{% generation %}{{ m.content }}{% endgeneration %}{% endset %}" + HEAD +
    "{{ x }}<|im_end|>\n{% endfor %}",
    "{% for m in messages %}" + HEAD + "{{ m.content }}<|im_end|>\n{% endfor %}{% set x %}{% generation %}"
    "abcdefgh{% endgeneration %}{% endset %}",
    "{% for m in messages %}" + HEAD + "{% filter upper %}{% generation %}{{ m.content }}{% endgeneration %}"
    "{% endfilter %}<|im_end|>\n{% endfor %}",
    "{% macro w() %}[{{ caller() }}]{% endmacro %}{% for m in messages %}" + HEAD + "{% call w() %}"
    "{% generation %}{{ m.content }}{% endgeneration %}{% endcall %}<|im_end|>\n{% endfor %}",
    # Nested generation blocks; recursive loops.
    "{% for m in messages %}" + HEAD + "{% generation %}a{% generation %}{{ m.content }}{% endgeneration %}"
    "{% endgeneration %}<|im_end|>\n{% endfor %}",
    "{% for m in messages recursive %}" + HEAD + "{% generation %}{{ m.content }}{% endgeneration %}<|im_end|>\n"
    "{% endfor %}",
    "start{% for m in messages recursive %}[{% generation %}{{ m.content }}{% endgeneration %}"
    "{% if m.children is defined %}{{ loop(m.children) }}{% endif %}]{% endfor %}",
    # Blocks whose text is empty, at the start and elsewhere.
    "{% for m in messages %}{% generation %}{% if m.role == 'assistant' %}{{ m.content }}{% endif %}"
    "{% endgeneration %}|{% endfor %}",
    "{% for m in messages %}|{% generation %}{% if m.role == 'assistant' %}{{ m.content }}{% endif %}"
    "{% endgeneration %}{% endfor %}",
]
CONVERSATIONS = [
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "héllo wörld"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2? 🤔"},
     {"role": "assistant", "content": "4 ✓"}, {"role": "user", "content": "and 3+3"},
     {"role": "assistant", "content": "六 (6)"}],
    [{"role": "user", "content": "tree", "children": [{"role": "assistant", "content": "leaf ü"}]},
     {"role": "assistant", "content": "done"}],
]


def main():
    records = []
    for template in TEMPLATES:
        compiled = _compile_jinja_template(template)
        for messages in CONVERSATIONS:
            for prompt in (False, True):
                record = {"template": template, "messages": messages, "add_generation_prompt": prompt}
                try:
                    text, spans = _render_with_assistant_indices(
                        compiled, messages, tools=None, documents=None, add_generation_prompt=prompt
                    )
                    record.update(text=text, spans=[list(s) for s in spans])
                except Exception as e:  # noqa: BLE001 - the reference records what Python raises
                    record["error"] = {"name": type(e).__name__, "message": str(e)}
                records.append(record)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(records)} cases -> {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
