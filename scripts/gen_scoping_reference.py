#!/usr/bin/env python3
"""Reference table of Jinja2's frames and variable scoping, recorded from transformers' chat-template environment.

Writes crates/chatfmt-jinja/tests/data/scoping.jsonl: one probe per line, a template rendered by the environment of
transformers' chat templating (`_compile_jinja_template`: trim_blocks, lstrip_blocks, loop controls, the
`generation` tag) with the context CONTEXT (recorded with it), and what it gives: the output, or the error's class and message. The
test `crates/chatfmt-jinja/tests/scoping_reference.rs` replays it; CI never regenerates it.

What the probes pin: which constructs get a frame of their own (loop bodies, macros, call blocks, `with`, captured
`{% set %}` blocks, `{% filter %}` blocks, `{% generation %}` blocks; not `if` nor `autoescape`), and what a name
holds in a frame before the frame assigns it: the context's value, the enclosing frame's, or nothing at all when
the first reference of the frame's own level stores it (`{% for m in x %}{{ y }}{% endfor %}{% set y = 1 %}`
prints nothing for `y` even when the context has one). The hand-written probes come first, then a seeded
random sample of nested statements.

Pinned versions: transformers 5.23.0, Jinja2 3.1.6, CPython 3.11.

Set-up: python3 -m venv /tmp/venv && /tmp/venv/bin/pip install transformers==5.23.0 jinja2==3.1.6
Run:    /tmp/venv/bin/python scripts/gen_scoping_reference.py   (deterministic)

A SyntaxError that CPython raises compiling Jinja2's generated code (`break` outside a loop) is recorded
without the line of that code CPython appends.

Record: {"name", "template", "context", "status": "ok"|"raised", "output" | "error": {"name", "message"}}.
"""
import json
import os
import random
import re
import warnings

import jinja2
from transformers.utils import chat_template_utils as ctu

warnings.simplefilter("ignore")
assert jinja2.__version__ == "3.1.6", jinja2.__version__

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "chatfmt-jinja", "tests", "data",
                   "scoping.jsonl")
CONTEXT = {"w": [1, 2], "x": "s", "v": ["a", "b", "a"],
           "msgs": [{"role": "system", "content": " sys "}, {"role": "user", "content": "hi"}]}
CM = "{% macro cm() %}{{ caller(1) }}{% endmacro %}"

