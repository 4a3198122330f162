//! SGLang's `POST /v1/tokenize` and `POST /v1/detokenize` (SGLang 0.5.23). A `messages` body is
//! prepared and rendered as SGLang's chat path does with a Jinja template
//! (`sglang/srt/entrypoints/openai/serving_tokenize.py` `_tokenize_chat_request`, serving_chat.py
//! `_validate_request`, `_process_messages` and `_apply_jinja_template`): the messages as its
//! request models dump them, content parts in the template's content format, the last assistant
//! message continued or turned into a user message, and tools as sent. Errors are SGLang's flat
//! `ErrorResponse` ([`Shape::SglangValidation`] for what its request models refuse,
//! [`Shape::SglangHandler`] for what its handler refuses).

use crate::answer::JsonAnswer;
use crate::api::{ApiError, Shape};
use crate::body::{self, Fields};
use crate::kwargs;
use crate::models::Model;
use crate::routes::{read, require_json, Answer};
use crate::sglang_tgi::content_format::ContentFormat;
use crate::shared::Shared;
use crate::work::{Chat, Prepared, WithoutTemplate};
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;

/// SGLang's default `model`.
const DEFAULT_MODEL: &str = "default";

/// The model of a request: SGLang serves one model and never looks `model` up, so with one loaded
/// any name is it; with several, the one named (SGLang's default `"default"` names none, unless a
/// model has that name).
fn sglang_model(shared: &Shared, name: Option<String>) -> Result<Arc<Model>, ApiError> {
    let models = &shared.models;
    let name = name.filter(|n| n != DEFAULT_MODEL || models.all().iter().any(|m| m.name == *n));
    models.lenient(name.as_deref())
}

/// A `TokenizeRequest`'s prompt.
enum Prompt {
    One(String),
    /// Several prompts (then `tokens` and `count` are lists).
    Many(Vec<String>),
}

/// What a `TokenizeRequest` asks for.
enum Input {
    /// A prompt, encoded with or without special tokens.
    Prompt(Prompt, bool),
    Chat(ChatRequest),
}

/// `tool_choice`: one of `ChatCompletionRequest`'s literals, or a named function.
#[derive(Debug, Clone, PartialEq)]
enum ToolChoice {
    Auto,
    Required,
    None,
    /// `{"function": {"name": ...}}`; the name may be `null`.
    Named(Option<String>),
}

/// The `messages` form of a `TokenizeRequest`, as its fields validate.
struct ChatRequest {
    /// Each message as its request model dumps it.
    messages: Vec<Map<String, Json>>,
    tools: Option<Vec<Json>>,
    tool_choice: ToolChoice,
    /// A tier (`"low"`, ...) or a number.
    reasoning_effort: Option<Json>,
    continue_final_message: bool,
    template_kwargs: Map<String, Json>,
    /// Whether the encoding adds special tokens (`_format_add_special_tokens`).
    add_special_tokens: bool,
    /// `add_generation_prompt` when given (`_format_add_generation_prompt`).
    add_generation_prompt: Option<bool>,
}

