//! Request validation on vLLM's and SGLang's routes as theirs: pydantic's lax mode coerces field
//! values (`Model.model_validate(json.loads(body))`), vLLM's request models check the body as sent
//! before any field is read, and the body nests as deep as Python's `json` reads it.
//!
//! Reference values: pydantic 2.13 (lax `int`, `bool`, `float`; `tests/data/pydantic_lax.json`) and
//! the vllm-0.33.0 wheel: `entrypoints/openai/chat_completion/protocol.py` (`check_logprobs`,
//! `validate_stream_options`, `request_id: str`), `entrypoints/openai/completion/protocol.py`
//! (`check_logprobs`, `validate_prompt_and_prompt_embeds`, `validate_prompt_list_length`,
//! `normalize_null_max_tokens`), `entrypoints/generate/base/protocol.py` (`validate_cache_salt`),
//! `renderers/base.py` (`render_prompts`: "You must pass at least one prompt").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)]

mod support;

use axum::http::StatusCode;
use chatfmt_server::{App, Config, ModelSpec};
use serde::Deserialize;
use serde_json::{json, Value};
use support::{app_with, call, check_error, check_route_error, error_message, post, qwen3};

fn named_app() -> Option<App> {
    let dir = qwen3()?;
    Some(app_with(Config {
        models: vec![ModelSpec::parse(&format!("q={}", dir.display()))],
        workers: 1,
        ..Config::default()
    }))
}

fn hi() -> Value {
    json!([{"role": "user", "content": "Hi"}])
}

/// The status, `param` and message of an error answer (SGLang's flat, or nested).
async fn refusal(app: &App, path: &str, body: Value) -> (StatusCode, Value, String) {
    let (s, v) = post(app, path, body).await;
    check_route_error(path, s, &v);
    let param = v.get("param").unwrap_or(&v["error"]["param"]).clone();
    (s, param, error_message(&v).to_string())
}

fn bad(param: &str, message: &str) -> (StatusCode, Value, String) {
    (StatusCode::BAD_REQUEST, json!(param), message.to_string())
}

