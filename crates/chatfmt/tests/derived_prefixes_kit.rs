//! The mask rule derives the renders of a conversation's prefixes from one render when the template
//! is causal in `messages`. On every causal template of the hf kit, for the kit's scenarios and
//! seeded random conversations (system, user, assistant with and without tool calls, tool), with
//! tags, provenance and auto masks, with and without the generation prompt, and continuing the
//! final message: `apply_with_spans` with message spans gives exactly what it gives when every
//! prefix is rendered on its own.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "support/kits.rs"]
mod kits;
#[path = "support/trials.rs"]
mod trials;

use chatfmt::jinja::{Clock, Template};
use chatfmt::masks::{ChatSpans, MaskSource, SpanOptions};
use chatfmt::{ApplyOptions, ChatTemplate};
use libtest_mimic::Trial;
use serde_json::{json, Map, Value as Json};
use trials::{check, kit_trials};

/// A small deterministic generator (a linear congruential one): the same conversations every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// A random conversation of system, user, assistant (some with tool calls) and tool messages, in
/// any order (so some templates raise for some prefixes).
fn random_conversation(rng: &mut Lcg) -> Vec<Json> {
    let n = 2 + rng.below(9);
    (0..n)
        .map(|i| match rng.below(6) {
            0 if i == 0 => json!({"role": "system", "content": "Be brief."}),
            0 | 1 => json!({"role": "user", "content": format!("question {i}?")}),
            2 => json!({
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": "lookup", "arguments": {"q": i}}}]
            }),
            3 => json!({"role": "tool", "content": format!("{{\"result\": {i}}}"), "name": "lookup"}),
            _ => json!({"role": "assistant", "content": format!("answer {i}.")}),
        })
        .collect()
}

/// An outcome to compare: the text, the spans and each message's spans, or the error.
fn outcome(r: Result<ChatSpans, chatfmt::jinja::Error>) -> String {
    match r {
        Ok(s) => format!(
            "ok {:?} {:?} {:?} {:?} {:?} {:?}",
            s.rendered.text, s.rendered.spans, s.rendered.generation_spans, s.source, s.assistant_spans, s.messages
        ),
        Err(e) => format!("error {:?}: {e}", e.kind()),
    }
}

/// A conversation to compare on: its name, the scenario (messages, tools, documents), special
/// tokens and kwargs.
type Conversation = (String, Json, Map<String, Json>, Map<String, Json>);

fn trials(dir: std::path::PathBuf) -> Result<Vec<Trial>, String> {
    let scenarios = kits::read_json(&dir.join("scenarios.json"))?;
    let now = scenarios["frozen_now"]
        .as_str()
        .unwrap_or("2025-07-10T12:00:00")
        .to_string();
    let mut runs = kits::golden_runs(&dir)?;
    let mut out = Vec::new();
    let mut causal = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir.join("corpus"))
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jinja"))
        .collect();
    files.sort();
    let all_scenarios: Vec<String> = scenarios["scenarios"]
        .as_object()
        .map(|s| s.keys().cloned().collect())
        .unwrap_or_default();
    for (k, path) in files.iter().enumerate() {
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let source = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let compiled = Template::new(&id, &source);
        if !compiled.is_ok_and(|c| c.causal_loop("messages", "add_generation_prompt").is_some()) {
            continue;
        }
        causal.push(id.clone());
        // A template the goldens do not render gets every scenario, with common special tokens.
        let tokens = json!({"bos_token": "<s>", "eos_token": "</s>"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let every = all_scenarios
            .iter()
            .map(|s| (s.clone(), tokens.clone(), Map::new()))
            .collect();
        let runs = runs.remove(&id).unwrap_or(every);
        let scenarios = scenarios["scenarios"].clone();
        let now = now.clone();
        out.push(Trial::test(id.clone(), move || {
            let mut failures = Vec::new();
            let mut compared = 0;
            let mut rng = Lcg(k as u64 + 1);
            let mut conversations: Vec<Conversation> = runs
                .iter()
                .map(|(name, special, kwargs)| (name.clone(), scenarios[name].clone(), special.clone(), kwargs.clone()))
                .collect();
            let special = runs.first().map(|r| r.1.clone()).unwrap_or_default();
            for r in 0..12 {
                let scenario = json!({"messages": random_conversation(&mut rng)});
                conversations.push((format!("random {r}"), scenario, special.clone(), Map::new()));
            }
            for (name, s, special, kwargs) in &conversations {
                let derived = ChatTemplate::new(&source, special.clone());
                let separate = ChatTemplate::new(&source, special.clone()).with_derived_prefixes(false);
                let messages = s["messages"].as_array().cloned().unwrap_or_default();
                let base = ApplyOptions {
                    tools: s.get("tools").cloned(),
                    documents: s.get("documents").cloned(),
                    kwargs: kwargs.clone(),
                    clock: Clock::Fixed(now.clone()),
                    ..ApplyOptions::default()
                };
                let options = [
                    ("plain", base.clone()),
                    (
                        "prompt",
                        ApplyOptions {
                            add_generation_prompt: true,
                            ..base.clone()
                        },
                    ),
                    (
                        "continue",
                        ApplyOptions {
                            continue_final_message: Some("content".into()),
                            ..base.clone()
                        },
                    ),
                ];
                for (opts_name, opts) in &options {
                    for source in [MaskSource::Tags, MaskSource::Provenance, MaskSource::Auto] {
                        let spans = SpanOptions {
                            source,
                            stop_markers: vec!["<|im_end|>".into(), "</s>".into()],
                            message_spans: true,
                            deadline: None,
                        };
                        let got = outcome(derived.apply_with_spans(&messages, opts, &spans));
                        let want = outcome(separate.apply_with_spans(&messages, opts, &spans));
                        compared += 1;
                        if got != want {
                            failures.push(format!(
                                "{name} {opts_name} {}:\n  derived:  {got}\n  separate: {want}",
                                source.name()
                            ));
                        }
                    }
                }
            }
            let differ = failures.len();
            check(|| format!("{differ} of {compared} results differ"), failures)
        }));
    }
    eprintln!("{} of {} templates are causal in messages", causal.len(), files.len());
    Ok(out)
}

fn main() {
    trials::run(kit_trials("derived_prefixes_kit", "hf", trials));
}
