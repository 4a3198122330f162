//! The one declaration of the environment's filters, tests and global functions, and of the Python
//! methods templates call: each entry's name, its parameters as Jinja2, transformers, CPython or
//! MarkupSafe declare them, the function that runs it and a line saying what it does. Argument
//! binding, method dispatch, the compile-time name checks, the analysis, `check` and
//! `docs/BUILTINS.md` all read these tables.

use super::args::{ParamDefault as D, Signature as S};
use super::entry::{Body, Builtin, FilterFn, GlobalFn, Method, MethodFn, Receiver, TestFn};
use super::method_sig::{sig, Parse as P};
use super::{filters as f, globals as g, methods as m, num_methods as n, predicates as t};
use crate::pystr;
use crate::value::{Object, Value};
use serde_json::Value as Json;
use std::rc::Rc;
use std::sync::OnceLock;

const fn plain<F>(name: &'static str, sig: S, run: F, summary: &'static str) -> Builtin<F> {
    Builtin {
        name,
        sig,
        run,
        pure: false,
        lazy: false,
        keeps_items: false,
        on_str: None,
        counts: false,
        summary,
    }
}

const fn filter(name: &'static str, sig: S, run: FilterFn, summary: &'static str) -> Builtin<FilterFn> {
    plain(name, sig, run, summary)
}

const fn pure(name: &'static str, sig: S, run: FilterFn, summary: &'static str) -> Builtin<FilterFn> {
    Builtin {
        pure: true,
        ..plain(name, sig, run, summary)
    }
}

/// `length` and its alias `count`.
const fn counting(name: &'static str, summary: &'static str) -> Builtin<FilterFn> {
    Builtin {
        counts: true,
        ..plain(name, S::one_arg("len"), f::do_length, summary)
    }
}

const fn lazy(name: &'static str, sig: S, run: FilterFn, summary: &'static str) -> Builtin<FilterFn> {
    Builtin {
        lazy: true,
        ..plain(name, sig, run, summary)
    }
}

const VALUE: &[&str] = &["value"];
const STR: &[&str] = &["s"];
const CTX_VALUE: &[&str] = &["context", "value"];
const NO: &[D] = &[];
const AGGREGATE: &[&str] = &["environment", "value", "case_sensitive", "attribute"];
const AGGREGATE_DEFAULTS: &[D] = &[D::Bool(false), D::None];

impl Builtin<FilterFn> {
    /// The filter's result holds the items of its input.
    const fn keeps_items(self) -> Self {
        Builtin {
            keeps_items: true,
            ..self
        }
    }
}

