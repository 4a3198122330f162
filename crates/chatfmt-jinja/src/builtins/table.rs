//! The one declaration of the environment's filters, tests and global functions: each entry's name,
//! its parameters as Jinja2 (or transformers) declares them, the function that runs it and a line
//! saying what it does. Argument binding, the compile-time name checks, the analysis, `check` and
//! `docs/BUILTINS.md` all read these tables.

use super::args::{Bound, ParamDefault as D, Signature as S};
use super::{filters as f, globals as g, tests as t};
use crate::context::Clock;
use crate::error::Result;
use crate::value::Value;

/// A filter: the filtered value and the bound arguments in, the result out.
pub type FilterFn = for<'a> fn(Value<'a>, Bound<'a>) -> Result<Value<'a>>;
/// A test: the tested value and the bound arguments in, whether it passes out.
pub type TestFn = for<'a> fn(&Value<'a>, Bound<'a>) -> Result<bool>;
/// A global function: the render's clock and the bound arguments in, the result out.
pub type GlobalFn = for<'a> fn(&Clock, Bound<'a>) -> Result<Value<'a>>;

/// One built-in.
pub struct Builtin<F> {
    /// The name templates use.
    pub name: &'static str,
    /// The parameters of the Python function behind it (binding and error messages follow them).
    pub sig: S,
    /// The function.
    pub run: F,
    /// Without side effects, its result depending only on its input and arguments (a filter the
    /// print plan may evaluate again).
    pub pure: bool,
    /// A generator in Jinja2: its arguments bind when called, its body fails only when iterated.
    pub lazy: bool,
    /// A filter whose result holds the items of its input (a list of messages stays messages).
    pub keeps_items: bool,
    /// What it does, in one line.
    pub summary: &'static str,
}

const fn plain<F>(name: &'static str, sig: S, run: F, summary: &'static str) -> Builtin<F> {
    Builtin {
        name,
        sig,
        run,
        pure: false,
        lazy: false,
        keeps_items: false,
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
    filter(
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
    filter(
        "count",
        S::one_arg("len"),
        f::do_length,
        "The number of items (alias of `length`).",
    ),
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
    filter("length", S::one_arg("len"), f::do_length, "The number of items."),
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
    filter(
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
    pure(
        "trim",
        S::def("do_trim", &["value", "chars"], 1, 1, &[D::None]),
        f::do_trim,
        "The text without leading and trailing whitespace (or `chars`).",
    ),
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
        S::def("raise_exception", &["message"], 0, 1, NO),
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
        S::def("strftime_now", &["format"], 0, 1, NO),
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
