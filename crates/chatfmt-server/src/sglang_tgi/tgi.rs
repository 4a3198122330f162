//! TGI's `POST /chat_tokenize` (text-generation-inference v3.3.7, router/src/server.rs
//! `get_chat_tokenize`): the body read as axum 0.7's `Json` extractor reads TGI's `ChatRequest`
//! (router/src/lib.rs), the prompt made as `ChatRequest::try_into_generate` and `ChatTemplate::apply`
//! make it (router/src/infer/chat_template.rs, tool_grammar.rs) and tokenized as
//! `encoding_to_tokens` reports it. The template renders with Jinja2's semantics, not minijinja's
//! (KNOWN_DIFFERENCES.md).

use crate::answer::JsonAnswer;
use crate::api::{ApiError, Shape};
use crate::body;
use crate::models::Model;
use crate::routes::Answer;
use crate::sglang_tgi::tgi_template::Template;
use crate::shared::Shared;
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use chatfmt::ApplyOptions;
use serde::Serializer;
use serde_json::{json, Value as Json};
use std::sync::Arc;

/// The tool prompt of a request that gives none or an empty one (lib.rs `default_tool_prompt`).
const DEFAULT_TOOL_PROMPT: &str = "\nGiven the functions available, please respond with a JSON for a function call \
    with its proper arguments that best answers the given prompt. Respond in the format {name: function name, \
    parameters: dictionary of argument name and its value}.Do not use variables.\n";

/// The request types of TGI's router, read as serde reads them there: the same fields, types,
/// defaults and names (serde's messages name them).
mod request {
    use super::{as_json_text, Json};
    use serde::{Deserialize, Serialize};

    #[derive(Deserialize)]
    pub struct ChatRequest {
        pub model: Option<String>,
        pub messages: Vec<Message>,
        #[serde(default, rename = "frequency_penalty")]
        pub _frequency_penalty: Option<f32>,
        #[serde(default, rename = "logit_bias")]
        pub _logit_bias: Option<Vec<f32>>,
        #[serde(default, rename = "logprobs")]
        pub _logprobs: Option<bool>,
        #[serde(default, rename = "top_logprobs")]
        pub _top_logprobs: Option<u32>,
        #[serde(default, rename = "max_tokens", alias = "max_completion_tokens")]
        pub _max_tokens: Option<u32>,
        #[serde(default, rename = "n")]
        pub _n: Option<u32>,
        #[serde(default, rename = "presence_penalty")]
        pub _presence_penalty: Option<f32>,
        #[serde(default, rename = "stop")]
        pub _stop: Option<Vec<String>>,
        #[serde(default, rename = "stream")]
        pub _stream: bool,
        #[serde(rename = "seed")]
        pub _seed: Option<u64>,
        #[serde(default, rename = "temperature")]
        pub _temperature: Option<f32>,
        #[serde(default, rename = "top_p")]
        pub _top_p: Option<f32>,
        #[serde(default)]
        pub tools: Option<Vec<Tool>>,
        #[serde(default)]
        pub tool_prompt: Option<String>,
        #[serde(default)]
        pub tool_choice: ToolChoice,
        #[serde(default)]
        pub response_format: Option<GrammarType>,
        #[serde(default, rename = "stream_options")]
        pub _stream_options: StreamOptions,
    }

    #[derive(Deserialize)]
    pub struct Message {
        pub role: String,
        #[serde(flatten)]
        pub body: MessageBody,
        #[serde(default, rename = "name")]
        pub _name: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    pub enum MessageBody {
        Content { content: MessageContent },
        Tool { tool_calls: Vec<ToolCall> },
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    pub enum MessageContent {
        SingleText(String),
        MultipleChunks(Vec<MessageChunk>),
    }

    #[derive(Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub enum MessageChunk {
        Text { text: String },
        ImageUrl { image_url: Url },
    }

    #[derive(Deserialize)]
    pub struct Url {
        pub url: String,
    }

    #[derive(Deserialize, Serialize)]
    pub struct ToolCall {
        pub id: String,
        pub r#type: String,
        pub function: FunctionDefinition,
    }

    /// A function; `arguments` (also read from `parameters`) is written as a JSON string.
    #[derive(Clone, Deserialize, Serialize)]
    pub struct FunctionDefinition {
        #[serde(default)]
        pub description: Option<String>,
        pub name: String,
        #[serde(alias = "parameters", serialize_with = "as_json_text")]
        pub arguments: Json,
    }

    #[derive(Clone, Deserialize, Serialize)]
    pub struct Tool {
        pub r#type: String,
        pub function: FunctionDefinition,
    }

    /// `tool_choice`: `null` and `"auto"` are `Auto`, any other string names a function.
    #[derive(Default, Deserialize)]
    #[serde(from = "ToolTypeDeserializer")]
    pub enum ToolChoice {
        #[default]
        Auto,
        NoTool,
        Required,
        Function(String),
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    pub enum ToolTypeDeserializer {
        Null,
        String(String),
        TypedChoice(TypedChoice),
    }

