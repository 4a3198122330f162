//! What turns text into ids and ids into text. Tokenizers run on the `tokenizers` 1.0 pipeline,
//! which encodes 30-50x faster than 0.23 with the same ids (BENCHMARKS.md). A `tokenizer.json` that
//! the 1.0 release candidate refuses to upgrade or build (Falcon's pre-tokenizer, a `Sequence` with
//! `ByteLevel` before `Digits`, is one) runs on the 0.23 release instead: the one transformers'
//! Python package is built on, with the same regex engine, so the ids are transformers' by
//! construction, only slower. The same release encodes the texts the pipeline stops on and gives
//! the offsets the token spellings cannot (see `ChatTokenizer::reference_encoder`).

use tokenizers::pipeline::{EncodeOptions, Override, PipelineToken, PipelineTokenizer};
use tokenizers_reference::{Model as _, Tokenizer as ReferenceTokenizer};

/// Token ids and the byte range of each.
pub(crate) type TokenRanges = (Vec<u32>, Vec<(usize, usize)>);

/// A tokenizer's encoder and decoder (see the module documentation).
pub(crate) enum Encoder {
    /// The `tokenizers` 1.0 pipeline.
    Pipeline(PipelineTokenizer),
    /// The `tokenizers` 0.23 tokenizer, for the shapes the pipeline refuses.
    Reference(Box<ReferenceTokenizer>),
}

impl Encoder {
    /// The 0.23 tokenizer of a `tokenizer.json` text, without the padding and truncation the file
    /// may store: transformers turns both off for every call that does not ask for them, as the
    /// pipeline's encoder is told to.
    pub(crate) fn reference(json: &str) -> Result<Encoder, String> {
        let mut tokenizer = json.parse::<ReferenceTokenizer>().map_err(|e| e.to_string())?;
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| e.to_string())?;
        Ok(Encoder::Reference(Box::new(tokenizer)))
    }

    /// An encoder of the same kind as this one for another form of the same file (`json`, the
    /// file's text with some members replaced).
    pub(crate) fn sibling(&self, json: &str) -> Result<Encoder, String> {
        match self {
            Encoder::Pipeline(_) => tokenizers::from_json(json)
                .map(Encoder::Pipeline)
                .map_err(|e| e.to_string()),
            Encoder::Reference(_) => Encoder::reference(json),
        }
    }

    /// Appends the ids of `text` to `out`: with the post-processor's tokens when
    /// `add_special_tokens`, and with added special tokens read as plain text when
    /// `encode_special_tokens`.
    pub(crate) fn encode(
        &self,
        text: &str,
        add_special_tokens: bool,
        encode_special_tokens: bool,
        out: &mut Vec<u32>,
    ) -> Result<(), String> {
        match self {
            Encoder::Pipeline(p) => {
                let opts = EncodeOptions {
                    add_special_tokens,
                    encode_special_tokens,
                    padding: Override::Off,
                    truncation: Override::Off,
                };
                if add_special_tokens {
                    let encodings = p.encode(text, &opts).wait().map_err(|e| e.to_string())?;
                    if let Some(e) = encodings.first() {
                        out.extend_from_slice(PipelineToken::cast_slice(e.ids()));
                    }
                } else {
                    let mut tokens: Vec<PipelineToken> = Vec::with_capacity(text.len() / 3);
                    p.encode_into(text, &opts, &mut tokens).map_err(|e| e.to_string())?;
                    out.extend_from_slice(PipelineToken::cast_slice(&tokens));
                }
            }
            Encoder::Reference(t) => {
                let encoding = if encode_special_tokens && !t.get_encode_special_tokens() {
                    let mut plain = (**t).clone();
                    plain.set_encode_special_tokens(true);
                    plain.encode(text, add_special_tokens)
                } else {
                    t.encode(text, add_special_tokens)
                };
                out.extend_from_slice(encoding.map_err(|e| e.to_string())?.get_ids());
            }
        }
        Ok(())
    }

    /// The ids of `text` (no special tokens added) with each one's byte range, as the 0.23
    /// tokenizer reports them (untrimmed when it has no post-processor); the 1.0 pipeline reports
    /// none.
    pub(crate) fn ids_with_ranges(&self, text: &str) -> Result<TokenRanges, String> {
        match self {
            Encoder::Pipeline(_) => Err("the 1.0 pipeline reports no offsets".into()),
            Encoder::Reference(t) => t
                .encode(text, false)
                .map(|e| (e.get_ids().to_vec(), e.get_offsets().to_vec()))
                .map_err(|e| e.to_string()),
        }
    }

    /// The model's own piece of `id` (not an added token).
    pub(crate) fn model_token(&self, id: u32) -> Option<String> {
        match self {
            Encoder::Pipeline(p) => p.get_model().id_to_token(id),
            Encoder::Reference(t) => t.get_model().id_to_token(id),
        }
    }

    /// The text of `ids` as the tokenizer's decoder writes it.
    pub(crate) fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, String> {
        match self {
            Encoder::Pipeline(p) => p.decode(ids, skip_special_tokens).map_err(|e| e.to_string()),
            Encoder::Reference(t) => t.decode(ids, skip_special_tokens).map_err(|e| e.to_string()),
        }
    }
}
