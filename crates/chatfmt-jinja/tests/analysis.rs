//! `Template::analyze`: which variables a template reads from its caller.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_jinja::Template;

fn free_variables(source: &str) -> Vec<String> {
    let t = Template::new("demo.jinja", source).expect("the template compiles");
    t.analyze().free_variables.into_iter().collect()
}

#[test]
fn a_variable_read_before_the_template_assigns_it_is_the_callers() {
    let source = "{%- if not date_string is defined %}{% set date_string = '26 Jul 2024' %}{% endif %}\
                  {%- if messages[0].role == 'system' %}{% set messages = messages[1:] %}{% endif %}\
                  {{- date_string }}{% for m in messages %}{{ m.content }}{% endfor %}";
    assert_eq!(free_variables(source), ["date_string", "messages"]);
}

#[test]
fn assignments_in_a_loop_or_macro_body_stay_there() {
    let source = "{%- set ns = namespace(n=0) %}{% for m in messages %}{% set last = m.content %}\
                  {%- set ns.n = ns.n + 1 %}{% endfor %}{{ last }}{{ ns.n }}\
                  {%- macro show(x) %}{% set shown = x %}{{ shown }}{{ show }}{{ later(x) }}{% endmacro %}\
                  {%- macro later(y) %}{{ y }}{% endmacro %}{{ show(shown) }}";
    assert_eq!(free_variables(source), ["last", "messages", "shown"]);
}

#[test]
fn message_fields_are_keys_read_not_methods_called() {
    let source = "{%- for m in messages %}{% set c = m.content if m.content is string else '' %}\
                  {{- c.lstrip() }}{{ m.get('reasoning_content') }}{{ m['role'] }}{% endfor %}";
    let t = Template::new("demo.jinja", source).expect("the template compiles");
    let fields: Vec<String> = t.analyze().message_fields.into_iter().collect();
    assert_eq!(fields, ["content", "reasoning_content", "role"]);
}

#[test]
fn generation_blocks_are_known_from_compilation_as_the_analysis_finds_them() {
    for (source, expected) in [
        ("{% for m in messages %}{{ m.content }}{% endfor %}", false),
        (
            "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}{% endfor %}",
            true,
        ),
        (
            "{% macro a(m) %}{% if m %}{% generation %}{{ m }}{% endgeneration %}{% endif %}{% endmacro %}",
            true,
        ),
        ("{% if false %}{% generation %}x{% endgeneration %}{% endif %}", true),
    ] {
        let t = Template::new("demo.jinja", source).expect("the template compiles");
        assert_eq!(t.has_generation_blocks(), expected, "{source}");
        assert_eq!(t.analyze().uses_generation, expected, "{source}");
    }
}
