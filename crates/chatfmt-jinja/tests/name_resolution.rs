//! Filter and test names resolve when a template compiles. An unknown one fails then, with
//! `TemplateAssertionError`, unless it sits in an `if` body or a conditional expression: there it
//! fails only when that code runs, with `TemplateRuntimeError`. The expected results are Jinja2
//! 3.1.6's (sandboxed environment).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chatfmt_jinja::{Context, ErrorKind, Template};
use serde_json::json;

/// `Ok(text)`, or the error's kind, message and whether compiling (rather than rendering) failed.
fn run(src: &str) -> Result<String, (bool, ErrorKind, String)> {
    let t = Template::new("t", src).map_err(|e| (true, e.kind(), e.message().to_string()))?;
    let ctx = Context::from_json(json!({"x": 1})).unwrap();
    t.render(&ctx)
        .map(|r| r.text)
        .map_err(|e| (false, e.kind(), e.message().to_string()))
}

fn compile_error(kind: ErrorKind, msg: &str) -> Result<String, (bool, ErrorKind, String)> {
    Err((true, kind, msg.to_string()))
}

fn render_error(kind: ErrorKind, msg: &str) -> Result<String, (bool, ErrorKind, String)> {
    Err((false, kind, msg.to_string()))
}

#[test]
fn unknown_names_fail_at_compile_time_outside_conditions() {
    use ErrorKind::TemplateAssertionError as A;
    assert_eq!(run("{{ x|nope }}"), compile_error(A, "No filter named 'nope'."));
    assert_eq!(run("{{ x is nope }}"), compile_error(A, "No test named 'nope'."));
    assert_eq!(
        run("{% filter nope %}x{% endfilter %}"),
        compile_error(A, "No filter named 'nope'.")
    );
    // A loop or macro body inside an `if` is a frame of its own, no longer conditional.
    assert_eq!(
        run("{% if false %}{% for i in [1] %}{{ i|nope }}{% endfor %}{% endif %}ok"),
        compile_error(A, "No filter named 'nope'.")
    );
    assert_eq!(
        run("{% if false %}{% macro m() %}{{ 1|nope }}{% endmacro %}{% endif %}ok"),
        compile_error(A, "No filter named 'nope'.")
    );
}

#[test]
fn unknown_names_in_conditions_fail_only_when_run() {
    use ErrorKind::TemplateRuntimeError as R;
    assert_eq!(run("{% if false %}{{ x|nope }}{% endif %}ok"), Ok("ok".to_string()));
    assert_eq!(run("{{ x|nope if false else 1 }}"), Ok("1".to_string()));
    assert_eq!(
        run("{% for i in [1] %}{% if false %}{{ i is nope }}{% endif %}{% endfor %}ok"),
        Ok("ok".to_string())
    );
    assert_eq!(
        run("{% if true %}{{ x|nope }}{% endif %}"),
        render_error(R, "No filter named 'nope' found.")
    );
    assert_eq!(
        run("{{ 1 if x is nope else 2 }}"),
        render_error(R, "No test named 'nope' found.")
    );
    // The value and the arguments are evaluated first.
    assert_eq!(
        run("{% if true %}{% set y %}a{% endset %}{{ y|nope(1/0) }}{% endif %}"),
        render_error(ErrorKind::ZeroDivisionError, "division by zero")
    );
}

#[test]
fn names_given_as_values_resolve_when_called() {
    assert_eq!(
        run("{{ [1]|map('nope')|list }}"),
        render_error(ErrorKind::TemplateRuntimeError, "No filter named 'nope'.")
    );
    assert_eq!(run("{{ [1, 2]|select('odd')|list }}"), Ok("[1]".to_string()));
    assert_eq!(
        run("{{ 'upper' is filter }}/{{ 'odd' is test }}"),
        Ok("True/True".to_string())
    );
}

#[test]
fn the_first_unknown_name_is_the_one_jinja2_compiles_first() {
    // Jinja2 compiles a filter or test call before its operand, a loop's condition before its
    // iterable, and block bodies before the filter or call around them.
    use ErrorKind::TemplateAssertionError as A;
    let cases = [
        ("{{ x|nof1|nof2 }}", "No filter named 'nof2'."),
        ("{{ (x|nof1) is not1 }}", "No test named 'not1'."),
        ("{{ x is not1(y|nof2) }}", "No test named 'not1'."),
        ("{{ x|nof1(y|nof2) }}", "No filter named 'nof1'."),
        ("{{ (1|nof2 ~ 2|nof1) }}", "No filter named 'nof2'."),
        ("{% for a in b|nof1 if a|nof2 %}{% endfor %}", "No filter named 'nof2'."),
        (
            "{% filter nof1 %}{{ x|nof2 }}{% endfilter %}",
            "No filter named 'nof2'.",
        ),
        ("{% set v | nof1 %}{{ x|nof2 }}{% endset %}", "No filter named 'nof2'."),
        (
            "{% macro m() %}{{ caller() }}{% endmacro %}{% call(a=x|nof1) m(y|nof2) %}{{ z|nof3 }}{% endcall %}",
            "No filter named 'nof1'.",
        ),
        (
            "{% call m(y|nof2) %}{{ z|nof3 }}{% endcall %}",
            "No filter named 'nof3'.",
        ),
    ];
    for (src, msg) in cases {
        assert_eq!(run(src), compile_error(A, msg), "{src}");
    }
}
