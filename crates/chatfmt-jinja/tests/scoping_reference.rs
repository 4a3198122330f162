//! The reference table of frames and variable scoping (`tests/data/scoping.jsonl`, recorded from
//! transformers' environment by `scripts/gen_scoping_reference.py`): every probe gives the same
//! output, or fails with the same class and message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/table.rs"]
mod table;

use chatfmt_jinja::{Context, Template};
use serde_json::Value as Json;

/// What the probe gives: its output, or its error as `Class: message`.
fn outcome(template: &str, context: &Json) -> String {
    let result = Template::new("<template>", template).and_then(|t| t.render(&Context::from_json(context.clone())?));
    match result {
        Ok(r) => format!("output {:?}", r.text),
        Err(e) => format!("{}: {}", e.kind().python_name(), e.message()),
    }
}

fn expected(probe: &Json) -> String {
    match probe["status"].as_str() {
        Some("ok") => format!("output {:?}", probe["output"].as_str().unwrap()),
        _ => format!(
            "{}: {}",
            probe["error"]["name"].as_str().unwrap(),
            probe["error"]["message"].as_str().unwrap()
        ),
    }
}

#[test]
fn frames_and_scoping_are_jinja2s() {
    table::check("scoping.jsonl", 400, |probe| {
        let (want, got) = (
            expected(probe),
            outcome(probe["template"].as_str().unwrap(), &probe["context"]),
        );
        (got != want).then(|| table::shown(probe, &want, &got))
    });
}
