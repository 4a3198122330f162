//! Built-ins bind their arguments as the Python functions behind them do, and the filters Jinja2
//! guards with `if value:` give nothing for a falsy input. Expected outputs and errors were recorded
//! from transformers' Jinja2 environment (they are cases of `tests/data/builtins.jsonl`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_jinja::{Context, Template};

fn render(src: &str) -> Result<String, (String, String)> {
    let run = Template::new("t", src).and_then(|t| t.render(&Context::default()).map(|r| r.text));
    run.map_err(|e| (e.kind().python_name().to_string(), e.message().to_string()))
}

#[test]
fn arguments_and_falsy_inputs_match_jinja2() {
    let ok = |s: &str| Ok::<String, (String, String)>(s.to_string());
    let raised = |class: &str, message: &str| Err::<String, _>((class.to_string(), message.to_string()));
    let cases = [
        (
            "{{ 'aaa'|replace('a') }}",
            raised(
                "TypeError",
                "do_replace() missing 1 required positional argument: 'new'",
            ),
        ),
        (
            "{{ 'aaa'|replace('a', 'b', 1.5) }}",
            raised("TypeError", "'float' object cannot be interpreted as an integer"),
        ),
        ("{{ 'aaa'|replace('a', 'b', 2) }}", ok("bba")),
        ("{{ 'aaa'|replace('a', 'b', count=1) }}", ok("baa")),
        (
            "{{ 'aaa'|replace('a', 'b', bogus=1) }}",
            raised("TypeError", "do_replace() got an unexpected keyword argument 'bogus'"),
        ),
        (
            "{% set ns = namespace(a=1) %}{{ 1 in ns }}",
            raised("TypeError", "argument of type 'TemplateNamespace' is not iterable"),
        ),
        (
            "{{ 1 is eq(1, 2) }}",
            raised("TypeError", "eq expected 2 arguments, got 3"),
        ),
        (
            "{{ 1 is eq(other=1) }}",
            raised("TypeError", "_operator.eq() takes no keyword arguments"),
        ),
        ("{{ 6 is divisibleby(3) }}", ok("True")),
        ("{{ none|select|list }}", ok("[]")),
        ("{{ ''|reject|list }}", ok("[]")),
        ("{{ 0|map('upper')|list }}", ok("[]")),
        ("{{ none|selectattr('x')|list }}", ok("[]")),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(src, want)| {
            let got = render(src);
            (got != *want).then(|| format!("{src}: want {want:?}, got {got:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `select`/`selectattr` with `equalto` (`eq`, `==`) compare each item with the argument taken once;
/// other tests, and a missing or extra argument, keep Jinja2's results and errors.
#[test]
fn selecting_by_equality_matches_jinja2() {
    let ok = |s: &str| Ok::<String, (String, String)>(s.to_string());
    let raised = |message: &str| Err::<String, _>(("TypeError".to_string(), message.to_string()));
    let cases = [
        (
            "{{ [{'r': 1}, {'r': '1'}, {'r': true}, {'r': 1.0}] | selectattr('r', 'equalto', 1) | list }}",
            ok("[{'r': 1}, {'r': True}, {'r': 1.0}]"),
        ),
        (
            "{{ [{'r': 'a'}, {'r': 'b'}] | rejectattr('r', '==', 'a') | list }}{{ [2, 3, 2] | select('eq', 2) | list }}",
            ok("[{'r': 'b'}][2, 2]"),
        ),
        (
            "{{ ['<a>' | safe, '<a>', 'b'] | select('equalto', '<a>') | list | length }}{{ [1, 2] | select('ne', 1) | list }}",
            ok("2[2]"),
        ),
        (
            "{{ [{'r': 1}] | selectattr('r', 'equalto') | list }}",
            raised("eq expected 2 arguments, got 1"),
        ),
        (
            "{{ [{'r': 1}] | selectattr('r', 'equalto', 1, 2) | list }}",
            raised("eq expected 2 arguments, got 3"),
        ),
        ("{{ [{'r': 1}] | selectattr('x', 'equalto', 1) | list }}", ok("[]")),
    ];
    for (src, want) in cases {
        assert_eq!(render(src), want, "{src}");
    }
}
