//! Building the `tokenizers` pipeline of a canonical tokenizer.json. A BPE model without normalizers
//! (Qwen2/3 once NFC is left out) is built from the vocabulary and merges read straight from the
//! file's text, on two threads, while a copy of the file without those tables yields the other
//! components; this skips writing the 150k-entry tables into one JSON text and `tokenizers` parsing
//! it again. Every other tokenizer goes through `tokenizers::from_json`. Either way the model's own
//! construction (merge map, vocabulary store, byte-level tables) is single-threaded, so the caller's
//! other loading work runs beside it.

use crate::tokenizer_json::{read_vocab, TokenizerJson};
use serde_json::{Map, Value as Json};
use tokenizers::models::bpe::{BpeConfig, Merges, PipelineBPE, Vocab};
use tokenizers::pipeline::{NormalizerChain, PipelineModel, PipelineTokenizer};
use tokenizers::vocab::bucket_added_vocabulary::{AddedToken, AddedVocabulary};

/// The pipeline of `json` (canonicalized), with the top-level members in `replace` replaced, and
/// the result of `beside`, run on another thread while the model is built (not run when reading
/// the tables fails first).
pub(crate) fn build<T: Send>(
    json: &TokenizerJson,
    replace: &[(&str, Json)],
    beside: impl FnOnce() -> T + Send,
) -> Result<(PipelineTokenizer, std::thread::Result<T>), tokenizers::Error> {
    match Direct::of(json, replace) {
        Some(direct) => direct.build(beside),
        None => {
            let text = json.to_text(replace);
            let (pipeline, other) = alongside(|| tokenizers::from_json(&text), beside);
            Ok((pipeline?, other))
        }
    }
}

/// `main()` on this thread and `other()` on another.
fn alongside<A, T: Send>(main: impl FnOnce() -> A, other: impl FnOnce() -> T + Send) -> (A, std::thread::Result<T>) {
    std::thread::scope(|s| {
        let other = s.spawn(other);
        let a = main();
        (a, other.join())
    })
}

/// What the direct construction reads besides the tree: the tables' text.
struct Direct<'a> {
    /// The file's small members (tables left out), `replace` applied.
    top: Map<String, Json>,
    vocab: &'a str,
    /// The merges' text, when they stayed raw; else they are in the tree.
    merges: Option<&'a str>,
    added: Vec<AddedToken>,
}

