//! Kit tests as libtest trials (`harness = false`), so that each template or group shows in cargo's
//! own summary. A missing kit is one ignored trial that says why, or a failing one under `CI=true`.
#![allow(dead_code)] // each test file uses a different subset

use super::kits::{kits_base, kits_required};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::PathBuf;

/// How many failing cases a trial's message shows.
pub const SHOWN: usize = 5;

/// The trials `test::...` made by `make` from the folder of the kit `kit` (`hf`, `tokens`, ...). When
/// the kit is absent: one trial `{test} [kits not found: set CHATFMT_KITS]`, ignored, or failing
/// under `CI=true`. When `make` cannot read the kit: one failing trial `test` with the error.
pub fn kit_trials(test: &str, kit: &str, make: impl FnOnce(PathBuf) -> Result<Vec<Trial>, String>) -> Vec<Trial> {
    let dir = kits_base().join(kit);
    if !dir.is_dir() {
        let trial_name = format!("{test} [kits not found: set CHATFMT_KITS]");
        let message = format!(
            "conformance kit {} is missing (CI=true requires it; set CHATFMT_KITS)",
            dir.display()
        );
        let required = kits_required();
        return vec![Trial::test(trial_name, move || Err(message.into())).with_ignored_flag(!required)];
    }
    match make(dir) {
        Ok(trials) => trials,
        Err(e) => vec![Trial::test(test, move || Err(e.into()))],
    }
}

/// Runs the trials with libtest's command line (filters, `--ignored`, `--list`, ...) and exits.
pub fn run(trials: Vec<Trial>) -> ! {
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}

/// Passes when nothing failed, else fails with a header and the first [`SHOWN`] failures.
pub fn check(header: impl FnOnce() -> String, failures: Vec<String>) -> Result<(), Failed> {
    if failures.is_empty() {
        return Ok(());
    }
    let mut out = header();
    for f in failures.iter().take(SHOWN) {
        out.push_str("\n\n");
        out.push_str(f);
    }
    if failures.len() > SHOWN {
        out.push_str(&format!("\n\n... and {} more", failures.len() - SHOWN));
    }
    Err(out.into())
}
