//! Runners for the conformance kits: they replay the reference cases through chatfmt and
//! count what matches. The `chatfmt conformance` command and the test suite both use them.

pub mod hf;
pub mod jinja;
mod known;

pub use known::KnownDifferences;

use serde::Serialize;
use std::path::Path;

/// One case that did not match.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// The case id (probe id, or template + scenario).
    pub id: String,
    /// What kind of mismatch (`output_mismatch`, `wrong_error_class`, ...).
    pub kind: String,
    /// The reference result.
    pub expected: String,
    /// chatfmt's result.
    pub actual: String,
}

/// Reads a JSON Lines file into values, naming the file and line on error.
pub fn read_jsonl(path: &Path) -> Result<Vec<serde_json::Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1)))
        .collect()
}