/// The environment's filters, by name.
pub static FILTERS: &[Builtin<FilterFn>] = &[
    filter(
        "abs",
        S::one_arg("abs"),
        f::do_abs,
        "The absolute value (Python's `abs`).",
    ),
    filter(
        "attr",
        S::def("do_attr", &["environment", "obj", "name"], 2, 3, NO),
        f::do_attr,
        "The attribute `name` of the value, without falling back to an item.",
    ),
    lazy(
        "batch",
        S::def("do_batch", &["value", "linecount", "fill_with"], 1, 2, &[D::None]),
        f::do_batch,
        "Lists of `linecount` items, the last one padded with `fill_with` when given.",
    )
    .keeps_items(),
    filter(
        "capitalize",
        S::def("do_capitalize", STR, 1, 1, NO),
        f::do_capitalize,
        "The first character upper case, the rest lower case.",
    ),
    filter(
        "center",
        S::def("do_center", &["value", "width"], 1, 1, &[D::Int(80)]),
        f::do_center,
        "The text centred in a field of `width` characters.",
    ),
    counting("count", "The number of items (alias of `length`)."),
    pure(
        "d",
        S::def(
            "do_default",
            &["value", "default_value", "boolean"],
            1,
            1,
            &[D::Str(""), D::Bool(false)],
        ),
        f::do_default,
        "Alias of `default`.",
    ),
    pure(
        "default",
        S::def(
            "do_default",
            &["value", "default_value", "boolean"],
            1,
            1,
            &[D::Str(""), D::Bool(false)],
        ),
        f::do_default,
        "`default_value` when the value is undefined (or false, with `boolean`).",
    ),
    filter(
        "dictsort",
        S::def(
            "do_dictsort",
            &["value", "case_sensitive", "by", "reverse"],
            1,
            1,
            &[D::Bool(false), D::Str("key"), D::Bool(false)],
        ),
        f::do_dictsort,
        "The (key, value) pairs of a mapping, sorted by key or value.",
    ),
    filter(
        "e",
        S::def("escape", STR, 1, 1, NO).posonly(1),
        f::do_escape,
        "Alias of `escape`.",
    ),
    filter(
        "escape",
        S::def("escape", STR, 1, 1, NO).posonly(1),
        f::do_escape,
        "HTML-escaped markup (markup stays as it is).",
    ),
    filter(
        "filesizeformat",
        S::def("do_filesizeformat", &["value", "binary"], 1, 1, &[D::Bool(false)]),
        f::do_filesizeformat,
        "A byte count in human-readable units (kB, MB, or KiB, MiB with `binary`).",
    ),
    filter(
        "first",
        S::def("sync_do_first", &["environment", "seq"], 2, 2, NO),
        f::do_first,
        "The first item.",
    )
    .keeps_items(),
    filter(
        "float",
        S::def("do_float", &["value", "default"], 1, 1, &[D::Float(0.0)]),
        f::do_float,
        "The value as a float, `default` when it is not a number.",
    ),
    filter(
        "forceescape",
        S::def("do_forceescape", VALUE, 1, 1, NO),
        f::do_forceescape,
        "HTML-escaped markup, even when the value already is markup.",
    ),
    filter(
        "format",
        S::def("do_format", VALUE, 1, 1, NO).variadic(),
        f::do_format,
        "printf-style formatting (`value % args`).",
    ),
    filter(
        "groupby",
        S::def(
            "sync_do_groupby",
            &["environment", "value", "attribute", "default", "case_sensitive"],
            2,
            3,
            &[D::None, D::Bool(false)],
        ),
        f::do_groupby,
        "The items grouped by an attribute, as (grouper, list) pairs sorted by it.",
    ),
    pure(
        "indent",
        S::def(
            "do_indent",
            &["s", "width", "first", "blank"],
            1,
            1,
            &[D::Int(4), D::Bool(false), D::Bool(false)],
        ),
        f::indent_filter,
        "Each line after the first indented by `width` spaces (or that string).",
    ),
    filter(
        "int",
        S::def("do_int", &["value", "default", "base"], 1, 1, &[D::Int(0), D::Int(10)]),
        f::do_int,
        "The value as an integer, `default` when it is not one.",
    ),
    lazy(
        "items",
        S::def("do_items", VALUE, 1, 1, NO),
        f::do_items,
        "The (key, value) pairs of a mapping.",
    ),
    pure(
        "join",
        S::def(
            "sync_do_join",
            &["eval_ctx", "value", "d", "attribute"],
            2,
            2,
            &[D::Str(""), D::None],
        ),
        f::do_join,
        "The items' text joined by `d`.",
    ),
    filter(
        "last",
        S::def("do_last", &["environment", "seq"], 2, 2, NO),
        f::do_last,
        "The last item.",
    )
    .keeps_items(),
    counting("length", "The number of items."),
    filter(
        "list",
        S::def("sync_do_list", VALUE, 1, 1, NO),
        f::do_list,
        "The items as a list.",
    )
    .keeps_items(),
    pure(
        "lower",
        S::def("do_lower", STR, 1, 1, NO),
        f::do_lower,
        "The text in lower case.",
    ),
    lazy(
        "map",
        S::def("sync_do_map", CTX_VALUE, 2, 2, NO).variadic(),
        f::map_filter,
        "A filter applied to each item, or each item's `attribute`.",
    ),
    filter(
        "max",
        S::def("do_max", AGGREGATE, 2, 2, AGGREGATE_DEFAULTS),
        f::do_max,
        "The largest item.",
    ),
    filter(
        "min",
        S::def("do_min", AGGREGATE, 2, 2, AGGREGATE_DEFAULTS),
        f::do_min,
        "The smallest item.",
    ),
    filter(
        "pprint",
        S::def("do_pprint", VALUE, 1, 1, NO),
        f::do_pprint,
        "The value pretty-printed as Python's `pprint` does.",
    ),
    filter(
        "random",
        S::def("do_random", &["context", "seq"], 2, 2, NO),
        f::do_random,
        "A random item.",
    ),
    lazy(
        "reject",
        S::def("sync_do_reject", CTX_VALUE, 2, 2, NO).variadic(),
        f::do_reject,
        "The items failing a test.",
    )
    .keeps_items(),
    lazy(
        "rejectattr",
        S::def("sync_do_rejectattr", CTX_VALUE, 2, 2, NO).variadic(),
        f::do_rejectattr,
        "The items whose attribute fails a test.",
    )
    .keeps_items(),
    pure(
        "replace",
        S::def(
            "do_replace",
            &["eval_ctx", "s", "old", "new", "count"],
            2,
            4,
            &[D::None],
        ),
        f::do_replace,
        "`old` replaced by `new` (the first `count` times).",
    ),
    filter(
        "reverse",
        S::def("do_reverse", VALUE, 1, 1, NO),
        f::do_reverse,
        "The text or the items in reverse order.",
    )
    .keeps_items(),
    filter(
        "round",
        S::def(
            "do_round",
            &["value", "precision", "method"],
            1,
            1,
            &[D::Int(0), D::Str("common")],
        ),
        f::round_filter,
        "The number rounded (`common`, `ceil` or `floor`) to `precision` digits.",
    ),
    filter(
        "safe",
        S::def("do_mark_safe", VALUE, 1, 1, NO),
        f::do_safe,
        "The text marked safe (markup).",
    ),
    lazy(
        "select",
        S::def("sync_do_select", CTX_VALUE, 2, 2, NO).variadic(),
        f::do_select,
        "The items passing a test.",
    )
    .keeps_items(),
    lazy(
        "selectattr",
        S::def("sync_do_selectattr", CTX_VALUE, 2, 2, NO).variadic(),
        f::do_selectattr,
        "The items whose attribute passes a test.",
    )
    .keeps_items(),
    lazy(
        "slice",
        S::def("sync_do_slice", &["value", "slices", "fill_with"], 1, 2, &[D::None]),
        f::slice_filter,
        "The items cut into `slices` lists.",
    )
    .keeps_items(),
    filter(
        "sort",
        S::def(
            "do_sort",
            &["environment", "value", "reverse", "case_sensitive", "attribute"],
            2,
            2,
            &[D::Bool(false), D::Bool(false), D::None],
        ),
        f::do_sort,
        "The items sorted (by `attribute`).",
    ),
    pure(
        "string",
        S::def("soft_str", STR, 1, 1, NO).posonly(1),
        f::do_string,
        "The value as text (markup stays markup).",
    ),
    filter(
        "striptags",
        S::def("do_striptags", VALUE, 1, 1, NO),
        f::do_striptags,
        "The text without SGML/XML tags, whitespace collapsed.",
    ),
    filter(
        "sum",
        S::def(
            "sync_do_sum",
            &["environment", "iterable", "attribute", "start"],
            2,
            2,
            &[D::None, D::Int(0)],
        ),
        f::do_sum,
        "The sum of the items (or of their `attribute`), plus `start`.",
    ),
    pure(
        "title",
        S::def("do_title", STR, 1, 1, NO),
        f::do_title,
        "Each word capitalised.",
    ),
    pure(
        "tojson",
        S::def(
            "_cached_compile_jinja_template.<locals>.tojson",
            &["x", "ensure_ascii", "indent", "separators", "sort_keys"],
            1,
            1,
            &[D::Bool(false), D::None, D::None, D::Bool(false)],
        ),
        f::do_tojson,
        "The value as JSON, as transformers' `tojson` writes it (`json.dumps`).",
    ),
    Builtin {
        on_str: Some(f::trim_space),
        ..pure(
            "trim",
            S::def("do_trim", &["value", "chars"], 1, 1, &[D::None]),
            f::do_trim,
            "The text without leading and trailing whitespace (or `chars`).",
        )
    },
    filter(
        "truncate",
        S::def(
            "do_truncate",
            &["env", "s", "length", "killwords", "end", "leeway"],
            2,
            2,
            &[D::Int(255), D::Bool(false), D::Str("..."), D::None],
        ),
        f::truncate_filter,
        "The text cut to `length` characters, ending with `end`.",
    ),
    lazy(
        "unique",
        S::def("sync_do_unique", AGGREGATE, 2, 2, AGGREGATE_DEFAULTS),
        f::do_unique,
        "The items without repeats, in order.",
    ),
    pure(
        "upper",
        S::def("do_upper", STR, 1, 1, NO),
        f::do_upper,
        "The text in upper case.",
    ),
    filter(
        "urlencode",
        S::def("do_urlencode", VALUE, 1, 1, NO),
        f::do_urlencode,
        "The text, mapping or pairs URL-encoded.",
    ),
    filter(
        "urlize",
        S::def(
            "do_urlize",
            &[
                "eval_ctx",
                "value",
                "trim_url_limit",
                "nofollow",
                "target",
                "rel",
                "extra_schemes",
            ],
            2,
            2,
            &[D::None, D::Bool(false), D::None, D::None, D::None],
        ),
        f::urlize_filter,
        "URLs and e-mail addresses in the text turned into links.",
    ),
    filter(
        "wordcount",
        S::def("do_wordcount", STR, 1, 1, NO),
        f::do_wordcount,
        "The number of words.",
    ),
    filter(
        "wordwrap",
        S::def(
            "do_wordwrap",
            &[
                "environment",
                "s",
                "width",
                "break_long_words",
                "wrapstring",
                "break_on_hyphens",
            ],
            2,
            2,
            &[D::Int(79), D::Bool(true), D::None, D::Bool(true)],
        ),
        f::wordwrap_filter,
        "The text wrapped at `width` characters.",
    ),
    filter(
        "xmlattr",
        S::def("do_xmlattr", &["eval_ctx", "d", "autospace"], 2, 2, &[D::Bool(true)]),
        f::do_xmlattr,
        "A mapping as escaped XML/HTML attributes.",
    ),
];

