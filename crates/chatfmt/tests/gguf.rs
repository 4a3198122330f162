//! `ChatTemplate::from_gguf` over GGUF files written by the test helper.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "support/gguf_writer.rs"]
mod gguf_writer;

use chatfmt::template::{gguf_special_tokens, is_gguf};
use chatfmt::{ApplyOptions, ChatTemplate, ErrorKind};
use gguf_writer::{chat_model, gguf, V};
use serde_json::json;
use std::path::PathBuf;

const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-gguf-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write gguf");
    path
}

fn load_err(name: &str, bytes: &[u8]) -> String {
    let path = write(name, bytes);
    let e = ChatTemplate::from_gguf(&path).expect_err("should not load");
    assert_eq!(e.path(), Some(path.as_path()));
    e.to_string()
}

#[test]
fn template_and_special_tokens_from_v2_and_v3() {
    for version in [2, 3] {
        let path = write(&format!("v{version}.gguf"), &gguf(version, &chat_model(CHATML, vec![])));
        let t = ChatTemplate::from_gguf(&path).expect("loads");
        assert!(t.names().is_empty());
        assert_eq!(
            t.special_tokens(),
            json!({"bos_token": "<s>", "eos_token": "<|im_end|>"})
                .as_object()
                .unwrap()
        );
        let messages = vec![json!({"role": "user", "content": "hi"})];
        let opts = ApplyOptions {
            add_generation_prompt: true,
            ..Default::default()
        };
        assert_eq!(
            t.apply(&messages, &opts).expect("renders").text,
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
    }
}

#[test]
fn unknown_and_padding_tokens_are_taken_too() {
    let extra = vec![
        ("tokenizer.ggml.unknown_token_id", V::I32(0)),
        ("tokenizer.ggml.padding_token_id", V::U64(5)),
    ];
    let path = write(
        "unk-pad.gguf",
        &gguf(3, &chat_model("{{ unk_token }}{{ pad_token }}", extra)),
    );
    let t = ChatTemplate::from_gguf(&path).expect("loads");
    let text = t
        .apply(&[json!({"role": "user", "content": "x"})], &ApplyOptions::default())
        .expect("renders")
        .text;
    assert_eq!(text, "<unk>hi");
}

#[test]
fn named_templates_join_the_default() {
    let extra = vec![("tokenizer.chat_template.tool_use", V::Str("TOOLS {{ tools | length }}"))];
    let path = write("named.gguf", &gguf(3, &chat_model("DEFAULT", extra)));
    let t = ChatTemplate::from_gguf(&path).expect("loads");
    assert_eq!(t.names(), ["default", "tool_use"]);
    let messages = vec![json!({"role": "user", "content": "x"})];
    let plain = t.apply(&messages, &ApplyOptions::default()).expect("renders");
    assert_eq!(plain.text, "DEFAULT");
    let with_tools = ApplyOptions {
        tools: Some(json!([{"type": "function"}])),
        ..Default::default()
    };
    assert_eq!(t.apply(&messages, &with_tools).expect("renders").text, "TOOLS 1");
}

#[test]
fn only_named_templates() {
    let kv = vec![
        ("general.architecture", V::Str("llama")),
        ("tokenizer.chat_template.rag", V::Str("RAG")),
    ];
    let t = ChatTemplate::from_gguf(&write("only-named.gguf", &gguf(3, &kv))).expect("loads");
    assert_eq!(t.names(), ["rag"]);
    assert!(t.special_tokens().is_empty());
}

#[test]
fn no_template_says_what_was_looked_for() {
    let kv = chat_model("", vec![]);
    let kv: Vec<_> = kv
        .into_iter()
        .filter(|(k, _)| *k != "tokenizer.chat_template")
        .collect();
    let path = write("none.gguf", &gguf(3, &kv));
    assert_eq!(
        ChatTemplate::from_gguf(&path).unwrap_err().kind(),
        ErrorKind::NoTemplate
    );
    let tokens = gguf_special_tokens(&path).expect("tokens without a template");
    assert_eq!(
        tokens,
        *json!({"bos_token": "<s>", "eos_token": "<|im_end|>"})
            .as_object()
            .unwrap()
    );
    let e = load_err("none.gguf", &gguf(3, &kv));
    assert!(
        e.contains("no chat template") && e.contains("'tokenizer.chat_template'"),
        "{e}"
    );
    assert!(e.contains("--default-template"), "{e}");
}

#[test]
fn bad_token_ids_and_template_types_are_named() {
    let e = load_err(
        "bos-range.gguf",
        &gguf(
            3,
            &chat_model(CHATML, vec![("tokenizer.ggml.padding_token_id", V::U32(99))]),
        ),
    );
    assert!(
        e.contains("'tokenizer.ggml.padding_token_id' is 99, outside 'tokenizer.ggml.tokens' (6 tokens)"),
        "{e}"
    );
    let e = load_err(
        "pad-negative.gguf",
        &gguf(
            3,
            &chat_model(CHATML, vec![("tokenizer.ggml.padding_token_id", V::I32(-7))]),
        ),
    );
    assert!(e.contains("'tokenizer.ggml.padding_token_id' is -7, outside"), "{e}");
    // A negative id indexes from the end, as the Python list lookup in transformers does.
    let last = write(
        "pad-last.gguf",
        &gguf(
            3,
            &chat_model(CHATML, vec![("tokenizer.ggml.padding_token_id", V::I32(-1))]),
        ),
    );
    let t = ChatTemplate::from_gguf(&last).expect("loads");
    assert_eq!(t.special_tokens()["pad_token"], "hi");
    let e = load_err(
        "bos-type.gguf",
        &gguf(
            3,
            &[
                ("tokenizer.ggml.bos_token_id", V::Str("1")),
                ("tokenizer.chat_template", V::Str("x")),
            ],
        ),
    );
    assert!(
        e.contains("'tokenizer.ggml.bos_token_id' holds a string, not a token id"),
        "{e}"
    );
    let e = load_err(
        "no-tokens.gguf",
        &gguf(
            3,
            &[
                ("tokenizer.ggml.eos_token_id", V::U32(0)),
                ("tokenizer.chat_template", V::Str("x")),
            ],
        ),
    );
    assert!(e.contains("no 'tokenizer.ggml.tokens' array"), "{e}");
    let e = load_err("tpl-type.gguf", &gguf(3, &[("tokenizer.chat_template", V::U32(7))]));
    assert!(
        e.contains("'tokenizer.chat_template' holds a uint32, not a string template"),
        "{e}"
    );
}

#[test]
fn truncated_and_foreign_files_give_the_byte_offset() {
    let full = gguf(3, &chat_model(CHATML, vec![]));
    // Cut inside the chat template string (the last metadata value): the tensors after it are never read.
    let template_at = full
        .windows(CHATML.len())
        .position(|w| w == CHATML.as_bytes())
        .expect("template bytes");
    let e = load_err("cut.gguf", &full[..template_at + 10]);
    assert!(e.contains("cut.gguf: malformed GGUF at byte offset"), "{e}");
    assert!(
        e.contains("'tokenizer.chat_template'") && e.contains("truncated"),
        "{e}"
    );
    // Cutting the tensor data off changes nothing: only the metadata is read.
    let metadata_only = write("metadata-only.gguf", &full[..template_at + CHATML.len()]);
    assert!(ChatTemplate::from_gguf(&metadata_only).is_ok());
    let e = load_err("config.gguf", b"{\"chat_template\": \"x\"}");
    assert!(e.contains("byte offset 0") && e.contains("not a GGUF file"), "{e}");
    let e = ChatTemplate::from_gguf(&write("config.gguf", b"{}")).unwrap_err();
    assert_eq!((e.kind(), e.byte_offset()), (ErrorKind::Malformed, Some(0)));
    let e = ChatTemplate::from_gguf("/nonexistent/model.gguf".as_ref()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let e = format!("{e:#}");
    assert!(
        e.contains("/nonexistent/model.gguf: cannot open the GGUF file: "),
        "{e}"
    );
}

#[test]
fn gguf_files_are_recognised_by_extension_or_magic() {
    let named = write("x.GGUF", b"");
    assert!(is_gguf(&named));
    let by_magic = write("model.bin", &gguf(3, &chat_model(CHATML, vec![])));
    assert!(is_gguf(&by_magic));
    let json = write("tokenizer_config.json", b"{}");
    assert!(!is_gguf(&json));
}
