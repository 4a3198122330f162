//! The added tokens transformers 5 takes from `tokenizer_config.json` (and `special_tokens_map.json`)
//! when it loads a tokenizer, written into `tokenizer.json`'s `added_tokens` before the tokenizer is
//! built. `TokenizersBackend.__init__` adds every `added_tokens_decoder` entry, then the special
//! tokens of its `special_tokens_map` (named and model-specific) and the extra special tokens whose
//! text no added token has, a token that has a `special_tokens_map` text being made special (its
//! `_post_init`, which would add the special tokens again, is never called). The addition is `tokenizers`' `add_tokens`: a token whose text and flags are
//! already there is skipped, one whose text is there takes that id with the new flags, and a new one
//! takes its vocabulary id or else the next free id (whatever id the config gives).

use crate::tokenizer_json::{read_vocab, TokenizerJson};
use crate::{Error, ErrorKind};
use serde_json::{Map, Value as Json};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The flags of `tokenizers`' `AddedToken`, besides its text.
const FLAGS: [&str; 5] = ["single_word", "lstrip", "rstrip", "normalized", "special"];

/// A token as `tokenizers`' `AddedToken` holds it: its text and [`FLAGS`] (no id).
#[derive(Clone, PartialEq)]
struct Token(Map<String, Json>);

impl Token {
    /// Python's `AddedToken(content, **flags)`: `normalized` defaults to `not special`, the others to
    /// false.
    fn new(content: &str, flags: Option<&Map<String, Json>>) -> Token {
        let flag = |key: &str| flags.and_then(|f| f.get(key)).and_then(Json::as_bool);
        let special = flag("special").unwrap_or(false);
        let mut t = Map::new();
        t.insert("content".into(), Json::String(content.to_string()));
        for key in ["single_word", "lstrip", "rstrip"] {
            t.insert(key.into(), Json::Bool(flag(key).unwrap_or(false)));
        }
        t.insert("normalized".into(), Json::Bool(flag("normalized").unwrap_or(!special)));
        t.insert("special".into(), Json::Bool(special));
        Token(t)
    }

    /// A `tokenizer.json` entry or an `AddedToken` object of a config file.
    fn of(entry: &Json) -> Option<Token> {
        let o = entry.as_object()?;
        Some(Token::new(o.get("content")?.as_str()?, Some(o)))
    }

    /// `AddedToken(text, special=True)`, as transformers makes a special token given as text.
    fn special(content: &str) -> Token {
        let mut flags = Map::new();
        flags.insert("special".into(), Json::Bool(true));
        Token::new(content, Some(&flags))
    }

    fn content(&self) -> &str {
        self.0["content"].as_str().unwrap_or_default()
    }

    fn set_special(&mut self) {
        self.0.insert("special".into(), Json::Bool(true));
    }
}

/// A named or extra special token as the config gives it: its text, or an `AddedToken` object.
enum Value {
    Text(String),
    Token(Token),
}

impl Value {
    fn of(v: &Json) -> Option<Value> {
        match v {
            Json::String(s) => Some(Value::Text(s.clone())),
            other => Token::of(other).map(Value::Token),
        }
    }

    fn content(&self) -> &str {
        match self {
            Value::Text(s) => s,
            Value::Token(t) => t.content(),
        }
    }
}

