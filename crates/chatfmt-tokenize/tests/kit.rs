//! The tokens kit as a test: every case must match or be documented in KNOWN_DIFFERENCES.md.

use chatfmt::conformance::{kits_dir, KnownDifferences};
use chatfmt_tokenize::conformance;

#[test]
fn tokens_kit() {
    let dir = kits_dir().join("tokens");
    if !dir.exists() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!(
                "conformance kit {} is missing (CI=true requires it; set CHATFMT_KITS)",
                dir.display()
            );
        }
        eprintln!(
            "SKIPPED: conformance kit {} not found (set CHATFMT_KITS to run it)",
            dir.display()
        );
        return;
    }
    let r = conformance::run(&dir, &KnownDifferences::bundled()).expect("kit readable");
    for f in r.failures.iter().take(5) {
        eprintln!(
            "--- {} [{}]\nexpected: {}\nactual:   {}",
            f.id, f.kind, f.expected, f.actual
        );
    }
    eprintln!(
        "tokens kit: {} / {} matched, {} documented",
        r.matched, r.cases, r.documented
    );
    assert_eq!(r.cases, 1579, "the tokens kit has 1579 cases");
    assert_eq!(
        r.matched + r.documented,
        r.cases,
        "every tokens case must match or be documented"
    );
}
