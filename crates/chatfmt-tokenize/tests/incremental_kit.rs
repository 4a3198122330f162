//! Appended turns encode exactly as the whole prompt does: for every HF-kit template, every
//! scenario of two or more messages and the tokens kit's three tokenizers, the ids of each shorter
//! prompt (with and without the generation prompt) extended to the whole conversation equal the
//! ids of encoding the whole conversation's prompt. One trial per tokenizer × template; for the
//! tokens kit's pairings of a template with the tokenizer its control tokens belong to (relation
//! `own`, `family` or `format`), a prefix-stable template must also reuse ids.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;
#[path = "../../chatfmt/tests/support/trials.rs"]
mod trials;

use chatfmt::jinja::Clock;
use chatfmt::{ApplyOptions, ChatTemplate};
use chatfmt_tokenize::ChatTokenizer;
use libtest_mimic::{Failed, Trial};
use serde_json::{Map, Value as Json};
use std::path::Path;
use std::sync::{Arc, OnceLock};

const TOKENIZERS: [&str; 3] = ["llama3", "qwen3", "mistral-7b-v0.1"];

fn read_json(path: &Path) -> Result<Json, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn main() {
    trials::run(trials::kit_trials("incremental_kit", "tokens", |tokens_dir| {
        let hf = tokens_dir.join("../hf");
        let index = read_json(&hf.join("index.json"))?;
        let scenarios = read_json(&hf.join("scenarios.json"))?;
        let now = scenarios["frozen_now"].as_str().unwrap_or_default().to_string();
        let multi_turn: Vec<(String, Json)> = scenarios["scenarios"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, s)| s["messages"].as_array().is_some_and(|m| m.len() >= 2))
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect();
        let multi_turn = Arc::new(multi_turn);
        let tokens_index = read_json(&tokens_dir.join("index.json"))?;
        let paired: std::collections::HashSet<(String, String)> = tokens_index["pairings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["relation"] != "generation")
            .filter_map(|p| {
                Some((
                    p["tokenizer"].as_str()?.to_string(),
                    p["template"].as_str()?.to_string(),
                ))
            })
            .collect();
        let mut trials = Vec::new();
        for name in TOKENIZERS {
            let dir = tokens_dir.join("tokenizers").join(name);
            let tokenizer: Arc<OnceLock<Result<ChatTokenizer, String>>> = Arc::new(OnceLock::new());
            for t in index["templates"].as_array().into_iter().flatten() {
                let (id, file) = (
                    t["id"].as_str().unwrap_or_default(),
                    t["file"].as_str().unwrap_or_default(),
                );
                let path = hf.join("corpus").join(file);
                let mut special = Map::new();
                for key in ["bos_token", "eos_token"] {
                    if let Some(v) = t[key].as_str() {
                        special.insert(key.to_string(), Json::String(v.to_string()));
                    }
                }
                let (dir, tokenizer, scenarios, now) =
                    (dir.clone(), tokenizer.clone(), multi_turn.clone(), now.clone());
                let must_reuse = paired.contains(&(name.to_string(), id.to_string()));
                trials.push(Trial::test(format!("incremental_kit::{name}::{id}"), move || {
                    let tokenizer = tokenizer
                        .get_or_init(|| ChatTokenizer::from_model_dir(&dir).map_err(|e| e.with_causes()))
                        .as_ref()
                        .map_err(|e| Failed::from(e.as_str()))?;
                    let source = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    check_template(
                        &ChatTemplate::new(&source, special),
                        tokenizer,
                        &scenarios,
                        &now,
                        must_reuse,
                    )
                }));
            }
        }
        Ok(trials)
    }));
}

/// Extends every shorter prompt of every scenario the template renders to the whole prompt; with
/// `must_reuse`, a prefix-stable template must also reuse ids somewhere.
fn check_template(
    template: &ChatTemplate,
    tokenizer: &ChatTokenizer,
    scenarios: &[(String, Json)],
    now: &str,
    must_reuse: bool,
) -> Result<(), Failed> {
    let mut failures = Vec::new();
    let (mut extended, mut reused) = (0usize, 0usize);
    for (name, scenario) in scenarios {
        let messages = scenario["messages"].as_array().cloned().unwrap_or_default();
        let opts = |generation: bool| ApplyOptions {
            add_generation_prompt: generation,
            tools: scenario.get("tools").cloned(),
            documents: scenario.get("documents").cloned(),
            clock: Clock::Fixed(now.to_string()),
            ..ApplyOptions::default()
        };
        let Ok(full) = template.apply(&messages, &opts(false)) else {
            continue;
        };
        let want = tokenizer.encode_ids(&full.text).map_err(|e| e.with_causes())?;
        for k in 1..messages.len() {
            for generation in [false, true] {
                let Ok(prefix) = template.apply(&messages[..k], &opts(generation)) else {
                    continue;
                };
                let previous = tokenizer.encode_ids(&prefix.text).map_err(|e| e.with_causes())?;
                let got = tokenizer
                    .extend_encoding(&previous, &full.text)
                    .map_err(|e| e.with_causes())?;
                extended += 1;
                reused += usize::from(got.reused > 0);
                if got.ids != want {
                    failures.push(format!(
                        "--- {name}, first {k} messages (generation prompt {generation}): reused {}, resumed at \
                         character {}\n  whole:    {:?}\n  extended: {:?}",
                        got.reused, got.reencoded_from, want, got.ids
                    ));
                }
            }
        }
    }
    let differing = failures.len();
    trials::check(
        || format!("{differing} of {extended} extended prompts differ from the whole encoding"),
        failures,
    )?;
    if must_reuse && extended > 0 && reused == 0 && template_is_prefix_stable(template, scenarios, now) {
        return Err(format!("no ids were reused in {extended} extensions of a prefix-stable template").into());
    }
    Ok(())
}

/// Whether the shorter prompts of the plain multi-turn scenario are prefixes of the whole one.
fn template_is_prefix_stable(template: &ChatTemplate, scenarios: &[(String, Json)], now: &str) -> bool {
    let Some((_, scenario)) = scenarios.iter().find(|(n, _)| n == "multi_turn") else {
        return false;
    };
    let messages = scenario["messages"].as_array().cloned().unwrap_or_default();
    let opts = ApplyOptions {
        clock: Clock::Fixed(now.to_string()),
        ..ApplyOptions::default()
    };
    let Ok(full) = template.apply(&messages, &opts) else {
        return false;
    };
    (1..messages.len()).all(|k| {
        template
            .apply(&messages[..k], &opts)
            .is_ok_and(|p| !p.text.is_empty() && full.text.starts_with(&p.text))
    })
}
