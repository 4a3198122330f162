//! What rendering a template gives, error or not, for tests that compare with Jinja2.

use chatfmt_jinja::{Context, Template};

/// The output of `src` rendered with `vars`, or `Class: message` of the error.
pub fn outcome(vars: serde_json::Value, src: &str) -> String {
    outcome_in(&Context::from_json(vars).expect("an object"), src)
}

/// The output of `src` rendered with `ctx`, or `Class: message` of the error (compiling included).
pub fn outcome_in(ctx: &Context, src: &str) -> String {
    match Template::new("t", src).and_then(|t| t.render(ctx)) {
        Ok(r) => r.text,
        Err(e) => format!("{}: {}", e.kind().python_name(), e.message()),
    }
}
