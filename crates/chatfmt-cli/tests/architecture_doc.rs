//! docs/ARCHITECTURE.md agrees with the workspace: its crate table lists every workspace crate with
//! exactly its workspace dependencies (from `cargo metadata`), and every file it names exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Each workspace crate and the workspace crates it depends on (normal dependencies).
fn workspace_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--manifest-path"])
        .arg(Path::new(ROOT).join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let members: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"].is_null())
                .filter_map(|d| d["name"].as_str())
                .filter(|name| members.contains(*name))
                .map(str::to_string)
                .collect();
            (p["name"].as_str().unwrap_or("").to_string(), deps)
        })
        .collect()
}

/// The crate table of the document: crate name and the dependencies it lists.
fn documented_graph(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    doc.lines()
        .filter(|l| l.starts_with("| `crates/"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 3, "a crate row has three cells: {l}");
            let name = cells[0].trim_matches('`').trim_start_matches("crates/").to_string();
            let deps = cells[2]
                .split(',')
                .map(|d| d.trim().trim_matches('`').to_string())
                .filter(|d| !d.is_empty() && d != "—")
                .collect();
            (name, deps)
        })
        .collect()
}

#[test]
fn the_crate_table_is_the_workspace() {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    assert_eq!(documented_graph(&doc), workspace_graph());
}

#[test]
fn every_named_file_exists() {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut named = 0;
    for path in doc.split('`').skip(1).step_by(2).filter(|s| s.starts_with("crates/")) {
        assert!(
            Path::new(ROOT).join(path).exists(),
            "docs/ARCHITECTURE.md names {path}, which does not exist"
        );
        named += 1;
    }
    assert!(named > 20, "the document names the files to look at ({named} found)");
}
