//! `sanitize_control_tokens=True` (transformers 5): control tokens typed in user strings are wrapped
//! in private-use markers before rendering, and the rendered chat is encoded piecewise so that the
//! marked tokens stay plain text (`mark_control_tokens`, `encode_marked_chat`).

use crate::encoder::Encoder;
use crate::{ChatTokenizer, Error, ErrorKind};
use serde_json::Value as Json;

const START: char = '\u{F0000}';
const END: char = '\u{F0001}';

/// Tokens to match, longest first (a token takes priority over the tokens it contains).
pub(crate) struct ControlTokens(Vec<String>);

impl ControlTokens {
    fn new(mut tokens: Vec<String>) -> Self {
        // Python's sort is stable: equal lengths keep the added-token order.
        tokens.sort_by_key(|t| std::cmp::Reverse(t.len()));
        ControlTokens(tokens)
    }

    fn match_at(&self, s: &str) -> Option<&str> {
        self.0
            .iter()
            .map(String::as_str)
            .find(|t| !t.is_empty() && s.starts_with(t))
    }

    /// Wraps every control token of `s` in the markers, after dropping any markers already there.
    fn mark_str(&self, s: &str) -> String {
        let clean: String = s.chars().filter(|&c| c != START && c != END).collect();
        let mut out = String::with_capacity(clean.len());
        let mut i = 0;
        while i < clean.len() {
            if let Some(t) = self.match_at(&clean[i..]) {
                out.push(START);
                out.push_str(t);
                out.push(END);
                i += t.len();
            } else if let Some(c) = clean[i..].chars().next() {
                out.push(c);
                i += c.len_utf8();
            }
        }
        out
    }

    /// Marks every string of a JSON value (dict keys are not marked).
    pub(crate) fn mark(&self, v: &Json) -> Json {
        match v {
            Json::String(s) => Json::String(self.mark_str(s)),
            Json::Array(a) => Json::Array(a.iter().map(|x| self.mark(x)).collect()),
            Json::Object(o) => Json::Object(o.iter().map(|(k, x)| (k.clone(), self.mark(x))).collect()),
            other => other.clone(),
        }
    }
}

/// The literal text of a template, approximated as its source without `{# comments #}`.
fn literal_text(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(i) = rest.find("{#") {
        out.push_str(&rest[..i]);
        match rest[i..].find("#}") {
            Some(j) => rest = &rest[i + j + 2..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// A piece of a marked chat.
enum Piece<'s> {
    Text(&'s str),
    /// A marked control token, to encode as plain text.
    Marked(&'s str),
}

impl ChatTokenizer {
    /// The tokens `sanitize_control_tokens` treats as control tokens for a template: special added
    /// tokens, plus the `chat_control_tokens` of the config or, without that list, the non-blank added
    /// tokens the template's literal text contains.
    pub(crate) fn control_tokens(&self, template_source: &str) -> ControlTokens {
        let literals = literal_text(template_source);
        let tokens = self
            .pieces
            .added_tokens()
            .iter()
            .filter(|a| {
                a.special
                    || match &self.chat_control_tokens {
                        Some(list) => list.contains(&a.content),
                        None => literals.contains(a.content.as_str()) && !a.content.trim().is_empty(),
                    }
            })
            .map(|a| a.content.clone())
            .collect();
        ControlTokens::new(tokens)
    }

    fn plain_pipeline(&self) -> Result<&Encoder, Error> {
        self.plain
            .get_or_init(|| {
                self.encoder
                    .sibling(&self.json.to_text(&[("added_tokens", Json::Array(Vec::new()))]))
            })
            .as_ref()
            .map_err(|e| Error::new(ErrorKind::Encode, format!("cannot build the plain-text tokenizer: {e}")))
    }

    /// Ids of `text` without matching any added token.
    fn encode_plain(&self, text: &str) -> Result<Vec<u32>, Error> {
        let mut out = Vec::new();
        self.plain_pipeline()?
            .encode(text, false, true, &mut out)
            .map_err(|e| Error::new(ErrorKind::Encode, format!("tokenizer failed: {e}")))?;
        Ok(out)
    }

    /// Splits a marked chat on the markers: marked added tokens become [`Piece::Marked`]; a lone
    /// marker is dropped but still separates the text around it.
    fn marked_pieces<'s>(&self, chat: &'s str) -> Vec<Option<Piece<'s>>> {
        let all = ControlTokens::new(self.pieces.added_tokens().iter().map(|a| a.content.clone()).collect());
        let mut out = Vec::new();
        let mut text_start = 0;
        let mut i = 0;
        while i < chat.len() {
            let Some(c) = chat[i..].chars().next() else { break };
            if c != START && c != END {
                i += c.len_utf8();
                continue;
            }
            out.push(Some(Piece::Text(&chat[text_start..i])));
            let after = i + c.len_utf8();
            let marked = (c == START)
                .then(|| all.0.iter().find(|t| chat[after..].starts_with(&format!("{t}{END}"))))
                .flatten();
            match marked {
                Some(t) => {
                    out.push(Some(Piece::Marked(&chat[after..after + t.len()])));
                    i = after + t.len() + END.len_utf8();
                }
                None => {
                    out.push(None);
                    i = after;
                }
            }
            text_start = i;
        }
        out.push(Some(Piece::Text(&chat[text_start..])));
        out
    }

    /// `encode_marked_chat`: the ids of a chat rendered from marked inputs.
    pub(crate) fn encode_marked(&self, chat: &str) -> Result<Vec<u32>, Error> {
        let newline = self.encode_ids("\n")?;
        let pieces = self.marked_pieces(chat);
        let mut ids = match pieces.first() {
            Some(Some(Piece::Text(t))) => self.encode_ids(t)?,
            _ => Vec::new(),
        };
        for piece in pieces.iter().skip(1).flatten() {
            let (s, as_text) = match piece {
                Piece::Text(s) => (*s, false),
                Piece::Marked(s) => (*s, true),
            };
            if s.is_empty() {
                continue;
            }
            let encode = |t: &str| {
                if as_text {
                    self.encode_plain(t)
                } else {
                    self.encode_ids(t)
                }
            };
            let with_newline = encode(&format!("\n{s}"))?;
            let piece_ids = match with_newline.strip_prefix(newline.as_slice()) {
                Some(rest) => rest.to_vec(),
                None => encode(s)?,
            };
            if as_text && self.token_to_id(s).is_some_and(|id| piece_ids.contains(&id)) {
                return Err(Error::new(
                    ErrorKind::Encode,
                    format!("Can't sanitize {s:?}: the tokenizer produces it from plain text"),
                ));
            }
            ids.extend(piece_ids);
        }
        Ok(ids)
    }
}
