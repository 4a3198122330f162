//! What a tokenizer object offers besides encoding chats: the vocabulary both ways, decoding with or
//! without special tokens, and its configured sides and limits (transformers' `get_vocab`,
//! `convert_ids_to_tokens`, `decode(skip_special_tokens=)`, `truncation_side`, `model_max_length`).

use crate::{ChatTokenizer, Error, ErrorKind, Side};
use std::collections::HashMap;

impl ChatTokenizer {
    /// Every token string with its id: the model's vocabulary, then the added tokens.
    pub fn vocab(&self) -> &HashMap<String, u32> {
        self.ids_map()
    }

    /// The size of the model's own vocabulary, the added tokens left out (transformers' `vocab_size`;
    /// `len(tokenizer)` counts both, as [`ChatTokenizer::vocab`] does).
    pub fn model_vocab_size(&self) -> usize {
        self.pieces.model_vocab_size()
    }

    /// The token string of `id` (an added token's content, else the model's piece).
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        match self.pieces.added_content(id) {
            Some(content) => Some(content.to_string()),
            None => self.encoder.model_token(id),
        }
    }

    /// The added tokens marked special, in id order.
    pub fn special_added_tokens(&self) -> Vec<&str> {
        let mut tokens: Vec<_> = self.pieces.added_tokens().iter().filter(|t| t.special).collect();
        tokens.sort_by_key(|t| t.id);
        tokens.into_iter().map(|t| t.content.as_str()).collect()
    }

    /// The text of `ids`, leaving out special tokens when `skip_special_tokens`.
    pub fn decode_with(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error> {
        crate::guard::guarded(ErrorKind::Decode, &format!("cannot decode {ids:?}"), || {
            self.decoder()?.decode(ids, skip_special_tokens)
        })
    }

    /// The text of `ids` as transformers' `tokenizer.decode(ids, skip_special_tokens=...)` gives it
    /// with the tokenizer's own settings: the decoder's text, cleaned up by `clean_up_tokenization`
    /// when `tokenizer_config.json` sets `clean_up_tokenization_spaces` (which transformers ignores
    /// for a BPE model unless `clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output`
    /// is set too).
    pub fn decode_as_transformers(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, Error> {
        let text = self.decode_with(ids, skip_special_tokens)?;
        Ok(match self.clean_up_decoded {
            true => clean_up_tokenization(&text),
            false => text,
        })
    }

    /// The `tokenizer.json` model's type (`"BPE"`, `"Unigram"`, `"WordPiece"`, ...).
    pub fn model_type(&self) -> Option<&str> {
        self.json.tree().get("model")?.get("type")?.as_str()
    }

    /// The side truncation cuts from (the config's `truncation_side`, else right).
    pub fn truncation_side(&self) -> Side {
        self.truncation_side
    }

    /// The config's `model_max_length`, when it sets a real limit.
    pub fn model_max_length(&self) -> Option<usize> {
        self.model_max_length
    }
}

/// transformers' `clean_up_tokenization`: no space before `.`, `?`, `!` and `,`, nor around an
/// apostrophe of an English contraction, replaced in this order.
pub fn clean_up_tokenization(text: &str) -> String {
    const JOINED: [(&str, &str); 10] = [
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ];
    JOINED
        .iter()
        .fold(text.to_string(), |t, (spaced, joined)| t.replace(spaced, joined))
}
