//! Where the conformance kits are, for the tests of every crate: `$CHATFMT_KITS`, else
//! `../shared/conformance` beside the repository. A missing kit is skipped, except under `CI=true`.
#![allow(dead_code)] // each test file uses a different subset

use std::path::{Path, PathBuf};

/// The folder holding the kits (`hf/`, `jinja/`, `tokens/`, `fastchat/`).
pub fn kits_base() -> PathBuf {
    match std::env::var_os("CHATFMT_KITS") {
        Some(dir) => PathBuf::from(dir),
        // Every crate sits at crates/NAME, so this is the same folder for all of them.
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"),
    }
}

/// Whether a missing kit is a failure rather than a skip (`CI=true`).
pub fn kits_required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// A kit (or a folder inside one) for a plain test: its path when present. When absent the test
/// is skipped with a note on stderr, except under `CI=true`, where a missing kit panics.
pub fn kit_for_test(name: &str) -> Option<PathBuf> {
    let dir = kits_base().join(name);
    if dir.exists() {
        return Some(dir);
    }
    if kits_required() {
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

/// The repository's KNOWN_DIFFERENCES.md.
pub fn known_differences_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../KNOWN_DIFFERENCES.md")
}

/// Reads a JSON file of a kit, naming the file on error.
pub fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The (scenario, special tokens, kwargs) combinations the hf kit's goldens render a template with.
pub type Runs = Vec<(
    String,
    serde_json::Map<String, serde_json::Value>,
    serde_json::Map<String, serde_json::Value>,
)>;

/// The runs of each template of the hf kit in `dir` (goldens with a `chat_template` option left
/// out), by template id, in the goldens' order.
pub fn golden_runs(dir: &Path) -> Result<std::collections::BTreeMap<String, Runs>, String> {
    let mut runs: std::collections::BTreeMap<String, Runs> = Default::default();
    for g in read_jsonl(&dir.join("goldens.jsonl"))? {
        let o = &g["options"];
        if o["chat_template"].is_string() {
            continue;
        }
        let run = (
            g["scenario"].as_str().unwrap_or_default().to_string(),
            g["special_tokens"].as_object().cloned().unwrap_or_default(),
            o["kwargs"].as_object().cloned().unwrap_or_default(),
        );
        let list = runs
            .entry(g["template"].as_str().unwrap_or_default().to_string())
            .or_default();
        if !list.contains(&run) {
            list.push(run);
        }
    }
    Ok(runs)
}

/// Reads a JSON Lines file of a kit, naming the file and line on error.
pub fn read_jsonl(path: &Path) -> Result<Vec<serde_json::Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1)))
        .collect()
}
