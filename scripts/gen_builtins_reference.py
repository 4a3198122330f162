#!/usr/bin/env python3
"""Reference table of every built-in of the chat-template Jinja environment, recorded from Jinja2 itself.

Writes crates/chatfmt-jinja/tests/data/builtins.jsonl: one case per line, each a small template and a JSON
context rendered by the environment of transformers' chat templating (`_compile_jinja_template`, an
`ImmutableSandboxedEnvironment` with transformers' own `tojson`, `dict`, `namespace`, ...), with the exact
output or the error class and message. The test `crates/chatfmt-jinja/tests/builtins_reference.rs` replays
it; CI never regenerates it.

Names come from Jinja2 itself: `DEFAULT_FILTERS`, `DEFAULT_TESTS`, `DEFAULT_NAMESPACE`, and the attributes of
str, list, dict, int and float that the sandbox's `is_safe_attribute` allows. Each name is driven with
defaults, every parameter by position and by keyword, None / Undefined / falsy / empty inputs, wrong types,
negative, huge and non-finite numbers, Markup and unicode. Inputs JSON cannot express come from template
expressions (`nope` is undefined, `'x'|safe` is Markup, `'inf'|float`, `(1, 2)`).

Pinned versions: transformers 5.23.0, Jinja2 3.1.6, MarkupSafe 3.0, CPython 3.11.

Set-up: python3 -m venv /tmp/venv && /tmp/venv/bin/pip install transformers==5.23.0 jinja2==3.1.6
Run:    /tmp/venv/bin/python scripts/gen_builtins_reference.py
        (deterministic: sorted enumeration, `random` seeded per case, whatever PYTHONHASHSEED is)

Record: {"id", "name", "kind": "filter"|"test"|"global"|"method", "template", "context",
         "status": "ok"|"raised", "output" | "error": {"name", "message"}, "property"?}
`name` is the filter, test or global name, or `type.method` for methods. `message` is `str(exception)`, or
the bare message of a TemplateSyntaxError. `random` and `lipsum` outputs depend on the random state, so
their "ok" cases carry `property` instead of `output`: {"one_of": [...]} (the rendered text is one of
these) or {"paragraphs": N, "html": bool, "min_words": A, "max_words": B}.
"""
import inspect
import json
import os
import random
import re
import sys
import warnings

import jinja2
import markupsafe
from jinja2.defaults import DEFAULT_FILTERS, DEFAULT_NAMESPACE, DEFAULT_TESTS
from transformers.utils import chat_template_utils as ctu

warnings.simplefilter("ignore")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "chatfmt-jinja", "tests", "data", "builtins.jsonl")
ADDRESS = re.compile(r"(?i)at(?: |%20)0x[0-9a-f]{6,}")

assert jinja2.__version__ == "3.1.6", jinja2.__version__
assert sys.version_info[:2] == (3, 11), sys.version

ENV = ctu._compile_jinja_template("").environment

USERS = [
    {"name": "Ann", "age": 31, "city": "Oslo", "tags": ["a"]},
    {"name": "bob", "age": 25, "city": "lima", "tags": []},
    {"name": "Cid", "age": 31, "city": "Oslo"},
    {"name": "dee", "age": None, "city": "Lima", "tags": ["b", "c"]},
]

# Inputs as template expressions (what JSON cannot express) or context values (`v`).
INPUTS = [
    "none", "nope", "nope.attr", "''", "' '", "'abc'", "'Hello wORLD  x y'", "'ünïcødé ß ǅ ﬁ'", "'日本語🙂'",
    "'<b>a&amp;b</b> \"q\"'", "'<b>a&b</b>'|safe", "'42'", "' -3.5e2 '", "'0x1A'", "'1_000'", "'nan'",
    "0", "1", "-3", "7", "10 ** 20", "-(10 ** 20)", "2.5", "-0.0", "0.0", "-2.675", "1e300", "'inf'|float",
    "'-inf'|float", "'nan'|float", "true", "false", "[]", "[3, 1, 2]", "['b', 'A', 'c', 'a']",
    "[1, 'a', none]", "[[1, 2], [3]]", "{}", "{'b': 1, 'A': 2, 'a': 3}", "(1, 2)", "()", "range(3)",
    "users", "'a'.upper", "cycler(1)", "namespace(a=1)",
]
# Argument values for parameters.
ARGS = [
    "none", "nope", "0", "1", "-1", "2", "3", "10 ** 20", "1.5", "-0.0", "'inf'|float", "''", "'x'", "'ab'",
    "'<b>'|safe", "true", "false", "[]", "['a', 'b']", "{}",
]

CASES = []
_SEEN = set()


# A non-finite float literal folded into a call argument becomes a bare `inf` / `nan` name in the code Jinja2
# generates (NameError), so non-finite numbers come from context strings instead.
NON_FINITE = {"'inf'|float": ("inf_s", "inf"), "'-inf'|float": ("ninf_s", "-inf"), "'nan'|float": ("nan_s", "nan")}


def case(kind, name, template, context=None):
    context = dict(context or {})
    for literal, (var, text) in NON_FINITE.items():
        if literal in template:
            template = template.replace(literal, var + "|float")
            context[var] = text
    key = (name, template, json.dumps(context or {}, sort_keys=True))
    if key in _SEEN:
        return
    _SEEN.add(key)
    CASES.append({"kind": kind, "name": name, "template": template, "context": context or {}})


def ctx_for(expr):
    return {"users": USERS} if "users" in expr else {}


# ---------------------------------------------------------------------------------------------------------------
# Filters
# ---------------------------------------------------------------------------------------------------------------
# A representative input per filter, used with the argument sweeps.
REP = {
    "abs": "-3", "attr": "'abc'", "batch": "[1, 2, 3, 4, 5]", "center": "'abc'", "count": "[1, 2]",
    "default": "nope", "d": "nope", "dictsort": "{'b': 1, 'A': 2, 'a': 3}", "filesizeformat": "1500000",
    "float": "'x'", "format": "'%s-%s'", "groupby": "users", "indent": "'a\\n\\nb\\nc'", "int": "'0x1A'",
    "join": "[1, 'a', 2]", "map": "users", "max": "['b', 'A', 'c']", "min": "['b', 'A', 'c']",
    "reject": "[0, 1, 2, 3, none]", "rejectattr": "users", "replace": "'aaa'", "round": "2.675",
    "select": "[0, 1, 2, 3, none]", "selectattr": "users", "slice": "[1, 2, 3, 4, 5]",
    "sort": "['b', 'A', 'c', 'a']", "sum": "[1, 2, 3]", "tojson": "{'b': [1, 'é'], 'a': none}",
    "trim": "'xx a xx'", "truncate": "'foo bar baz qux quux'", "unique": "['a', 'A', 'b', 'a']",
    "urlize": "'see http://example.com/x and www.a.org, mail a@b.co'", "wordwrap": "'aaa bbb-ccc ddddddddd e'",
    "xmlattr": "{'a': 1, 'b': none, 'c': 'x\"y'}", "random": "[1, 2, 3]",
}


def filter_params(name):
    f = DEFAULT_FILTERS[name] if name != "tojson" else ENV.filters["tojson"]
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return [], False
    params = [p for p in params if p.name not in ("environment", "env", "context", "eval_ctx")]
    variadic = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)
    positional_only = [p for p in params if p.kind == p.POSITIONAL_ONLY]
    fixed = [p for p in params[1:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY, p.POSITIONAL_ONLY)]
    return fixed, variadic or bool(positional_only)


def pyexpr(default):
    if default is None:
        return "none"
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, str):
        return repr(default)
    return repr(default)


for name in sorted(DEFAULT_FILTERS):
    # Every input, no arguments.
    for x in INPUTS:
        case("filter", name, "{{ " + x + "|" + name + " }}", ctx_for(x))
    # The same through a context variable, and falsy / empty values from JSON.
    for v in [None, "", 0, 0.0, [], {}, "Ab c", 12, -1.5, [2, 1], {"k": "v"}]:
        case("filter", name, "{{ v|" + name + " }}", {"v": v})
    rep = REP.get(name, "'Hello World'")
    params, _ = filter_params(name)
    for i, p in enumerate(params):
        before = []
        for q in params[:i]:
            before.append(pyexpr(q.default) if q.default is not inspect.Parameter.empty else "2")
        for a in ARGS:
            if name == "slice" and a == "10 ** 20":
                continue  # 10**20 empty slices: no memory holds the listed result
            case("filter", name, "{{ " + rep + "|" + name + "(" + ", ".join(before + [a]) + ") }}", ctx_for(rep))
            case("filter", name, "{{ " + rep + "|" + name + "(" + p.name + "=" + a + ") }}", ctx_for(rep))
    # Too many arguments and an unknown keyword.
    case("filter", name, "{{ " + rep + "|" + name + "(1, 2, 3, 4, 5, 6, 7) }}", ctx_for(rep))
    case("filter", name, "{{ " + rep + "|" + name + "(bogus=1) }}", ctx_for(rep))
    # Undefined input to the parameterised form.
    case("filter", name, "{{ nope|" + name + "(" + ", ".join("2" for _ in params[:1]) + ") }}")

