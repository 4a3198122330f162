//! `apply`: messages, tools and options in, the prompt text out.

use super::{value_error, ChatTemplate, Selected};
use chatfmt_jinja::{Borrowed, ByteSpan, Clock, Context, Error, Layer, LoopPrefix, Rendered, Template};
use serde_json::{Map, Value as Json};
use std::sync::atomic::Ordering;

/// The options of `apply_chat_template(tokenize=False)`.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Append the header that starts a new assistant turn.
    pub add_generation_prompt: bool,
    /// Cut the output right after the final message's content (`Some("content")`) or another field.
    pub continue_final_message: Option<String>,
    /// Tool schemas (`tools` in the template; `None` when absent).
    pub tools: Option<Json>,
    /// Documents for RAG templates (`documents`; `None` when absent).
    pub documents: Option<Json>,
    /// A template name, or template source, as transformers' `chat_template` argument.
    pub chat_template: Option<String>,
    /// Extra template variables; they override special tokens.
    pub kwargs: Map<String, Json>,
    /// The clock for `strftime_now`.
    pub clock: Clock,
    /// Record where each span of the prompt came from ([`Rendered::spans`]).
    pub track_spans: bool,
    /// The conversation is one of a batch: transformers refuses an empty batch but hands an empty
    /// conversation within one to the template.
    pub in_batch: bool,
}

const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];
const CONTINUE_TAG: &str = "CONTINUE_FINAL_MESSAGE_TAG ";

/// Checks that every message is an object; says whether transformers' preparation would change
/// any of them.
#[inline(always)]
fn needs_preparation(messages: &[Json]) -> Result<bool, Error> {
    let mut prepare = false;
    for m in messages {
        let Json::Object(obj) = m else {
            return Err(not_a_message(m));
        };
        for (k, v) in obj {
            prepare |= v.is_null() | is_reasoning_field(k);
        }
    }
    Ok(prepare)
}

#[cold]
fn not_a_message(m: &Json) -> Error {
    Error::new(
        chatfmt_jinja::ErrorKind::TypeError,
        format!("Chat messages should be dicts, dataclasses or pydantic models, but got {m}."),
    )
}

/// Whether `key` is one of [`REASONING_FIELDS`] (by length first: most keys are not).
#[inline(always)]
fn is_reasoning_field(key: &str) -> bool {
    match key.len() {
        8 => key == REASONING_FIELDS[1],
        9 => key == REASONING_FIELDS[2],
        17 => key == REASONING_FIELDS[0],
        _ => false,
    }
}

/// Drops `None`-valued keys and aliases the reasoning fields, as transformers prepares messages.
fn prepare_message(m: &Json) -> Json {
    let Json::Object(obj) = m else {
        return m.clone();
    };
    let mut out: Map<String, Json> = obj
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let reasoning = REASONING_FIELDS.iter().find_map(|k| out.get(*k).cloned());
    if let Some(r) = reasoning {
        let mut aliased = Map::new();
        aliased.insert("thinking".to_string(), r.clone());
        for (k, v) in out {
            aliased.insert(k, v);
        }
        aliased.insert("reasoning_content".to_string(), r);
        out = aliased;
    }
    Json::Object(out)
}

static NULL: Json = Json::Null;
static TRUE: Json = Json::Bool(true);
static FALSE: Json = Json::Bool(false);

impl ChatTemplate {
    /// Renders a conversation as `apply_chat_template(conversation, tokenize=False, ...)` does.
    pub fn apply(&self, messages: &[Json], opts: &ApplyOptions) -> Result<Rendered, Error> {
        let mut out = Rendered {
            text: String::with_capacity(self.last_len.load(Ordering::Relaxed)),
            ..Rendered::default()
        };
        self.apply_into(messages, opts, &mut out)?;
        Ok(out)
    }

