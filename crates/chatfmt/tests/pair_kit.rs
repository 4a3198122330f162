//! `ChatTemplate::apply_pair` renders a conversation without and with the generation prompt, running
//! once what the template writes before it reads `add_generation_prompt`. On every template of the
//! hf kit, every scenario and every prefix of its conversation, both results equal two separate
//! `apply` calls: the same text and generation spans, or the same error.
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

use chatfmt::jinja::{Clock, Error, Rendered};
use chatfmt::{ApplyOptions, ChatTemplate};
use libtest_mimic::Trial;
use trials::{check, kit_trials};

/// A render's observable result: text and generation spans, or the error's kind and message.
fn outcome(r: &Result<Rendered, Error>) -> String {
    match r {
        Ok(r) => format!("ok {:?} {:?}", r.text, r.generation_spans),
        Err(e) => format!("error {:?}: {e}", e.kind()),
    }
}

fn trials(dir: std::path::PathBuf) -> Result<Vec<Trial>, String> {
    let index = kits::read_json(&dir.join("index.json"))?;
    let scenarios = kits::read_json(&dir.join("scenarios.json"))?;
    let now = scenarios["frozen_now"]
        .as_str()
        .unwrap_or("2025-07-10T12:00:00")
        .to_string();
    let mut runs = kits::golden_runs(&dir)?;
    let mut out = Vec::new();
    for t in index["templates"].as_array().into_iter().flatten() {
        let id = t["id"].as_str().unwrap_or_default().to_string();
        let source = std::fs::read_to_string(dir.join("corpus").join(t["file"].as_str().unwrap_or_default()))
            .map_err(|e| e.to_string())?;
        let runs = runs.remove(&id).unwrap_or_default();
        let scenarios = scenarios["scenarios"].clone();
        let now = now.clone();
        out.push(Trial::test(id.clone(), move || {
            let mut failures = Vec::new();
            let mut compared = 0;
            for (scenario, special, kwargs) in &runs {
                let s = &scenarios[scenario];
                let template = ChatTemplate::new(&source, special.clone());
                let opts = ApplyOptions {
                    tools: s.get("tools").cloned(),
                    documents: s.get("documents").cloned(),
                    kwargs: kwargs.clone(),
                    clock: Clock::Fixed(now.clone()),
                    ..ApplyOptions::default()
                };
                let with_prompt = ApplyOptions {
                    add_generation_prompt: true,
                    ..opts.clone()
                };
                let messages = s["messages"].as_array().cloned().unwrap_or_default();
                for n in 1..=messages.len() {
                    let prefix = &messages[..n];
                    let expected = (template.apply(prefix, &opts), template.apply(prefix, &with_prompt));
                    let (first, second) = match template.apply_pair(prefix, &opts) {
                        Ok((p, g)) => (Ok(p), Some(g)),
                        Err(e) => (Err(e), None),
                    };
                    compared += 1;
                    if outcome(&first) != outcome(&expected.0) {
                        failures.push(format!(
                            "{scenario} [..{n}] without the prompt:\n  pair:     {}\n  separate: {}",
                            outcome(&first),
                            outcome(&expected.0)
                        ));
                    }
                    if let Some(second) = second.filter(|_| first.is_ok()) {
                        if outcome(&second) != outcome(&expected.1) {
                            failures.push(format!(
                                "{scenario} [..{n}] with the prompt:\n  pair:     {}\n  separate: {}",
                                outcome(&second),
                                outcome(&expected.1)
                            ));
                        }
                    }
                }
            }
            let differ = failures.len();
            check(|| format!("{differ} of {compared} prefixes differ"), failures)
        }));
    }
    Ok(out)
}

fn main() {
    trials::run(kit_trials("pair_kit", "hf", trials));
}
