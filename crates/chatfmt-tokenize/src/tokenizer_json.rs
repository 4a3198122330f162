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

/// Structural reading of a tokenizer.json: values are delimited by matching brackets and skipping
/// strings, in one quick pass that neither checks nor decodes them. The vocabulary and merges are
/// most of the file; they are checked when they are read (each table by the parser that reads it),
/// and every other member is parsed by serde_json. Text the scan cannot follow is left to
/// serde_json, which reports what is wrong with it.
mod scan {
    fn skip_ws(b: &[u8], mut i: usize) -> usize {
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        i
    }

    /// The end of the string whose opening quote is at `i`.
    fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
        i += 1;
        loop {
            i += b.get(i..)?.iter().position(|&c| c == b'"' || c == b'\\')?;
            match b[i] {
                b'"' => return Some(i + 1),
                _ => i += 2,
            }
        }
    }

    /// The end of the value starting at `i`, and whether it is an array whose every element is an
    /// array.
    fn value_end(b: &[u8], i: usize) -> Option<(usize, bool)> {
        match *b.get(i)? {
            b'"' => Some((string_end(b, i)?, false)),
            open @ (b'{' | b'[') => {
                let (mut depth, mut j, mut arrays) = (0usize, i, open == b'[');
                loop {
                    if arrays && depth == 1 {
                        let c = *b.get(j)?;
                        if !matches!(c, b'[' | b']' | b',') && !c.is_ascii_whitespace() {
                            arrays = false;
                        }
                    } else {
                        // Numbers, separators and whitespace need no look.
                        j += b
                            .get(j..)?
                            .iter()
                            .position(|&c| matches!(c, b'"' | b'{' | b'}' | b'[' | b']'))?;
                    }
                    let c = b[j];
                    match c {
                        b'"' => j = string_end(b, j)?,
                        b'{' | b'[' => {
                            depth += 1;
                            j += 1;
                        }
                        b'}' | b']' => {
                            depth = depth.checked_sub(1)?;
                            j += 1;
                            if depth == 0 {
                                return Some((j, arrays));
                            }
                        }
                        _ => j += 1,
                    }
                }
            }
            _ => {
                let len = b[i..]
                    .iter()
                    .position(|&c| matches!(c, b',' | b'}' | b']') || c.is_ascii_whitespace());
                Some((len.map_or(b.len(), |n| i + n), false))
            }
        }
    }

    /// A member's value: its text, whether it is an array of arrays, and for the `model` object of
    /// the document, its members.
    pub(super) struct Value<'a> {
        pub text: &'a str,
        pub arrays: bool,
        pub members: Option<Vec<(String, Value<'a>)>>,
    }

    impl Value<'_> {
        /// The value whose text (valid JSON) is `text`.
        pub fn of(text: &str) -> Value<'_> {
            let arrays = value_end(text.as_bytes(), 0).is_some_and(|(_, arrays)| arrays);
            Value {
                text,
                arrays,
                members: None,
            }
        }
    }

    /// The members of the object starting at `start` (keys decoded) and its end, reading the
    /// members of its member `descend` too.
    fn object<'a>(text: &'a str, start: usize, descend: Option<&str>) -> Option<(Vec<(String, Value<'a>)>, usize)> {
        let b = text.as_bytes();
        if b.get(start) != Some(&b'{') {
            return None;
        }
        let mut i = skip_ws(b, start + 1);
        let mut out = Vec::new();
        if b.get(i) == Some(&b'}') {
            return Some((out, i + 1));
        }
        loop {
            let end = string_end(b, i)?;
            let raw = text.get(i..end)?;
            let key: String = match raw.contains('\\') {
                true => serde_json::from_str(raw).ok()?,
                false => raw.get(1..raw.len() - 1)?.to_string(),
            };
            i = skip_ws(b, end);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = skip_ws(b, i + 1);
            let (end, value) = match descend == Some(key.as_str()) && b.get(i) == Some(&b'{') {
                true => {
                    let (members, end) = object(text, i, None)?;
                    let value = Value {
                        text: text.get(i..end)?,
                        arrays: false,
                        members: Some(members),
                    };
                    (end, value)
                }
                false => {
                    let (end, arrays) = value_end(b, i)?;
                    let value = Value {
                        text: text.get(i..end)?,
                        arrays,
                        members: None,
                    };
                    (end, value)
                }
            };
            out.push((key, value));
            i = skip_ws(b, end);
            match b.get(i) {
                Some(b',') => i = skip_ws(b, i + 1),
                Some(b'}') => return Some((out, i + 1)),
                _ => return None,
            }
        }
    }

    /// The members of the JSON document `text` (an object), with those of its `model` member;
    /// `None` when the scan cannot follow the text.
    pub(super) fn members(text: &str) -> Option<Vec<(String, Value<'_>)>> {
        let b = text.as_bytes();
        let (members, end) = object(text, skip_ws(b, 0), Some("model"))?;
        (skip_ws(b, end) == b.len()).then_some(members)
    }
}

