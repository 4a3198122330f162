//! The engine's top-level modules depend on each other one way: each may use only the modules
//! listed after it in [`LAYERS`]. The test reads every source file's `crate::` paths (in `use`
//! declarations, `use crate::{a, b}` groups and inline paths) and fails on a path to a module
//! above the file's own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::Path;

/// The top-level modules of `src/`, highest first.
const LAYERS: &[&str] = &[
    // Unit tests of the whole engine against CPython's behaviour.
    "cpython_tests",
    // The crate root (its re-exports, `crate::Template`, count as `lib`) and the public entry point.
    "lib",
    "template",
    // Lexing and parsing; filter and test names are resolved against the built-in tables here.
    "syntax",
    // Causal loops: the renders of a list's prefixes derived from one render.
    "causal",
    // Static analysis of a parsed template.
    "analysis",
    // Running a parsed template.
    "eval",
    // Templates of a simple shape rendered without the evaluator.
    "direct",
    // Output provenance recorded while rendering.
    "output",
    // Filters, tests, globals, methods and argument binding.
    "builtins",
    // What a render reads and produces.
    "context",
    // Python values and their operations.
    "value",
    // The syntax tree (values of macros and loops refer to it).
    "ast",
    // Low-level modules everyone may use.
    "limits",
    "error",
    "pystr",
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|m| *m == module)
}

/// The top-level module a file under `src/` belongs to.
fn module_of(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .to_string();
    first.trim_end_matches(".rs").to_string()
}

/// Every top-level module a source text names through `crate::`.
fn used_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            // `crate::{a, b::c, d::{e, f}}`: the first segment of each top-level item.
            let mut depth = 0;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        out.insert(ident(&group[j..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(after));
        }
        rest = after;
    }
    out.retain(|m| !m.is_empty());
    // Items of the crate root (`crate::Template`) are its re-exports.
    out.into_iter()
        .map(|m| {
            if m.starts_with(char::is_uppercase) {
                "lib".to_string()
            } else {
                m
            }
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_depend_only_on_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let module = module_of(rel);
        let Some(own) = layer(&module) else {
            problems.push(format!("{}: module `{module}` is not in LAYERS", rel.display()));
            continue;
        };
        for used in used_modules(&std::fs::read_to_string(file).unwrap()) {
            match layer(&used) {
                None => problems.push(format!("{}: `crate::{used}` is not in LAYERS", rel.display())),
                Some(l) if l < own => problems.push(format!(
                    "{}: `{module}` uses `crate::{used}`, a module above it",
                    rel.display()
                )),
                Some(_) => {}
            }
        }
    }
    assert!(
        problems.is_empty(),
        "back edges between modules:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_reader_finds_paths_in_every_form() {
    let text = "use crate::a::b;\nuse crate::{c, d::e, f::{g, h}};\nlet x = crate::i::j(1);\n/// [`crate::T`]";
    let found: Vec<String> = used_modules(text).into_iter().collect();
    assert_eq!(found, ["a", "c", "d", "f", "i", "lib"]);
}
