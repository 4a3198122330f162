//! chatfmt-tokenize: token ids, attention masks and assistant masks of rendered chats, identical to
//! transformers 5's `apply_chat_template(tokenize=True, return_dict=True, return_assistant_tokens_mask=...)`.
//!
//! [`ChatTokenizer`] loads a model folder (`tokenizer.json` + `tokenizer_config.json`) as transformers
//! builds it and encodes rendered text ([`ChatTokenizer::encode_batch`]) with transformers' truncation,
//! padding and assistant-mask rules; [`chat`] renders and tokenizes conversations in one call.
//! Encoding runs on the `tokenizers` 1.0 pipeline, which returns ids only: the character offsets that
//! assistant masks need are rebuilt by walking the token spellings along the text (the `pieces` module).
//! A tokenizer.json shape the pipeline refuses, and offsets the spellings cannot give, come from the
//! `tokenizers` 0.23 release instead (the `encoder` module).
//! Every failure is an [`Error`]: its [`ErrorKind`], the file concerned, and for chat failures the
//! [`Stage`] and the Python class transformers raises.

pub mod chat;
mod config_tokens;
mod encode;
mod encoder;
mod error;
mod guard;
mod incremental;
mod load;
mod masks;
mod nfc;
mod pieces;
mod pipeline;
mod sanitize;
mod tokenizer_class;
mod tokenizer_json;
mod vocab;

pub use encode::{EncodeOptions, Encoded, Padding, Text, TokenOffsets};
pub use error::{Error, ErrorKind, Stage};
pub use incremental::Extended;
pub use vocab::clean_up_tokenization;