/// A test of the value alone, `test_NAME(value)`.
const fn unary(name: &'static str, func: &'static str, run: TestFn, summary: &'static str) -> Builtin<TestFn> {
    plain(name, S::def(func, VALUE, 1, 1, NO), run, summary)
}

/// The environment's tests, by name.
pub static TESTS: &[Builtin<TestFn>] = &[
    plain("!=", S::operator("ne"), t::ne, "Alias of `ne`."),
    plain("<", S::operator("lt"), t::lt, "Alias of `lt`."),
    plain("<=", S::operator("le"), t::le, "Alias of `le`."),
    plain("==", S::operator("eq"), t::eq, "Alias of `eq`."),
    plain(">", S::operator("gt"), t::gt, "Alias of `gt`."),
    plain(">=", S::operator("ge"), t::ge, "Alias of `ge`."),
    unary("boolean", "test_boolean", t::boolean, "A `bool`."),
    plain(
        "callable",
        S::one_arg("callable"),
        t::callable,
        "Callable (a macro, function or method).",
    ),
    unary("defined", "test_defined", t::defined, "Not undefined."),
    plain(
        "divisibleby",
        S::def("test_divisibleby", &["value", "num"], 1, 2, NO),
        t::divisibleby,
        "Divisible by `num`.",
    ),
    plain("eq", S::operator("eq"), t::eq, "Equal to the argument (`==`)."),
    plain("equalto", S::operator("eq"), t::eq, "Alias of `eq`."),
    unary("escaped", "test_escaped", t::escaped, "Markup."),
    unary("even", "test_even", t::even, "An even number."),
    unary("false", "test_false", t::false_, "The value `False`."),
    plain(
        "filter",
        S::def("test_filter", &["env", "value"], 2, 2, NO),
        t::filter,
        "The name of a filter of the environment.",
    ),
    unary("float", "test_float", t::float, "A `float`."),
    plain(
        "ge",
        S::operator("ge"),
        t::ge,
        "Greater than or equal to the argument (`>=`).",
    ),
    plain("greaterthan", S::operator("gt"), t::gt, "Alias of `gt`."),
    plain("gt", S::operator("gt"), t::gt, "Greater than the argument (`>`)."),
    plain(
        "in",
        S::def("test_in", &["value", "seq"], 1, 2, NO),
        t::in_,
        "Contained in `seq`.",
    ),
    unary("integer", "test_integer", t::integer, "An `int` (not a `bool`)."),
    unary("iterable", "test_iterable", t::iterable, "Iterable."),
    plain(
        "le",
        S::operator("le"),
        t::le,
        "Less than or equal to the argument (`<=`).",
    ),
    plain("lessthan", S::operator("lt"), t::lt, "Alias of `lt`."),
    unary("lower", "test_lower", t::lower, "Text in lower case."),
    plain("lt", S::operator("lt"), t::lt, "Less than the argument (`<`)."),
    unary("mapping", "test_mapping", t::mapping, "A mapping (`dict`)."),
    plain("ne", S::operator("ne"), t::ne, "Not equal to the argument (`!=`)."),
    unary("none", "test_none", t::none, "The value `None`."),
    unary("number", "test_number", t::number, "A number (`int`, `float`, `bool`)."),
    unary("odd", "test_odd", t::odd, "An odd number."),
    plain(
        "sameas",
        S::def("test_sameas", &["value", "other"], 1, 2, NO),
        t::sameas,
        "The same object as `other` (`is`).",
    ),
    unary(
        "sequence",
        "test_sequence",
        t::sequence,
        "A sequence (has a length and items).",
    ),
    unary("string", "test_string", t::string, "A `str`."),
    plain(
        "test",
        S::def("test_test", &["env", "value"], 2, 2, NO),
        t::test,
        "The name of a test of the environment.",
    ),
    unary("true", "test_true", t::true_, "The value `True`."),
    unary("undefined", "test_undefined", t::undefined, "Undefined."),
    unary("upper", "test_upper", t::upper, "Text in upper case."),
];

