//! Python's `*` on the values templates see: sequence repetition and the two TypeErrors CPython
//! words differently (a sequence times a non-int, and operand pairs with no sequence at all). The
//! expected results are Jinja2 3.1.6's under transformers' environment.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chatfmt_jinja::{Context, Template};
use serde_json::json;

/// The output, or `Class: message` of the error.
fn run(expr: &str) -> String {
    let t = Template::new("t", &format!("{{{{ {expr} }}}}")).unwrap();
    let ctx = Context::from_json(json!({"messages": [{"role": "user", "content": "hi"}]})).unwrap();
    match t.render(&ctx) {
        Ok(r) => r.text,
        Err(e) => format!("{}: {}", e.kind().python_name(), e.message()),
    }
}

/// Each expression's output (or error) is the one given.
fn check(cases: &[(&str, &str)]) {
    for &(expr, want) in cases {
        assert_eq!(run(expr), want, "{expr}");
    }
}

#[test]
fn multiplication_repeats_sequences_and_words_errors_as_cpython() {
    let cases = [
        (
            "none * 3",
            "TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'",
        ),
        (
            "3 * none",
            "TypeError: unsupported operand type(s) for *: 'int' and 'NoneType'",
        ),
        (
            "[1] * none",
            "TypeError: can't multiply sequence by non-int of type 'NoneType'",
        ),
        (
            "none * [1]",
            "TypeError: can't multiply sequence by non-int of type 'NoneType'",
        ),
        (
            "'a' * 2.5",
            "TypeError: can't multiply sequence by non-int of type 'float'",
        ),
        (
            "2.5 * 'a'",
            "TypeError: can't multiply sequence by non-int of type 'float'",
        ),
        (
            "true * range(3)",
            "TypeError: unsupported operand type(s) for *: 'bool' and 'range'",
        ),
        (
            "range(3) * 2",
            "TypeError: unsupported operand type(s) for *: 'range' and 'int'",
        ),
        (
            "{} * 2",
            "TypeError: unsupported operand type(s) for *: 'dict' and 'int'",
        ),
        (
            "[1] * [2]",
            "TypeError: can't multiply sequence by non-int of type 'list'",
        ),
        (
            "'a' * 'b'",
            "TypeError: can't multiply sequence by non-int of type 'str'",
        ),
        (
            "[1] * 'a'",
            "TypeError: can't multiply sequence by non-int of type 'str'",
        ),
        ("'ab' * true", "ab"),
        ("(1, 2) * 2", "(1, 2, 1, 2)"),
        ("2 * (1,)", "(1, 1)"),
        ("[1] * -1", "[]"),
        ("'x' * 0", ""),
        ("1.5 * 2", "3.0"),
        ("true * false", "0"),
        (
            "none * none",
            "TypeError: unsupported operand type(s) for *: 'NoneType' and 'NoneType'",
        ),
        (
            "'a' * {}",
            "TypeError: can't multiply sequence by non-int of type 'dict'",
        ),
        (
            "messages * 2",
            "[{'role': 'user', 'content': 'hi'}, {'role': 'user', 'content': 'hi'}]",
        ),
        (
            "messages[0] * 2",
            "TypeError: unsupported operand type(s) for *: 'dict' and 'int'",
        ),
        ("messages[0]['role'] * 2", "useruser"),
        ("('<b>'|safe) * 2", "<b><b>"),
        (
            "[1] * 2.0",
            "TypeError: can't multiply sequence by non-int of type 'float'",
        ),
    ];
    check(&cases);
}

#[test]
fn markup_repeats_by_an_int_and_refuses_anything_else() {
    // `Markup.__mul__` / `__rmul__` run before the other operand's repetition: `(x) is escaped`
    // shows the result stays Markup.
    let cases = [
        (
            "(1, 2) * ('x'|safe)",
            "TypeError: 'tuple' object cannot be interpreted as an integer",
        ),
        (
            "[1] * ('x'|safe)",
            "TypeError: 'list' object cannot be interpreted as an integer",
        ),
        (
            "('x'|safe) * [1]",
            "TypeError: 'list' object cannot be interpreted as an integer",
        ),
        (
            "('x'|safe) * 2.5",
            "TypeError: 'float' object cannot be interpreted as an integer",
        ),
        (
            "('x'|safe) * none",
            "TypeError: 'NoneType' object cannot be interpreted as an integer",
        ),
        (
            "none * ('x'|safe)",
            "TypeError: 'NoneType' object cannot be interpreted as an integer",
        ),
        ("2 * ('x'|safe)", "True|xx"),
        ("('x'|safe) * 2", "True|xx"),
        (
            "'a' * ('x'|safe)",
            "TypeError: 'str' object cannot be interpreted as an integer",
        ),
        (
            "('x'|safe) * 'a'",
            "TypeError: 'str' object cannot be interpreted as an integer",
        ),
        (
            "2.5 * ('x'|safe)",
            "TypeError: 'float' object cannot be interpreted as an integer",
        ),
        (
            "{} * ('x'|safe)",
            "TypeError: 'dict' object cannot be interpreted as an integer",
        ),
        (
            "('x'|safe) * ('y'|safe)",
            "TypeError: 'Markup' object cannot be interpreted as an integer",
        ),
        ("true * ('x'|safe)", "True|x"),
        ("('<'|safe) * 2", "True|<<"),
    ];
    for (expr, want) in cases {
        let got = if want.starts_with("TypeError") {
            run(expr)
        } else {
            run(&format!("({expr}) is escaped }}}}|{{{{ {expr}"))
        };
        assert_eq!(got, want, "{expr}");
    }
}

