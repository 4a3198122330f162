//! vLLM's GPU-free render endpoints: `POST /v1/chat/completions/render` (one `GenerateRequest`)
//! and `POST /v1/completions/render` (a list of them, one per prompt). The token ids are those of
//! `/tokenize`; `sampling_params` is [`crate::sampling`]'s. Fields of vLLM's requests whose effect
//! is not reproduced (structured outputs, multimodal inputs, prompt truncation, token offsets,
//! transfer params) are refused rather than ignored, unless given their no-op values.

use crate::answer::JsonAnswer;
use crate::api::ApiError;
use crate::body::{self, Fields};
use crate::models::Model;
use crate::routes::{read, require_json, Answer};
use crate::sampling::{Kind, Sampling};
use crate::shared::Shared;
use crate::work::ChatFields;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{json, Map, Value as Json};
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

/// Fields of vLLM's requests whose effect is not reproduced here (`response_format` and
/// `return_token_offsets` are read first: their no-op values pass).
const UNSUPPORTED: [&str; 11] = [
    "response_format",
    "structured_outputs",
    "truncate_prompt_tokens",
    "return_token_offsets",
    "vllm_xargs",
    "kv_transfer_params",
    "ec_transfer_params",
    "logprob_token_ids",
    "thinking_token_budget",
    "repetition_detection",
    "mm_processor_kwargs",
];

/// The values of vLLM's `ReasoningEffort`.
const REASONING_EFFORTS: [&str; 7] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

/// A chat request's `reasoning_effort`, checked as its request model checks it.
fn reasoning_effort(f: &mut Fields) -> Result<Option<String>, ApiError> {
    match f.0.remove("reasoning_effort") {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(effort)) if REASONING_EFFORTS.contains(&effort.as_str()) => Ok(Some(effort)),
        Some(_) => Err(ApiError::bad(
            "Input should be 'none', 'minimal', 'low', 'medium', 'high', 'xhigh' or 'max'",
            Some("body.reasoning_effort"),
        )),
    }
}

/// The fields every `GenerateRequest` shares, read from the request.
struct Common {
    model: Option<String>,
    request_id: Option<String>,
    stream_options: Option<Map<String, Json>>,
    cache_salt: Option<String>,
    priority: i64,
    return_token_ids: Option<bool>,
}

impl Common {
    fn read(f: &mut Fields) -> Result<Common, ApiError> {
        // No-op values of two of them: `response_format` of type `text` (vLLM's
        // `structured_outputs_from_response_format` leaves everything as it is) and
        // `return_token_offsets` false, its default.
        let text_format = |v: &Json| v.get("type").and_then(Json::as_str) == Some("text");
        if f.0.get("response_format").is_some_and(text_format) {
            f.0.remove("response_format");
        }
        if f.opt_bool("return_token_offsets")? == Some(true) {
            f.0.insert("return_token_offsets".to_string(), Json::Bool(true));
        }
        for name in UNSUPPORTED {
            if f.0.get(name).is_some_and(|v| !v.is_null()) {
                return Err(ApiError::bad(
                    format!("'{name}' is not supported by this server's render endpoints"),
                    Some(&format!("body.{name}")),
                ));
            }
        }
        if f.bool("use_beam_search", false, false)? {
            return Err(ApiError::bad(
                "Beam search is not supported by the render endpoint",
                None,
            ));
        }
        // StreamOptions: two optional booleans, false by default.
        let stream_options = match f.opt_object("stream_options")? {
            None => None,
            Some(mut o) => {
                let mut out = Map::new();
                for key in ["include_usage", "continuous_usage_stats"] {
                    let value = match o.remove(key) {
                        None => json!(false),
                        Some(Json::Null) => Json::Null,
                        Some(v) => {
                            json!(body::lax_bool(&v).map_err(|m| body::invalid(&format!("stream_options.{key}"), m))?)
                        }
                    };
                    out.insert(key.to_string(), value);
                }
                Some(out)
            }
        };
        Ok(Common {
            model: f.opt_str("model")?,
            request_id: f.defaulted_str("request_id")?,
            stream_options,
            cache_salt: f.opt_str("cache_salt")?,
            priority: f.i64("priority", 0)?,
            return_token_ids: f.opt_bool("return_token_ids")?,
        })
    }

    /// `PREFIX-` and the `X-Request-Id` header, else the request's `request_id`, else a random id.
    fn request_id(&self, prefix: &str, headers: &HeaderMap) -> String {
        let header = headers.get("x-request-id").and_then(|v| v.to_str().ok());
        let id = header
            .map(str::to_string)
            .or_else(|| self.request_id.clone())
            .unwrap_or_else(random_uuid);
        format!("{prefix}-{id}")
    }