#[tokio::test]
async fn fields_coerce_as_pydantics_lax_mode() {
    let Some(app) = named_app() else { return };
    // Token ids: a float without a fraction, an integer string, a boolean, and JSON's `-0` (Python's
    // integer 0) are integers.
    let body = br#"{"model": "q", "tokens": [9707.0, " 9707 ", true, -0]}"#.to_vec();
    let (s, lax, _) = call(&app, "POST", "/detokenize", Some("application/json"), body).await;
    let (_, typed) = post(&app, "/detokenize", json!({"model": "q", "tokens": [9707, 9707, 1, 0]})).await;
    assert_eq!((s, &lax), (StatusCode::OK, &typed));
    let (s, lax) = post(
        &app,
        "/v1/detokenize",
        json!({"tokens": ["9707", 151645.0], "skip_special_tokens": "no"}),
    )
    .await;
    assert_eq!((s, lax), (StatusCode::OK, json!({"text": "Hello<|im_end|>"})));
    // Booleans: "false", "yes", 0, "off" and friends.
    let (_, lax) = post(
        &app,
        "/tokenize",
        json!({"prompt": "Hello", "add_special_tokens": "false", "return_token_strs": "yes"}),
    )
    .await;
    let (_, typed) = post(
        &app,
        "/tokenize",
        json!({"prompt": "Hello", "add_special_tokens": false, "return_token_strs": true}),
    )
    .await;
    assert_eq!(lax, typed);
    let (_, lax) = post(
        &app,
        "/tokenize",
        json!({"messages": hi(), "add_generation_prompt": "OFF"}),
    )
    .await;
    let (_, typed) = post(
        &app,
        "/tokenize",
        json!({"messages": hi(), "add_generation_prompt": false}),
    )
    .await;
    assert_eq!(lax, typed);
    let (_, lax) = post(
        &app,
        "/v1/tokenize",
        json!({"prompt": "Hello", "add_special_tokens": 0}),
    )
    .await;
    let (_, typed) = post(
        &app,
        "/v1/tokenize",
        json!({"prompt": "Hello", "add_special_tokens": false}),
    )
    .await;
    assert_eq!(lax, typed);
    // The sampling fields of a chat render, numbers as strings and booleans as words.
    let lax = json!({"messages": hi(), "request_id": "x", "max_tokens": "50", "n": 2.0, "temperature": "0.5",
                     "top_k": " 20 ", "seed": true, "stream": "on", "stream_options": {"include_usage": 1},
                     "logprobs": "y", "top_logprobs": 2.0, "ignore_eos": "t", "logit_bias": {"5": "10"},
                     "parallel_tool_calls": "0", "min_tokens": "1_0"});
    let typed = json!({"messages": hi(), "request_id": "x", "max_tokens": 50, "n": 2, "temperature": 0.5,
                       "top_k": 20, "seed": 1, "stream": true, "stream_options": {"include_usage": true},
                       "logprobs": true, "top_logprobs": 2, "ignore_eos": true, "logit_bias": {"5": 10.0},
                       "parallel_tool_calls": false, "min_tokens": 10});
    let (s, a) = post(&app, "/v1/chat/completions/render", lax).await;
    let (_, b) = post(&app, "/v1/chat/completions/render", typed).await;
    assert_eq!((s, &a), (StatusCode::OK, &b));
    assert_eq!(a["sampling_params"]["max_tokens"], 50, "{a}");
    // Completion prompts: ids given as floats and strings.
    let (s, a) = post(
        &app,
        "/v1/completions/render",
        json!({"prompt": [9707.0, "11"], "max_tokens": "7", "echo": 0, "request_id": "x"}),
    )
    .await;
    let (_, b) = post(
        &app,
        "/v1/completions/render",
        json!({"prompt": [9707, 11], "max_tokens": 7, "request_id": "x"}),
    )
    .await;
    assert_eq!((s, &a), (StatusCode::OK, &b));
    // A list with a string and an int fits only vLLM's `list[int]` member, leniently.
    let (_, mixed) = post(&app, "/v1/completions/render", json!({"prompt": ["1", 2]})).await;
    assert_eq!(mixed[0]["token_ids"], json!([1, 2]), "{mixed}");

    // What lax mode does not take, with pydantic's message at FastAPI's place.
    let cases = [
        (
            "/detokenize",
            json!({"model": "q", "tokens": [1.5]}),
            bad(
                "body.tokens.0",
                "Input should be a valid integer, got a number with a fractional part",
            ),
        ),
        (
            "/detokenize",
            json!({"model": "q", "tokens": [1, "x"]}),
            bad(
                "body.tokens.1",
                "Input should be a valid integer, unable to parse string as an integer",
            ),
        ),
        (
            "/detokenize",
            json!({"model": "q", "tokens": [-1]}),
            bad("body.tokens.0", "Input should be greater than or equal to 0"),
        ),
        (
            "/v1/chat/completions/render",
            json!({"messages": hi(), "add_special_tokens": 2}),
            bad(
                "body.add_special_tokens",
                "Input should be a valid boolean, unable to interpret input",
            ),
        ),
        (
            "/v1/chat/completions/render",
            json!({"messages": hi(), "echo": 0.5}),
            bad("body.echo", "Input should be a valid boolean"),
        ),
        (
            "/v1/chat/completions/render",
            json!({"messages": hi(), "temperature": "hot"}),
            bad(
                "body.temperature",
                "Input should be a valid number, unable to parse string as a number",
            ),
        ),
        (
            "/v1/chat/completions/render",
            json!({"messages": hi(), "n": 1.5}),
            bad(
                "body.n",
                "Input should be a valid integer, got a number with a fractional part",
            ),
        ),
        (
            "/v1/chat/completions/render",
            json!({"messages": hi(), "stream_options": {"include_usage": "maybe"}, "stream": true}),
            bad(
                "body.stream_options.include_usage",
                "Input should be a valid boolean, unable to interpret input",
            ),
        ),
        // `int` and `list[str]` fields with a default are not optional: `null` is refused.
        (
            "/v1/completions/render",
            json!({"prompt": "x", "n": null}),
            bad("body.n", "Input should be a valid integer"),
        ),
        (
            "/v1/completions/render",
            json!({"prompt": "x", "bad_words": null}),
            bad("body.bad_words", "Input should be a valid list"),
        ),
        (
            "/v1/completions/render",
            json!({"prompt": ["a", 1]}),
            bad(
                "body.prompt.0",
                "Input should be a valid integer, unable to parse string as an integer",
            ),
        ),
        (
            "/v1/detokenize",
            json!({"tokens": [1], "model": null}),
            bad("body.model", "Input should be a valid string"),
        ),
        // SGLang checks prompt-or-messages after every field is read.
        (
            "/v1/tokenize",
            json!({"prompt": "x", "messages": hi(), "add_special_tokens": "maybe"}),
            bad(
                "body.add_special_tokens",
                "Input should be a valid boolean, unable to interpret input",
            ),
        ),
    ];
    for (path, body, want) in cases {
        assert_eq!(refusal(&app, path, body.clone()).await, want, "{path} {body}");
    }
    // llama.cpp's routes keep reading JSON booleans only.
    let (s, _) = post(&app, "/tokenize", json!({"content": "Hi", "add_special": "yes"})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn chat_render_checks_the_body_as_sent_as_vllm_does() {
    let Some(app) = named_app() else { return };
    let path = "/v1/chat/completions/render";
    let with = |extra: Value| {
        let mut body = json!({"messages": hi()});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body
    };
    let salt = "Parameter 'cache_salt' must be at most 128 characters and must not contain '@', '/', '\\\\', or NUL.";
    let cases = [
        (
            json!({"top_logprobs": 3}),
            bad(
                "top_logprobs",
                "when using `top_logprobs`, `logprobs` must be set to true.",
            ),
        ),
        (
            json!({"top_logprobs": -1, "logprobs": false}),
            bad(
                "top_logprobs",
                "when using `top_logprobs`, `logprobs` must be set to true.",
            ),
        ),
        (
            json!({"top_logprobs": -2, "logprobs": true}),
            bad("top_logprobs", "`top_logprobs` must be a positive value or -1."),
        ),
        (
            json!({"top_logprobs": "3", "logprobs": true}),
            bad("top_logprobs", "`top_logprobs` must be an integer."),
        ),
        (
            json!({"prompt_logprobs": 2, "stream": true}),
            bad(
                "prompt_logprobs",
                "`prompt_logprobs` are not available when `stream=True`.",
            ),
        ),
        (
            json!({"prompt_logprobs": -2}),
            bad("prompt_logprobs", "`prompt_logprobs` must be a positive value or -1."),
        ),
        // By truthiness as sent: the string "false" is true.
        (
            json!({"prompt_logprobs": 1, "stream": "false"}),
            bad(
                "prompt_logprobs",
                "`prompt_logprobs` are not available when `stream=True`.",
            ),
        ),
        (
            json!({"request_id": null}),
            bad("body.request_id", "Input should be a valid string"),
        ),
        (json!({"cache_salt": "a/b"}), bad("cache_salt", salt)),
        (json!({"cache_salt": "x".repeat(129)}), bad("cache_salt", salt)),
        (
            json!({"cache_salt": 5}),
            bad(
                "cache_salt",
                "Parameter 'cache_salt' must be a non-empty string if provided.",
            ),
        ),
        // These checks come before any field is read.
        (
            json!({"messages": "not a list", "top_logprobs": 3}),
            bad(
                "top_logprobs",
                "when using `top_logprobs`, `logprobs` must be set to true.",
            ),
        ),
    ];
    for (extra, want) in cases {
        let body = with(extra);
        assert_eq!(refusal(&app, path, body.clone()).await, want, "{body}");
    }
    // What the checks let through.
    for extra in [
        json!({"top_logprobs": null}),
        json!({"top_logprobs": 0}),
        json!({"top_logprobs": -1, "logprobs": true}),
        json!({"prompt_logprobs": 0, "stream": true}),
        json!({"cache_salt": "x".repeat(128)}),
    ] {
        let (s, v) = post(&app, path, with(extra.clone())).await;
        assert_eq!(s, StatusCode::OK, "{extra}: {v}");
    }
    // `stream: "false"` passes the stream-options check (a non-empty string is true) and reads as false.
    let (s, v) = post(
        &app,
        path,
        with(json!({"stream": "false", "stream_options": {"include_usage": true}})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!((&v["stream"], &v["stream_options"]), (&json!(false), &Value::Null));
}

#[tokio::test]
async fn completion_render_checks_the_body_as_sent_as_vllm_does() {
    let Some(app) = named_app() else { return };
    let path = "/v1/completions/render";
    let many = |n: usize| json!(vec!["x"; n]);
    let cases = [
        (
            json!({"prompt": ""}),
            bad(
                "prompt",
                "Either prompt or prompt_embeds must be provided and non-empty.",
            ),
        ),
        (
            json!({"prompt": null}),
            bad(
                "prompt",
                "Either prompt or prompt_embeds must be provided and non-empty.",
            ),
        ),
        (
            json!({"prompt": []}),
            bad("prompt", "You must pass at least one prompt"),
        ),
        (
            json!({"prompt": many(1025)}),
            bad(
                "prompt",
                "prompt list length 1025 exceeds the maximum allowed count of 1024. To increase this limit, \
                 set the VLLM_MAX_COMPLETION_PROMPTS environment variable.",
            ),
        ),
        (
            json!({"prompt": "x", "logprobs": -2}),
            bad("logprobs", "`logprobs` must be a positive value or -1."),
        ),
        (
            json!({"prompt": "x", "prompt_logprobs": 1, "stream": true}),
            bad(
                "prompt_logprobs",
                "`prompt_logprobs` are not available when `stream=True`.",
            ),
        ),
        (
            json!({"prompt": "x", "stream_options": {"include_usage": true}}),
            bad(
                "stream_options",
                "Stream options can only be defined when `stream=True`.",
            ),
        ),
    ];
    for (body, want) in cases {
        assert_eq!(refusal(&app, path, body.clone()).await, want, "{body}");
    }
    // 1024 prompts are fine, and so is a single prompt of more than 1024 ids.
    let (s, v) = post(&app, path, json!({"prompt": many(1024)})).await;
    assert_eq!((s, v.as_array().map(Vec::len)), (StatusCode::OK, Some(1024)));
    let (s, v) = post(&app, path, json!({"prompt": vec![9707; 1025]})).await;
    assert_eq!((s, v.as_array().map(Vec::len)), (StatusCode::OK, Some(1)));
    // `max_tokens: null` is the default of 16, which SamplingParams leaves out.
    let (s, v) = post(&app, path, json!({"prompt": "x", "max_tokens": null})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v[0]["sampling_params"].get("max_tokens"), None, "{v}");
}

/// `{"k": ... 1 ...}`: arrays or objects nested `depth` levels, the outer object included.
fn nested(depth: usize, objects: bool) -> String {
    let (open, close) = if objects { (r#"{"k": "#, "}") } else { ("[", "]") };
    format!(r#"{{"k": {}1{}}}"#, open.repeat(depth - 1), close.repeat(depth - 1))
}

#[tokio::test]
async fn bodies_nest_as_deep_as_python_reads_them() {
    let Some(app) = named_app() else { return };
    let send = |path: &'static str, body: String| {
        let app = &app;
        async move { call(app, "POST", path, Some("application/json"), body.into_bytes()).await }
    };
    let render = "/v1/chat/completions/render";
    let messages = hi().to_string();
    for objects in [false, true] {
        // Bodies 900 levels deep: in a field vLLM ignores, and in template variables it echoes back.
        let deep = nested(899, objects);
        let (s, v, _) = send(render, format!(r#"{{"messages": {messages}, "ignored": {deep}}}"#)).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        let body = format!(r#"{{"messages": {messages}, "chat_template_kwargs": {deep}}}"#);
        let (s, v, _) = send(render, body).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        // Past serde_json's default limit the test's reader leaves the answer as text.
        let mut reader = serde_json::Deserializer::from_str(v.as_str().unwrap());
        reader.disable_recursion_limit();
        let v = Value::deserialize(&mut reader).unwrap();
        let mut echoed = &v["parse_context"]["chat_template_kwargs"]["k"];
        let mut levels = 0;
        while let Some(inner) = echoed.get("k").or_else(|| echoed.get(0)) {
            echoed = inner;
            levels += 1;
        }
        assert_eq!((levels, echoed), (898, &json!(1)));
        // At the documented limit (1500 levels, about CPython 3.12's): template variables are
        // copied, echoed and written out, tool parameters written with `tojson`. A template may stop
        // at its own recursion limit, as Python's would, with a clean error.
        let deep = nested(1499, objects);
        for path in [render, "/tokenize", "/v1/tokenize", "/apply-template", "/v1/render"] {
            let body = format!(r#"{{"messages": {messages}, "chat_template_kwargs": {deep}}}"#);
            let (s, v, _) = send(path, body).await;
            assert_eq!(s, StatusCode::OK, "{path}: {v}");
        }
        let parameters = nested(1496, objects);
        let tools = format!(r#"[{{"type": "function", "function": {{"name": "f", "parameters": {parameters}}}}}]"#);
        for body in [
            format!(r#"{{"messages": {messages}, "tools": {tools}}}"#),
            format!(r#"{{"messages": {messages}, "chat_template_kwargs": {deep}, "chat_template": "{{{{ k }}}}"}}"#),
        ] {
            let (s, v, _) = send(render, body).await;
            if s != StatusCode::OK {
                check_error("deep template", s, &v);
                assert!(
                    v["error"]["message"].as_str().unwrap().starts_with("RecursionError"),
                    "{v}"
                );
            }
        }
        let (s, v, _) = send(render, nested(1501, objects)).await;
        assert_eq!(
            (s, &v["error"]["param"]),
            (StatusCode::BAD_REQUEST, &json!("body")),
            "{v}"
        );
    }
    // 100,000 levels, well-formed or not, are a clean 400.
    for body in [nested(100_000, false), nested(100_000, true), "[".repeat(100_000)] {
        let (s, v, _) = send(render, body).await;
        check_error("deep", s, &v);
        assert_eq!(
            (s, &v["error"]["param"]),
            (StatusCode::BAD_REQUEST, &json!("body")),
            "{v}"
        );
    }
}
