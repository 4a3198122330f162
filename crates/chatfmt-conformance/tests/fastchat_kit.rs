//! The FastChat kit as tests: the kit is replayed once, then one trial per template (and for the API
//! edge cases and the model-path records) checks its records, and kit-wide trials check the totals
//! and the documented differences.
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

use chatfmt_conformance::fastchat::{difference_codes, run_kit, Failure, Report};
use chatfmt_conformance::KnownDifferences;
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use show::{both, diff};
use std::collections::BTreeSet;
use std::sync::Arc;
use trials::{check, kit_trials};

/// Template scenarios and API edge cases (`goldens.jsonl`) plus model paths (`adapter_goldens.jsonl`).
const RECORDS: usize = 1544 + 254;
/// Records whose only mismatches are documented differences: 44 image crashes and 2 tuple leaks
/// (prompt) inside the 102 image records (openai messages), plus the stop_token_ids aliasing case.
const DOCUMENTED: usize = 103;

fn main() {
    trials::run(kit_trials("fastchat_kit", "fastchat", |dir| {
        let known = KnownDifferences::read(&kits::known_differences_path()).map_err(|e| e.to_string())?;
        let report = Arc::new(run_kit(&dir, &known).map_err(|e| e.to_string())?);
        Ok(fastchat_trials(report, Arc::new(known)))
    }));
}

fn fastchat_trials(report: Arc<Report>, known: Arc<KnownDifferences>) -> Vec<Trial> {
    let mut out = Vec::new();
    for group in report.groups.keys() {
        let (report, group) = (report.clone(), group.clone());
        out.push(Trial::test(format!("fastchat_kit::{group}"), move || {
            let failures: Vec<&Failure> = report
                .failures
                .iter()
                .chain(&report.extra_failures)
                .filter(|f| f.group == group)
                .collect();
            show(&failures, || {
                format!(
                    "{group}: {} fields of its {} records differ from the kit",
                    failures.len(),
                    report.groups[&group]
                )
            })
        }));
    }
    let r = report.clone();
    out.push(Trial::test("fastchat_kit::all_records", move || {
        if r.cases != RECORDS {
            return Err(format!("the FastChat kit has {RECORDS} records, {} checked", r.cases).into());
        }
        let failures: Vec<&Failure> = r.failures.iter().collect();
        show(&failures, || {
            format!(
                "{} matched + {} documented of {} records",
                r.matched, r.documented, r.cases
            )
        })
    }));
    let r = report.clone();
    out.push(Trial::test("fastchat_kit::uncounted_outputs", move || {
        let failures: Vec<&Failure> = r.extra_failures.iter().collect();
        show(&failures, || {
            format!("{} uncounted outputs differ from the kit", failures.len())
        })
    }));
    let r = report.clone();
    out.push(Trial::test(
        "fastchat_kit::documented_differences_are_the_listed_evidence",
        move || {
            let listed = known.fastchat_evidence();
            let unlisted: Vec<_> = r.observed_documented.difference(listed).collect();
            let codes: BTreeSet<&str> = listed.iter().map(|(code, _)| code.as_str()).collect();
            let ruled: BTreeSet<&str> = difference_codes().into_iter().collect();
            if codes != ruled {
                return Err(format!("differences listed {codes:?} but recognised by rule {ruled:?}").into());
            }
            if !unlisted.is_empty() {
                return Err(format!("documented by rule but not listed in KNOWN_DIFFERENCES.md: {unlisted:?}").into());
            }
            if !r.stale_documented.is_empty() {
                return Err(format!("listed but not observed: {:?}", r.stale_documented).into());
            }
            Ok(())
        },
    ));
    out.push(Trial::test("fastchat_kit::documented_records", move || {
        if report.documented != DOCUMENTED {
            return Err(format!(
                "{DOCUMENTED} records are documented differences, {} found",
                report.documented
            )
            .into());
        }
        Ok(())
    }));
    out
}

/// Fails with the first failures, prompts shown from their first difference.
fn show(failures: &[&Failure], header: impl FnOnce() -> String) -> Result<(), Failed> {
    let text = |v: &Value| v.get("ok").and_then(Value::as_str).map(str::to_owned);
    let lines = failures
        .iter()
        .map(|f| {
            let detail = match (text(&f.expected), text(&f.actual)) {
                (Some(expected), Some(actual)) => diff(&expected, &actual),
                _ => both(&f.expected.to_string(), &f.actual.to_string()),
            };
            format!("--- {} [{}]\n{detail}", f.id, f.field)
        })
        .collect();
    check(header, lines)
}