# Variadic and attribute-taking filters, by hand.
SPECIAL_FILTERS = {
    "map": ["users|map(attribute='name')", "users|map(attribute='tags.0')", "users|map(attribute='tags.0', default='-')",
            "users|map(attribute='age', default=0)", "['a', 'B']|map('upper')", "['a', 'B']|map('lower')",
            "[1, 2]|map('string')", "['1', 'x']|map('int', 7)", "[[1], []]|map('length')",
            "[1, 2]|map('nonexistent')", "[1, 2]|map()", "none|map('upper')", "''|map('upper')", "nope|map('upper')",
            "[]|map('upper')", "'ab'|map('upper')", "{'a': 1}|map('upper')", "[1, 2]|map(attribute=0)",
            "[[1, 2], [3]]|map(attribute=0)", "[[1, 2], [3]]|map(attribute=1)", "['ab']|map('replace', 'a', 'x')",
            "['ab']|map('replace', old='a', new='x')", "users|map(attribute='name')|map('upper')", "0|map('upper')",
            "false|map('upper')"],
    "select": ["[0, 1, 2, 3, none]|select", "[0, 1, 2, 3]|select('odd')", "[0, 1, 2, 3]|select('even')",
               "[0, 1, 2, 3]|select('divisibleby', 2)", "[0, 1, 2, 3]|select('gt', 1)", "['a', 1]|select('string')",
               "[1, 2]|select('nonexistent')", "none|select", "''|select", "nope|select", "0|select", "false|select",
               "'ab'|select", "{'a': 0, 'b': 1}|select", "[1, 2]|select('in', [2, 3])", "[1, 'x']|select('number')",
               "[1, 2]|select('==', 1)", "[nope, 1]|select('defined')"],
    "reject": ["[0, 1, 2, 3, none]|reject", "[0, 1, 2, 3]|reject('odd')", "[0, 1, 2, 3]|reject('divisibleby', 2)",
               "[1, 2]|reject('nonexistent')", "none|reject", "''|reject", "nope|reject", "0|reject", "false|reject",
               "'ab'|reject", "{'a': 0}|reject", "['a', 1]|reject('string')", "[1, 2]|reject('lt', 2)"],
    "selectattr": ["users|selectattr('tags')", "users|selectattr('age', 'gt', 26)", "users|selectattr('city', '==', 'Oslo')",
                   "users|selectattr('age', 'none')", "users|selectattr('nope')", "users|selectattr('age', 'bogus')",
                   "none|selectattr('a')", "''|selectattr('a')", "nope|selectattr('a')", "0|selectattr('a')",
                   "users|selectattr()", "users|selectattr('tags.0', 'eq', 'a')", "users|selectattr('tags', 'defined')",
                   "[[1], [0]]|selectattr(0)", "users|selectattr('name', 'in', ['Ann', 'dee'])"],
    "rejectattr": ["users|rejectattr('tags')", "users|rejectattr('age', 'gt', 26)", "users|rejectattr('city', '==', 'Oslo')",
                   "users|rejectattr('age', 'none')", "none|rejectattr('a')", "''|rejectattr('a')", "nope|rejectattr('a')",
                   "0|rejectattr('a')", "users|rejectattr()", "users|rejectattr('tags', 'undefined')",
                   "[[1], [0]]|rejectattr(0)"],
    "format": ["'%s-%s'|format(1, 2)", "'%s'|format(1, 2)", "'%s %s'|format(1)", "'%(a)s'|format(a=1)",
               "'%(a)s %s'|format(1, a=2)", "'%d'|format('x')", "'%5.2f|%-4d|%x|%r'|format(3.14159, 7, 255, 'q')",
               "'{}'|format(1)", "'%s'|format(none)", "'%s'|format(nope)", "'%s'|format('<b>'|safe)",
               "('%s'|safe)|format('<b>')", "'%c'|format(65)", "'%e|%g|%G'|format(1e20, 1e-5, 1e20)", "'%%'|format()",
               "'%s'|format([1, 'a'])", "'%.3s'|format('abcdef')", "'%+d % d'|format(5, 5)", "'%i'|format(2.7)",
               "'%s'|format('inf'|float)", "'%d'|format('nan'|float)", "'%o'|format(-8)", "'%#x %#o'|format(255, 8)"],
    "attr": ["'abc'|attr('upper')", "users[0]|attr('name')", "{'a': 1}|attr('a')", "{'a': 1}|attr('items')",
             "'abc'|attr('__class__')", "'abc'|attr('_x')", "none|attr('x')", "nope|attr('x')", "(5)|attr('real')",
             "2.5|attr('imag')", "[1]|attr('count')", "'abc'|attr('nope')", "'abc'|attr(1)", "'abc'|attr('upper')()",
             "'a b'|attr('split')()", "'a-b'|attr('split')('-')", "{'a': 1}|attr('keys')()|list", "[1, 2]|attr('pop')",
             "{'a': 1}|attr('pop')", "users|attr('append')"],
    "xmlattr": ["{'a': 1, 'b': 'x'}|xmlattr", "{'a': 1}|xmlattr(false)", "{'a': 1}|xmlattr(autospace=false)",
                "{'a b': 1}|xmlattr", "{'a=': 1}|xmlattr", "{'a': '<&\">'}|xmlattr", "{'a': none, 'b': nope}|xmlattr",
                "{}|xmlattr", "{'a': '<b>'|safe}|xmlattr", "[]|xmlattr", "{1: 2}|xmlattr", "{'a/': 1}|xmlattr",
                "{'a>': 1}|xmlattr", "{'é': 1}|xmlattr"],
    "groupby": ["users|groupby('city')", "users|groupby('city', case_sensitive=true)", "users|groupby('age')",
                "users|groupby('tags.0')", "users|groupby('tags.0', default='z')", "users|groupby('nope')",
                "[[1, 'a'], [2, 'b'], [1, 'c']]|groupby(0)", "[]|groupby('a')", "none|groupby('a')",
                "nope|groupby('a')", "users|groupby('city')|map(attribute='grouper')|list",
                "users|groupby('city')|map(attribute='list')|map('length')|list"],
}
for name, exprs in SPECIAL_FILTERS.items():
    for e in exprs:
        case("filter", name, "{{ " + e + " }}", ctx_for(e))
        case("filter", name, "{{ " + e + "|list }}", ctx_for(e))

# ---------------------------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------------------------
TEST_ARGS = ["none", "nope", "0", "1", "2", "-2", "2.0", "0.5", "10 ** 20", "'a'", "'abc'", "true", "[1, 'a']", "{'a': 1}",
             "'inf'|float", "'nan'|float", "[]"]
for name in sorted(DEFAULT_TESTS):
    f = DEFAULT_TESTS[name]
    try:
        params = list(inspect.signature(f).parameters.values())[1:]
    except (TypeError, ValueError):
        params = [None]  # operator tests (==, <, ...) take one argument
    for x in INPUTS:
        if params:
            if name.isidentifier():
                case("test", name, "{{ " + x + " is " + name + "(2) }}", ctx_for(x))
            case("test", name, "{{ [" + x + "]|select('" + name + "', 2)|list }}", ctx_for(x))
        else:
            case("test", name, "{{ " + x + " is " + name + " }}", ctx_for(x))
            case("test", name, "{{ " + x + " is not " + name + " }}", ctx_for(x))
    for v in [None, "", 0, 0.0, [], {}, "Ab", 12, -1.5, True]:
        if params:
            case("test", name, "{{ [v]|select('" + name + "', 2)|list }}", {"v": v})
        else:
            case("test", name, "{{ v is " + name + " }}", {"v": v})
    if params:
        rep = "7"
        for a in TEST_ARGS:
            if name.isidentifier():
                case("test", name, "{{ " + rep + " is " + name + "(" + a + ") }}")
                case("test", name, "{{ 'a' is " + name + " " + a + " }}")
            case("test", name, "{{ [" + rep + ", 'a', 2]|select('" + name + "', " + a + ")|list }}")
            p = params[0]
            if p is not None:
                case("test", name, "{{ [" + rep + "]|select('" + name + "', " + p.name + "=" + a + ")|list }}")
        case("test", name, "{{ [1]|select('" + name + "')|list }}")
        case("test", name, "{{ [1]|select('" + name + "', 1, 2)|list }}")
    else:
        case("test", name, "{{ 1 is " + name + "(2) }}")
        case("test", name, "{{ [1]|select('" + name + "', 2)|list }}")
    case("test", name, "{{ nope is " + name + ("(1)" if params else "") + " }}" if name.isidentifier() else
         "{{ [nope]|select('" + name + "', 1)|list }}")

