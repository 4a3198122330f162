//! The routes: vLLM's `/tokenize`, `/detokenize` and `/v1/models`; llama.cpp's `/apply-template`,
//! `/tokenize` and `/detokenize` (told apart from vLLM's by their fields); chatfmt's `/v1/render`;
//! `/health` and `/metrics`.

use crate::answer::{JsonAnswer, JsonBytes};
use crate::api::ApiError;
use crate::body::{self, Fields};
use crate::kwargs;
use crate::models::Model;
use crate::shared::Shared;
use crate::work::{Chat, ChatFields, MaskMode, Prepared, WithoutTemplate};
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;

pub(crate) type Answer = Result<JsonAnswer, ApiError>;

/// The work of vLLM's `/tokenize`: ids, and their strings when asked.
type TokenizeJob = Box<dyn FnOnce() -> Result<(Vec<u32>, Option<Vec<String>>), ApiError> + Send>;

/// The body, and whether it parsed as an object (routes shared by vLLM and llama.cpp look at its
/// fields before deciding on the `Content-Type`).
pub(crate) async fn read(shared: &Shared, body: Body) -> Result<Result<Fields, ApiError>, ApiError> {
    let bytes = body::read(body, shared.config.max_body_bytes).await?;
    Ok(body::object(&bytes))
}

pub(crate) fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    if body::is_json(headers) {
        Ok(())
    } else {
        Err(body::unsupported_media_type())
    }
}

/// The token strings of `ids` (transformers' `convert_ids_to_tokens`).
fn token_strs(model: &Model, ids: &[u32]) -> Result<Vec<String>, ApiError> {
    let tokenizer = model.tokenizer()?;
    Ok(ids
        .iter()
        .map(|&id| tokenizer.id_to_token(id).unwrap_or_default())
        .collect())
}

/// `POST /tokenize`: vLLM's (`prompt` or `messages`) or llama.cpp's (`content`).
pub async fn tokenize(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let parsed = read(&shared, body).await?;
    if matches!(&parsed, Ok(f) if f.has("content") && !f.has("prompt") && !f.has("messages")) {
        return llama_tokenize(&shared, parsed?).await.map(IntoResponse::into_response);
    }
    require_json(&headers)?;
    let mut f = parsed?;
    let light = f.1;
    let model = shared.models.get(f.opt_str("model")?.as_deref())?;
    let return_token_strs = f.bool("return_token_strs", false, true)?;
    let max_model_len = model.max_model_len;
    // vLLM validates the body against the union (completion form | chat form) in pydantic's smart
    // mode: with both `prompt` and `messages`, the form with more of its own fields given wins, the
    // completion form on a tie.
    let chat_only = CHAT_ONLY_FIELDS.iter().any(|k| f.has(k));
    let job: TokenizeJob = if f.has("messages") && (!f.has("prompt") || chat_only) {
        ChatFields::check_flags(&f)?;
        let chat = ChatFields::read(&mut f, false)?;
        let shared = Arc::clone(&shared);
        Box::new(move || {
            let ids = chat.token_ids(Arc::clone(&model), &shared.cache)?;
            let strs = return_token_strs.then(|| token_strs(&model, &ids)).transpose()?;
            Ok((ids, strs))
        })
    } else {
        let prompt = f.str("prompt")?;
        let add_special_tokens = f.bool("add_special_tokens", true, false)?;
        Box::new(move || {
            let ids = (model.tokenizer()?)
                .encode_text(&prompt, add_special_tokens, false)
                .map_err(|e| ApiError::tokenize(&e, false))?;
            let strs = return_token_strs.then(|| token_strs(&model, &ids)).transpose()?;
            Ok((ids, strs))
        })
    };
    let (ids, strs) = shared.pool.run(light, job).await?;
    let answer = VllmTokens {
        count: ids.len(),
        max_model_len,
        tokens: &ids,
        token_strs: strs.as_deref(),
    };
    Ok(JsonAnswer(answer).into_response())
}

