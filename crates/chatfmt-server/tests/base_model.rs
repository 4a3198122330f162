//! A model folder without a chat template (a base model) is served as its stacks serve it: the
//! plain-prompt routes work, llama.cpp's `/apply-template` renders ChatML (llama.cpp's fallback),
//! and the other chat routes render a template sent with the request or answer their stack's error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)]

mod support;

use axum::http::StatusCode;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::OnceLock;
use support::{app, check_route_error, error_message, post, qwen3};

/// The kit's Qwen3 folder without its chat template (written once, for every test), and the kit's.
fn base_model() -> Option<(PathBuf, PathBuf)> {
    static FOLDERS: OnceLock<Option<(PathBuf, PathBuf)>> = OnceLock::new();
    FOLDERS.get_or_init(write_base_model).clone()
}

fn write_base_model() -> Option<(PathBuf, PathBuf)> {
    let kit = qwen3()?;
    let dir = std::env::temp_dir().join(format!("chatfmt-server-base-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(kit.join("tokenizer.json"), dir.join("tokenizer.json")).unwrap();
    let mut config: Value = serde_json::from_slice(&std::fs::read(kit.join("tokenizer_config.json")).unwrap()).unwrap();
    config.as_object_mut().unwrap().remove("chat_template");
    std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
    assert!(!dir.join("chat_template.jinja").exists());
    Some((dir, kit))
}

fn hi() -> Value {
    json!([{"role": "user", "content": "Hi"}])
}

#[tokio::test]
async fn plain_prompt_routes_answer_as_for_the_full_folder() {
    let Some((dir, kit)) = base_model() else { return };
    let (base, full) = (app(&dir), app(&kit));
    for (path, body) in [
        (
            "/tokenize",
            json!({"prompt": "Hello world", "add_special_tokens": true}),
        ),
        ("/detokenize", json!({"tokens": [9707, 1879, 151645]})),
        ("/v1/tokenize", json!({"prompt": ["Hello", "world"]})),
        ("/tokenize", json!({"content": "Hello <|im_end|>", "with_pieces": true})),
    ] {
        let (s, got) = post(&base, path, body.clone()).await;
        assert_eq!(s, StatusCode::OK, "{path} {body}: {got}");
        let (_, want) = post(&full, path, body).await;
        assert_eq!(got, want, "{path}");
    }
}

#[tokio::test]
async fn apply_template_renders_chatml_as_llama_cpp_does() {
    let Some((dir, _)) = base_model() else { return };
    let (s, got) = post(
        &app(&dir),
        "/apply-template",
        json!({"messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"}
        ]}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{got}");
    assert_eq!(
        got["prompt"],
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[tokio::test]
async fn chat_routes_need_a_template_from_the_request() {
    let Some((dir, _)) = base_model() else { return };
    let app = app(&dir);
    let vllm = "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat \
                template if the tokenizer does not define one.";
    for path in ["/tokenize", "/v1/chat/completions/render"] {
        let (s, e) = post(&app, path, json!({"messages": hi()})).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{path}");
        check_route_error(path, s, &e);
        assert_eq!(error_message(&e), vllm, "{path}");
        assert_eq!(e["error"]["param"], Value::Null, "{path}");
    }
    let (s, e) = post(&app, "/v1/render", json!({"messages": hi()})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    check_route_error("/v1/render", s, &e);
    assert_eq!(e["error"]["param"], "body.chat_template");
    assert!(error_message(&e).contains("has no chat template"), "{e}");
    let (s, e) = post(&app, "/v1/tokenize", json!({"messages": hi()})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    check_route_error("/v1/tokenize", s, &e);
    assert!(
        error_message(&e).starts_with("Cannot use chat template functions because tokenizer.chat_template is not set"),
        "{e}"
    );
    let (s, e) = post(&app, "/chat_tokenize", json!({"messages": hi()})).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    check_route_error("/chat_tokenize", s, &e);
    assert_eq!(e["error"], "Template error: template not found");

    // A template sent with the request renders, with the folder's special tokens.
    let template = "{{ bos_token or '' }}{{ eos_token }}{% for m in messages %}[{{ m.content }}]{% endfor %}";
    let (s, got) = post(&app, "/v1/render", json!({"messages": hi(), "chat_template": template})).await;
    assert_eq!(s, StatusCode::OK, "{got}");
    assert_eq!(got["text"], "<|im_end|>[Hi]");
    let (s, got) = post(&app, "/tokenize", json!({"messages": hi(), "chat_template": template})).await;
    assert_eq!(s, StatusCode::OK, "{got}");
    let (_, plain) = post(
        &app,
        "/tokenize",
        json!({"prompt": "<|im_end|>[Hi]", "add_special_tokens": false}),
    )
    .await;
    assert_eq!(got["tokens"], plain["tokens"]);
}

#[tokio::test]
async fn the_playground_lists_no_template_for_it() {
    let Some((dir, _)) = base_model() else { return };
    let (s, got, _) = support::call(&app(&dir), "GET", "/v1/playground/models", None, Vec::new()).await;
    assert_eq!(s, StatusCode::OK, "{got}");
    assert_eq!(got["data"][0]["templates"], json!([]));
    assert_eq!(got["data"][0]["tokenizer"], true);
}

#[test]
fn a_folder_with_neither_template_nor_tokenizer_is_refused() {
    let dir = std::env::temp_dir().join(format!("chatfmt-server-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tokenizer_config.json"), r#"{"eos_token": "</s>"}"#).unwrap();
    let loaded = chatfmt_server::App::load(chatfmt_server::Config {
        models: vec![chatfmt_server::ModelSpec::parse(&dir.display().to_string())],
        ..chatfmt_server::Config::default()
    });
    let err = loaded.err().expect("refused").to_string();
    assert!(err.contains("neither a chat template nor tokenizer.json"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
