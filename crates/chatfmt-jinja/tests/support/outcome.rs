//! What rendering a template gives, error or not, for tests that compare with Jinja2.

use chatfmt_jinja::{Context, Template};

/// The output of `src` rendered with `vars`, or `Class: message` of the error.
pub fn outcome(vars: serde_json::Value, src: &str) -> String {
    let ctx = Context::from_json(vars).expect("an object");
    let t = Template::new("t", src).expect("compiles");
    match t.render(&ctx) {
        Ok(r) => r.text,
        Err(e) => format!("{}: {}", e.kind().python_name(), e.message()),
    }
}
