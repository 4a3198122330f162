//! The documented differences: the "FastChat" section of `KNOWN_DIFFERENCES.md`, embedded.

use std::collections::HashSet;

const KNOWN_DIFFERENCES: &str = include_str!("../../../../../KNOWN_DIFFERENCES.md");

/// The documented (record id, field) pairs of the "FastChat" section of KNOWN_DIFFERENCES.md.
///
/// Format: inside `## FastChat`, a line `Field: `a`, `b`` sets the fields for the bullets
/// `- `record-id`` that follow it.
pub fn documented_differences() -> HashSet<(String, String)> {
    let mut out = HashSet::new();
    let mut in_section = false;
    let mut fields: Vec<String> = Vec::new();
    for line in KNOWN_DIFFERENCES.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            in_section = title.trim() == "FastChat";
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some(rest) = line
            .strip_prefix("Field: ")
            .or_else(|| line.strip_prefix("Fields: "))
        {
            fields = backticked(rest);
        } else if let Some(rest) = line.trim_start().strip_prefix("- `") {
            if let Some(id) = rest.split('`').next() {
                for field in &fields {
                    out.insert((id.to_owned(), field.clone()));
                }
            }
        } else if line.starts_with("### ") {
            fields.clear();
        }
    }
    out
}

fn backticked(s: &str) -> Vec<String> {
    s.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}
