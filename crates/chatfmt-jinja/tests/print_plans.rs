//! Printed `+` chains write plain-string operands straight to the output: strings that template
//! scopes bind, and `trim` of a JSON member's string. These pin Jinja2 3.1.6's results
//! (sandboxed environment) for those operands and for the ones that take the general rules
//! (Markup, numbers, undefined values, filters with arguments or chained).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/outcome.rs"]
mod support;

use serde_json::json;

/// The output of `src` with a message `m`, or `Class: message` of the error.
fn outcome(src: &str) -> String {
    let m = json!({
        "role": "user", "content": "  hi\u{3000}", "n": 0, "e": "é x é", "w": "\u{3000}x\n", "z": "",
        "k": "kept"
    });
    support::outcome(json!({ "m": m }), src)
}

#[test]
fn scope_strings_and_trimmed_members_print_as_jinja2_does() {
    let cases = [
        (
            "{% set s = 'x' %}{% for i in [1] %}{% set t = 'y' %}{{ '[' + s + t + m.k | trim + ']' }}{% endfor %}",
            "[xykept]",
        ),
        (
            "{{ '[' + m.content | trim + '|' + m['e'] | trim + '|' + m.w | trim + '|' + m.z | trim + '|' + m.k | trim + ']' }}",
            "[hi|é x é|x||kept]",
        ),
        ("{{ '[' + m.missing | trim + ']' }}", "[]"),
        ("{{ '[' + m.n | trim + ']' }}", "[0]"),
        ("{% set s = '<b>' | safe %}{{ '<' + s + '>' }}", "&lt;<b>&gt;"),
        (
            "{% for s in ['<', 1] %}{{ 'a' + s }}{% endfor %}",
            "TypeError: can only concatenate str (not \"int\") to str",
        ),
        (
            "{% set s = 1 %}{{ 'a' + s + m.k | trim }}",
            "TypeError: can only concatenate str (not \"int\") to str",
        ),
        ("{{ 'a' + m.k | trim + nope.x }}", "UndefinedError: 'nope' is undefined"),
        ("{{ 'a' + m.k | trim(' k') + (m.k | trim | upper) }}", "aeptKEPT"),
    ];
    for (src, want) in cases {
        assert_eq!(outcome(src), want, "{src}");
    }
}

#[test]
fn adjacent_literals_print_as_one_operand_in_order() {
    let cases = [
        ("{{ '<' + 'a' + m.k + 'b' ~ 'c' + '>' }}", "<akeptbc>"),
        ("{{ 'a' ~ 1 ~ 'b' ~ 'c' }}", "a1bc"),
        (
            "{{ 'a' + 'b' + 1 }}",
            "TypeError: can only concatenate str (not \"int\") to str",
        ),
        ("{{ 'x' + '' + '' + m['role'] + '' }}", "xuser"),
    ];
    for (src, want) in cases {
        assert_eq!(outcome(src), want, "{src}");
    }
}
