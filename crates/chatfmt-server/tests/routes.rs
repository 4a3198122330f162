//! Every route against the fixture of request fields and response keys copied from vLLM,
//! llama.cpp, SGLang and TGI (`tests/data/routes.json`), and the error answers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)]

mod support;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use chatfmt_server::{Config, ModelSpec};
use serde_json::{json, Value};
use support::{app, app_with, call, check_error, check_keys, fixture, mistral, post, qwen3};
use tower::ServiceExt;

#[tokio::test]
async fn every_route_answers_with_the_fixture_keys_and_its_defaults() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    for route in fixture()["routes"].as_array().unwrap() {
        let name = route["name"].as_str().unwrap();
        let path = route["path"].as_str().unwrap();
        let full = if route["method"] == "GET" {
            let (s, v, _) = call(&app, "GET", path, None, Vec::new()).await;
            assert_eq!(s, StatusCode::OK, "{name}: {v}");
            v
        } else {
            let (s, v) = post(&app, path, route["request"].clone()).await;
            assert_eq!(s, StatusCode::OK, "{name}: {v}");
            // The same request with only the required fields: the defaults are the fixture's.
            let mut minimal = serde_json::Map::new();
            for k in route["required"].as_array().unwrap() {
                let k = k.as_str().unwrap();
                minimal.insert(k.to_string(), route["request"][k].clone());
            }
            let (s2, v2) = post(&app, path, Value::Object(minimal)).await;
            assert_eq!(s2, StatusCode::OK, "{name} (required fields only): {v2}");
            assert_eq!(v, v2, "{name}: the defaults differ from the fixture's");
            v
        };
        match route.get("response_items") {
            Some(item) => {
                let items = full.as_array().unwrap_or_else(|| panic!("{name}: not a list: {full}"));
                assert!(!items.is_empty(), "{name}");
                for i in items {
                    check_keys(name, i, item);
                }
            }
            None => check_keys(name, &full, &route["response"]),
        }
        for (key, entry) in route.get("entries").and_then(Value::as_object).into_iter().flatten() {
            for e in full[key].as_array().unwrap() {
                check_keys(name, e, entry);
            }
        }
    }
}