use encoder::Encoder;
use pieces::PieceTable;
use serde_json::{Map, Value as Json};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Left or right (padding and truncation sides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

impl Side {
    /// `"left"` or `"right"`.
    pub fn parse(s: &str) -> Option<Side> {
        match s {
            "left" => Some(Side::Left),
            "right" => Some(Side::Right),
            _ => None,
        }
    }
}

/// A model's tokenizer as transformers 5 loads it, plus what the chat layer needs from its config.
pub struct ChatTokenizer {
    /// The encoder, without tokenizer.json's normalizer when that is NFC alone (see [`nfc`]).
    encoder: Encoder,
    /// Whether ids are decoded by the 0.23 tokenizer (see `load::byte_level_in_sequence`).
    decode_by_reference: bool,
    /// When NFC was left out of `encoder`: the full encoder, for text that is not NFC, built on first use.
    with_nfc: Option<OnceLock<Result<Encoder, String>>>,
    pieces: PieceTable,
    /// `tokenizer.json`'s encoder without added tokens (for `sanitize_control_tokens`), built on first use.
    plain: OnceLock<Result<Encoder, String>>,
    /// The 0.23 tokenizer of the file without its post-processor (see [`encoder`]), built on first
    /// use: where the token spellings cannot give offsets, its own (untrimmed) offsets are those
    /// [`ChatTokenizer::token_ranges`] gives.
    untrimmed: OnceLock<Result<Encoder, String>>,
    /// The 0.23 tokenizer of the file, for the texts the 1.0 pipeline stops on, built on first use.
    reference: OnceLock<Result<Encoder, String>>,
    /// The tokenizer.json tree as read (after transformers' class pre-processing), before the
    /// upgrade to the 1.0 format: what the 0.23 tokenizer is built from.
    original: Json,
    /// Token string → id (model vocabulary, then added tokens), built on first use.
    ids: OnceLock<HashMap<String, u32>>,
    /// The canonical tokenizer.json, kept to build `plain` and `ids`.
    json: tokenizer_json::TokenizerJson,
    special_tokens: Map<String, Json>,
    padding_side: Side,
    truncation_side: Side,
    model_max_length: Option<usize>,
    /// Whether transformers' `decode` cleans up the decoded text by default (see
    /// [`ChatTokenizer::decode_as_transformers`]).
    clean_up_decoded: bool,
    chat_control_tokens: Option<Vec<String>>,
}

impl ChatTokenizer {
    /// The named special tokens (`bos_token`, `eos_token`, `pad_token`, ...) that templates see, as
    /// transformers' `special_tokens_map`.
    pub fn special_tokens(&self) -> &Map<String, Json> {
        &self.special_tokens
    }

    /// Sets or clears a named special token, like `tokenizer.pad_token = tokenizer.eos_token`.
    pub fn set_special_token(&mut self, name: &str, value: Option<String>) {
        match value {
            Some(v) => self.special_tokens.insert(name.to_string(), Json::String(v)),
            None => self.special_tokens.remove(name),
        };
    }

    /// The configured padding side (the config's `padding_side`, else the tokenizer class's default).
    pub fn padding_side(&self) -> Side {
        self.padding_side
    }

    /// The id of a token string (vocabulary or added token).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.ids_map().get(token).copied()
    }

    /// Token string → id, built on first use.
    fn ids_map(&self) -> &HashMap<String, u32> {
        self.ids.get_or_init(|| {
            let mut ids = HashMap::new();
            if let Some(vocab) = self.json.vocab_text() {
                // Read again: loading only built the piece table from it (it parsed then).
                let _ = tokenizer_json::read_vocab(vocab, |t, id| {
                    ids.insert(t.to_string(), id);
                });
            }
            for a in self.pieces.added_tokens() {
                ids.insert(a.content.clone(), a.id);
            }
            ids
        })
    }

    /// Whether the tokenizer normalizes `text` to something else (text that is not NFC, for a
    /// tokenizer whose normalizer is NFC; see [`nfc`]).
    pub(crate) fn normalization_changes(&self, text: &str) -> bool {
        self.with_nfc.is_some() && !nfc::is_nfc(text)
    }

    /// The encoder that encodes a text as tokenizer.json's does, given
    /// [`ChatTokenizer::normalization_changes`] of the text.
    pub(crate) fn encoder_for(&self, changes: bool) -> Result<&Encoder, Error> {
        match &self.with_nfc {
            Some(full) if changes => full
                .get_or_init(|| self.encoder.sibling(&self.json.to_text(&[])))
                .as_ref()
                .map_err(|e| Error::new(ErrorKind::Encode, format!("cannot build the tokenizer: {e}"))),
            _ => Ok(&self.encoder),
        }
    }

    /// The byte range of `text` each token of `ids` stands for, as `tokenizers` reports offsets;
    /// `changes` is [`ChatTokenizer::normalization_changes`] of the text.
    pub(crate) fn token_ranges(&self, text: &str, ids: &[u32], changes: bool) -> Result<Vec<(usize, usize)>, Error> {
        if let Encoder::Reference(_) = &self.encoder {
            return self.reference_ranges(text, ids);
        }
        match self.spelled_ranges(text, ids, changes) {
            Err(e) if e.kind() == ErrorKind::Offsets => self.reference_ranges(text, ids).map_err(|_| e),
            spelled => spelled,
        }
    }

    /// [`ChatTokenizer::token_ranges`] from the token spellings, walked along the text.
    fn spelled_ranges(&self, text: &str, ids: &[u32], changes: bool) -> Result<Vec<(usize, usize)>, Error> {
        if !changes {
            return self.pieces.byte_ranges(text, ids);
        }
        // The tokens spell the normalized text: walk them along it, then map back.
        let added: Vec<&str> = ids.iter().filter_map(|&id| self.pieces.added_content(id)).collect();
        let aligned = nfc::Aligned::of(text, &added);
        let ranges = self.pieces.byte_ranges(&aligned.text, ids)?;
        Ok(ranges.into_iter().map(|r| aligned.original(r, text.len())).collect())
    }

    /// The 0.23 tokenizer of the file: the encoder itself when it is that release's, else built on
    /// first use.
    pub(crate) fn reference_encoder(&self) -> Result<&Encoder, String> {
        match &self.encoder {
            reference @ Encoder::Reference(_) => Ok(reference),
            Encoder::Pipeline(_) => (self.reference)
                .get_or_init(|| Encoder::reference(&self.json.text_of(&self.original, &[])))
                .as_ref()
                .map_err(Clone::clone),
        }
    }

    /// [`ChatTokenizer::token_ranges`] from the 0.23 tokenizer, which reports offsets itself (the
    /// ids it gives must be `ids`).
    fn reference_ranges(&self, text: &str, ids: &[u32]) -> Result<Vec<(usize, usize)>, Error> {
        let fail = |why: String| Error::offsets(format_args!("the tokenizers 0.23 release: {why}"));
        let untrimmed = (self.untrimmed)
            .get_or_init(|| Encoder::reference(&self.json.text_of(&self.original, &[("post_processor", Json::Null)])))
            .as_ref()
            .map_err(|e| fail(e.clone()))?;
        let found = guard::guarded(ErrorKind::Encode, "tokenizer failed", || {
            untrimmed.ids_with_ranges(text)
        })?;
        match found {
            (same, ranges) if same == ids => Ok(ranges),
            _ => Err(fail("its ids for the text are not the encoder's".into())),
        }
    }

    /// The text of `ids` (special tokens included), as the tokenizer's decoder writes it.
    pub fn decode(&self, ids: &[u32]) -> Result<String, Error> {
        self.decode_with(ids, false)
    }

    /// The encoder that decodes: the 0.23 tokenizer for the decoders the pipeline shortens.
    pub(crate) fn decoder(&self) -> Result<&Encoder, String> {
        match self.decode_by_reference {
            true => self.reference_encoder(),
            false => Ok(&self.encoder),
        }
    }

    /// The byte offsets in `text` of each of its tokens `ids` (as [`ChatTokenizer::encode_text`]
    /// returns them), as the `tokenizers` crate's `Encoding::get_offsets` reports them.
    pub fn byte_offsets(&self, text: &str, ids: &[u32]) -> Result<Vec<(usize, usize)>, Error> {
        let mut ranges = self.token_ranges(text, ids, self.normalization_changes(text))?;
        self.pieces.trim_offsets(text, ids, &mut ranges);
        Ok(ranges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// The kit folder `name` under `$CHATFMT_KITS` (else `../shared/conformance` beside the
    /// repository); `None` when absent, which fails under `CI=true`.
    /// The records of `scripts/gen_token_offsets.py`.
    fn offsets_fixture() -> Json {
        serde_json::from_str(include_str!("../tests/fixtures/token_offsets.json")).expect("fixture")
    }

    fn kit(name: &str) -> Option<PathBuf> {
        let base = std::env::var_os("CHATFMT_KITS")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"));
        let dir = base.join(name);
        if dir.exists() {
            return Some(dir);
        }
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "kit {} missing",
            dir.display()
        );
        eprintln!("SKIPPED: kit {} not found (set CHATFMT_KITS)", dir.display());
        None
    }

    /// A tokenizer of the fixture: the kit's folder, or a copy whose post-processor is replaced, whose
    /// config takes the settings of `config`, or whose vocabulary has no `▁` piece (`drop_marker_piece`).
    fn tokenizer(kit: &Path, spec: &Json, scratch: &Path) -> ChatTokenizer {
        let base = kit.join(spec["base"].as_str().expect("base"));
        let dir = if spec
            .as_object()
            .expect("a spec")
            .keys()
            .all(|k| k == "name" || k == "base")
        {
            base
        } else {
            let dir: PathBuf = scratch.join(spec["name"].as_str().expect("name"));
            std::fs::create_dir_all(&dir).expect("scratch dir");
            let read = |file: &str| -> Json {
                let text = std::fs::read_to_string(base.join(file)).expect("read");
                serde_json::from_str(&text).expect("parses")
            };
            let mut config = read("tokenizer_config.json");
            for (k, v) in spec.get("config").and_then(Json::as_object).into_iter().flatten() {
                config[k] = v.clone();
            }
            std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).expect("write");
            let mut json = read("tokenizer.json");
            if let Some(p) = spec.get("post_processor") {
                json["post_processor"] = p.clone();
            }
            if spec.get("post_processor_member_trim").is_some() {
                for member in json["post_processor"]["processors"].as_array_mut().expect("a Sequence") {
                    if member["type"] == "ByteLevel" {
                        member["trim_offsets"] = Json::Bool(true);
                    }
                }
            }
            if spec.get("drop_marker_piece").is_some() {
                // The piece keeps its id under a name no text spells; merges of it go.
                let model = &mut json["model"];
                let vocab = model["vocab"].as_object_mut().expect("a vocab");
                let id = vocab.remove("\u{2581}").expect("a marker piece");
                vocab.insert("<dropped-marker>".into(), id);
                model["merges"]
                    .as_array_mut()
                    .expect("merges")
                    .retain(|m| !m.as_str().expect("a merge").split(' ').any(|p| p == "\u{2581}"));
            }
            std::fs::write(dir.join("tokenizer.json"), json.to_string()).expect("write");
            dir
        };
        ChatTokenizer::from_model_dir(&dir).expect("tokenizer loads")
    }

    /// Char offsets of byte ranges, as `tokenizers` reports them: from the character holding the first
    /// byte to the one holding the last (an empty range at the character it starts at).
    fn char_offsets(text: &str, ranges: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let char_of = |b: usize| text.char_indices().take_while(|&(i, _)| i <= b).count().max(1) - 1;
        let before = |b: usize| text.char_indices().take_while(|&(i, _)| i < b).count();
        ranges
            .iter()
            .map(|&(b, e)| {
                if e > b {
                    (char_of(b), char_of(e - 1) + 1)
                } else {
                    (before(b), before(b))
                }
            })
            .collect()
    }

    /// Reference ids and `char_to_token` maps from transformers (`scripts/gen_token_offsets.py`): texts
    /// in and out of NFC, ByteLevel and RoBERTa post-processors that trim offsets, and texts holding the space
    /// marker `▁` itself for SentencePiece-style tokenizers (Metaspace "always" and "first", a
    /// `Prepend` normalizer, and byte fallback for a vocabulary without `▁`). The ids come from the
    /// right pipeline and every character maps to the token transformers gives it (assistant masks
    /// read nothing else of a tokenization); where the fixture has them, the offsets are those
    /// `tokenizers` reports.
    #[test]
    fn ids_and_character_maps_match_transformers() {
        let Some(kit) = kit("tokens/tokenizers") else {
            return;
        };
        let fixture = offsets_fixture();
        let records = fixture["records"].as_array().expect("records");
        assert!(records.iter().filter(|r| r["nfc"] == false).count() > 300);
        let scratch = std::env::temp_dir().join(format!("chatfmt-token-offsets-{}", std::process::id()));
        for spec in fixture["tokenizers"].as_array().expect("tokenizers") {
            let name = spec["name"].as_str().expect("name");
            let tok = tokenizer(&kit, spec, &scratch);
            let mut seen = 0;
            for r in records.iter().filter(|r| r["tokenizer"] == name) {
                let text = r["text"].as_str().expect("text");
                let want_ids: Vec<u32> = serde_json::from_value(r["input_ids"].clone()).expect("ids");
                let want_map: Vec<Option<usize>> = serde_json::from_value(r["char_to_token"].clone()).expect("map");
                let changes = tok.normalization_changes(text);
                assert_eq!(changes, name == "qwen3" && r["nfc"] == false, "{name}: {text:?}");
                let ids = tok.encode_ids(text).expect("encodes");
                assert_eq!(ids, want_ids, "{name}: {text:?}");
                let mut ranges = tok.token_ranges(text, &ids, changes).expect("offsets");
                tok.pieces.trim_offsets(text, &ids, &mut ranges);
                assert_eq!(masks::char_to_token(text, &ranges), want_map, "{name}: {text:?}");
                if let Some(offsets) = r.get("offsets") {
                    let want: Vec<(usize, usize)> = serde_json::from_value(offsets.clone()).expect("offsets");
                    assert_eq!(char_offsets(text, &ranges), want, "{name}: {text:?}");
                }
                seen += 1;
            }
            assert!(seen > 0, "{name} has records");
        }
        assert!(records.iter().filter(|r| r.get("offsets").is_some()).count() > 300);
        std::fs::remove_dir_all(&scratch).ok();
    }

    /// Conversations holding the space marker `▁` (at the start, middle and end of turns, doubled,
    /// beside spaces and added tokens): ids and assistant masks as transformers'
    /// `apply_chat_template(..., return_assistant_tokens_mask=True)` gives them
    /// (`scripts/gen_token_offsets.py`).
    #[test]
    fn assistant_masks_of_text_holding_the_space_marker_match_transformers() {
        use chatfmt::{ApplyOptions, ChatTemplate};
        let Some(kit) = kit("tokens/tokenizers") else {
            return;
        };
        let fixture = offsets_fixture();
        let source = fixture["chat_template"].as_str().expect("chat_template");
        let chats = fixture["chats"].as_array().expect("chats");
        let scratch = std::env::temp_dir().join(format!("chatfmt-marker-chats-{}", std::process::id()));
        let mut seen = 0;
        for spec in fixture["tokenizers"].as_array().expect("tokenizers") {
            let name = spec["name"].as_str().expect("name");
            let mine: Vec<&Json> = chats.iter().filter(|c| c["tokenizer"] == name).collect();
            if mine.is_empty() {
                continue;
            }
            let tok = tokenizer(&kit, spec, &scratch);
            let template = ChatTemplate::new(source, tok.special_tokens().clone());
            let opts = chat::ChatTokenizeOptions {
                encode: EncodeOptions {
                    assistant_masks: true,
                    ..EncodeOptions::default()
                },
                sanitize_control_tokens: None,
                spans: None,
            };
            for c in mine {
                let messages = c["messages"].as_array().expect("messages").clone();
                let out = chat::tokenize_chats(&template, &tok, &[&messages], &ApplyOptions::default(), &opts)
                    .expect("tokenizes");
                let want_ids: Vec<u32> = serde_json::from_value(c["input_ids"].clone()).expect("ids");
                let want_mask: Vec<u8> = serde_json::from_value(c["assistant_masks"].clone()).expect("mask");
                let got = &out[0].encoded;
                assert_eq!(got.input_ids, want_ids, "{name}: {messages:?}");
                assert_eq!(
                    got.assistant_masks.as_deref(),
                    Some(&want_mask[..]),
                    "{name}: {messages:?}"
                );
                seen += 1;
            }
        }
        assert!(seen >= 16, "chats checked: {seen}");
        std::fs::remove_dir_all(&scratch).ok();
    }
}
