//! Encoding rendered text: transformers' `tokenizer(texts, add_special_tokens=False, padding=,
//! truncation=, max_length=)` followed by the assistant-mask mapping of `apply_chat_template`.

use crate::encoder::Encoder;
use crate::guard::guarded;
use crate::masks::TokenBytes;
use crate::{ChatTokenizer, Error, ErrorKind, Side};
use chatfmt::jinja::ByteSpan;

/// Padding of a batch (`padding=` of transformers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Padding {
    /// `False`: no padding.
    #[default]
    None,
    /// `True` / `"longest"`: to the longest sequence of the batch.
    Longest,
    /// `"max_length"`: to `max_length`.
    MaxLength,
}

/// The tokenizer call options transformers passes after rendering.
#[derive(Debug, Clone, Default)]
pub struct EncodeOptions {
    /// Let the post-processor add its special tokens (the naive `tokenizer(text)` path; chat
    /// templating never does).
    pub add_special_tokens: bool,
    /// `truncation=True`: keep `max_length` tokens (else `model_max_length`).
    pub truncation: bool,
    /// `max_length`; does nothing without `truncation` or `Padding::MaxLength`.
    pub max_length: Option<usize>,
    pub padding: Padding,
    /// `tokenizer_kwargs["padding_side"]`; else the tokenizer's.
    pub padding_side: Option<Side>,
    /// `pad_to_multiple_of`: padding rounds its target length up to a multiple of this.
    pub pad_to_multiple_of: Option<usize>,
    /// The side truncation cuts from when set (a tokenizer's `truncation_side` changed after
    /// loading); else the tokenizer's.
    pub truncation_side: Option<Side>,
    /// Compute `assistant_masks` from each text's generation spans.
    pub assistant_masks: bool,
}

/// One encoded sequence.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Encoded {
    pub input_ids: Vec<u32>,
    pub attention_mask: Vec<u8>,
    /// Present when asked for.
    pub assistant_masks: Option<Vec<u8>>,
    /// The half-open token range of each of [`Text::token_spans`]: the tokens holding a character of
    /// the span (`None` when truncation removed all of them).
    pub span_tokens: Vec<Option<(usize, usize)>>,
}

const NO_PAD_TOKEN: &str = "Asking to pad but the tokenizer does not have a padding token. Please select a token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`.";

/// The tokens of a text with their byte offsets ([`ChatTokenizer::encode_with_offsets`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TokenOffsets {
    pub input_ids: Vec<u32>,
    /// Each token's half-open byte range of the text; a byte-level token can begin or end inside a
    /// character, and one a normalizer folded away holds no byte (an empty range).
    pub offsets: Vec<(usize, usize)>,
}

/// A text to encode, the byte spans its assistant mask covers (the `{% generation %}` blocks of its
/// rendering, or provenance spans) and byte spans whose tokens are wanted.
#[derive(Debug, Clone, Copy)]
pub struct Text<'t> {
    pub text: &'t str,
    pub generation_spans: &'t [ByteSpan],
    /// Byte spans mapped to token ranges ([`Encoded::span_tokens`]).
    pub token_spans: &'t [ByteSpan],
}

impl ChatTokenizer {
    /// The ids of `text`, added tokens matched, no special tokens added.
    pub fn encode_ids(&self, text: &str) -> Result<Vec<u32>, Error> {
        self.encode_ids_with(text, self.normalization_changes(text))
    }

    /// The ids of `text` (as [`ChatTokenizer::encode_ids`]) with each token's byte range, as
    /// `tokenizers` reports offsets before a post-processor trims them (converted to characters with
    /// [`chatfmt::jinja::CodePoints::covering`], tokens that split a character both hold it). A
    /// space marker that spells no text holds the text after it; a character that the normalizer
    /// merged into the one before it (NFC) is held by no token.
    pub fn encode_with_offsets(&self, text: &str) -> Result<TokenOffsets, Error> {
        let changes = self.normalization_changes(text);
        let input_ids = self.encode_ids_with(text, changes)?;
        let offsets = self.token_ranges(text, &input_ids, changes)?;
        Ok(TokenOffsets { input_ids, offsets })
    }

    /// [`ChatTokenizer::encode_ids`], given [`ChatTokenizer::normalization_changes`] of the text.
    fn encode_ids_with(&self, text: &str, changes: bool) -> Result<Vec<u32>, Error> {
        self.encode_as(text, changes, false, false)
    }