# Generators whose body raises once iterated (lazy in Jinja2) are still iterable and print as generators.
for e in ["(-4)|reject", "5|map('upper')", "5|select", "5|selectattr('a')", "none|map('upper')"]:
    case("test", "iterable", "{{ " + e + " is iterable }}")
    case("test", "iterable", "{{ " + e + " is sequence }}")
    case("test", "callable", "{{ " + e + " is callable }}")
    case("filter", "urlencode", "{{ " + e + "|urlencode }}")
case("filter", "urlencode", "{{ (-3)|items|urlencode }}")
# round's floor and ceil methods compute `value * 10 ** precision` first, as Python does.
for e in ["'abc'|round(2, 'floor')", "[1]|round(1, 'ceil')", "{}|round(2, 'floor')", "none|round(1, 'floor')", "nope|round(2, 'floor')",
          "(1, 2)|round(0, 'ceil')", "'ab'|round('x', 'floor')", "1|round('x', 'floor')", "2.567|round(2.0, 'floor')", "1|round(400, 'floor')",
          "1e300|round(1, 'ceil')", "(10**30)|round(-2, 'floor')", "2.5|round(none, 'floor')", "0.1|round(20, 'ceil')", "1|round(-400, 'ceil')",
          "'abc'|round(-1, 'floor')", "true|round(1, 'floor')"]:
    case("filter", "round", "{{ " + e + " }}")
# The common method on integers with negative precision: ties to even at any size, a bool as its int.
for e in ["true|round(-1)", "false|round(-2)", "true|round(2)", "(2**64)|round(-1)", "(2**64)|round(-30)",
          "(2**63 - 1)|round(-1)", "(-(2**70))|round(-1)", "(15 * 10**39)|round(-40)", "(25 * 10**39)|round(-40)"]:
    case("filter", "round", "{{ " + e + " }}")
# Integer keys past 64 bits are written as their digits.
for e in ["{2**63: 1, 'k': 2}|tojson", "{-(2**70): 'a', 1: 'b'}|tojson", "{2**64: [2**64]}|tojson(indent=1)"]:
    case("filter", "tojson", "{{ " + e + " }}")
for e in ["'12' * 10**20", "10**20 * [1]", "('x'|safe) * 10**20"]:
    case("filter", "safe", "{{ " + e + " }}")
for x in ["'i'", "2.0", "true", "5", "5.0", "none", "false", "1", "-1"]:
    case("method", "range.index", "{{ range(3).index(" + x + ") }}")

# ---------------------------------------------------------------------------------------------------------------
# Globals
# ---------------------------------------------------------------------------------------------------------------
GLOBAL_EXPRS = {
    "range": ["range(3)|list", "range(1, 4)|list", "range(0, 10, 3)|list", "range(5, 0, -2)|list", "range(0)|list",
              "range(-3)|list", "range(3, 1)|list", "range(1, 2, 0)|list", "range('3')|list", "range(2.0)|list",
              "range(none)|list", "range(nope)|list", "range(true)|list", "range()|list", "range(1, 2, 3, 4)|list",
              "range(stop=3)|list", "range(100001)|length", "range(100000)|length", "range(0, 200001, 2)|length",
              "range(10 ** 20, 10 ** 20 + 2)|list", "range(3)", "range(1, 7, 2)", "range(3)[1]", "range(3)[-1]",
              "range(3)[5]", "range(10)[2:5]|list", "range(3)|length", "range(3).count(1)", "range(6).index(4)",
              "range(1, 9, 2).start", "range(1, 9, 2).stop", "range(1, 9, 2).step", "2 in range(3)", "range(3) == range(3)",
              "range(3)|reverse|list", "range(3)|sum", "range(-1, -10, -3)|list", "range(3)|string"],
    "dict": ["dict()", "dict(a=1, b='x')", "dict(a=1)|tojson", "dict({'a': 1})", "dict([['a', 1], ['b', 2]])",
             "dict(none)", "dict(1)", "dict('ab')", "dict(['ab', 'cd'])", "dict(nope)", "dict(a=nope)",
             "dict({'a': 1}, b=2)", "dict.fromkeys(['a', 'b'])", "dict.fromkeys('ab', 0)", "dict.fromkeys(1)",
             "dict(a=1).items()|list", "dict(a=1)|length", "dict(_a=1)", "dict(a=1, a2=none)|dictsort",
             "dict([[1, 2]], x=3)", "dict({}, **{'a': 1})"],
    "namespace": ["namespace()", "namespace(a=1)", "namespace(a=1).a", "namespace(a=1).b", "namespace({'a': 2}).a",
                  "namespace(_a=1)", "namespace([['a', 3]]).a", "namespace(1)", "namespace(none)", "namespace(a=nope).a",
                  "namespace(a=1, b='x').b|upper", "namespace(a=[1]).a|length", "namespace(nope)",
                  "namespace({'a': 1}, b=2).b", "namespace(a=1) is mapping"],
    "cycler": ["cycler(1, 2).next()", "cycler(1, 2).current", "cycler().next()", "cycler().current", "cycler(1, 2).items",
               "cycler(1, 2).reset()", "cycler(none).next()", "cycler('a')", "cycler(nope).next()",
               "cycler(1, 2).nope", "cycler(1, 2).next", "cycler(a=1)", "cycler(1, 2).next()|string",
               "cycler(1, 2).next(5)", "cycler(1, 2).next(x=5)", "cycler(1, 2).reset(1)", "cycler(1, 2).reset(x=1)",
               "cycler(1, 2).next(*[1])", "cycler(1, 2).next(**{'a': 1})"],
    "joiner": ["joiner()()", "joiner('|')()", "joiner(sep='-')()", "joiner(1)()", "joiner(none)()", "joiner('a', 'b')",
               "joiner().sep", "joiner('x').used", "joiner()()|string", "joiner(nope)()", "joiner()(1)", "joiner()"],
    "lipsum": ["lipsum()", "lipsum(1)", "lipsum(2, false)", "lipsum(3, html=false)", "lipsum(1, min=5, max=6)",
               "lipsum(n=2, html=true, min=3, max=4)", "lipsum(0)", "lipsum(-1)", "lipsum('x')", "lipsum(1, min=30, max=10)",
               "lipsum(1, true, 2, 3)", "lipsum(1, false, 10, 10)", "lipsum(bogus=1)", "lipsum(none)", "lipsum(4, false, 1, 2)",
               "lipsum(1, min=0, max=1)", "lipsum(1, min=-1, max=2)", "lipsum(2.5)"],
}
GLOBAL_BLOCKS = {
    "cycler": ["{% set c = cycler('a', 'b', 'c') %}{{ c.next() }}{{ c.next() }}{{ c.current }}{{ c.next() }}{{ c.next() }}",
               "{% set c = cycler(1, 2) %}{{ c.next() }}{% set _ = c.reset() %}{{ c.current }}{{ c.next() }}",
               "{% set c = cycler(1, 2) %}{% for i in range(5) %}{{ c.next() }}{% endfor %}|{{ c.items }}",
               "{% set c = cycler() %}{{ c.items }}",
               "{% for i in [1, 2] %}{{ loop.cycle('a', 'b', x=1) }}{% endfor %}",
               "{% for i in [1, 2] %}{{ loop.cycle(**{'x': 1}) }}{% endfor %}",
               "{% for i in [1, 2] %}{{ loop.cycle(*['a', 'b'], **{}) }}{% endfor %}",
               "{% for i in [1, 2] %}{{ loop.changed(i, x=1) }}{% endfor %}",
               "{% for i in [1, 1, 2] %}{{ loop.changed(i) }}{{ loop.changed() }}{% endfor %}"],
    "joiner": ["{% set j = joiner(', ') %}{% for x in [1, 2, 3] %}{{ j() }}{{ x }}{% endfor %}",
               "{% set j = joiner() %}[{{ j() }}][{{ j() }}][{{ j() }}]",
               "{% set j = joiner(none) %}[{{ j() }}][{{ j() }}]", "{% set j = joiner([1]) %}[{{ j() }}][{{ j() }}]"],
    "namespace": ["{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}",
                  "{% set ns = namespace() %}{% set ns.x = 'y' %}{{ ns.x }}",
                  "{% set ns = namespace() %}{% set ns._x = 'y' %}{{ ns._x }}"],
    "dict": ["{% set d = dict(a=1) %}{{ d.a }}|{{ d['a'] }}|{{ d.get('b', 2) }}"],
}
for name in sorted(DEFAULT_NAMESPACE):
    for e in GLOBAL_EXPRS[name]:
        case("global", name, "{{ " + e + " }}")
    for b in GLOBAL_BLOCKS.get(name, []):
        case("global", name, b)
    case("global", name, "{{ " + name + " is callable }}|{{ " + name + " is defined }}")
    case("global", name, "{{ " + name + "|string|length > 0 }}")

