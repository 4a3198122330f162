//! A `tokenizer.json` read once for the 1.0 pipeline. Its two big tables, the vocabulary and (when
//! already written as pairs) the merges, stay slices of the file's text; everything else is parsed
//! and upgraded to the canonical 1.0 format with `tokenizers::canonicalize_value`, which never reads
//! those tables. The canonical text is written with the tables spliced back in, so a 150k-entry
//! vocabulary is never built as a JSON tree (that tree was most of the loading time).

use crate::{Error, ErrorKind};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value as Json};
use std::fmt;
use std::ops::Range;

/// A parsed `tokenizer.json`: the tree of its small parts plus the spans of its raw tables.
pub(crate) struct TokenizerJson {
    text: String,
    /// The file without its raw tables (an empty `{}` / `[]` in their place).
    tree: Json,
    /// `model.vocab` in `text`, when it is an object or an array.
    vocab: Option<Range<usize>>,
    /// `model.merges` in `text`, when every merge is already a `[a, b]` pair (the canonical form).
    merges: Option<Range<usize>>,
}

/// The members of a JSON object, unparsed.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
                    out.push((k, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// Whether every element of a JSON array is itself an array (merges written as pairs).
struct AllArrays(bool);

impl<'de> Deserialize<'de> for AllArrays {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AllArrays;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                let mut all = true;
                while let Some(item) = seq.next_element::<&'de RawValue>()? {
                    all &= item.get().starts_with('[');
                }
                Ok(AllArrays(all))
            }
        }
        d.deserialize_seq(V)
    }
}

/// Where `part` (a slice of `whole`) starts and ends in it.
fn range_in(whole: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

impl TokenizerJson {
    /// Parses the text of a `tokenizer.json`.
    pub fn parse(text: String) -> Result<TokenizerJson, Error> {
        let json_error = |e: serde_json::Error| Error::json(&e);
        let (tree, vocab, merges) = {
            let top: Members = serde_json::from_str(&text).map_err(json_error)?;
            let (mut vocab, mut merges) = (None, None);
            let mut tree = Map::new();
            for (key, raw) in top.0 {
                let value = if key == "model" && raw.get().starts_with('{') {
                    let model: Members = serde_json::from_str(raw.get()).map_err(json_error)?;
                    let mut fields = Map::new();
                    for (k, v) in model.0 {
                        let s = v.get();
                        let kept = match k.as_str() {
                            "vocab" if s.starts_with('{') => Some((&mut vocab, Json::Object(Map::new()))),
                            "vocab" if s.starts_with('[') => Some((&mut vocab, Json::Array(Vec::new()))),
                            "merges" if s.starts_with('[') => {
                                let AllArrays(pairs) = serde_json::from_str(s).map_err(json_error)?;
                                pairs.then(|| (&mut merges, Json::Array(Vec::new())))
                            }
                            _ => None,
                        };
                        let field = match kept {
                            Some((slot, placeholder)) => {
                                *slot = Some(range_in(&text, s));
                                placeholder
                            }
                            None => serde_json::from_str(s).map_err(json_error)?,
                        };
                        fields.insert(k, field);
                    }
                    Json::Object(fields)
                } else {
                    serde_json::from_str(raw.get()).map_err(json_error)?
                };
                tree.insert(key, value);
            }
            (Json::Object(tree), vocab, merges)
        };
        Ok(TokenizerJson {
            text,
            tree,
            vocab,
            merges,
        })
    }

    /// Everything but the raw tables, to read or edit before [`TokenizerJson::canonicalize`].
    pub fn tree(&self) -> &Json {
        &self.tree
    }

    pub fn tree_mut(&mut self) -> &mut Json {
        &mut self.tree
    }

    /// The text of `model.vocab`, when it is an object or an array.
    pub fn vocab_text(&self) -> Option<&str> {
        self.vocab.clone().map(|r| &self.text[r])
    }

    /// The text of `model.merges`, when every merge is already a `[a, b]` pair.
    pub fn merges_text(&self) -> Option<&str> {
        self.merges.clone().map(|r| &self.text[r])
    }

    /// Upgrades the tree to the canonical 1.0 format (the raw tables need no upgrade).
    pub fn canonicalize(&mut self) -> Result<(), Error> {
        tokenizers::canonicalize_value(&mut self.tree)
            .map_err(|e| Error::new(ErrorKind::Unsupported, "cannot upgrade to the tokenizers 1.0 format").caused_by(e))
    }

    /// The whole file as JSON text, raw tables included, with the top-level members in `replace`
    /// replaced.
    pub fn to_text(&self, replace: &[(&str, Json)]) -> String {
        let mut out = String::with_capacity(self.text.len() + 1024);
        match &self.tree {
            Json::Object(top) => push_object(&mut out, top, |out, key, value| {
                let value = replace.iter().find(|(k, _)| *k == key).map_or(value, |(_, v)| v);
                match (key, value) {
                    ("model", Json::Object(model)) => push_object(out, model, |out, key, value| {
                        let raw = match key {
                            "vocab" => self.vocab.clone(),
                            "merges" => self.merges.clone(),
                            _ => None,
                        };
                        match raw {
                            Some(r) => out.push_str(&self.text[r]),
                            None => push_json(out, value),
                        }
                    }),
                    _ => push_json(out, value),
                }
            }),
            other => push_json(&mut out, other),
        }
        out
    }
}

/// Writes a JSON object, each member's value by `push_value`.
fn push_object(out: &mut String, map: &Map<String, Json>, mut push_value: impl FnMut(&mut String, &str, &Json)) {
    out.push('{');
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_json(out, &Json::String(key.clone()));
        out.push(':');
        push_value(out, key, value);
    }
    out.push('}');
}

