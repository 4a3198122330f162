//! A loop's condition (`for x in xs if cond`) is evaluated as the loop reaches each item, as
//! Jinja2's loop filter is, so it sees what earlier iterations changed; a generator is iterated
//! once, item by item. Expected outputs recorded from transformers' Jinja2 environment (Jinja2 3.1.6).

#![allow(clippy::expect_used)]

#[path = "support/outcome.rs"]
mod support;

use serde_json::json;

#[test]
fn conditions_see_what_earlier_iterations_changed() {
    let context = json!({
        "d": {"b": 1, "a": [1, 2]},
        "msgs": [{"role": "user"}, {"role": "assistant"}],
    });
    let render = |src: &str| support::outcome(context.clone(), src);
    let cases = [
        (
            "{% set ns = namespace(n=0) %}{% for x in [1,2,3] if ns.n < 2 %}{% set ns.n = ns.n + 1 %}{{ x }}{% endfor %}",
            "12",
        ),
        (
            "{% set ns = namespace(n=0) %}{% for k, v in d|items if ns.n < 1 %}{% set ns.n = ns.n + 1 %}{{ k }}{% endfor %}",
            "b",
        ),
        (
            "{% set ns = namespace(n=0) %}{% for k, v in d.items() if ns.n < 1 %}{% set ns.n = ns.n + 1 %}{{ k }}{% endfor %}",
            "b",
        ),
        (
            "{% set ns = namespace(n=0) %}{% for x in msgs|map(attribute='role') if ns.n < 1 %}{% set ns.n = ns.n + 1 %}{{ x }}{% endfor %}",
            "user",
        ),
        ("{% for x in [1,2,3] if x > 1 %}{{ x }}{% else %}E{% endfor %}", "23"),
        ("{% for x in [1,2,3] if x > 5 %}{{ x }}{% else %}E{% endfor %}", "E"),
        ("{% for x in [1, 0, 2] if 1 / x %}{{ x }}{% endfor %}", "ZeroDivisionError: division by zero"),
        ("{% for x in [1,2] if y is defined %}{% set y = 1 %}{{ x }}{% endfor %}", ""),
        (
            "{% set g = msgs|map(attribute='role') %}{% for x in g if x == 'user' %}{{ x }}{% break %}{% endfor %}{{ g|list }}",
            "user['assistant']",
        ),
        // With `loop`, its length is known before the body runs, as Jinja2 finds it.
        (
            "{% set ns = namespace(n=0) %}{% for x in [1,2,3] if ns.n < 2 %}{% set ns.n = ns.n + 1 %}{{ x }}{{ loop.length }}{% endfor %}",
            "132333",
        ),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(src, want)| render(src) != *want)
        .map(|(src, want)| format!("{src}\n  want {want:?}\n  got  {:?}", render(src)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