#[test]
fn markup_addition_slicing_mappings_and_percent_with_a_range() {
    // `Markup.__add__` declines non-strings; a mapping takes a slice as a key (unhashable in
    // CPython 3.11); `%` takes whatever has `__getitem__` (a range) for a mapping.
    let cases = [
        (
            "('x'|safe) + [1]",
            "TypeError: unsupported operand type(s) for +: 'Markup' and 'list'",
        ),
        (
            "('x'|safe) + 1",
            "TypeError: unsupported operand type(s) for +: 'Markup' and 'int'",
        ),
        (
            "('x'|safe) + none",
            "TypeError: unsupported operand type(s) for +: 'Markup' and 'NoneType'",
        ),
        (
            "[1] + ('x'|safe)",
            "TypeError: can only concatenate list (not \"Markup\") to list",
        ),
        ("('x'|safe) + ('y'|safe)", "xy"),
        ("'a' + ('<'|safe)", "a<"),
        ("messages[0][1:]", "TypeError: unhashable type: 'slice'"),
        (
            "namespace(a=1)[1:]",
            "TypeError: 'TemplateNamespace' object is not subscriptable",
        ),
        ("'abc' % range(3)", "abc"),
        ("'a%sb' % range(3)", "arange(0, 3)b"),
        (
            "'x' % namespace(a=1)",
            "TypeError: not all arguments converted during string formatting",
        ),
    ];
    check(&cases);
}

