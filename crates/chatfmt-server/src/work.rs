//! What the worker threads do: choose the template (the model's, one of its named templates, or a
//! request template from the cache), render, tokenize, find masks, and shape the answers.

use crate::api::{ApiError, TEMPLATE_LIMIT};
use crate::body::Fields;
use crate::cache::TemplateCache;
use crate::kwargs;
use crate::models::Model;
use chatfmt::jinja::CodePoints;
use chatfmt::masks::stop_markers;
use chatfmt::{ApplyOptions, ChatTemplate, MaskSource, SpanOptions, TemplateInfo};
use chatfmt_tokenize::chat::{message_spans, tokenize_chats, ChatTokenizeOptions, MessageTokenSpans};
use chatfmt_tokenize::EncodeOptions;
use serde::Serialize;
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A conversation and the options of `apply_chat_template`.
pub struct Chat {
    pub messages: Vec<Json>,
    pub tools: Option<Json>,
    pub documents: Option<Json>,
    pub add_generation_prompt: bool,
    pub continue_final_message: Option<String>,
    /// A template name of the model, or template source.
    pub chat_template: Option<String>,
    /// Template variables; they override special tokens.
    pub kwargs: Map<String, Json>,
}

impl Chat {
    /// Moves the `chat_template_kwargs` that name `apply_chat_template`'s own arguments onto them
    /// (see [`kwargs`]).
    pub fn bind_kwargs(&mut self, rule: kwargs::Rule, given: kwargs::Given) -> Result<(), ApiError> {
        let args = kwargs::Arguments {
            tools: &mut self.tools,
            documents: &mut self.documents,
            chat_template: &mut self.chat_template,
            add_generation_prompt: &mut self.add_generation_prompt,
            continue_final_message: &mut self.continue_final_message,
        };
        kwargs::bind(&mut self.kwargs, args, rule, given)
    }
}

/// The rendering fields of a chat request, as vLLM names them.
pub struct ChatFields {
    pub messages: Vec<Json>,
    pub tools: Option<Vec<Json>>,
    pub documents: Option<Json>,
    pub add_generation_prompt: bool,
    pub continue_final_message: bool,
    /// Whether the tokenizer adds its special tokens on top of the template's.
    pub add_special_tokens: bool,
    pub chat_template: Option<String>,
    pub template_kwargs: Map<String, Json>,
}

impl ChatFields {
    /// vLLM's check, before any field is read, that `add_generation_prompt` and
    /// `continue_final_message` are not both given true (by their truthiness, as sent): a 400.
    /// (`continue_final_message` alone leaves the default generation prompt on, and the render
    /// refuses the pair as transformers does.)
    pub fn check_flags(f: &Fields) -> Result<(), ApiError> {
        let given_true = |k: &str| f.0.get(k).is_some_and(chatfmt::json_input::py_truthy);
        if given_true("add_generation_prompt") && given_true("continue_final_message") {
            return Err(ApiError::bad(
                "Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
                Some("body"),
            ));
        }
        Ok(())
    }

    /// vLLM's fields and defaults (`documents` only where its request model has them).
    pub fn read(f: &mut Fields, with_documents: bool) -> Result<ChatFields, ApiError> {
        let messages = f.messages()?;
        let add_generation_prompt = f.bool("add_generation_prompt", true, false)?;
        let continue_final_message = f.bool("continue_final_message", false, false)?;
        let documents = if with_documents {
            f.opt_list("documents")?.map(Json::Array)
        } else {
            None
        };
        Ok(ChatFields {
            messages,
            add_generation_prompt,
            continue_final_message,
            add_special_tokens: f.bool("add_special_tokens", false, false)?,
            chat_template: f.opt_str("chat_template")?,
            template_kwargs: f.opt_object("chat_template_kwargs")?.unwrap_or_default(),
            tools: f.opt_list("tools")?,
            documents,
        })
    }

    /// The template and options to render with: the model's special tokens, then the request's
    /// template variables.
    pub fn prepare(self, model: Arc<Model>, cache: &TemplateCache) -> Result<Prepared, ApiError> {
        let mut chat = Chat {
            messages: self.messages,
            tools: self.tools.map(Json::Array),
            documents: self.documents,
            add_generation_prompt: self.add_generation_prompt,
            continue_final_message: self.continue_final_message.then(|| "content".to_string()),
            chat_template: self.chat_template,
            kwargs: self.template_kwargs,
        };
        chat.bind_kwargs(kwargs::Rule::Vllm, kwargs::Given::default())?;
        chat.kwargs = model.tokenizing_kwargs(chat.kwargs)?;
        Prepared::new(model, cache, chat, WithoutTemplate::Vllm)
    }

    /// The prompt's ids, as `chatfmt tokenize`.
    pub fn token_ids(self, model: Arc<Model>, cache: &TemplateCache) -> Result<Vec<u32>, ApiError> {
        let add_special_tokens = self.add_special_tokens;
        self.prepare(model, cache)?.token_ids(add_special_tokens)
    }
}