/// The environment's global functions, by name.
pub static GLOBALS: &[Builtin<GlobalFn>] = &[
    plain(
        "cycler",
        S::def("Cycler.__init__", &["self"], 1, 1, NO).star(),
        g::cycler,
        "An object cycling through its arguments (`next()`, `reset()`, `current`).",
    ),
    plain(
        "dict",
        S::own("dict"),
        g::dict,
        "A `dict` from a mapping or pairs and keyword arguments.",
    ),
    plain(
        "joiner",
        S::def("Joiner.__init__", &["self", "sep"], 1, 1, &[D::Str(", ")]),
        g::joiner,
        "A callable giving `''` the first time and `sep` after.",
    ),
    plain(
        "lipsum",
        S::def(
            "generate_lorem_ipsum",
            &["n", "html", "min", "max"],
            0,
            0,
            &[D::Int(5), D::Bool(true), D::Int(20), D::Int(100)],
        ),
        g::lipsum,
        "`n` paragraphs of placeholder text.",
    ),
    plain(
        "namespace",
        S::own("Namespace.__init__"),
        g::namespace,
        "An object whose attributes `{% set ns.x = ... %}` may assign.",
    ),
    plain(
        "raise_exception",
        S::def(
            "_cached_compile_jinja_template.<locals>.raise_exception",
            &["message"],
            0,
            1,
            NO,
        ),
        g::raise_exception,
        "Fails the render with `message` (transformers' `TemplateError`).",
    ),
    plain(
        "range",
        S::def("safe_range", &[], 0, 0, NO).star(),
        g::range,
        "Python's `range`, capped at 100,000 items.",
    ),
    plain(
        "strftime_now",
        S::def(
            "_cached_compile_jinja_template.<locals>.strftime_now",
            &["format"],
            0,
            1,
            NO,
        ),
        g::strftime_now,
        "The current local time formatted by `strftime` (transformers' global).",
    ),
];

/// The index in [`FILTERS`] of the filter `name`.
pub fn filter_index(name: &str) -> Option<usize> {
    FILTERS.iter().position(|b| b.name == name)
}

/// The index in [`TESTS`] of the test `name`.
pub fn test_index(name: &str) -> Option<usize> {
    TESTS.iter().position(|b| b.name == name)
}

/// The global function `name`.
pub fn global(name: &str) -> Option<&'static Builtin<GlobalFn>> {
    GLOBALS.iter().find(|b| b.name == name)
}

const fn entry(on: Receiver, name: &'static str, parse: P, run: MethodFn, summary: &'static str) -> Method {
    Method {
        on,
        name,
        sig: sig(parse),
        body: Body::Runs(run),
        scans: matches!(on, Receiver::Str),
        summary,
    }
}

const fn mutator(on: Receiver, name: &'static str, parse: P, summary: &'static str) -> Method {
    Method {
        on,
        name,
        sig: sig(parse),
        body: Body::Mutates,
        scans: false,
        summary,
    }
}

const fn str_m(name: &'static str, parse: P, run: MethodFn, summary: &'static str) -> Method {
    entry(Receiver::Str, name, parse, run, summary)
}