    /// [`apply`](Self::apply) into `out`, reusing its buffers: a server or a training loop renders
    /// many conversations without allocating the output each time.
    pub fn apply_into(&self, messages: &[Json], opts: &ApplyOptions, out: &mut Rendered) -> Result<(), Error> {
        self.apply_with(messages, opts, out, |template, ctx, out| template.render_into(ctx, out))
    }

    /// [`apply`](Self::apply) with provenance, keeping only the spans whose origin names a context
    /// path `names` accepts (see [`Template::render_named_spans`]): the rendered text (with no
    /// spans) and those spans, in output order.
    pub(crate) fn apply_named_spans(
        &self,
        messages: &[Json],
        opts: &ApplyOptions,
        names: &dyn Fn(&str) -> bool,
    ) -> Result<(Rendered, Vec<ByteSpan>), Error> {
        let mut out = Rendered {
            text: String::with_capacity(self.last_len.load(Ordering::Relaxed)),
            ..Rendered::default()
        };
        let mut spans = Vec::new();
        self.apply_with(messages, opts, &mut out, |template, ctx, out| {
            spans = template.render_named_spans(ctx, out, names)?;
            Ok(())
        })?;
        clip_spans(&mut spans, out.text.len(), |s| (&mut s.0, &mut s.1));
        Ok((out, spans))
    }

    /// Checks and prepares the input, renders it into `out` with `render` and cuts the output as
    /// `continue_final_message` asks.
    fn apply_with(
        &self,
        messages: &[Json],
        opts: &ApplyOptions,
        out: &mut Rendered,
        render: impl FnOnce(&Template, &Context, &mut Rendered) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let selected = self.select(opts.chat_template.as_deref(), opts.tools.is_some())?;
        let mut input = Input::default();
        let template = self.input(messages, opts, Prompt::AsAsked, &selected, &mut input)?;
        let final_text = input.final_text.take();
        let layers = self.layers(messages, opts, &input, opts.add_generation_prompt);
        render(template, &self.context(opts, &layers), out)?;
        if let Some(final_text) = final_text {
            cut_at_tag(out, &final_text)?;
        }
        self.last_len.store(out.text.len(), Ordering::Relaxed);
        Ok(())
    }

    /// The render of `messages` without and with the generation prompt (`opts` without it and
    /// without `continue_final_message`): what [`apply`](Self::apply) gives for each, the second
    /// when the first succeeded. What the template writes before it first reads
    /// `add_generation_prompt` is rendered once when the template allows it.
    pub fn apply_pair(
        &self,
        messages: &[Json],
        opts: &ApplyOptions,
    ) -> Result<(Rendered, Result<Rendered, Error>), Error> {
        let selected = self.select(opts.chat_template.as_deref(), opts.tools.is_some())?;
        self.with_plain_input(messages, opts, &selected, |template, input| {
            let (layers, alt_layers) = (
                self.layers(messages, opts, &input, false),
                self.layers(messages, opts, &input, true),
            );
            let (ctx, alt) = (self.context(opts, &layers), self.context(opts, &alt_layers));
            let mut out = Rendered {
                text: String::with_capacity(self.last_len.load(Ordering::Relaxed)),
                ..Rendered::default()
            };
            let mut alt_out = Rendered::default();
            let second = template.render_pair(&ctx, &alt, "add_generation_prompt", &mut out, &mut alt_out)?;
            Ok((out, second.map(|()| alt_out)))
        })
    }

    /// Runs `f` with the `selected` template, the checked input of `messages` with `opts` read
    /// without the generation prompt and without `continue_final_message`: what renders with and
    /// without the prompt share (their contexts take the prompt flag apart).
    fn with_plain_input<R>(
        &self,
        messages: &[Json],
        opts: &ApplyOptions,
        selected: &Selected<'_>,
        f: impl FnOnce(&Template, Input) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let mut input = Input::default();
        let template = self.input(messages, opts, Prompt::Left, selected, &mut input)?;
        f(template, input)
    }

