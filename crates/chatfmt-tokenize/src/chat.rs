//! Render and tokenize in one call: transformers' `apply_chat_template(conversations, tokenize=True,
//! return_dict=True, ...)`, single conversations and batches.

use crate::encode::Text;
use crate::{ChatTokenizer, EncodeOptions, Encoded, Error, ErrorKind};
use chatfmt::{ApplyOptions, ChatTemplate};
use serde_json::{Map, Value as Json};

/// What to do after rendering.
#[derive(Debug, Clone, Default)]
pub struct ChatTokenizeOptions {
    /// Tokenizer call options (truncation, padding, assistant masks).
    pub encode: EncodeOptions,
    /// `sanitize_control_tokens=True`, with the source of the template being applied (control tokens
    /// are chosen from its literal text).
    pub sanitize_control_tokens: Option<String>,
}

/// A rendered and tokenized conversation.
#[derive(Debug, Clone)]
pub struct TokenizedChat {
    pub text: String,
    /// `{% generation %}` char spans of `text`.
    pub generation_spans: Vec<(usize, usize)>,
    pub encoded: Encoded,
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
        if opts.encode.assistant_masks {
            return Err(options_error(
                "continue_final_message is not compatible with return_assistant_tokens_mask.",
            ));
        }
    }
    let control = match &opts.sanitize_control_tokens {
        Some(_) if opts.encode.assistant_masks => {
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
    let rendered = render(conversations, apply)?;
    let encoded = match &control {
        None => {
            let texts: Vec<Text<'_>> = rendered
                .iter()
                .map(|r| Text {
                    text: &r.text,
                    generation_spans: &r.generation_spans,
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
    Ok(rendered
        .into_iter()
        .zip(encoded)
        .map(|(r, encoded)| TokenizedChat {
            text: r.text,
            generation_spans: r.generation_spans,
            encoded,
        })
        .collect())
}

impl ChatTokenizer {
    /// Truncates and pads already-encoded sequences (the `sanitize_control_tokens` path).
    fn pad_ids(&self, seqs: Vec<Vec<u32>>, opts: &EncodeOptions) -> Result<Vec<Encoded>, Error> {
        let pad_id = self.check_padding(opts)?;
        let max = self.truncation_limit(opts);
        let seqs = seqs.into_iter().map(|ids| self.truncate(ids, None, max)).collect();
        Ok(self.finish_batch(seqs, &[], pad_id, opts))
    }
}
