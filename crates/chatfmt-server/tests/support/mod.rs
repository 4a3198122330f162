//! What the server's integration tests share: the app on the kit's Qwen3 tokenizer, one request
//! in-process, and the fixture's type checks.
#![allow(dead_code)] // each test file uses a different subset

#[path = "../../../chatfmt/tests/support/kits.rs"]
mod kits;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use chatfmt_server::{App, Config, ModelSpec};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::path::PathBuf;
use tower::ServiceExt;

pub fn qwen3() -> Option<PathBuf> {
    kits::kit_for_test("tokens/tokenizers/qwen3")
}

/// A model folder with the tokens kit's Mistral 7B v0.1 tokenizer (SentencePiece with byte
/// fallback) and a small chat template, which the folder lacks.
pub fn mistral() -> Option<PathBuf> {
    let kit = kits::kit_for_test("tokens/tokenizers/mistral-7b-v0.1")?;
    let dir = std::env::temp_dir().join(format!("chatfmt-server-mistral-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(kit.join("tokenizer.json"), dir.join("tokenizer.json")).unwrap();
    let mut config: Value = serde_json::from_slice(&std::fs::read(kit.join("tokenizer_config.json")).unwrap()).unwrap();
    config["chat_template"] = json!("{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}");
    std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
    Some(dir)
}

/// A model folder with the kit's Qwen3 tokenizer and `template` as its chat template, named `name`
/// (unique per test process).
pub fn qwen3_with_template(name: &str, template: &str) -> Option<PathBuf> {
    let kit = qwen3()?;
    let dir = std::env::temp_dir().join(format!("chatfmt-server-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(kit.join("tokenizer.json"), dir.join("tokenizer.json")).unwrap();
    let mut config: Value = serde_json::from_slice(&std::fs::read(kit.join("tokenizer_config.json")).unwrap()).unwrap();
    config["chat_template"] = json!(template);
    std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
    Some(dir)
}

pub fn app_with(config: Config) -> App {
    App::load(config).expect("the models load")
}

pub fn app(dir: &std::path::Path) -> App {
    app_with(Config {
        models: vec![ModelSpec::parse(&dir.display().to_string())],
        workers: 2,
        ..Config::default()
    })
}

pub async fn call(
    app: &App,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> (StatusCode, Value, Option<String>) {
    let mut request = Request::builder().method(method).uri(path);
    if let Some(ct) = content_type {
        request = request.header(header::CONTENT_TYPE, ct);
    }
    let response = app
        .router()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let retry = response
        .headers()
        .get(header::RETRY_AFTER)
        .map(|v| v.to_str().unwrap().to_string());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, value, retry)
}

pub async fn post(app: &App, path: &str, body: Value) -> (StatusCode, Value) {
    let (s, v, _) = call(
        app,
        "POST",
        path,
        Some("application/json"),
        body.to_string().into_bytes(),
    )
    .await;
    (s, v)
}

pub fn fixture() -> Value {
    serde_json::from_str(include_str!("../data/routes.json")).unwrap()
}

/// Whether `value` has the fixture's type (`int`, `string|null`, `list<int>`, ...).
pub fn has_type(value: &Value, ty: &str) -> bool {
    ty.split('|').any(|t| match t {
        "int" => value.is_u64() || value.is_i64(),
        "bool" => value.is_boolean(),
        "string" => value.is_string(),
        "null" => value.is_null(),
        "object" => value.is_object(),
        _ => match t.strip_prefix("list<").and_then(|r| r.strip_suffix('>')) {
            Some(item) => value.as_array().is_some_and(|a| a.iter().all(|v| has_type(v, item))),
            None => t == "list" && value.is_array(),
        },
    })
}

pub fn check_keys(what: &str, value: &Value, spec: &Value) {
    let obj = value
        .as_object()
        .unwrap_or_else(|| panic!("{what}: not an object: {value}"));
    let spec = spec.as_object().unwrap();
    let got: Vec<&String> = obj.keys().collect();
    let want: Vec<&String> = spec.keys().collect();
    let mut g = got.clone();
    let mut w = want.clone();
    g.sort();
    w.sort();
    assert_eq!(g, w, "{what}: keys of {value}");
    for (k, ty) in spec {
        assert!(
            has_type(&obj[k], ty.as_str().unwrap()),
            "{what}: {k} should be {ty}: {}",
            obj[k]
        );
    }
}

/// Checks an error answer of vLLM's, llama.cpp's or chatfmt's routes: the fixture's `error` in
/// `{"error": ...}`.
pub fn check_error(what: &str, status: StatusCode, value: &Value) {
    // A template error's place in the template comes as `line` and `column`, both or neither.
    let mut error = value["error"].clone();
    if let Some(obj) = error.as_object_mut() {
        if let Some(line) = obj.remove("line") {
            let column = obj.remove("column").expect("column comes with line");
            assert!(
                line.is_u64() && (column.is_u64() || column.is_null()),
                "{what}: {value}"
            );
        }
    }
    check_keys(what, &error, &fixture()["error"]);
    assert_eq!(value.as_object().unwrap().len(), 1, "{what}: {value}");
    assert_eq!(value["error"]["code"], json!(status.as_u16()), "{what}");
}

/// Checks an error answer of the route at `path` in the shape of its stack: SGLang's flat
/// `sglang_error`, TGI's `tgi_error` (or plain text, as axum's `Json` extractor answers), else
/// [`check_error`]'s. The server's own answers (401, 405) are `check_error`'s everywhere.
pub fn check_route_error(path: &str, status: StatusCode, value: &Value) {
    let ours = [StatusCode::UNAUTHORIZED, StatusCode::METHOD_NOT_ALLOWED].contains(&status);
    match path {
        "/v1/tokenize" | "/v1/detokenize" if !ours => {
            check_keys(path, value, &fixture()["sglang_error"]);
            assert_eq!(value["code"], json!(status.as_u16()), "{path}: {value}");
            let kind = value["type"].as_str().unwrap();
            let status_text = status.as_u16().to_string();
            assert!(
                ["Bad Request", "BadRequestError", status_text.as_str()].contains(&kind),
                "{path}: {value}"
            );
        }
        "/chat_tokenize" if !ours => match value {
            Value::String(_) => assert!(
                [400, 413, 415, 422].contains(&status.as_u16()),
                "{path}: {status} {value}"
            ),
            _ => check_keys(path, value, &fixture()["tgi_error"]),
        },
        _ => check_error(path, status, value),
    }
}

/// The message of an error answer of any shape.
pub fn error_message(value: &Value) -> &str {
    (value["error"]["message"].as_str())
        .or_else(|| value["message"].as_str())
        .or_else(|| value["error"].as_str())
        .or_else(|| value.as_str())
        .unwrap_or_else(|| panic!("no error message in {value}"))
}
