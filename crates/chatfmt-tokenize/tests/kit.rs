//! The tokens kit as a test: every case must match or be documented in KNOWN_DIFFERENCES.md.

use chatfmt::conformance::{kit_for_test, KnownDifferences};
use chatfmt_tokenize::conformance;

#[test]
fn tokens_kit() {
    let Some(dir) = kit_for_test("tokens") else { return };
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
