//! Reference tables recorded from Jinja2 (`tests/data/*.jsonl`, one probe a line): every probe is
//! replayed, and the test fails showing the first differing ones.

use serde_json::Value as Json;

/// How many differing probes a failure shows.
const SHOWN: usize = 15;

/// Replays the table `tests/data/{file}`, which must hold at least `min` probes: `differs` gives,
/// for a probe that does not match, what to show of it.
pub fn check(file: &str, min: usize, differs: impl Fn(&Json) -> Option<String>) {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let probes: Vec<Json> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(probes.len() >= min, "{} probes, at least {min} required", probes.len());
    let differing: Vec<String> = probes.iter().filter_map(differs).collect();
    let shown: Vec<&str> = differing.iter().take(SHOWN).map(String::as_str).collect();
    assert!(
        differing.is_empty(),
        "{} of {} probes differ\n{}",
        differing.len(),
        probes.len(),
        shown.join("\n")
    );
}

/// What a differing probe shows: its name, template, and both results.
pub fn shown(probe: &Json, want: &str, got: &str) -> String {
    format!(
        "--- {}\n  template: {:?}\n  expected: {want}\n  actual:   {got}",
        probe["name"].as_str().unwrap(),
        probe["template"].as_str().unwrap()
    )
}
