//! The `{% generation %}` spans of a render against transformers 5.23.0's tracker
//! (`tests/data/generation_spans.jsonl`, written by `scripts/gen_generation_spans.py`): blocks in place,
//! and blocks where Jinja2 buffers text (macros, captured blocks, call blocks, nested blocks,
//! recursive loops), which the tracker places at the end of the text yielded so far.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chatfmt::jinja::CodePoints;
use chatfmt::{ApplyOptions, ChatTemplate};
use serde_json::{json, Map, Value};

#[test]
fn generation_spans_are_where_transformers_tracker_puts_them() {
    let data = include_str!("data/generation_spans.jsonl");
    let mut count = 0;
    for line in data.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let template = ChatTemplate::new(case["template"].as_str().unwrap(), Map::new());
        let messages = case["messages"].as_array().unwrap();
        let opts = ApplyOptions {
            add_generation_prompt: case["add_generation_prompt"].as_bool().unwrap(),
            ..ApplyOptions::default()
        };
        let got = match template.apply(messages, &opts) {
            Ok(r) => {
                let text = CodePoints::new(&r.text);
                let spans: Vec<_> = r.generation_spans.iter().map(|&s| text.span(s)).collect();
                json!({"text": r.text, "spans": spans})
            }
            Err(e) => json!({"error": {"name": e.kind().python_name(), "message": e.message()}}),
        };
        let want = match case.get("error") {
            Some(error) => json!({ "error": error }),
            None => json!({"text": case["text"], "spans": case["spans"]}),
        };
        assert_eq!(
            got, want,
            "template {}\nmessages {}",
            case["template"], case["messages"]
        );
        count += 1;
    }
    assert_eq!(count, 108);
}