/// SGLang's `POST /v1/tokenize {prompt | messages, ...}` -> `{tokens, count, max_model_len}`.
pub async fn tokenize(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Answer {
    let (model, input, light) = read_tokenize(&shared, &headers, body)
        .await
        .map_err(|e| e.shaped(Shape::SglangValidation))?;
    let model = sglang_model(&shared, model).map_err(|e| e.shaped(Shape::SglangHandler))?;
    let max_model_len = model.tokenizer_max_length;
    let cache = Arc::clone(&shared);
    let (tokens, count) = shared
        .pool
        .run(light, move || {
            let encode = |t: &str, add_special_tokens: bool| {
                (model.tokenizer()?)
                    .encode_text(t, add_special_tokens, false)
                    .map_err(|e| ApiError::tokenize(&e, false))
            };
            Ok(match input {
                Input::Prompt(Prompt::One(t), special) => {
                    let ids = encode(&t, special)?;
                    let n = ids.len();
                    (json!(ids), json!(n))
                }
                Input::Prompt(Prompt::Many(all), special) => {
                    let ids = (all.iter())
                        .map(|t| encode(t, special))
                        .collect::<Result<Vec<_>, _>>()?;
                    let counts: Vec<usize> = ids.iter().map(Vec::len).collect();
                    (json!(ids), json!(counts))
                }
                Input::Chat(chat) => {
                    let ids = chat_ids(&model, &cache, chat)?;
                    let n = ids.len();
                    (json!(ids), json!(n))
                }
            })
        })
        .await
        .map_err(|e| e.shaped(Shape::SglangHandler))?;
    Ok(JsonAnswer(
        json!({"tokens": tokens, "count": count, "max_model_len": max_model_len}),
    ))
}

/// The body of `/v1/tokenize`, its fields read in the order of SGLang's `TokenizeRequest`, then its
/// check that exactly one of `prompt` and `messages` is given.
async fn read_tokenize(
    shared: &Shared,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Option<String>, Input, bool), ApiError> {
    let parsed = read(shared, body).await?;
    require_json(headers).map_err(|e| ApiError::bad(e.message, Some("header.content-type")))?;
    let mut f = parsed?;
    let light = f.1;
    let model = f.defaulted_str("model")?;
    let prompt = match f.0.remove("prompt") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(Prompt::One(s)),
        Some(Json::Array(items)) => {
            let mut all = Vec::with_capacity(items.len());
            for (i, v) in items.into_iter().enumerate() {
                match v {
                    Json::String(s) => all.push(s),
                    _ => return Err(body::wrong(&format!("prompt.{i}"), "a valid string")),
                }
            }
            Some(Prompt::Many(all))
        }
        Some(_) => return Err(body::wrong("prompt", "a valid string or list of strings")),
    };
    let messages = match f.0.remove("messages") {
        None | Some(Json::Null) => None,
        Some(Json::Array(items)) => Some(
            (items.iter().enumerate())
                .map(|(i, m)| dumped(i, m))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => return Err(body::wrong("messages", "a valid list")),
    };
    let tools = f.opt_list("tools")?;
    for (i, t) in tools.iter().flatten().enumerate() {
        if tool_name(t).is_none() {
            return Err(body::invalid(&format!("tools.{i}.function.name"), "Field required"));
        }
    }
    let tool_choice = match f.0.remove("tool_choice") {
        None | Some(Json::Null) => None,
        Some(v) => Some(tool_choice(&v)?),
    };
    let reasoning_effort = match f.0.remove("reasoning_effort") {
        None | Some(Json::Null) => None,
        Some(v) => Some(reasoning_effort(&v)?),
    };
    let continue_final_message = f.bool("continue_final_message", false, false)?;
    let template_kwargs = f.opt_object("chat_template_kwargs")?;
    let special_given = f.has("add_special_tokens");
    let add_special_tokens = f.bool("add_special_tokens", true, false)?;
    let add_generation_prompt = f.opt_bool("add_generation_prompt")?;
    let input = match (prompt, messages) {
        (Some(prompt), None) => Input::Prompt(prompt, add_special_tokens),
        (None, Some(messages)) => {
            // `ChatCompletionRequest`'s defaults: no `tool_choice` is "none" without tools, else
            // "auto" (`set_tool_choice_default`).
            let tool_choice = tool_choice.unwrap_or_else(|| {
                if tools.is_none() && !messages.iter().any(hosts_tools) {
                    ToolChoice::None
                } else {
                    ToolChoice::Auto
                }
            });
            let mut template_kwargs = template_kwargs.unwrap_or_default();
            // `normalize_reasoning_inputs`: an effort turns thinking on unless it is "none".
            if let Some(effort) = &reasoning_effort {
                let thinking = Json::Bool(effort != "none");
                for key in ["thinking", "enable_thinking"] {
                    template_kwargs.entry(key).or_insert_with(|| thinking.clone());
                }
            }
            Input::Chat(ChatRequest {
                messages,
                tools,
                tool_choice,
                reasoning_effort,
                continue_final_message,
                template_kwargs,
                add_special_tokens: add_generation_prompt.is_some() && special_given && add_special_tokens,
                add_generation_prompt,
            })
        }
        _ => {
            return Err(ApiError::bad(
                "Value error, Exactly one of 'prompt' or 'messages' must be provided.",
                Some("body"),
            ))
        }
    };
    Ok((model, input, light))
}

/// `tool_choice` as `Union[ToolChoice, Literal["auto", "required", "none"]]` validates it.
fn tool_choice(v: &Json) -> Result<ToolChoice, ApiError> {
    let refused = || body::wrong("tool_choice", "a valid dictionary or instance of ToolChoice");
    match v {
        Json::String(s) => match s.as_str() {
            "auto" => Ok(ToolChoice::Auto),
            "required" => Ok(ToolChoice::Required),
            "none" => Ok(ToolChoice::None),
            _ => Err(refused()),
        },
        Json::Object(o) => {
            if o.get("type").is_some_and(|t| t != "function") {
                return Err(body::wrong("tool_choice.type", "'function'"));
            }
            match o.get("function") {
                Some(Json::Object(f)) => match f.get("name") {
                    None | Some(Json::Null) => Ok(ToolChoice::Named(None)),
                    Some(Json::String(n)) => Ok(ToolChoice::Named(Some(n.clone()))),
                    Some(_) => Err(body::wrong("tool_choice.function.name", "a valid string")),
                },
                None => Err(body::invalid("tool_choice.function", "Field required")),
                Some(_) => Err(body::wrong("tool_choice.function", "a valid dictionary")),
            }
        }
        _ => Err(refused()),
    }
}

/// The tiers of `reasoning_effort`.
const EFFORT_TIERS: [&str; 8] = ["none", "minimal", "low", "medium", "high", "xhigh", "ultra", "max"];

/// `reasoning_effort`: a tier, or a number from 0 to 0.99 (pydantic's lax float).
fn reasoning_effort(v: &Json) -> Result<Json, ApiError> {
    if let Some(tier) = v.as_str().filter(|s| EFFORT_TIERS.contains(s)) {
        return Ok(json!(tier));
    }
    let x = body::lax_f64(v).map_err(|m| body::invalid("reasoning_effort", m))?;
    if !x.is_finite() {
        return Err(body::invalid("reasoning_effort", "Input should be a finite number"));
    }
    if !(0.0..=0.99).contains(&x) {
        let bound = if x < 0.0 {
            "greater than or equal to 0"
        } else {
            "less than or equal to 0.99"
        };
        return Err(body::invalid("reasoning_effort", &format!("Input should be {bound}")));
    }
    Ok(json!(x))
}

/// The name of a tool (`function.name`).
fn tool_name(tool: &Json) -> Option<&str> {
    tool.get("function")?.get("name")?.as_str()
}

/// The roles of `ChatCompletionMessageGenericParam`, matched in any case and lowercased.
const GENERIC_ROLES: [&str; 7] = [
    "system",
    "assistant",
    "tool",
    "function",
    "developer",
    "latest_reminder",
    "root",
];

/// The roles whose `tools` join the request's (`_effective_tools`).
const TOOL_HOSTS: [&str; 3] = ["root", "system", "developer"];

/// The content part types of `ChatCompletionMessageContentPart`.
const PART_TYPES: [&str; 8] = [
    "text",
    "thinking",
    "reasoning",
    "image_url",
    "video_url",
    "audio_url",
    "input_audio",
    "tool_reference",
];

/// A field of a dumped message.
fn field<'m>(m: &'m Map<String, Json>, key: &str) -> &'m Json {
    m.get(key).unwrap_or(&Json::Null)
}