PROBES = [
    ("loop_read_then_set", "{% for i in w %}{{ x }}{% set x = 5 %}.{% endfor %}{{ x }}"),
    ("inner_loop_before_outer_set", "{% for i in w %}{% for j in w %}{{ x }}{% endfor %}{% set x = 5 %}.{% endfor %}"),
    ("if_in_loop_before_set", "{% for i in w %}{% if true %}{{ x }}{% endif %}{% set x = 5 %}.{% endfor %}"),
    ("filter_in_loop_before_set", "{% for i in w %}{% filter upper %}{{ x }}{% endfilter %}{% set x = 5 %}.{% endfor %}"),
    ("setblock_in_loop_before_set", "{% for i in w %}{% set y %}{{ x }}{% endset %}{{ y }}{% set x = 5 %}.{% endfor %}"),
    ("filter_block_set_stays", "{% filter upper %}{% set x = 5 %}{% endfilter %}{{ x }}"),
    ("setblock_body_set_stays", "{% set y %}{% set x = 5 %}{% endset %}{{ x }}"),
    ("filter_block_set_in_loop", "{% for i in w %}{% filter upper %}{% set x = 5 %}{% endfilter %}{{ x }}{% endfor %}"),
    ("setblock_read_set_read", "{% set y %}{{ x }}{% set x = 5 %}{{ x }}{% endset %}{{ y }}{{ x }}"),
    ("filter_read_set_read", "{% filter upper %}{{ x }}{% set x = 'q' %}{{ x }}{% endfilter %}{{ x }}"),
    ("macro_read_set_read", "{% macro m() %}{{ x }}{% set x = 1 %}{{ x }}{% endmacro %}{{ m() }}{{ x }}"),
    ("macro_in_loop_before_set", "{% for i in w %}{% macro m() %}{{ x }}{% endmacro %}{{ m() }}{% set x = 5 %}{% endfor %}"),
    ("callblock_in_loop_before_set", CM + "{% for i in w %}{% call(a) cm() %}{{ x }}{% endcall %}{% set x = 5 %}{% endfor %}"),
    ("with_read_set", "{% with %}{{ x }}{% set x = 2 %}{% endwith %}{{ x }}"),
    ("with_loop_before_set", "{% with a = x %}{% for i in w %}{{ a }}{{ x }}{% endfor %}{% set x = 3 %}{% endwith %}"),
    ("if_read_set", "{% if true %}{{ x }}{% set x = 4 %}{% endif %}{{ x }}"),
    ("top_read_set", "{{ x }}{% set x = 4 %}{{ x }}"),
    ("loop_var_shadowed", "{% for i in w %}{{ i }}{% for i in w %}{{ i }}{% set i = 9 %}{% endfor %}{{ i }}{% endfor %}"),
    ("loop_accumulate", "{% for i in w %}{% set x = x ~ i %}{{ x }}{% endfor %}{{ x }}"),
    ("nested_accumulate", "{% for i in w %}{% for j in w %}{% set x = x ~ j %}{{ x }}{% endfor %}{{ x }}{% endfor %}"),
    ("setblock_loop_read_set", "{% set y %}{% for i in w %}{{ x }}{% set x = i %}{% endfor %}{% endset %}{{ y }}"),
    ("filter_loop_before_set", "{% filter upper %}{% for i in w %}{{ x }}{% endfor %}{% set x = 'z' %}{% endfilter %}"),
    ("generation_set_stays", "{% generation %}{% set x = 5 %}{{ x }}{% endgeneration %}{{ x }}"),
    ("generation_set_in_loop", "{% for i in w %}{% generation %}{% set x = i %}{% endgeneration %}{{ x }}{% endfor %}"),
    ("generation_namespace", "{% set ns = namespace(a=0) %}{% generation %}{% set ns.a = 5 %}{% endgeneration %}{{ ns.a }}"),
    ("generation_before_set", "{% for i in w %}{% generation %}{{ x }}{% endgeneration %}{% set x = 1 %}{% endfor %}"),
    ("top_loop_before_set", "{% for i in w %}{{ x }}{% endfor %}{% set x = 1 %}"),
    ("top_if_before_set", "{% if true %}{{ x }}{% endif %}{% set x = 1 %}"),
    ("top_read_loop_set", "{% for i in w %}{{ x }}{% endfor %}{{ x }}{% set x = 1 %}"),
    ("macro_before_top_set", "{% macro m() %}{{ x }}{% endmacro %}{{ m() }}{% set x = 1 %}{{ m() }}"),
    ("loop_then_read_in_inner", "{% for i in w %}{% for j in w %}{{ x }}{% endfor %}{{ x }}{% set x = 5 %}.{% endfor %}"),
    ("if_set_some_branches", "{% for i in w %}{% if i == 1 %}{% set x = 'one' %}{% endif %}{% for j in [0] %}{{ x }}{% endfor %}{% endfor %}"),
    ("if_set_if_else", "{% for i in w %}{% if i == 1 %}{% set x = 'a' %}{% else %}{% set x = 'b' %}{% endif %}{% for j in [0] %}{{ x }}{% endfor %}{% endfor %}"),
    ("if_set_all_branches", "{% for i in w %}{% for j in [0] %}{{ x }}{% endfor %}{% if i == 1 %}{% set x = 'a' %}{% elif i == 2 %}{% set x = 'b' %}{% else %}{% set x = 'c' %}{% endif %}{% endfor %}"),
    ("if_set_some_then_inner", "{% for i in w %}{% for j in [0] %}{{ x }}{% endfor %}{% if i == 1 %}{% set x = 'a' %}{% else %}{% set x = 'c' %}{% endif %}{% endfor %}"),
    ("elif_set_all", "{% for j in [0] %}{{ x }}{% endfor %}{% if false %}{% set x = 1 %}{% elif false %}{% set x = 2 %}{% else %}{% set x = 3 %}{% endif %}{{ x }}"),
    ("elif_set_in_else_after_read", "{% for j in [0] %}{{ x }}{% endfor %}{% if false %}{% set x = 1 %}{% elif false %}{% set x = 2 %}{% else %}{{ x }}{% set x = 3 %}{% endif %}{{ x }}"),
    ("macro_default_reads", "{% macro m(a=x) %}{{ a }}{% set x = 2 %}{{ x }}{% endmacro %}{{ m() }}"),
    ("macro_param_shadows", "{% macro m(x) %}{% for i in w %}{{ x }}{% endfor %}{% set x = 2 %}{{ x }}{% endmacro %}{{ m(7) }}"),
    ("callblock_body_set", CM + "{% call(a) cm() %}{% set x = a %}{{ x }}{% endcall %}{{ x }}"),
    ("callblock_nested_before_set", CM + "{% call(a) cm() %}{% for i in w %}{{ x }}{% endfor %}{% set x = a %}{% endcall %}"),
    ("block_before_set", "{% block b %}{% for i in w %}{{ x }}{% endfor %}{% set x = 1 %}{% endblock %}{{ x }}"),
    ("block_read_before_top_set", "{% block b %}{{ x }}{% endblock %}{% set x = 1 %}{{ x }}"),
    ("block_loop_before_top_set", "{% block b %}{% for i in w %}{{ x }}{% endfor %}{% endblock %}{% set x = 1 %}"),
    ("scoped_block_in_loop_before_set", "{% for i in w %}{% block b scoped %}{{ x }}{{ i }}{% endblock %}{% set x = 1 %}{% endfor %}"),
    ("block_after_top_set", "{% set x = 2 %}{% block b %}{{ x }}{% endblock %}"),
    ("block_in_macro_before_set", "{% macro m() %}{% block c %}{{ x }}{% endblock %}{% endmacro %}{{ m() }}{% set x = 3 %}"),
    ("block_in_block_before_set", "{% block a %}{% block b %}{% for i in w %}{{ x }}{% endfor %}{% endblock %}{% set x = 4 %}{% endblock %}"),
    ("block_own_set_before", "{% block b %}{% for i in w %}{{ y }}{% endfor %}{% set y = 1 %}{{ y }}{% endblock %}"),
    ("scoped_block_in_loop_reads_loop", "{% for i in w %}{% set x = i %}{% block b scoped %}{{ x }}{% endblock %}{% endfor %}"),
    ("scoped_block_loop_var", "{% for i in w %}{% block b scoped %}{{ i }}{{ x }}{% endblock %}{% endfor %}"),
    ("autoescape_set_leaks", "{% autoescape true %}{% set x = '<' %}{% endautoescape %}{{ x }}"),
    ("autoescape_inner_before_set", "{% for i in w %}{% autoescape false %}{% for j in [0] %}{{ x }}{% endfor %}{% set x = 1 %}{% endautoescape %}{% endfor %}"),
    ("set_self_reference_in_loop", "{% for i in w %}{% for j in [0] %}{% set x = x ~ '!' %}{{ x }}{% endfor %}{% set x = 'y' %}{% endfor %}"),
    ("tuple_target_before", "{% for i in w %}{% for j in [0] %}{{ x }}{{ y }}{% endfor %}{% set x, y = 1, 2 %}{% endfor %}"),
    ("namespace_before_set", "{% for i in w %}{% for j in [0] %}{{ ns }}{% endfor %}{% set ns = namespace(a=1) %}{% endfor %}"),
    ("global_shadowed_later", "{% for i in w %}{{ range(2)|list }}{% endfor %}{% set range = 1 %}"),
    ("global_shadowed_in_macro", "{% macro m() %}{{ range(2)|list }}{% endmacro %}{{ m() }}{% set range = 1 %}"),
    ("loop_else_before_set", "{% for i in [] %}{% else %}{% for j in [0] %}{{ x }}{% endfor %}{% set x = 1 %}{{ x }}{% endfor %}"),
    ("loop_cond_reads_outer", "{% for i in w if x %}{% set x = 0 %}{{ i }}{% endfor %}"),
    ("recursive_loop_before_set", "{% for i in [[1], 2] recursive %}{% if i is iterable %}{{ loop(i) }}{% endif %}{{ x }}{% set x = i %}{% endfor %}"),
    ("filter_argument_reads_body", "{% filter replace('s', x) %}{{ x }}{% set x = 'T' %}{% endfilter %}"),
    ("setblock_filter_reads", "{% set y | replace('s', x) %}{{ x }}{% set x = 'T' %}{% endset %}{{ y }}"),
    ("with_value_reads_outer", "{% for i in w %}{% with a = x %}{{ a }}{% endwith %}{% set x = 5 %}{% endfor %}"),
    ("undefined_error_message", "{% for i in w %}{% for j in [0] %}{{ x.attr }}{% endfor %}{% set x = 1 %}{% endfor %}"),
    ("undefined_call", "{% for i in w %}{% for j in [0] %}{{ x() }}{% endfor %}{% set x = 1 %}{% endfor %}"),
]