# ---------------------------------------------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------------------------------------------
RECEIVERS = {
    "str": ["''", "'abc'", "'Hello wORLD  x y'", "'  a b\\tc\\n'", "'ünïcødé ß ǅ ﬁ İ'", "'日本語🙂'", "'12345'", "'½²③'",
            "'a-b_c d'", "'<b>x</b>'|safe", "'a{0}b{x}'", "'x\\ny\\r\\nz'"],
    "list": ["[]", "[1, 2, 1]", "['a', 'b']", "[none, 1.0, 1]", "[[1], [1]]"],
    "dict": ["{}", "{'a': 1, 'b': none}", "{'b': [1], 'a': 'x'}", "{1: 'one'}"],
    "int": ["0", "1", "7", "-3", "255", "10 ** 20", "-(2 ** 63)", "true", "false"],
    "float": ["0.0", "-0.0", "2.5", "-1.75", "1e300", "0.1", "3.0", "'inf'|float", "'-inf'|float", "'nan'|float", "1e-320"],
}
# Parameter names of methods whose signature CPython does not expose.
METHOD_PARAMS = {
    "str.startswith": ["prefix", "start", "end"], "str.endswith": ["suffix", "start", "end"],
    "str.find": ["sub", "start", "end"], "str.rfind": ["sub", "start", "end"], "str.index": ["sub", "start", "end"],
    "str.rindex": ["sub", "start", "end"], "str.count": ["sub", "start", "end"], "str.format": ["args"],
    "str.format_map": ["mapping"], "list.index": ["value", "start", "stop"], "int.to_bytes": ["length", "byteorder"],
    "int.from_bytes": ["bytes", "byteorder"],
}
METHOD_ARGS = ["none", "nope", "''", "'a'", "'b'", "'l'", "' '", "'-'", "0", "1", "-1", "2", "5", "10 ** 20", "1.5",
               "true", "[]", "['a', 'b']", "('a', 'b')", "{'a': 'z'}", "'inf'|float", "'<b>'|safe", "'ab'"]