    /// A `GenerateRequest` with every key of vLLM's model.
    fn generate_request(
        &self,
        request_id: String,
        token_ids: Vec<u32>,
        sampling: &Sampling,
        params: Map<String, Json>,
    ) -> Map<String, Json> {
        let stream_options = if sampling.stream {
            self.stream_options.clone().map(Json::Object).unwrap_or(Json::Null)
        } else {
            Json::Null
        };
        let value = json!({
            "request_id": request_id,
            "token_ids": token_ids,
            "token_offsets": null,
            "features": null,
            "content_parts": null,
            "sampling_params": params,
            "model": self.model,
            "reasoning_ended": null,
            "reasoning_parser_kwargs": null,
            "return_token_ids": self.return_token_ids,
            "output_mode": "tokens",
            "parse_context": null,
            "stream": sampling.stream,
            "stream_options": stream_options,
            "cache_salt": self.cache_salt,
            "priority": self.priority,
            "kv_transfer_params": null,
            "ec_transfer_params": null,
        });
        match value {
            Json::Object(map) => map,
            _ => Map::new(),
        }
    }
}

/// 32 random hex digits shaped as a version-4 UUID (`uuid.uuid4().hex`).
fn random_uuid() -> String {
    let word = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.finish()
    };
    let bits = (u128::from(word()) << 64) | u128::from(word());
    let bits = (bits & !(0xf_u128 << 76) & !(0x3_u128 << 62)) | (0x4_u128 << 76) | (0x2_u128 << 62);
    format!("{bits:032x}")
}

/// The most prompts a completion request may list (`VLLM_MAX_COMPLETION_PROMPTS`' default).
const MAX_PROMPTS: usize = 1024;

/// Whether the field is there and true as Python's `bool` sees it.
fn truthy(f: &Fields, name: &str) -> bool {
    f.0.get(name).is_some_and(chatfmt::json_input::py_truthy)
}

/// The field's value, unless absent or `null`.
fn given<'a>(f: &'a Fields, name: &str) -> Option<&'a Json> {
    f.0.get(name).filter(|v| !v.is_null())
}

