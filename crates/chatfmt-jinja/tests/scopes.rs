//! Variables resolve to frame slots when a template compiles; Jinja2's scoping still decides what
//! each name reads. The expected results are Jinja2 3.1.6's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/outcome.rs"]
mod support;

use chatfmt_jinja::{Context, Template};
use serde_json::json;

fn render(src: &str) -> String {
    support::outcome(json!({"x": 1, "messages": [1, 2, 3]}), src)
}

#[test]
fn loop_bodies_shadow_without_leaking() {
    assert_eq!(
        render("{% set a = 1 %}{% for i in [1, 2] %}{{ a }}{% set a = i * 10 %}{{ a }}{% endfor %}{{ a }}"),
        "1101201"
    );
    assert_eq!(
        render(
            "{% for i in [1] %}{% for j in [2] %}{{ i }}{{ j }}{% set i = 9 %}{{ i }}{% endfor %}{{ i }}{% endfor %}"
        ),
        "1291"
    );
    assert_eq!(
        render("{% for i in range(5) if i is odd %}{{ i }}{{ loop.index }}{% endfor %}"),
        "1132"
    );
    assert_eq!(
        render("{% for i in [[1, [2]], [3]] recursive %}{% if i is iterable %}{{ loop(i) }}{% else %}{{ i }}{{ loop.depth }}{% endif %}{% endfor %}"),
        "122332"
    );
}

#[test]
fn context_variables_until_assigned() {
    assert_eq!(render("{{ x }}{% set x = 2 %}{{ x }}"), "12");
    assert_eq!(render("{% set messages = messages[1:] %}{{ messages | length }}"), "2");
    assert_eq!(render("{{ y is defined }}{{ range(2) | list }}"), "False[0, 1]");
}

#[test]
fn namespaces_with_blocks_and_macros() {
    assert_eq!(
        render("{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"),
        "6"
    );
    assert_eq!(
        render("{% with a = 5 %}{% set b = a + 1 %}{{ b }}{% endwith %}{{ b is defined }}"),
        "6False"
    );
    assert_eq!(
        render("{% macro m() %}{{ v }}{% endmacro %}{% set v = 3 %}{{ m() }}"),
        "3"
    );
    assert_eq!(
        render("{% macro m(x) %}[{{ caller(x) }}]{% endmacro %}{% call(y) m(4) %}{{ y * 2 }}{% endcall %}"),
        "[8]"
    );
    assert_eq!(
        render(
            "{% macro m(a, b=a) %}{{ a }}{{ b }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1) }}{{ m(1, 2, 3, k=4) }}"
        ),
        "11(){}12(3,){'k': 4}"
    );
}

#[test]
fn blocks_called_through_self_search_by_name() {
    assert_eq!(
        render("{% set x = 1 %}{% block b %}{% set y = 2 %}{{ x }}{{ y }}{% endblock %}|{{ self.b() }}"),
        "12|12"
    );
}