    #[derive(Deserialize)]
    #[serde(tag = "type")]
    pub enum TypedChoice {
        #[serde(rename = "function")]
        Function { function: FunctionName },
    }

    #[derive(Deserialize)]
    pub struct FunctionName {
        pub name: String,
    }

    impl From<ToolTypeDeserializer> for ToolChoice {
        fn from(value: ToolTypeDeserializer) -> Self {
            match value {
                ToolTypeDeserializer::Null => ToolChoice::Auto,
                ToolTypeDeserializer::String(s) => match s.as_str() {
                    "none" => ToolChoice::NoTool,
                    "auto" => ToolChoice::Auto,
                    "required" => ToolChoice::Required,
                    _ => ToolChoice::Function(s),
                },
                ToolTypeDeserializer::TypedChoice(TypedChoice::Function { function }) => {
                    ToolChoice::Function(function.name)
                }
            }
        }
    }

    /// `response_format`, only checked: with it the prompt has no tools.
    #[derive(Deserialize)]
    #[serde(tag = "type", content = "value")]
    #[expect(dead_code, reason = "the grammar is read only to check it as TGI does")]
    pub enum GrammarType {
        #[serde(rename = "json", alias = "json_object")]
        Json(Json),
        #[serde(rename = "regex")]
        Regex(String),
        #[serde(rename = "json_schema")]
        JsonSchema(JsonSchemaConfig),
    }

    #[derive(Deserialize)]
    #[expect(dead_code, reason = "the schema is read only to check it as TGI does")]
    pub struct JsonSchemaConfig {
        name: Option<String>,
        schema: Json,
    }

    #[derive(Default, Deserialize)]
    pub struct StreamOptions {
        #[serde(default, rename = "include_usage")]
        pub _include_usage: bool,
    }
}

use request::{ChatRequest, FunctionDefinition, Message, MessageBody, MessageChunk, MessageContent, Tool, ToolChoice};

/// A JSON value written as the JSON string of its compact text.
fn as_json_text<S: Serializer>(value: &Json, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&value.to_string())
}

/// An answer of axum's `Json` extractor: plain text.
fn text(status: StatusCode, message: String) -> ApiError {
    ApiError::new(status, "invalid_request_error", message).shaped(Shape::Text)
}

/// A TGI `InferError` (422): `Template error: ...` or `Tool error: ...`.
fn infer_error(kind: &'static str, message: String) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, kind, message)
}

/// Whether the `Content-Type` is JSON as axum's `Json` extractor decides: `application/json` or
/// `application/*+json`, parameters aside.
fn json_content_type(headers: &HeaderMap) -> bool {
    let mime = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<mime::Mime>().ok());
    mime.is_some_and(|m| {
        m.type_() == "application" && (m.subtype() == "json" || m.suffix().is_some_and(|s| s == "json"))
    })
}

/// The body as axum 0.7's `Json::<ChatRequest>` reads it: the `Content-Type` (415), the body
/// within the limit (413), the JSON (400) and its fields (422), each refused with its plain text.
/// Text after the JSON value is not read.
async fn read_request(shared: &Shared, headers: &HeaderMap, body: Body) -> Result<(ChatRequest, bool), ApiError> {
    if !json_content_type(headers) {
        return Err(text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Expected request with `Content-Type: application/json`".into(),
        ));
    }
    let bytes = body::read(body, shared.config.max_body_bytes).await.map_err(|e| {
        let reason = if e.status == StatusCode::PAYLOAD_TOO_LARGE {
            "length limit exceeded".to_string()
        } else {
            e.message
        };
        text(e.status, format!("Failed to buffer the request body: {reason}"))
    })?;
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    let request: ChatRequest = serde_path_to_error::deserialize(&mut de).map_err(|e| match e.inner().classify() {
        serde_json::error::Category::Data => text(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("Failed to deserialize the JSON body into the target type: {e}"),
        ),
        _ => text(
            StatusCode::BAD_REQUEST,
            format!("Failed to parse the request body as JSON: {e}"),
        ),
    })?;
    Ok((request, body::is_light(bytes.len())))
}

