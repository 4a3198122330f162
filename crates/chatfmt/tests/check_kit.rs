//! `chatfmt check` over every template of the hf kit's corpus: the capability table must not claim
//! what the kit's goldens contradict, and docs/CAPABILITIES.md must be the table it generates.

use chatfmt::check::{self, ArgumentsFormat, Capabilities, KitCheck, Report};
use chatfmt::conformance;
use std::collections::HashMap;
use std::path::PathBuf;

/// Whether every golden of (template, scenario) raised; `None` when the kit has no such case.
fn all_raised(goldens: &HashMap<(String, String), Vec<bool>>, template: &str, scenario: &str) -> Option<bool> {
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

#[test]
fn capabilities_agree_with_goldens_and_docs_are_current() {
    let Some(dir) = conformance::kit_for_test("hf") else {
        return;
    };
    let checks: Vec<KitCheck> = check::check_hf_kit(&dir).expect("kit readable");
    let mut goldens: HashMap<(String, String), Vec<bool>> = HashMap::new();
    for r in conformance::read_jsonl(&dir.join("goldens.jsonl")).expect("goldens readable") {
        let (Some(t), Some(s)) = (r["template"].as_str(), r["scenario"].as_str()) else {
            continue;
        };
        goldens
            .entry((t.to_string(), s.to_string()))
            .or_default()
            .push(r["status"] == "raised");
    }
    let scenarios: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scenarios.json")).expect("scenarios readable"))
            .expect("scenarios are JSON");
    // Whether a scenario passes tools or documents (a template that needs them renders nothing without).
    let gives_inputs = |scenario: &str| {
        let s = &scenarios["scenarios"][scenario];
        !s["tools"].is_null() || !s["documents"].is_null()
    };
    let mut contradictions = Vec::new();
    for rule in RULES {
        let (mut n, mut raised_not_claimed, mut ok_claimed, mut ok_not_claimed, mut skipped) = (0, 0, 0, 0, 0);
        for c in &checks {
            let Some(caps) = &c.report.capabilities else { continue };
            let Some(raised) = all_raised(&goldens, &c.id, rule.scenario) else {
                continue;
            };
            if rule.needs_system && all_raised(&goldens, &c.id, "system_user") == Some(true) {
                skipped += 1;
                continue;
            }
            // Probes pass the tools or documents a template needs; a scenario without them raises
            // for that reason alone.
            if all_raised(&goldens, &c.id, "single_user") == Some(true) && !gives_inputs(rule.scenario) {
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
        eprintln!(
            "{:<28} {:<38} templates {n:>3}: golden raised & not claimed {raised_not_claimed:>3}, golden renders & claimed {ok_claimed:>3}, golden renders & not claimed {ok_not_claimed:>3} (not compared: {skipped} without system role, or needing tools or documents the scenario lacks)",
            rule.scenario, rule.capability
        );
    }
    assert!(
        contradictions.is_empty(),
        "capabilities contradict the goldens:\n{}",
        contradictions.join("\n")
    );

    assert!(
        checks.len() >= 237,
        "every corpus template is checked ({} found)",
        checks.len()
    );
    let table = check::markdown_table(&checks);
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/CAPABILITIES.md");
    let committed = std::fs::read_to_string(&docs).unwrap_or_default();
    assert!(
        committed == table,
        "docs/CAPABILITIES.md is stale: run scripts/gen_capabilities.sh"
    );
}