    /// The ids of `text` from the encoder for `changes` (see
    /// [`ChatTokenizer::normalization_changes`]), with the options of [`Encoder::encode`].
    fn encode_as(
        &self,
        text: &str,
        changes: bool,
        add_special_tokens: bool,
        encode_special_tokens: bool,
    ) -> Result<Vec<u32>, Error> {
        let encoder = self.encoder_for(changes)?;
        let mut out = Vec::new();
        let encode = |encoder: &Encoder, out: &mut Vec<u32>| {
            guarded(ErrorKind::Encode, "tokenizer failed", || {
                encoder.encode(text, add_special_tokens, encode_special_tokens, out)
            })
        };
        match encode(encoder, &mut out) {
            // The 1.0 pipeline stops on some texts (a `Split` regex it cannot run after a normalizer
            // changed the text, a panic): the 0.23 release encodes them as transformers does.
            Err(stopped) if matches!(encoder, Encoder::Pipeline(_)) => {
                let Ok(reference) = self.reference_encoder() else {
                    return Err(stopped);
                };
                out.clear();
                encode(reference, &mut out).map_err(|_| stopped)?;
            }
            done => done?,
        }
        Ok(out)
    }

    /// The ids of `text` as `tokenizer(text, add_special_tokens=..., split_special_tokens=...)`: with
    /// `split_special_tokens` the special added tokens are read as plain text.
    pub fn encode_text(
        &self,
        text: &str,
        add_special_tokens: bool,
        split_special_tokens: bool,
    ) -> Result<Vec<u32>, Error> {
        let changes = self.normalization_changes(text);
        if !split_special_tokens {
            return if add_special_tokens {
                self.encode_with_specials(text, changes)
            } else {
                self.encode_ids_with(text, changes)
            };
        }
        self.encode_as(text, changes, add_special_tokens, true)
    }

    fn encode_with_specials(&self, text: &str, changes: bool) -> Result<Vec<u32>, Error> {
        self.encode_as(text, changes, true, false)
    }

    /// `ids` (the text's tokens between those the post-processor adds) cut to `max` as `tokenizers`
    /// cuts them: the text's own tokens to `max` less the added ones on `side`, the added ones kept.
    /// A `max` below the number of added tokens cuts nothing (`tokenizers` wraps the difference).
    fn truncate_within_specials(
        &self,
        text: &str,
        changes: bool,
        ids: Vec<u32>,
        max: usize,
        side: Side,
    ) -> Result<Vec<u32>, Error> {
        let plain = self.encode_ids_with(text, changes)?;
        let added = ids.len().saturating_sub(plain.len());
        let start = (0..=added).find(|&k| ids.get(k..k + plain.len()) == Some(&plain[..]));
        let Some(start) = start else {
            return Err(Error::new(
                ErrorKind::Encode,
                "the post-processor changes the text's own tokens, so chatfmt cannot truncate with \
                 add_special_tokens; truncate without special tokens",
            ));
        };
        let keep = match max.checked_sub(added) {
            Some(keep) if keep < plain.len() => keep,
            _ => return Ok(ids),
        };
        let kept = match side {
            Side::Right => &plain[..keep],
            Side::Left => &plain[plain.len() - keep..],
        };
        Ok([&ids[..start], kept, &ids[start + plain.len()..]].concat())
    }

    /// The pad id, or transformers' "Asking to pad" error.
    fn pad_id(&self) -> Result<u32, Error> {
        self.special_tokens
            .get("pad_token")
            .and_then(|t| t.as_str())
            .and_then(|t| self.token_to_id(t))
            .ok_or_else(|| Error::new(ErrorKind::Padding, NO_PAD_TOKEN))
    }

    /// The pad id when padding is asked for, or transformers' "Asking to pad" error.
    pub(crate) fn check_padding(&self, opts: &EncodeOptions) -> Result<Option<u32>, Error> {
        match opts.padding {
            Padding::None => Ok(None),
            _ => self.pad_id().map(Some),
        }
    }

    /// Where truncation cuts: `max_length`, else `model_max_length`; nothing without `truncation`.
    pub(crate) fn truncation_limit(&self, opts: &EncodeOptions) -> Option<usize> {
        if opts.truncation {
            opts.max_length.or(self.model_max_length)
        } else {
            None
        }
    }

