//! Runners for the conformance kits: they replay the reference cases through chatfmt and
//! count what matches. The `chatfmt conformance` command and the test suite both use them.

pub mod hf;
pub mod jinja;
mod known;

pub use known::KnownDifferences;

use serde::Serialize;
use std::path::{Path, PathBuf};

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

/// Where the kits live: `$CHATFMT_KITS`, else `../shared/conformance` above the workspace.
pub fn kits_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("CHATFMT_KITS") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance")
}

/// A kit (or a folder inside one) for a test: its path when present. When absent the test is
/// skipped with a loud message, except under `CI=true`, where a missing kit is a failure (panic).
pub fn kit_for_test(name: &str) -> Option<PathBuf> {
    let dir = kits_dir().join(name);
    if dir.exists() {
        return Some(dir);
    }
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
    None
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
