//! The hf and jinja kits as tests: one trial per template of the hf kit and per probe group of the
//! jinja kit, plus one trial per kit for its totals. Every case must match or be listed in
//! KNOWN_DIFFERENCES.md.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;
#[path = "support/show.rs"]
mod show;
#[path = "../../chatfmt/tests/support/trials.rs"]
mod trials;

use chatfmt_conformance::{hf, jinja, KnownDifferences};
use libtest_mimic::{Failed, Trial};
use show::{both, diff};
use std::sync::Arc;
use trials::{check, kit_trials};

/// Cases of the hf kit.
const HF_CASES: usize = 6248;
/// Required (not optional) probes of the jinja kit.
const JINJA_CASES: usize = 3105;

fn main() {
    let mut all = kit_trials("hf_kit", "hf", hf_trials);
    all.extend(kit_trials("jinja_kit", "jinja", jinja_trials));
    trials::run(all);
}

fn hf_trials(dir: std::path::PathBuf) -> Result<Vec<Trial>, String> {
    let kit = Arc::new(hf::Kit::load(&dir).map_err(|e| e.to_string())?);
    let known = Arc::new(KnownDifferences::read(&kits::known_differences_path()).map_err(|e| e.to_string())?);
    let mut out = Vec::new();
    for id in kit.template_ids() {
        let (kit, known, id) = (kit.clone(), known.clone(), id.to_string());
        out.push(Trial::test(format!("hf_kit::{id}"), move || {
            let filter = hf::Filter {
                template: Some(id.clone()),
                scenario: None,
            };
            hf_check(&kit.run(&filter, &known), &id)
        }));
    }
    out.push(Trial::test("hf_kit::all_cases", move || {
        let r = kit.run(&hf::Filter::default(), &known);
        if r.cases != HF_CASES {
            return Err(format!("the hf kit has {HF_CASES} cases, {} found", r.cases).into());
        }
        hf_check(&r, "the kit")
    }));
    Ok(out)
}

fn hf_check(r: &hf::Report, what: &str) -> Result<(), Failed> {
    let failures = r
        .failures
        .iter()
        .map(|f| {
            let detail = if f.kind == "output_mismatch" {
                diff(&f.expected, &f.actual)
            } else {
                both(&f.expected, &f.actual)
            };
            format!(
                "--- {} / {} {} [{}]\n{detail}",
                f.template, f.scenario, f.options, f.kind
            )
        })
        .collect();
    check(
        || {
            format!(
                "{what}: {} of {} cases neither match nor are in KNOWN_DIFFERENCES.md ({} matched, {} documented)",
                r.failures.len(),
                r.cases,
                r.matched,
                r.documented
            )
        },
        failures,
    )
}

fn jinja_trials(dir: std::path::PathBuf) -> Result<Vec<Trial>, String> {
    let probes = Arc::new(jinja::Probes::load(&dir).map_err(|e| e.to_string())?);
    let known = Arc::new(KnownDifferences::read(&kits::known_differences_path()).map_err(|e| e.to_string())?);
    let mut out = Vec::new();
    for group in probes.groups() {
        let (probes, known, group) = (probes.clone(), known.clone(), group.to_string());
        out.push(Trial::test(format!("jinja_kit::{group}"), move || {
            jinja_check(&probes.run(Some(&group), &known), &group)
        }));
    }
    out.push(Trial::test("jinja_kit::all_probes", move || {
        let r = probes.run(None, &known);
        if r.cases != JINJA_CASES {
            return Err(format!("the jinja kit has {JINJA_CASES} required probes, {} found", r.cases).into());
        }
        jinja_check(&r, "the kit")
    }));
    Ok(out)
}

fn jinja_check(r: &jinja::Report, what: &str) -> Result<(), Failed> {
    let failures = r
        .failures
        .iter()
        .map(|f| {
            let detail = if f.kind == "output_mismatch" {
                diff(&f.expected, &f.actual)
            } else {
                both(&f.expected, &f.actual)
            };
            format!("--- {} [{}]\n{detail}", f.id, f.kind)
        })
        .collect();
    check(
        || {
            format!(
                "{what}: {} of {} required probes neither match nor are in KNOWN_DIFFERENCES.md ({} matched, {} documented)",
                r.failures.len(),
                r.cases,
                r.matched,
                r.documented
            )
        },
        failures,
    )
}
