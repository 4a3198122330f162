//! `chatfmt check` over every template of the hf kit's corpus: the capability table must not claim
//! what the kit's goldens contradict (one trial per capability), and docs/CAPABILITIES.md must be the
//! table it generates.
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

use chatfmt::check::{self, ArgumentsFormat, Capabilities, KitCheck, Report};

use libtest_mimic::Trial;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use trials::{check as check_failures, kit_trials};

/// Golden outcomes per (template, scenario): whether each raised.
type Goldens = HashMap<(String, String), Vec<bool>>;

/// Whether every golden of (template, scenario) raised; `None` when the kit has no such case.
fn all_raised(goldens: &Goldens, template: &str, scenario: &str) -> Option<bool> {
    goldens
        .get(&(template.to_string(), scenario.to_string()))
        .map(|v| v.iter().all(|raised| *raised))
}

struct Rule {
    scenario: &'static str,
    capability: &'static str,
    claims: fn(&Capabilities, &Report) -> bool,
    /// Templates whose `system_user` golden raises are left out: the scenario starts with a system message.
    needs_system: bool,
}

const RULES: &[Rule] = &[
    Rule {
        scenario: "tool_call_roundtrip",
        capability: "tool calls without `content`",
        // The scenario's assistant message has no `content`: a template that needs one says so.
        claims: |c, r| c.tool_calls && !r.warnings.iter().any(|w| w.code == "tool_calls_need_content"),
        needs_system: false,
    },
    Rule {
        scenario: "tool_call_roundtrip_openai",
        capability: "tool-call arguments as a JSON string",
        claims: |c, _| matches!(c.tool_call_arguments, ArgumentsFormat::String | ArgumentsFormat::Both),
        needs_system: true,
    },
    Rule {
        scenario: "system_user",
        capability: "system role",
        claims: |c, _| c.system_role,
        needs_system: false,
    },
    Rule {
        scenario: "tools_prompt",
        capability: "tools",
        claims: |c, _| c.tools,
        needs_system: false,
    },
    Rule {
        scenario: "documents",
        capability: "documents",
        claims: |c, _| c.documents,
        needs_system: false,
    },
    Rule {
        scenario: "multimodal_parts",
        capability: "content parts with images",
        claims: |c, _| c.content_text_parts && c.content_image_parts,
        needs_system: true,
    },
];

fn main() {
    trials::run(kit_trials("check_kit", "hf", |dir| {
        let checks = Arc::new(check::check_hf_kit(&dir).map_err(|e| format!("{e:#}"))?);
        let goldens = Arc::new(read_goldens(&dir)?);
        let with_inputs = Arc::new(scenarios_with_inputs(&dir)?);
        let mut out: Vec<Trial> = RULES
            .iter()
            .map(|rule| {
                let (checks, goldens, with_inputs) = (checks.clone(), goldens.clone(), with_inputs.clone());
                Trial::test(format!("check_kit::{}", rule.scenario), move || {
                    let (contradictions, stats) = compare(rule, &checks, &goldens, &with_inputs);
                    check_failures(
                        || format!("capabilities contradict the goldens ({stats})"),
                        contradictions,
                    )
                })
            })
            .collect();
        out.push(Trial::test("check_kit::capabilities_doc_is_current", move || {
            if checks.len() < 237 {
                return Err(format!("every corpus template is checked ({} found)", checks.len()).into());
            }
            let table = check::markdown_table(&checks);
            let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/CAPABILITIES.md");
            let committed = std::fs::read_to_string(&docs).unwrap_or_default();
            if committed != table {
                return Err("docs/CAPABILITIES.md is stale: run scripts/gen_capabilities.sh".into());
            }
            Ok(())
        }));
        Ok(out)
    }));
}

fn read_goldens(dir: &Path) -> Result<Goldens, String> {
    let mut goldens = Goldens::new();
    for r in kits::read_jsonl(&dir.join("goldens.jsonl"))? {
        let (Some(t), Some(s)) = (r["template"].as_str(), r["scenario"].as_str()) else {
            continue;
        };
        goldens
            .entry((t.to_string(), s.to_string()))
            .or_default()
            .push(r["status"] == "raised");
    }
    Ok(goldens)
}

/// The scenarios that pass tools or documents (a template that needs them renders nothing without).
fn scenarios_with_inputs(dir: &Path) -> Result<HashSet<String>, String> {
    let path = dir.join("scenarios.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let scenarios: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(scenarios["scenarios"]
        .as_object()
        .map(|all| {
            all.iter()
                .filter(|(_, s)| !s["tools"].is_null() || !s["documents"].is_null())
                .map(|(name, _)| name.clone())
                .collect()
        })
        .unwrap_or_default())
}

/// The templates whose claim of the rule's capability the goldens contradict, and counts of the rest.
fn compare(
    rule: &Rule,
    checks: &[KitCheck],
    goldens: &Goldens,
    with_inputs: &HashSet<String>,
) -> (Vec<String>, String) {
    let mut contradictions = Vec::new();
    let (mut n, mut raised_not_claimed, mut ok_claimed, mut ok_not_claimed, mut skipped) = (0, 0, 0, 0, 0);
    for c in checks {
        let Some(caps) = &c.report.capabilities else { continue };
        let Some(raised) = all_raised(goldens, &c.id, rule.scenario) else {
            continue;
        };
        if rule.needs_system && all_raised(goldens, &c.id, "system_user") == Some(true) {
            skipped += 1;
            continue;
        }
        // Probes pass the tools or documents a template needs; a scenario without them raises for
        // that reason alone.
        if all_raised(goldens, &c.id, "single_user") == Some(true) && !with_inputs.contains(rule.scenario) {
            skipped += 1;
            continue;
        }
        n += 1;
        match (raised, (rule.claims)(caps, &c.report)) {
            (true, true) => contradictions.push(format!(
                "{}: claims {} but {} raises",
                c.id, rule.capability, rule.scenario
            )),
            (true, false) => raised_not_claimed += 1,
            (false, true) => ok_claimed += 1,
            (false, false) => ok_not_claimed += 1,
        }
    }
    let stats = format!(
        "{}: templates {n}: golden raised & not claimed {raised_not_claimed}, golden renders & claimed {ok_claimed}, golden renders & not claimed {ok_not_claimed} (not compared: {skipped} without system role, or needing tools or documents the scenario lacks)",
        rule.capability
    );
    (contradictions, stats)
}
