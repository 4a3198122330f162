//! The `loop` object is built only for loops whose body can see it; these pin Jinja2's output
//! (checked with jinja2 3.1.6) for the places it can be seen from.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_jinja::{Context, Template};

fn render(src: &str) -> String {
    let t = Template::new("t", src).expect("compiles");
    t.render(&Context::default()).expect("renders").text
}

#[test]
fn a_macro_defined_in_the_body_sees_the_loop() {
    let src = "{% for x in [1,2] %}{% macro m() %}{{ loop.index }}{% endmacro %}{{ m() }}{% endfor %}|{% for x in [1,2] %}{{ x }}{% endfor %}";
    assert_eq!(render(src), "12|12");
}

#[test]
fn an_inner_loop_mentioning_loop_and_an_outer_one_that_does_not() {
    let src = "{% for a in 'xy' %}{% for b in [1,2] %}{{ a }}{{ loop.index0 }}{% endfor %}{% endfor %}";
    assert_eq!(render(src), "x0x1y0y1");
}

#[test]
fn attr_gives_the_methods_of_loop_and_the_other_helper_objects() {
    let src = "{% for x in [1,2] %}{{ (loop|attr('cycle'))('a','b') }}{% endfor %}\
               |{{ (cycler(1,2)|attr('next'))() }}\
               |{{ ({'a':1}.keys()|attr('isdisjoint'))([2]) }}\
               |{{ (dict|attr('fromkeys'))([2]) }}";
    assert_eq!(render(src), "ab|1|True|{2: None}");
}

/// The error a template raises, as `Class: message`.
fn failure(src: &str) -> String {
    let t = Template::new("t", src).expect("compiles");
    let e = t.render(&Context::default()).expect_err("raises");
    format!("{}: {}", e.kind().python_name(), e.message())
}

#[test]
fn helper_methods_take_the_arguments_their_python_signatures_take() {
    // `Cycler.next(self)`, `Cycler.reset(self)`, `LoopContext.cycle(self, *args)` and
    // `LoopContext.changed(self, *value)`, as Jinja2 3.1.6 raises for them.
    let cases = [
        (
            "{% set c = cycler(1,2) %}{{ c.next(5) }}",
            "TypeError: Cycler.next() takes 1 positional argument but 2 were given",
        ),
        (
            "{% set c = cycler(1,2) %}{{ c.next(x=5) }}",
            "TypeError: Cycler.next() got an unexpected keyword argument 'x'",
        ),
        (
            "{% set c = cycler(1,2) %}{{ c.reset(1) }}",
            "TypeError: Cycler.reset() takes 1 positional argument but 2 were given",
        ),
        (
            "{% set c = cycler(1,2) %}{{ c.next(**{'a':1}) }}",
            "TypeError: Cycler.next() got an unexpected keyword argument 'a'",
        ),
        (
            "{% for i in [1,2] %}{{ loop.cycle('a','b', x=1) }}{% endfor %}",
            "TypeError: LoopContext.cycle() got an unexpected keyword argument 'x'",
        ),
        (
            "{% for i in [1,2] %}{{ loop.cycle(**{'x':1}) }}{% endfor %}",
            "TypeError: LoopContext.cycle() got an unexpected keyword argument 'x'",
        ),
        (
            "{% for i in [1,2] %}{{ loop.changed(i, x=1) }}{% endfor %}",
            "TypeError: LoopContext.changed() got an unexpected keyword argument 'x'",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(failure(src), want, "{src}");
    }
    let fine = "{% set c = cycler(1,2) %}{{ c.current }}{{ c.next() }}{{ c.reset() }}\
                |{% for i in [1,2] %}{{ loop.cycle(*['a','b'], **{}) }}{{ loop.changed() }}{% endfor %}";
    assert_eq!(render(fine), "11None|aTruebFalse");
}