/// A value as Python compares it with numbers (a `bool` is an `int`).
fn py_number(v: &Json) -> Option<f64> {
    match v {
        Json::Bool(b) => Some(f64::from(u8::from(*b))),
        Json::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// The 400 of a check of the body as sent, naming the parameter as vLLM's own checks do (bare).
fn sent_wrong(message: &str, param: &str) -> Result<(), ApiError> {
    Err(ApiError::bad(message, Some(param)))
}

/// vLLM's checks of a chat request's body as sent, before any field is read: its request model's
/// `mode="before"` validators, last defined first as pydantic runs them. Gives the `tool_choice`
/// they settle on.
fn check_chat_sent(f: &Fields) -> Result<Json, ApiError> {
    ChatFields::check_flags(f)?;
    let choice = tool_choice(f.0.get("tool_choice").cloned(), f.0.get("tools"))?;
    check_logprobs(f, Kind::Chat)?;
    check_stream_options(f)?;
    check_cache_salt(f)?;
    Ok(choice)
}

/// vLLM's checks of a completion request's body as sent, as [`check_chat_sent`].
fn check_completion_sent(f: &Fields) -> Result<(), ApiError> {
    let prompt = f.0.get("prompt");
    if let Some(Json::Array(prompts)) = prompt {
        // A list of token ids (its first item an `int`) is one prompt.
        let ids = prompts
            .first()
            .is_some_and(|v| v.is_boolean() || v.is_i64() || v.is_u64());
        if !ids && prompts.len() > MAX_PROMPTS {
            return sent_wrong(
                &format!(
                    "prompt list length {} exceeds the maximum allowed count of {MAX_PROMPTS}. To increase this \
                     limit, set the VLLM_MAX_COMPLETION_PROMPTS environment variable.",
                    prompts.len()
                ),
                "prompt",
            );
        }
    }
    let no_embeds = given(f, "prompt_embeds").is_none_or(|e| e == &json!([]));
    if (matches!(prompt, None | Some(Json::Null)) || prompt == Some(&json!(""))) && no_embeds {
        return sent_wrong(
            "Either prompt or prompt_embeds must be provided and non-empty.",
            "prompt",
        );
    }
    check_stream_options(f)?;
    check_logprobs(f, Kind::Completion)?;
    check_cache_salt(f)
}

/// vLLM's `check_logprobs` of `prompt_logprobs` and `top_logprobs` (a chat's) or `logprobs` (a
/// completion's): numbers, positive or -1; none for prompts when streaming; a chat's top logprobs
/// only with `logprobs`.
fn check_logprobs(f: &Fields, kind: Kind) -> Result<(), ApiError> {
    let top = match kind {
        Kind::Chat => "top_logprobs",
        Kind::Completion => "logprobs",
    };
    for name in ["prompt_logprobs", top] {
        if given(f, name).is_some_and(|v| py_number(v).is_none()) {
            return sent_wrong(&format!("`{name}` must be an integer."), name);
        }
    }
    if let Some(p) = given(f, "prompt_logprobs").and_then(py_number) {
        if truthy(f, "stream") && (p > 0.0 || p == -1.0) {
            return sent_wrong(
                "`prompt_logprobs` are not available when `stream=True`.",
                "prompt_logprobs",
            );
        }
        if p < 0.0 && p != -1.0 {
            return sent_wrong("`prompt_logprobs` must be a positive value or -1.", "prompt_logprobs");
        }
    }
    if let Some(t) = given(f, top).and_then(py_number) {
        if t < 0.0 && t != -1.0 {
            return sent_wrong(&format!("`{top}` must be a positive value or -1."), top);
        }
        if kind == Kind::Chat && (t == -1.0 || t > 0.0) && !truthy(f, "logprobs") {
            return sent_wrong("when using `top_logprobs`, `logprobs` must be set to true.", top);
        }
    }
    Ok(())
}

/// vLLM's `validate_stream_options`: `stream_options` only with `stream`.
fn check_stream_options(f: &Fields) -> Result<(), ApiError> {
    if truthy(f, "stream_options") && !truthy(f, "stream") {
        return sent_wrong(
            "Stream options can only be defined when `stream=True`.",
            "stream_options",
        );
    }
    Ok(())
}

/// vLLM's `validate_cache_salt`: a non-empty string of at most 128 characters, without `@`, `/`,
/// `\\` or NUL.
fn check_cache_salt(f: &Fields) -> Result<(), ApiError> {
    match given(f, "cache_salt") {
        None => Ok(()),
        Some(Json::String(salt)) if !salt.is_empty() => {
            if salt.chars().count() > 128 || salt.contains(['@', '/', '\\', '\0']) {
                return sent_wrong(
                    "Parameter 'cache_salt' must be at most 128 characters and must not contain '@', '/', \
                     '\\\\', or NUL.",
                    "cache_salt",
                );
            }
            Ok(())
        }
        Some(_) => sent_wrong(
            "Parameter 'cache_salt' must be a non-empty string if provided.",
            "cache_salt",
        ),
    }
}

/// The model a request names, and its tokenizer's presence checked.
fn model_of(shared: &Shared, common: &Common) -> Result<Arc<Model>, ApiError> {
    let model = shared.models.get(common.model.as_deref())?;
    model.tokenizer()?;
    Ok(model)
}

/// A tool list as vLLM's `ChatCompletionToolsParam` writes it back.
fn tools_dump(tools: &[Json]) -> Result<Vec<Json>, ApiError> {
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let here = |k: &str| format!("body.tools.{i}.{k}");
            let function = t["function"]
                .as_object()
                .ok_or_else(|| ApiError::bad("Field required", Some(&here("function"))))?;
            let name = function
                .get("name")
                .and_then(Json::as_str)
                .ok_or_else(|| ApiError::bad("Field required", Some(&here("function.name"))))?;
            // Built by moving values in: `json!` would write nested values again, recursively.
            let field = |k: &str| function.get(k).cloned().unwrap_or(Json::Null);
            let mut f = Map::new();
            f.insert("name".into(), Json::from(name));
            f.insert("description".into(), field("description"));
            f.insert("parameters".into(), field("parameters"));
            for key in ["strict", "defer_loading"] {
                if let Some(v) = function.get(key).filter(|v| !v.is_null()) {
                    f.insert(key.into(), v.clone());
                }
            }
            let mut out = Map::new();
            out.insert("type".into(), Json::from("function"));
            out.insert("function".into(), Json::Object(f));
            if let Some(v) = t.get("defer_loading").filter(|v| !v.is_null()) {
                out.insert("defer_loading".into(), v.clone());
            }
            Ok(Json::Object(out))
        })
        .collect()
}

