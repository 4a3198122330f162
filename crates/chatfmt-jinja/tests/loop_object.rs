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
