//! The tokens kit as tests: one trial per tokenizer × template pairing, plus one for the kit's
//! totals. Every case must match or be documented in KNOWN_DIFFERENCES.md.
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

use chatfmt_conformance::tokens::{Kit, Report};
use chatfmt_conformance::KnownDifferences;
use libtest_mimic::{Failed, Trial};
use show::both;
use std::sync::Arc;
use trials::{check, kit_trials};

/// Cases of the tokens kit.
const CASES: usize = 1579;

fn main() {
    trials::run(kit_trials("tokens_kit", "tokens", |dir| {
        let kit = Arc::new(Kit::load(&dir).map_err(|e| e.to_string())?);
        let known = Arc::new(KnownDifferences::read(&kits::known_differences_path()).map_err(|e| e.to_string())?);
        let mut out = Vec::new();
        for (tokenizer, template) in kit.pairings() {
            let (kit, known) = (kit.clone(), known.clone());
            let (tokenizer, template) = (tokenizer.to_string(), template.to_string());
            out.push(Trial::test(format!("tokens_kit::{tokenizer}::{template}"), move || {
                let r = kit
                    .run(Some((&tokenizer, &template)), &known)
                    .map_err(|e| e.to_string())?;
                show(&r, &format!("{tokenizer} x {template}"))
            }));
        }
        out.push(Trial::test("tokens_kit::all_cases", move || {
            let r = kit.run(None, &known).map_err(|e| e.to_string())?;
            if r.cases != CASES {
                return Err(format!("the tokens kit has {CASES} cases, {} found", r.cases).into());
            }
            show(&r, "the kit")
        }));
        Ok(out)
    }));
}

fn show(r: &Report, what: &str) -> Result<(), Failed> {
    let failures = r
        .failures
        .iter()
        .map(|f| format!("--- {} [{}]\n{}", f.id, f.kind, both(&f.expected, &f.actual)))
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
