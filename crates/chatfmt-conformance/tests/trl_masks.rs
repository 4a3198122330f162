//! Provenance masks against TRL's hand-tagged training templates (`trl/chat_templates/*_training.jinja`
//! of trl 1.16.0): each template is rendered with its `{% generation %}` tags removed, and its
//! assistant spans must equal the generation spans transformers records for the tagged template
//! (`tests/data/trl_generation_spans.jsonl`, from `scripts/gen_trl_spans.py`), up to whitespace and the
//! assistant's header. A record whose render raised must raise here too, with the same class. Where
//! the rule deliberately differs from TRL's tags, the record (`trl/TEMPLATE/CONVERSATION`) is listed
//! with its reason in KNOWN_DIFFERENCES.md, and must still differ.
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

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;
#[path = "support/tag_evidence.rs"]
mod tag_evidence;
#[path = "../../chatfmt/tests/support/trials.rs"]
mod trials;

use chatfmt::{ApplyOptions, ChatTemplate, MaskSource, SpanOptions};
use chatfmt_conformance::KnownDifferences;
use libtest_mimic::Trial;
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
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

fn pairs(v: &Json) -> Vec<(usize, usize)> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize))
        .collect()
}

/// One template's records against chatfmt; the failures, described.
fn compare(dir: &Path, name: &str, records: &[Json], known: &KnownDifferences) -> Vec<String> {
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
        let messages = r["messages"].as_array().cloned().unwrap_or_default();
        let tools = Some(r["tools"].clone()).filter(|t| !t.is_null());
        let documented = known.contains(&format!("trl/{name}/{id}"));
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
            deadline: None,
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
                match (differing.is_empty(), documented) {
                    (false, false) => {
                        let d = against_tags(&messages, &s, &tags).unwrap_or_default();
                        failures.push(format!("{id}: {differing:?} differs from the tags: {d}"));
                    }
                    (true, true) => failures.push(format!(
                        "{id}: matches the tags but KNOWN_DIFFERENCES.md lists trl/{name}/{id}; remove it there"
                    )),
                    _ => {}
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
    let known = Arc::new(KnownDifferences::read(&kits::known_differences_path()).expect("KNOWN_DIFFERENCES.md"));
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
            let (dir, known) = (dir.clone(), known.clone());
            Trial::test(format!("trl_masks::{name}"), move || {
                let failures = compare(&dir, &name, &records, &known);
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