/// Whether a dumped message brings tools of its own.
fn hosts_tools(m: &Map<String, Json>) -> bool {
    TOOL_HOSTS.contains(&field(m, "role").as_str().unwrap_or_default())
        && chatfmt::json_input::py_truthy(field(m, "tools"))
}

/// A message as SGLang's request models validate it and `model_dump()` writes it: a user message
/// (role exactly `user`) as `{role, content}`; any other as `ChatCompletionMessageGenericParam`'s
/// fields in their order, the role lowercased, unknown fields dropped and tool calls with their
/// defaults.
fn dumped(i: usize, m: &Json) -> Result<Map<String, Json>, ApiError> {
    let here = |field: &str| format!("messages.{i}.{field}");
    let Json::Object(obj) = m else {
        return Err(body::wrong(&format!("messages.{i}"), "a valid dictionary"));
    };
    let role = match obj.get("role") {
        Some(Json::String(r)) => r,
        None => return Err(body::invalid(&here("role"), "Field required")),
        Some(_) => return Err(body::invalid(&here("role"), "Value error, 'role' must be a string")),
    };
    let content = obj.get("content").unwrap_or(&Json::Null);
    let mut out = Map::new();
    if role == "user" {
        if content.is_null() {
            return Err(body::wrong(&here("content"), "a valid string"));
        }
        out.insert("role".into(), json!("user"));
        out.insert("content".into(), checked_content(i, content, false)?);
        return Ok(out);
    }
    let role = role.to_lowercase();
    if !GENERIC_ROLES.contains(&role.as_str()) {
        return Err(body::invalid(
            &here("role"),
            "Value error, 'role' must be one of 'system', 'assistant', 'tool', 'function', 'developer', \
             'latest_reminder', 'root' (case-insensitive).",
        ));
    }
    let assistant = role == "assistant";
    out.insert("role".into(), Json::String(role));
    out.insert("content".into(), checked_content(i, content, assistant)?);
    for key in ["tool_call_id", "name", "phase", "reasoning_content"] {
        let v = obj.get(key).cloned().unwrap_or(Json::Null);
        let valid = match key {
            "phase" => v.is_null() || v == "commentary" || v == "final_answer",
            _ => v.is_null() || v.is_string(),
        };
        if !valid {
            return Err(body::wrong(&here(key), "a valid string"));
        }
        out.insert(key.into(), v);
    }
    let tool_calls = match obj.get("tool_calls") {
        None | Some(Json::Null) => Json::Null,
        Some(Json::Array(calls)) => Json::Array(
            (calls.iter().enumerate())
                .map(|(k, c)| dumped_tool_call(&here(&format!("tool_calls.{k}")), c))
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => return Err(body::wrong(&here("tool_calls"), "a valid list")),
    };
    out.insert("tool_calls".into(), tool_calls);
    // Tools render as sent (docs/INTERFACES.md), these too.
    let tools = match obj.get("tools") {
        None | Some(Json::Null) => Json::Null,
        Some(t @ Json::Array(_)) => t.clone(),
        Some(_) => return Err(body::wrong(&here("tools"), "a valid list")),
    };
    out.insert("tools".into(), tools);
    let prefix = match obj.get("prefix") {
        None | Some(Json::Null) => Json::Null,
        Some(v) => Json::Bool(body::lax_bool(v).map_err(|m| body::invalid(&here("prefix"), m))?),
    };
    out.insert("prefix".into(), prefix);
    Ok(out)
}

/// A message's content: a string, a list of content parts, or (not for a user message) `null`.
fn checked_content(i: usize, content: &Json, assistant: bool) -> Result<Json, ApiError> {
    let here = format!("messages.{i}.content");
    let Json::Array(parts) = content else {
        return match content {
            Json::String(_) | Json::Null => Ok(content.clone()),
            _ => Err(body::wrong(&here, "a valid string")),
        };
    };
    for (k, part) in parts.iter().enumerate() {
        let at = format!("{here}.{k}");
        let kind = part.get("type").and_then(Json::as_str).unwrap_or_default();
        if !PART_TYPES.contains(&kind) {
            return Err(body::invalid(
                &format!("{at}.type"),
                &format!(
                    "Input should be one of {}",
                    PART_TYPES.map(|t| format!("'{t}'")).join(", ")
                ),
            ));
        }
        let text = part.get("text");
        match kind {
            "text" if !text.is_some_and(Json::is_string) => {
                return Err(body::wrong(&format!("{at}.text"), "a valid string"))
            }
            "thinking" | "reasoning" if !assistant => {
                return Err(body::invalid(
                    &at,
                    "Value error, thinking content parts are only valid in assistant messages",
                ))
            }
            "thinking" | "reasoning"
                if part.get("thinking").is_some_and(|t| !t.is_null()) == text.is_some_and(|t| !t.is_null()) =>
            {
                return Err(body::invalid(
                    &at,
                    "Value error, thinking parts require exactly one of 'thinking' or 'text'",
                ))
            }
            _ => {}
        }
    }
    Ok(content.clone())
}

/// A tool call as `ToolCall.model_dump()` writes it: `{id, index, type, function: {name,
/// arguments}}`, absent fields `null` (and `type` `"function"`).
fn dumped_tool_call(at: &str, call: &Json) -> Result<Json, ApiError> {
    let Json::Object(c) = call else {
        return Err(body::wrong(at, "a valid dictionary"));
    };
    let id = c.get("id").cloned().unwrap_or(Json::Null);
    if !(id.is_null() || id.is_string()) {
        return Err(body::wrong(&format!("{at}.id"), "a valid string"));
    }
    let index = match c.get("index") {
        None | Some(Json::Null) => Json::Null,
        Some(v) => json!(body::lax_int(v).map_err(|m| body::invalid(&format!("{at}.index"), m))?),
    };
    if c.get("type").is_some_and(|t| t != "function") {
        return Err(body::wrong(&format!("{at}.type"), "'function'"));
    }
    let f = match c.get("function") {
        Some(Json::Object(f)) => f,
        None => return Err(body::invalid(&format!("{at}.function"), "Field required")),
        Some(_) => return Err(body::wrong(&format!("{at}.function"), "a valid dictionary")),
    };
    let name = f.get("name").cloned().unwrap_or(Json::Null);
    if !(name.is_null() || name.is_string()) {
        return Err(body::wrong(&format!("{at}.function.name"), "a valid string"));
    }
    let arguments = f.get("arguments").cloned().unwrap_or(Json::Null);
    if !matches!(arguments, Json::Null | Json::String(_) | Json::Object(_)) {
        return Err(body::wrong(&format!("{at}.function.arguments"), "a valid string"));
    }
    Ok(json!({"id": id, "index": index, "type": "function", "function": {"name": name, "arguments": arguments}}))
}

/// The ids of a `messages` request: SGLang's `_tokenize_chat_request` on a Jinja template.
fn chat_ids(model: &Arc<Model>, shared: &Shared, chat: ChatRequest) -> Result<Vec<u32>, ApiError> {
    check_request(&chat)?;
    if chat.add_generation_prompt == Some(false) && chat.continue_final_message {
        return Err(ApiError::bad(
            "continue_final_message needs add_generation_prompt to open the assistant turn.",
            None,
        ));
    }
    let effective = effective_tools(&chat);
    let tools = match &chat.tool_choice {
        _ if effective.is_empty() => None,
        ToolChoice::None => None,
        ToolChoice::Named(name) => {
            let named: Vec<Json> = (chat.tools.iter().flatten())
                .filter(|t| tool_name(t) == name.as_deref())
                .cloned()
                .collect();
            (!named.is_empty()).then_some(named)
        }
        ToolChoice::Auto | ToolChoice::Required => chat.tools.clone().filter(|t| !t.is_empty()),
    };
    let mut template_kwargs = Map::new();
    if let Some(effort) = &chat.reasoning_effort {
        template_kwargs.insert("reasoning_effort".into(), effort.clone());
    }
    template_kwargs.extend(chat.template_kwargs);
    let mut messages = Vec::with_capacity(chat.messages.len());
    for mut m in chat.messages {
        parse_tool_call_arguments(&mut m)?;
        messages.push(m);
    }
    let mut request = Chat {
        messages: Vec::new(),
        tools: tools.map(Json::Array),
        documents: None,
        add_generation_prompt: chat.add_generation_prompt != Some(false),
        continue_final_message: None,
        chat_template: None,
        kwargs: template_kwargs,
    };
    request.bind_kwargs(kwargs::Rule::Sglang, kwargs::Given::default())?;
    request.kwargs = model.tokenizing_kwargs(request.kwargs)?;
    let mut prepared = Prepared::new(Arc::clone(model), &shared.cache, request, WithoutTemplate::Sglang)?;
    let format = model.sglang_content_format(&prepared.opts);
    let mut messages: Vec<Json> = (messages.into_iter())
        .map(|m| Json::Object(for_template(m, format)))
        .collect();
    let mut prefix = None;
    if chat.add_generation_prompt.is_none() || chat.continue_final_message {
        prefix = last_assistant(&mut messages, chat.continue_final_message);
    }
    prepared.messages = messages;
    let mut ids = match prepared.token_ids(chat.add_special_tokens) {
        Ok(ids) => ids,
        // A template that fails on OpenAI's tool wrappers gets the functions alone.
        Err(_) if prepared.opts.tools.is_some() => {
            if let Some(Json::Array(tools)) = &mut prepared.opts.tools {
                for t in tools.iter_mut() {
                    if let Some(function) = t.get("function") {
                        *t = function.clone();
                    }
                }
            }
            prepared.token_ids(chat.add_special_tokens)?
        }
        Err(e) => return Err(e),
    };
    if let Some(prefix) = prefix.filter(|p| !p.is_empty()) {
        ids.extend(prefix_ids(model, &prefix)?);
    }
    Ok(ids)
}

/// SGLang's `_validate_request` of a chat request, as far as it concerns a render.
fn check_request(chat: &ChatRequest) -> Result<(), ApiError> {
    let bad = |m: &str| Err(ApiError::bad(m, None));
    if chat.messages.is_empty() {
        return bad("Messages cannot be empty.");
    }
    if chat.template_kwargs.contains_key("chat_template") {
        return bad("Request-supplied chat_template is not allowed. Start the server with \
             --trust-request-chat-template to permit it.");
    }
    // chatfmt renders text, as SGLang does for a model it does not serve as multimodal.
    let media = (chat.messages.iter())
        .filter_map(|m| field(m, "content").as_array())
        .flatten()
        .filter_map(|p| p["type"].as_str())
        .find_map(|t| match t {
            "image_url" | "video_url" | "audio_url" => Some(t),
            "input_audio" => Some("audio_url"),
            _ => None,
        });
    if let Some(t) = media {
        return bad(&format!(
            "Model only supports text input; received unsupported content type '{t}'."
        ));
    }
    let effective = effective_tools(chat);
    match &chat.tool_choice {
        ToolChoice::Required if effective.is_empty() => {
            return bad("Tools cannot be empty if tool choice is set to required.")
        }
        ToolChoice::Named(_) if effective.is_empty() => {
            return bad("Tools cannot be empty if tool choice is set to a specific tool.")
        }
        ToolChoice::Named(name) if !effective.iter().any(|t| tool_name(t) == name.as_deref()) => {
            return bad(&format!(
                "Tool '{}' not found in tools list.",
                name.as_deref().unwrap_or("None")
            ))
        }
        _ => {}
    }
    if chat.messages.iter().any(hosts_tools) {
        let mut names: Vec<Option<&str>> = effective.iter().map(|t| tool_name(t)).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        if names.len() != n {
            return bad("Tool names must be unique across request and message tools.");
        }
    }
    Ok(())
}

/// The request's tools and those of its system, developer and root messages.
fn effective_tools(chat: &ChatRequest) -> Vec<&Json> {
    let hosted = (chat.messages.iter())
        .filter(|m| hosts_tools(m))
        .filter_map(|m| field(m, "tools").as_array())
        .flatten();
    chat.tools.iter().flatten().chain(hosted).collect()
}

/// An assistant message's tool-call `arguments` given as a string, parsed into the object it
/// spells (`normalize_assistant_tool_call_arguments`, strict).
fn parse_tool_call_arguments(m: &mut Map<String, Json>) -> Result<(), ApiError> {
    if field(m, "role") != "assistant" {
        return Ok(());
    }
    let Some(Json::Array(calls)) = m.get_mut("tool_calls") else {
        return Ok(());
    };
    for call in calls {
        let Some(Json::String(text)) = call.pointer("/function/arguments") else {
            continue;
        };
        let parsed = match serde_json::from_str::<Json>(text) {
            Ok(v @ Json::Object(_)) => v,
            Ok(_) => {
                return Err(ApiError::bad(
                    "Assistant tool call function.arguments must be a JSON object.",
                    None,
                ))
            }
            Err(_) => {
                return Err(ApiError::bad(
                    "Assistant tool call function.arguments must be valid JSON.",
                    None,
                ))
            }
        };
        call["function"]["arguments"] = parsed;
    }
    Ok(())
}

/// A dumped message as the template gets it: `null` content as `""`, `null` fields dropped, a
/// content part list in `format` (`process_content_for_template_format`), and a tool message's
/// text parts joined with spaces (`normalize_tool_content`).
fn for_template(m: Map<String, Json>, format: ContentFormat) -> Map<String, Json> {
    let mut out: Map<String, Json> = (m.into_iter())
        .filter_map(|(k, v)| match (k.as_str(), v) {
            ("content", Json::Null) => Some((k, json!(""))),
            (_, Json::Null) => None,
            (_, v) => Some((k, v)),
        })
        .collect();
    let Some(Json::Array(parts)) = out.get("content") else {
        return out;
    };
    let is_text = |p: &Json| p["type"] == "text";
    let content = match format {
        ContentFormat::String => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| is_text(p))
                .filter_map(|p| p["text"].as_str())
                .collect();
            json!(texts.join(" "))
        }
        ContentFormat::OpenAi => {
            let kept: Vec<Json> = (parts.iter())
                .filter_map(|p| match p["type"].as_str() {
                    Some("text") => Some(json!({"type": "text", "text": p["text"]})),
                    Some("tool_reference") => Some(json!({"type": "tool_reference", "name": p["name"]})),
                    _ => None,
                })
                .collect();
            // The content moves to the end of the message, as SGLang rebuilds it.
            out.shift_remove("content");
            if field(&out, "role") == "tool" && kept.iter().all(is_text) {
                let texts: Vec<&str> = kept.iter().filter_map(|p| p["text"].as_str()).collect();
                json!(texts.join(" "))
            } else {
                json!(kept)
            }
        }
    };
    out.insert("content".into(), content);
    out
}

