//! Provenance masks against TRL's hand-tagged training templates (`trl/chat_templates/*_training.jinja`
//! of trl 1.16.0): each template is rendered with its `{% generation %}` tags removed, and its
//! assistant spans must equal the generation spans transformers records for the tagged template
//! (`tests/data/trl_generation_spans.jsonl`, from `scripts/gen_trl_spans.py`), up to whitespace and the
//! assistant's header. A record whose render raised must raise here too, with the same class.
//!
//! The templates are not in the repository: `.ci/run` unpacks them from TRL's wheel into
//! `target/trl/trl/chat_templates` (or set `CHATFMT_TRL_TEMPLATES`). Without them each trial is
//! ignored, or fails under `CI=true`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "support/kits.rs"]
mod kits;
#[path = "support/tag_evidence.rs"]
mod tag_evidence;
#[path = "support/trials.rs"]
mod trials;

use chatfmt::{ApplyOptions, ChatTemplate, MaskSource, SpanOptions};
use libtest_mimic::Trial;
use serde_json::{json, Map, Value as Json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tag_evidence::{against_tags, differing_chars, without_tags};
use trials::check;

const RECORDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/trl_generation_spans.jsonl");

/// Where TRL's templates are: `$CHATFMT_TRL_TEMPLATES`, else `target/trl/trl/chat_templates`.
fn templates_dir() -> PathBuf {
    match std::env::var_os("CHATFMT_TRL_TEMPLATES") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/trl/trl/chat_templates"),
    }
}

/// The conversations of `scripts/gen_trl_spans.py`, by id: messages and tools.
fn conversation(id: &str) -> (Vec<Json>, Option<Json>) {
    let tools = json!([{"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city"}},
                       "required": ["city"]},
    }}]);
    let call = json!({"id": "call00001", "type": "function",
                      "function": {"name": "get_weather", "arguments": {"city": "Paris"}}});
    let messages = match id {
        "plain" => json!([
            {"role": "user", "content": "What is the capital of France?"},
            {"role": "assistant", "content": "The capital of France is Paris."},
        ]),
        "system" => json!([
            {"role": "system", "content": "You are a terse assistant."},
            {"role": "user", "content": "Name a prime number."},
            {"role": "assistant", "content": "Seven."},
        ]),
        "multi_turn" => json!([
            {"role": "user", "content": "Hi!"},
            {"role": "assistant", "content": "Hello! How can I help?"},
            {"role": "user", "content": "Tell me a joke."},
            {"role": "assistant", "content": "Why did the chicken cross the road? To get to the other side."},
        ]),
        "tool_calls" => json!([
            {"role": "user", "content": "What's the weather in Paris?"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": "{\"temp\": 22}"},
            {"role": "assistant", "content": "It is 22 degrees in Paris."},
        ]),
        "reasoning" => json!([
            {"role": "user", "content": "What is 2 + 2?"},
            {"role": "assistant", "content": "4", "reasoning_content": "Two plus two makes four."},
        ]),
        "empty_content" => json!([
            {"role": "user", "content": "Say nothing."},
            {"role": "assistant", "content": ""},
        ]),
        other => panic!("unknown conversation {other} in {RECORDS}"),
    };
    let tools = (id == "tool_calls").then_some(tools);
    (messages.as_array().cloned().unwrap_or_default(), tools)
}

/// Where the rule of `chatfmt::masks` deliberately differs from TRL's tags: the non-whitespace text
/// that is in one set of spans and not the other, outside the assistants' headers, and why.
fn expected_difference(template: &str, conversation: &str) -> Option<(&'static str, &'static str)> {
    const THINK: &str = "the generation prompt opens the think block (`<think>\\n`), so the model never \
                         generates it and the rule leaves it out; TRL's tags train on it";
    const NO_THINK: &str = "the generation prompt holds an empty think block: the rule leaves out what the turn \
                            shares with it (all of it, or its `<think>\\n` before reasoning); TRL's tags \
                            train on it";
    const ENDS: &str = "a turn whose content is empty prints nothing of the message, so provenance finds \
                        no turn for it (its prefix render ends with an eos the full render lacks) and the \
                        rule gives no span; TRL's tags train on the closing `<|end|>` and the eos";
    const NOT_LAST: &str = "an earlier assistant turn closes with `<|end|>` where the same message as the \
                            last one closes with `<|return|>`: the rule takes a turn's closing text only \
                            when the full render goes on with it, and `<|end|>` is no stop token";
    match (template, conversation) {
        ("qwen3_5_think_training.jinja" | "qwen3_6_training.jinja" | "qwen3_8_training.jinja", _) => {
            Some(("<think>", THINK))
        }
        ("qwen3_5_nothink_training.jinja", "reasoning") => Some(("<think>", THINK)),
        ("qwen3_5_nothink_training.jinja", _) => Some(("<think></think>", NO_THINK)),
        ("phi3_training.jinja" | "phi3_5_training.jinja", "empty_content") => Some(("<|end|><|end|>", ENDS)),
        ("gptoss_training.jinja", "multi_turn") => Some(("<|end|>", NOT_LAST)),
        _ => None,
    }
}

