//! vLLM's render endpoints, SGLang's tokenizer routes, TGI's `/chat_tokenize`, `--api-key`'s
//! guarded paths, and docs/INTERFACES.md's route table against the served routes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)]

mod support;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use chatfmt_server::{Config, ModelSpec};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use support::{app, app_with, call, check_error, check_route_error, fixture, post, qwen3};
use tower::ServiceExt;

fn three_turns() -> Value {
    json!([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Bye"}
    ])
}

/// A model folder with the kit's Qwen3 tokenizer, a `config.json` of 4096 positions and a
/// `generation_config.json`.
fn qwen3_with_generation_config(kit: &Path) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-server-genconfig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(kit.join(name), dir.join(name)).unwrap();
    }
    std::fs::write(dir.join("config.json"), r#"{"max_position_embeddings": 4096}"#).unwrap();
    std::fs::write(
        dir.join("generation_config.json"),
        r#"{"temperature": 0.6, "top_p": 0.95, "top_k": 20, "max_new_tokens": 100, "eos_token_id": [151643]}"#,
    )
    .unwrap();
    dir
}

#[tokio::test]
async fn chat_render_is_vllms_generate_request() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let messages = three_turns();
    let (s, g) = post(&app, "/v1/chat/completions/render", json!({"messages": messages})).await;
    assert_eq!(s, StatusCode::OK, "{g}");
    let (_, t) = post(&app, "/tokenize", json!({"messages": messages})).await;
    assert_eq!(g["token_ids"], t["tokens"]);
    assert_eq!(g["features"], Value::Null);
    let id = g["request_id"].as_str().unwrap();
    let hex = id.strip_prefix("chatcmpl-").unwrap();
    assert!(
        hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()) && &hex[12..13] == "4",
        "{id}"
    );
    // No config.json: max_model_len is tokenizer_config's model_max_length (131072).
    let n = g["token_ids"].as_array().unwrap().len();
    assert_eq!(
        g["sampling_params"],
        json!({"presence_penalty": 0.0, "frequency_penalty": 0.0, "repetition_penalty": 1.0, "temperature": 1.0,
               "top_p": 1.0, "min_p": 0.0, "stop": [], "stop_token_ids": [], "max_tokens": 131072 - n,
               "output_kind": 2, "skip_clone": true, "bad_words": [], "skip_reading_prefix_cache": false})
    );
    assert_eq!(
        g["parse_context"],
        json!({"tools": null, "tool_choice": "none", "parallel_tool_calls": true, "include_reasoning": true,
               "chat_template_kwargs": {"add_generation_prompt": true, "continue_final_message": false},
               "history_tool_call_cnt": 0})
    );
    // The request's documents are among the kwargs vLLM's `build_chat_params` makes.
    let docs = json!([{"title": "t", "text": "x"}]);
    let (s, g) = post(
        &app,
        "/v1/chat/completions/render",
        json!({"messages": messages, "documents": docs, "chat_template_kwargs": {"k": 1}}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{g}");
    assert_eq!(
        g["parse_context"]["chat_template_kwargs"],
        json!({"k": 1, "add_generation_prompt": true, "continue_final_message": false, "documents": docs})
    );
    // `reasoning_effort` goes to the template with `enable_thinking`, as vLLM's build_chat_params puts
    // them among the kwargs (without a reasoning parser, no effort is mapped to another).
    let (s, g) = post(
        &app,
        "/v1/chat/completions/render",
        json!({"messages": messages, "reasoning_effort": "none"}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{g}");
    let kwargs = json!({"reasoning_effort": "none", "enable_thinking": false});
    let (_, t) = post(
        &app,
        "/tokenize",
        json!({"messages": messages, "chat_template_kwargs": kwargs}),
    )
    .await;
    let (_, plain) = post(&app, "/tokenize", json!({"messages": messages})).await;
    assert_eq!(g["token_ids"], t["tokens"]);
    assert_ne!(
        g["token_ids"], plain["tokens"],
        "Qwen3's template closes the thinking block"
    );
    assert_eq!(
        g["parse_context"]["chat_template_kwargs"],
        json!({"add_generation_prompt": true, "continue_final_message": false, "reasoning_effort": "none",
               "enable_thinking": false})
    );
    let (s, g) = post(
        &app,
        "/v1/chat/completions/render",
        json!({"messages": messages, "reasoning_effort": "high", "chat_template_kwargs": {"enable_thinking": false}}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{g}");
    assert_eq!(g["token_ids"], t["tokens"], "the request's own enable_thinking is kept");
    let (s, g) = post(
        &app,
        "/v1/chat/completions/render",
        json!({"messages": messages, "reasoning_effort": "huge"}),
    )
    .await;
    assert_eq!(
        (s, g["error"]["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("body.reasoning_effort")),
        "{g}"
    );
    // stream and stream_options are echoed; the header's request id wins.
    let body = json!({"messages": messages, "stream": true, "stream_options": {"include_usage": true},
                      "max_tokens": 5, "temperature": 0, "model": "q", "request_id": "body"});
    let app2 = app_with(Config {
        models: vec![ModelSpec::parse(&format!("q={}", dir.display()))],
        workers: 1,
        ..Config::default()
    });
    let request = Request::post("/v1/chat/completions/render")
        .header(header::CONTENT_TYPE, "application/json")
        .header("X-Request-Id", "abc")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = app2.router().oneshot(request).await.unwrap();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    let g: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(g["request_id"], "chatcmpl-abc");
    assert_eq!(g["model"], "q");
    assert_eq!(g["stream"], true);
    assert_eq!(
        g["stream_options"],
        json!({"include_usage": true, "continuous_usage_stats": false})
    );
    assert_eq!(
        g["sampling_params"],
        json!({"presence_penalty": 0.0, "frequency_penalty": 0.0, "repetition_penalty": 1.0, "temperature": 0.0,
               "stop": [], "stop_token_ids": [], "max_tokens": 5, "output_kind": 1, "skip_clone": true,
               "bad_words": [], "skip_reading_prefix_cache": false})
    );
    // stream_options without stream, and a prompt longer than the context, are refused.
    let (s, v) = post(
        &app,
        "/v1/chat/completions/render",
        json!({"messages": messages, "stream_options": {"include_usage": true}}),
    )
    .await;
    assert_eq!(
        (s, v["error"]["param"].clone()),
        (StatusCode::BAD_REQUEST, json!("stream_options")),
        "{v}"
    );
    let (s, v) = post(
        &app,
        "/v1/chat/completions/render",
        json!({"messages": messages, "temperature": "hot"}),
    )
    .await;
    assert_eq!(
        (s, v["error"]["param"].clone()),
        (StatusCode::BAD_REQUEST, json!("body.temperature")),
        "{v}"
    );
    let (s, v) = post(
        &app,
        "/v1/chat/completions/render",
        json!({"messages": messages, "response_format": {"type": "json_object"}}),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    // The no-op values of fields whose effect is not reproduced pass (vLLM 0.33.0 gives the same
    // answer as without them); their other values are refused.
    let (_, plain) = post(&app, "/v1/chat/completions/render", json!({"messages": messages})).await;
    for path in ["/v1/chat/completions/render", "/v1/completions/render"] {
        let body = |extra: Value| {
            let mut b = match path {
                "/v1/completions/render" => json!({"prompt": "Hello"}),
                _ => json!({"messages": messages}),
            };
            b.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            b
        };
        // A completion's answer is a list of requests, one per prompt.
        let ids = |v: &Value| match v {
            Value::Array(requests) => requests[0]["token_ids"].clone(),
            _ => v["token_ids"].clone(),
        };
        let (_, want) = post(&app, path, body(json!({}))).await;
        assert!(ids(&want).as_array().is_some_and(|a| !a.is_empty()), "{want}");
        for noop in [
            json!({"return_token_offsets": false}),
            json!({"response_format": {"type": "text"}}),
        ] {
            let (s, got) = post(&app, path, body(noop.clone())).await;
            assert_eq!(s, StatusCode::OK, "{path} {noop}: {got}");
            assert_eq!(ids(&got), ids(&want), "{path} {noop}");
        }
        for refused in [
            json!({"return_token_offsets": true}),
            json!({"truncate_prompt_tokens": 2}),
        ] {
            let (s, e) = post(&app, path, body(refused.clone())).await;
            assert_eq!(s, StatusCode::BAD_REQUEST, "{path} {refused}: {e}");
        }
    }
    assert_eq!(plain["token_offsets"], Value::Null);
    // Tools default tool_choice to "auto"; a named tool must be one of them.
    let tools = json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]);
    let (_, g) = post(
        &app,
        "/v1/chat/completions/render",
        json!({"messages": messages, "tools": tools}),
    )
    .await;
    assert_eq!(g["parse_context"]["tool_choice"], "auto", "{g}");
    assert_eq!(
        g["parse_context"]["tools"],
        json!([{"type": "function", "function": {"name": "f", "description": null, "parameters": {"type": "object"}}}])
    );
    let named = json!({"type": "function", "function": {"name": "g"}});
    let body = json!({"messages": messages, "tools": tools, "tool_choice": named});
    let (s, v) = post(&app, "/v1/chat/completions/render", body).await;
    assert_eq!(
        (s, v["error"]["param"].clone()),
        (StatusCode::BAD_REQUEST, json!("tool_choice")),
        "{v}"
    );
}

#[tokio::test]
async fn sampling_defaults_come_from_generation_config() {
    let Some(kit) = qwen3() else { return };
    let dir = qwen3_with_generation_config(&kit);
    let app = app(&dir);
    let (s, g) = post(
        &app,
        "/v1/chat/completions/render",
        json!({"messages": three_turns(), "temperature": 0.2}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{g}");
    let p = &g["sampling_params"];
    assert_eq!(
        (p["temperature"].clone(), p["top_p"].clone(), p["top_k"].clone()),
        (json!(0.2), json!(0.95), json!(20))
    );
    assert_eq!(p["max_tokens"], 100);
    // Its eos ids are stop strings too.
    let (s, r) = post(&app, "/v1/render", json!({"messages": three_turns()})).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert!(
        r["stop"].as_array().unwrap().contains(&json!("<|endoftext|>")),
        "{}",
        r["stop"]
    );
    // The context is the smaller of config.json's and tokenizer_config.json's lengths.
    let (_, t) = post(&app, "/tokenize", json!({"prompt": "x"})).await;
    assert_eq!(t["max_model_len"], 4096);
    let long = "word ".repeat(5000);
    let (s, v) = post(&app, "/v1/completions/render", json!({"prompt": long})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("maximum context length (4096)"),
        "{v}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn completions_render_gives_one_request_per_prompt() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let (_, t) = post(&app, "/tokenize", json!({"prompt": "Hello world"})).await;
    let (s, g) = post(
        &app,
        "/v1/completions/render",
        json!({"prompt": "Hello world", "request_id": "x"}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{g}");
    assert_eq!(g.as_array().unwrap().len(), 1);
    assert_eq!(g[0]["token_ids"], t["tokens"]);
    assert_eq!(g[0]["request_id"], "cmpl-x");
    // A completion's max_tokens defaults to 16, which SamplingParams leaves out.
    assert_eq!(g[0]["sampling_params"].get("max_tokens"), None, "{g}");
    assert_eq!(g[0]["parse_context"], Value::Null);
    let (s, g) = post(
        &app,
        "/v1/completions/render",
        json!({"prompt": [[1, 2, 3], [4]], "request_id": "x", "max_tokens": 7}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{g}");
    assert_eq!(g[0]["request_id"], "cmpl-x-0");
    assert_eq!(g[1]["request_id"], "cmpl-x-1");
    assert_eq!(g[1]["token_ids"], json!([4]));
    assert_eq!(g[1]["sampling_params"]["max_tokens"], 7);
    let (s, v) = post(&app, "/v1/completions/render", json!({"prompt": [1, -2]})).await;
    assert_eq!(
        (s, v["error"]["param"].clone()),
        (StatusCode::BAD_REQUEST, json!("body.prompt.1")),
        "{v}"
    );
}

/// vLLM's `stop_token_ids` and `allowed_token_ids` are `list[int]`: its render routes take any
/// integer (the range is checked in its engine, `SamplingParams.verify`) and `__post_init__`
/// deduplicates the stop ids.
#[tokio::test]
async fn render_takes_token_ids_of_any_sign() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let ids = json!({"stop_token_ids": [-1, 5, -1], "allowed_token_ids": [-1, 7]});
    for (path, mut body) in [
        ("/v1/chat/completions/render", json!({"messages": three_turns()})),
        ("/v1/completions/render", json!({"prompt": "Hi"})),
    ] {
        body.as_object_mut().unwrap().extend(ids.as_object().unwrap().clone());
        let (s, v) = post(&app, path, body).await;
        assert_eq!(s, StatusCode::OK, "{path}: {v}");
        let params = if v.is_array() {
            &v[0]["sampling_params"]
        } else {
            &v["sampling_params"]
        };
        assert_eq!(
            (&params["stop_token_ids"], &params["allowed_token_ids"]),
            (&json!([-1, 5]), &json!([-1, 7])),
            "{path}: {v}"
        );
    }
}

#[tokio::test]
async fn sglang_tokenizer_routes() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let (s, v) = post(&app, "/v1/tokenize", json!({"prompt": ["Hello", "Hi there"]})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (_, a) = post(&app, "/tokenize", json!({"prompt": "Hello"})).await;
    let (_, b) = post(&app, "/tokenize", json!({"prompt": "Hi there"})).await;
    assert_eq!(v["tokens"], json!([a["tokens"], b["tokens"]]));
    assert_eq!(v["count"], json!([a["count"], b["count"]]));
    assert_eq!(v["max_model_len"], 131072);
    for body in [
        json!({}),
        json!({"prompt": "x", "messages": [{"role": "user", "content": "x"}]}),
    ] {
        let (s, v) = post(&app, "/v1/tokenize", body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        check_route_error("/v1/tokenize", s, &v);
    }
    // Messages render as for a chat completion: the ids of vLLM's chat /tokenize.
    let (_, chat) = post(&app, "/v1/tokenize", json!({"messages": three_turns()})).await;
    let (_, vllm) = post(&app, "/tokenize", json!({"messages": three_turns()})).await;
    assert_eq!(chat["tokens"], vllm["tokens"]);
    let (_, off) = post(
        &app,
        "/v1/tokenize",
        json!({"messages": three_turns(), "add_generation_prompt": false}),
    )
    .await;
    assert!(off["count"].as_u64() < chat["count"].as_u64(), "{off}");
    // Detokenizing skips special tokens unless told not to; nested lists give lists.
    let ids = json!([9707, 151645]);
    let (_, d) = post(&app, "/v1/detokenize", json!({"tokens": ids})).await;
    assert_eq!(d, json!({"text": "Hello"}));
    let (_, d) = post(
        &app,
        "/v1/detokenize",
        json!({"tokens": ids, "skip_special_tokens": false}),
    )
    .await;
    assert_eq!(d, json!({"text": "Hello<|im_end|>"}));
    let (_, d) = post(&app, "/v1/detokenize", json!({"tokens": [[9707], [151645, 9707]]})).await;
    assert_eq!(d, json!({"text": ["Hello", "Hello"]}));
    let (_, d) = post(&app, "/v1/detokenize", json!({"tokens": []})).await;
    assert_eq!(d, json!({"text": ""}));
    let (s, v) = post(&app, "/v1/detokenize", json!({"tokens": [[1], 2]})).await;
    assert_eq!(
        (s, v["param"].clone()),
        (StatusCode::BAD_REQUEST, json!("body.tokens.1")),
        "{v}"
    );
}

#[tokio::test]
async fn tgi_chat_tokenize() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let (s, v) = post(&app, "/chat_tokenize", json!({"messages": three_turns()})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (_, prompt) = post(&app, "/apply-template", json!({"messages": three_turns()})).await;
    let text = v["templated_text"].as_str().unwrap();
    assert_eq!(text, prompt["prompt"]);
    let tokens = v["tokenize_response"].as_array().unwrap();
    let (_, ids) = post(&app, "/tokenize", json!({"messages": three_turns()})).await;
    let got: Vec<&Value> = tokens.iter().map(|t| &t["id"]).collect();
    assert_eq!(json!(got), ids["tokens"]);
    // ASCII text: each token's text is its byte range, and the ranges tile the prompt.
    let mut at = 0;
    for t in tokens {
        let (start, stop) = (
            t["start"].as_u64().unwrap() as usize,
            t["stop"].as_u64().unwrap() as usize,
        );
        assert_eq!(start, at, "{t}");
        assert_eq!(t["text"], text[start..stop], "{t}");
        at = stop;
    }
    assert_eq!(at, text.len());
    // Past multi-byte characters the offsets are bytes, and so is each token's text: a token
    // that holds part of a character shows U+FFFD for it, as TGI's handler does.
    let (_, v) = post(
        &app,
        "/chat_tokenize",
        json!({"messages": [{"role": "user", "content": "h\u{e9}llo \u{1F600} \u{10348} \u{13000} ok"}]}),
    )
    .await;
    let text = v["templated_text"].as_str().unwrap();
    let mut at = 0;
    let mut partial = 0;
    for t in v["tokenize_response"].as_array().unwrap() {
        let (start, stop) = (
            t["start"].as_u64().unwrap() as usize,
            t["stop"].as_u64().unwrap() as usize,
        );
        assert_eq!(start, at, "{t}");
        let bytes = &text.as_bytes()[start..stop];
        assert_eq!(t["text"], String::from_utf8_lossy(bytes).as_ref(), "{t}");
        partial += usize::from(std::str::from_utf8(bytes).is_err());
        at = stop;
    }
    assert_eq!(at, text.len());
    assert!(partial > 0, "a rare character's bytes are split over tokens: {v}");
}

#[tokio::test]
async fn new_routes_keep_the_error_details() {
    let Some(dir) = qwen3() else { return };
    let app = app_with(Config {
        models: vec![ModelSpec::parse(&format!("q={}", dir.display()))],
        max_body_bytes: 1000,
        workers: 1,
        ..Config::default()
    });
    let msgs = json!([{"role": "user", "content": "Hi"}]);
    // SGLang's and TGI's routes answer as theirs do (tests/sglang_tgi.rs).
    let routes = [
        ("/v1/chat/completions/render", json!({"messages": msgs})),
        ("/v1/completions/render", json!({"prompt": "x"})),
    ];
    for (path, body) in routes {
        let (s, v, _) = call(&app, "POST", path, Some("text/plain"), body.to_string().into_bytes()).await;
        assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{path}: {v}");
        check_error(path, s, &v);
        let (s, v, _) = call(&app, "POST", path, Some("application/json"), vec![b' '; 2000]).await;
        assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{path}: {v}");
        check_error(path, s, &v);
        let mut unknown = body.clone();
        unknown["model"] = json!("nope");
        let (s, v) = post(&app, path, unknown).await;
        assert_eq!(
            (s, v["error"]["type"].clone()),
            (StatusCode::NOT_FOUND, json!("model_not_found")),
            "{path}: {v}"
        );
        check_error(path, s, &v);
        let mut wrong = body.clone();
        let field = body.as_object().unwrap().keys().next().unwrap().clone();
        wrong[&field] = json!(7);
        let (s, v) = post(&app, path, wrong).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{path}: {v}");
        assert_eq!(v["error"]["param"], json!(format!("body.{field}")), "{path}: {v}");
    }
}

#[tokio::test]
async fn the_api_key_guards_vllms_prefixes() {
    let app = app_with(Config {
        models: vec![ModelSpec::parse(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/chatml-model"
        ))],
        api_key: Some("k".into()),
        workers: 1,
        ..Config::default()
    });
    let status = |method: &str, path: &str, auth: Option<&str>| {
        let mut request = Request::builder().method(method).uri(path);
        if let Some(a) = auth {
            request = request.header(header::AUTHORIZATION, a);
        }
        let router = app.router();
        let request = request.body(Body::empty()).unwrap();
        async move { router.oneshot(request).await.unwrap().status() }
    };
    for path in [
        "/v1/models",
        "/v2/x",
        "/inference/x",
        "/cohere/x",
        "/v1/chat/completions/render",
        "/v1/tokenize",
    ] {
        assert_eq!(status("GET", path, None).await, StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(
            status("GET", path, Some("Bearer no")).await,
            StatusCode::UNAUTHORIZED,
            "{path}"
        );
        assert_ne!(
            status("GET", path, Some("bearer k")).await,
            StatusCode::UNAUTHORIZED,
            "{path}"
        );
        assert_ne!(status("OPTIONS", path, None).await, StatusCode::UNAUTHORIZED, "{path}");
    }
    for path in ["/health", "/tokenize", "/chat_tokenize", "/metrics"] {
        assert_ne!(status("GET", path, None).await, StatusCode::UNAUTHORIZED, "{path}");
    }
}

/// The `METHOD /path` of each row of a Markdown route table.
fn documented_routes(doc: &str) -> BTreeSet<(String, String)> {
    doc.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .filter_map(|r| r.split_once(' '))
        .filter(|(m, p)| ["GET", "POST"].contains(m) && p.starts_with('/'))
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect()
}

/// The `.route("PATH", METHOD(...))` calls of the router.
fn routed(source: &str) -> BTreeSet<(String, String)> {
    source
        .split(".route(\"")
        .skip(1)
        .filter_map(|rest| {
            let (path, rest) = rest.split_once('"')?;
            let method = rest.trim_start_matches([',', ' ']).split('(').next()?;
            Some((method.to_uppercase(), path.to_string()))
        })
        .collect()
}

#[tokio::test]
async fn interfaces_lists_every_served_route_and_only_those() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("../../docs/INTERFACES.md")).unwrap();
    let documented = documented_routes(&doc);
    // The API's routes are in app.rs, the playground's page and routes in playground.rs (merged in).
    let served: BTreeSet<_> = ["src/app.rs", "src/playground.rs"]
        .iter()
        .flat_map(|f| routed(&std::fs::read_to_string(root.join(f)).unwrap()))
        .collect();
    assert!(served.len() >= 12, "{served:?}");
    assert_eq!(
        documented, served,
        "docs/INTERFACES.md's route table and the router differ"
    );
    // Every fixture route is served, and each documented route answers (not 404 or 405).
    for r in fixture()["routes"].as_array().unwrap() {
        let key = (
            r["method"].as_str().unwrap().to_string(),
            r["path"].as_str().unwrap().to_string(),
        );
        assert!(served.contains(&key), "{key:?}");
    }
    let app = app(&root.join("../../examples/chatml-model"));
    for (method, path) in &documented {
        let (s, v, _) = call(&app, method, path, Some("application/json"), b"{}".to_vec()).await;
        assert!(
            s != StatusCode::NOT_FOUND && s != StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}: {s} {v}"
        );
    }
    let (s, _, _) = call(&app, "GET", "/v1/nothing", None, Vec::new()).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}