/// SGLang's `_handle_last_assistant_message`: a last assistant message with string content is
/// taken out when continued (its content returned, to be encoded after the prompt) and otherwise
/// replaced by a user message of that content.
fn last_assistant(messages: &mut Vec<Json>, continued: bool) -> Option<String> {
    let last = messages.last()?;
    let content = last["content"]
        .as_str()
        .filter(|_| last["role"] == "assistant")?
        .to_string();
    if continued {
        messages.pop();
        Some(content)
    } else {
        *messages.last_mut()? = json!({"role": "user", "content": content});
        None
    }
}

/// The ids of a continued message's content: `tokenizer.encode(content)`, a leading BOS dropped
/// (`_append_assistant_prefix_to_prompt_ids`).
fn prefix_ids(model: &Model, prefix: &str) -> Result<Vec<u32>, ApiError> {
    let tokenizer = model.tokenizer()?;
    let mut ids = (tokenizer.encode_text(prefix, true, false)).map_err(|e| ApiError::tokenize(&e, false))?;
    let bos = (tokenizer.special_tokens().get("bos_token"))
        .and_then(Json::as_str)
        .and_then(|t| tokenizer.token_to_id(t));
    if bos.is_some() && ids.first().copied() == bos {
        ids.remove(0);
    }
    Ok(ids)
}

