//! Built-ins are charged steps in proportion to their work: 100,000 items of work render as
//! Jinja2 renders them within a bounded number of steps, and quadratic work stops at the step
//! limit. The tests assert results and steps, never wall time (`benches/cost.rs` times them).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod support {
    pub mod cost_cases;
}

use chatfmt_jinja::{Context, ErrorKind, Limits, Template};
use std::time::Duration;
use support::cost_cases::{End, CASES};

fn render_with(src: &str, limits: Limits) -> chatfmt_jinja::Result<chatfmt_jinja::Rendered> {
    let ctx = Context {
        limits,
        ..Context::default()
    };
    Template::new("cost", src)?.render(&ctx)
}

#[test]
fn hundred_thousand_item_cases_render_within_their_steps_or_hit_the_limit() {
    for case in CASES {
        let r = render_with(case.source, Limits::default());
        match (&case.end, r) {
            (End::Text(want), Ok(r)) => {
                assert!(r.text.starts_with(want), "{}: {:.40}", case.name, r.text);
                assert!(
                    r.steps <= case.max_steps,
                    "{}: {} steps, at most {} expected",
                    case.name,
                    r.steps,
                    case.max_steps
                );
            }
            (End::Limit(limit), Err(e)) => {
                assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{}: {e}", case.name);
                assert!(e.message().contains(limit), "{}: {e}", case.name);
            }
            (_, Ok(r)) => panic!("{}: rendered {:.40}, expected a limit error", case.name, r.text),
            (_, Err(e)) => panic!("{}: {e}", case.name),
        }
    }
}

fn steps(src: &str) -> u64 {
    render_with(src, Limits::default()).expect(src).steps
}

#[test]
fn unique_of_100k_ints_is_charged_one_step_per_item() {
    let base = steps("{{ range(100000)|list|length }}");
    let unique = steps("{{ range(100000)|unique|list|length }}");
    // The items, and the call.
    assert_eq!(unique - base, 100_000 + 4);
    assert!(unique <= 200_000, "{unique}");
}

#[test]
fn charges_grow_with_the_work() {
    // A sort is charged n log2 n comparisons before it starts, on top of reading the items, and
    // then each comparison of its keys (one-item lists) as it makes it.
    let sort = steps("{{ range(1024)|sort|length }}") - steps("{{ range(1024)|list|length }}");
    let upfront = 1024 + 1024 * 11 - 1024 / 8;
    assert!((upfront..=upfront + 1024 * 11).contains(&sort), "{sort}");
    // `in` scans a list, but answers for a range or a dict at once.
    let r = "{% set r = range(100000) %}";
    assert_eq!(steps(&format!("{r}{{{{ 5 in r }}}}")) - steps(r), 1);
    assert_eq!(
        steps("{% set d = dict.fromkeys(range(1000)) %}{{ 5 in d }}")
            - steps("{% set d = dict.fromkeys(range(1000)) %}"),
        1
    );
    assert_eq!(
        steps("{% set l = range(1000)|list %}{{ 5 in l }}") - steps("{% set l = range(1000)|list %}"),
        1001
    );
    // Strings are charged by the 16 bytes scanned, or the 256 bytes copied.
    let s = "{% set s = 'x' * 16000 %}";
    assert_eq!(steps(s) - 1, 16000 / 256);
    assert_eq!(steps(&format!("{s}{{{{ 'y' in s }}}}")) - steps(s), 1001);
    // The statement, the scan, the calls of `split` and `length`.
    assert_eq!(
        steps(&format!("{s}{{{{ s.split('x')|length }}}}")) - steps(s),
        1 + 1000 + 4 + 4
    );
}

