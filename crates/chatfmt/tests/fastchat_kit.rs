//! Runs the whole FastChat conformance kit (`../shared/conformance/fastchat` beside the repo, or
//! `$CHATFMT_KITS/fastchat`). A missing kit is a loud skip, or a failure when `CI=true`.

use chatfmt::conversation::conformance::{run_kit, Failure};
use std::path::PathBuf;

fn kit_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("CHATFMT_KITS") {
        Some(kits) => PathBuf::from(kits).join("fastchat"),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/fastchat")
        }
    };
    if dir.join("goldens.jsonl").exists() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "FastChat kit not found at {} (CI=true: a missing kit is a failure)",
            dir.display()
        );
    }
    eprintln!(
        "\n*** SKIPPED: FastChat conformance kit not found at {} ***\n",
        dir.display()
    );
    None
}

fn show(failures: &[Failure]) -> String {
    failures
        .iter()
        .take(8)
        .map(|f| {
            format!(
                "{} [{}]\n  expected: {}\n  actual:   {}",
                f.id, f.field, f.expected, f.actual
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn fastchat_kit_matches_or_is_documented() {
    let Some(dir) = kit_dir() else { return };
    let report = run_kit(&dir).expect("kit readable");
    assert_eq!(report.cases, 1544 + 254, "every kit record is checked");
    assert!(
        report.passed(),
        "{} matched + {} documented of {} cases; failures:\n{}",
        report.matched,
        report.documented,
        report.cases,
        show(&report.failures)
    );
}

#[test]
fn fastchat_kit_uncounted_outputs_match_or_are_documented() {
    let Some(dir) = kit_dir() else { return };
    let report = run_kit(&dir).expect("kit readable");
    assert!(
        report.extra_failures.is_empty(),
        "{} failures:\n{}",
        report.extra_failures.len(),
        show(&report.extra_failures)
    );
}

#[test]
fn fastchat_known_differences_are_not_stale() {
    let Some(dir) = kit_dir() else { return };
    let report = run_kit(&dir).expect("kit readable");
    assert!(
        report.stale_documented.is_empty(),
        "documented but matching: {:?}",
        report.stale_documented
    );
}