/// `tool_choice` as vLLM's `check_tool_usage` validates and defaults it: `"auto"` when tools are
/// given without it, else `"none"`; a named tool must be one of `tools`.
fn tool_choice(given: Option<Json>, tools: Option<&Json>) -> Result<Json, ApiError> {
    let bad = |message: String, param: &str| Err(ApiError::bad(message, Some(param)));
    let tools = tools.filter(|t| !t.is_null());
    if tools == Some(&json!([])) {
        return bad(
            "`tools` must not be an empty array. Either provide at least one tool or omit the field entirely."
                .to_string(),
            "tools",
        );
    }
    let choice = match given {
        None if tools.is_some() => return Ok(json!("auto")),
        None => return Ok(json!("none")),
        Some(c) => c,
    };
    if choice == "none" || choice.is_null() {
        return Ok(choice);
    }
    let Some(tools) = tools else {
        return bad(
            "When using `tool_choice`, `tools` must be set.".to_string(),
            "tool_choice",
        );
    };
    if choice == "auto" || choice == "required" {
        return Ok(choice);
    }
    let correct = r#"Correct usage: `{"type": "function", "function": {"name": "my_function"}}`"#;
    let Json::Object(named) = &choice else {
        return bad(
            format!(
                "Invalid value for `tool_choice`: {}! Only named tools, \"none\", \"auto\" or \"required\" are supported.",
                choice.as_str().map_or_else(|| choice.to_string(), str::to_string)
            ),
            "tool_choice",
        );
    };
    let Some(Json::Object(function)) = named.get("function") else {
        return bad(
            format!("Invalid value for `function` in `tool_choice`! {correct}"),
            "tool_choice.function",
        );
    };
    let Some(name) = function.get("name") else {
        return bad(
            format!("Expected field `name` in `function` in `tool_choice`! {correct}"),
            "tool_choice.function.name",
        );
    };
    match name.as_str() {
        Some(n) if !n.is_empty() => {
            if tools
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| t["function"]["name"] == *n)
            {
                Ok(json!({"function": {"name": n}, "type": "function"}))
            } else {
                bad(
                    "The tool specified in `tool_choice` does not match any of the specified `tools`".to_string(),
                    "tool_choice",
                )
            }
        }
        _ => bad(
            format!("Invalid `name` in `function`: `{name}` in `tool_choice`! {correct}"),
            "tool_choice.function.name",
        ),
    }
}

/// `POST /v1/chat/completions/render`: the `GenerateRequest` vLLM's render server returns.
pub async fn chat(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Answer {
    let parsed = read(&shared, body).await?;
    require_json(&headers)?;
    let mut f = parsed?;
    let light = f.1;
    let tool_choice = check_chat_sent(&f)?;
    let mut chat = ChatFields::read(&mut f, true)?;
    let effort = reasoning_effort(&mut f)?;
    let sampling = Sampling::read(&mut f, Kind::Chat)?;
    let common = Common::read(&mut f)?;
    let model = model_of(&shared, &common)?;
    let tools_out = chat.tools.as_deref().map(tools_dump).transpose()?;
    let parallel_tool_calls = if f.has("parallel_tool_calls") {
        f.opt_bool("parallel_tool_calls")?
    } else {
        Some(true)
    };
    let include_reasoning = f.bool("include_reasoning", true, false)?;
    let history_tool_calls: usize = (chat.messages.iter())
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["tool_calls"].as_array().map_or(0, Vec::len))
        .sum();
    // vLLM's `build_chat_params`: the request's kwargs, then its own fields over them (`documents`
    // only when given).
    let mut context_kwargs = chat.template_kwargs.clone();
    context_kwargs.insert("add_generation_prompt".into(), json!(chat.add_generation_prompt));
    context_kwargs.insert("continue_final_message".into(), json!(chat.continue_final_message));
    if let Some(documents) = &chat.documents {
        context_kwargs.insert("documents".into(), documents.clone());
    }
    // The effort goes to the template, with `enable_thinking` unless the request's kwargs set it (a
    // server without a reasoning parser maps no effort to another).
    if let Some(effort) = effort {
        let thinking = (!chat.template_kwargs.contains_key("enable_thinking")).then(|| json!(effort != "none"));
        for kwargs in [&mut context_kwargs, &mut chat.template_kwargs] {
            kwargs.insert("reasoning_effort".into(), json!(effort));
            if let Some(thinking) = &thinking {
                kwargs.insert("enable_thinking".into(), thinking.clone());
            }
        }
    }
    let request_id = common.request_id("chatcmpl", &headers);
    let job_shared = Arc::clone(&shared);
    let job_model = Arc::clone(&model);
    let ids = shared
        .pool
        .run(light, move || chat.token_ids(job_model, &job_shared.cache))
        .await?;
    if ids.is_empty() {
        return Err(ApiError::bad("No token_ids rendered", None));
    }
    let max_tokens = sampling.max_tokens(model.max_model_len, ids.len(), &model.generation_defaults)?;
    let params = sampling.params(max_tokens, &model.generation_defaults)?;
    let mut out = common.generate_request(request_id, ids, &sampling, params);
    out.insert(
        "reasoning_ended".into(),
        if include_reasoning { Json::Null } else { json!(true) },
    );
    // Moved in, not written again by `json!` (see `tools_dump`).
    let parse_context = [
        ("tools", tools_out.map_or(Json::Null, Json::Array)),
        ("tool_choice", tool_choice),
        ("parallel_tool_calls", json!(parallel_tool_calls)),
        ("include_reasoning", json!(include_reasoning)),
        ("chat_template_kwargs", Json::Object(context_kwargs)),
        ("history_tool_call_cnt", json!(history_tool_calls)),
    ];
    let parse_context = parse_context.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    out.insert("parse_context".into(), Json::Object(parse_context));
    Ok(JsonAnswer(Json::Object(out)))
}

