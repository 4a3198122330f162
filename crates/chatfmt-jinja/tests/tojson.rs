//! `tojson` on JSON of the context (read in place) against Python's `json.dumps`: the expected
//! strings were produced by CPython 3.11's `json.dumps` with the same arguments (`ensure_ascii`
//! false unless given, as transformers' `tojson` does).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_jinja::{Context, Template};
use serde_json::json;

fn render(expr: &str) -> String {
    let x = json!({"\u{e9}": 1, "b": [1.5, 18446744073709551615u64, -3, null, true, "a\"b\\c\n\t\u{1}\u{7f}\u{2028} \u{1f600}"], "a": {"z": {}, "y": []}, "\u{e4}": 1e100, "B": 0.1});
    let ctx = Context::from_json(json!({ "x": x })).expect("an object");
    let t = Template::new("t", &format!("{{{{ {expr} }}}}")).expect("compiles");
    t.render(&ctx).expect("renders").text
}

#[test]
fn plain() {
    assert_eq!(render("x | tojson"), "{\"\u{e9}\": 1, \"b\": [1.5, 18446744073709551615, -3, null, true, \"a\\\"b\\\\c\\n\\t\\u0001\u{7f}\u{2028} \u{1f600}\"], \"a\": {\"z\": {}, \"y\": []}, \"\u{e4}\": 1e+100, \"B\": 0.1}");
}

#[test]
fn sorted_keys() {
    assert_eq!(render("x | tojson(sort_keys=true)"), "{\"B\": 0.1, \"a\": {\"y\": [], \"z\": {}}, \"b\": [1.5, 18446744073709551615, -3, null, true, \"a\\\"b\\\\c\\n\\t\\u0001\u{7f}\u{2028} \u{1f600}\"], \"\u{e4}\": 1e+100, \"\u{e9}\": 1}");
}

#[test]
fn indented_and_sorted() {
    assert_eq!(render("x | tojson(indent=2, sort_keys=true)"), "{\n  \"B\": 0.1,\n  \"a\": {\n    \"y\": [],\n    \"z\": {}\n  },\n  \"b\": [\n    1.5,\n    18446744073709551615,\n    -3,\n    null,\n    true,\n    \"a\\\"b\\\\c\\n\\t\\u0001\u{7f}\u{2028} \u{1f600}\"\n  ],\n  \"\u{e4}\": 1e+100,\n  \"\u{e9}\": 1\n}");
}

#[test]
fn ensure_ascii() {
    assert_eq!(render("x | tojson(ensure_ascii=true)"), "{\"\\u00e9\": 1, \"b\": [1.5, 18446744073709551615, -3, null, true, \"a\\\"b\\\\c\\n\\t\\u0001\\u007f\\u2028 \\ud83d\\ude00\"], \"a\": {\"z\": {}, \"y\": []}, \"\\u00e4\": 1e+100, \"B\": 0.1}");
}

#[test]
fn compact_separators() {
    assert_eq!(render("x | tojson(separators=(',', ':'))"), "{\"\u{e9}\":1,\"b\":[1.5,18446744073709551615,-3,null,true,\"a\\\"b\\\\c\\n\\t\\u0001\u{7f}\u{2028} \u{1f600}\"],\"a\":{\"z\":{},\"y\":[]},\"\u{e4}\":1e+100,\"B\":0.1}");
}
