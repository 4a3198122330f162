//! The exact text of representative diagnostics: `Display` is one line
//! (`Kind: message (in NAME, line L, column C)`), `{:#}` adds a code frame with the source line and a caret.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_jinja::{Clock, Context, Error, Template};
use serde_json::json;

fn compile_error(source: &str) -> Error {
    Template::new("demo.jinja", source).expect_err("the template must not compile")
}

fn render_error(source: &str, vars: serde_json::Value) -> Error {
    let t = Template::new("demo.jinja", source).expect("the template compiles");
    let mut ctx = Context::from_json(vars).expect("variables are an object");
    ctx.clock = Clock::Fixed("2025-07-10T12:00:00".to_string());
    t.render(&ctx).expect_err("the render must fail")
}

fn pin(e: &Error, display: &str, framed: &str) {
    assert_eq!(e.to_string(), display, "Display");
    assert_eq!(format!("{e:#}"), framed, "alternate Display");
}

#[test]
fn syntax_error_names_line_and_column() {
    let e = compile_error("{% for m in messages %}\n{{ m.content }}\n{% endfor %}{% if %}");
    pin(
        &e,
        "TemplateSyntaxError: Expected an expression, got 'end of statement block' (in demo.jinja, line 3, column 19)",
        "TemplateSyntaxError: Expected an expression, got 'end of statement block' (in demo.jinja, line 3, column 19)\n\
         3 | {% endfor %}{% if %}\n\
         \x20                     ^",
    );
    assert_eq!(
        (e.template_name(), e.line(), e.column()),
        (Some("demo.jinja"), Some(3), Some(19))
    );
}

#[test]
fn unknown_filter() {
    pin(
        &compile_error("Hello\n  {{ name | shout }}"),
        "TemplateAssertionError: No filter named 'shout'. (in demo.jinja, line 2, column 13)",
        "TemplateAssertionError: No filter named 'shout'. (in demo.jinja, line 2, column 13)\n\
         2 |   {{ name | shout }}\n\
         \x20               ^",
    );
}

#[test]
fn undefined_attribute_at_render_time() {
    pin(
        &render_error(
            "{% for m in messages %}{{ m.content.text }}{% endfor %}",
            json!({"messages": [{"role": "user"}]}),
        ),
        "UndefinedError: 'dict object' has no attribute 'content' (in demo.jinja, line 1, column 36)",
        "UndefinedError: 'dict object' has no attribute 'content' (in demo.jinja, line 1, column 36)\n\
         1 | {% for m in messages %}{{ m.content.text }}{% endfor %}\n\
         \x20                                      ^",
    );
}

#[test]
fn raise_exception_message() {
    pin(
        &render_error(
            "{% if messages[0].role == 'system' %}\n    {{ raise_exception('System role not supported') }}\n{% endif %}",
            json!({"messages": [{"role": "system", "content": "x"}]}),
        ),
        "TemplateError: System role not supported (in demo.jinja, line 2, column 23)",
        "TemplateError: System role not supported (in demo.jinja, line 2, column 23)\n\
         2 |     {{ raise_exception('System role not supported') }}\n\
         \x20                         ^",
    );
}

#[test]
fn type_error() {
    pin(
        &render_error("{{ 'a' + messages }}", json!({"messages": []})),
        "TypeError: can only concatenate str (not \"list\") to str (in demo.jinja, line 1, column 4)",
        "TypeError: can only concatenate str (not \"list\") to str (in demo.jinja, line 1, column 4)\n\
         1 | {{ 'a' + messages }}\n\
         \x20      ^",
    );
}

#[test]
fn tabs_in_the_source_line_keep_the_caret_aligned() {
    let e = compile_error("\t{{ x | nope }}");
    assert_eq!(format!("{e:#}").lines().last(), Some("    \t       ^"));
}

#[test]
fn a_parse_error_before_a_lexing_error_is_the_one_raised() {
    // Jinja2 lexes while it parses: messages recorded from Jinja2 3.1.6.
    let cases = [
        (
            "{% set x = 'it's' %}{{ x }} {{ 'unterminated }}",
            "expected token 'end of statement block', got 's'",
        ),
        (
            "{% if %}{{ 'x }}",
            "Expected an expression, got 'end of statement block'",
        ),
        ("{{ 'a' }}{{ \"b }}", "unexpected char '\"' at 12"),
    ];
    for (source, message) in cases {
        let e = compile_error(source);
        assert_eq!(e.kind().python_name(), "TemplateSyntaxError", "{source}");
        assert_eq!(e.message(), message, "{source}");
    }
}

/// Jinja2 3.1.6's wording for a tag no statement starts with: the end tags the innermost body
/// waits for (after `else`, only the final one), called a nesting mistake when an enclosing body
/// waits for this tag. And an assignment with no target.
#[test]
fn misplaced_tags_are_worded_as_jinja2_words_them() {
    let message = |source: &str| {
        let e = compile_error(source);
        assert_eq!(e.kind(), chatfmt_jinja::ErrorKind::TemplateSyntaxError, "{e}");
        e.message().to_string()
    };
    let cases = [
        (
            "{% for m in messages %}{% if m %}{% endfor %}",
            "Encountered unknown tag 'endfor'. You probably made a nesting mistake. Jinja is expecting this tag, \
             but currently looking for 'elif' or 'else' or 'endif'. The innermost block that needs to be closed \
             is 'if'.",
        ),
        (
            "{% macro f() %}{% for m in messages %}{% endmacro %}",
            "Encountered unknown tag 'endmacro'. You probably made a nesting mistake. Jinja is expecting this tag, \
             but currently looking for 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.",
        ),
        (
            "{% if true %}a{% else %}b{% else %}c{% endif %}",
            "Encountered unknown tag 'else'. Jinja was looking for the following tags: 'endif'. The innermost \
             block that needs to be closed is 'if'.",
        ),
        (
            "{% for m in messages %}{% if true %}{% else %}{% endfor %}",
            "Encountered unknown tag 'endfor'. You probably made a nesting mistake. Jinja is expecting this tag, \
             but currently looking for 'endif'. The innermost block that needs to be closed is 'if'.",
        ),
        ("{% foo %}", "Encountered unknown tag 'foo'."),
        ("{% for %}", "Expected an expression, got 'end of statement block'"),
        ("{% set %}", "Expected an expression, got 'end of statement block'"),
        ("{% for in x %}{% endfor %}", "expected token 'in', got 'x'"),
    ];
    for (source, expected) in cases {
        assert_eq!(message(source), expected, "{source}");
    }
}