/// The special tokens transformers 5 adds when no added token has their text: those of its
/// `special_tokens_map` (`special`, the named and model-specific ones, as templates see them; see
/// [`chatfmt::template::folder_special_tokens`]), then the extra ones of the config's
/// `extra_special_tokens` list (`additional_special_tokens` when that is empty), and, when the config
/// has no `added_tokens_decoder`, of `special_tokens_map.json`'s. A token the config gives as an
/// `AddedToken` object keeps that object's flags.
fn special_values(config: &Json, dir: &Path, special: &Map<String, Json>) -> (Vec<Value>, Vec<Value>) {
    let legacy = match config.get("added_tokens_decoder") {
        Some(_) => None,
        None => std::fs::read_to_string(dir.join("special_tokens_map.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Json>(&t).ok()),
    };
    let extra_list = |c: &Json| -> Vec<Json> {
        let list = match c.get("extra_special_tokens") {
            Some(Json::Array(a)) if !a.is_empty() => Some(a),
            _ => c.get("additional_special_tokens").and_then(Json::as_array),
        };
        list.cloned().unwrap_or_default()
    };
    // The `AddedToken` object a config file gives for `text`, among its token entries.
    let given = |text: &str| -> Option<Token> {
        (legacy.iter().flat_map(token_objects).chain(token_objects(config)))
            .filter_map(Token::of)
            .find(|t| t.content() == text)
    };
    let named = (special.values().filter_map(Json::as_str))
        .map(|text| given(text).map_or_else(|| Value::Text(text.to_string()), Value::Token))
        .collect();
    let mut extra = extra_list(config);
    for t in legacy.as_ref().map(extra_list).unwrap_or_default() {
        if !extra.contains(&t) {
            extra.push(t);
        }
    }
    (named, extra.iter().filter_map(Value::of).collect())
}

/// The objects of a config file's top level and of its `extra_special_tokens` object: where it gives
/// a token as an `AddedToken`.
fn token_objects(c: &Json) -> impl Iterator<Item = &Json> {
    let top = c.as_object().into_iter().flat_map(|o| o.values());
    let extra = (c.get("extra_special_tokens").and_then(Json::as_object).into_iter()).flat_map(|o| o.values());
    top.chain(extra).filter(|v| v.is_object())
}

/// `tokenizer.json`'s added tokens, with `tokenizers`' `add_tokens`.
struct Added {
    /// Each token with its id, in `tokenizer.json`'s order.
    tokens: Vec<(u32, Token)>,
    /// Where each text is in `tokens`.
    index: HashMap<String, usize>,
    /// The model's ids of the texts the config names.
    vocab: HashMap<String, u32>,
    vocab_size: u32,
}

impl Added {
    /// `tokenizers`' `add_tokens`: the next free id is fixed when the call starts.
    fn add(&mut self, tokens: Vec<Token>) {
        let mut next_id = match self.tokens.iter().map(|&(id, _)| id).max() {
            Some(max) if max >= self.vocab_size || self.vocab_size == 0 => max + 1,
            _ => self.vocab_size,
        };
        for token in tokens {
            if token.content().is_empty() {
                continue;
            }
            match self.index.get(token.content()).copied() {
                Some(i) if self.tokens[i].1 == token => {}
                Some(i) => {
                    // A special token stays special (`tokenizers` keeps it in its special set).
                    let mut token = token;
                    if self.tokens[i].1 .0["special"] == true {
                        token.set_special();
                    }
                    self.tokens[i].1 = token;
                }
                None => {
                    let id = self.vocab.get(token.content()).copied().unwrap_or_else(|| {
                        next_id += 1;
                        next_id - 1
                    });
                    self.index.insert(token.content().to_string(), self.tokens.len());
                    self.tokens.push((id, token));
                }
            }
        }
    }
}

/// Writes into `json`'s `added_tokens` what transformers 5 adds from the folder's config files (see
/// the module documentation).
pub(crate) fn add(
    json: &mut TokenizerJson,
    config: &Json,
    dir: &Path,
    special: &Map<String, Json>,
) -> Result<(), Error> {
    let present: Vec<(u32, Token)> = (json.tree()["added_tokens"].as_array().into_iter().flatten())
        .filter_map(|t| Some((u32::try_from(t["id"].as_u64()?).ok()?, Token::of(t)?)))
        .collect();
    // The `added_tokens_decoder` transformers passes on: the config's, else `tokenizer.json`'s added
    // tokens. Its check for tokens already there compares them with the ids, so it keeps them all.
    let mut decoder: Vec<(u64, Token)> = match config.get("added_tokens_decoder").and_then(Json::as_object) {
        Some(map) => (map.iter())
            .map(|(id, t)| match (id.parse(), Token::of(t)) {
                (Ok(id), Some(t)) => Ok((id, t)),
                _ => Err(Error::new(
                    ErrorKind::Malformed,
                    format!(
                        "added_tokens_decoder[{id:?}] needs an integer key and an object with a string content, as transformers does"
                    ),
                )
                .at(&dir.join("tokenizer_config.json"))),
            })
            .collect::<Result<_, _>>()?,
        None => present.iter().map(|(id, t)| (u64::from(*id), t.clone())).collect(),
    };
    decoder.sort_by_key(|(id, _)| *id);
    let mut tokens: Vec<Token> = decoder.into_iter().map(|(_, t)| t).collect();
    // A named special token given as text is the decoder's token of that text when there is one,
    // so only the others can be missing; those are added as special tokens.
    let by_text: HashMap<&str, &Token> = present.iter().map(|(_, t)| (t.content(), t)).collect();
    let (named, extra) = special_values(config, dir, special);
    for v in named.iter().chain(&extra) {
        let text = v.content();
        if by_text.contains_key(text) || tokens.iter().any(|t| t.content() == text) {
            continue;
        }
        tokens.push(match v {
            Value::Text(s) => Token::special(s),
            Value::Token(t) => t.clone(),
        });
    }
    // Every token whose text a named special token has becomes special.
    let named: Vec<&str> = named.iter().map(Value::content).collect();
    for t in &mut tokens {
        if named.contains(&t.content()) {
            t.set_special();
        }
    }
    if tokens.iter().all(|t| by_text.get(t.content()) == Some(&t)) {
        return Ok(());
    }

    let wanted: HashSet<String> = (tokens.iter().map(Token::content))
        .filter(|c| !by_text.contains_key(c))
        .map(str::to_string)
        .collect();
    drop(by_text);
    let mut vocab = HashMap::new();
    let mut vocab_size = 0u32;
    if let Some(text) = json.vocab_text() {
        read_vocab(text, |t, id| {
            vocab_size += 1;
            if wanted.contains(t) {
                vocab.insert(t.to_string(), id);
            }
        })?;
    }
    let index = (present.iter().enumerate())
        .map(|(i, (_, t))| (t.content().to_string(), i))
        .collect();
    let mut added = Added {
        tokens: present,
        index,
        vocab,
        vocab_size,
    };
    added.add(tokens);
    let list = (added.tokens.into_iter())
        .map(|(id, t)| {
            let mut entry = Map::new();
            entry.insert("id".into(), Json::from(id));
            entry.insert("content".into(), t.0["content"].clone());
            for key in FLAGS {
                entry.insert(key.into(), t.0[key].clone());
            }
            Json::Object(entry)
        })
        .collect();
    if let Some(top) = json.tree_mut().as_object_mut() {
        top.insert("added_tokens".into(), Json::Array(list));
    }
    Ok(())
}