const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A `Markup` override of the `str` method `name`: the same body (which escapes what it inserts
/// into markup), MarkupSafe's Python signature.
const fn markup(name: &'static str, parse: P) -> Method {
    let mut i = 0;
    while !same_name(STR_METHODS[i].name, name) {
        i += 1;
    }
    Method {
        on: Receiver::Markup,
        sig: sig(parse),
        ..STR_METHODS[i]
    }
}

const SPLIT: P = P::Keywords(&["sep", "maxsplit"], 0, 2);
const FINDS: P = P::Tuple(1, 3);
const PAD: P = P::Clinic(1, 2);
const STRIP: P = P::Clinic(0, 1);
const PY_PAD: P = P::Python(&["self", "width", "fillchar"], 3, 2);
const PY_STRIP: P = P::Python(&["self", "chars"], 2, 1);
const PY_NONE: P = P::Python(&["self"], 1, 1);
const PY_SPLIT: P = P::Python(&["self", "sep", "maxsplit"], 1, 1);
const FROMKEYS: P = P::Clinic(1, 2);

/// The methods of `str`.
const STR_METHODS: &[Method] = &[
    str_m(
        "capitalize",
        P::NoArgs,
        |r, _| m::case(r, pystr::capitalize),
        "The first character upper case, the rest lower case.",
    ),
    str_m(
        "casefold",
        P::NoArgs,
        |r, _| m::case(r, pystr::casefold),
        "Folded for caseless comparison.",
    ),
    str_m(
        "center",
        PAD,
        |r, c| m::pad(r, c, pystr::center),
        "Centred in a field of `width` characters.",
    ),
    str_m(
        "count",
        FINDS,
        |r, c| m::search(r, c, |s, x, a, b| Ok(pystr::count(s, x, a, b))),
        "The number of non-overlapping occurrences of `sub`.",
    ),
    str_m(
        "encode",
        P::Keywords(&["encoding", "errors"], 0, 2),
        m::encode,
        "The text as `bytes` in `encoding`.",
    ),
    str_m(
        "endswith",
        FINDS,
        |r, c| m::affix(r, c, pystr::endswith),
        "Ends with the suffix (or one of a tuple of them).",
    )
    .ends_only(),
    str_m(
        "expandtabs",
        P::Keywords(&["tabsize"], 0, 1),
        m::expandtabs,
        "Tabs replaced by spaces up to the next multiple of `tabsize`.",
    ),
    str_m(
        "find",
        FINDS,
        |r, c| m::search(r, c, |s, x, a, b| Ok(pystr::find(s, x, a, b))),
        "The lowest index of `sub`, or -1.",
    ),
    str_m(
        "format",
        P::Any,
        m::format,
        "`str.format` in the sandbox (no attribute of a private name).",
    )
    .ends_only(),
    str_m(
        "format_map",
        P::One,
        m::format_map,
        "`str.format` taking its fields from a mapping.",
    )
    .bare(),
    str_m(
        "index",
        FINDS,
        |r, c| m::search(r, c, pystr::index),
        "The lowest index of `sub`; `ValueError` when missing.",
    ),
    str_m(
        "isalnum",
        P::NoArgs,
        |r, _| m::test(r, pystr::isalnum),
        "Alphanumeric and not empty.",
    ),
    str_m(
        "isalpha",
        P::NoArgs,
        |r, _| m::test(r, pystr::isalpha),
        "Alphabetic and not empty.",
    ),
    str_m(
        "isascii",
        P::NoArgs,
        |r, _| m::test(r, pystr::isascii),
        "ASCII only (or empty).",
    ),
    str_m(
        "isdecimal",
        P::NoArgs,
        |r, _| m::test(r, pystr::isdecimal),
        "Decimal digits and not empty.",
    ),
    str_m(
        "isdigit",
        P::NoArgs,
        |r, _| m::test(r, pystr::isdigit),
        "Digits and not empty.",
    ),
    str_m(
        "isidentifier",
        P::NoArgs,
        |r, _| m::test(r, pystr::isidentifier),
        "A valid Python identifier.",
    ),
    str_m(
        "islower",
        P::NoArgs,
        |r, _| m::test(r, pystr::islower),
        "Has cased characters, all lower case.",
    ),
    str_m(
        "isnumeric",
        P::NoArgs,
        |r, _| m::test(r, pystr::isnumeric),
        "Numeric and not empty.",
    ),
    str_m(
        "isprintable",
        P::NoArgs,
        |r, _| m::test(r, pystr::isprintable),
        "Printable only (or empty).",
    ),
    str_m(
        "isspace",
        P::NoArgs,
        |r, _| m::test(r, pystr::isspace),
        "Whitespace and not empty.",
    ),
    str_m(
        "istitle",
        P::NoArgs,
        |r, _| m::test(r, pystr::istitle),
        "Title case: upper case only after uncased characters.",
    ),
    str_m(
        "isupper",
        P::NoArgs,
        |r, _| m::test(r, pystr::isupper),
        "Has cased characters, all upper case.",
    ),
    str_m("join", P::One, m::join, "The strings of `iterable` joined by this one.").ends_only(),
    str_m(
        "ljust",
        PAD,
        |r, c| m::pad(r, c, pystr::ljust),
        "Left-aligned in a field of `width` characters.",
    ),
    str_m("lower", P::NoArgs, |r, _| m::case(r, pystr::lower), "Lower case."),
    str_m(
        "lstrip",
        STRIP,
        |r, c| m::trim(r, c, pystr::lstrip),
        "Leading whitespace (or `chars`) removed.",
    )
    .ends_only(),
    str_m(
        "maketrans",
        P::Clinic(1, 3),
        m::maketrans,
        "A translation table for `translate`.",
    )
    .of_type("str"),
    str_m(
        "partition",
        P::One,
        |r, c| m::partition(r, c, pystr::partition),
        "(before, `sep`, after) around the first `sep`.",
    ),
    str_m(
        "removeprefix",
        P::One,
        |r, c| m::remove_affix(r, c, pystr::removeprefix),
        "Without the prefix, when it starts with it.",
    )
    .ends_only(),
    str_m(
        "removesuffix",
        P::One,
        |r, c| m::remove_affix(r, c, pystr::removesuffix),
        "Without the suffix, when it ends with it.",
    )
    .ends_only(),
    str_m(
        "replace",
        P::Clinic(2, 3),
        m::replace,
        "Occurrences of `old` replaced by `new` (the first `count` of them).",
    ),
    str_m(
        "rfind",
        FINDS,
        |r, c| m::search(r, c, |s, x, a, b| Ok(pystr::rfind(s, x, a, b))),
        "The highest index of `sub`, or -1.",
    ),
    str_m(
        "rindex",
        FINDS,
        |r, c| m::search(r, c, pystr::rindex),
        "The highest index of `sub`; `ValueError` when missing.",
    ),
    str_m(
        "rjust",
        PAD,
        |r, c| m::pad(r, c, pystr::rjust),
        "Right-aligned in a field of `width` characters.",
    ),
    str_m(
        "rpartition",
        P::One,
        |r, c| m::partition(r, c, pystr::rpartition),
        "(before, `sep`, after) around the last `sep`.",
    ),
    str_m(
        "rsplit",
        SPLIT,
        |r, c| m::split(r, c, pystr::rsplit),
        "The words, split from the right at most `maxsplit` times.",
    ),
    str_m(
        "rstrip",
        STRIP,
        |r, c| m::trim(r, c, pystr::rstrip),
        "Trailing whitespace (or `chars`) removed.",
    )
    .ends_only(),
    str_m(
        "split",
        SPLIT,
        |r, c| m::split(r, c, pystr::split),
        "The words, split at `sep` (runs of whitespace by default).",
    ),
    str_m(
        "splitlines",
        P::Keywords(&["keepends"], 0, 1),
        m::splitlines,
        "The lines, split at line boundaries.",
    ),
    str_m(
        "startswith",
        FINDS,
        |r, c| m::affix(r, c, pystr::startswith),
        "Starts with the prefix (or one of a tuple of them).",
    )
    .ends_only(),
    str_m(
        "strip",
        STRIP,
        |r, c| m::trim(r, c, pystr::strip),
        "Leading and trailing whitespace (or `chars`) removed.",
    )
    .ends_only(),
    str_m(
        "swapcase",
        P::NoArgs,
        |r, _| m::case(r, pystr::swapcase),
        "Upper case made lower and lower case upper.",
    ),
    str_m(
        "title",
        P::NoArgs,
        |r, _| m::case(r, pystr::title),
        "Each word capitalized.",
    ),
    str_m(
        "translate",
        P::One,
        m::translate,
        "Each character mapped through `table`.",
    ),
    str_m("upper", P::NoArgs, |r, _| m::case(r, pystr::upper), "Upper case."),
    str_m(
        "zfill",
        P::One,
        m::zfill,
        "Padded with zeros on the left to `width`, after any sign.",
    ),
];

/// MarkupSafe's `Markup` overrides of `str` methods (written in Python).
const MARKUP_METHODS: &[Method] = &[
    markup("capitalize", PY_NONE),
    markup("casefold", PY_NONE),
    markup("center", PY_PAD),
    markup("expandtabs", P::Python(&["self", "tabsize"], 1, 1)),
    markup("join", P::Python(&["self", "iterable"], 2, 2)),
    markup("ljust", PY_PAD),
    markup("lower", PY_NONE),
    markup("lstrip", PY_STRIP),
    markup("partition", P::Python(&["self", "sep"], 2, 2)),
    markup("removeprefix", P::Python(&["self", "prefix"], 2, 2)),
    markup("removesuffix", P::Python(&["self", "suffix"], 0, 2)),
    markup("replace", P::Python(&["self", "old", "new", "count"], 4, 3)),
    markup("rjust", PY_PAD),
    markup("rpartition", P::Python(&["self", "sep"], 2, 2)),
    markup("rsplit", PY_SPLIT),
    markup("rstrip", PY_STRIP),
    markup("split", PY_SPLIT),
    markup("splitlines", P::Python(&["self", "keepends"], 1, 1)),
    markup("strip", PY_STRIP),
    entry(
        Receiver::Markup,
        "striptags",
        PY_NONE,
        m::striptags,
        "Tags and comments removed, whitespace collapsed, references decoded (a plain string).",
    ),
    markup("swapcase", PY_NONE),
    markup("title", PY_NONE),
    markup("translate", P::Python(&["self", "table"], 2, 2)),
    entry(
        Receiver::Markup,
        "unescape",
        PY_NONE,
        m::unescape,
        "The text with its HTML character references decoded (a plain string).",
    ),
    markup("upper", PY_NONE),
    markup("zfill", P::Python(&["self", "width"], 2, 2)),
];

/// The methods of `list`.
const LIST_METHODS: &[Method] = &[
    mutator(Receiver::List, "append", P::One, "Adds an item at the end."),
    mutator(Receiver::List, "clear", P::NoArgs, "Removes every item."),
    entry(Receiver::List, "copy", P::NoArgs, m::list_copy, "A shallow copy."),
    entry(
        Receiver::List,
        "count",
        P::One,
        m::seq_count,
        "The number of items equal to the argument.",
    ),
    mutator(
        Receiver::List,
        "extend",
        P::One,
        "Adds the items of an iterable at the end.",
    ),
    entry(
        Receiver::List,
        "index",
        P::Clinic(1, 3),
        m::seq_index,
        "The index of the first item equal to the argument; `ValueError` when none is.",
    ),
    mutator(
        Receiver::List,
        "insert",
        P::Clinic(2, 2),
        "Inserts an item before an index.",
    ),
    mutator(Receiver::List, "pop", P::Clinic(0, 1), "Removes and returns an item."),
    mutator(
        Receiver::List,
        "remove",
        P::One,
        "Removes the first item equal to the argument.",
    ),
    mutator(Receiver::List, "reverse", P::NoArgs, "Reverses the items in place."),
    mutator(
        Receiver::List,
        "sort",
        P::Keywords(&["key", "reverse"], 0, 0),
        "Sorts the items in place.",
    ),
];

/// The methods of `dict`.
const DICT_METHODS: &[Method] = &[
    mutator(Receiver::Dict, "clear", P::NoArgs, "Removes every item."),
    entry(Receiver::Dict, "copy", P::NoArgs, m::dict_copy, "A shallow copy."),
    entry(
        Receiver::Dict,
        "fromkeys",
        FROMKEYS,
        m::fromkeys,
        "A new `dict` of the keys of `iterable`, each mapped to `value`.",
    )
    .of_type("dict"),
    entry(
        Receiver::Dict,
        "get",
        P::Clinic(1, 2),
        m::dict_get,
        "The value of `key`, else `default` (`None`).",
    ),
    entry(
        Receiver::Dict,
        "items",
        P::NoArgs,
        |r, _| m::dict_view(r, "dict_items", |k, v| Value::Tuple(Rc::new(vec![k, v]))),
        "A view of the (key, value) pairs.",
    ),
    entry(
        Receiver::Dict,
        "keys",
        P::NoArgs,
        |r, _| m::dict_view(r, "dict_keys", |k, _| k),
        "A view of the keys.",
    ),
    mutator(
        Receiver::Dict,
        "pop",
        P::Clinic(1, 2),
        "Removes a key and returns its value.",
    ),
    mutator(
        Receiver::Dict,
        "popitem",
        P::NoArgs,
        "Removes and returns the last pair.",
    ),
    mutator(
        Receiver::Dict,
        "setdefault",
        P::Clinic(1, 2),
        "The value of a key, set to `default` when missing.",
    ),
    mutator(
        Receiver::Dict,
        "update",
        P::Any,
        "Adds the pairs of a mapping or iterable.",
    ),
    entry(
        Receiver::Dict,
        "values",
        P::NoArgs,
        |r, _| m::dict_view(r, "dict_values", |_, v| v),
        "A view of the values.",
    ),
];

/// The methods of `tuple`.
const TUPLE_METHODS: &[Method] = &[
    entry(
        Receiver::Tuple,
        "count",
        P::One,
        m::seq_count,
        "The number of items equal to the argument.",
    ),
    entry(
        Receiver::Tuple,
        "index",
        P::Clinic(1, 3),
        m::seq_index,
        "The index of the first item equal to the argument; `ValueError` when none is.",
    ),
];

/// The methods of `range`.
const RANGE_METHODS: &[Method] = &[
    entry(
        Receiver::Range,
        "count",
        P::One,
        m::seq_count,
        "The number of items equal to the argument.",
    ),
    entry(
        Receiver::Range,
        "index",
        P::One,
        m::seq_index,
        "The index of the argument; `ValueError` when it is not in the range.",
    ),
];

/// The methods of `int` (and `bool`).
const INT_METHODS: &[Method] = &[
    entry(
        Receiver::Int,
        "as_integer_ratio",
        P::NoArgs,
        n::int_ratio,
        "The pair (the number, 1).",
    ),
    entry(
        Receiver::Int,
        "bit_count",
        P::NoArgs,
        n::bit_count,
        "The number of ones in the binary absolute value.",
    ),
    entry(
        Receiver::Int,
        "bit_length",
        P::NoArgs,
        n::bit_length,
        "The number of bits of the absolute value.",
    ),
    entry(
        Receiver::Int,
        "conjugate",
        P::NoArgs,
        n::int_itself,
        "The number itself (an `int`).",
    ),
    entry(
        Receiver::Int,
        "from_bytes",
        P::Keywords(&["bytes", "byteorder", "signed"], 1, 2),
        n::from_bytes,
        "The integer that `bytes` represent.",
    ),
    entry(
        Receiver::Int,
        "to_bytes",
        P::Keywords(&["length", "byteorder", "signed"], 0, 2),
        n::to_bytes,
        "The integer as `length` bytes.",
    ),
];

/// The methods of `float`.
const FLOAT_METHODS: &[Method] = &[
    entry(
        Receiver::Float,
        "as_integer_ratio",
        P::NoArgs,
        n::float_ratio,
        "The exact fraction, in lowest terms, as a pair of integers.",
    ),
    entry(
        Receiver::Float,
        "conjugate",
        P::NoArgs,
        n::float_itself,
        "The number itself.",
    ),
    entry(
        Receiver::Float,
        "fromhex",
        P::One,
        n::fromhex,
        "The float a hexadecimal string writes.",
    )
    .of_type("float"),
    entry(Receiver::Float, "hex", P::NoArgs, n::hex, "The number in hexadecimal."),
    entry(
        Receiver::Float,
        "is_integer",
        P::NoArgs,
        n::is_integer,
        "Finite with no fractional part.",
    ),
];

/// The methods of the `dict` global (the type).
const DICT_TYPE_METHODS: &[Method] = &[entry(
    Receiver::DictType,
    "fromkeys",
    FROMKEYS,
    m::fromkeys,
    "A new `dict` of the keys of `iterable`, each mapped to `value`.",
)
.of_type("dict")];

/// The methods of the `dict_keys` and `dict_items` views.
const DICT_VIEW_METHODS: &[Method] = &[entry(
    Receiver::DictView,
    "isdisjoint",
    P::Named(&["other"]),
    m::isdisjoint,
    "No item in common with `other`.",
)];

/// The methods of `loop`.
const LOOP_METHODS: &[Method] = &[
    entry(
        Receiver::Loop,
        "changed",
        P::VarArgs("value"),
        g::loop_changed,
        "Whether the arguments differ from the last call's (true on the first).",
    ),
    entry(
        Receiver::Loop,
        "cycle",
        P::VarArgs("args"),
        g::loop_cycle,
        "The argument at the loop's index, cycling through them.",
    ),
];

/// The methods of a `cycler`.
const CYCLER_METHODS: &[Method] = &[
    entry(
        Receiver::Cycler,
        "next",
        P::Python(&["self"], 0, 1),
        g::cycler_next,
        "The current item; the cycler moves on to the next.",
    ),
    entry(
        Receiver::Cycler,
        "reset",
        P::Python(&["self"], 0, 1),
        g::cycler_reset,
        "Back to the first item.",
    ),
];

/// Every type's methods, as the documentation lists them.
pub static METHODS: &[&[Method]] = &[
    STR_METHODS,
    MARKUP_METHODS,
    LIST_METHODS,
    DICT_METHODS,
    TUPLE_METHODS,
    RANGE_METHODS,
    INT_METHODS,
    FLOAT_METHODS,
    DICT_TYPE_METHODS,
    DICT_VIEW_METHODS,
    LOOP_METHODS,
    CYCLER_METHODS,
];

/// A method table with its entries ordered by the length and text of their names on first use,
/// searched by bisection (a call site looks its method up on every call).
struct ByName {
    table: &'static [Method],
    sorted: OnceLock<Vec<&'static Method>>,
}

impl ByName {
    const fn new(table: &'static [Method]) -> Self {
        ByName {
            table,
            sorted: OnceLock::new(),
        }
    }

    /// The first entry named `name`, as a scan of the table in order finds it.
    fn find(&self, name: &str) -> Option<&'static Method> {
        let sorted = self.sorted.get_or_init(|| {
            let mut entries: Vec<&'static Method> = self.table.iter().collect();
            // By length first, so that most comparisons are of lengths. Stable: of entries with
            // one name, the first in the table stays first.
            entries.sort_by_key(|m| (m.name.len(), m.name));
            entries
        });
        let at = sorted.partition_point(|m| (m.name.len(), m.name) < (name.len(), name));
        sorted.get(at).copied().filter(|m| m.name == name)
    }
}

