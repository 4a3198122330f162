//! How a kit trial shows a failing case: expected against actual, cut short.
#![allow(dead_code)] // each test file uses a different subset

/// Expected and actual text from a little before their first difference.
pub fn diff(expected: &str, actual: &str) -> String {
    let (at, start) = chatfmt_conformance::first_difference(expected, actual);
    format!(
        "first difference at byte {at}\n  expected: {}\n  actual:   {}",
        clip(&expected[start..], start > 0),
        clip(&actual[start..], start > 0)
    )
}

/// Expected and actual values of different kinds (an error against an output), each cut short.
pub fn both(expected: &str, actual: &str) -> String {
    format!(
        "  expected: {}\n  actual:   {}",
        clip(expected, false),
        clip(actual, false)
    )
}

/// The text quoted, at most 200 characters of it, with `...` where it was cut.
fn clip(text: &str, cut_before: bool) -> String {
    let shown: String = text.chars().take(200).collect();
    let before = if cut_before { "..." } else { "" };
    let after = if shown.len() < text.len() { "..." } else { "" };
    format!("{before}{shown:?}{after}")
}