fn push_json(out: &mut String, value: &Json) {
    // Serializing a `Value` into a string cannot fail.
    out.push_str(&serde_json::to_string(value).unwrap_or_default());
}

/// Reads a vocabulary's text: `{"token": id, ...}` (BPE, WordPiece, WordLevel) or
/// `[["token", score], ...]` (Unigram, ids in order). Calls `each(token, id)` per entry.
pub(crate) fn read_vocab(text: &str, mut each: impl FnMut(&str, u32)) -> Result<(), Error> {
    struct V<'f, F>(&'f mut F);
    impl<'de, F: FnMut(&str, u32)> Visitor<'de> for V<'_, F> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object of token ids or an array of [token, score] pairs")
        }
        fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
            while let Some(token) = map.next_key::<Token>()? {
                let id: u64 = map
                    .next_value()
                    .map_err(|_| de::Error::custom(format_args!("model.vocab[{:?}] is not an integer id", token.0)))?;
                let id = u32::try_from(id)
                    .map_err(|_| de::Error::custom(format_args!("model.vocab[{:?}]: id {id} is too large", token.0)))?;
                (self.0)(&token.0, id);
            }
            Ok(())
        }
        fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
            let mut id = 0u32;
            while let Some((token, _score)) = seq
                .next_element::<(Token, IgnoredAny)>()
                .map_err(|_| de::Error::custom(format_args!("model.vocab[{id}] is not a [token, score] pair")))?
            {
                (self.0)(&token.0, id);
                id += 1;
            }
            Ok(())
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_any(V(&mut each))
        .map_err(|e| Error::new(ErrorKind::Malformed, e.to_string()))
}

/// A token string, borrowed from the file when it has no escapes.
struct Token<'a>(std::borrow::Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Token<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Token<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a token string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Token(s.into()))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Token(s.to_string().into()))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{"version":"1.0","added_tokens":[{"id":3,"content":"<x>"}],
        "pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},
        "model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}}"#;

    #[test]
    fn canonical_text_equals_canonicalizing_the_whole_tree() {
        for file in [FILE.to_string(), FILE.replace(r#"["a b"]"#, r#"[["a","b"]]"#)] {
            let mut t = TokenizerJson::parse(file.clone()).unwrap();
            t.canonicalize().unwrap();
            let mut whole: Json = serde_json::from_str(&file).unwrap();
            tokenizers::canonicalize_value(&mut whole).unwrap();
            let ours: Json = serde_json::from_str(&t.to_text(&[])).unwrap();
            assert_eq!(ours, whole);
            let plain: Json = serde_json::from_str(&t.to_text(&[("added_tokens", serde_json::json!([]))])).unwrap();
            assert_eq!(plain["added_tokens"], serde_json::json!([]));
        }
    }

    #[test]
    fn vocabularies_are_read_in_both_shapes() {
        let mut got = Vec::new();
        read_vocab(r#"{"a":0,"\u00e9":1}"#, |t, id| got.push((t.to_string(), id))).unwrap();
        read_vocab(r#"[["x",-1.5],["y",0]]"#, |t, id| got.push((t.to_string(), id))).unwrap();
        assert_eq!(
            got,
            [("a".into(), 0), ("é".into(), 1), ("x".into(), 0), ("y".into(), 1)]
        );
        let e = read_vocab(r#"{"a":"zero"}"#, |_, _| {}).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Malformed);
        assert!(e.message().contains("not an integer id"), "{e}");
    }
}
