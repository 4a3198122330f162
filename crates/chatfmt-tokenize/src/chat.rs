//! Render and tokenize in one call: transformers' `apply_chat_template(conversations, tokenize=True,
//! return_dict=True, ...)`, single conversations and batches.

use crate::encode::Text;
use crate::{ChatTokenizer, EncodeOptions, Encoded, Error, ErrorKind};
use chatfmt::jinja::{ByteSpan, CodePoints};
use chatfmt::{ApplyOptions, ChatSpans, ChatTemplate, MaskSource, SpanOptions};
use serde::Serialize;
use serde_json::{Map, Value as Json};

/// What to do after rendering.
#[derive(Debug, Clone, Default)]
pub struct ChatTokenizeOptions {
    /// Tokenizer call options (truncation, padding, assistant masks).
    pub encode: EncodeOptions,
    /// `sanitize_control_tokens=True`, with the source of the template being applied (control tokens
    /// are chosen from its literal text).
    pub sanitize_control_tokens: Option<String>,
    /// Find assistant spans (and, when asked, message spans) by [`chatfmt::masks`]: the assistant masks
    /// cover them, and [`Encoded::span_tokens`] holds each message's turn and then its content spans.
    pub spans: Option<SpanOptions>,
}

/// A rendered and tokenized conversation.
#[derive(Debug, Clone)]
pub struct TokenizedChat {
    pub text: String,
    /// `{% generation %}` byte spans of `text`.
    pub generation_spans: Vec<ByteSpan>,
    pub encoded: Encoded,
    /// The spans found with [`ChatTokenizeOptions::spans`].
    pub spans: Option<ChatSpans>,
}

/// The byte spans of `spans` whose tokens [`ChatTokenizeOptions::spans`] asks for: per message, its
/// turn (empty when none), then its content spans.
pub fn message_token_spans(spans: &ChatSpans) -> Vec<ByteSpan> {
    let mut out = Vec::new();
    for m in &spans.messages {
        out.push(m.turn.unwrap_or((0, 0)));
        out.extend(&m.content);
    }
    out
}

/// One message's spans as `tokenize --json` prints them: [`chatfmt::MessageSpan::to_json`]'s keys
/// (`index`, `role`, `turn`, `content`, in code points of the rendered text) plus `turn_tokens`
/// (`null` without a turn) and `content_tokens`, the token ranges of the turn and content spans.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageTokenSpans<'s> {
    pub index: usize,
    pub role: Option<&'s str>,
    pub turn: Option<(usize, usize)>,
    pub content: Vec<(usize, usize)>,
    pub turn_tokens: Option<(usize, usize)>,
    pub content_tokens: Vec<(usize, usize)>,
}

/// Each message's [`MessageTokenSpans`], reading the token ranges `encoded` holds for
/// [`message_token_spans`]; `text` is `CodePoints::new` of the rendered text.
pub fn message_spans<'s>(spans: &'s ChatSpans, encoded: &Encoded, text: &CodePoints) -> Vec<MessageTokenSpans<'s>> {
    let mut tokens = encoded.span_tokens.iter();
    (spans.messages.iter())
        .map(|m| {
            let turn_tokens = tokens.next().copied().flatten().filter(|_| m.turn.is_some());
            MessageTokenSpans {
                index: m.index,
                role: m.role.as_deref(),
                turn: m.turn.map(|span| text.span(span)),
                content: m.content.iter().map(|&span| text.span(span)).collect(),
                turn_tokens,
                content_tokens: (m.content.iter())
                    .filter_map(|_| tokens.next().copied().flatten())
                    .collect(),
            }
        })
        .collect()
}

fn options_error(message: &str) -> Error {
    Error::new(ErrorKind::Options, message)
}

