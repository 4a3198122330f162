//! The default limits leave real templates far from their bounds: every template of the hf kit
//! renders a 2,000-message conversation with 200 tools and a 4 MB message without a limit error.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "support/kits.rs"]
mod kits;

use chatfmt::jinja::ErrorKind;
use chatfmt::{ApplyOptions, ChatTemplate};
use serde_json::{json, Map, Value};

/// A conversation of about `n` messages (a system message, then users and assistants in turn)
/// whose last message, the user's, is 4 MB (a document pasted in).
fn conversation(n: usize, with_system: bool) -> Vec<Value> {
    let big = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(4 * 1024 * 1024 / 57);
    let mut messages = Vec::with_capacity(n);
    if with_system {
        messages.push(json!({"role": "system", "content": "You are a helpful assistant."}));
    }
    while messages.len() < n {
        let i = messages.len();
        let user = messages.last().is_none_or(|m: &Value| m["role"] != "user");
        let content = if user {
            format!("Question {i}: what is {i} + {i}?")
        } else {
            format!("The answer to question {} is {}.", i - 1, 2 * (i - 1))
        };
        messages.push(json!({"role": if user { "user" } else { "assistant" }, "content": content}));
    }
    // End on a user turn, as a generation request does.
    if messages.last().is_some_and(|m| m["role"] != "user") {
        messages.pop();
    }
    if let Some(last) = messages.last_mut() {
        last["content"] = json!(big);
    }
    messages
}

fn tools(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| {
                json!({"type": "function", "function": {
                    "name": format!("tool_{i}"),
                    "description": format!("Tool number {i}: looks something up."),
                    "parameters": {"type": "object", "properties": {
                        "query": {"type": "string", "description": "What to look up"},
                        "limit": {"type": "integer", "description": "How many results"}
                    }, "required": ["query"]}
                }})
            })
            .collect(),
    )
}

#[test]
fn every_kit_template_renders_a_huge_conversation_within_the_default_limits() {
    let Some(dir) = kits::kit_for_test("hf") else {
        return;
    };
    let index: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    let opts = ApplyOptions {
        add_generation_prompt: true,
        tools: Some(tools(200)),
        ..ApplyOptions::default()
    };
    let conversations = [conversation(2000, true), conversation(2000, false)];
    let mut failures = Vec::new();
    let mut rendered = 0;
    let mut most = (0, String::new());
    for t in index["templates"].as_array().unwrap() {
        let id = t["id"].as_str().unwrap();
        let source = std::fs::read_to_string(dir.join("corpus").join(t["file"].as_str().unwrap())).unwrap();
        let mut special = Map::new();
        for token in ["bos_token", "eos_token"] {
            if let Some(v) = t[token].as_str() {
                special.insert(token.into(), json!(v));
            }
        }
        let template = ChatTemplate::new(&source, special);
        // With a system message, then (if the template refuses one) without.
        for messages in &conversations {
            match template.apply(messages, &opts) {
                Ok(r) => {
                    rendered += 1;
                    if r.steps > most.0 {
                        most = (r.steps, id.to_string());
                    }
                    break;
                }
                Err(e) if e.kind() == ErrorKind::LimitExceeded => {
                    failures.push(format!("{id}: {e}"));
                    break;
                }
                Err(_) => {}
            }
        }
    }
    eprintln!("{rendered} templates rendered; the most steps: {} ({})", most.0, most.1);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(rendered > 100, "only {rendered} templates rendered");
}
