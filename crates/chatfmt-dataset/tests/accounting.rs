//! Every row is accounted for: rows in = rows out + rows rejected, every input row is in the output
//! in input order (its object first, then the new keys; a bad row with its `error`), bad rows land in
//! the rejects file with their index and reason, and tokenized rows equal the tokenizer's own result.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;
mod support;

use chatfmt::TemplateRequest;
use chatfmt_dataset::{run, Config};
use serde_json::{json, Value as Json};
use std::path::Path;
use std::sync::Arc;
use support::temp_dir;

fn config(input: &Path, model: &Path, dir: &Path, tokenize: bool) -> Config {
    let template = TemplateRequest {
        model: Some(model.display().to_string()),
        template: None,
        ..Default::default()
    }
    .resolve()
    .expect("the template loads")
    .template;
    Config {
        tokenizer: tokenize.then(|| model.to_path_buf()),
        text: false,
        ..support::config(input, template, dir)
    }
}

fn read_lines(path: &Path) -> Vec<Json> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| chatfmt::json_input::from_str(l).expect("JSON line"))
        .collect()
}

/// Good rows mixed with every kind of bad row.
const INPUT: &str = r#"{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]}
{"messages": [{"role": "user", "content": "broken"
{"conversations": [{"from": "human", "value": "Q"}, {"from": "gpt", "value": "A"}]}

{"messages": 42}
{"conversations": [{"from": "bot", "value": "?"}]}
{"prompt": "no conversation"}
{"messages": [{"role": "user", "content": "last"}], "id": 7}
{"messages": [{"role": "user", "content": "clash"}], "text": "mine"}
"#;

#[test]
fn bad_rows_are_rejected_with_their_index_and_reason() {
    let dir = temp_dir("rejects");
    let input = dir.join("in.jsonl");
    std::fs::write(&input, INPUT).expect("write input");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/chatml-model");
    let cfg = config(&input, &model, &dir, false);
    let s = run(&cfg).expect("run");
    assert_eq!(s.rows_in, 8);
    assert_eq!(s.rows_in, s.rows_out + s.rows_rejected);
    assert_eq!((s.rows_out, s.rows_rejected), (3, 5));
    let out = read_lines(&cfg.output);
    assert_eq!(out.len(), 8, "every input row is in the output");
    let formatted: Vec<usize> = (0..out.len()).filter(|&i| out[i]["error"].is_null()).collect();
    assert_eq!(formatted, vec![0, 2, 6]);
    assert_eq!(
        out[2]["text"],
        "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n"
    );
    // Each line is the input object, its keys in order, then the new keys.
    let keys = |r: &Json| r.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&out[6]), ["messages", "id", "text", "error"]);
    assert_eq!(out[6]["id"], 7);
    let inputs: Vec<&str> = INPUT.lines().filter(|l| !l.trim().is_empty()).collect();
    let input_row: Json = serde_json::from_str(inputs[6]).unwrap();
    assert_eq!(out[6]["messages"], input_row["messages"]);
    assert_eq!(keys(&out[5]), ["prompt", "text", "error"]);
    // A line that is not an object has the new keys only; a failed row has nulls but its error.
    assert_eq!(keys(&out[1]), ["text", "error"]);
    assert!(out[1]["text"].is_null());
    let rejects = read_lines(&cfg.rejects);
    let reasons: Vec<(u64, String)> = rejects
        .iter()
        .map(|r| {
            (
                r["index"].as_u64().unwrap_or(99),
                r["error"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(reasons.len(), 5);
    assert!(
        reasons[0].0 == 1 && reasons[0].1.contains("line 2: malformed JSON"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].0 == 3
            && reasons[1]
                .1
                .contains("must be a list of messages (or a JSON string of one), got a number")
    );
    assert!(reasons[2].0 == 4 && reasons[2].1.contains("unknown ShareGPT role"));
    assert!(reasons[3].0 == 5 && reasons[3].1.contains("missing field `messages`"));
    // A row with a key named like a new column is rejected.
    assert!(
        reasons[4].0 == 7 && reasons[4].1.contains("already has the output columns [\"text\"]"),
        "{reasons:?}"
    );

    let kinds: Vec<&str> = rejects.iter().filter_map(|r| r["kind"].as_str()).collect();
    assert_eq!(kinds, ["InvalidInput"; 5]);
    // The output's `error` is the reject's kind and reason.
    for r in &rejects {
        let row = &out[r["index"].as_u64().unwrap() as usize];
        assert_eq!(
            row["error"],
            format!("{}: {}", r["kind"].as_str().unwrap(), r["error"].as_str().unwrap())
        );
    }
    assert!(rejects.iter().all(|r| r.as_object().map(|o| o.len()) == Some(3)));

    // A failed strict run leaves the previous outputs byte for byte and no temporary file.
    let before = (
        std::fs::read(&cfg.output).unwrap(),
        std::fs::read(&cfg.rejects).unwrap(),
    );
    let strict = Config { strict: true, ..cfg };
    let err = run(&strict).expect_err("--strict stops at the first reject");
    assert_eq!(err.kind(), chatfmt_dataset::ErrorKind::Rejected);
    assert!(err.to_string().contains("row 1: InvalidInput: line 2"), "{err}");
    let after = (
        std::fs::read(&strict.output).unwrap(),
        std::fs::read(&strict.rejects).unwrap(),
    );
    assert!(before == after, "a failed run changed the previous outputs");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");

    // With no rejects, a stale rejects file from the earlier run is replaced by an empty one.
    std::fs::write(&input, "{\"messages\": [{\"role\": \"user\", \"content\": \"ok\"}]}\n").unwrap();
    let clean = Config {
        strict: false,
        ..strict
    };
    let s = run(&clean).expect("run");
    assert_eq!((s.rows_out, s.rows_rejected, s.rejects_file), (1, 0, None));
    assert_eq!(std::fs::read(&clean.rejects).unwrap(), b"");
    // ... and none is created where there was none.
    let fresh = Config {
        rejects: dir.join("never.jsonl"),
        ..clean
    };
    run(&fresh).expect("run");
    assert!(!fresh.rejects.exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn tokenized_rows_match_the_tokenizer_and_template_errors_are_rejects() {
    let Some(kit) = kits::kit_for_test("tokens") else {
        return;
    };
    let model = kit.join("tokenizers/qwen3");
    let dir = temp_dir("tokens");
    let input = dir.join("in.jsonl");
    let rows = [
        json!({"messages": [{"role": "user", "content": "Hi é"}, {"role": "assistant", "content": "Hello!"}]}),
        json!({"messages": [{"role": "assistant", "content": "no user"}]}),
        json!({"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"},
                            {"role": "assistant", "content": "A", "reasoning_content": "think"}]}),
    ];
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&input, text).expect("write input");
    let mut cfg = config(&input, &model, &dir, true);
    cfg.text = true;
    let template = TemplateRequest {
        model: Some(model.display().to_string()),
        template: Some(kit.join("../hf/corpus/EssentialAI--rnj-1.jinja")),
        ..Default::default()
    };
    cfg.template = Arc::new(template.resolve().expect("the template loads").template);
    let s = run(&cfg).expect("run");
    assert_eq!(s.rows_in, s.rows_out + s.rows_rejected);
    let out = read_lines(&cfg.output);
    let tokenizer = chatfmt_tokenize::ChatTokenizer::from_model_dir(&model).expect("tokenizer");
    assert_eq!(out.len(), rows.len());
    for r in out.iter().filter(|r| r["error"].is_null()) {
        assert_eq!(
            r.as_object().unwrap().keys().next().map(String::as_str),
            Some("messages")
        );
        let text = r["text"].as_str().expect("text");
        let ids: Vec<u32> = serde_json::from_value(r["input_ids"].clone()).expect("ids");
        assert_eq!(ids, tokenizer.encode_ids(text).expect("encode"));
        assert_eq!(r["assistant_masks"].as_array().map(Vec::len), Some(ids.len()));
        assert!(r["assistant_masks"].as_array().is_some_and(|m| m.contains(&json!(1))));
    }
    assert_eq!(
        s.tokens,
        out.iter()
            .filter_map(|r| r["input_ids"].as_array())
            .map(|a| a.len() as u64)
            .sum::<u64>()
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn rows_nested_past_the_limit_are_rejected_at_the_place() {
    let dir = temp_dir("deep");
    let input = dir.join("in.jsonl");
    let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let row = |n: usize| {
        format!(
            r#"{{"messages": [{{"role": "user", "content": "x"}}], "extra": {}}}"#,
            nested(n)
        )
    };
    std::fs::write(&input, format!("{}\n{}\n", row(1400), row(1600))).expect("write input");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/chatml-model");
    let cfg = config(&input, &model, &dir, false);
    let s = run(&cfg).expect("run");
    assert_eq!((s.rows_out, s.rows_rejected), (1, 1));
    let out = read_lines(&cfg.output);
    let mut deepest = &out[0]["extra"];
    for _ in 1..1400 {
        deepest = &deepest[0];
    }
    assert_eq!(deepest, &json!([]), "the row's other columns are written back whole");
    let rejects = read_lines(&cfg.rejects);
    // The row object is level 1: level 1501 opens at the 1,500th bracket of `extra`, after 58 bytes.
    assert_eq!(
        rejects[0]["error"],
        "line 2, column 1558: arrays and objects nested deeper than 1500 levels, the most a row may have"
    );
}
