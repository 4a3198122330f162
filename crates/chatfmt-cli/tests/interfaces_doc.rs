//! docs/INTERFACES.md lists every flag of every subcommand, as `--help` shows them.

use std::path::Path;
use std::process::Command;

const SUBCOMMANDS: &[&[&str]] = &[
    &["render"],
    &["tokenize"],
    &["dataset"],
    &["check"],
    &["serve"],
    &["templates", "list"],
    &["templates", "show"],
    &["templates", "match"],
    &["templates", "export"],
    &["templates", "set"],
    &["conformance", "hf"],
    &["conformance", "jinja"],
    &["conformance", "tokens"],
    &["conformance", "fastchat"],
];

/// The long flags `--help` lists for a subcommand (without `--help` itself).
fn flags(subcommand: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_chatfmt"))
        .args(subcommand)
        .arg("--help")
        .output()
        .expect("chatfmt runs");
    assert!(out.status.success(), "{subcommand:?} --help");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("-o, ").unwrap_or(l);
            l.strip_prefix("--")
                .map(|rest| rest.split([' ', '<', '[']).next().unwrap_or("").to_string())
        })
        .filter(|f| !f.is_empty() && f != "help")
        .map(|f| format!("--{f}"))
        .collect()
}

#[test]
fn every_flag_is_documented() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/INTERFACES.md"))
        .expect("INTERFACES.md");
    let mut missing = Vec::new();
    let mut seen = 0;
    for sub in SUBCOMMANDS {
        let name = sub.last().unwrap_or(&"");
        assert!(
            doc.contains(&format!("`chatfmt {name}"))
                || doc.contains(&format!("- `{name}"))
                || doc.contains(&format!("`{name}`")),
            "{sub:?} is not documented"
        );
        for flag in flags(sub) {
            seen += 1;
            if !doc.contains(&format!("`{flag}")) {
                missing.push(format!("{} {flag}", sub.join(" ")));
            }
        }
    }
    assert!(seen > 60, "the subcommands' flags were read ({seen})");
    assert!(missing.is_empty(), "flags missing from docs/INTERFACES.md: {missing:?}");
}
