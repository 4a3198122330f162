//! The Jinja export of FastChat templates, rendered by chatfmt's own engine through the same
//! `apply` path as Hugging Face templates, equals FastChat's prompt on every applicable kit
//! scenario, for every exportable template. A missing kit is a loud skip (a failure when CI=true).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;

use chatfmt::jinja::{Context, Template};
use chatfmt::{ApplyOptions, ChatTemplate};
use chatfmt_conformance::fastchat::export::{check_export, JinjaRenderer};
use serde_json::{json, Map, Value};

/// chatfmt's engine in transformers' environment, behind the export check's renderer hook.
/// Conversations go through `apply`; the kit's empty conversation (which transformers refuses)
/// is rendered by the engine directly with the same variables.
struct Engine;

impl JinjaRenderer for Engine {
    fn render(
        &self,
        source: &str,
        messages: &Value,
        add_generation_prompt: bool,
    ) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
        let list = messages.as_array().cloned().unwrap_or_default();
        if list.is_empty() {
            let template = Template::new("export", source)?;
            let vars = json!({"messages": [], "tools": null, "documents": null, "add_generation_prompt": add_generation_prompt});
            let ctx = Context::from_json(vars)?;
            return Ok(template.render(&ctx)?.text);
        }
        let opts = ApplyOptions {
            add_generation_prompt,
            ..ApplyOptions::default()
        };
        ChatTemplate::new(source, Map::new())
            .apply(&list, &opts)
            .map(|r| r.text)
            .map_err(Into::into)
    }
}

#[test]
fn exported_templates_render_fastchat_prompts() {
    let Some(dir) = kits::kit_for_test("fastchat") else {
        return;
    };
    let report = check_export(&dir, &Engine, None).expect("kit readable");
    let not_exported: Vec<&str> = report.not_exported.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        not_exported,
        ["yandexgpt"],
        "only the style-less template cannot export"
    );
    assert_eq!(report.exported.len(), 101);
    assert!(report.checked >= 1300, "checked {} scenarios", report.checked);
    let shown: Vec<String> = report
        .mismatches
        .iter()
        .take(5)
        .map(|m| format!("{}\n  expected: {:?}\n  actual:   {:?}", m.id, m.expected, m.actual))
        .collect();
    assert!(
        report.mismatches.is_empty(),
        "{} mismatches:\n{}",
        report.mismatches.len(),
        shown.join("\n")
    );
}
