//! SGLang's `/v1/tokenize` and `/v1/detokenize` and TGI's `/chat_tokenize` as their stacks answer.
//!
//! Reference values: SGLang's from its 0.5.23 wheel's own code (`tests/data/sglang_chat.json`, made
//! by `gen_sglang_chat.py` beside it); TGI's from v3.3.7's router/src: lib.rs (`ChatRequest`,
//! `default_tool_prompt`, `TextMessage::from`, `FunctionDefinition`'s serialization),
//! infer/chat_template.rs (`ChatTemplate::new`'s template rewrite, `apply`), infer/tool_grammar.rs
//! (`ToolGrammar::apply`), server.rs (`get_chat_tokenize`, `ErrorResponse` of an `InferError`) and
//! axum 0.7.9's `Json` extractor (its rejections).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)]

mod support;

use axum::http::StatusCode;
use chatfmt_server::{App, Config, ModelSpec};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use support::{app, app_with, call, check_route_error, mistral, post, qwen3, qwen3_with_template};

fn two_models(dir: &Path) -> App {
    app_with(Config {
        models: vec![
            ModelSpec::parse(&format!("a={}", dir.display())),
            ModelSpec::parse(&format!("b={}", dir.display())),
        ],
        workers: 1,
        ..Config::default()
    })
}

#[tokio::test]
async fn sglang_messages_render_as_the_wheel_does() {
    let fixture: Value = serde_json::from_str(include_str!("data/sglang_chat.json")).unwrap();
    let Some(qwen3) = qwen3() else { return };
    let mut apps = BTreeMap::new();
    apps.insert("qwen3".to_string(), app(&qwen3));
    for (name, template) in fixture["templates"].as_object().unwrap() {
        let template = template.as_str().unwrap();
        let dir = if name == "mistral" {
            let own = "{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}";
            assert_eq!(template, own, "the template support::mistral() gives its folder");
            mistral()
        } else {
            qwen3_with_template(&format!("sglang-{name}"), template)
        };
        apps.insert(name.clone(), app(&dir.unwrap()));
    }
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() > 40);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let app = &apps[case["model"].as_str().unwrap()];
        let (s, v) = post(app, "/v1/tokenize", case["body"].clone()).await;
        // SGLang's 500s are chatfmt's 400s: its retry with flat tools turns transformers' TypeError
        // on a kwarg it passes itself into a KeyError, which it answers with 500.
        if case["status"] == 500 {
            assert_eq!(
                (s, v["type"].as_str()),
                (StatusCode::BAD_REQUEST, Some("BadRequestError")),
                "{name}: {v}"
            );
            let kwarg = name.trim_start_matches("kwargs_").trim_end_matches("_collide");
            let says = format!("got multiple values for keyword argument '{kwarg}'");
            assert!(support::error_message(&v).ends_with(&says), "{name}: {v}");
            check_route_error("/v1/tokenize", s, &v);
            continue;
        }
        assert_eq!(s.as_u16(), case["status"], "{name}: {v}");
        if s == StatusCode::OK {
            assert_eq!(v["tokens"], case["tokens"], "{name}: SGLang renders {}", case["text"]);
            assert_eq!(v["count"], json!(case["tokens"].as_array().unwrap().len()), "{name}");
            continue;
        }
        check_route_error("/v1/tokenize", s, &v);
        assert_eq!(v["type"], case["type"], "{name}: {v}");
        if case["type"] == "BadRequestError" {
            assert_eq!(v["message"], case["message"], "{name}");
        }
    }
}