/// SGLang's `POST /v1/detokenize {tokens, skip_special_tokens=true}` -> `{text}`; a list of lists
/// gives a list of texts.
pub async fn detokenize(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Answer {
    let (model, lists, nested, skip, light) = read_detokenize(&shared, &headers, body)
        .await
        .map_err(|e| e.shaped(Shape::SglangValidation))?;
    let model = sglang_model(&shared, model).map_err(|e| e.shaped(Shape::SglangHandler))?;
    let texts = shared
        .pool
        .run(light, move || {
            let tokenizer = model.tokenizer()?;
            (lists.iter())
                .map(|ids| {
                    tokenizer
                        .decode_as_transformers(ids, skip)
                        .map_err(|e| ApiError::tokenize(&e, false))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .map_err(|e| e.shaped(Shape::SglangHandler))?;
    let text = if nested {
        json!(texts)
    } else {
        json!(texts.into_iter().next().unwrap_or_default())
    };
    Ok(JsonAnswer(json!({ "text": text })))
}

/// The detokenize request type of [`read_detokenize`]: model, lists of ids, whether they were
/// nested, `skip_special_tokens`, whether the request is light.
type Detokenize = (Option<String>, Vec<Vec<u32>>, bool, bool, bool);

/// The body of `/v1/detokenize`, as `DetokenizeRequest` validates it.
async fn read_detokenize(shared: &Shared, headers: &HeaderMap, body: Body) -> Result<Detokenize, ApiError> {
    let parsed = read(shared, body).await?;
    require_json(headers).map_err(|e| ApiError::bad(e.message, Some("header.content-type")))?;
    let mut f: Fields = parsed?;
    let light = f.1;
    let model = f.defaulted_str("model")?;
    let Json::Array(items) = f.required("tokens")? else {
        return Err(body::wrong("tokens", "a valid list"));
    };
    let nested = matches!(items.first(), Some(Json::Array(_)));
    let lists: Vec<Vec<u32>> = if nested {
        (items.iter().enumerate())
            .map(|(i, v)| match v {
                Json::Array(ids) => body::ids_of(&format!("tokens.{i}"), ids, true),
                _ => Err(body::wrong(&format!("tokens.{i}"), "a valid list")),
            })
            .collect::<Result<_, _>>()?
    } else {
        vec![body::ids_of("tokens", &items, true)?]
    };
    let skip = f.bool("skip_special_tokens", true, false)?;
    Ok((model, lists, nested, skip, light))
}