    /// The render of `messages` as [`apply_pair`](Self::apply_pair) gives it without the prompt
    /// (with spans when `opts` tracks them) and,
    /// when the template it uses is causal in `messages` (see [`chatfmt_jinja::causal`]), the render
    /// of each nonempty prefix `messages[:i]`, i below the conversation's length, derived from it:
    /// without the prompt, and with it for each `i` that `prompt_for` accepts when the template
    /// reads `add_generation_prompt` only after its loop. `None` when the template is not causal.
    pub(crate) fn apply_prefixes(
        &self,
        messages: &[Json],
        opts: &ApplyOptions,
        prompt_for: &dyn Fn(usize) -> bool,
    ) -> Result<Option<(Rendered, Vec<LoopPrefix>)>, Error> {
        let selected = self.select(opts.chat_template.as_deref(), opts.tools.is_some())?;
        if selected
            .get()?
            .causal_loop("messages", "add_generation_prompt")
            .is_none()
        {
            return Ok(None);
        }
        self.with_plain_input(messages, opts, &selected, |template, input| {
            let (layers, alt_layers) = (
                self.layers(messages, opts, &input, false),
                self.layers(messages, opts, &input, true),
            );
            let (ctx, alt) = (self.context(opts, &layers), self.context(opts, &alt_layers));
            let mut out = Rendered::default();
            let names = ("messages", "add_generation_prompt");
            let wanted = |i: usize| (i > 0, i > 0 && prompt_for(i));
            let prefixes = template.render_prefixes(&ctx, Some(&alt), names, &wanted, &mut out)?;
            Ok(prefixes.map(|p| (out, p)))
        })
    }

    /// Checks the conversation and options as transformers does, gives the `selected` template and
    /// fills `input` with what the template reads (written in place: the caller's render is hot).
    #[inline(always)]
    fn input<'s>(
        &self,
        messages: &[Json],
        opts: &ApplyOptions,
        prompt: Prompt,
        selected: &'s Selected<'_>,
        input: &mut Input,
    ) -> Result<&'s Template, Error> {
        if messages.is_empty() && !opts.in_batch {
            return Err(value_error(
                "Cannot apply chat template to an empty conversation. Provide at least one message.",
            ));
        }
        let continue_final = match prompt {
            Prompt::AsAsked => opts.continue_final_message.as_ref(),
            Prompt::Left => None,
        };
        if continue_final.is_some() && opts.add_generation_prompt {
            return Err(value_error("continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when you want the model to continue the final message, and add_generation_prompt when you want to add a header that will prompt it to start a new assistant message instead."));
        }
        let template = selected.get()?;
        input.tools = iterated("tools", opts.tools.as_ref())?;
        input.documents = iterated("documents", opts.documents.as_ref())?;
        // The caller's messages are read in place unless transformers' preparation changes them.
        if needs_preparation(messages)? || continue_final.is_some() {
            let mut chat: Vec<Json> = messages.iter().map(prepare_message).collect();
            if let Some(field) = continue_final {
                input.final_text = Some(tag_final_message(&mut chat, field, template.source())?);
            }
            input.chat = Some(chat);
        }
        Ok(template)
    }

    /// The variables a render of `input` reads besides the special tokens' and `opts`' own: the
    /// messages (prepared ones when transformers' preparation changed them), `tools`,
    /// `documents` and the generation prompt, then the extra variables and the special tokens.
    #[inline(always)]
    fn layers<'c>(
        &'c self,
        messages: &'c [Json],
        opts: &'c ApplyOptions,
        input: &'c Input,
        add_generation_prompt: bool,
    ) -> [Layer<'c>; 6] {
        let messages = input.chat.as_deref().unwrap_or(messages);
        let tools = input.tools.as_ref().or(opts.tools.as_ref()).unwrap_or(&NULL);
        let documents = input.documents.as_ref().or(opts.documents.as_ref()).unwrap_or(&NULL);
        let prompt = if add_generation_prompt { &TRUE } else { &FALSE };
        [
            Layer::Var("messages", Borrowed::List(messages)),
            Layer::Var("tools", Borrowed::Json(tools)),
            Layer::Var("documents", Borrowed::Json(documents)),
            Layer::Var("add_generation_prompt", Borrowed::Json(prompt)),
            // Extra variables override special tokens.
            Layer::Map(&opts.kwargs),
            Layer::Map(&self.special_tokens),
        ]
    }

    /// The render context of `layers` (see [`layers`](Self::layers)) with `opts`' clock.
    #[inline(always)]
    fn context<'c>(&self, opts: &ApplyOptions, layers: &'c [Layer<'c>]) -> Context<'c> {
        Context {
            vars: Map::new(),
            layers,
            clock: opts.clock.clone(),
            limits: self.limits.clone(),
            track_spans: opts.track_spans,
        }
    }
}

