//! Building a conversation from OpenAI-shaped messages (the call `chatfmt render
//! --conv-template` makes) gives FastChat's prompt on every kit scenario that is a chat.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_conformance::fastchat::export::scenario_as_chat;
use chatfmt_fastchat::{conversation_from_openai_messages, get_conv_template, ChatMessage};
use serde_json::Value;
use std::path::PathBuf;

#[test]
fn openai_messages_build_fastchat_prompts() {
    let dir = match std::env::var_os("CHATFMT_KITS") {
        Some(kits) => PathBuf::from(kits).join("fastchat"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/fastchat"),
    };
    let Ok(text) = std::fs::read_to_string(dir.join("goldens.jsonl")) else {
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "FastChat kit missing in CI");
        eprintln!(
            "\n*** SKIPPED: FastChat conformance kit not found at {} ***\n",
            dir.display()
        );
        return;
    };
    let mut checked = 0;
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).expect("valid JSON");
        let (Some(name), Some(ops), Some(expected)) = (
            record["template"].as_str(),
            record["ops"].as_array(),
            record["prompt"]["ok"].as_str(),
        ) else {
            continue;
        };
        if record["kind"] != "template_scenario" {
            continue;
        }
        let Some((messages, generation)) = scenario_as_chat(ops) else {
            continue;
        };
        let messages: Vec<ChatMessage> = serde_json::from_value(messages).expect("chat messages");
        let template = get_conv_template(name).expect("template");
        let conv = conversation_from_openai_messages(template, &messages, generation).expect("builds");
        assert_eq!(conv.get_prompt().as_deref(), Ok(expected), "{}", record["id"]);
        checked += 1;
    }
    assert!(checked >= 1300, "checked {checked} scenarios");
}
