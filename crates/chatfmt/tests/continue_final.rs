//! `continue_final_message` on final messages whose content is not a plain string, against transformers
//! 5.23.0 (`tests/data/continue_final.jsonl`, written by `scripts/gen_continue_final_cases.py`): which
//! content block is continued, and the error Python raises on the others.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chatfmt::{ApplyOptions, ChatTemplate};
use serde_json::{json, Map, Value};

#[test]
fn continued_content_blocks_follow_transformers() {
    let data = include_str!("data/continue_final.jsonl");
    let opts = ApplyOptions {
        continue_final_message: Some("content".into()),
        ..ApplyOptions::default()
    };
    let mut count = 0;
    for line in data.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let template = ChatTemplate::new(case["template"].as_str().unwrap(), Map::new());
        let messages = [
            json!({"role": "user", "content": "Hi"}),
            json!({"role": "assistant", "content": case["content"]}),
        ];
        let got = match template.apply(&messages, &opts) {
            Ok(r) => json!({"status": "ok", "output": r.text}),
            Err(e) => json!({"status": "raised", "error": {"name": e.kind().python_name(), "message": e.message()}}),
        };
        let want = match case["status"].as_str() {
            Some("ok") => json!({"status": "ok", "output": case["output"]}),
            _ => json!({"status": "raised", "error": case["error"]}),
        };
        assert_eq!(got, want, "content {}", case["content"]);
        count += 1;
    }
    assert_eq!(count, 50);
}