/// Whether a render's input is checked and prepared with the options' generation prompt and
/// `continue_final_message` as asked, or without both (the renders with and without the prompt
/// that [`ChatTemplate::apply_pair`] and the prefix derivation share).
#[derive(Clone, Copy)]
enum Prompt {
    AsAsked,
    Left,
}

/// What a render reads besides the options: the messages when transformers' preparation changed
/// them, `tools` and `documents` when its checks changed them, and the final message's text when
/// `continue_final_message` tagged it.
#[derive(Clone, Default)]
struct Input {
    chat: Option<Vec<Json>>,
    tools: Option<Json>,
    documents: Option<Json>,
    final_text: Option<String>,
}

/// transformers' checks of `tools` (each must be a dict: `ValueError`) and `documents` (each must be
/// a dict: `TypeError`), made as Python iterates them: an object iterates its keys and a string its
/// characters, so both fail unless empty, and a number or boolean is not iterable. Returns what the
/// template sees instead when the check changes the value (empty `tools` become `[]`).
#[inline(always)]
fn iterated(name: &str, value: Option<&Json>) -> Result<Option<Json>, Error> {
    match value {
        None | Some(Json::Null) => Ok(None),
        Some(value) => iterated_value(name, value),
    }
}

/// [`iterated`] of a value that is not `None`.
fn iterated_value(name: &str, value: &Json) -> Result<Option<Json>, Error> {
    use chatfmt_jinja::ErrorKind::{TypeError, ValueError};
    let fail = || {
        match name {
        "tools" => Error::new(
            ValueError,
            "Tools should either be a JSON schema, or a callable function with type hints and a docstring suitable for auto-conversion to a schema.",
        ),
        _ => Error::new(TypeError, "Documents should be a list of dicts with 'title' and 'text' keys!"),
    }
    };
    let empty = match value {
        Json::Null => return Ok(None),
        Json::Array(items) if items.iter().all(Json::is_object) => return Ok(None),
        Json::Array(_) => return Err(fail()),
        Json::Object(o) => o.is_empty(),
        Json::String(s) => s.is_empty(),
        v @ (Json::Number(_) | Json::Bool(_)) => {
            return Err(Error::new(
                TypeError,
                format!("'{}' object is not iterable", json_type(v)),
            ))
        }
    };
    match (empty, name) {
        (false, _) => Err(fail()),
        (true, "tools") => Ok(Some(Json::Array(Vec::new()))),
        (true, _) => Ok(None),
    }
}