/// Where `part` (a slice of `whole`) starts and ends in it.
fn range_in(whole: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

/// The members of a JSON object by serde_json (which reports what is wrong with the text).
/// A JSON error in `part`, a slice of the file's text `whole`, at its line and column in the file.
fn error_in(whole: &str, part: &str, e: &serde_json::Error) -> Error {
    let before = &whole[..range_in(whole, part).start];
    let line = before.matches('\n').count() + e.line();
    let column = match e.line() {
        1 => before.len() - before.rfind('\n').map_or(0, |i| i + 1) + e.column(),
        _ => e.column(),
    };
    Error::json_at(e, line, column)
}

fn serde_members<'t>(whole: &str, text: &'t str) -> Result<Vec<(String, scan::Value<'t>)>, Error> {
    let Members(members) = serde_json::from_str(text).map_err(|e| error_in(whole, text, &e))?;
    Ok(members
        .into_iter()
        .map(|(k, v)| {
            let text = v.get();
            (k, scan::Value::of(text))
        })
        .collect())
}

impl TokenizerJson {
    /// Parses the text of a `tokenizer.json`.
    pub fn parse(text: String) -> Result<TokenizerJson, Error> {
        if !text.trim_start().starts_with('{') {
            return Err(Error::new(
                ErrorKind::Malformed,
                "not a Hugging Face tokenizer.json: the file is not a JSON object",
            ));
        }
        let (tree, vocab, merges) = {
            let top = match scan::members(&text) {
                Some(members) => members,
                None => serde_members(&text, &text)?,
            };
            let (mut vocab, mut merges) = (None, None);
            let mut tree = Map::new();
            for (key, raw) in top {
                let value = if key == "model" && raw.text.starts_with('{') {
                    let model = match raw.members {
                        Some(members) => members,
                        None => serde_members(&text, raw.text)?,
                    };
                    let mut fields = Map::new();
                    for (k, v) in model {
                        let s = v.text;
                        let kept = match k.as_str() {
                            "vocab" if s.starts_with('{') => Some((&mut vocab, Json::Object(Map::new()))),
                            "vocab" if s.starts_with('[') => Some((&mut vocab, Json::Array(Vec::new()))),
                            "merges" if v.arrays => Some((&mut merges, Json::Array(Vec::new()))),
                            _ => None,
                        };
                        let field = match kept {
                            Some((slot, placeholder)) => {
                                *slot = Some(range_in(&text, s));
                                placeholder
                            }
                            None => serde_json::from_str(s).map_err(|e| error_in(&text, s, &e))?,
                        };
                        fields.insert(k, field);
                    }
                    Json::Object(fields)
                } else {
                    serde_json::from_str(raw.text).map_err(|e| error_in(&text, raw.text, &e))?
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

    /// Whether the file's text holds `needle` anywhere.
    pub fn mentions(&self, needle: &str) -> bool {
        self.text.contains(needle)
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
        self.text_of(&self.tree, replace)
    }

    /// [`to_text`](Self::to_text) with `tree` (an earlier form of this file's tree, whose raw tables
    /// are this file's) in place of the tree.
    pub fn text_of(&self, tree: &Json, replace: &[(&str, Json)]) -> String {
        let mut out = String::with_capacity(self.text.len() + 1024);
        match tree {
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

    /// The quick scan of `model` finds the tables and members serde_json finds, whatever the spacing,
    /// escapes and brackets inside strings.
    #[test]
    fn model_members_are_found_as_serde_json_finds_them() {
        let file = r#"{"version":"1.0",
            "model" : { "type" : "BPE" , "voc\u0061b" : { "[{\"" : 0 , "a]}\\" : 1, "x" :2 } ,
              "merges" : [ [ "[{\"", "a]}\\" ] ,["x","x"] ], "dropout" : null, "n": -1.5e3, "t": true,
              "k": {"a": [1, {"b": "}"}]} } }"#;
        let t = TokenizerJson::parse(file.to_string()).unwrap();
        let whole: Json = serde_json::from_str(file).unwrap();
        let model_text = &file[file.find("{ \"type").unwrap()..file.rfind('}').unwrap()];
        let scanned: Vec<(String, &str, bool)> = (scan::members(file).unwrap().into_iter())
            .find(|(k, _)| k == "model")
            .and_then(|(_, v)| v.members)
            .unwrap()
            .into_iter()
            .map(|(k, v)| (k, v.text, v.arrays))
            .collect();
        let parsed: Vec<(String, &str, bool)> = (serde_members(model_text, model_text).unwrap().into_iter())
            .map(|(k, v)| (k, v.text, v.arrays))
            .collect();
        assert_eq!(scanned, parsed);
        assert_eq!(scanned.iter().filter(|m| m.2).count(), 1, "{scanned:?}");
        // Text the scan cannot follow is reported by serde_json.
        for bad in [&file[..file.len() - 1], &format!("{file} x"), "[1]", r#"{"a" 1}"#] {
            assert!(scan::members(bad).is_none(), "{bad}");
            assert!(TokenizerJson::parse(bad.to_string()).is_err(), "{bad}");
        }
        assert_eq!(
            serde_json::from_str::<Json>(t.vocab_text().unwrap()).unwrap(),
            whole["model"]["vocab"]
        );
        assert_eq!(
            serde_json::from_str::<Json>(t.merges_text().unwrap()).unwrap(),
            whole["model"]["merges"]
        );
        let mut model = whole["model"].clone();
        model["vocab"] = serde_json::json!({});
        model["merges"] = serde_json::json!([]);
        assert_eq!(t.tree()["model"], model);
        // Merges that are not all pairs stay in the tree.
        let mixed = file.replace(r#"["x","x"]"#, r#""x x""#);
        let t = TokenizerJson::parse(mixed.clone()).unwrap();
        assert!(t.merges_text().is_none());
        let whole: Json = serde_json::from_str(&mixed).unwrap();
        assert_eq!(t.tree()["model"]["merges"], whole["model"]["merges"]);
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
