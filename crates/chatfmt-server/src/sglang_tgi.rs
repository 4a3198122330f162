//! SGLang's `POST /v1/tokenize` and `POST /v1/detokenize`, and TGI's `POST /chat_tokenize`.

use crate::answer::JsonAnswer;
use crate::api::ApiError;
use crate::app::Shared;
use crate::body::{self, Fields};
use crate::models::Model;
use crate::routes::{read, require_json, Answer};
use crate::work::ChatFields;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;

/// SGLang's `model` (`"default"` when omitted, `null` refused): a served name, or the only model
/// for `"default"` when no model has that name.
fn sglang_model(shared: &Shared, name: Option<String>) -> Result<Arc<Model>, ApiError> {
    let name = name.filter(|n| n != DEFAULT_MODEL || shared.models.all().iter().any(|m| m.name == *n));
    shared.models.get(name.as_deref())
}

/// SGLang's default `model`.
const DEFAULT_MODEL: &str = "default";

/// SGLang's prompt: one string, or several (then `tokens` and `count` are lists).
enum Prompt {
    One(String),
    Many(Vec<String>),
}

/// SGLang's `POST /v1/tokenize {prompt | messages, ...}` -> `{tokens, count, max_model_len}`.
pub async fn tokenize(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Answer {
    let parsed = read(&shared, body).await?;
    require_json(&headers)?;
    let mut f = parsed?;
    let light = f.1;
    // The fields in the order of SGLang's `TokenizeRequest`, then its check of them.
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
    let messages = match f.0.get("messages") {
        None | Some(Json::Null) => None,
        Some(_) => Some(f.messages()?),
    };
    let tools = f.opt_list("tools")?;
    let continue_final_message = f.bool("continue_final_message", false, false)?;
    let template_kwargs = f.opt_object("chat_template_kwargs")?.unwrap_or_default();
    let special_given = f.has("add_special_tokens");
    let add_special_tokens = f.bool("add_special_tokens", true, false)?;
    let given = f.opt_bool("add_generation_prompt")?;
    if prompt.is_some() == messages.is_some() {
        return Err(ApiError::bad(
            "Value error, Exactly one of 'prompt' or 'messages' must be provided.",
            Some("body"),
        ));
    }
    let model = sglang_model(&shared, model)?;
    let max_model_len = model.tokenizer_max_length;
    let (tokens, count) = match prompt {
        Some(prompt) => {
            shared
                .pool
                .run(light, move || {
                    let tokenizer = model.tokenizer()?;
                    let encode = |t: &str| {
                        tokenizer
                            .encode_text(t, add_special_tokens, false)
                            .map_err(|e| ApiError::tokenize(&e, false))
                    };
                    Ok(match prompt {
                        Prompt::One(t) => {
                            let ids = encode(&t)?;
                            let n = ids.len();
                            (json!(ids), json!(n))
                        }
                        Prompt::Many(all) => {
                            let ids = all.iter().map(|t| encode(t)).collect::<Result<Vec<_>, _>>()?;
                            let counts: Vec<usize> = ids.iter().map(Vec::len).collect();
                            (json!(ids), json!(counts))
                        }
                    })
                })
                .await?
        }
        None => {
            // Omitted, the messages render as for a chat completion: the assistant turn opens unless
            // the last message is continued, and the template alone adds special tokens.
            let add_generation_prompt = given.unwrap_or(!continue_final_message);
            if given == Some(false) && continue_final_message {
                return Err(ApiError::bad(
                    "continue_final_message needs add_generation_prompt to open the assistant turn.",
                    None,
                ));
            }
            let chat = ChatFields {
                messages: messages.unwrap_or_default(),
                tools,
                documents: None,
                add_generation_prompt,
                continue_final_message,
                add_special_tokens: given.is_some() && special_given && add_special_tokens,
                chat_template: None,
                template_kwargs,
            };
            let cache = Arc::clone(&shared);
            shared
                .pool
                .run(light, move || {
                    let ids = chat.token_ids(model, &cache.cache)?;
                    let n = ids.len();
                    Ok((json!(ids), json!(n)))
                })
                .await?
        }
    };
    Ok(JsonAnswer(
        json!({"tokens": tokens, "count": count, "max_model_len": max_model_len}),
    ))
}

/// SGLang's `POST /v1/detokenize {tokens, skip_special_tokens=true}` -> `{text}`; a list of lists
/// gives a list of texts.
pub async fn detokenize(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Answer {
    let parsed = read(&shared, body).await?;
    require_json(&headers)?;
    let mut f = parsed?;
    let light = f.1;
    let model = f.defaulted_str("model")?;
    let tokens = f.required("tokens")?;
    let Json::Array(items) = tokens else {
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
    let model = sglang_model(&shared, model)?;
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
        .await?;
    let text = if nested {
        json!(texts)
    } else {
        json!(texts.into_iter().next().unwrap_or_default())
    };
    Ok(JsonAnswer(json!({ "text": text })))
}

/// TGI's `POST /chat_tokenize {messages, tools?}` -> `{templated_text, tokenize_response: [{id,
/// text, start, stop}]}`: the prompt with the generation prompt, encoded without added special
/// tokens; `start` and `stop` are the byte offsets `tokenizers` reports and `text` those bytes of the
/// prompt, invalid UTF-8 replaced by U+FFFD (TGI's `encoding_to_tokens`, since v3.3.0).
pub async fn chat_tokenize(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Answer {
    let parsed = read(&shared, body).await?;
    require_json(&headers)?;
    let mut f: Fields = parsed?;
    let light = f.1;
    let model = shared.models.get(f.opt_str("model")?.as_deref())?;
    let messages = f.messages()?;
    let chat = ChatFields {
        messages,
        tools: f.opt_list("tools")?,
        documents: None,
        add_generation_prompt: true,
        continue_final_message: false,
        add_special_tokens: false,
        chat_template: None,
        template_kwargs: Map::new(),
    };
    let cache = Arc::clone(&shared);
    let out = shared
        .pool
        .run(light, move || {
            let tokenizer = model.tokenizer()?;
            let text = chat.prepare(Arc::clone(&model), &cache.cache)?.render()?;
            let ids = (tokenizer.encode_text(&text, false, false)).map_err(|e| ApiError::tokenize(&e, false))?;
            let offsets = tokenizer
                .byte_offsets(&text, &ids)
                .map_err(|e| ApiError::tokenize(&e, false))?;
            let tokens: Vec<Json> = (ids.iter().zip(offsets))
                .map(|(&id, (start, stop))| {
                    let bytes = text.as_bytes().get(start..stop.max(start)).unwrap_or_default();
                    json!({"id": id, "text": String::from_utf8_lossy(bytes), "start": start, "stop": stop})
                })
                .collect();
            Ok(json!({"tokenize_response": tokens, "templated_text": text}))
        })
        .await?;
    Ok(JsonAnswer(out))
}