def random_probes(seed, n):
    """Nested statements reading and assigning names, as the fuzz that found these rules generated them."""
    rng = random.Random(seed)
    exprs = ["x", "i", "loop.index", "loop.first", "loop.previtem", "ns.c", "v|length", "caller()", "varargs",
             "kwargs", "a", "b", "m(1)", "m(1, 2, 3)", "m(b=5)", "k.role", "k['content']|trim", "x ~ '!'",
             "(x is string) and x|upper", "range(2)|list", "v[loop.index0]"]

    def ws():
        return rng.choice(["", "-"])

    def tag(body):
        return "{%" + ws() + " " + body + " " + ws() + "%}"

    def out(e):
        return "{{" + ws() + " " + e + " " + ws() + "}}"

    def block(depth):
        parts = []
        for _ in range(rng.randint(1, 3)):
            k = rng.random()
            if depth < 2 and k < .18:
                it = rng.choice(["v", "[1,2,2,3]", "range(3)", "v|reverse", "'ab'", "w"]) + rng.choice(["", " if i"])
                parts.append(tag("for i in " + it) + block(depth + 1) + rng.choice(["", tag("else") + "E"])
                             + tag("endfor"))
            elif depth < 2 and k < .28:
                parts.append(tag("if " + rng.choice(exprs)) + block(depth + 1)
                             + rng.choice(["", tag("elif " + rng.choice(exprs)) + "L", tag("else") + block(depth + 1)])
                             + tag("endif"))
            elif k < .36:
                parts.append(tag("set ns.c = ns.c + " + rng.choice(["1", "i|int", "loop.index"])))
            elif k < .44:
                parts.append(tag("set x = " + rng.choice(exprs)))
            elif depth < 2 and k < .5:
                parts.append(tag("set y") + block(depth + 1) + tag("endset") + out("y|length"))
            elif depth < 2 and k < .56:
                f = rng.choice(["upper", "trim", "replace('a','b')", "indent(2)"])
                parts.append(tag("filter " + f) + block(depth + 1) + tag("endfilter"))
            elif depth < 2 and k < .62:
                call = rng.choice(["1", "", "1, 2", "b=3"])
                parts.append(tag("call(a) m(" + call + ")") + "C" + out("a") + tag("endcall"))
            elif k < .68:
                parts.append(rng.choice([tag("break"), tag("continue")]) if depth > 0 else "t")
            elif k < .74:
                parts.append(rng.choice(["\n", "  ", "\n  x\n", " y "]))
            else:
                parts.append(out(rng.choice(exprs)))
        return "".join(parts)

    probes = []
    for n_ in range(n):
        head = ("{% set ns = namespace(c=0) %}" + tag("macro m(a, b=2)") + out("a") + "/" + out("b") + out("varargs")
                + out("kwargs") + rng.choice(["", out("caller() if caller")]) + tag("endmacro"))
        if rng.random() < .3:
            body = tag("for k in msgs") + block(1) + tag("endfor")
        else:
            body = block(0)
        probes.append((f"random_{seed}_{n_:03d}", head + body + out("ns.c")))
    return probes


def error(e):
    message = getattr(e, "message", None) or str(e)
    if isinstance(e, SyntaxError) and not isinstance(e, jinja2.TemplateSyntaxError):
        # CPython names the line of the Python source Jinja2 generated; chatfmt has no such source.
        message = re.sub(r" \(<template>, line \d+\)$", "", message)
    return {"status": "raised", "error": {"name": type(e).__name__, "message": message}}


def render(template):
    try:
        compiled = ctu._compile_jinja_template(template)
    except Exception as e:  # noqa: BLE001 - every failure is a record
        return error(e)
    try:
        return {"status": "ok", "output": compiled.render(**json.loads(json.dumps(CONTEXT)))}
    except Exception as e:  # noqa: BLE001
        return error(e)


def main():
    records = []
    for name, template in PROBES + random_probes(7, 400):
        records.append(json.dumps({"name": name, "template": template, "context": CONTEXT, **render(template)},
                                  ensure_ascii=False))
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(records) + "\n")
    print(len(records), "probes")


if __name__ == "__main__":
    main()