#[tokio::test]
async fn vllm_details_clients_rely_on() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let chat = json!({"messages": [{"role": "user", "content": "Hi"}]});
    let (_, a) = post(&app, "/tokenize", chat.clone()).await;
    let (_, b) = post(&app, "/tokenize", json!({"prompt": "Hi", "return_token_strs": true})).await;
    assert_eq!(a["max_model_len"], b["max_model_len"]);
    assert!(a["max_model_len"].is_u64(), "{a}");
    assert_eq!(a["token_strs"], Value::Null);
    assert_eq!(b["token_strs"], json!(["Hi"]));
    assert_eq!(a["count"], json!(a["tokens"].as_array().unwrap().len()));
    // Detokenizing keeps special tokens.
    let (_, d) = post(&app, "/detokenize", json!({"model": null, "tokens": a["tokens"]})).await;
    assert_eq!(d["prompt"], "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    // vLLM's `ModelCard.owned_by` (serve/engine/protocol.py).
    let (_, models, _) = call(&app, "GET", "/v1/models", None, Vec::new()).await;
    assert_eq!(models["data"][0]["owned_by"], "vllm", "{models}");
    let (_, l) = post(&app, "/detokenize", json!({"tokens": a["tokens"]})).await;
    assert_eq!(l["content"], d["prompt"]);
    // Generation prompt and continue-final together: given both, vLLM's own check refuses them; given
    // continue-final alone, the default generation prompt stays on and the render refuses the pair
    // with transformers' message.
    let mut both = chat.clone();
    both["continue_final_message"] = json!(true);
    let mut explicit = both.clone();
    explicit["add_generation_prompt"] = json!(true);
    let (s, v) = post(&app, "/tokenize", explicit).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    check_error("both", s, &v);
    assert_eq!(
        (v["error"]["param"].clone(), v["error"]["message"].as_str().unwrap()),
        (
            json!("body"),
            "Cannot set both `continue_final_message` and `add_generation_prompt` to True."
        )
    );
    let (s, v) = post(&app, "/tokenize", both).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    check_error("continue-final alone", s, &v);
    assert!(
        (v["error"]["message"].as_str().unwrap())
            .starts_with("continue_final_message and add_generation_prompt are not compatible."),
        "{v}"
    );
    // Tools are rendered as sent.
    let mut with_tools = chat.clone();
    with_tools["tools"] = json!([{"type": "function", "function": {"name": "f", "parameters": {"x": 1}}}]);
    let (s, v) = post(&app, "/tokenize", with_tools).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (_, text) = post(&app, "/detokenize", json!({"model": null, "tokens": v["tokens"]})).await;
    assert!(
        text["prompt"].as_str().unwrap().contains(r#""parameters": {"x": 1}"#),
        "{text}"
    );
    // A wrong type names the field as FastAPI does; a non-JSON Content-Type is 415.
    let (s, v) = post(&app, "/tokenize", json!({"messages": "hi"})).await;
    assert_eq!(
        (s, v["error"]["param"].clone()),
        (StatusCode::BAD_REQUEST, json!("body.messages"))
    );
    let (s, v, _) = call(
        &app,
        "POST",
        "/tokenize",
        Some("text/plain"),
        chat.to_string().into_bytes(),
    )
    .await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    check_error("415", s, &v);
}

#[tokio::test]
async fn llama_cpp_routes() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let (_, v) = post(
        &app,
        "/apply-template",
        json!({"messages": [
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Sure"}]}),
    )
    .await;
    assert_eq!(
        v["prompt"],
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nSure"
    );
    let (s, v) = post(
        &app,
        "/apply-template",
        json!({"messages": [{"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]}),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    // Content that is neither a string, a list nor null: llama.cpp's `common_chat_msgs_parse_oaicompat`
    // (common/chat.cpp) throws, with this message.
    for (content, shown) in [(json!(123), "123"), (json!({"a": true}), r#"{"a":true}"#)] {
        let body = json!({"messages": [{"role": "system", "content": content}]});
        let (s, v) = post(&app, "/apply-template", body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        check_error("content", s, &v);
        assert_eq!(
            v["error"]["message"],
            format!(
                "Failed to parse messages: Invalid 'content' type: expected string or array, got {shown} \
                 (ref: https://github.com/ggml-org/llama.cpp/issues/8367)"
            )
        );
    }
    // llama.cpp sets `chat_template_kwargs` in the template's context after the messages, the tools
    // and the generation flag, so kwargs with those names are what the template reads.
    let hi = json!([{"role": "user", "content": "Hi"}]);
    let kwargs = |k: serde_json::Value| json!({"messages": hi, "chat_template_kwargs": k});
    let (_, v) = post(&app, "/apply-template", kwargs(json!({"add_generation_prompt": false}))).await;
    assert_eq!(v["prompt"], "<|im_start|>user\nHi<|im_end|>\n");
    let (_, v) = post(
        &app,
        "/apply-template",
        kwargs(json!({"messages": [{"role": "user", "content": "Other"}]})),
    )
    .await;
    assert_eq!(
        v["prompt"],
        "<|im_start|>user\nOther<|im_end|>\n<|im_start|>assistant\n"
    );
    let tool = json!({"type": "function", "function": {"name": "f"}});
    let (_, v) = post(&app, "/apply-template", kwargs(json!({"tools": [tool]}))).await;
    assert!(
        v["prompt"]
            .as_str()
            .unwrap()
            .contains(r#"{"type": "function", "function": {"name": "f"}}"#),
        "{v}"
    );
    for (key, value) in [
        ("add_generation_prompt", json!("no")),
        ("messages", json!(3)),
        ("tools", json!({})),
    ] {
        let (s, v) = post(&app, "/apply-template", kwargs(json!({key: value}))).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        check_error("kwargs", s, &v);
        assert_eq!(v["error"]["param"], format!("body.chat_template_kwargs.{key}"));
    }
    let (_, special) = post(&app, "/tokenize", json!({"content": "<|im_end|>"})).await;
    assert_eq!(special["tokens"], json!([151645]));
    let (_, plain) = post(
        &app,
        "/tokenize",
        json!({"content": "<|im_end|>", "parse_special": false}),
    )
    .await;
    assert!(plain["tokens"].as_array().unwrap().len() > 1, "{plain}");
    // A piece that is part of a character is its bytes.
    let (_, v) = post(&app, "/tokenize", json!({"content": "😀", "with_pieces": true})).await;
    let pieces = v["tokens"].as_array().unwrap();
    let bytes: Vec<u64> = pieces
        .iter()
        .flat_map(|p| match &p["piece"] {
            Value::String(s) => s.bytes().map(u64::from).collect::<Vec<_>>(),
            Value::Array(b) => b.iter().map(|x| x.as_u64().unwrap()).collect(),
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(bytes, "😀".bytes().map(u64::from).collect::<Vec<_>>(), "{v}");
}

#[tokio::test]
async fn llama_cpp_pieces_of_a_sentencepiece_vocabulary() {
    let Some(dir) = mistral() else { return };
    let app = app(&dir);
    // `▁` is a space, the leading one too; byte-fallback tokens are their bytes.
    let (s, v) = post(
        &app,
        "/tokenize",
        json!({"content": "Hello world", "with_pieces": true}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        v["tokens"],
        json!([{"id": 22557, "piece": " Hello"}, {"id": 1526, "piece": " world"}])
    );
    let (_, v) = post(
        &app,
        "/tokenize",
        json!({"content": "\u{1D11E}\nb", "with_pieces": true}),
    )
    .await;
    assert_eq!(
        v["tokens"],
        json!([
            {"id": 28705, "piece": " "}, {"id": 243, "piece": [240]}, {"id": 160, "piece": [157]},
            {"id": 135, "piece": [132]}, {"id": 161, "piece": [158]}, {"id": 13, "piece": "\n"},
            {"id": 28726, "piece": "b"}
        ])
    );
    let (_, v) = post(
        &app,
        "/tokenize",
        json!({"content": "Hi", "add_special": true, "with_pieces": true}),
    )
    .await;
    assert_eq!(
        v["tokens"],
        json!([{"id": 1, "piece": "<s>"}, {"id": 15359, "piece": " Hi"}])
    );
    // llama.cpp's /detokenize joins the pieces; vLLM's decodes.
    let (_, v) = post(
        &app,
        "/detokenize",
        json!({"tokens": [1, 22557, 1526, 28705, 243, 160, 135, 161]}),
    )
    .await;
    assert_eq!(v, json!({"content": "<s> Hello world \u{1D11E}"}));
    let (_, v) = post(&app, "/detokenize", json!({"tokens": [22557, 243]})).await;
    assert_eq!(v, json!({"content": " Hello\u{FFFD}"}));
    let model = dir.display().to_string();
    let (_, v) = post(&app, "/detokenize", json!({"model": model, "tokens": [22557, 1526]})).await;
    assert_eq!(v, json!({"prompt": "Hello world"}));
}

#[tokio::test]
async fn vllm_tokenize_with_prompt_and_messages_picks_the_form_pydantic_picks() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let messages = json!([{"role": "user", "content": "Hello"}]);
    let (_, completion) = post(&app, "/tokenize", json!({"prompt": "Hi"})).await;
    let (_, chat) = post(&app, "/tokenize", json!({"messages": messages})).await;
    assert_ne!(completion["tokens"], chat["tokens"]);
    // A tie of given fields goes to the completion form, the first of the union.
    let (_, both) = post(&app, "/tokenize", json!({"prompt": "Hi", "messages": messages})).await;
    assert_eq!(both["tokens"], completion["tokens"]);
    let (_, shared) = post(
        &app,
        "/tokenize",
        json!({"prompt": "Hi", "messages": messages, "add_special_tokens": true, "return_token_strs": false}),
    )
    .await;
    assert_eq!(shared["tokens"], completion["tokens"]);
    // A field only the chat form has makes it the chat form.
    let (_, with_chat_field) = post(
        &app,
        "/tokenize",
        json!({"prompt": "Hi", "messages": messages, "add_generation_prompt": true}),
    )
    .await;
    assert_eq!(with_chat_field["tokens"], chat["tokens"]);
}

#[tokio::test]
async fn errors_have_one_shape_and_the_right_status() {
    let Some(dir) = qwen3() else { return };
    let app = app_with(Config {
        models: vec![
            ModelSpec::parse(&format!("qwen={}", dir.display())),
            ModelSpec::parse(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/chatml-model")),
        ],
        api_key: Some("k".into()),
        max_body_bytes: 1000,
        workers: 1,
        ..Config::default()
    });
    let msgs = json!([{"role": "user", "content": "Hi"}]);
    let cases: Vec<(&str, Vec<u8>, StatusCode, Option<&str>)> = vec![
        ("/tokenize", b"{".to_vec(), StatusCode::BAD_REQUEST, Some("body")),
        (
            "/tokenize",
            json!({"model": "nope", "prompt": "x"}).to_string().into_bytes(),
            StatusCode::NOT_FOUND,
            Some("body.model"),
        ),
        (
            "/tokenize",
            json!({"prompt": "x"}).to_string().into_bytes(),
            StatusCode::BAD_REQUEST,
            Some("body.model"),
        ),
        ("/tokenize", vec![b' '; 2000], StatusCode::PAYLOAD_TOO_LARGE, None),
        (
            "/apply-template",
            json!({"model": "qwen", "messages": msgs, "chat_template_kwargs": 3})
                .to_string()
                .into_bytes(),
            StatusCode::BAD_REQUEST,
            Some("body.chat_template_kwargs"),
        ),
        (
            "/detokenize",
            json!({"model": "qwen", "tokens": [-1]}).to_string().into_bytes(),
            StatusCode::BAD_REQUEST,
            Some("body.tokens.0"),
        ),
    ];
    for (path, body, status, param) in cases {
        let (s, v, _) = call(&app, "POST", path, Some("application/json"), body).await;
        assert_eq!(s, status, "{path}: {v}");
        check_error(path, s, &v);
        assert_eq!(v["error"]["param"].as_str(), param, "{v}");
    }
    let (_, v, _) = call(
        &app,
        "POST",
        "/tokenize",
        Some("application/json"),
        json!({"model": "nope", "prompt": "x"}).to_string().into_bytes(),
    )
    .await;
    assert_eq!(v["error"]["type"], "model_not_found");
    assert!(v["error"]["message"].as_str().unwrap().contains("'qwen'"), "{v}");
    // /v1 routes need the key.
    let (s, v, _) = call(&app, "GET", "/v1/models", None, Vec::new()).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    check_error("401", s, &v);
    let request = Request::get("/v1/models")
        .header(header::AUTHORIZATION, "Bearer k")
        .body(Body::empty())
        .unwrap();
    assert_eq!(app.router().oneshot(request).await.unwrap().status(), StatusCode::OK);
    let (s, _, _) = call(&app, "GET", "/health", None, Vec::new()).await;
    assert_eq!(s, StatusCode::OK);
    let (s, v, _) = call(&app, "GET", "/metrics", None, Vec::new()).await;
    assert_eq!(s, StatusCode::OK);
    let text = v.as_str().unwrap();
    assert!(
        text.contains("chatfmt_errors_total{kind=\"model_not_found\"} 2"),
        "{text}"
    );
    assert!(
        text.contains("chatfmt_request_duration_seconds_bucket{route=\"/tokenize\",le=\"+Inf\"}"),
        "{text}"
    );
}

#[tokio::test]
async fn request_templates_run_under_the_request_limits() {
    let app = app(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/chatml-model"
    )));
    let slow = "{% for i in range(99999) %}{% for j in range(99999) %}{{ '' }}{% endfor %}{% endfor %}";
    let huge = "{% for i in range(99999) %}{{ 'x' * 1000 }}{% endfor %}";
    for template in [slow, huge] {
        let body =
            json!({"messages": [{"role": "user", "content": "Hi"}], "chat_template": template, "tokenize": false});
        let start = std::time::Instant::now();
        let (s, v) = post(&app, "/v1/render", body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(v["error"]["type"], "template_limit_exceeded", "{v}");
        assert_eq!(v["error"]["param"], "chat_template");
        assert!(start.elapsed().as_secs_f64() < 2.0);
    }
    // A template error names its place in the template; other errors have none.
    for (template, message, line, column) in [
        (
            "{{ 1 }}\n{% if %}",
            "TemplateSyntaxError: Expected an expression, got 'end of statement block'",
            2,
            7,
        ),
        ("{{ 1 }}\n\n  {{ x.y }}", "UndefinedError: 'x' is undefined", 3, 7),
    ] {
        let body =
            json!({"messages": [{"role": "user", "content": "Hi"}], "chat_template": template, "tokenize": false});
        let (s, v) = post(&app, "/v1/render", body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        check_error(template, s, &v);
        assert_eq!(v["error"]["message"], message, "{v}");
        assert_eq!(
            (&v["error"]["line"], &v["error"]["column"]),
            (&json!(line), &json!(column)),
            "{v}"
        );
    }
    let (_, v) = post(&app, "/v1/render", json!({"messages": 3, "tokenize": false})).await;
    assert!(v["error"].get("line").is_none(), "{v}");
    let body = json!({"messages": [{"role": "user", "content": "Hi"}], "chat_template": "{{ messages[0].content }}!", "tokenize": false});
    let (_, v) = post(&app, "/v1/render", body).await;
    assert_eq!(v["text"], "Hi!");
    assert_eq!(v["template"]["source"], "chat_template");
    // A render-only model cannot tokenize; unknown fields are refused on chatfmt's own route.
    let (s, v) = post(
        &app,
        "/v1/render",
        json!({"messages": [{"role": "user", "content": "Hi"}]}),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, v) = post(
        &app,
        "/v1/render",
        json!({"messages": [], "tokenize": false, "extra": 1}),
    )
    .await;
    assert_eq!(
        (s, v["error"]["param"].clone()),
        (StatusCode::BAD_REQUEST, json!("body.extra"))
    );
}

#[tokio::test]
async fn message_spans_stop_at_the_spans_timeout() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/chatml-model"));
    let config = |spans_timeout| Config {
        models: vec![ModelSpec::parse(&dir.display().to_string())],
        spans_timeout,
        ..Config::default()
    };
    let body = json!({"messages": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"}
    ], "tokenize": false});
    // No time at all: the rule stops before its first prefix render, naming the messages.
    let (s, v) = post(&app_with(config(std::time::Duration::ZERO)), "/v1/render", body.clone()).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["error"]["type"], "template_limit_exceeded", "{v}");
    assert_eq!(v["error"]["param"], "body.messages", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("--spans-timeout is 0 s"), "{message}");
    // The default leaves room for it.
    let (s, v) = post(&app_with(config(Config::default().spans_timeout)), "/v1/render", body).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["assistant_spans"].as_array().map(Vec::len), Some(1), "{v}");
}

/// `chat_template_kwargs` naming `apply_chat_template`'s own arguments bind them, as the stacks
/// splat the kwargs into that call: vLLM's fields win over them; `/v1/render` binds them like
/// Python keywords (both given is a `TypeError`); `messages` collides with the stack's own.
#[tokio::test]
async fn template_kwargs_that_name_arguments_bind_them() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let messages = json!([{"role": "user", "content": "What is the weather?"}]);
    let tools = json!([{"type": "function", "function": {"name": "weather", "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    let template = "{{ tools is not none }}|{{ documents is not none }}|{{ add_generation_prompt }}";
    let ids = |v: &Value| v["tokens"].clone();

    let (_, with_field) = post(&app, "/tokenize", json!({"messages": messages, "tools": tools})).await;
    let (s, with_kwarg) = post(
        &app,
        "/tokenize",
        json!({"messages": messages, "chat_template_kwargs": {"tools": tools}}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{with_kwarg}");
    assert_eq!(ids(&with_kwarg), ids(&with_field), "a kwarg `tools` is the tools");
    let (_, plain) = post(&app, "/tokenize", json!({"messages": messages})).await;
    assert_ne!(ids(&plain), ids(&with_field));
    let (_, both) = post(
        &app,
        "/tokenize",
        json!({"messages": messages, "tools": [tools[0].clone(), tools[0].clone()], "chat_template_kwargs": {"tools": tools}}),
    )
    .await;
    assert_eq!(
        ids(&both),
        ids(&with_field),
        "vLLM: the kwargs' tools override the request's"
    );
    let (_, unset) = post(
        &app,
        "/tokenize",
        json!({"messages": messages, "tools": tools, "chat_template_kwargs": {"tools": null}}),
    )
    .await;
    assert_eq!(ids(&unset), ids(&with_field), "a null kwarg is left out");

    let (s, field) = post(
        &app,
        "/tokenize",
        json!({"messages": messages, "chat_template": template}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{field}");
    let (s, kwarg) = post(
        &app,
        "/tokenize",
        json!({"messages": messages, "chat_template_kwargs": {"chat_template": template, "documents": [{"title": "t", "text": "x"}],
               "add_generation_prompt": false}}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{kwarg}");
    let detok = |v: Value| {
        let app = app.clone();
        async move {
            let (s, out) = post(&app, "/detokenize", json!({"tokens": v["tokens"]})).await;
            assert_eq!(s, StatusCode::OK, "{out}");
            out["content"].clone()
        }
    };
    assert_eq!(detok(field).await, json!("False|False|True"));
    assert_eq!(
        detok(kwarg).await,
        json!("False|True|True"),
        "vLLM's own add_generation_prompt wins"
    );

    let render = |body: Value| {
        let app = app.clone();
        async move {
            let mut body = body;
            body["messages"] = json!([{"role": "user", "content": "hi"}]);
            body["chat_template"] = json!(template);
            body["tokenize"] = json!(false);
            post(&app, "/v1/render", body).await
        }
    };
    let (s, v) = render(json!({"chat_template_kwargs": {"add_generation_prompt": true, "tools": tools}})).await;
    assert_eq!(
        (s, v["text"].clone()),
        (StatusCode::OK, json!("True|False|True")),
        "{v}"
    );
    let (s, v) = render(json!({"tools": tools, "chat_template_kwargs": {"tools": tools}})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        support::error_message(&v).ends_with("got multiple values for keyword argument 'tools'"),
        "{v}"
    );

    for (path, kwargs, says) in [
        (
            "/tokenize",
            json!({"messages": []}),
            "got multiple values for keyword argument 'messages'",
        ),
        (
            "/v1/render",
            json!({"conversation": []}),
            "got multiple values for keyword argument 'conversation'",
        ),
        (
            "/tokenize",
            json!({"truncation": true, "max_length": 2}),
            "`truncation` in chat_template_kwargs",
        ),
        (
            "/tokenize",
            json!({"chat_template": 5}),
            "Input should be a valid string",
        ),
    ] {
        let (s, v) = post(
            &app,
            path,
            json!({"messages": messages, "chat_template_kwargs": kwargs}),
        )
        .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{path} {kwargs}: {v}");
        assert!(support::error_message(&v).contains(says), "{path} {kwargs}: {v}");
    }
}
