//! The conformance kits as tests: every case must match or be listed in KNOWN_DIFFERENCES.md.

use chatfmt::conformance::{self, KnownDifferences};

#[test]
fn hf_kit() {
    let Some(dir) = conformance::kit_for_test("hf") else {
        return;
    };
    let r = conformance::hf::run(&dir, &Default::default(), &KnownDifferences::bundled()).expect("kit readable");
    for f in r.failures.iter().take(5) {
        eprintln!(
            "--- {} / {} {} [{}]\nexpected: {:?}\nactual:   {:?}",
            f.template, f.scenario, f.options, f.kind, f.expected, f.actual
        );
    }
    eprintln!(
        "hf kit: {} / {} matched, {} documented",
        r.matched, r.cases, r.documented
    );
    assert_eq!(r.cases, 6248, "the hf kit has 6248 cases");
    assert_eq!(
        r.matched + r.documented,
        r.cases,
        "every hf case must match or be documented"
    );
}

#[test]
fn jinja_kit() {
    let Some(dir) = conformance::kit_for_test("jinja") else {
        return;
    };
    let r = conformance::jinja::run(&dir, &KnownDifferences::bundled()).expect("kit readable");
    for f in r.failures.iter().take(5) {
        eprintln!(
            "--- {} [{}]\nexpected: {:?}\nactual:   {:?}",
            f.id, f.kind, f.expected, f.actual
        );
    }
    eprintln!(
        "jinja kit: {} / {} matched, {} documented",
        r.matched, r.cases, r.documented
    );
    assert_eq!(r.cases, 3105, "the jinja kit has 3105 required probes");
    assert_eq!(
        r.matched + r.documented,
        r.cases,
        "every required jinja probe must match or be documented"
    );
}
