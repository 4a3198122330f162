//! Hostile templates end with the right error after bounded work: the tests assert the error kind
//! and the budget it names, never wall time (`scripts/hostile.sh` times them in release mode).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_jinja::{Context, ErrorKind, Limits, Template};

fn render(src: &str) -> chatfmt_jinja::Result<String> {
    let t = Template::new("hostile", src)?;
    t.render(&Context::default()).map(|r| r.text)
}

fn kind_of(src: &str) -> (ErrorKind, String) {
    match render(src) {
        Ok(out) => panic!("expected an error, rendered {} bytes", out.len()),
        Err(e) => (e.kind(), e.message().to_string()),
    }
}

#[test]
fn infinite_macro_recursion_is_a_recursion_error() {
    let (kind, _) = kind_of("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}");
    assert_eq!(kind, ErrorKind::RecursionError);
}

#[test]
fn a_macro_kept_past_its_loop_still_renders() {
    let src = "{% set ns = namespace() %}{% for i in [7] %}{% macro m() %}{{ i }}{% endmacro %}\
               {% set ns.m = m %}{% endfor %}{{ ns.m() }}{{ ns.m() }}";
    assert!(render(src).is_ok());
}

#[test]
fn infinite_recursive_loop_is_a_recursion_error() {
    let (kind, _) = kind_of("{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}");
    assert_eq!(kind, ErrorKind::RecursionError);
}

#[test]
fn a_loop_of_a_trillion_steps_runs_out_of_steps() {
    let src = "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100) %}{% endfor %}{% endfor %}{% endfor %}";
    let (kind, msg) = kind_of(src);
    assert_eq!(kind, ErrorKind::LimitExceeded);
    assert!(msg.contains("max_steps (20000000)"), "{msg}");
}

#[test]
fn a_string_doubled_sixty_times_hits_the_value_limit() {
    let src = "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}";
    let (kind, msg) = kind_of(src);
    assert_eq!(kind, ErrorKind::LimitExceeded);
    assert!(msg.contains("max_value_size (16777216)"), "{msg}");
    let src = "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}";
    assert_eq!(kind_of(src).0, ErrorKind::LimitExceeded);
    assert_eq!(kind_of("{{ 'x' * 10 ** 12 }}").0, ErrorKind::LimitExceeded);
}

#[test]
fn a_billion_item_range_is_refused_as_jinja_does() {
    let (kind, msg) = kind_of("{% for i in range(10 ** 9) %}{% endfor %}");
    assert_eq!(kind, ErrorKind::OverflowError);
    assert!(msg.contains("MAX_RANGE (100000)"), "{msg}");
}

#[test]
fn deeply_nested_literals_and_blocks_hit_the_nesting_limit() {
    let literal = format!("{{{{ {}1{} }}}}", "[".repeat(100_000), "]".repeat(100_000));
    let (kind, msg) = kind_of(&literal);
    assert_eq!(kind, ErrorKind::LimitExceeded);
    assert!(msg.contains("500 levels"), "{msg}");
    let blocks = format!("{}x{}", "{% if true %}".repeat(100_000), "{% endif %}".repeat(100_000));
    assert_eq!(kind_of(&blocks).0, ErrorKind::LimitExceeded);
}

#[test]
fn runtime_nesting_is_bounded() {
    let src = "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}{% endfor %}";
    let (kind, msg) = kind_of(src);
    assert_eq!(kind, ErrorKind::LimitExceeded);
    assert!(msg.contains("nested deeper than 500 levels"), "{msg}");
    let src = "{% set ns = namespace(x=[]) %}{% for i in range(400) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x == ns.x }}{{ (ns.x|string)|length }}";
    assert_eq!(render(src).expect("renders"), "True802");
}

#[test]
fn output_is_bounded() {
    let t = Template::new("hostile", "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}").expect("compiles");
    let ctx = Context {
        limits: Limits {
            max_output_bytes: 1 << 20,
            ..Limits::default()
        },
        ..Context::default()
    };
    let e = t.render(&ctx).expect_err("output limit");
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
    assert!(e.message().contains("max_output_bytes (1048576)"));
    assert_eq!(e.line(), Some(1));
}