fn pairs(v: &Json) -> Vec<(usize, usize)> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize))
        .collect()
}

/// One template's records against chatfmt; the failures, described.
fn compare(dir: &Path, name: &str, records: &[Json]) -> Vec<String> {
    let path = dir.join(name);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => return vec![format!("{}: {e}", path.display())],
    };
    let digest: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    if records.iter().any(|r| r["sha256"] != digest.as_str()) {
        return vec![format!(
            "{name} changed since it was recorded (sha256 {digest}); rerun scripts/gen_trl_spans.py"
        )];
    }
    let source = without_tags(&String::from_utf8_lossy(&bytes));
    let mut failures = Vec::new();
    for r in records {
        let id = r["conversation"].as_str().unwrap_or_default();
        let (messages, tools) = conversation(id);
        let special: Map<String, Json> = r["special_tokens"].as_object().cloned().unwrap_or_default();
        let template = ChatTemplate::new(&source, special.clone());
        let opts = ApplyOptions {
            tools,
            ..ApplyOptions::default()
        };
        let span_opts = SpanOptions {
            source: MaskSource::Provenance,
            stop_markers: special["eos_token"].as_str().into_iter().map(str::to_string).collect(),
            message_spans: true,
        };
        let got = template.apply_with_spans(&messages, &opts, &span_opts);
        match (r["status"].as_str(), got) {
            (Some("raised"), Err(e)) if e.kind().python_name() == r["error"]["name"] => {}
            (Some("raised"), got) => failures.push(format!(
                "{id}: transformers raised {} ({}), chatfmt gave {:?}",
                r["error"]["name"],
                r["error"]["message"],
                got.map(|s| s.rendered.text).map_err(|e| e.to_string())
            )),
            (_, Err(e)) => failures.push(format!("{id}: chatfmt raised {e}")),
            (_, Ok(s)) => {
                let length = s.rendered.text.chars().count();
                if Some(length as u64) != r["length"].as_u64() {
                    failures.push(format!("{id}: render of {length} chars, transformers {}", r["length"]));
                    continue;
                }
                let tags = pairs(&r["generation_spans"]);
                let chars: Vec<char> = s.rendered.text.chars().collect();
                let differing: String = differing_chars(&messages, &s, &tags)
                    .iter()
                    .map(|&c| chars[c])
                    .collect();
                let (expected, why) = expected_difference(name, id).unwrap_or(("", "none expected"));
                if differing != expected {
                    let d = against_tags(&messages, &s, &tags).unwrap_or_default();
                    failures.push(format!(
                        "{id}: {differing:?} differs from the tags, expected {expected:?} ({why}): {d}"
                    ));
                }
            }
        }
    }
    failures
}

fn main() {
    let text = std::fs::read_to_string(RECORDS).expect("the recorded TRL spans");
    let mut by_template: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let r: Json = serde_json::from_str(line).expect("a JSON record");
        by_template
            .entry(r["template"].as_str().unwrap_or_default().to_string())
            .or_default()
            .push(r);
    }
    let dir = templates_dir();
    let present = dir.is_dir();
    let trials = by_template
        .into_iter()
        .map(|(name, records)| {
            if !present {
                let message = format!(
                    "TRL's templates are missing at {} (CI=true requires them; see .ci/run or set \
                     CHATFMT_TRL_TEMPLATES)",
                    dir.display()
                );
                return Trial::test(
                    format!("trl_masks::{name} [templates not found: set CHATFMT_TRL_TEMPLATES]"),
                    move || Err(message.into()),
                )
                .with_ignored_flag(!kits::kits_required());
            }
            let dir = dir.clone();
            Trial::test(format!("trl_masks::{name}"), move || {
                let failures = compare(&dir, &name, &records);
                let header = format!(
                    "{} of {} conversations disagree with TRL's tags",
                    failures.len(),
                    records.len()
                );
                check(|| header, failures)
            })
        })
        .collect();
    trials::run(trials);
}