#[tokio::test]
async fn sglang_serves_its_one_model_whatever_the_name() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let (s, named) = post(&app, "/v1/tokenize", json!({"model": "test-model", "prompt": "hi"})).await;
    let (_, plain) = post(&app, "/v1/tokenize", json!({"prompt": "hi"})).await;
    assert_eq!((s, &named), (StatusCode::OK, &plain));
    let body = json!({"model": "x", "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(post(&app, "/v1/tokenize", body).await.0, StatusCode::OK);
    let (s, v) = post(&app, "/v1/detokenize", json!({"model": "test-model", "tokens": [6023]})).await;
    assert_eq!((s, v), (StatusCode::OK, json!({"text": "hi"})));
    // With several, the name picks one, as on the other routes.
    let app = two_models(&dir);
    let (s, v) = post(&app, "/v1/tokenize", json!({"model": "b", "prompt": "hi"})).await;
    assert_eq!((s, &v["tokens"]), (StatusCode::OK, &plain["tokens"]));
    let (s, v) = post(&app, "/v1/tokenize", json!({"model": "nope", "prompt": "hi"})).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    check_route_error("/v1/tokenize", s, &v);
    assert_eq!(v["type"], "404");
}

#[tokio::test]
async fn sglang_errors_are_flat() {
    let Some(dir) = qwen3() else { return };
    let app = app_with(Config {
        models: vec![ModelSpec::parse(&dir.display().to_string())],
        max_body_bytes: 1000,
        workers: 1,
        ..Config::default()
    });
    // What the request models refuse: its validation handler's 400 "Bad Request".
    for (path, body) in [
        ("/v1/tokenize", json!({"prompt": 123})),
        (
            "/v1/tokenize",
            json!({"prompt": "x", "messages": [{"role": "user", "content": "x"}]}),
        ),
        ("/v1/tokenize", json!({"messages": [{"role": "User", "content": "x"}]})),
        ("/v1/detokenize", json!({"tokens": "x"})),
    ] {
        let (s, v) = post(&app, path, body.clone()).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {v}");
        check_route_error(path, s, &v);
        assert_eq!(
            (v["object"].as_str(), v["type"].as_str()),
            (Some("error"), Some("Bad Request"))
        );
    }
    // So is a Content-Type other than JSON (its `validate_json_request`), and the body as a whole.
    let body = json!({"prompt": "x"}).to_string().into_bytes();
    for (ct, bytes) in [(Some("text/plain"), body), (Some("application/json"), b"{".to_vec())] {
        let (s, v, _) = call(&app, "POST", "/v1/tokenize", ct, bytes).await;
        assert_eq!(
            (s, v["type"].as_str()),
            (StatusCode::BAD_REQUEST, Some("Bad Request")),
            "{v}"
        );
    }
    // What its handler refuses: `create_error_response`'s 400 "BadRequestError".
    let (s, v) = post(&app, "/v1/tokenize", json!({"messages": []})).await;
    check_route_error("/v1/tokenize", s, &v);
    assert_eq!(
        v,
        json!({"object": "error", "message": "Messages cannot be empty.", "type": "BadRequestError",
               "param": null, "code": 400})
    );
    // SGLang's `apply_chat_template(..., tools=..., **chat_template_kwargs)` on a key it passes itself.
    let body = json!({"messages": [{"role": "user", "content": "x"}], "chat_template_kwargs": {"tools": []}});
    let (s, v) = post(&app, "/v1/tokenize", body).await;
    check_route_error("/v1/tokenize", s, &v);
    assert_eq!(v["type"], "BadRequestError", "{v}");
    assert!(
        support::error_message(&v).ends_with("got multiple values for keyword argument 'tools'"),
        "{v}"
    );
    // Other statuses have the status as `type`, as its HTTPException handler writes them.
    let (s, v, _) = call(
        &app,
        "POST",
        "/v1/detokenize",
        Some("application/json"),
        vec![b' '; 2000],
    )
    .await;
    assert_eq!(
        (s, v["type"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("413")),
        "{v}"
    );
    check_route_error("/v1/detokenize", s, &v);
}

/// A TGI model folder: the Qwen3 tokenizer with `template`.
fn tgi_app(name: &str, template: &str) -> Option<App> {
    Some(app(&qwen3_with_template(&format!("tgi-{name}"), template)?))
}

const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
                      {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

async fn templated(app: &App, body: Value) -> String {
    let (s, v) = post(app, "/chat_tokenize", body).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    v["templated_text"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn tgi_continues_a_trailing_assistant_message() {
    let Some(app) = tgi_app("continue", CHATML) else { return };
    let hi = json!({"role": "user", "content": "Hi"});
    let turn = |content: &str| json!({"messages": [hi, {"role": "assistant", "content": content}]});
    // Rendered with the generation prompt, then cut after the content's last occurrence and trimmed.
    assert_eq!(
        templated(&app, turn("Hello  ")).await,
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello"
    );
    assert_eq!(
        templated(&app, turn("Hi")).await,
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHi"
    );
    // Empty content is found at the end: only the trailing whitespace goes.
    assert_eq!(
        templated(&app, turn("")).await,
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<|im_end|>\n<|im_start|>assistant"
    );
    // Content the template does not print as given is not found: the prompt stays whole.
    let Some(app) = tgi_app("continue-trim", &CHATML.replace("m.content", "m.content | trim")) else {
        return;
    };
    assert_eq!(
        templated(&app, turn(" Hello ")).await,
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>assistant\n"
    );
}

/// TGI's tool prompt when none is given (lib.rs `default_tool_prompt`).
const DEFAULT_TOOL_PROMPT: &str =
    "\nGiven the functions available, please respond with a JSON for a function call with \
    its proper arguments that best answers the given prompt. Respond in the format {name: function name, parameters: \
    dictionary of argument name and its value}.Do not use variables.\n";

fn weather() -> Value {
    json!({"type": "function", "function": {"name": "get_weather", "description": "Get the weather",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})
}

#[tokio::test]
async fn tgi_writes_tools_and_their_prompt_into_the_last_message() {
    let plain = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}";
    let Some(app) = tgi_app("tools", plain) else { return };
    let user = json!([{"role": "user", "content": "Weather?"}]);
    // `auto` (the default) adds TGI's `no_tool` function; functions are written with `arguments`,
    // a JSON string, and the default prompt follows.
    let weather_json = r#"{"type":"function","function":{"description":"Get the weather","name":"get_weather","arguments":"{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}"}}"#;
    let no_tool = r#"{"type":"function","function":{"description":"Open ended response with no specific tool selected","name":"no_tool","arguments":"{\"type\":\"object\"}"}}"#;
    assert_eq!(
        templated(&app, json!({"messages": user, "tools": [weather()]})).await,
        format!("[user] Weather?\n---\n[{weather_json},{no_tool}]\n{DEFAULT_TOOL_PROMPT}\n")
    );
    // A named function (by a bare string too) alone, with the request's prompt; an empty prompt is
    // the default one.
    for choice in [
        json!("get_weather"),
        json!({"type": "function", "function": {"name": "get_weather"}}),
    ] {
        let body = json!({"messages": user, "tools": [weather()], "tool_choice": choice, "tool_prompt": "Use it."});
        assert_eq!(
            templated(&app, body).await,
            format!("[user] Weather?\n---\n[{weather_json}]\nUse it.\n")
        );
    }
    let body = json!({"messages": user, "tools": [weather()], "tool_choice": "required", "tool_prompt": ""});
    assert_eq!(
        templated(&app, body).await,
        format!("[user] Weather?\n---\n[{weather_json}]\n{DEFAULT_TOOL_PROMPT}\n")
    );
    // `none`: no tools at all.
    let body = json!({"messages": user, "tools": [weather()], "tool_choice": "none"});
    assert_eq!(templated(&app, body).await, "[user] Weather?\n");
    // A last message of tool calls gets nothing; as the last assistant message it is continued.
    let calls = json!([{"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}]);
    let body = json!({"messages": calls, "tools": [weather()], "tool_choice": "required"});
    assert_eq!(
        templated(&app, body).await,
        "[assistant] [{\"id\":\"1\",\"type\":\"function\",\"function\":{\"description\":null,\"name\":\"get_weather\",\
         \"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]"
    );
    // A template that reads `tools` gets them as TGI writes them, keys in the order minijinja keeps
    // them (sorted), and the last message only the prompt.
    let reading = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}\
                   {% for t in tools %}{% for k in t %}{{ k }},{% endfor %}\
                   {% for k, v in t.function.items() %}{{ k }}={{ v }};{% endfor %}{{ '\\n' }}{% endfor %}";
    let Some(app) = tgi_app("tools-read", reading) else {
        return;
    };
    let body = json!({"messages": user, "tools": [weather()], "tool_choice": "required", "tool_prompt": "Go."});
    assert_eq!(
        templated(&app, body).await,
        "[user] Weather?\n---\nGo.\nfunction,type,arguments={\"type\":\"object\",\"properties\":{\"city\":{\"type\":\
         \"string\"}}};description=Get the weather;name=get_weather;\n"
    );
    // Tool errors.
    for (body, message) in [
        (
            json!({"messages": user, "tools": [weather()], "tool_choice": "nope"}),
            "Tool error: Tool with name nope not found",
        ),
        (
            json!({"messages": user, "tools": [weather()], "response_format": {"type": "json", "value": {}}}),
            "Tool error: Grammar and tools are mutually exclusive",
        ),
    ] {
        let (s, v) = post(&app, "/chat_tokenize", body).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
        assert_eq!(v, json!({"error": message, "error_type": "tool_error"}));
    }
}

#[tokio::test]
async fn tgi_joins_content_parts_and_rewrites_the_first_content() {
    let template = "{{ messages[0]['content'][0]['text'] }}|\
                    {% for m in messages %}{% for k, v in m.items() %}{{ k }}={{ v }},{% endfor %};{% endfor %}";
    let Some(app) = tgi_app("parts", template) else { return };
    let body = json!({"messages": [
        {"role": "system", "content": [{"type": "text", "text": "Sys"}]},
        {"role": "user", "name": "me", "content": [{"type": "text", "text": "a "},
            {"type": "image_url", "image_url": {"url": "http://x/i.png"}}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "f", "arguments": "{\"x\": 1}"}}]}
    ]});
    // Text parts joined with nothing, an image as Markdown; messages hold their content and role
    // only; `messages[0]['content'][0]['text']` reads the first content whole; tool calls are their
    // JSON, with `description` and the arguments as a JSON string (of a string here), and the
    // prompt ends with them as the last assistant message's content.
    let arguments = json!("{\"x\": 1}").to_string();
    let calls = json!([{"id": "c1", "type": "function", "function": {"description": null, "name": "f", "arguments": arguments}}]);
    assert_eq!(
        templated(&app, body).await,
        format!("Sys|content=Sys,role=system,;content=a ![](http://x/i.png)b,role=user,;content={calls}")
    );
}

#[tokio::test]
async fn tgi_errors_are_tgis() {
    let raising =
        "{% if messages | length > 1 %}{{ raise_exception('Only one message') }}{% endif %}{{ messages[0].content }}";
    let Some(app) = tgi_app("errors", raising) else { return };
    let one = json!([{"role": "user", "content": "Hi"}]);
    let (s, v) = post(&app, "/chat_tokenize", json!({"messages": [one[0], one[0]]})).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    check_route_error("/chat_tokenize", s, &v);
    assert_eq!(v["error_type"], "template_error");
    let message = v["error"].as_str().unwrap();
    assert!(
        message.starts_with("Template error: ") && message.contains("Only one message"),
        "{v}"
    );
    // Bodies TGI's handler never sees: axum's `Json` extractor answers in plain text.
    let text = |ct: Option<&str>, body: &str| {
        let app = &app;
        let body = body.as_bytes().to_vec();
        let ct = ct.map(str::to_string);
        async move { call(app, "POST", "/chat_tokenize", ct.as_deref(), body).await }
    };
    let json_ct = Some("application/json");
    for (ct, body, status, start) in [
        (Some("text/plain"), r#"{"messages": []}"#, 415, "Expected request with `Content-Type: application/json`"),
        (None, r#"{"messages": []}"#, 415, "Expected request with `Content-Type: application/json`"),
        (json_ct, r#"{"messages": "x"}"#, 422, "Failed to deserialize the JSON body into the target type: messages: invalid type: string \"x\", expected a sequence"),
        (json_ct, r#"{"messages": [{"role": "user"}]}"#, 422, "Failed to deserialize the JSON body into the target type: messages[0]: data did not match any variant of untagged enum MessageBody"),
        (json_ct, r#"{"messages": [], "tool_choice": 3}"#, 422, "Failed to deserialize the JSON body into the target type: tool_choice: data did not match any variant of untagged enum ToolTypeDeserializer"),
        (json_ct, r#"{"messages": [], "stream_options": null}"#, 422, "Failed to deserialize the JSON body into the target type: stream_options: invalid type: null, expected struct StreamOptions"),
        (json_ct, r#"{"tools": null}"#, 422, "Failed to deserialize the JSON body into the target type: missing field `messages`"),
        (json_ct, r#"{"messages": ["#, 400, "Failed to parse the request body as JSON: messages: EOF while parsing a list"),
    ] {
        let (s, v, _) = text(ct, body).await;
        assert_eq!(s.as_u16(), status, "{body}: {v}");
        assert!(v.as_str().unwrap().starts_with(start), "{body}: {v}");
    }
    // Any JSON media type passes, and what follows the JSON value is not read.
    for (ct, body) in [
        (
            Some("application/vnd.api+json; charset=utf-8"),
            r#"{"messages": [{"role": "user", "content": "a"}]}"#,
        ),
        (json_ct, r#"{"messages": [{"role": "user", "content": "a"}]} trailing"#),
    ] {
        let (s, v, _) = text(ct, body).await;
        assert_eq!((s, &v["templated_text"]), (StatusCode::OK, &json!("a")), "{body}: {v}");
    }
    // TGI serves one model: any name is it; with several, the name picks one.
    let body = json!({"model": "tgi", "messages": one});
    assert_eq!(post(&app, "/chat_tokenize", body).await.0, StatusCode::OK);
    let Some(dir) = qwen3() else { return };
    let (s, v) = post(
        &two_models(&dir),
        "/chat_tokenize",
        json!({"model": "nope", "messages": one}),
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    check_route_error("/chat_tokenize", s, &v);
}
