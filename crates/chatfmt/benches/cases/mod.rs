//! The render benchmark's inputs, shared by `render` (criterion) and `paired` (bursts on request):
//! the five templates and three conversations of the hf kit, and minijinja set up as transformers
//! sets up Jinja2.
#![allow(dead_code)] // each benchmark uses a different subset

#[path = "../../tests/support/kits.rs"]
mod kits;

use chatfmt::ApplyOptions;
use kits::read_jsonl;
use minijinja::value::{Kwargs, Serde};
use minijinja::{Environment, Error as MjError, ErrorKind as MjErrorKind, Value};
use serde_json::{Map, Value as Json};
use std::fmt::Write as _;
use std::path::PathBuf;

pub const TEMPLATES: [(&str, &str); 5] = [
    ("chatml", "transformers--default-chatml"),
    ("llama3.1", "meta-llama--Llama-3.1-8B-Instruct"),
    ("mistral-v0.3", "mistralai--Mistral-7B-Instruct-v0.3"),
    ("qwen2.5", "Qwen--Qwen2.5-7B-Instruct"),
    ("gemma2", "google--gemma-2-2b-it"),
];

pub const SCENARIOS: [(&str, &str); 3] = [
    ("3turn", "multi_turn"),
    ("50turn", "long_50_turns"),
    ("tools", "tools_prompt"),
];

pub struct Case {
    pub name: String,
    pub template: String,
    pub source: String,
    pub special_tokens: Map<String, Json>,
    pub messages: Vec<Json>,
    pub tools: Option<Json>,
    pub golden: Option<String>,
}

pub fn hf_dir() -> PathBuf {
    kits::kits_base().join("hf")
}

pub fn load_cases() -> Vec<Case> {
    let dir = hf_dir();
    let scenarios: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scenarios.json")).expect("scenarios.json")).unwrap();
    let goldens = read_jsonl(&dir.join("goldens.jsonl")).expect("goldens.jsonl");
    let golden = |template: &str, scenario: &str| {
        goldens.iter().find(|g| {
            g["template"] == template && g["scenario"] == scenario && g["options"]["add_generation_prompt"] == true
        })
    };
    let mut cases = Vec::new();
    for (short, id) in TEMPLATES {
        let source = std::fs::read_to_string(dir.join("corpus").join(format!("{id}.jinja"))).expect("corpus template");
        let special_tokens = golden(id, "multi_turn").unwrap()["special_tokens"]
            .as_object()
            .unwrap()
            .clone();
        for (scenario_short, scenario) in SCENARIOS {
            let input = &scenarios["scenarios"][scenario];
            let mut messages = input["messages"].as_array().unwrap().clone();
            let expected = golden(id, scenario).unwrap();
            let golden = if expected["status"] == "ok" {
                Some(expected["output"].as_str().unwrap().to_string())
            } else if scenario == "long_50_turns" {
                messages.retain(|m| m["role"] != "system");
                None
            } else {
                continue;
            };
            cases.push(Case {
                name: format!("{short}/{scenario_short}"),
                template: id.to_string(),
                source: source.clone(),
                special_tokens: special_tokens.clone(),
                messages,
                tools: input.get("tools").cloned(),
                golden,
            });
        }
    }
    cases
}

pub fn options(case: &Case) -> ApplyOptions {
    ApplyOptions {
        add_generation_prompt: true,
        tools: case.tools.clone(),
        ..ApplyOptions::default()
    }
}

fn write_py_json(out: &mut String, value: &Json, indent: Option<usize>, depth: usize) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(width) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(width * depth));
        }
    };
    let item_sep = if indent.is_some() { "," } else { ", " };
    match value {
        Json::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, depth + 1);
                write_py_json(out, item, indent, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Json::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, depth + 1);
                write!(out, "{}: ", Json::String(k.clone())).unwrap();
                write_py_json(out, v, indent, depth + 1);
            }
            newline(out, depth);
            out.push('}');
        }
        other => write!(out, "{other}").unwrap(),
    }
}

fn tojson(value: &Value, kwargs: Kwargs) -> Result<Value, MjError> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    kwargs.assert_all_used()?;
    let json = serde_json::to_value(value)
        .map_err(|e| MjError::new(MjErrorKind::InvalidOperation, "cannot serialize to JSON").with_source(e))?;
    let mut out = String::new();
    write_py_json(&mut out, &json, indent, 0);
    Ok(Value::from_safe_string(out))
}

pub fn minijinja_env() -> Environment<'static> {
    let mut env = Environment::new();
    let mut syntax = minijinja::syntax::SyntaxConfig::builder();
    syntax.trim_blocks(true).lstrip_blocks(true);
    env.set_syntax(syntax.build().unwrap());
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_filter("tojson", tojson);
    env.add_function("raise_exception", |msg: String| -> Result<Value, MjError> {
        Err(MjError::new(MjErrorKind::InvalidOperation, msg))
    });
    env
}

pub fn minijinja_context(case: &Case) -> Value {
    let mut vars = case.special_tokens.clone();
    vars.insert("messages".to_string(), Json::Array(case.messages.clone()));
    vars.insert("tools".to_string(), case.tools.clone().unwrap_or(Json::Null));
    vars.insert("documents".to_string(), Json::Null);
    vars.insert("add_generation_prompt".to_string(), Json::Bool(true));
    Value::from(Serde(&vars))
}

pub fn chatml_builder(out: &mut String, messages: &[Json]) {
    out.clear();
    for m in messages {
        out.push_str("<|im_start|>");
        out.push_str(m["role"].as_str().unwrap_or_default());
        out.push('\n');
        out.push_str(m["content"].as_str().unwrap_or_default());
        out.push_str("<|im_end|>\n");
    }
    out.push_str("<|im_start|>assistant\n");
}