/// Appends the continuation tag to the final message's field; returns the field's original text.
fn tag_final_message(chat: &mut [Json], field: &str, source: &str) -> Result<String, Error> {
    let Some(last) = chat.last_mut().and_then(Json::as_object_mut) else {
        return Err(value_error(
            "continue_final_message is set but the conversation is empty!",
        ));
    };
    let Some(final_message) = last.get(field).cloned() else {
        return Err(value_error(format!(
            "continue_final_message is set but the final message has no \"{field}\" to continue!"
        )));
    };
    let fields: Vec<String> = if REASONING_FIELDS.contains(&field) {
        REASONING_FIELDS
            .iter()
            .filter(|f| last.get(**f) == Some(&final_message))
            .map(|f| f.to_string())
            .collect()
    } else {
        vec![field.to_string()]
    };
    if !fields.iter().any(|f| source.contains(f.as_str())) {
        return Err(value_error(format!(
            "continue_final_message is set to \"{field}\" but this is not an accepted field in the chat_template"
        )));
    }
    if let Json::Array(blocks) = &final_message {
        let mut blocks = blocks.clone();
        for block in blocks.iter_mut().rev() {
            // `"text" in block`, then `block["text"] + tag`, as Python evaluates them on any block.
            let Json::Object(b) = block else {
                let what = match block {
                    Json::String(s) if s.contains("text") => "string indices must be integers, not 'str'".to_string(),
                    Json::Array(items) if items.iter().any(|i| i == "text") => {
                        "list indices must be integers or slices, not str".to_string()
                    }
                    Json::String(_) | Json::Array(_) => continue,
                    other => format!("argument of type '{}' is not iterable", json_type(other)),
                };
                return Err(Error::new(chatfmt_jinja::ErrorKind::TypeError, what));
            };
            let Some(text) = b.get("text") else { continue };
            let Json::String(text) = text.clone() else {
                return Err(plus_tag_error(text));
            };
            b.insert("text".to_string(), Json::String(format!("{text}{CONTINUE_TAG}")));
            last.insert(field.to_string(), Json::Array(blocks));
            return Ok(text);
        }
        return Err(value_error(
            "continue_final_message is set but we could not find any text to continue in the final message!",
        ));
    }
    let Json::String(text) = final_message else {
        return Err(plus_tag_error(&final_message));
    };
    for f in &fields {
        if let Some(Json::String(v)) = last.get(f).cloned() {
            last.insert(f.clone(), Json::String(format!("{v}{CONTINUE_TAG}")));
        }
    }
    Ok(text)
}

/// Python's error for `value + tag` when `value` is not a string.
fn plus_tag_error(value: &Json) -> Error {
    let what = match value {
        Json::Array(_) => "can only concatenate list (not \"str\") to list".to_string(),
        other => format!("unsupported operand type(s) for +: '{}' and 'str'", json_type(other)),
    };
    Error::new(chatfmt_jinja::ErrorKind::TypeError, what)
}

fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "NoneType",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_f64() => "float",
        Json::Number(_) => "int",
        Json::String(_) => "str",
        Json::Array(_) => "list",
        Json::Object(_) => "dict",
    }
}

fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
}

/// Cuts the output at the continuation tag, as transformers does.
fn cut_at_tag(rendered: &mut Rendered, final_text: &str) -> Result<(), Error> {
    let text = &rendered.text;
    let tag = CONTINUE_TAG.trim_end();
    if !text.contains(py_strip(final_text)) || !text.contains(tag) {
        return Err(value_error(format!(
            "continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.Final message to continue: {}\nRendered chat:\n{text}",
            py_strip(final_text)
        )));
    }
    let loc = text.rfind(tag).unwrap_or(0);
    let cut = if text[loc..].starts_with(CONTINUE_TAG) {
        &text[..loc]
    } else {
        text[..loc].trim_end_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
    };
    rendered.text = cut.to_string();
    clip_spans(&mut rendered.spans, rendered.text.len(), |s| (&mut s.start, &mut s.end));
    Ok(())
}

/// Keeps what a cut of the output at byte `n` (at the continuation tag) left of `spans`.
fn clip_spans<T>(spans: &mut Vec<T>, n: usize, range: impl Fn(&mut T) -> (&mut usize, &mut usize)) {
    spans.retain_mut(|s| *range(s).0 < n);
    for s in spans.iter_mut() {
        let end = range(s).1;
        *end = (*end).min(n);
    }
}
