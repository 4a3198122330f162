//! Conditions (`if`, `not`, `and`, `or`, loop filters, inline `if`) are decided without building
//! the values they test; these pin Jinja2 3.1.6's results (sandboxed environment) for JSON members
//! that are present, missing, or dict methods.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "support/outcome.rs"]
mod support;

use chatfmt_jinja::{Context, Template};
use serde_json::json;

fn render(src: &str) -> String {
    let m = json!({"role": "user", "content": "", "n": 0, "tool_calls": []});
    let ctx = Context::from_json(json!({ "m": m })).expect("an object");
    let t = Template::new("t", src).expect("compiles");
    t.render(&ctx).expect("renders").text
}

#[test]
fn a_dict_method_named_by_subscript_is_true() {
    assert_eq!(render(r#"{% if m["items"] %}A{% endif %}"#), "A");
    assert_eq!(render("{% if m.items %}A{% endif %}"), "A");
}

#[test]
fn missing_and_empty_members_are_false() {
    assert_eq!(render("{% if not m.tool_calls %}B{% endif %}"), "B");
    assert_eq!(render(r#"{% if m["x"] or m.role %}C{% endif %}"#), "C");
    assert_eq!(
        render(r#"{% if m.content or m.n or m["__class__"] %}D{% else %}E{% endif %}"#),
        "E"
    );
}

#[test]
fn inline_if_loop_filters_and_not() {
    assert_eq!(render(r#"{{ "y" if m.missing else "n" }}"#), "n");
    assert_eq!(
        render("{% for k in [m, m] if not m.nope %}{{ loop.index }}{% endfor %}"),
        "12"
    );
    assert_eq!(render("{{ not m.role }}{{ not m.get }}"), "FalseFalse");
}

#[test]
fn comparisons_with_a_member_or_a_key() {
    let cases = [
        (r#"{% if m.role == "user" and m["role"] != "tool" %}A{% endif %}"#, "A"),
        (
            r#"{% if m.n == "0" or m.tool_calls == "" or m.n != "0" %}B{% endif %}"#,
            "B",
        ),
        (
            r#"{% if m.missing == "x" or m["items"] == "x" %}C{% else %}D{% endif %}"#,
            "D",
        ),
        (r#"{% if m.missing != "x" and m["keys"] != "x" %}E{% endif %}"#, "E"),
        (
            r#"{% if "tool_calls" in m and "x" not in m and not "n" not in m %}F{% endif %}"#,
            "F",
        ),
        (
            r#"{% if "items" in m or "role" in m.role %}G{% else %}g{% endif %}"#,
            "g",
        ),
        (r#"{% if "u" in m.role and "x" not in m.tool_calls %}H{% endif %}"#, "H"),
    ];
    for (src, want) in cases {
        assert_eq!(render(src), want, "{src}");
    }
}

/// The output of `src` with the message of [`render`], or `Class: message` of the error.
fn outcome(src: &str) -> String {
    let m = json!({"role": "user", "content": "", "n": 0, "tool_calls": []});
    support::outcome(json!({ "m": m }), src)
}

#[test]
fn names_tests_and_comparisons_of_scalars_and_what_they_leave_to_the_general_rules() {
    let cases = [
        // Decided on the operands' scalar values: names, members, loop attributes, namespace
        // attributes, literals, nested comparisons and integer arithmetic.
        (
            "{% for x in 'abcd' %}{% if (m.role == 'user') != (loop.index0 % 2 == 0) %}a{% else %}b{% endif %}{% endfor %}",
            "baba",
        ),
        (
            "{% if m.n == false and m.n < 1 and 1.5 > m.n and m.n + 1 == true %}A{% endif %}",
            "A",
        ),
        (
            "{% set s = 'x' %}{% set ns = namespace(k=2) %}{% if s != 'y' and ns.k * 3 == 6 and ns.k - 3 < 0 and m.n >= -0.0 %}B{% endif %}",
            "B",
        ),
        (
            "{% if 9223372036854775807 + 1 > 9223372036854775807 and m.n ** 2 == 0 and 7 // 2 == 3 and -7 % 3 == 2 %}C{% endif %}",
            "C",
        ),
        (
            "{% set a, b, c = -7, -3, -2 %}{% if 7 % b == c and a // 2 == -4 and 7 // c == -4 and a % b == -1 and 6 // b == c %}G{% endif %}",
            "G",
        ),
        (
            "{% set low = -9223372036854775807 - 1 %}{% set one = -1 %}{% if low - 1 < 0 and low // one > 0 and low % one == 0 %}H{% endif %}",
            "H",
        ),
        (
            "{% set s = 'a' ~ 'b' %}{% if 'b' > 'a' and 'é' > 'z' and true > false and none == none and s == 'ab' and m.role >= 'user' %}I{% endif %}",
            "I",
        ),
        (
            "{% if m.role is string and m.n is not string and nope is undefined and m.missing is not defined and not m.n is none and m.n is divisibleby(3) %}T{% endif %}",
            "T",
        ),
        (
            "{% set e = '' %}{% set f = [0] %}{% for x in [0, 1] %}{% if x %}a{% else %}b{% endif %}{% endfor %}{% if m %}c{% endif %}{% if e %}d{% endif %}{% if f %}g{% endif %}{% if nope %}h{% endif %}{% if range %}i{% endif %}{% if self %}j{% endif %}{% if not nope and not e %}k{% endif %}",
            "bacgijk",
        ),
        // Undefined, container, Markup and concatenated operands take the general rules.
        ("{% if nope == 'a' or nope != nope %}D{% else %}E{% endif %}", "E"),
        (
            "{% if m.tool_calls == [] and ('a' | safe) == 'a' and (m.role ~ 'x') == 'userx' %}F{% endif %}",
            "F",
        ),
        // Operands or comparisons that raise give the general rules' errors.
        (
            "{% if m.role < 1 %}{% endif %}",
            "TypeError: '<' not supported between instances of 'str' and 'int'",
        ),
        (
            "{% if m.n // 0 == 1 %}{% endif %}",
            "ZeroDivisionError: integer division or modulo by zero",
        ),
        ("{% if m.n % 0 == 1 %}{% endif %}", "ZeroDivisionError: integer modulo by zero"),
        ("{% if m.n / 0 == 1 %}{% endif %}", "ZeroDivisionError: division by zero"),
        (
            "{% if m.missing < 1 %}{% endif %}",
            "UndefinedError: 'dict object' has no attribute 'missing'",
        ),
        (
            "{% if m.missing.x is defined %}{% endif %}",
            "UndefinedError: 'dict object' has no attribute 'missing'",
        ),
        (
            "{% if m.n is bogus %}{% endif %}",
            "TemplateRuntimeError: No test named 'bogus' found.",
        ),
        (
            "{% if m.n is divisibleby(0) %}{% endif %}",
            "ZeroDivisionError: integer modulo by zero",
        ),
        (
            "{% if none < 1 %}{% endif %}",
            "TypeError: '<' not supported between instances of 'NoneType' and 'int'",
        ),
        (
            "{% if m.role < none %}{% endif %}",
            "TypeError: '<' not supported between instances of 'str' and 'NoneType'",
        ),
        (
            "{% if (m.n == 0) < 'a' %}{% endif %}",
            "TypeError: '<' not supported between instances of 'bool' and 'str'",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(outcome(src), want, "{src}");
    }
}