/// The prompts of a completion request: a string, strings, token ids, or lists of token ids.
enum Prompt {
    Text(String),
    Ids(Vec<u32>),
}

/// The prompts as pydantic picks the member of vLLM's union (token ids, lists of them, a string or
/// strings) a value fits: strings stay text; anything else is read as one prompt of ids, else as
/// lists of ids, and when neither fits the answer is the first error of reading it as ids. `[]` is
/// no prompt.
fn prompts(f: &mut Fields) -> Result<Vec<Prompt>, ApiError> {
    match f.0.remove("prompt") {
        // Only with `prompt_embeds`, which this server does not take.
        None | Some(Json::Null) => Err(ApiError::bad(
            "Either prompt or prompt_embeds must be provided and non-empty.",
            Some("prompt"),
        )),
        Some(Json::String(s)) => Ok(vec![Prompt::Text(s)]),
        Some(Json::Array(items)) if !items.is_empty() && items.iter().all(Json::is_string) => Ok((items.into_iter())
            .filter_map(|v| match v {
                Json::String(s) => Some(Prompt::Text(s)),
                _ => None,
            })
            .collect()),
        Some(Json::Array(items)) => match body::ids_of("prompt", &items, true) {
            Ok(ids) if ids.is_empty() => Ok(Vec::new()),
            Ok(ids) => Ok(vec![Prompt::Ids(ids)]),
            Err(as_ids) => (items.iter().enumerate())
                .map(|(i, v)| match v {
                    Json::Array(ids) => body::ids_of(&format!("prompt.{i}"), ids, true).map(Prompt::Ids),
                    _ => Err(body::wrong("prompt", "a valid list")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| as_ids),
        },
        Some(_) => Err(body::wrong("prompt", "a valid list")),
    }
}

/// `POST /v1/completions/render`: one `GenerateRequest` per prompt.
pub async fn completion(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Answer {
    let parsed = read(&shared, body).await?;
    require_json(&headers)?;
    let mut f = parsed?;
    let light = f.1;
    check_completion_sent(&f)?;
    let prompts = prompts(&mut f)?;
    let sampling = Sampling::read(&mut f, Kind::Completion)?;
    let common = Common::read(&mut f)?;
    let add_special_tokens = f.bool("add_special_tokens", true, false)?;
    let model = model_of(&shared, &common)?;
    if prompts.is_empty() {
        return Err(ApiError::bad("You must pass at least one prompt", Some("prompt")));
    }
    let base = common.request_id("cmpl", &headers);
    let job_model = Arc::clone(&model);
    let all_ids = shared
        .pool
        .run(light, move || {
            let tokenizer = job_model.tokenizer()?;
            prompts
                .into_iter()
                .map(|p| match p {
                    Prompt::Ids(ids) => Ok(ids),
                    Prompt::Text(text) => tokenizer
                        .encode_text(&text, add_special_tokens, false)
                        .map_err(|e| ApiError::tokenize(&e, false)),
                })
                .collect::<Result<Vec<_>, ApiError>>()
        })
        .await?;
    let several = all_ids.len() > 1;
    let mut out = Vec::with_capacity(all_ids.len());
    for (i, ids) in all_ids.into_iter().enumerate() {
        if ids.is_empty() {
            return Err(ApiError::bad("No token_ids rendered", None));
        }
        let max_tokens = sampling.max_tokens(model.max_model_len, ids.len(), &model.generation_defaults)?;
        let params = sampling.params(max_tokens, &model.generation_defaults)?;
        let id = if several { format!("{base}-{i}") } else { base.clone() };
        out.push(Json::Object(common.generate_request(id, ids, &sampling, params)));
    }
    Ok(JsonAnswer(Json::Array(out)))
}
