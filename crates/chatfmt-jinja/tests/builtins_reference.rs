//! The reference table of built-ins (`tests/data/builtins.jsonl`, recorded from Jinja2 by
//! `scripts/gen_builtins_reference.py`): one trial per filter, test, global and method name, each
//! failing with its cases that differ, plus one trial for the table's size.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_jinja::{Context, Template};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The table's minimum size, and the minimum number of cases per name.
const MIN_CASES: usize = 3000;
const MIN_PER_NAME: usize = 8;
/// How many failing cases a trial's message shows.
const SHOWN: usize = 12;

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/builtins.jsonl");
    let text = std::fs::read_to_string(path).expect("the built-in reference table");
    let cases: Vec<Json> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let mut by_name: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    for c in &cases {
        let key = format!("{}::{}", c["kind"].as_str().unwrap(), c["name"].as_str().unwrap());
        by_name.entry(key).or_default().push(c.clone());
    }
    let by_name = Arc::new(by_name);
    let mut trials = Vec::new();
    for name in by_name.keys() {
        let (table, name) = (by_name.clone(), name.clone());
        trials.push(Trial::test(name.clone(), move || check_name(&table[&name])));
    }
    let total = cases.len();
    trials.push(Trial::test("case_counts", move || {
        let mut problems = Vec::new();
        if total < MIN_CASES {
            problems.push(format!("{total} cases, at least {MIN_CASES} required"));
        }
        for (name, cs) in by_name.iter() {
            if cs.len() < MIN_PER_NAME {
                problems.push(format!("{name}: {} cases, at least {MIN_PER_NAME} required", cs.len()));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n").into())
        }
    }));
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}

/// Passes when every case of one name matches.
fn check_name(cases: &[Json]) -> Result<(), Failed> {
    let failures: Vec<String> = cases.iter().filter_map(|c| check_case(c).err()).collect();
    if failures.is_empty() {
        return Ok(());
    }
    let mut out = format!("{} of {} cases differ", failures.len(), cases.len());
    for f in failures.iter().take(SHOWN) {
        out.push_str("\n\n");
        out.push_str(f);
    }
    if failures.len() > SHOWN {
        out.push_str(&format!("\n\n... and {} more", failures.len() - SHOWN));
    }
    Err(out.into())
}

/// The rendering of one case against its record, or a readable description of the difference.
fn check_case(c: &Json) -> Result<(), String> {
    let src = c["template"].as_str().unwrap();
    let result = Template::new("<template>", src).and_then(|t| t.render(&Context::from_json(c["context"].clone())?));
    let header = format!(
        "--- {}\n  template: {src}\n  context:  {}",
        c["id"].as_str().unwrap(),
        c["context"]
    );
    let expected = match c["status"].as_str() {
        Some("ok") => match &c["output"] {
            Json::String(s) => format!("output {s:?}"),
            _ => format!("output with {}", c["property"]),
        },
        _ => format!(
            "{}: {}",
            c["error"]["name"].as_str().unwrap(),
            c["error"]["message"].as_str().unwrap()
        ),
    };
    let actual = match &result {
        Ok(r) => format!("output {:?}", r.text),
        Err(e) => format!("{}: {}", e.kind().python_name(), e.message()),
    };
    let matches = match (c["status"].as_str(), &result) {
        (Some("ok"), Ok(r)) => match &c["output"] {
            Json::String(s) => *s == r.text,
            _ => property_holds(&c["property"], &r.text),
        },
        (Some("raised"), Err(_)) => expected == actual,
        _ => false,
    };
    if matches {
        Ok(())
    } else {
        Err(format!("{header}\n  expected: {expected}\n  actual:   {actual}"))
    }
}

/// The checks of outputs that depend on the random state: `random` picks one of the input's items,
/// `lipsum` writes N paragraphs of MIN..MAX words, as `<p>` lines or blank-line separated.
fn property_holds(property: &Json, text: &str) -> bool {
    if let Some(options) = property["one_of"].as_array() {
        return options.iter().any(|o| o.as_str() == Some(text));
    }
    let (Some(n), Some(html), Some(min), Some(max)) = (
        property["paragraphs"].as_i64(),
        property["html"].as_bool(),
        property["min_words"].as_i64(),
        property["max_words"].as_i64(),
    ) else {
        return false;
    };
    if n <= 0 {
        return text.is_empty();
    }
    let paragraphs: Vec<&str> = if html {
        text.split('\n')
            .map(|p| p.strip_prefix("<p>").and_then(|p| p.strip_suffix("</p>")).unwrap_or(""))
            .collect()
    } else {
        text.split("\n\n").collect()
    };
    paragraphs.len() == n as usize
        && paragraphs.iter().all(|p| {
            let words = if *p == "." { 0 } else { p.split(' ').count() as i64 };
            p.ends_with('.') && words >= min && words < max
        })
}