#[test]
fn dict_keys_follow_python_equality_and_hashing() {
    let render = |src: &str| render_with(src, Limits::default()).map(|r| r.text);
    assert_eq!(render("{{ {1: 'a', 1.0: 'b', true: 'c'} }}").unwrap(), "{1: 'c'}");
    assert_eq!(
        render("{{ {0: 'a', false: 'b', 0.0: 'c', -0.0: 'd'} }}").unwrap(),
        "{0: 'd'}"
    );
    assert_eq!(render("{{ {(1, 'x'): 1, (1.0, 'x'): 2}|length }}").unwrap(), "1");
    assert_eq!(render("{{ dict(a=1, b=2, a2=3)|list }}").unwrap(), "['a', 'b', 'a2']");
    assert_eq!(
        render("{% set d = {'b': 1, 'a': 2} %}{{ d.b }}{{ 1.0 in {1: 0} }}{{ 'a' in d }}").unwrap(),
        "1TrueTrue"
    );
    assert_eq!(render("{{ [1, 1.0, true, 2, 2.0]|unique|list }}").unwrap(), "[1, 2]");
    for src in [
        "{{ {[1]: 2} }}",
        "{{ [1] in {} }}",
        "{{ [[1]]|unique|list }}",
        "{{ dict.fromkeys([[1]]) }}",
    ] {
        let e = render(src).expect_err(src);
        assert_eq!(e.kind(), ErrorKind::TypeError, "{src}");
        assert_eq!(e.message(), "unhashable type: 'list'", "{src}");
    }
}

#[test]
fn a_deadline_stops_a_long_render() {
    let src = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    let limits = Limits {
        max_steps: u64::MAX,
        max_duration: Some(Duration::from_millis(50)),
        ..Limits::default()
    };
    let e = render_with(src, limits).expect_err("a deadline");
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    assert!(e.message().contains("Limits::max_duration"), "{e}");
    // A deadline far away changes nothing.
    let limits = Limits {
        max_duration: Some(Duration::from_secs(3600)),
        ..Limits::default()
    };
    assert_eq!(render_with("{{ range(3)|list }}", limits).unwrap().text, "[0, 1, 2]");
}

#[test]
fn steps_are_counted_per_render() {
    let t = Template::new("t", "{% for i in range(10) %}{{ i }}{% endfor %}").unwrap();
    let ctx = Context::default();
    let first = t.render(&ctx).unwrap().steps;
    assert_eq!(t.render(&ctx).unwrap().steps, first);
    // The loop statement, the call of `range` (4) and its ten numbers (1), ten iterations of one
    // statement each.
    assert_eq!(first, 1 + 4 + 1 + 10 * 2);
}

#[test]
fn comparing_big_values_in_a_loop_runs_out_of_steps() {
    for src in [
        "{% set a = range(100000)|list %}{% set b = range(100000)|list %}{% for i in range(100000) %}{% if a == b %}{% endif %}{% endfor %}",
        "{% set a = range(100000)|list %}{% for i in range(100000) %}{% if a < a %}{% endif %}{% endfor %}",
        "{% set s = 'x' * 8000000 %}{% for i in range(100000) %}{% set c = s[4000000] %}{% set t = s[4000000:4000001] %}{% endfor %}",
    ] {
        let e = render_with(src, Limits::default()).expect_err(src);
        assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{src}");
        assert!(e.message().contains("Limits::max_steps"), "{e}");
    }
    // One comparison is charged its items.
    let base = "{% set a = range(1000)|list %}{% set b = range(1000)|list %}";
    assert_eq!(steps(&format!("{base}{{{{ a == b }}}}")) - steps(base), 1 + 1000);
}

/// A filter's shortcut on a borrowed string (`x | trim`) charges the steps of the full call.
#[test]
fn a_filter_shortcut_charges_the_call() {
    let ctx = Context::from_json(serde_json::json!({"m": {"c": "  text  "}})).unwrap();
    let steps = |src: &str| {
        let r = Template::new("cost", src).unwrap().render(&ctx).unwrap();
        assert_eq!(r.text, "[text]", "{src}");
        r.steps
    };
    assert_eq!(steps("[{{ m.c | trim }}]"), steps("[{{ m.c | trim(none) }}]"));
    assert_eq!(
        steps("{% set t = m['c'] | trim %}[{{ t }}]"),
        steps("{% set t = m['c'] | trim(chars=none) %}[{{ t }}]")
    );
}
