//! The special tokens a model folder gives its template, against transformers 5's `special_tokens_map`
//! for the folders of `tests/data/special_token_folders.jsonl` (`scripts/gen_special_token_folders.py`):
//! a legacy config's `special_tokens_map.json`, model-specific `*_token` keys and `extra_special_tokens`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chatfmt::template::model_dir_special_tokens;
use chatfmt::{ApplyOptions, ChatTemplate};
use serde_json::{json, Value};

#[test]
fn special_tokens_are_read_as_transformers_reads_them() {
    let data = include_str!("data/special_token_folders.jsonl");
    let base = std::env::temp_dir().join(format!("chatfmt-special-folders-{}", std::process::id()));
    let mut count = 0;
    for (n, line) in data.lines().enumerate() {
        let case: Value = serde_json::from_str(line).unwrap();
        let dir = base.join(n.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        // The template prints every token transformers passed, by name.
        let expected = case["expected"].as_object().unwrap();
        let names: Vec<&String> = expected.keys().collect();
        let template: String = names.iter().map(|k| format!("{k}={{{{ {k} }}}};")).collect();
        let mut config = case["tokenizer_config"].clone();
        config["chat_template"] = json!(template);
        std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
        if !case["special_tokens_map"].is_null() {
            std::fs::write(
                dir.join("special_tokens_map.json"),
                case["special_tokens_map"].to_string(),
            )
            .unwrap();
        }
        let name = case["name"].as_str().unwrap();
        let got = model_dir_special_tokens(&dir).unwrap();
        let pairs =
            |m: &serde_json::Map<String, Value>| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<Vec<_>>();
        assert_eq!(pairs(&got), pairs(expected), "{name}");
        let rendered = ChatTemplate::from_model_dir(&dir)
            .unwrap()
            .apply(&[json!({"role": "user", "content": "hi"})], &ApplyOptions::default())
            .unwrap();
        let want: String = names
            .iter()
            .map(|k| format!("{k}={};", expected[*k].as_str().unwrap()))
            .collect();
        assert_eq!(rendered.text, want, "{name}");
        count += 1;
    }
    std::fs::remove_dir_all(&base).unwrap();
    assert_eq!(count, 9);
}