    /// Encodes a batch of rendered texts as `tokenizer(texts, add_special_tokens=False, ...)` and, when
    /// asked, maps each text's generation spans to an assistant mask.
    pub fn encode_batch(&self, texts: &[Text<'_>], opts: &EncodeOptions) -> Result<Vec<Encoded>, Error> {
        let pad_id = self.check_padding(opts)?;
        let max = self.truncation_limit(opts);
        let mut seqs = Vec::with_capacity(texts.len());
        for t in texts {
            let changes = self.normalization_changes(t.text);
            let side = opts.truncation_side.unwrap_or(self.truncation_side);
            let (ids, rest) = if opts.add_special_tokens {
                let ids = self.encode_with_specials(t.text, changes)?;
                match max {
                    Some(max) => (self.truncate_within_specials(t.text, changes, ids, max, side)?, None),
                    None => (ids, None),
                }
            } else {
                (self.encode_ids_with(t.text, changes)?, max)
            };
            let ranges = if opts.assistant_masks || !t.token_spans.is_empty() {
                Some(self.token_ranges(t.text, &ids, changes)?)
            } else {
                None
            };
            let mut seq = self.truncate(ids, ranges, rest, Some(side));
            if let Some(ranges) = seq.ranges.as_mut() {
                self.pieces.trim_offsets(t.text, &seq.ids, ranges);
            }
            seqs.push(seq);
        }
        self.finish_batch(seqs, texts, pad_id, opts)
    }

    /// Pads the (truncated) sequences of a batch and computes their masks.
    pub(crate) fn finish_batch(
        &self,
        seqs: Vec<Sequence>,
        texts: &[Text<'_>],
        pad_id: Option<u32>,
        opts: &EncodeOptions,
    ) -> Result<Vec<Encoded>, Error> {
        let target = match opts.padding {
            Padding::None => None,
            Padding::Longest => seqs.iter().map(|s| s.ids.len()).max(),
            Padding::MaxLength => opts.max_length.or(self.model_max_length),
        };
        let target = match (target, opts.pad_to_multiple_of) {
            (Some(n), Some(m)) if m > 0 => Some(n.div_ceil(m).saturating_mul(m)),
            (target, _) => target,
        };
        let side = opts.padding_side.unwrap_or(self.padding_side);
        let mut out = Vec::with_capacity(seqs.len());
        for (i, Sequence { mut ids, ranges }) in seqs.into_iter().enumerate() {
            let real = ids.len();
            let pad = match (target, pad_id) {
                (Some(n), Some(id)) if n > real => {
                    let k = n - real;
                    match side {
                        Side::Right => ids.extend(std::iter::repeat_n(id, k)),
                        Side::Left => {
                            ids.splice(0..0, std::iter::repeat_n(id, k));
                        }
                    }
                    k
                }
                _ => 0,
            };
            let mut attention_mask = vec![1u8; ids.len()];
            let first = match side {
                Side::Left => {
                    attention_mask[..pad].fill(0);
                    pad
                }
                Side::Right => {
                    attention_mask[real..].fill(0);
                    0
                }
            };
            let (text, spans, wanted) = texts
                .get(i)
                .map_or(("", &[][..], &[][..]), |t| (t.text, t.generation_spans, t.token_spans));
            let tokens = ranges.as_ref().map(|r| TokenBytes {
                text,
                ranges: r,
                first,
                len: ids.len(),
            });
            let assistant_masks = (tokens.as_ref())
                .filter(|_| opts.assistant_masks)
                .map(|t| t.assistant_mask(spans))
                .transpose()?;
            let span_tokens = match &tokens {
                Some(t) => t.token_ranges(wanted),
                None => Vec::new(),
            };
            out.push(Encoded {
                input_ids: ids,
                attention_mask,
                assistant_masks,
                span_tokens,
            });
        }
        Ok(out)
    }

    /// Cuts a sequence (and its token ranges) to `max` tokens on `side`, else the tokenizer's
    /// truncation side.
    pub(crate) fn truncate(
        &self,
        mut ids: Vec<u32>,
        mut ranges: Option<Vec<(usize, usize)>>,
        max: Option<usize>,
        side: Option<Side>,
    ) -> Sequence {
        if let Some(n) = max.filter(|&n| n < ids.len()) {
            let cut = ids.len() - n;
            match side.unwrap_or(self.truncation_side) {
                Side::Right => {
                    ids.truncate(n);
                    if let Some(r) = ranges.as_mut() {
                        r.truncate(n);
                    }
                }
                Side::Left => {
                    ids.drain(..cut);
                    if let Some(r) = ranges.as_mut() {
                        r.drain(..cut);
                    }
                }
            }
        }
        Sequence { ids, ranges }
    }
}

/// One sequence before padding: ids and, for masks, the byte ranges of its tokens.
pub(crate) struct Sequence {
    ids: Vec<u32>,
    ranges: Option<Vec<(usize, usize)>>,
}