/// The fields of vLLM's chat form of `/tokenize` that its completion form does not have, besides
/// `messages`.
const CHAT_ONLY_FIELDS: [&str; 7] = [
    "add_generation_prompt",
    "continue_final_message",
    "chat_template",
    "chat_template_kwargs",
    "media_io_kwargs",
    "mm_processor_kwargs",
    "tools",
];

/// vLLM's `/tokenize` answer, serialized from the ids themselves.
#[derive(Serialize)]
struct VllmTokens<'a> {
    count: usize,
    max_model_len: u64,
    tokens: &'a [u32],
    token_strs: Option<&'a [String]>,
}

/// llama.cpp's `POST /tokenize {content, add_special, parse_special, with_pieces}`.
async fn llama_tokenize(shared: &Arc<Shared>, mut f: Fields) -> Answer {
    let light = f.1;
    let content = f.str("content")?;
    let add_special = f.strict_bool("add_special", false)?;
    let parse_special = f.strict_bool("parse_special", true)?;
    let with_pieces = f.strict_bool("with_pieces", false)?;
    let model = shared.models.get(None)?;
    let tokens = shared
        .pool
        .run(light, move || {
            let tokenizer = model.tokenizer()?;
            let ids = tokenizer
                .encode_text(&content, add_special, !parse_special)
                .map_err(|e| ApiError::tokenize(&e, false))?;
            if !with_pieces {
                return Ok(json!(ids));
            }
            let pieces = ids
                .iter()
                .map(|&id| Ok(json!({"id": id, "piece": piece(&model, id)?})))
                .collect::<Result<Vec<_>, ApiError>>()?;
            Ok(Json::Array(pieces))
        })
        .await?;
    Ok(JsonAnswer(json!({ "tokens": tokens })))
}

/// A token's piece as llama.cpp's `/tokenize` shows it: a string when its bytes are UTF-8, else the
/// list of byte values.
fn piece(model: &Model, id: u32) -> Result<Json, ApiError> {
    Ok(match String::from_utf8(piece_bytes(model, id)?) {
        Ok(s) => Json::String(s),
        Err(e) => json!(e.into_bytes()),
    })
}

/// The bytes a token stands for, as llama.cpp's `common_token_to_piece` gives them: a byte-level
/// BPE token's bytes through GPT-2's byte table, a SentencePiece token with `▁` as a space (the
/// leading one too, which the decoder's `Strip` drops when the token is decoded alone), a
/// byte-fallback token `<0xHH>` as its byte, anything else (added tokens) as it decodes.
fn piece_bytes(model: &Model, id: u32) -> Result<Vec<u8>, ApiError> {
    let tokenizer = model.tokenizer()?;
    let text = tokenizer.decode(&[id]).map_err(|e| ApiError::tokenize(&e, false))?;
    let Some(token) = tokenizer.id_to_token(id) else {
        return Ok(text.into_bytes());
    };
    if let Some(byte) = fallback_byte(&token) {
        // The decoder turns it into that byte (U+FFFD when it is not UTF-8 on its own).
        if text == "\u{FFFD}" || text.as_bytes() == [byte] {
            return Ok(vec![byte]);
        }
    }
    if token.contains('\u{2581}') {
        let spaced = token.replace('\u{2581}', " ");
        if spaced.strip_prefix(' ').is_some_and(|rest| rest == text) || spaced == text {
            return Ok(spaced.into_bytes());
        }
    }
    if text.contains('\u{FFFD}') {
        if let Some(bytes) = byte_level_bytes(&token) {
            return Ok(bytes);
        }
    }
    Ok(text.into_bytes())
}

/// The byte of a SentencePiece byte-fallback token (`<0x0A>`).
fn fallback_byte(token: &str) -> Option<u8> {
    let hex = token.strip_prefix("<0x")?.strip_suffix('>')?;
    (hex.len() == 2).then(|| u8::from_str_radix(hex, 16).ok()).flatten()
}