/// Renders each conversation with `template` and tokenizes the batch with `tokenizer`, as
/// `apply_chat_template(conversations, tokenize=True, return_dict=True, ...)` does. The template's
/// special tokens should be `tokenizer.special_tokens()`.
pub fn tokenize_chats(
    template: &ChatTemplate,
    tokenizer: &ChatTokenizer,
    conversations: &[&[Json]],
    apply: &ApplyOptions,
    opts: &ChatTokenizeOptions,
) -> Result<Vec<TokenizedChat>, Error> {
    if apply.continue_final_message.is_some() {
        if apply.add_generation_prompt {
            return Err(options_error("continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when you want the model to continue the final message, and add_generation_prompt when you want to add a header that will prompt it to start a new assistant message instead."));
        }
        let provenance = match &opts.spans {
            Some(s) => template.resolve_mask_source(s.source, apply)? == MaskSource::Provenance,
            None => false,
        };
        if opts.encode.assistant_masks && !provenance {
            return Err(options_error(
                "continue_final_message is not compatible with return_assistant_tokens_mask.",
            ));
        }
    }
    let control = match &opts.sanitize_control_tokens {
        Some(_) if opts.encode.assistant_masks || opts.spans.is_some() => {
            return Err(options_error("`sanitize_control_tokens=True` requires `tokenize=True` and is not compatible with `return_assistant_tokens_mask=True`."));
        }
        Some(source) => Some(tokenizer.control_tokens(source)),
        None => None,
    };
    let render = |convs: &[&[Json]], apply: &ApplyOptions| -> Result<Vec<chatfmt::jinja::Rendered>, Error> {
        convs
            .iter()
            .map(|conv| template.apply(conv, apply).map_err(Error::from))
            .collect()
    };
    let found: Option<Vec<ChatSpans>> = match &opts.spans {
        Some(s) => Some(
            conversations
                .iter()
                .map(|conv| template.apply_with_spans(conv, apply, s).map_err(Error::from))
                .collect::<Result<_, Error>>()?,
        ),
        None => None,
    };
    let rendered = match &found {
        Some(f) => f.iter().map(|s| s.rendered.clone()).collect(),
        None => render(conversations, apply)?,
    };
    let wanted: Vec<Vec<ByteSpan>> = match &found {
        Some(f) => f.iter().map(message_token_spans).collect(),
        None => Vec::new(),
    };
    let encoded = match &control {
        None => {
            let texts: Vec<Text<'_>> = (rendered.iter().enumerate())
                .map(|(i, r)| Text {
                    text: &r.text,
                    generation_spans: match &found {
                        Some(f) => &f[i].assistant_spans,
                        None => &r.generation_spans,
                    },
                    token_spans: wanted.get(i).map_or(&[][..], Vec::as_slice),
                })
                .collect();
            tokenizer.encode_batch(&texts, &opts.encode)?
        }
        Some(c) => {
            // The marked inputs render the text that is encoded; `text` stays the plain rendering.
            let marked: Vec<Vec<Json>> = conversations
                .iter()
                .map(|conv| conv.iter().map(|m| c.mark(m)).collect())
                .collect();
            let marked_convs: Vec<&[Json]> = marked.iter().map(Vec::as_slice).collect();
            let mut marked_apply = apply.clone();
            marked_apply.tools = apply.tools.as_ref().map(|t| c.mark(t));
            marked_apply.documents = apply.documents.as_ref().map(|d| c.mark(d));
            marked_apply.kwargs = match c.mark(&Json::Object(apply.kwargs.clone())) {
                Json::Object(m) => m,
                _ => Map::new(),
            };
            let mut ids = Vec::with_capacity(rendered.len());
            for r in render(&marked_convs, &marked_apply)? {
                ids.push(tokenizer.encode_marked(&r.text)?);
            }
            tokenizer.pad_ids(ids, &opts.encode)?
        }
    };
    let mut found = found.map(Vec::into_iter);
    Ok(rendered
        .into_iter()
        .zip(encoded)
        .map(|(r, encoded)| TokenizedChat {
            text: r.text,
            generation_spans: r.generation_spans,
            encoded,
            spans: found.as_mut().and_then(Iterator::next),
        })
        .collect())
}

impl ChatTokenizer {
    /// Truncates and pads already-encoded sequences (the `sanitize_control_tokens` path).
    fn pad_ids(&self, seqs: Vec<Vec<u32>>, opts: &EncodeOptions) -> Result<Vec<Encoded>, Error> {
        let pad_id = self.check_padding(opts)?;
        let max = self.truncation_limit(opts);
        let seqs = seqs
            .into_iter()
            .map(|ids| self.truncate(ids, None, max, opts.truncation_side))
            .collect();
        self.finish_batch(seqs, &[], pad_id, opts)
    }
}