impl<'a> Direct<'a> {
    /// `Some` when the tokenizer is one the direct construction covers: version 2.0, a BPE model
    /// with its vocabulary as an object and a `byte_level` flag, no normalizer, well-formed added
    /// tokens. Anything else (including malformed files) takes `from_json`, which reports the error.
    fn of(json: &'a TokenizerJson, replace: &[(&str, Json)]) -> Option<Direct<'a>> {
        let mut top = json.tree().as_object()?.clone();
        for (key, value) in replace {
            top.insert(key.to_string(), value.clone());
        }
        let model = top.get("model")?;
        let plain = top.get("version")?.as_str() == Some("2.0")
            && model.get("type")?.as_str() == Some("BPE")
            && model.get("byte_level")?.is_boolean()
            && model.get("files").is_none()
            && top.get("normalizer").is_none_or(Json::is_null);
        let vocab = json.vocab_text().filter(|v| v.starts_with('{'))?;
        if !plain {
            return None;
        }
        let added = added_tokens(top.get("added_tokens"))?;
        Some(Direct {
            top,
            vocab,
            merges: json.merges_text(),
            added,
        })
    }

    fn build<T: Send>(
        self,
        beside: impl FnOnce() -> T + Send,
    ) -> Result<(PipelineTokenizer, std::thread::Result<T>), tokenizers::Error> {
        let model = &self.top["model"];
        // The other components, from the file without its model or added tokens.
        let mut skeleton = Map::new();
        for (key, value) in &self.top {
            let value = match key.as_str() {
                // The smallest model `tokenizers` builds (an empty vocabulary makes it panic).
                "model" => serde_json::json!({"type": "BPE", "byte_level": false, "vocab": {"a": 0}, "merges": []}),
                "added_tokens" => Json::Array(Vec::new()),
                _ => value.clone(),
            };
            skeleton.insert(key.clone(), value);
        }
        let skeleton = Json::Object(skeleton);
        let (vocab, merges, rest) = std::thread::scope(|s| {
            let vocab = s.spawn(|| {
                // Every entry has a colon, so this is a little more than the entries.
                let mut vocab = Vocab::with_capacity(self.vocab.bytes().filter(|&b| b == b':').count());
                read_vocab(self.vocab, |token, id| {
                    vocab.insert(token.to_string(), id);
                })
                .map(|()| vocab)
            });
            let merges = s.spawn(|| match self.merges {
                Some(text) => {
                    serde_json::from_str::<Merges>(text).map_err(|e| tokenizers::Error::from(crate::Error::json(&e)))
                }
                None => tree_merges(&model["merges"]),
            });
            let rest = tokenizers::from_json(&skeleton.to_string()).and_then(|skeleton| {
                let post = tokenizers::post_processor_from_json(&self.top["post_processor"].to_string())?;
                Ok((skeleton, post))
            });
            let joined = "reading the tokenizer's tables panicked";
            (
                vocab
                    .join()
                    .unwrap_or_else(|_| Err(crate::Error::new(crate::ErrorKind::Malformed, joined))),
                merges.join().unwrap_or_else(|_| Err(joined.into())),
                rest,
            )
        });
        let vocab = vocab.map_err(tokenizers::Error::from)?;
        if vocab.is_empty() {
            return Err("model.vocab is empty".into());
        }
        let (merges, (skeleton, post_processor)) = (merges?, rest?);
        // As `from_json`: added tokens in id order against the model's vocabulary, then the model.
        let mut added = AddedVocabulary::new();
        added.add_tokens(
            self.added,
            vocab.len(),
            |t| vocab.get(t).copied(),
            Some(&NormalizerChain(&[])),
        )?;
        let text = |key: &str| model.get(key).and_then(Json::as_str).map(str::to_string);
        let flag = |key: &str| model.get(key).and_then(Json::as_bool).unwrap_or_default();
        let config = BpeConfig {
            vocab,
            merges,
            byte_level: flag("byte_level"),
            unk_token: text("unk_token"),
            continuing_subword_prefix: text("continuing_subword_prefix"),
            end_of_word_suffix: text("end_of_word_suffix"),
            fuse_unk: flag("fuse_unk"),
            byte_fallback: flag("byte_fallback"),
            ignore_merges: flag("ignore_merges"),
            dropout: model.get("dropout").and_then(Json::as_f64).map(|p| p as f32),
            ..BpeConfig::default()
        };
        let (bpe, other) = alongside(|| PipelineBPE::from_config(config), beside);
        let pipeline = PipelineTokenizer::from_parts(
            added,
            Vec::new(),
            skeleton.get_pre_tokenizer().clone(),
            PipelineModel::BPE(bpe?),
            post_processor,
            skeleton.get_decoder().cloned(),
            skeleton.get_role_to_token().clone(),
            skeleton.get_padding().cloned(),
            skeleton.get_truncation().cloned(),
        );
        Ok((pipeline, other))
    }
}

/// Merges already in the tree (canonicalized from `"a b"` strings): `[a, b]` pairs of strings.
fn tree_merges(merges: &Json) -> Result<Merges, tokenizers::Error> {
    let bad = || -> tokenizers::Error { "a merge pair is not a pair of strings".into() };
    let list = merges.as_array().ok_or_else(bad)?;
    list.iter()
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([Json::String(a), Json::String(b)]) => Ok((a.clone(), b.clone())),
            _ => Err(bad()),
        })
        .collect()
}