#[test]
fn markup_stays_markup_through_the_filters_and_methods_that_keep_it() {
    // `Markup`'s own methods (and the filters calling them) return Markup, which escapes what is
    // added to it; `str.join`-built results (`title`) and plain iteration (`first`) do not.
    let cases = [
        ("('<b>'|safe)|upper + '<i>'", "<B>&lt;i&gt;"),
        ("('<b>'|safe)|lower + '<i>'", "<b>&lt;i&gt;"),
        ("('<b>'|safe)|capitalize + '<i>'", "<b>&lt;i&gt;"),
        ("('<b>'|safe)|title + '<i>'", "<B><i>"),
        ("('<b>'|safe)|trim + '<i>'", "<b>&lt;i&gt;"),
        ("('<b>'|safe)|center(9) + '<i>'", "   <b>   &lt;i&gt;"),
        ("('<b>'|safe)|replace('b','x') + '<i>'", "<x><i>"),
        ("('<b>'|safe)|truncate(3) + '<i>'", "<b>&lt;i&gt;"),
        ("('<b>'|safe)|indent(2) + '<i>'", "<b>&lt;i&gt;"),
        ("('<b>'|safe)|wordwrap(3) + '<i>'", "<b><i>"),
        ("('<b>'|safe)|striptags + '<i>'", "<i>"),
        ("('<b>'|safe)|first + '<i>'", "<<i>"),
        ("('<b>'|safe)|last + '<i>'", ">&lt;i&gt;"),
        ("('<b>'|safe)|reverse + '<i>'", ">b<&lt;i&gt;"),
        ("('<b>'|safe)|string + '<i>'", "<b>&lt;i&gt;"),
        (
            "('<b>'|safe)|format(1) + '<i>'",
            "TypeError: not all arguments converted during string formatting",
        ),
        ("('<b>'|safe)|join + '<i>'", "<b><i>"),
        ("('<b>'|safe)|default('x') + '<i>'", "<b>&lt;i&gt;"),
        ("('<b>'|safe)|urlize + '<i>'", "<b><i>"),
        ("('<b>'|safe)|e + '<i>'", "<b>&lt;i&gt;"),
        ("('<b>'|safe)|escape + '<i>'", "<b>&lt;i&gt;"),
        ("('<b>'|safe)|forceescape + '<i>'", "&lt;b&gt;&lt;i&gt;"),
        ("('<b>'|safe)|safe + '<i>'", "<b>&lt;i&gt;"),
        ("('<b>'|safe)|list|first + '<i>'", "<<i>"),
        ("('<b>'|safe)|sort|first + '<i>'", "<<i>"),
        ("('<b>'|safe)|unique|first + '<i>'", "<<i>"),
        ("('<b>'|safe)|min + '<i>'", "<<i>"),
        ("('<b>'|safe)|max + '<i>'", "b<i>"),
        ("('<b>'|safe).upper() ~ '<i>'", "<B><i>"),
        ("('<b>'|safe).lower() ~ '<i>'", "<b><i>"),
        ("('<b>'|safe).strip() ~ '<i>'", "<b><i>"),
        ("('<b>'|safe).capitalize() ~ '<i>'", "<b><i>"),
        ("('<b>'|safe).title() ~ '<i>'", "<B><i>"),
        ("('<b>'|safe).replace('b','x') ~ '<i>'", "<x><i>"),
        ("('<b>'|safe).center(9) ~ '<i>'", "   <b>   <i>"),
        ("('<b>'|safe).ljust(6) ~ '<i>'", "<b>   <i>"),
        ("('<b>'|safe).zfill(6) ~ '<i>'", "000<b><i>"),
        ("('<b>'|safe).swapcase() ~ '<i>'", "<B><i>"),
        ("('<b>'|safe).casefold() ~ '<i>'", "<b><i>"),
        ("('<b>'|safe).removeprefix('<') ~ '<i>'", "b><i>"),
        ("('<b>'|safe).split()|first ~ '<i>'", "<b><i>"),
        ("('<b>'|safe).partition('b')|first ~ '<i>'", "<<i>"),
        ("('<b>'|safe).splitlines()|first ~ '<i>'", "<b><i>"),
        ("('<b>'|safe).join(['1','2']) ~ '<i>'", "1<b>2<i>"),
        ("('<b>'|safe).format(1) ~ '<i>'", "<b><i>"),
        ("('<b>'|safe).expandtabs() ~ '<i>'", "<b><i>"),
        ("('<b>'|safe).rsplit('b')|first ~ '<i>'", "<<i>"),
        ("('<b>'|safe).lstrip('<') ~ '<i>'", "b><i>"),
        (
            "('<b>'|safe).__getitem__(0) ~ '<i>'",
            "SecurityError: access to attribute '__getitem__' of 'Markup' object is unsafe.",
        ),
        ("(('<b>'|safe).upper()) is escaped", "True"),
        ("(('<b>'|safe).lower()) is escaped", "True"),
        ("(('<b>'|safe).strip()) is escaped", "True"),
        ("(('<b>'|safe).capitalize()) is escaped", "True"),
        ("(('<b>'|safe).title()) is escaped", "True"),
        ("(('<b>'|safe).replace('b','x')) is escaped", "True"),
        ("(('<b>'|safe).center(9)) is escaped", "True"),
        ("(('<b>'|safe).ljust(6)) is escaped", "True"),
        ("(('<b>'|safe).zfill(6)) is escaped", "True"),
        ("(('<b>'|safe).swapcase()) is escaped", "True"),
        ("(('<b>'|safe).casefold()) is escaped", "True"),
        ("(('<b>'|safe).removeprefix('<')) is escaped", "True"),
        ("(('<b>'|safe).split()|first) is escaped", "True"),
        ("(('<b>'|safe).partition('b')|first) is escaped", "True"),
        ("(('<b>'|safe).splitlines()|first) is escaped", "True"),
        ("(('<b>'|safe).join(['1','2'])) is escaped", "True"),
        ("(('<b>'|safe).format(1)) is escaped", "True"),
        ("(('<b>'|safe).expandtabs()) is escaped", "True"),
        ("(('<b>'|safe).rsplit('b')|first) is escaped", "True"),
        ("(('<b>'|safe).lstrip('<')) is escaped", "True"),
        (
            "(('<b>'|safe).__getitem__(0)) is escaped",
            "SecurityError: access to attribute '__getitem__' of 'Markup' object is unsafe.",
        ),
        ("('<b>'|safe)[0] + '<'", "<&lt;"),
        ("('<b>'|safe)[1:] + '<'", "b>&lt;"),
        ("('<b>'|safe) * 2 + '<'", "<b><b>&lt;"),
        (
            "('<b>'|safe) % 1 + '<'",
            "TypeError: not all arguments converted during string formatting",
        ),
    ];
    check(&cases);
}
