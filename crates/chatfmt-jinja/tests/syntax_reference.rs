//! The reference table of syntax and compile-time errors (`tests/data/syntax.jsonl`, recorded from
//! transformers' renderer by `scripts/gen_syntax_reference.py`): every probe gives the same output, or
//! fails with the same class, message and line.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/table.rs"]
mod table;

use chatfmt_jinja::{Context, Template};
use serde_json::{json, Value as Json};

/// The table's minimum size.
const MIN_PROBES: usize = 350;

/// What the probe gives: its output, or its error as `Class: message (line L)`.
fn outcome(template: &str) -> String {
    let vars = json!({
        "messages": [{"role": "user", "content": "hi"}],
        "tools": null,
        "documents": null,
        "add_generation_prompt": true,
        "bos_token": "<s>",
        "eos_token": "</s>",
    });
    let result = Template::new("<template>", template).and_then(|t| t.render(&Context::from_json(vars)?));
    match result {
        Ok(r) => format!("output {:?}", r.text),
        Err(e) => format!("{}: {} (line {:?})", e.kind().python_name(), e.message(), e.line()),
    }
}

fn expected(probe: &Json) -> String {
    match probe["status"].as_str() {
        Some("ok") => format!("output {:?}", probe["output"].as_str().unwrap()),
        _ => {
            let e = &probe["error"];
            format!(
                "{}: {} (line {:?})",
                e["name"].as_str().unwrap(),
                e["message"].as_str().unwrap(),
                e["line"].as_u64().map(|l| l as u32)
            )
        }
    }
}

#[test]
fn syntax_errors_are_jinja2s() {
    table::check("syntax.jsonl", MIN_PROBES, |probe| {
        let template = probe["template"].as_str().unwrap();
        let (want, got) = (expected(probe), outcome(template));
        // A runtime error's line comes from Python's traceback, which the table does not record.
        let same = match probe["error"]["line"].is_null() && probe["status"] == "raised" {
            true => got.split(" (line ").next() == want.split(" (line ").next(),
            false => got == want,
        };
        (!same).then(|| table::shown(probe, &want, &got))
    });
}