/// Where assistant masks come from (`masks` of `/v1/render`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskMode {
    Tags,
    Provenance,
    Auto,
}

impl MaskMode {
    pub fn parse(s: &str) -> Option<MaskMode> {
        match s {
            "tags" => Some(MaskMode::Tags),
            "provenance" => Some(MaskMode::Provenance),
            "auto" => Some(MaskMode::Auto),
            _ => None,
        }
    }
}

/// What a chat route answers when the model has no chat template of its own (a base model) and
/// the request sends none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithoutTemplate {
    /// vLLM: its `ChatTemplateResolutionError`, a 400.
    Vllm,
    /// SGLang: transformers' `ValueError` from `apply_chat_template`, a 400.
    Sglang,
    /// llama.cpp: render with ChatML, its fallback.
    ChatMl,
    /// chatfmt's own routes: a 400 naming `chat_template`.
    Refuse,
}

/// vLLM 0.33.0's message when no chat template resolves (`safe_apply_chat_template`).
const VLLM_NO_TEMPLATE: &str = "As of transformers v4.44, default chat template is no longer allowed, so you must \
                                provide a chat template if the tokenizer does not define one.";

/// The template a request renders with.
pub struct Prepared {
    model: Arc<Model>,
    request: Option<Arc<ChatTemplate>>,
    pub opts: ApplyOptions,
    pub messages: Vec<Json>,
}

impl Prepared {
    /// Chooses the template: a `chat_template` naming one of the model's templates selects it (as
    /// transformers does); any other is source, compiled once and rendered under the request limits.
    /// Without either, a model that has no template of its own answers as `without` says.
    pub fn new(
        model: Arc<Model>,
        cache: &TemplateCache,
        chat: Chat,
        without: WithoutTemplate,
    ) -> Result<Prepared, ApiError> {
        let mut opts = ApplyOptions {
            add_generation_prompt: chat.add_generation_prompt,
            continue_final_message: chat.continue_final_message,
            tools: chat.tools,
            documents: chat.documents,
            chat_template: None,
            kwargs: chat.kwargs,
            ..ApplyOptions::default()
        };
        let mut request = None;
        if let Some(t) = chat.chat_template {
            if model.resolved.template.names().contains(&t.as_str()) {
                opts.chat_template = Some(t);
            } else {
                request = Some(cache.get(&model, &t));
            }
        }
        if request.is_none() && !model.has_template {
            match without {
                WithoutTemplate::ChatMl => {}
                WithoutTemplate::Vllm => return Err(ApiError::bad(VLLM_NO_TEMPLATE, None)),
                WithoutTemplate::Sglang => return Err(ApiError::bad(chatfmt::template::NO_TEMPLATE_MESSAGE, None)),
                WithoutTemplate::Refuse => {
                    return Err(ApiError::bad(
                        format!(
                            "model '{}' has no chat template (its folder has none): send one in chat_template",
                            model.name
                        ),
                        Some("body.chat_template"),
                    ))
                }
            }
        }
        Ok(Prepared {
            model,
            request,
            opts,
            messages: chat.messages,
        })
    }

    fn template(&self) -> &ChatTemplate {
        self.request.as_deref().unwrap_or(&self.model.resolved.template)
    }

    fn is_request_template(&self) -> bool {
        self.request.is_some()
    }

    fn info(&self) -> TemplateInfo {
        match &self.request {
            None => self.model.resolved.info(&self.opts),
            Some(t) => {
                let origin = t.selected(&self.opts).map_or("chat_template", |(_, o)| o);
                TemplateInfo {
                    kind: "jinja",
                    name: None,
                    source: origin.to_string(),
                }
            }
        }
    }

    /// The prompt text.
    pub fn render(&self) -> Result<String, ApiError> {
        self.template()
            .apply(&self.messages, &self.opts)
            .map(|r| r.text)
            .map_err(|e| ApiError::template(&e, self.is_request_template()))
    }

    /// The ids of the prompt, as `chatfmt tokenize` (with `add_special_tokens`, vLLM's option).
    pub fn token_ids(&self, add_special_tokens: bool) -> Result<Vec<u32>, ApiError> {
        let tokenizer = self.model.tokenizer()?;
        let opts = ChatTokenizeOptions {
            encode: EncodeOptions {
                add_special_tokens,
                ..EncodeOptions::default()
            },
            ..ChatTokenizeOptions::default()
        };
        let chat = tokenize_chats(self.template(), tokenizer, &[&self.messages], &self.opts, &opts)
            .map_err(|e| ApiError::tokenize(&e, self.is_request_template()))?;
        Ok(chat.into_iter().next().map(|c| c.encoded.input_ids).unwrap_or_default())
    }