/// The bytes of a byte-level BPE token string (GPT-2's mapping of bytes to printable characters).
fn byte_level_bytes(token: &str) -> Option<Vec<u8>> {
    token
        .chars()
        .map(|c| {
            let n = u32::from(c);
            let printable = |b: u32| (33..=126).contains(&b) || (161..=172).contains(&b) || (174..=255).contains(&b);
            if printable(n) {
                return u8::try_from(n).ok();
            }
            // The other bytes map, in order, to 256, 257, ...
            let k = n.checked_sub(256)?;
            (0u32..=255)
                .filter(|b| !printable(*b))
                .nth(k as usize)
                .and_then(|b| u8::try_from(b).ok())
        })
        .collect()
}

/// `POST /detokenize`: vLLM's (`{model, tokens}` -> `{prompt}`, the tokenizer's decoding) or
/// llama.cpp's (`{tokens}` -> `{content}`, its pieces joined); special tokens are kept.
pub async fn detokenize(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Answer {
    let parsed = read(&shared, body).await?;
    let vllm = !matches!(&parsed, Ok(f) if !f.has("model"));
    if vllm {
        require_json(&headers)?;
    }
    let mut f = parsed?;
    let light = f.1;
    let model = shared.models.get(f.opt_str("model")?.as_deref())?;
    let tokens = f.token_ids("tokens", vllm)?;
    let text = shared
        .pool
        .run(light, move || {
            if vllm {
                // vLLM answers `tokenizer.decode(tokens)`.
                return (model.tokenizer()?)
                    .decode_as_transformers(&tokens, false)
                    .map_err(|e| ApiError::tokenize(&e, false));
            }
            // llama.cpp's `tokens_to_str`: the pieces' bytes one after the other, invalid UTF-8
            // replaced as its JSON writer does.
            let mut bytes = Vec::new();
            for &id in &tokens {
                bytes.extend(piece_bytes(&model, id)?);
            }
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        })
        .await?;
    let key = if vllm { "prompt" } else { "content" };
    Ok(JsonAnswer(json!({ key: text })))
}

/// `GET /v1/models`: vLLM's model list.
pub async fn models(State(shared): State<Arc<Shared>>) -> JsonAnswer {
    let data: Vec<Json> = (shared.models.all().iter())
        .map(|m| {
            json!({
                "id": m.name,
                "object": "model",
                "created": m.created,
                "owned_by": "vllm",
                "root": m.source,
                "parent": null,
                "max_model_len": m.max_model_len,
                "permission": [{
                    "id": format!("modelperm-{}", m.name),
                    "object": "model_permission",
                    "created": m.created,
                    "allow_create_engine": false,
                    "allow_sampling": true,
                    "allow_logprobs": true,
                    "allow_search_indices": false,
                    "allow_view": true,
                    "allow_fine_tuning": false,
                    "organization": "*",
                    "group": null,
                    "is_blocking": false,
                }],
            })
        })
        .collect();
    JsonAnswer(json!({"object": "list", "data": data}))
}

/// What llama.cpp's `chat_template_kwargs` replace: its template engine sets the kwargs in the
/// context after `messages`, `tools` and `add_generation_prompt` (minja's `chat_template::apply`),
/// so a kwarg with one of those names is what the template reads. Each is `None` when not sent.
struct LlamaOverrides {
    messages: Option<Vec<Json>>,
    tools: Option<Option<Json>>,
    add_generation_prompt: Option<bool>,
}

/// Takes the kwargs that replace [`LlamaOverrides`]' inputs out of `kwargs`; a value the server
/// cannot pass as that input (a flag that is not a boolean, messages or tools that are not lists)
/// is a 400 naming it.
fn llama_overrides(kwargs: &mut Map<String, Json>) -> Result<LlamaOverrides, ApiError> {
    let param = |k: &str| format!("body.chat_template_kwargs.{k}");
    let messages =
        match kwargs.remove("messages") {
            None => None,
            Some(Json::Array(items)) if items.iter().all(Json::is_object) => Some(items),
            Some(_) => return Err(ApiError::bad(
                "chat_template_kwargs.messages replaces the messages the template reads: it must be a list of objects",
                Some(&param("messages")),
            )),
        };
    let tools = match kwargs.remove("tools") {
        None => None,
        Some(Json::Null) => Some(None),
        Some(list @ Json::Array(_)) => Some(Some(list)),
        Some(_) => {
            return Err(ApiError::bad(
                "chat_template_kwargs.tools replaces the request's tools: it must be a list or null",
                Some(&param("tools")),
            ))
        }
    };
    let add_generation_prompt = match kwargs.remove("add_generation_prompt") {
        None => None,
        Some(Json::Bool(b)) => Some(b),
        Some(_) => {
            return Err(ApiError::bad(
                "chat_template_kwargs.add_generation_prompt replaces the request's flag: it must be a boolean",
                Some(&param("add_generation_prompt")),
            ))
        }
    };
    Ok(LlamaOverrides {
        messages,
        tools,
        add_generation_prompt,
    })
}

/// llama.cpp's `POST /apply-template`: the prompt of a chat-completions body. A trailing assistant
/// message is continued (rendered after the generation prompt, as llama.cpp prefills); two trailing
/// assistant messages are refused.
pub async fn apply_template(State(shared): State<Arc<Shared>>, body: Body) -> Answer {
    let mut f = read(&shared, body).await??;
    let light = f.1;
    let model = shared.models.get(f.opt_str("model")?.as_deref())?;
    let mut messages = f.messages()?;
    let mut add_generation_prompt = f.strict_bool("add_generation_prompt", true)?;
    let tools = f.opt_list("tools")?.map(Json::Array);
    let mut kwargs = f.opt_object("chat_template_kwargs")?.unwrap_or_default();
    // llama.cpp's `common_chat_msgs_parse_oaicompat` (common/chat.cpp) takes string, array and null
    // content only.
    for (i, m) in messages.iter().enumerate() {
        if let Some(content) = m
            .get("content")
            .filter(|c| !matches!(c, Json::String(_) | Json::Array(_) | Json::Null))
        {
            return Err(ApiError::bad(
                format!(
                    "Failed to parse messages: Invalid 'content' type: expected string or array, got {content} \
                     (ref: https://github.com/ggml-org/llama.cpp/issues/8367)"
                ),
                Some(&format!("body.messages.{i}.content")),
            ));
        }
    }
    let is_assistant = |m: Option<&Json>| m.and_then(|m| m["role"].as_str()) == Some("assistant");
    let mut prefill = None;
    if is_assistant(messages.last()) {
        prefill = messages.pop();
        if is_assistant(messages.last()) {
            return Err(ApiError::bad(
                "Cannot have 2 or more assistant messages at the end of the list.",
                Some("body.messages"),
            ));
        }
        add_generation_prompt = true;
    }
    let prefill = prefill.map(|m| prefill_text(&m["content"]));
    let over = llama_overrides(&mut kwargs)?;
    let messages = over.messages.unwrap_or(messages);
    let tools = over.tools.unwrap_or(tools);
    let add_generation_prompt = over.add_generation_prompt.unwrap_or(add_generation_prompt);
    let shared2 = Arc::clone(&shared);
    let prompt = shared
        .pool
        .run(light, move || {
            let chat = Chat {
                messages,
                tools,
                documents: None,
                add_generation_prompt,
                continue_final_message: None,
                chat_template: None,
                kwargs,
            };
            let mut text = Prepared::new(model, &shared2.cache, chat, WithoutTemplate::ChatMl)?.render()?;
            text.push_str(&prefill.unwrap_or_default());
            Ok(text)
        })
        .await?;
    Ok(JsonAnswer(json!({ "prompt": prompt })))
}

/// The text of a prefilled assistant message: its string content, or its text parts joined.
fn prefill_text(content: &Json) -> String {
    match content {
        Json::String(s) => s.clone(),
        Json::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// The fields of `/v1/render`.
const RENDER_FIELDS: [&str; 10] = [
    "model",
    "messages",
    "tools",
    "documents",
    "add_generation_prompt",
    "continue_final_message",
    "chat_template",
    "chat_template_kwargs",
    "masks",
    "tokenize",
];

/// chatfmt's `POST /v1/render`: `chatfmt tokenize --json`'s object (or `render --json`'s with
/// `tokenize: false`) plus `model` and `stop`. Unknown fields are refused.
pub async fn render(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let parsed = read(&shared, body).await?;
    require_json(&headers)?;
    let mut f = parsed?;
    let light = f.1;
    if let Some(k) = f.0.keys().find(|k| !RENDER_FIELDS.contains(&k.as_str())) {
        return Err(ApiError::bad(
            format!(
                "Extra inputs are not permitted; the fields are {}",
                RENDER_FIELDS.join(", ")
            ),
            Some(&format!("body.{k}")),
        ));
    }
    let model = shared.models.get(f.opt_str("model")?.as_deref())?;
    let messages = f.messages()?;
    let set = |k: &str| !matches!(f.0.get(k), None | Some(Json::Null));
    let given = kwargs::Given {
        add_generation_prompt: set("add_generation_prompt"),
        continue_final_message: set("continue_final_message"),
    };
    let tools = f.opt_list("tools")?.map(Json::Array);
    let documents = f.opt_list("documents")?.map(Json::Array);
    let add_generation_prompt = f.strict_bool("add_generation_prompt", false)?;
    let continue_final_message = match f.0.remove("continue_final_message") {
        None | Some(Json::Bool(false)) | Some(Json::Null) => None,
        Some(Json::Bool(true)) => Some("content".to_string()),
        Some(Json::String(s)) => Some(s),
        Some(_) => {
            return Err(ApiError::bad(
                "Input should be a boolean or the name of the field to continue",
                Some("body.continue_final_message"),
            ))
        }
    };
    let chat_template = f.opt_str("chat_template")?;
    let template_kwargs = f.opt_object("chat_template_kwargs")?.unwrap_or_default();
    let mode = match f.opt_str("masks")? {
        None => MaskMode::Auto,
        Some(s) => MaskMode::parse(&s)
            .ok_or_else(|| ApiError::bad("Input should be 'auto', 'tags' or 'provenance'", Some("body.masks")))?,
    };
    let tokenize = f.strict_bool("tokenize", true)?;
    f.deny_rest()?;
    let shared2 = Arc::clone(&shared);
    let out = shared
        .pool
        .run(light, move || {
            let mut chat = Chat {
                messages,
                tools,
                documents,
                add_generation_prompt,
                continue_final_message,
                chat_template,
                kwargs: template_kwargs,
            };
            chat.bind_kwargs(kwargs::Rule::Binding, given)?;
            if tokenize {
                chat.kwargs = model.tokenizing_kwargs(chat.kwargs)?;
            }
            Prepared::new(model, &shared2.cache, chat, WithoutTemplate::Refuse)?.render_json(
                mode,
                tokenize,
                shared2.config.spans_timeout,
            )
        })
        .await?;
    Ok(JsonBytes(out).into_response())
}

/// `GET /health`.
pub async fn health() -> StatusCode {
    StatusCode::OK
}

/// `GET /metrics`: Prometheus text.
pub async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    let mut text = shared.metrics.render();
    text.push_str("# HELP chatfmt_template_cache_entries Compiled request templates kept.\n");
    text.push_str("# TYPE chatfmt_template_cache_entries gauge\n");
    text.push_str(&format!("chatfmt_template_cache_entries {}\n", shared.cache.len()));
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

/// Any other path.
pub async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

/// A known path with another method.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "method not allowed on this route",
    )
}