/// The added tokens in id order (a stable sort, as `tokenizers` reads them), each with its six flags;
/// `None` when one lacks them.
fn added_tokens(list: Option<&Json>) -> Option<Vec<AddedToken>> {
    let Some(list) = list.filter(|l| !l.is_null()) else {
        return Some(Vec::new());
    };
    let mut tokens = Vec::new();
    for entry in list.as_array()? {
        let entry: &Map<String, Json> = entry.as_object()?;
        let id = u32::try_from(entry.get("id")?.as_u64()?).ok()?;
        let flag = |key: &str| entry.get(key)?.as_bool();
        tokens.push((
            id,
            AddedToken {
                content: entry.get("content")?.as_str()?.to_string(),
                single_word: flag("single_word")?,
                lstrip: flag("lstrip")?,
                rstrip: flag("rstrip")?,
                normalized: flag("normalized")?,
                special: flag("special")?,
            },
        ));
    }
    tokens.sort_by_key(|(id, _)| *id);
    Some(tokens.into_iter().map(|(_, t)| t).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use tokenizers::pipeline::{EncodeOptions, Override, PipelineToken};

    /// The tokens kit's tokenizers (`$CHATFMT_KITS` or `../shared/conformance` beside the repository).
    fn kit_tokenizers() -> Option<PathBuf> {
        let base = std::env::var_os("CHATFMT_KITS")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"));
        let dir = base.join("tokens/tokenizers");
        assert!(
            dir.exists() || std::env::var("CI").as_deref() != Ok("true"),
            "kit {} missing",
            dir.display()
        );
        dir.exists().then_some(dir)
    }

    /// The direct construction gives the pipeline `from_json` gives: the same ids, decoded text and
    /// token strings, on text with added tokens, byte-level characters and long words.
    #[test]
    fn direct_pipeline_equals_from_json() {
        let Some(kit) = kit_tokenizers() else {
            eprintln!("SKIPPED: tokens kit not found (set CHATFMT_KITS)");
            return;
        };
        let texts = [
            "<|im_start|>user\nHello, world! Über café naïve 東京 数据 ответ<|im_end|>\n<|im_start|>assistant\n",
            "  leading spaces\t\ttabs\n\n\nnewlines 12345 3.14159 don't we'll <think>\n</think>",
            "x".repeat(300).as_str(),
            "emoji 🦀🦀 and \u{0301}combining, <|endoftext|><|fim_prefix|>code() { return 1; }",
        ]
        .map(str::to_string);
        let mut direct_seen = 0;
        for name in ["qwen3", "llama3", "mistral-7b-v0.1"] {
            let text = std::fs::read_to_string(kit.join(name).join("tokenizer.json")).expect("tokenizer.json");
            let mut json = TokenizerJson::parse(text).expect("parses");
            json.canonicalize().expect("canonical");
            for replace in [vec![], vec![("normalizer", Json::Null)]] {
                let reference = tokenizers::from_json(&json.to_text(&replace)).expect("from_json");
                direct_seen += usize::from(Direct::of(&json, &replace).is_some());
                let (built, beside) = build(&json, &replace, || 7).expect("builds");
                assert_eq!(beside.ok(), Some(7));
                for (t, add_special_tokens) in texts.iter().flat_map(|t| [(t, false), (t, true)]) {
                    let opts = EncodeOptions {
                        add_special_tokens,
                        encode_special_tokens: false,
                        padding: Override::Off,
                        truncation: Override::Off,
                    };
                    let ids = |p: &PipelineTokenizer| -> Vec<u32> {
                        let mut out = Vec::new();
                        p.encode_into(t, &opts, &mut out).expect("encodes");
                        PipelineToken::cast_slice(&out).to_vec()
                    };
                    let (want, got) = (ids(&reference), ids(&built));
                    assert_eq!(got, want, "{name} {replace:?} {add_special_tokens}: {t:?}");
                    assert_eq!(built.decode(&got, false).ok(), reference.decode(&want, false).ok());
                    for &id in &got {
                        assert_eq!(built.get_model().id_to_token(id), reference.get_model().id_to_token(id));
                    }
                }
            }
        }
        // Qwen3 without its NFC normalizer, and llama3 either way, are built directly.
        assert!(direct_seen >= 2, "{direct_seen}");
    }
}
