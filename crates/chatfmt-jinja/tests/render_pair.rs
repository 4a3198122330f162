//! `Template::render_pair`: a render with two values of one variable, what comes before the
//! variable's first mention run once. Each result equals a whole render with that value, whatever
//! state the shared part leaves (scope, namespaces, macros), and the fork is refused where a rerun
//! could see an object the first run changed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_jinja::{Context, Rendered, Template};
use serde_json::json;

const VAR: &str = "add_generation_prompt";

fn context(prompt: bool) -> Context<'static> {
    Context::from_json(json!({
        "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
        "add_generation_prompt": prompt,
    }))
    .unwrap()
}

/// Renders `source` as a pair and whole with each value; asserts they agree; returns the fork point.
fn pair(source: &str) -> Option<usize> {
    let t = Template::new("pair.jinja", source).unwrap();
    let (ctx, alt) = (context(false), context(true));
    let (mut out, mut alt_out) = (Rendered::default(), Rendered::default());
    let result = t.render_pair(&ctx, &alt, VAR, &mut out, &mut alt_out);
    let whole = (t.render(&ctx), t.render(&alt));
    match (result, whole) {
        (Ok(second), (Ok(a), b)) => {
            assert_eq!(out.text, a.text, "{source}");
            assert_eq!(out.generation_spans, a.generation_spans, "{source}");
            match (second, b) {
                (Ok(()), Ok(b)) => {
                    assert_eq!(alt_out.text, b.text, "{source}");
                    assert_eq!(alt_out.generation_spans, b.generation_spans, "{source}");
                    assert_eq!(alt_out.steps, b.steps, "{source}: steps as a whole render");
                }
                (Err(e), Err(f)) => assert_eq!(e.to_string(), f.to_string(), "{source}"),
                (x, y) => panic!("{source}: pair {x:?}, whole {y:?}"),
            }
        }
        (Err(e), (Err(f), _)) => assert_eq!(e.to_string(), f.to_string(), "{source}"),
        (x, y) => panic!("{source}: pair {x:?}, whole {:?}", y.0),
    }
    t.fork_point(VAR)
}

#[test]
fn the_statements_before_the_first_mention_run_once() {
    let chatml = "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
                  {%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    assert_eq!(pair(chatml), Some(1));
    // Never mentioned: both renders are the same one.
    assert_eq!(pair("{{ messages | length }}"), Some(1));
    // Read inside the loop: the loop is where it forks.
    let in_loop =
        "{% for m in messages %}{{ m.content }}{% if loop.last and add_generation_prompt %}>{% endif %}{% endfor %}";
    assert_eq!(pair(in_loop), Some(0));
}

#[test]
fn the_shared_part_leaves_the_same_state_to_both() {
    // Variables, namespaces and macros made before the fork; variables and macros made after it.
    let source = "{%- set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}\
                  {%- macro head(r) %}<{{ r }}>{% endmacro %}{% set x = 'shared' %}\
                  {%- if add_generation_prompt %}{% set x = 'prompt' %}{{ head('assistant') }}{% endif %}\
                  {%- macro tail() %}{{ x }}{% endmacro %}{{ tail() }}{{ ns.n }}{{ x }}";
    assert_eq!(pair(source), Some(4));
    // `self` may read the variable through a block: the fork is no later than its first mention.
    let blocks = "{{ self.prompt() }}|{% block prompt %}{{ add_generation_prompt }}{% endblock %}";
    assert_eq!(pair(blocks), Some(0));
}

#[test]
fn the_fork_is_refused_where_a_rerun_could_see_a_change_of_the_first_run() {
    // A namespace attribute set after the fork.
    let ns = "{% set ns = namespace(n=0) %}{% if add_generation_prompt %}{% set ns.n = 1 %}{% endif %}\
              {% set ns.n = ns.n + 1 %}{{ ns.n }}";
    assert_eq!(pair(ns), None);
    // A macro that sets one, wherever it is called.
    let in_macro = "{% set ns = namespace(n=0) %}{% macro bump() %}{% set ns.n = ns.n + 1 %}{% endmacro %}\
                    {{ add_generation_prompt }}{{ bump() }}{{ ns.n }}";
    assert_eq!(pair(in_macro), None);
    // A cycler's position and a joiner's first call.
    let cycler = "{% set c = cycler('a', 'b') %}{{ c.next() }}{{ add_generation_prompt }}{{ c.next() }}";
    assert_eq!(pair(cycler), None);
    let joiner = "{% set j = joiner(', ') %}{{ j() }}x{{ add_generation_prompt }}{{ j() }}y";
    assert_eq!(pair(joiner), None);
}

#[test]
fn errors_are_those_of_whole_renders() {
    // Only the render with the prompt fails.
    let source = "{% for m in messages %}{{ m.content }}{% endfor %}\
                  {%- if add_generation_prompt %}{{ raise_exception('no prompt here') }}{% endif %}";
    assert_eq!(pair(source), Some(1));
    // Both fail, in the shared part.
    assert_eq!(
        pair("{{ messages[5].content.upper() }}{{ add_generation_prompt }}"),
        Some(1)
    );
    assert_eq!(pair("{{ 1 // 0 }}{{ add_generation_prompt }}"), Some(1));
}
