//! Checks exported chat templates against the FastChat kit, through any Jinja renderer.
//!
//! Every kit scenario that is an optional leading system message followed by user and
//! assistant string messages (optionally ending with the empty assistant turn, i.e. the
//! generation prompt) is rendered with the exported template and compared with FastChat's
//! prompt. The renderer is a parameter so that the same check runs on Python's Jinja2 (tests)
//! and on chatfmt's own engine.

use chatfmt_fastchat::jinja_export::export_jinja;
use chatfmt_fastchat::{Error, ErrorKind, Registry, Result};
use serde_json::{json, Value};
use std::path::Path;

/// Renders chat-template source for `messages` with `add_generation_prompt`, in the
/// environment transformers uses (`trim_blocks`, `lstrip_blocks`, `raise_exception`).
pub trait JinjaRenderer {
    /// The rendered text, or the engine's error.
    fn render(
        &self,
        source: &str,
        messages: &Value,
        add_generation_prompt: bool,
    ) -> std::result::Result<String, Box<dyn std::error::Error + Send + Sync>>;
}

/// One scenario whose rendering differs from FastChat's prompt.
#[derive(Debug, Clone)]
pub struct ExportMismatch {
    /// The kit record id.
    pub id: String,
    /// FastChat's prompt.
    pub expected: String,
    /// The exported template's output (or the render error).
    pub actual: String,
}

/// The result of [`check_export`].
#[derive(Debug, Clone, Default)]
pub struct ExportReport {
    /// Templates that exported.
    pub exported: Vec<String>,
    /// Templates that cannot be exported, with the reason.
    pub not_exported: Vec<(String, String)>,
    /// Scenarios rendered and compared.
    pub checked: usize,
    /// Scenarios that differ.
    pub mismatches: Vec<ExportMismatch>,
}

/// The chat (messages, add_generation_prompt) a kit scenario's `ops` amount to, if it is a
/// leading system message (optional) plus user/assistant string messages.
pub fn scenario_as_chat(ops: &[Value]) -> Option<(Value, bool)> {
    let mut messages = Vec::new();
    let mut generation = false;
    for (n, op) in ops.iter().enumerate() {
        let last = n + 1 == ops.len();
        if generation {
            let text = op["message"].as_str()?;
            if op["op"] != "update_last_message" || !last {
                return None;
            }
            messages.push(json!({"role": "assistant", "content": text}));
            generation = false;
            continue;
        }
        match op["op"].as_str()? {
            "set_system_message" if messages.is_empty() => {
                messages.push(json!({"role": "system", "content": op["value"].as_str()?}));
            }
            "append_message" => {
                let role = match op["role_index"].as_u64()? {
                    0 => "user",
                    1 => "assistant",
                    _ => return None,
                };
                match &op["message"] {
                    Value::Null if role == "assistant" && n + 2 >= ops.len() => generation = true,
                    Value::String(text) => messages.push(json!({"role": role, "content": text})),
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    Some((Value::Array(messages), generation))
}

/// Exports the templates `names` (all built-in ones when `None`) and renders every applicable
/// scenario of the kit in `kit_dir` with `renderer`.
pub fn check_export(kit_dir: &Path, renderer: &dyn JinjaRenderer, names: Option<&[&str]>) -> Result<ExportReport> {
    let path = kit_dir.join("goldens.jsonl");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::new(ErrorKind::InvalidInput, format!("cannot read {}: {e}", path.display())))?;
    let registry = Registry::builtin();
    let wanted: Vec<String> = match names {
        Some(names) => names.iter().map(|n| (*n).to_owned()).collect(),
        None => registry.names().map(str::to_owned).collect(),
    };
    let mut report = ExportReport::default();
    let mut sources = std::collections::HashMap::new();
    for name in &wanted {
        match registry.get(name).and_then(|conv| export_jinja(&conv)) {
            Ok(export) => {
                sources.insert(name.clone(), export.source);
                report.exported.push(name.clone());
            }
            Err(e) => report.not_exported.push((name.clone(), e.to_string())),
        }
    }
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line).map_err(|e| {
            Error::new(
                ErrorKind::InvalidInput,
                format!("{}: invalid JSON: {e}", path.display()),
            )
        })?;
        if record["kind"] != "template_scenario" {
            continue;
        }
        let Some(source) = record["template"].as_str().and_then(|t| sources.get(t)) else {
            continue;
        };
        let (Some(expected), Some(ops)) = (record["prompt"]["ok"].as_str(), record["ops"].as_array()) else {
            continue;
        };
        let Some((messages, generation)) = scenario_as_chat(ops) else {
            continue;
        };
        report.checked += 1;
        let actual = renderer
            .render(source, &messages, generation)
            .unwrap_or_else(|e| format!("<render error: {e}>"));
        if actual != expected {
            report.mismatches.push(ExportMismatch {
                id: record["id"].as_str().unwrap_or("?").to_owned(),
                expected: expected.to_owned(),
                actual,
            });
        }
    }
    Ok(report)
}
