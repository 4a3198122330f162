//! The playground: the page at `/` with its test hooks (also without the API key), and the JSON
//! routes it reads, checked against `/v1/render` and `/detokenize`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)]

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use chatfmt_server::{App, Config, ModelSpec};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::path::Path;
use tower::ServiceExt;

const CHATML: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/chatml-model");

/// The `data-testid` hooks of the page (`message-content-N` and `token-N` by their prefix).
const HOOKS: [&str; 12] = [
    "model-select",
    "template-input",
    "messages-json",
    "message-content-",
    "add-generation-prompt",
    "continue-final-message",
    "prompt-text",
    "template-error",
    "token-",
    "data-id",
    "data-mask",
    "api-key",
];

fn app(models: &[String], api_key: Option<&str>) -> App {
    App::load(Config {
        models: models.iter().map(|m| ModelSpec::parse(m)).collect(),
        workers: 1,
        api_key: api_key.map(str::to_string),
        ..Config::default()
    })
    .unwrap()
}

async fn call(app: &App, request: Request<Body>) -> (StatusCode, Option<String>, Vec<u8>) {
    let response = app.router().oneshot(request).await.unwrap();
    let status = response.status();
    let ct = (response.headers().get(header::CONTENT_TYPE)).map(|v| v.to_str().unwrap().to_string());
    let bytes = response.into_body().collect().await.unwrap().to_bytes().to_vec();
    (status, ct, bytes)
}

async fn post(app: &App, path: &str, body: Value) -> (StatusCode, Value) {
    let request = Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let (status, _, bytes) = call(app, request).await;
    (status, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn the_page_is_html_with_every_hook_and_loads_without_the_key() {
    let app = app(&[format!("chatml={CHATML}")], Some("k"));
    let (status, ct, bytes) = call(&app, Request::get("/").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(ct.unwrap().starts_with("text/html"));
    let page = String::from_utf8(bytes).unwrap();
    for hook in HOOKS {
        assert!(page.contains(hook), "the page has no {hook}");
    }
    for hook in [
        "model-select",
        "template-input",
        "prompt-text",
        "template-error",
        "messages-json",
    ] {
        assert!(page.contains(&format!("data-testid=\"{hook}\"")), "{hook}");
    }
    // Self-contained: nothing is loaded from elsewhere.
    for outside in ["http://", "https://", "src=", "href=", "@import", "url("] {
        assert!(!page.contains(outside), "the page loads something: {outside}");
    }
    // The page's data routes are under /v1 and need the key, as the API's do.
    let (status, _, _) = call(&app, Request::get("/v1/playground/models").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let request = Request::get("/v1/playground/models")
        .header(header::AUTHORIZATION, "Bearer k")
        .body(Body::empty())
        .unwrap();
    let (status, _, bytes) = call(&app, request).await;
    assert_eq!(status, StatusCode::OK);
    let models: Value = serde_json::from_slice(&bytes).unwrap();
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(CHATML).join("tokenizer_config.json")).unwrap())
            .unwrap();
    assert_eq!(
        models,
        json!({"data": [{
            "id": "chatml",
            "templates": [{"name": null, "source": config["chat_template"]}],
            "special_tokens": ["<|im_end|>", "<|endoftext|>"],
            "tokenizer": false,
        }]})
    );
}

#[tokio::test]
async fn token_offsets_match_the_render_and_each_token_decodes_to_its_characters() {
    let Some(dir) = kits::kit_for_test("tokens/tokenizers/qwen3") else {
        return;
    };
    let app = app(&[format!("qwen3={}", dir.display())], None);
    let messages = json!([
        {"role": "user", "content": "Hi \u{1F600} there \u{1D518}\u{1F44B}\u{1F3FD} ok"},
        {"role": "assistant", "content": "\u{1F680}\u{1F680} ok \u{2014} caf\u{e9}"},
    ]);
    let (status, rendered) = post(&app, "/v1/render", json!({"messages": messages})).await;
    assert_eq!(status, StatusCode::OK, "{rendered}");
    let text = rendered["text"].as_str().unwrap();
    let (status, tokens) = post(&app, "/v1/playground/tokens", json!({"text": text})).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["input_ids"], rendered["input_ids"]);
    let chars: Vec<char> = text.chars().collect();
    let ids: Vec<u64> = tokens["input_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let offsets: Vec<(usize, usize)> = (tokens["offsets"].as_array().unwrap().iter())
        .map(|o| (o[0].as_u64().unwrap() as usize, o[1].as_u64().unwrap() as usize))
        .collect();
    let special: Vec<bool> = tokens["special"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_bool().unwrap())
        .collect();
    assert_eq!((offsets.len(), special.len()), (ids.len(), ids.len()));
    // The tokens cover every character once or, where they split one, share it (text that NFC
    // leaves as it is); runs of tokens that share characters decode to exactly those characters.
    let mut group: Vec<u64> = Vec::new();
    let (mut from, mut to) = (0, 0);
    let mut shared_groups = 0;
    for (i, &(s, e)) in offsets.iter().enumerate() {
        assert!(s < e && e <= chars.len() && s >= from, "token {i}: {s}..{e}");
        if s >= to {
            assert_eq!(s, to, "a gap before token {i}");
            if !group.is_empty() {
                check_decodes(&app, &group, &chars[from..to].iter().collect::<String>()).await;
                shared_groups += usize::from(group.len() > 1);
                group.clear();
            }
            from = s;
        }
        group.push(ids[i]);
        to = to.max(e);
    }
    check_decodes(&app, &group, &chars[from..to].iter().collect::<String>()).await;
    assert_eq!(to, chars.len());
    assert!(shared_groups > 0, "no emoji was split across tokens");
    // Special tokens are the added tokens marked special.
    let marked: Vec<String> = (offsets.iter().zip(&special))
        .filter(|(_, &s)| s)
        .map(|(&(s, e), _)| chars[s..e].iter().collect())
        .collect();
    assert_eq!(marked, ["<|im_start|>", "<|im_end|>", "<|im_start|>", "<|im_end|>"]);
    // A model without a tokenizer has no tokens; an unknown field is refused.
    let app = self::app(&[format!("chatml={CHATML}")], None);
    let (status, v) = post(&app, "/v1/playground/tokens", json!({"text": "x"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    let (status, v) = post(&app, "/v1/playground/tokens", json!({"text": "x", "ids": 1})).await;
    assert_eq!(
        (status, &v["error"]["param"]),
        (StatusCode::BAD_REQUEST, &json!("body.ids"))
    );
}

async fn check_decodes(app: &App, ids: &[u64], want: &str) {
    let (status, v) = post(app, "/detokenize", json!({"model": "qwen3", "tokens": ids})).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["prompt"], want, "tokens {ids:?}");
}