/// A loop over a list the caller lends (as chat messages are) is iterated in place unless a filter
/// needs the items (its `loop` object reads them in place too); either way it reads as a list.
#[test]
fn loops_over_a_borrowed_list() {
    use chatfmt_jinja::{Borrowed, Layer};
    let items = [json!({"r": "a"}), json!({"r": "b"})];
    let render = |src: &str, items: &[serde_json::Value]| {
        let t = Template::new("t", src).unwrap();
        let ctx = Context {
            layers: &[Layer::Var("messages", Borrowed::List(items))],
            ..Context::default()
        };
        t.render(&ctx).unwrap().text
    };
    let cases = [
        (
            "{% for m in messages %}{{ m.r }}{% set s = m.r %}{{ s }}{% endfor %}{{ s is defined }}",
            "aabbFalse",
        ),
        (
            "{% for m in messages %}{{ x is defined }}{% set x = 1 %}{% endfor %}",
            "FalseFalse",
        ),
        (
            "{% for m in messages %}{{ m['r'] }}{% break %}{% endfor %}{{ messages | length }}",
            "a2",
        ),
        (
            "{% for m in messages %}{% continue %}{% else %}e{% endfor %}{{ messages[1].r }}",
            "eb",
        ),
        (
            "{% for m in messages if m.r == 'b' %}{{ m.r }}{{ loop.length }}{% endfor %}",
            "b1",
        ),
        (
            "{% for m in messages %}{% for n in messages %}{{ m.r }}{{ n.r }}{% endfor %}{% endfor %}",
            "aaabbabb",
        ),
        (
            "{{ messages | length }}{% for m in messages %}{{ m.r }}{% endfor %}",
            "2ab",
        ),
        // Read as a list value first, then iterated in place: the items are the same objects.
        (
            "{% set u = messages|selectattr('r', 'equalto', 'a')|list %}{% for m in messages %}{{ m is sameas u[0] }}{{ m == u[0] }}{{ loop.length }}{% endfor %}",
            "TrueTrue2FalseFalse2",
        ),
        (
            "{{ messages[1].r }}{% for m in messages %}{{ m.r }}{% endfor %}{{ messages|first is sameas messages[0] }}",
            "babTrue",
        ),
        (
            "{% for m in messages %}{{ m.r }}{{ loop.last }}{% endfor %}",
            "aFalsebTrue",
        ),
        (
            "{% for m in messages %}{{ loop.index }}{{ loop.revindex0 }}{{ loop.length }}{{ loop.first }}{{ loop.last }}{{ loop.previtem is defined }}{{ loop.nextitem is defined }}{{ loop.cycle('x', 'y') }}{{ loop.changed(m.r) }}{{ loop }};{% endfor %}",
            "112TrueFalseFalseTruexTrue<LoopContext 1/2>;202FalseTrueTrueFalseyTrue<LoopContext 2/2>;",
        ),
        (
            "{% for m in messages %}{% if loop.last %}{{ loop.previtem.r }}{% else %}{{ loop.nextitem['r'] }}{% endif %}{% endfor %}",
            "ba",
        ),
        (
            "{% for m in messages %}{% for n in messages %}{{ loop.depth }}{{ n.r }}{% endfor %}{{ loop.index0 }}{% endfor %}",
            "1a1b01a1b1",
        ),
        (
            "{% for m in messages recursive %}{{ m.r }}{% if loop.depth == 1 %}[{{ loop([{'r': 'c'}]) }}]{% endif %}{% endfor %}",
            "a[c]b[c]",
        ),
        (
            "{{ messages[0].r }}{{ messages[-1]['r'] }}{% for m in messages %}{{ m.r }}{% endfor %}",
            "abab",
        ),
        (
            "{{ messages[2] is defined }}{{ messages[-3] is defined }}{{ messages[-2].r }}{{ messages[1:][0].r }}",
            "FalseFalseab",
        ),
        (
            "{% set messages = messages[1:] %}{{ messages[0].r }}{% for m in messages %}{{ m.r }}{% endfor %}",
            "bb",
        ),
        (
            "{% for m in messages %}{% for c in 'xy' %}{{ m.r }}{{ loop.index }}{% endfor %}{% endfor %}",
            "a1a2b1b2",
        ),
        (
            "{% for m in messages %}{% for c in [] %}{% else %}{{ loop.index }}{% endfor %}{% endfor %}",
            "12",
        ),
        (
            "{% for m in messages %}{% for c in [loop.index] %}{{ c }}{{ loop.length }}{% endfor %}{% endfor %}",
            "1121",
        ),
        (
            "{% for m in messages %}{% for c in 'xy' if loop is defined %}{{ c }}{% endfor %}{% endfor %}",
            "xyxy",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(render(src, &items), want, "{src}");
    }
    assert_eq!(
        render("{% for m in messages %}x{% else %}empty{% endfor %}", &[]),
        "empty"
    );
}

/// The length of a list the caller lends, arithmetic on it and slices of it are read in place, as
/// Jinja2 3.1.6 computes them on the list (the expected outputs are its own); a name the template
/// binds itself takes the general path.
#[test]
fn lengths_and_slices_of_a_borrowed_list() {
    use chatfmt_jinja::{Borrowed, Layer};
    let items = [json!({"r": "a"}), json!({"r": "b"})];
    let ctx = Context {
        layers: &[Layer::Var("messages", Borrowed::List(&items))],
        ..Context::default()
    };
    let render = |src: &str| support::outcome_in(&ctx, src);
    let cases = [
        (
            "{{ messages|length }}{{ messages|count }}{% set n = messages|length - 1 %}{{ n }}{{ (messages|length) * 2 - 1 }}{{ messages|length // 0 if false else 7 }}",
            "22137",
        ),
        (
            "{{ messages[::-1]|map(attribute='r')|join }}{{ messages[1:]|length }}{{ messages[:-1][0].r }}{{ messages[::2] }}{{ messages[5:] }}",
            "ba1a[{'r': 'a'}][]",
        ),
        (
            "{% set r = messages[::-1] %}{% for m in messages %}{{ m is sameas r[1 - loop.index0] }}{% endfor %}{{ messages[-1:] == [messages[1]] }}",
            "TrueTrueTrue",
        ),
        ("{{ messages[0:1:0] }}", "ValueError: slice step cannot be zero"),
        (
            "{{ messages['a':] }}",
            "TypeError: slice indices must be integers or None or have an __index__ method",
        ),
        (
            "{% set messages = [1, 2, 3] %}{{ messages|length }}{{ messages[::-1] }}{{ messages|length - 1 }}",
            "3[3, 2, 1]2",
        ),
        (
            "{% for m in messages %}{{ messages|length - loop.index0 }}{{ messages[loop.index0:]|length }}{% endfor %}",
            "2211",
        ),
        ("{{ messages|length % 0 }}", "ZeroDivisionError: integer modulo by zero"),
    ];
    for (src, want) in cases {
        assert_eq!(render(src), want, "{src}");
    }
}

#[test]
fn a_loop_else_body_has_a_frame_of_its_own() {
    // What the `else` of a `for` sets stays in it; it reads the loop's enclosing frame.
    let cases = [
        ("{% for x in [] %}{% else %}{% set y = 1 %}{% endfor %}[{{ y }}]", "[]"),
        ("{% set y = 0 %}{% for x in [] %}{% else %}{% set y = 1 %}{% endfor %}[{{ y }}]", "[0]"),
        ("{% set y = 1 %}{% for x in [] %}{% else %}{% set y = y + 1 %}{{ y }}{% endfor %}|{{ y }}", "2|1"),
        ("{% for x in [] %}{% else %}{% macro m() %}M{% endmacro %}{{ m() }}{% endfor %}|{{ m is defined }}", "M|False"),
        ("{% set x = 'o' %}{% for x in [] %}{% else %}{{ x }}{% endfor %}", "o"),
        ("{% for x in [] %}{% else %}{% for z in [1,2] %}{% set w = z %}{{ w }}{% endfor %}{{ w is defined }}{% endfor %}", "12False"),
        ("{% for x in [] %}{% else %}{{ loop is defined }}{% endfor %}", "False"),
        ("{% for a in [1] %}{% for x in [] %}{% else %}{% set y = a %}{{ y }}{% endfor %}{{ y is defined }}{% endfor %}", "1False"),
        ("{% set ns = namespace(c=0) %}{% for x in [] %}{% else %}{% set ns.c = ns.c + 5 %}{% endfor %}{{ ns.c }}", "5"),
        ("{% for x in [] %}{% else %}{% set a, b = 1, 2 %}{{ a }}{{ b }}{% endfor %}[{{ a }}]", "12[]"),
        ("{% for x in [] if x %}{% else %}{% set q = 1 %}{% endfor %}[{{ q }}]", "[]"),
        ("{% macro mm() %}{% for x in [] %}{% else %}{% set q = 7 %}{{ q }}{% endfor %}[{{ q }}]{% endmacro %}{{ mm() }}", "7[]"),
    ];
    for (src, want) in cases {
        assert_eq!(render(src), want, "{src}");
    }
}

#[test]
fn a_block_runs_in_a_frame_of_its_own() {
    // What a block sets stays in it; an unscoped block sees the template's top-level variables and
    // the context, not the loops, `with` blocks and macros around it.
    let cases = [
        (
            "{% macro m(a) %}{% block b %}[{{ a }}]{% endblock %}{% endmacro %}{{ m(1) }}",
            "[]",
        ),
        ("{% block b %}[{{ a }}]{% endblock %}{% set a = 1 %}{{ a }}", "[]1"),
        (
            "{% block a %}{% set x = 1 %}{% block b %}[{{ x }}]{% endblock %}{% endblock %}",
            "[1]",
        ),
        (
            "{% block a %}{% set x = 1 %}{% block b scoped %}[{{ x }}]{% endblock %}{% endblock %}",
            "[1]",
        ),
        (
            "{% set ns = namespace(v=1) %}{% block b %}{% set ns.v = 2 %}{% endblock %}{{ ns.v }}",
            "2",
        ),
        (
            "{% with q = 3 %}{% block b %}[{{ q }}]{% endblock %}{% endwith %}",
            "[]",
        ),
        (
            "{% with q = 3 %}{% block b scoped %}[{{ q }}]{% set q = 4 %}{{ q }}{% endblock %}{{ q }}{% endwith %}",
            "[3]43",
        ),
        (
            "{% set x = 1 %}{% block b %}{% set y = 2 %}{{ x }}{{ y }}{% endblock %}|{{ self.b() }}|{{ y is defined }}",
            "12|12|False",
        ),
        (
            "{% if true %}{% set r = 9 %}{% endif %}{% block b %}[{{ r }}]{% endblock %}",
            "[9]",
        ),
        (
            "{% for i in [1] %}{% set r = 9 %}{% block b %}[{{ r }}]{% endblock %}{% endfor %}",
            "[]",
        ),
        (
            "{% block b %}{% for i in [1,2] %}{{ loop.index }}{% endfor %}{% endblock %}",
            "12",
        ),
        ("{% block b %}{{ messages|length > 0 }}{% endblock %}", "True"),
        ("{% for x in [] %}{% else %}{% set y = 1 %}{% endfor %}[{{ y }}]", "[]"),
        ("{% block b %}{% set y = 1 %}{% endblock %}[{{ y }}]", "[]"),
        (
            "{% for x in [5] %}{% block b %}[{{ x }}]{% endblock %}{% endfor %}",
            "[1]",
        ),
        (
            "{% for x in [5] %}{% block b scoped %}[{{ x }}]{% endblock %}{% endfor %}",
            "[5]",
        ),
        (
            "{% block b %}{% set a = 5 %}{% endblock %}{% block c %}[{{ a }}]{% endblock %}",
            "[]",
        ),
        (
            "{% if true %}{% block b %}{% set q = 1 %}{{ q }}{% endblock %}{% endif %}[{{ q }}]",
            "1[]",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(render(src), want, "{src}");
    }
}

/// Attributes of the objects template scopes bind read as Jinja2 reads them.
#[test]
fn attributes_of_bound_objects() {
    assert_eq!(
        render("{% set ns = namespace(a=1) %}{{ ns.a }}{{ ns.b is defined }}{% set ns.b = 2 %}{{ ns.b }}"),
        "1False2"
    );
    assert_eq!(
        render("{% macro m(x) %}{% endmacro %}{{ m.name }}{{ m.arguments }}"),
        "m('x',)"
    );
    assert_eq!(
        render("{% set c = cycler(1, 2) %}{{ c.current }}{{ c.next() }}{{ c.current }}"),
        "112"
    );
    assert_eq!(
        render("{% set j = joiner() %}{{ j.used }}{{ j() }}{{ j.used }}{{ j.sep }}"),
        "FalseTrue, "
    );
}

#[test]
fn loop_iterations_start_from_their_own_bindings() {
    // Bodies that bind nothing but the loop's targets keep the frame between iterations; what
    // each iteration reads must still be its own item, and a loop filter's `loop` the outer one.
    assert_eq!(
        render("{% for a, b in [[1, 2], [3, 4]] %}{{ a }}{{ b }}{% endfor %}"),
        "1234"
    );
    assert_eq!(
        render("{% for i in range(4) if i > 1 %}{{ loop.index }}{{ i }}{% endfor %}"),
        "1223"
    );
    assert_eq!(
        render("{% for o in [7] %}{% for i in range(3) if loop.index == 1 %}{{ loop.index }}{{ i }}{% endfor %}{% endfor %}"),
        "102132"
    );
    assert_eq!(
        render(
            "{% macro m(v) %}{% set w = v %}{{ w }}{% endmacro %}{% for i in [1, 2] %}{{ m(i) }}{{ w }}{% endfor %}"
        ),
        "12"
    );
    assert_eq!(
        render("{% for i in [1, 2] %}{% for j in [i, i] %}{{ j }}{% endfor %}{{ j }}{% endfor %}"),
        "1122"
    );
}