static STR_BY_NAME: ByName = ByName::new(STR_METHODS);
static MARKUP_BY_NAME: ByName = ByName::new(MARKUP_METHODS);
static LIST_BY_NAME: ByName = ByName::new(LIST_METHODS);
static DICT_BY_NAME: ByName = ByName::new(DICT_METHODS);
static TUPLE_BY_NAME: ByName = ByName::new(TUPLE_METHODS);
static RANGE_BY_NAME: ByName = ByName::new(RANGE_METHODS);
static INT_BY_NAME: ByName = ByName::new(INT_METHODS);
static FLOAT_BY_NAME: ByName = ByName::new(FLOAT_METHODS);
static DICT_TYPE_BY_NAME: ByName = ByName::new(DICT_TYPE_METHODS);
static DICT_VIEW_BY_NAME: ByName = ByName::new(DICT_VIEW_METHODS);
static LOOP_BY_NAME: ByName = ByName::new(LOOP_METHODS);
static CYCLER_BY_NAME: ByName = ByName::new(CYCLER_METHODS);

/// The method tables of a receiver, most specific first.
fn method_tables(recv: &Value) -> [Option<&'static ByName>; 2] {
    let one = |t: &'static ByName| [Some(t), None];
    match recv {
        Value::Safe(_) => [Some(&MARKUP_BY_NAME), Some(&STR_BY_NAME)],
        Value::Str(_) | Value::String(_) => one(&STR_BY_NAME),
        Value::Json(Json::Array(_)) | Value::List(_) => one(&LIST_BY_NAME),
        Value::Json(Json::Object(_)) | Value::Dict(_) => one(&DICT_BY_NAME),
        Value::Tuple(_) => one(&TUPLE_BY_NAME),
        Value::Int(_) | Value::BigInt(_) | Value::Bool(_) => one(&INT_BY_NAME),
        Value::Float(_) => one(&FLOAT_BY_NAME),
        Value::Object(o) => match &**o {
            Object::Range(..) => one(&RANGE_BY_NAME),
            Object::Function("dict") => one(&DICT_TYPE_BY_NAME),
            Object::View(kind, ..) if *kind != "dict_values" => one(&DICT_VIEW_BY_NAME),
            Object::Loop(_) => one(&LOOP_BY_NAME),
            Object::Cycler(..) => one(&CYCLER_BY_NAME),
            _ => [None, None],
        },
        _ => [None, None],
    }
}

/// The method `name` of `recv`, if it has one.
pub fn method(recv: &Value, name: &str) -> Option<&'static Method> {
    method_tables(recv).into_iter().flatten().find_map(|t| t.find(name))
}

/// The method `name` of `dict`, if there is one.
pub fn dict_method(name: &str) -> Option<&'static Method> {
    DICT_BY_NAME.find(name)
}