#[test]
fn a_ten_megabyte_template_compiles_and_renders() {
    let piece = "{{ 'abc' }} text ";
    let reps = 10 * 1024 * 1024 / piece.len();
    let out = render(&piece.repeat(reps)).expect("renders");
    assert_eq!(out.len(), reps * "abc text ".len());
}

#[test]
fn limits_never_trip_on_ordinary_templates_and_are_configurable() {
    let t = Template::new("t", "{% for i in range(10) %}{{ i }}{% endfor %}").expect("compiles");
    let tight = Context {
        limits: Limits {
            max_steps: 5,
            ..Limits::default()
        },
        ..Context::default()
    };
    assert_eq!(t.render(&tight).expect_err("steps").kind(), ErrorKind::LimitExceeded);
    assert_eq!(t.render(&Context::default()).expect("renders").text, "0123456789");
}

/// Found by the `render` fuzz target: each `join` of a string puts the separator between its
/// characters, so a chain of joins grows the string geometrically, and every step used to build a
/// list of one value per character (gigabytes) before the size was checked.
#[test]
fn chained_joins_of_a_string_hit_the_value_limit() {
    let src = "{{ ('abcdefghij' * 10)|join('0123456789')|join('0123456789')|join('0123456789')|join('0123456789')|join('0123456789')|join('0123456789')|join(',') }}";
    let (kind, msg) = kind_of(src);
    assert_eq!(kind, ErrorKind::LimitExceeded);
    assert!(msg.contains("max_value_size (16777216)"), "{msg}");
}

#[test]
fn iterating_a_huge_string_counts_the_list_of_its_characters() {
    let src = "{% set s = 'x' * 10000000 %}{% for c in s %}{% endfor %}";
    let (kind, msg) = kind_of(src);
    assert_eq!(kind, ErrorKind::LimitExceeded);
    assert!(msg.contains("max_value_size (16777216)"), "{msg}");
}

/// Found by the `render` fuzz target: `replace` with a long replacement built a string far over the
/// value limit (hundreds of MB) before anything checked it.
#[test]
fn replace_is_checked_before_it_builds() {
    for src in [
        "{{ ('-' * 100000)|replace('-', 'x' * 1000) }}",
        "{{ ('-' * 100000).replace('-', 'x' * 1000) }}",
        "{{ ('-' * 100000)|replace('', 'x' * 1000) }}",
    ] {
        let (kind, msg) = kind_of(src);
        assert_eq!(kind, ErrorKind::LimitExceeded, "{src}");
        assert!(msg.contains("max_value_size (16777216)"), "{msg}");
    }
}

/// Found by the `render` fuzz target (a 10-second timeout): `join`, `upper` and `replace` chained
/// over a string of non-ASCII characters, each step megabytes long. String results are charged
/// steps by their size and checked against the value limit, so the chain stops at the limit.
#[test]
fn chains_of_string_filters_stop_at_the_value_limit() {
    let src = "{{ ('\u{fffd}' * 60 ~ 'a-b')|join(' -')|replace('-', 'x' * 400)|join(' -')|replace('-', 'x' * 400)|upper|join(' -') }}";
    let (kind, msg) = kind_of(src);
    assert_eq!(kind, ErrorKind::LimitExceeded);
    assert!(msg.contains("max_value_size (16777216)"), "{msg}");
}

/// Steps and quotients at the edge of the 64-bit range give Python's results, not a crash.
#[test]
fn extreme_slice_steps_and_integer_edges_match_python() {
    for (src, want) in [
        (r#"{{ "hello"[1::9223372036854775807] }}"#, "e"),
        (r#"{{ "hello"[::-9223372036854775807] }}"#, "o"),
        ("{{ [1, 2, 3][1::9223372036854775807] }}", "[2]"),
        ("{{ (-9223372036854775807 - 1) // -1 }}", "9223372036854775808"),
        ("{{ (-9223372036854775807 - 1) % -1 }}", "0"),
    ] {
        assert_eq!(render(src).expect(src), want, "{src}");
    }
}