    fn span_options(&self, mode: MaskMode, deadline: Instant) -> Result<SpanOptions, ApiError> {
        let tagged = self
            .template()
            .has_generation_blocks(&self.opts)
            .map_err(|e| ApiError::template(&e, self.is_request_template()))?;
        let source = match mode {
            MaskMode::Tags if !tagged => {
                return Err(ApiError::bad(
                    "masks \"tags\": the template has no {% generation %} blocks; use \"provenance\" or \"auto\"",
                    Some("body.masks"),
                ))
            }
            MaskMode::Tags => MaskSource::Tags,
            MaskMode::Provenance => MaskSource::Provenance,
            MaskMode::Auto if tagged => MaskSource::Tags,
            MaskMode::Auto => MaskSource::Provenance,
        };
        let eos = (self.opts.kwargs.get("eos_token"))
            .or_else(|| self.template().special_tokens().get("eos_token"))
            .and_then(Json::as_str);
        // The folder's part was read at load; this is `stop_markers(folder, eos, [])`.
        let stop_markers =
            stop_markers(None, eos, &self.model.eos_id_markers).map_err(|e| ApiError::chat(&e, false))?;
        Ok(SpanOptions {
            source,
            stop_markers,
            message_spans: true,
            deadline: Some(deadline),
        })
    }

    /// `/v1/render`'s answer as JSON text: `chatfmt tokenize --json`'s object (`render --json`'s
    /// without `tokenize`) with `text`, then `model` and `stop`. Serialized straight from the
    /// results: a JSON tree of every id would cost more than the render.
    /// Finding the spans stops after `spans_timeout` (see [`SpanOptions::deadline`]).
    pub fn render_json(&self, mode: MaskMode, tokenize: bool, spans_timeout: Duration) -> Result<Vec<u8>, ApiError> {
        let deadline = Instant::now() + spans_timeout;
        let out_of_time = |e: ApiError| {
            if e.kind != TEMPLATE_LIMIT || Instant::now() < deadline {
                return e;
            }
            ApiError {
                param: Some("body.messages".into()),
                location: None,
                message: format!(
                    "{} (the server's --spans-timeout is {} s): send fewer messages, or raise --spans-timeout",
                    e.message,
                    spans_timeout.as_secs_f64()
                ),
                ..e
            }
        };
        let spans = self.span_options(mode, deadline)?;
        if tokenize {
            return self.tokenized_json(spans).map_err(out_of_time);
        }
        let found = self
            .template()
            .apply_with_spans(&self.messages, &self.opts, &spans)
            .map_err(|e| out_of_time(ApiError::template(&e, self.is_request_template())))?;
        let mut out = json!({"text": found.rendered.text, "template": self.info()});
        for (key, value) in found.to_json() {
            out[key] = value;
        }
        out["model"] = json!(self.model.name);
        out["stop"] = json!(self.model.stop);
        Ok(out.to_string().into_bytes())
    }

    fn tokenized_json(&self, spans: SpanOptions) -> Result<Vec<u8>, ApiError> {
        let tokenizer = self.model.tokenizer()?;
        let opts = ChatTokenizeOptions {
            encode: EncodeOptions {
                assistant_masks: true,
                ..EncodeOptions::default()
            },
            sanitize_control_tokens: None,
            spans: Some(spans),
        };
        let chat = tokenize_chats(self.template(), tokenizer, &[&self.messages], &self.opts, &opts)
            .map_err(|e| ApiError::tokenize(&e, self.is_request_template()))?
            .into_iter()
            .next()
            .ok_or_else(|| ApiError::bad("no conversation was tokenized", Some("body.messages")))?;
        let Some(found) = &chat.spans else {
            return Err(ApiError::bad("no spans were found", Some("body.messages")));
        };
        if found.assistant_mask_is_empty(&self.messages) {
            return Err(ApiError::bad(
                format!(
                    "the conversation has assistant messages but no assistant span was found ({} masks): the \
                     assistant mask would be all zeros; try \"masks\": \"provenance\"",
                    found.source.name()
                ),
                Some("body.masks"),
            ));
        }
        let enc = &chat.encoded;
        let text = CodePoints::new(&chat.text);
        let answer = TokenizedAnswer {
            input_ids: &enc.input_ids,
            attention_mask: &enc.attention_mask,
            assistant_masks: enc.assistant_masks.as_deref(),
            template: self.info(),
            text: &chat.text,
            masks: found.source.name(),
            assistant_spans: found.assistant_code_points(&text),
            message_spans: message_spans(found, enc, &text),
            model: &self.model.name,
            stop: &self.model.stop,
        };
        // About 4 bytes an id in each of the three lists, plus the text and spans.
        let mut out = Vec::with_capacity(12 * enc.input_ids.len() + 2 * chat.text.len() + 256);
        serde_json::to_writer(&mut out, &answer).map_err(|e| crate::answer::internal(&e))?;
        Ok(out)
    }
}

/// `/v1/render`'s tokenized answer, keys in `chatfmt tokenize --json`'s order.
#[derive(Serialize)]
struct TokenizedAnswer<'a> {
    input_ids: &'a [u32],
    attention_mask: &'a [u8],
    assistant_masks: Option<&'a [u8]>,
    template: TemplateInfo,
    text: &'a str,
    masks: &'static str,
    assistant_spans: Vec<(usize, usize)>,
    message_spans: Vec<MessageTokenSpans<'a>>,
    model: &'a str,
    stop: &'a [String],
}