/// TGI's `POST /chat_tokenize {messages, tools?, tool_choice?, tool_prompt?, ...}` ->
/// `{tokenize_response: [{id, text, start, stop}], templated_text}`: the prompt as TGI makes it,
/// encoded without added special tokens; `start` and `stop` are the byte offsets `tokenizers`
/// reports and `text` those bytes of the prompt, invalid UTF-8 replaced by U+FFFD (TGI's
/// `encoding_to_tokens`, since v3.3.0).
pub async fn chat_tokenize(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Answer {
    let (request, light) = read_request(&shared, &headers, body).await?;
    let shared2 = Arc::clone(&shared);
    let out = shared
        .pool
        .run(light, move || {
            // TGI serves one model and reads `model` as a LoRA adapter's name, never looking it up.
            let model = shared2.models.lenient(request.model.as_deref())?;
            let text = prompt(&model, request)?;
            let tokenizer = model.tokenizer()?;
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
        .await
        .map_err(|e| e.shaped(Shape::Tgi))?;
    Ok(JsonAnswer(out))
}

/// The prompt of a request: `try_into_generate`'s choice of tools, then `ChatTemplate::apply`.
fn prompt(model: &Model, request: ChatRequest) -> Result<String, ApiError> {
    let tool_prompt = (request.tool_prompt)
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| DEFAULT_TOOL_PROMPT.to_string());
    let tools = match (request.response_format, request.tools) {
        (Some(_), Some(_)) => {
            return Err(infer_error(
                "tool_error",
                "Tool error: Grammar and tools are mutually exclusive".into(),
            ))
        }
        (None, Some(tools)) => tools_to_use(tools, request.tool_choice)?,
        _ => Vec::new(),
    };
    let template = model
        .tgi
        .get_or_init(|| {
            (model.has_template)
                .then(|| Template::of(&model.resolved.template))
                .flatten()
        })
        .as_ref()
        .ok_or_else(|| infer_error("template_error", "Template error: template not found".into()))?;
    let mut messages = request.messages;
    if !tools.is_empty() {
        let text = if template.reads_tools {
            format!("\n---\n{tool_prompt}")
        } else {
            let listed = serde_json::to_string(&tools).map_err(|e| crate::answer::internal(&e))?;
            format!("\n---\n{listed}\n{tool_prompt}")
        };
        if let Some(Message {
            body: MessageBody::Content { content },
            ..
        }) = messages.last_mut()
        {
            match content {
                MessageContent::SingleText(s) => s.push_str(&text),
                MessageContent::MultipleChunks(chunks) => chunks.push(MessageChunk::Text { text }),
            }
        }
    }
    let messages: Vec<(String, String)> = messages.into_iter().map(text_message).collect();
    let last = messages.last().cloned();
    // What minijinja sees: maps with their keys in order, as it stores them.
    let context: Vec<Json> = (messages.into_iter())
        .map(|(role, content)| json!({"content": content, "role": role}))
        .collect();
    let opts = ApplyOptions {
        add_generation_prompt: true,
        tools: (!tools.is_empty()).then(|| Json::Array(tools.iter().map(sorted_tool).collect())),
        ..ApplyOptions::default()
    };
    let mut text = (template.template.apply(&context, &opts))
        .map_err(|e| infer_error("template_error", format!("Template error: {}", e.message())))?
        .text;
    // A last assistant message is continued: the prompt is cut after its content (its last
    // occurrence), trailing whitespace trimmed.
    if let Some((_, content)) = last.filter(|(role, _)| role == "assistant") {
        if let Some(i) = text.rfind(&content) {
            text = text[..i + content.len()].trim_end().to_string();
        }
    }
    Ok(text)
}

/// `ToolGrammar::apply`'s tools: the one named, all of them (`required`), all of them and TGI's
/// `no_tool` function (`auto`), or none (`none`).
fn tools_to_use(tools: Vec<Tool>, choice: ToolChoice) -> Result<Vec<Tool>, ApiError> {
    Ok(match choice {
        ToolChoice::Function(name) => {
            let tool = tools.into_iter().find(|t| t.function.name == name);
            vec![tool.ok_or_else(|| infer_error("tool_error", format!("Tool error: Tool with name {name} not found")))?]
        }
        ToolChoice::Required => tools,
        ToolChoice::Auto => {
            let mut all = tools;
            all.push(Tool {
                r#type: "function".into(),
                function: FunctionDefinition {
                    description: Some("Open ended response with no specific tool selected".into()),
                    name: "no_tool".into(),
                    arguments: json!({"type": "object"}),
                },
            });
            all
        }
        ToolChoice::NoTool => Vec::new(),
    })
}

/// A message as TGI's `TextMessage` holds it: its role, and its content as one text (text chunks
/// joined, an image as `![](url)`; tool calls as their JSON).
fn text_message(m: Message) -> (String, String) {
    let content = match m.body {
        MessageBody::Content {
            content: MessageContent::SingleText(s),
        } => s,
        MessageBody::Content {
            content: MessageContent::MultipleChunks(chunks),
        } => (chunks.into_iter())
            .map(|c| match c {
                MessageChunk::Text { text } => text,
                MessageChunk::ImageUrl { image_url } => format!("![]({})", image_url.url),
            })
            .collect(),
        MessageBody::Tool { tool_calls } => serde_json::to_string(&tool_calls).unwrap_or_default(),
    };
    (m.role, content)
}

/// A tool as the template sees it: TGI's serialization, keys in order.
fn sorted_tool(t: &Tool) -> Json {
    let f = &t.function;
    json!({
        "function": {"arguments": f.arguments.to_string(), "description": f.description, "name": f.name},
        "type": t.r#type,
    })
}