for tname in ["str", "list", "dict", "int", "float"]:
    typ = {"str": str, "list": list, "dict": dict, "int": int, "float": float}[tname]
    sample = typ()
    names = [a for a in sorted(dir(typ)) if ENV.is_safe_attribute(sample, a, getattr(sample, a))]
    for m in names:
        full = tname + "." + m
        attr = getattr(typ, m)
        is_callable = callable(getattr(sample, m))
        try:
            sig = inspect.signature(getattr(sample, m))
            params = [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            pnames = [p.name for p in params]
            defaults = [None if p.default is inspect.Parameter.empty else p.default for p in params]
        except (TypeError, ValueError):
            pnames = METHOD_PARAMS.get(full, [])
            defaults = [None] * len(pnames)
        for r in RECEIVERS[tname]:
            if is_callable:
                case("method", full, "{{ (" + r + ")." + m + "() }}")
            else:
                case("method", full, "{{ (" + r + ")." + m + " }}")
                case("method", full, "{{ (" + r + ")." + m + "() }}")
        recv_ctx = {"str": "Hello wORLD abc", "list": [1, "a", 1], "dict": {"a": 1, "b": [2]}, "int": 42,
                    "float": -2.5}[tname]
        case("method", full, "{{ v." + m + ("()" if is_callable else "") + " }}", {"v": recv_ctx})
        case("method", full, "{{ v." + m + " is callable }}", {"v": recv_ctx})
        if not is_callable:
            continue
        rep = RECEIVERS[tname][2] if tname != "dict" else RECEIVERS[tname][1]
        for i, pn in enumerate(pnames):
            before = [pyexpr(d) if d is not None else "'a'" if tname == "str" else "1" for d in defaults[:i]]
            for a in METHOD_ARGS:
                case("method", full, "{{ (" + rep + ")." + m + "(" + ", ".join(before + [a]) + ") }}")
                case("method", full, "{{ (" + rep + ")." + m + "(" + pn + "=" + a + ") }}")
        case("method", full, "{{ (" + rep + ")." + m + "(1, 2, 3, 4, 5) }}")
        case("method", full, "{{ (" + rep + ")." + m + "(bogus=1) }}")
        case("method", full, "{{ (" + rep + ")." + m + "(nope) }}")
        # Called through the attr filter and through a variable.
        case("method", full, "{{ (" + rep + ")|attr('" + m + "') is callable }}")


# ---------------------------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------------------------
def run(template, context):
    ctx = json.loads(json.dumps(context))
    try:
        tmpl = ctu._compile_jinja_template(template)
        return "ok", tmpl.render(**ctx)
    except Exception as exc:  # noqa: BLE001 - every error is part of the reference
        if isinstance(exc, jinja2.TemplateSyntaxError):
            message = exc.message or ""
        else:
            message = str(exc)
        return "raised", {"name": type(exc).__name__, "message": message}


LIPSUM_CALL = re.compile(r"^\{\{ lipsum\((.*)\) \}\}$")


def lipsum_property(template):
    m = LIPSUM_CALL.match(template)
    if not m:
        return None
    args = eval("(lambda n=5, html=True, min=20, max=100: (n, html, min, max))(" +  # noqa: S307 - own literal text
                m.group(1).replace("true", "True").replace("false", "False") + ")")
    n, html, lo, hi = args
    return {"paragraphs": n, "html": html, "min_words": lo, "max_words": hi}


def random_property(template, context):
    inner = template[len("{{ "):-len(" }}")]
    seq_expr = inner.rsplit("|random", 1)[0]
    status, out = run("{% for x in " + seq_expr + " %}{{ x }}\x1f{% endfor %}", context)
    if status != "ok":
        return None
    options = out.split("\x1f")[:-1]
    return {"one_of": sorted(set(options)) if options else [""]}


def has_address(result):
    text = result if isinstance(result, str) else result["message"]
    return bool(ADDRESS.search(text) or ADDRESS.search(text.replace("', '", "")))


# Loops over `items` pairs and chains of generator filters over the context's lists and objects, which the
# engine reads in place: the pairs, the `loop` object over them, generators consumed once, equality of the
# same context object, and JSON string escapes.
MSGS = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
PAIRS = {"d": {"b": 1, "a": [1, 2], "c": {"x": None, "y": "z"}}, "msgs": MSGS}
for t in [
    "{% for k, v in d|items %}{{ loop.index }}{{ k }}={{ v }}{{ loop.last }}|{% endfor %}",
    "{% for k, v in d|items if k != 'a' %}{{ loop.index }}/{{ loop.length }}:{{ k }}{{ loop.previtem }}"
    "{{ loop.nextitem }}{% else %}none{% endfor %}",
    "{% for k, v in d|items if k == 'zz' %}{{ k }}{% else %}none{% endfor %}",
    "{% for k, v in d|items %}{{ loop.previtem is sameas loop.previtem }}{{ loop.cycle('x', 'y') }}"
    "{{ loop.revindex }}{{ loop.changed(v) }}{% endfor %}",
    "{% for k, v in nope|items %}{{ k }}{% else %}empty{% endfor %}",
    "{% for k, v in [1, 2]|items %}{{ k }}{% endfor %}",
    "{% for k, v in none|items %}{{ k }}{% endfor %}",
    "{% for k, v in {'a': 1, 'b': 2}|items %}{{ k }}{{ v }}{% endfor %}",
    "{% for k, v in d|items %}{% set k = 'z' %}{{ k }}{% endfor %}{{ k }}",
    "{% for k, v in d.c|items %}{{ k }}={{ v }};{% endfor %}",
    "{% for k, v in d|items %}{% if loop.first %}{% continue %}{% endif %}{{ k }}{% if k == 'a' %}{% break %}"
    "{% endif %}{% endfor %}",
    "{% for k, v in d|items %}{% for k2, v2 in d|items if k2 != k %}{{ k }}{{ k2 }} {% endfor %}{% endfor %}",
    "{% for k, v in d|items if v.y is defined %}{{ v.y }}{% endfor %}",
    "{% for k, v in d|items if nope.x %}{{ k }}{% endfor %}",
    "{% for k, v in d|items %}{{ v|items|list if v is mapping else v }}{% endfor %}",
    "{% for k, v in msgs[0]|items %}{{ k }}:{{ v }} {% endfor %}",
]:
    case("filter", "items", t, PAIRS)
for t in [
    "{% set g = msgs|selectattr('role', 'equalto', 'user') %}{{ g|list|length }}{{ g|list|length }}",
    "{{ msgs|selectattr('role', 'equalto', 'user')|list }}",
    "{{ msgs|selectattr('role', '==', 'user', 'x')|list }}",
    "{{ msgs|selectattr('role', 'eq', other='user')|list }}",
    "{{ msgs|selectattr('role', 'equalto')|list }}",
    "{{ msgs|rejectattr('role', 'equalto', 'user')|map(attribute='content')|list }}",
    "{{ msgs|selectattr('role', 'equalto', 'user')|list|length }}{{ msgs|selectattr('nope', 'equalto', none)|list }}",
    "{% set u = msgs|selectattr('role', 'equalto', 'user')|list %}{% for m in msgs %}{{ m == u[-1] }}{{ m != u[0] }}"
    "{% endfor %}{{ u == msgs }}",
    "{{ msgs[0] == msgs[0] }}{{ msgs == msgs }}{{ msgs[0] == {'role': 'user', 'content': 'a'} }}{{ d.a == d.a }}",
]:
    case("filter", "selectattr", t, PAIRS)
for t in [
    "{% set g = msgs|map(attribute='role') %}{{ g|first }}|{{ g|list }}|{{ g|first }}",
    "{% set g = msgs|map(attribute='role') %}{% for x in g %}{{ x }}{% endfor %}{% for x in g %}{{ x }}{% else %}empty"
    "{% endfor %}",
    "{% set g = msgs|map(attribute='role') %}{{ g|join(',') }}{{ g|join(',') }}",
    "{% set g = msgs|map(attribute='role') %}{{ 'user' in g }}{{ 'user' in g }}{{ g|list }}",
    "{% set g = msgs|map(attribute='role') %}{% for x in g %}{{ x }}{% break %}{% endfor %}{{ g|list }}",
    "{% set g = msgs|map(attribute='role') %}{% for x in g %}{{ x }}{{ g|list }}{% endfor %}",
    "{% set g = msgs|map(attribute='role') %}{% for x in g %}{% for y in g %}{{ x }}{{ y }}{% endfor %}{% endfor %}",
    "{% set g = msgs|map(attribute='role') %}{% set a, b = g %}{{ a }}{{ b }}{{ g|list }}",
    "{% set g = msgs|map(attribute='role') %}{{ g|reverse|list }}{{ g|list }}",
    "{% set g = d|items %}{{ g|list }}{{ g|list }}{{ g is sameas g }}",
]:
    case("filter", "map", t, PAIRS)
for t in [
    "{% for k, v in d.items() %}{{ k }}{{ v }}{{ loop.previtem }}{{ loop.last }}{% endfor %}",
    "{% for k, v in d.items() if k != 'a' %}{{ k }}{{ v }}{{ loop.length }}{% endfor %}",
    "{% for k, v in msgs.items() %}{{ k }}{% endfor %}",
    "{% for k, v in nope.items() %}{{ k }}{% endfor %}",
    "{% for k, v in {'x': 1}.items() %}{{ k }}{{ v }}{% endfor %}",
]:
    case("method", "dict.items", t, PAIRS)
# `reverse` gives `reversed()` of its input, whose type depends on the input's (a generator becomes a list);
# an undefined value has Python attributes (refused as unsafe) and raises for any other name; a dict's item
# is found by a dunder name that is not one of the dict's attributes.
for t in [
    "{{ (msgs|reverse) is even }}", "{{ ((1, 2)|reverse) is even }}", "{{ (d|reverse) is even }}",
    "{{ (d.items()|reverse) is even }}", "{{ (d.values()|reverse) is even }}", "{{ (d.keys()|reverse) is even }}",
    "{{ (range(3)|reverse) is even }}", "{{ (msgs|map(attribute='role')|reverse) is even }}",
    "{{ (msgs|reverse)|length }}", "{{ ((1, 2)|reverse).x }}", "{{ (d|groupby('x')|first|reverse) is even }}",
]:
    case("filter", "reverse", t, PAIRS)
for t in [
    "{{ nope.__class__ }}", "{{ nope._undefined_hint }}", "{{ nope.__str__ }}", "{{ nope.__foo__ }}",
    "{{ nope._foo }}", "{{ nope['__class__'] }}", "{{ nope.__class__.x }}", "{{ d.nope.__class__ }}",
    "{% set e = {'__x__': 1, '_y': 2, '__len__': 3} %}{{ e.__x__ }}|{{ e._y }}|{{ e.__len__ }}|{{ e['__len__'] }}",
    "{{ nope|attr('__class__') }}", "{{ nope|attr('x') }}", "{{ nope.foo(1 / 0) }}", "{{ nope.__class__(1 / 0) }}",
    "{{ d.zz.__len__() }}", "{{ nope.__class__() }}", "{{ d.zz.upper() }}",
]:
    case("filter", "attr", t, PAIRS)
# `Markup % args` (and the `format` filter on Markup) wraps each argument in markupsafe's escape helper:
# `str()` and `repr()` escaped, `int()` and `float()` the argument's own.
for t in [
    "{{ '%s'|e % '<b>' }}", "{% set m = '%s|%s'|safe %}{{ m % ('<a>', 1) }}",
    "{{ ('%(x)s|%(y)r'|safe) % {'x': '<', 'y': '>'} }}", "{{ ('%s'|safe) % ('<'|safe) }}", "{{ ('%r'|safe) % '<' }}",
    "{{ ('%d|%f|%d|%i'|safe) % ('3', '2.5', 2.7, true) }}", "{{ ('%d'|safe) % 'a' }}", "{{ ('%x'|safe) % 255 }}",
    "{{ ('%c'|safe) % 65 }}", "{{ ('%s'|safe) % ['<a>'] }}", "{{ ('%.1s|%5s'|safe) % ('<b', '<') }}",
    "{{ ('%s'|safe) % none }}", "{{ ('%d'|safe) % none }}", "{{ ('%f'|safe) % none }}", "{{ ('%f'|safe) % 'x' }}",
    "{{ ('%e'|safe) % (10 ** 400) }}", "{{ ('%d'|safe) % ('inf'|float) }}", "{{ ('%s'|safe) % {'a': '<'} }}",
    "{{ ('%(a)s'|safe) % [1] }}", "{{ ('%*d'|safe) % (3, 1) }}", "{{ (('%s'|safe) % '<') is string }}",
    "{{ ('%s'|safe) % msgs[0] }}", "{{ ('%(role)s'|safe) % msgs[0] }}",
]:
    case("filter", "format", t, PAIRS)
# Ints beyond 64 bits through `%` and `str.format`.
for t in [
    "{{ '%d|%i|%x|%X|%o|%f|%e|%5d|%.3d|%+d' % (2 ** 70, -(2 ** 70), 2 ** 70, 2 ** 70, 2 ** 70, 2 ** 70, 2 ** 70, 2 ** 70,"
    " 2 ** 70, 2 ** 70) }}",
    "{{ '%f' % 10 ** 400 }}", "{{ '%c' % 2 ** 70 }}", "{{ '%*d' % (2 ** 70, 1) }}", "{{ '%#x|%#o' % (2 ** 70, -(2 ** 70)) }}",
    "{{ '%d items'|format(2 ** 70) }}",
]:
    case("filter", "format", t, PAIRS)
for t in [
    "{{ '{:d}|{:,}|{:_x}|{:#b}|{:>30d}|{:e}|{:%}|{:n}|{}'.format(2 ** 70, 2 ** 70, 2 ** 70, -(2 ** 65), 2 ** 70, 2 ** 70,"
    " 2 ** 70, 2 ** 70, 2 ** 70) }}",
    "{{ '{:c}'.format(2 ** 70) }}", "{{ '{:f}'.format(10 ** 400) }}", "{{ '{:.2}'.format(2 ** 70) }}",
    "{{ '{:s}'.format(2 ** 70) }}", "{{ '{:+08,d}'.format(-(2 ** 70)) }}", "{{ '{:=^40}'.format(2 ** 70) }}",
    "{{ ('{:d}'|safe).format(2 ** 70) }}", "{{ '{:z}'.format(2 ** 70) }}",
]:
    case("method", "str.format", t, PAIRS)
# transformers' own globals are nested functions: Python names them by their qualified name.
for name in ["raise_exception", "strftime_now"]:
    for args in ["", "1, 2", "x=1", "1, message=2", "1, format=2", "none", "nope", "'a', x=1"]:
        case("global", name, "{{ " + name + "(" + args + ") }}", PAIRS)
for s in ["a\u0001\"\\\n<é\t\u001f", "0123456\"89abcdef\\", "01234567", "0123456789abcdef\n", "\u007f\u0080"]:
    case("filter", "tojson", "{{ s|tojson }}", {"s": s})


# `length` and `count` read a container's length in place; namespace attributes are read and set by their name;
# `startswith` / `endswith` without bounds look at the ends only.
for t in [
    "{{ msgs|length }}{{ d|length }}{{ d.a|count }}{{ d.c|length }}{{ (1, 2)|length }}{{ [1, [2, 3]]|count }}",
    "{{ dict(a=1, b=2)|length }}{{ {}|length }}{{ []|count }}{{ 'héllo'|length }}{{ range(5)|length }}",
    "{{ msgs|selectattr('role', 'equalto', 'user')|length }}",
    "{{ none|length }}", "{{ nope|length }}", "{{ 3|count }}", "{{ namespace(a=1)|length }}",
    "{{ msgs|length(1) }}", "{{ msgs|length(x=1) }}", "{{ msgs|length - 1 }}{{ (msgs|length) * 2 }}",
    "{% for m in msgs %}{{ loop.index0 }}/{{ msgs|length }}{% endfor %}",
    # Integer arithmetic on lengths, loop indices and numbers held by names (computed on the integers).
    "{% set n = msgs|length - 1 %}{{ n }}{% set m = (msgs|length - 1) - 2 %}{{ m }}{% set k = d|length * 3 // 2 %}"
    "{{ k }}{% set j = -7 % (d|count) %}{{ j }}{% set h = msgs|length - 1 - 1 - 1 - 1 %}{{ h }}",
    "{% for m in msgs %}{% set i = (msgs|length - 1) - loop.index0 %}{{ i }}{% set j = loop.index0 // 2 + loop.length %}"
    "{{ j }}{% endfor %}",
    "{% set big = 9223372036854775807 %}{% set x = big + msgs|length %}{{ x }}{% set y = big * (d|length) %}{{ y }}"
    "{% set z = -big - 2 * (d|length) %}{{ z }}",
    "{% set x = msgs|length // 0 %}{{ x }}", "{% set x = msgs|length % 0 %}{{ x }}",
    "{% set x = msgs|length / 2 %}{{ x }}{% set y = (d|length) ** 2 %}{{ y }}",
    "{% set s = 'héllo' %}{% set x = s|length - 1 %}{{ x }}",
    "{% set x = true + (msgs|length) %}{{ x }}{% set y = 1.5 + (msgs|length) %}{{ y }}",
    "{% set x = nope|length - 1 %}{{ x }}",
    "{% set g = msgs|selectattr('role', 'equalto', 'user') %}{% set x = g|length - 1 %}{{ x }}",
    "{% set x = 'a' + msgs|length %}{{ x }}", "{% set x = msgs|length + 'a' %}{{ x }}",
    "{% set ns = namespace(i=2) %}{% set x = ns.i * (msgs|length) - d.b %}{{ x }}{% set ns.i = 'x' %}"
    "{% set y = ns.i * (d|length) %}{{ y }}",
    "{{ msgs|length - 1 }}{{ (d|count) * (msgs|length) }}",
]:
    case("filter", "length", t, PAIRS)
for t in [
    "{% set ns = namespace(a=1, b='x') %}{% set ns.a = ns.a + 1 %}{% set ns.c = [ns.b] %}{{ ns.a }}{{ ns.b }}{{ ns.c }}",
    "{% set ns = namespace({'a': 1, 'b': 2}, a=3) %}{{ ns.a }}{{ ns.b }}{{ ns.z is defined }}{{ ns.z }}",
    "{% set ns = namespace(items=1, get=2, keys=3) %}{{ ns.items }}{{ ns.get }}{{ ns.keys }}",
    "{% set ns = namespace(a=1) %}{{ ns._a is defined }}{{ ns['a'] }}{{ ns.__class__ is defined }}",
    "{% set ns = namespace() %}{% for i in range(12) %}{% set ns.x = ns.x|default(0) + i %}"
    "{% endfor %}{{ ns.x }}",
    "{% set ns = namespace(a0=0, a1=1, a2=2, a3=3, a4=4, a5=5, a6=6, a7=7, a8=8, a9=9) %}{% set ns.a3 = 'x' %}"
    "{% set ns.a10 = 10 %}{{ ns.a3 }}{{ ns.a9 }}{{ ns.a10 }}{{ ns.a11 is defined }}",
    "{% set ns = namespace(a=1) %}{% set ns.a = none %}{{ ns.a is none }}{% set ns._b = 2 %}{{ ns._b }}",
    "{% set ns = namespace({1: 'one'}) %}{{ ns[1] }}",
    "{% set ns = namespace(a=1) %}{{ ns.get('a') }}",
]:
    case("global", "namespace", t, PAIRS)
for t in [
    "{{ s.startswith('ab') }}{{ s.startswith('') }}{{ s.startswith('abcdefg') }}{{ s.startswith('é', 2) }}"
    "{{ s.startswith('c', 2, 3) }}{{ s.startswith('c', -3) }}{{ s.startswith(('x', 'ab')) }}",
    "{{ s.endswith('éf') }}{{ s.endswith('') }}{{ s.endswith('zabcdéf') }}{{ s.endswith('d', 0, 4) }}"
    "{{ s.endswith('d', none, -2) }}{{ s.endswith(('x', 'f')) }}{{ ''.endswith('') }}{{ ''.startswith('a') }}",
    "{{ s.startswith(1) }}", "{{ s.endswith(('a', 1)) }}", "{{ s.startswith() }}",
    "{{ s.startswith('a', 'b') }}",
]:
    case("method", "str.startswith", t, {"s": "abcdéf"})


# Orderings with NaN on either side are false, as operators and as tests.
for t in [
    "{% set n = nan_s|float %}{{ 1.5 >= n }}{{ 1.5 <= n }}{{ n >= 1.5 }}{{ n <= n }}{{ 1 < n }}{{ n > 1 }}"
    "{{ n == n }}{{ n != n }}{{ 2 >= n >= 1 }}",
    "{% set n = nan_s|float %}{{ 1.5 is ge(n) }}{{ 1.5 is le(n) }}{{ n is ge(n) }}{{ n is le 1 }}",
]:
    case("test", "ge", t, {"nan_s": "nan"})


# A loop object has a length (`LoopContext.__len__`).
for t in [
    "{% for x in [1, 2, 3] %}{{ loop|length }}{{ loop|count }}{% endfor %}",
    "{% for x in [1, 2, 3] if x > 1 %}{{ loop|length }}{% endfor %}{% for k, v in d|items %}{{ loop|length }}{% endfor %}",
]:
    case("filter", "length", t, {"d": {"a": 1, "b": 2}})


# A loop filter over names to unpack into yields the unpacked target: the loop's items are tuples.
for t in [
    "{% for a, b in [[1, 2], [3, 4], [5, 6]] if a > 1 %}{{ loop.previtem }}{{ loop.nextitem }}{{ a }}{% endfor %}",
    "{% for a, (b, c) in [[1, 'xy'], [2, 'zw']] if a %}{{ loop.nextitem }}{{ loop.previtem }}{% endfor %}",
    "{% for k, v in d.items() if v %}{{ loop.nextitem }}{% endfor %}{% for k, v in d|items if v %}{{ loop.previtem }}{% endfor %}",
]:
    case("filter", "items", t, {"d": {"a": 1, "b": 2}})


# Macro calls as Jinja2's Macro.__call__ binds them: parameters named varargs, kwargs or caller, a keyword
# naming a parameter a positional argument already filled, defaults that read other parameters.
for t in [
    "{% macro m(varargs) %}[{{ varargs }}]{% endmacro %}{{ m(1) }}{{ m() }}{{ m(varargs=3) }}",
    "{% macro m(varargs) %}{{ varargs }}{% endmacro %}{{ m(1, 2) }}",
    "{% macro m(kwargs) %}[{{ kwargs }}]{% endmacro %}{{ m(1) }}{{ m() }}",
    "{% macro m(kwargs) %}{{ kwargs }}{% endmacro %}{{ m(1, b=2) }}",
    "{% macro m(a, caller=none) %}{{ a }}{{ caller }}{% endmacro %}{{ m(1) }}",
    "{% macro m(a, caller=none) %}{{ a }}{{ caller() if caller else 'no' }}{% endmacro %}{{ m(1) }}"
    "{% call m(2) %}body{% endcall %}",
    "{% macro m(caller) %}{{ caller() }}{% endmacro %}x",
    "{% macro m(caller) %}{{ caller }}{% endmacro %}{{ m(5) }}",
    "{% macro m(a) %}{{ kwargs }}{% endmacro %}{{ m(1, a=2) }}",
    "{% macro m(a, b='x') %}{{ a }}{{ b }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, b=3) }}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, a=2) }}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2, b=3) }}",
    "{% macro m() %}{{ 1 }}{% endmacro %}{% call m() %}{% endcall %}",
    "{% macro m() %}{{ caller() }}{% endmacro %}{{ m(caller=none) }}",
    "{% macro m() %}{{ varargs }}{% endmacro %}{% call m(1) %}{% endcall %}",
    "{% macro m(a, b=a ~ c, c='z') %}{{ b }}{% endmacro %}{{ m(1, c='y') }}{{ m(2) }}",
    # A call block's caller has no name.
    "{% macro m(a, caller=none) %}{{ caller }}|{{ caller.name }}{% endmacro %}{% call(x) m() %}{{ x }}{% endcall %}",
    "{% macro m(a=1) %}{{ caller(a, 2) }}{% endmacro %}{% call(x) m() %}{{ x }}{% endcall %}",
    "{% macro m() %}{{ caller(y=1) }}{% endmacro %}{% call(x) m() %}{{ x }}{% endcall %}",
    "{% macro m() %}{{ kwargs|dictsort }}{% endmacro %}{% call(x) m() %}{{ x }}{% endcall %}",
]:
    case("global", "macro", t)


# `float` parses as Python's float(): Unicode digits and spaces, underscores between digits only.
for t in [
    "{% for s in xs %}{{ s|float }},{% endfor %}",
]:
    case("filter", "float", t, {"xs": ["\u0661\u0662", "\u0661\u0662.5", " \u2003\u0661\u0662\u00a0", "1_0.5", "1__0",
                                    "_1", "1e_5", "\u0663e\u0662", "1.5\x1c", "\x1c1.5", "\u0661_\u0662", "1.5e", "+.5",
                                    "5.", "0x10", "-Infinity", "\u00bd"]})


# The globals that are classes in transformers' environment print as their classes.
for t in ["{{ cycler }}|{{ joiner }}|{{ namespace }}|{{ [cycler, joiner] }}"]:
    case("global", "cycler", t)


# The `loop` object: calling it without `recursive`, its attributes and recursion.
for t in [
    "{% for x in [1, 2] %}{{ loop(x) }}{% endfor %}",
    "{% for x in [1, 2] recursive %}{{ loop(x, 1) }}{% endfor %}",
    "{% for x in 'abc' %}{{ loop.index }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{% endfor %}",
    "{% for x in [1, 1, 2] %}{{ loop.changed(x) }}{{ loop.cycle('a', 'b') }}{% endfor %}",
    "{% for x in [[1, [2, [3]]]] recursive %}{% for y in x %}{% if y is iterable %}{{ loop(y) }}{% else %}"
    "{{ y }}@{{ loop.depth }}{% endif %}{% endfor %}{% endfor %}",
    "{% for x in [{'c': [{'c': []}]}] recursive %}<{{ loop.depth0 }}{{ loop(x.c) }}>{% endfor %}",
    "{% for x in [1, 2] %}{{ loop.cycle() }}{% endfor %}",
    "{% for x in [1] %}{{ loop.nope }}|{{ loop.index0 + 1 }}|{{ loop }}{% endfor %}",
    "{% for x in [[1]] recursive %}{{ loop(iterable=[]) }}{% endfor %}",
    "{% for x in [1] recursive %}{{ loop() }}{% endfor %}",
    "{% for x in [1] recursive %}{{ loop([], iterable=[]) }}{% endfor %}",
    "{% for x in [1] recursive %}{{ loop([], [], y=1) }}{% endfor %}",
    "{% for x in [1] %}{{ loop(1, 2, 3) }}{% endfor %}",
]:
    case("global", "loop", t)


# Integer literals beyond 64 bits are Python ints.
for t in [
    "{{ 12345678901234567890 }}|{{ -9223372036854775808 }}|{{ 18446744073709551615 + 1 }}|{{ 0x1_0000_0000_0000_0000 }}",
    "{% if false %}{{ 99999999999999999999 }}{% endif %}ok|{{ 99999999999999999999 // 7 }}|{{ 2 ** 64 == 18446744073709551616 }}",
    "{{ x is divisibleby 36893488147419103232 }}|{{ [1, 2][99999999999999999999:] }}|{{ 0b1" + "0" * 70 + " }}",
    "{{ 9223372036854775808|string|length }}{{ (9223372036854775808, 1)|max }}{{ 9223372036854775807 + 1 }}",
]:
    case("filter", "int", t, {"x": 0})


# MarkupSafe's striptags and unescape, Python's html.unescape.
for e in ["'a<br>b'|striptags", "'a<!--x'|striptags", "'a<!-- <b> -->c <i>d</i>\\t\\n e'|striptags",
          "'x <b unclosed'|striptags", "'&nbsp;x &copy &hellip; &amp &ampx &notit; &notin;'|striptags",
          "'&#0;|&#x80;|&#xD800;|&#1;|&#65|&#x41;|&#X41|&#99999999999999999999;|&#x;|&#;|&;|&'|striptags",
          "'&unknown; &Aacute &#0x41'|striptags", "('<b>a</b> &amp;'|safe).striptags()",
          "('&lt;x &notit; &#128;'|safe).unescape()", "('x'|safe).striptags(1)", "('x'|safe).unescape(a=1)",
          "('<i>x</i>'|safe).striptags() is string", "('&lt;'|safe).unescape()|e", "5|striptags",
          "('<i>x</i>'|safe).striptags()|e"]:
    case("filter", "striptags", "{{ " + e + " }}")

# textwrap with a float width: compared as a float, refused only where a long word is sliced.
for e in ["'ab cd'|wordwrap(3.5)", "'abcdef'|wordwrap(0.5)", "'abcdef'|wordwrap(3.5, false)", "'abcdef'|wordwrap(3.5)",
          "'ab cd ef gh'|wordwrap(5.0)", "'ab-cdefgh'|wordwrap(2.5)", "'a b'|wordwrap(-1.5)", "'ab cd'|wordwrap(1e300)",
          "('ab'.encode())|wordwrap(1)", "(''.encode())|wordwrap(1)", "('\\n'.encode())|wordwrap(1)",
          "('ab'.encode())|wordwrap(1, wrapstring=1)", "('ab'.encode())|wordwrap(-1)", "''|wordwrap(-1)"]:
    case("filter", "wordwrap", "{{ " + e + " }}")

# json.dumps returns a string's JSON before it reads the indent.
for e in ["'a'|tojson(indent=1.5)", "('a'|safe)|tojson(indent=[1])", "1|tojson(indent=1.5)", "none|tojson(indent=1.5)"]:
    case("filter", "tojson", "{{ " + e + " }}")

# reversed() takes Undefined as an empty sequence.
for e in ["(nope|reverse)|length", "nope|reverse is sequence", "nope|reverse|list", "(nope|reverse) == []",
          "nope|reverse|tojson"]:
    case("filter", "reverse", "{{ " + e + " }}")

# dict_keys and dict_items compare as sets.
for e in ["d.keys() == d.keys()", "d.keys() in [d.keys()]", "d.keys() != d.keys()",
          "{'a': 1}.keys() <= {'a': 1, 'b': 2}.keys()", "{'a': 1}.items() < {'a': 1, 'b': 2}.items()",
          "{'a': 2}.items() <= {'a': 1, 'b': 2}.items()", "{'a': 1}.keys() == {'a': 1}.items()",
          "{'a': 1}.values() == {'a': 1}.values()", "{'b': 1, 'a': 2}.keys() == {'a': 3, 'b': 4}.keys()",
          "{'a': [1]}.items() == {'a': [1]}.items()", "{'a': 1}.keys() > {}.keys()", "{}.keys() >= {}.keys()",
          "{'a': 1}.keys() < [1]"]:
    case("method", "keys", "{{ " + e + " }}", {"d": {"b": 1, "a": 2}})


# Markup keeps its type through truncate and stepped slices (and escapes what it is joined with).
for e in ["('abc def ghi jkl'|e|truncate(9)) + '<'", "('abc def ghi'|e|truncate(5)) + '<'",
          "'a<c def ghi'|truncate(5, end='<'|safe)", "'a<c def ghi'|e|truncate(5, end='<')",
          "'a<c def ghi'|e|truncate(5, end='<'|safe)", "'a<c def ghi'|truncate(5, true, end='<'|safe)",
          "(([[1, 2], [3, 4]]|e)|truncate(10)).pop()", "('<a>'|e)[::2] + '<'", "'x' // ('<a>'|e)[::2]",
          "('<a>'|e)[::-1] ~ '<'"]:
    case("filter", "truncate", "{{ " + e + " }}")

# bytes compare, concatenate, repeat and hold items as Python's do.
for e in ["'a'.encode() == 'a'.encode()", "'a'.encode() != 'b'.encode()", "'a'.encode() < 'b'.encode()",
          "'ab'.encode() >= 'a'.encode()", "'a'.encode() == 'a'", "'a'.encode() in ['a'.encode()]",
          "['b'.encode(), 'a'.encode(), 'ab'.encode()]|sort", "'a'.encode() < 'a'", "'\xe9'.encode() > 'z'.encode()",
          "['b'.encode(), 'a'.encode()]|max", "'a'.encode() * 2", "2 * 'a'.encode()", "'a'.encode() * -1",
          "'a'.encode() + 'b'.encode()", "'a'.encode() * 'x'", "'a'.encode() + 'b'", "'a'.encode() + 1",
          "'b' + 'a'.encode()", "1 + 'a'.encode()", "[1] + 'a'.encode()", "'ab'.encode() in 'abc'.encode()",
          "''.encode() in 'a'.encode()", "97 in 'abc'.encode()", "true in 'a'.encode()", "300 in 'a'.encode()",
          "'a' in 'abc'.encode()", "none in 'a'.encode()", "'a'.encode() * true", "('a'|safe) * 'b'.encode()",
          "'ab'.encode() not in 'b'.encode()"]:
    case("method", "str.encode", "{{ " + e + " }}")

# Attribute paths: a part that `str.isdigit()` accepts is `int(part)`, whatever its digits.
for t in ["{{ ('  ')|min(1.25, '١٢') }}", "{{ [[1, 2, 3]]|map(attribute='١')|list }}",
          "{{ [[1, 2]]|map(attribute='²')|list }}", "{{ []|map(attribute='²')|list }}",
          "{{ [{'a': [5, 6]}]|map(attribute='a.١')|list }}", "{{ [[1], [0]]|sort(attribute='٠') }}",
          "{{ []|sort(attribute='x,²') }}", "{{ [[1]]|map(attribute='99999999999999999999', default='d')|list }}",
          "{{ [{'١': 1}]|map(attribute='١', default='d')|list }}", "{{ [[1, 2]]|sum(attribute='١') }}",
          "{{ []|unique(attribute='²')|list }}", "{{ none|sum(attribute='²') }}", "{{ []|groupby('²') }}",
          "{{ [1]|groupby('a.²') }}", "{{ []|join(',', 'a.²') }}", "{{ []|selectattr('²')|list }}",
          "{{ []|min(attribute='²') }}", "{{ 1|sort(attribute='²') }}", "{{ [[1, 2]]|join(attribute='١') }}"]:
    case("filter", "map", t)

# `%` reads an undefined argument through its `__getitem__`, `__int__` and `__float__`, which raise.
for e in ["'%(a)s' % nope", "'%(a)s' % d.zz", "'%d' % nope", "'%i items' % d.zz", "'%f' % nope", "'%x' % nope",
          "'%s' % nope", "'%r' % nope", "'%5.2e' % (nope,)", "'%d %s' % (1, nope)", "'%d %d' % (1, nope)",
          "('%(a)s'|safe) % nope", "('%d'|safe) % nope", "'%c' % nope", "'%(a)s %q' % nope"]:
    case("filter", "format", "{{ " + e + " }}", {"d": {"a": 1}})

# The undefined of an inline `if` without `else` names the line the expression starts on.
for t in ["{{ (1 if false)|wordwrap(2) }}", "\n{{ ('a' if nope).x }}",
          "{% if true %}\n\n{{ (nope\n if nope)|wordwrap(1) }}{% endif %}",
          "{{ ((1 if false) if true)|wordwrap(3) }}", "{% set x = 1 if false %}\n{{ x|wordwrap(2) }}"]:
    case("filter", "wordwrap", t)

# The sandbox refuses an attribute starting with `_` only when Python's `getattr` finds it; a name the type
# lacks reads the item, else is undefined, so calling it raises UndefinedError instead of SecurityError.
PRIVATE_OWNERS = ["5", "2.5", "true", "none", "'ab'", "[1]", "(1,)", "'x'|safe", "range(2)", "d.keys()",
                  "d.values()", "d.items()", "'a'.encode()", "[1]|reverse", "'ab'|reverse", "[1]|select",
                  "d|reverse", "ns", "loop", "m", "cycler(1)", "joiner()", "n", "f", "s", "l"]
PRIVATE_NAMES = ["__len__", "__add__", "__iter__", "__bool__", "__getitem__", "__reversed__", "__index__",
                 "__getformat__", "__html__", "__next__", "__call__", "__dict__", "__class__", "__foo__",
                 "_iterator", "_func", "__length_hint__", "__xor__", "__module__"]
for owner in PRIVATE_OWNERS:
    for attr in PRIVATE_NAMES:
        for form in ["{{ (%s).%s() }}", "{{ (%s)|attr(%r) is defined }}"]:
            body = form % (owner, attr)
            if owner == "ns":
                body = "{% set ns = namespace(a=1) %}" + body
            elif owner == "loop":
                body = "{% for x in [1] %}" + body + "{% endfor %}"
            elif owner == "m":
                body = "{% macro m() %}{% endmacro %}" + body
            case("filter", "attr", body, {"d": {"a": 1}, "n": 3, "f": 1.5, "s": "xy", "l": [2]})

# Jinja2's `batch` and `slice` are generators: what they raise comes only when they are iterated.
for t in ["{{ (5|batch(2)) is defined }}", "{{ (true|batch(2))|int }}", "{{ (5|batch(2))|list }}",
          "{{ (1|batch(2)) ~ '' is string }}", "{% set b = none|batch(1) %}ok", "{{ [1, 2]|batch('x', 0)|list }}",
          "{{ ([1, 2]|batch(2.5, 0)) is iterable }}", "{{ [1, 2]|batch(2.5, 0)|list }}", "{% for x in 3|batch(1) %}{% endfor %}"]:
    case("filter", "batch", t)
for t in ["{{ (5|slice(2)) is defined }}", "{{ ([1]|slice(0)) is iterable }}", "{{ [1]|slice(0)|list }}",
          "{{ (none|slice(2))|first is defined }}", "{% set s = 1|slice(1) %}ok", "{{ 'ab'|slice('2')|list }}",
          "{{ ('ab'|slice(2)) and 'yes' }}", "{% for x in 3|slice(1) %}{% endfor %}"]:
    case("filter", "slice", t)

# A generator's repr names the function Jinja2 runs it in (its address differs from run to run).
for e in ["[1]|select", "[1]|reject", "[{'a': 1}]|selectattr('a')", "[{'a': 1}]|rejectattr('a')", "[1]|map('string')",
          "[1]|unique", "{'a': 1}|items", "[1, 2]|batch(1)", "[1, 2]|slice(2)", "5|batch(2)", "none|slice(0)",
          "[1]|reverse", "'ab'|reverse", "{'a': 1}|reverse", "[1]|map('nope')", "{}|items|items"]:
    case("filter", "string", "{{ ((" + e + ")|string).split(' ')[:3]|join(' ') }}|{{ (" + e + ")|wordcount }}")


def main():
    records = []
    for n, c in enumerate(CASES):
        random.seed(n)
        status, result = run(c["template"], c["context"])
        if status == "ok" and ADDRESS.search(result) and c["kind"] == "filter" and c["template"].endswith(" }}"):
            c = dict(c, template=c["template"][:-3] + "|list }}")  # an iterator prints its address: list it
            key = (c["name"], c["template"], json.dumps(c["context"], sort_keys=True))
            if key in _SEEN:
                continue
            _SEEN.add(key)
            random.seed(n)
            status, result = run(c["template"], c["context"])
        if has_address(result):
            continue  # object addresses differ between runs
        rec = {"id": "", "name": c["name"], "kind": c["kind"], "template": c["template"], "context": c["context"],
               "status": status}
        if c["name"] == "random" and c["kind"] == "filter" and "|random" in c["template"]:
            if status == "raised" and result["name"] == "KeyError":
                continue  # the key is the random index
            if status == "ok":
                if not c["template"].endswith("|random }}"):
                    continue  # a random choice inside a larger expression: no exact output
                prop = random_property(c["template"], c["context"])
                if prop is None:
                    continue
                rec["property"] = prop
        elif c["name"] == "lipsum" and "lipsum(" in c["template"] and status == "ok":
            prop = lipsum_property(c["template"])
            if prop is None:
                continue
            rec["property"] = prop
        if status == "ok":
            if "property" not in rec:
                rec["output"] = result
        else:
            rec["error"] = result
        records.append(rec)
    counters = {}
    for rec in records:
        k = counters.get(rec["name"], 0) + 1
        counters[rec["name"]] = k
        rec["id"] = f"{rec['kind']}.{rec['name']}.{k:03d}"
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    kinds = {}
    for rec in records:
        kinds[rec["kind"]] = kinds.get(rec["kind"], 0) + 1
    few = sorted(k for k, v in counters.items() if v < 8)
    print(f"{len(records)} cases {kinds}; {len(counters)} names; fewer than 8: {few}", file=sys.stderr)


if __name__ == "__main__":
    main()
