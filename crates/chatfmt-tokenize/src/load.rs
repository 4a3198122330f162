//! Loading a model folder's tokenizer the way transformers 5 builds it: `tokenizer.json` plus the
//! settings of `tokenizer_config.json` (class pre-processing, padding side, pad token, limits).

use crate::encoder::Encoder;
use crate::pieces::{PieceSource, PieceTable};
use crate::tokenizer_json::TokenizerJson;
use crate::{ChatTokenizer, Error, ErrorKind, Side};
use serde_json::{Map, Value as Json};
use std::path::Path;
use std::sync::OnceLock;

/// transformers' "unset" `model_max_length` (`VERY_LARGE_INTEGER`); anything above `LARGE_INTEGER`
/// (1e20) means "no limit".
const LARGE_INTEGER: f64 = 1e20;

/// The files of a "slow" tokenizer, which transformers converts into a fast one when a folder has
/// no `tokenizer.json`.
const SLOW_TOKENIZER_FILES: [&str; 4] = ["tokenizer.model", "vocab.json", "vocab.txt", "spiece.model"];

fn read_text(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| {
        let what = match e.kind() {
            std::io::ErrorKind::InvalidData => "the file is not UTF-8 text, as a tokenizer's JSON files are",
            _ => "cannot read the file (a tokenizer folder needs tokenizer.json and tokenizer_config.json)",
        };
        Error::new(ErrorKind::Io, what).at(path).caused_by(e)
    })
}

fn read_json(path: &Path) -> Result<Json, Error> {
    serde_json::from_str(&read_text(path)?).map_err(|e| Error::json(&e).at(path))
}

/// Whether the decoder is a `Sequence` holding `ByteLevel` and other decoders, which the 1.0
/// pipeline decodes as `ByteLevel` alone when the vocabulary spells every byte (the other
/// decoders, a `Strip` for one, are skipped).
fn byte_level_in_sequence(tree: &Json) -> bool {
    let Some(decoder) = tree
        .get("decoder")
        .filter(|d| d.get("type") == Some(&Json::from("Sequence")))
    else {
        return false;
    };
    let steps = decoder
        .get("decoders")
        .and_then(Json::as_array)
        .map_or(&[][..], Vec::as_slice);
    steps.len() > 1 && steps.iter().any(|d| d.get("type") == Some(&Json::from("ByteLevel")))
}

/// Whether a ByteLevel decoder meets an added token it would rewrite: one with a character other
/// than printable ASCII, which the byte alphabet spells as itself. The 0.23 release passes added
/// tokens through the decoder like any other token (`ñé` becomes two bytes that are not UTF-8, `Ġx`
/// a space and `x`); the 1.0 pipeline writes them as they are.
fn byte_level_rewrites_added_tokens(tree: &Json) -> bool {
    let byte_level = tree.get("decoder").and_then(|d| d.get("type")) == Some(&Json::from("ByteLevel"));
    let rewritten = |t: &Json| {
        (t.get("content").and_then(Json::as_str)).is_some_and(|c| c.chars().any(|ch| !ch.is_ascii_graphic()))
    };
    byte_level
        && tree
            .get("added_tokens")
            .and_then(Json::as_array)
            .is_some_and(|ts| ts.iter().any(rewritten))
}

/// Whether the pre-tokenizer is `kind` or a `Sequence` holding one.
fn pre_tokenizer_has(tree: &Json, kind: &str) -> bool {
    fn has(p: &Json, kind: &str) -> bool {
        match p.get("type").and_then(Json::as_str) {
            Some("Sequence") => {
                (p.get("pretokenizers").and_then(Json::as_array)).is_some_and(|ps| ps.iter().any(|p| has(p, kind)))
            }
            t => t == Some(kind),
        }
    }
    tree.get("pre_tokenizer").is_some_and(|p| has(p, kind))
}

/// Whether a Metaspace pre-tokenizer meets an added token matched on normalized text. The 1.0
/// pipeline writes the marker onto the whole text before it cuts such tokens out (`<unk>x` gives
/// `▁`, `<unk>`, `x`); 0.23, and so transformers, cuts them out first and marks each piece after
/// (`<unk>`, `▁x`).
fn normalized_tokens_with_metaspace(tree: &Json) -> bool {
    let normalized = |t: &Json| {
        let special = t.get("special").and_then(Json::as_bool).unwrap_or(false);
        t.get("normalized").and_then(Json::as_bool).unwrap_or(!special)
    };
    pre_tokenizer_has(tree, "Metaspace")
        && (tree.get("added_tokens").and_then(Json::as_array)).is_some_and(|ts| ts.iter().any(normalized))
}

/// Whether a BPE model decorates its symbols in a way the 1.0 pipeline encodes differently: a
/// `continuing_subword_prefix` (with `fuse_unk` it does not fuse unknown `##` symbols, with byte
/// fallback it falls back on the bare character's bytes, after a ByteLevel pre-tokenizer it gives a
/// character whose `##` form is missing instead of the unknown token), or an `end_of_word_suffix`
/// on words of characters (no ByteLevel pre-tokenizer; openai-gpt's shape) or with byte fallback (it
/// answers a one-character word with the bare character's id, `a` for `a</w>`, and falls back on the
/// bare character's bytes). CLIP's shape, a suffix after a ByteLevel pre-tokenizer, encodes alike.
fn affixes_read_differently(tree: &Json) -> bool {
    let Some(model) = tree
        .get("model")
        .filter(|m| m.get("type").and_then(Json::as_str) == Some("BPE"))
    else {
        return false;
    };
    let set = |key: &str| model.get(key).and_then(Json::as_str).is_some_and(|s| !s.is_empty());
    let byte_fallback = model.get("byte_fallback").and_then(Json::as_bool).unwrap_or(false);
    set("continuing_subword_prefix")
        || (set("end_of_word_suffix") && (byte_fallback || !pre_tokenizer_has(tree, "ByteLevel")))
}

/// Whether a regex of the normalizer, pre-tokenizer or decoder (`{"Regex": pattern}`) may match
/// otherwise under the 1.0 pipeline's engine (`fancy-regex`) than under Oniguruma, which Python's
/// `tokenizers` (and so the 0.23 release) matches with, or does not build there at all (the pipeline
/// would panic on it).
fn regex_read_differently(tree: &Json) -> bool {
    fn differs(v: &Json) -> bool {
        match v {
            Json::Object(m) => m.iter().any(|(k, v)| match (k.as_str(), v) {
                ("Regex", Json::String(pattern)) => {
                    !regex_read_alike(pattern) || fancy_regex::Regex::new(pattern).is_err()
                }
                _ => differs(v),
            }),
            Json::Array(items) => items.iter().any(differs),
            _ => false,
        }
    }
    ["normalizer", "pre_tokenizer", "decoder"]
        .iter()
        .any(|key| tree.get(*key).is_some_and(differs))
}

/// Whether `pattern` keeps to the syntax both engines read alike: literals, `.`, alternation,
/// groups (`(?:`, `(?i:`, lookaround), greedy and lazy repetition, classes of literals and ranges
/// (negated or not), `\s`, `\S`, `\p{Name}`, `\P{Name}`, control and hexadecimal escapes and
/// escaped punctuation: the shape of the patterns real tokenizers split with. Everything else (`\w`,
/// `\d`, `\b`, `^`, `$`, POSIX classes, Unicode blocks, grapheme clusters, possessive repetition,
/// inline options other than `i`) differs between Oniguruma and the Rust engines or exists in one only.
fn regex_read_alike(pattern: &str) -> bool {
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('p' | 'P') => {
                    if chars.next() != Some('{') {
                        return false;
                    }
                    let mut name = String::new();
                    for c in chars.by_ref() {
                        if c == '}' {
                            break;
                        }
                        name.push(c);
                    }
                    let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if name.is_empty() || !plain || name.starts_with("In") {
                        return false;
                    }
                }
                Some('s' | 'S' | 'r' | 'n' | 't' | 'f' | 'v' | 'x' | 'u') => {}
                Some(c) if c.is_ascii_punctuation() || c == ' ' => {}
                _ => return false,
            },
            '[' if in_class => return false,
            '[' => {
                in_class = true;
                chars.next_if_eq(&'^');
                if chars.peek() == Some(&']') {
                    return false;
                }
            }
            ']' if in_class => in_class = false,
            '&' if in_class && chars.peek() == Some(&'&') => return false,
            '^' | '$' if !in_class => return false,
            '(' if !in_class && chars.next_if_eq(&'?').is_some() => {
                let group = [chars.next(), chars.peek().copied()];
                match group {
                    [Some(':' | '=' | '!'), _] => {}
                    [Some('<'), Some('=' | '!')] | [Some('i'), Some(':')] => {
                        chars.next();
                    }
                    _ => return false,
                }
            }
            '+' | '*' | '?' | '}' if !in_class && chars.peek() == Some(&'+') => return false,
            _ => {}
        }
    }
    !in_class
}

/// transformers 5's `LlamaTokenizer` replaces tokenizer.json's normalizer and pre-tokenizer with a
/// Metaspace pre-tokenizer and its decoder with its own (the marker as a space, byte fallback,
/// fused, one leading space stripped when it adds a prefix space), and builds its BPE model from the
/// file's vocabulary and merges with byte fallback and without an unknown token or affixes
/// (`LlamaTokenizer.__init__`, `_get_prepend_scheme`): a character with no piece is its bytes'
/// tokens, or nothing when the vocabulary lacks them.
fn apply_llama_preprocessing(json: &mut Json, config: &Json) {
    let add_prefix_space = config.get("add_prefix_space").and_then(Json::as_bool).unwrap_or(true);
    let legacy = config.get("legacy").and_then(Json::as_bool).unwrap_or(false);
    let scheme = match (add_prefix_space, legacy) {
        (false, _) => "never",
        (true, true) => "always",
        (true, false) => "first",
    };
    if let Some(obj) = json.as_object_mut() {
        obj.insert("normalizer".into(), Json::Null);
        obj.insert(
            "pre_tokenizer".into(),
            serde_json::json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": scheme, "split": false}),
        );
        let mut decoders = vec![
            serde_json::json!({"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "}),
            serde_json::json!({"type": "ByteFallback"}),
            serde_json::json!({"type": "Fuse"}),
        ];
        if add_prefix_space {
            decoders.push(serde_json::json!({"type": "Strip", "content": " ", "start": 1, "stop": 0}));
        }
        obj.insert(
            "decoder".into(),
            serde_json::json!({"type": "Sequence", "decoders": decoders}),
        );
        if let Some(model) = obj.get_mut("model").and_then(Json::as_object_mut) {
            model.insert("unk_token".into(), Json::Null);
            model.insert("byte_fallback".into(), Json::Bool(true));
            model.insert("fuse_unk".into(), Json::Bool(true));
            model.insert("dropout".into(), Json::Null);
            model.insert("continuing_subword_prefix".into(), Json::Null);
            model.insert("end_of_word_suffix".into(), Json::Null);
            model.insert("ignore_merges".into(), Json::Bool(false));
        }
    }
}

/// Qwen2's split pattern (`PRETOKENIZE_REGEX` of transformers' `Qwen2Tokenizer`).
const QWEN2_PATTERN: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// transformers 5's `Qwen2Tokenizer` builds its pipeline from the file's vocabulary and merges
/// alone (`Qwen2Tokenizer.__init__`): an NFC normalizer, Qwen2's split pattern then a ByteLevel
/// pre-tokenizer without its own regex (`add_prefix_space` from the config, else false), and the
/// byte-level BPE of `rebuild_byte_level_bpe`. Every folder of model type `qwen2` is loaded so,
/// whatever class it declares (DeepSeek-R1-Distill-Qwen's tokenizer.json splits otherwise).
fn apply_qwen2_preprocessing(json: &mut Json, config: &Json) {
    let add_prefix_space = config.get("add_prefix_space").and_then(Json::as_bool).unwrap_or(false);
    rebuild_byte_level_bpe(
        json,
        serde_json::json!({"type": "NFC"}),
        serde_json::json!({"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": QWEN2_PATTERN}, "behavior": "Isolated", "invert": false},
            {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": true, "use_regex": false},
        ]}),
    );
}

/// transformers 5's `GPT2Tokenizer` builds its pipeline from the file's vocabulary and merges alone
/// (`GPT2Tokenizer.__init__`): no normalizer, a ByteLevel pre-tokenizer with GPT-2's own regex
/// (`add_prefix_space` from the config, else false), and the byte-level BPE of
/// `rebuild_byte_level_bpe`. A file that splits digits first (SmolLM2's `Digits` before
/// `ByteLevel`) therefore loses that step.
fn apply_gpt2_preprocessing(json: &mut Json, config: &Json) {
    let add_prefix_space = config.get("add_prefix_space").and_then(Json::as_bool).unwrap_or(false);
    rebuild_byte_level_bpe(
        json,
        Json::Null,
        serde_json::json!({"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": true, "use_regex": true}),
    );
}

/// What the byte-level classes build besides `normalizer` and `pre_tokenizer`: a ByteLevel decoder
/// and the file's vocabulary and merges as a BPE model without an unknown token, affixes, byte
/// fallback or dropout. Only the post-processor stays the file's.
fn rebuild_byte_level_bpe(json: &mut Json, normalizer: Json, pre_tokenizer: Json) {
    let Some(obj) = json.as_object_mut() else { return };
    obj.insert("normalizer".into(), normalizer);
    obj.insert("pre_tokenizer".into(), pre_tokenizer);
    obj.insert(
        "decoder".into(),
        serde_json::json!({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}),
    );
    if let Some(model) = obj.get_mut("model").and_then(Json::as_object_mut) {
        model.insert("dropout".into(), Json::Null);
        model.insert("unk_token".into(), Json::Null);
        model.insert("continuing_subword_prefix".into(), Json::from(""));
        model.insert("end_of_word_suffix".into(), Json::from(""));
        model.insert("fuse_unk".into(), Json::Bool(false));
        model.insert("byte_fallback".into(), Json::Bool(false));
        model.insert("ignore_merges".into(), Json::Bool(false));
    }
}

/// The 0.23 release's tokenizer of the file as read (`original`, before the upgrade to the 1.0
/// format), `json`'s tree set back to it; `refused` is the release candidate's reason, if it
/// refused the file.
fn reference_of(json: &mut TokenizerJson, original: &Json, refused: Option<Error>) -> Result<Encoder, Error> {
    *json.tree_mut() = original.clone();
    Encoder::reference(&json.to_text(&[])).map_err(|why| match refused {
        Some(refused) => {
            let why = format!("neither tokenizers release reads it (0.23.2: {why}); 1.0.0-rc.3");
            Error::new(ErrorKind::Unsupported, why).caused_by(refused)
        }
        None => Error::new(ErrorKind::Unsupported, why),
    })
}

impl ChatTokenizer {
    /// Loads `tokenizer.json` and `tokenizer_config.json` from a model folder.
    pub fn from_model_dir(dir: &Path) -> Result<ChatTokenizer, Error> {
        let json_path = dir.join("tokenizer.json");
        let config_path = dir.join("tokenizer_config.json");
        let config = if config_path.exists() {
            read_json(&config_path)?
        } else {
            Json::Object(Map::new())
        };
        if !json_path.exists() {
            if let Some(slow) = SLOW_TOKENIZER_FILES.iter().find(|f| dir.join(f).is_file()) {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!(
                        "the folder has no tokenizer.json, only a slow tokenizer's {slow}, which chatfmt does not \
                         convert; write tokenizer.json once with transformers: \
                         AutoTokenizer.from_pretrained(folder).save_pretrained(folder)"
                    ),
                )
                .at(&json_path));
            }
        }
        let fail = |e: Error| e.at(&json_path);
        let mut json = TokenizerJson::parse(read_text(&json_path)?).map_err(fail)?;
        let model_config_path = dir.join("config.json");
        let model_config = match model_config_path.is_file() {
            true => read_json(&model_config_path)?,
            false => Json::Null,
        };
        // transformers' own test of a byte-level file (`_tokenizer_json_has_byte_level`).
        let byte_level = || json.mentions("\"ByteLevel\"");
        let class = crate::tokenizer_class::loaded_class(&config, &model_config, byte_level);
        let is_llama = class.as_deref() == Some("LlamaTokenizer");
        match class.as_deref() {
            Some("LlamaTokenizer") => apply_llama_preprocessing(json.tree_mut(), &config),
            Some("Qwen2Tokenizer") => apply_qwen2_preprocessing(json.tree_mut(), &config),
            Some("GPT2Tokenizer") => apply_gpt2_preprocessing(json.tree_mut(), &config),
            _ => {}
        }
        // The cause names the file and the place in it.
        let special_tokens = chatfmt::template::folder_special_tokens(dir, &config)
            .map_err(|e| Error::new(ErrorKind::Malformed, "the special tokens do not load").caused_by(e))?;
        crate::config_tokens::add(&mut json, &config, dir, &special_tokens).map_err(fail)?;
        let piece_source = PieceSource::of(json.tree()).map_err(fail)?;
        let original = json.tree().clone();
        // The 1.0 pipeline, unless the file is one the release candidate refuses or encodes
        // differently from transformers: added tokens matched on normalized text after a Metaspace
        // pre-tokenizer, some BPE affixes, regex syntax the engines read differently (all known from
        // the tree), one id for two tokens (known once the vocabulary is read). The 0.23 release
        // encodes those (see `encoder`).
        let by_reference = normalized_tokens_with_metaspace(&original)
            || affixes_read_differently(&original)
            || regex_read_differently(&original);
        let built = match by_reference {
            true => Err(None),
            false => match Self::pipeline(&mut json, piece_source.clone()) {
                Ok((encoder, pieces, nfc_only)) => Ok((encoder, pieces.map_err(fail)?, nfc_only)),
                Err(refused) if refused.kind() == ErrorKind::Unsupported => Err(Some(refused)),
                Err(e) => return Err(fail(e)),
            },
        };
        let (encoder, pieces, nfc_only) = match built {
            Ok((encoder, pieces, nfc_only)) if !pieces.has_shared_ids() => (encoder, pieces, nfc_only),
            Ok((_, pieces, _)) => (reference_of(&mut json, &original, None).map_err(fail)?, pieces, false),
            Err(refused) => {
                let encoder = reference_of(&mut json, &original, refused).map_err(fail)?;
                (encoder, piece_source.build(json.vocab_text()).map_err(fail)?, false)
            }
        };
        let side = |key: &str, default: Side| -> Result<Side, Error> {
            match config.get(key).and_then(Json::as_str) {
                None => Ok(default),
                Some(s) => Side::parse(s).ok_or_else(|| {
                    Error::new(
                        ErrorKind::Malformed,
                        format!("{key} must be \"left\" or \"right\", not {s:?}"),
                    )
                    .at(&config_path)
                }),
            }
        };
        // The class default: LlamaTokenizer pads on the left, every other class on the right.
        let padding_side = side("padding_side", if is_llama { Side::Left } else { Side::Right })?;
        let truncation_side = side("truncation_side", Side::Right)?;
        let model_max_length = config
            .get("model_max_length")
            .and_then(Json::as_f64)
            .filter(|&n| n <= LARGE_INTEGER)
            .map(|n| n as usize);
        // transformers' decode skips the clean-up for a BPE model unless told it may corrupt it.
        let flag = |key: &str| config.get(key).is_some_and(chatfmt::json_input::py_truthy);
        let clean_up_decoded = flag("clean_up_tokenization_spaces")
            && (json
                .tree()
                .get("model")
                .and_then(|m| m.get("type"))
                .and_then(Json::as_str)
                != Some("BPE")
                || flag("clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output"));
        let chat_control_tokens = config
            .get("chat_control_tokens")
            .and_then(Json::as_array)
            .map(|list| list.iter().filter_map(Json::as_str).map(str::to_string).collect());
        let decode_by_reference = byte_level_in_sequence(&original) || byte_level_rewrites_added_tokens(&original);
        Ok(ChatTokenizer {
            encoder,
            decode_by_reference,
            pieces,
            plain: OnceLock::new(),
            untrimmed: OnceLock::new(),
            reference: OnceLock::new(),
            original,
            with_nfc: nfc_only.then(OnceLock::new),
            ids: OnceLock::new(),
            json,
            special_tokens,
            padding_side,
            truncation_side,
            model_max_length,
            clean_up_decoded,
            chat_control_tokens,
        })
    }

    /// The `tokenizers` 1.0 pipeline of `json` (upgraded to the 1.0 format in place), the piece
    /// table read beside it, and whether the pipeline leaves out a lone NFC normalizer (see `nfc`).
    /// A shape the release candidate refuses is an [`ErrorKind::Unsupported`] error.
    fn pipeline(
        json: &mut TokenizerJson,
        piece_source: PieceSource,
    ) -> Result<(Encoder, Result<PieceTable, Error>, bool), Error> {
        json.canonicalize()?;
        let nfc_only = json.tree().get("normalizer") == Some(&serde_json::json!({"type": "NFC"}));
        let replace: &[(&str, Json)] = if nfc_only { &[("normalizer", Json::Null)] } else { &[] };
        // The piece table reads the vocabulary while `tokenizers` builds the model.
        let (pipeline, pieces) = crate::pipeline::build(json, replace, || piece_source.build(json.vocab_text()))
            .map_err(|e| {
                // The tables' own errors (malformed JSON) are reported as such.
                match e.downcast::<Error>() {
                    Ok(e) => *e,
                    Err(e) => Error::new(ErrorKind::Unsupported, "unsupported tokenizer").caused_by(e),
                }
            })?;
        let pieces =
            pieces.unwrap_or_else(|_| Err(Error::new(ErrorKind::Malformed, "reading the vocabulary panicked")));
        Ok((Encoder::Pipeline(pipeline), pieces, nfc_only))
    }
}

#[cfg(test)]
mod tests {
    use super::regex_read_alike;

    /// The split patterns of real tokenizers stay on the 1.0 pipeline (Qwen2 and 3, Llama 3, GPT-4o's
    /// o200k, Mistral's Tekken, DeepSeek V3's three, Falcon's digits).
    #[test]
    fn real_split_patterns_read_alike() {
        let patterns = [
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            r"\p{N}{1,3}",
            r"[一-龥぀-ゟ゠-ヿ]+",
            r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##,
            r"[0-9][0-9][0-9]",
            r" {2,}",
        ];
        for pattern in patterns {
            assert!(regex_read_alike(pattern), "{pattern}");
        }
    }

    /// Syntax Oniguruma reads otherwise, or alone, goes to the 0.23 release (the fixture of
    /// `tests/reference_encoder.rs` shows the differences in ids).
    #[test]
    fn other_syntax_is_not_read_alike() {
        let patterns = [
            r"\w+",
            r"\W",
            r"\d+",
            r"\b\S",
            r"$",
            r"^ ?[a-z]+",
            r"[[:punct:]]",
            r"[[:alpha:]]+",
            r"\X",
            r"\p{InBasicLatin}+",
            r"\p{^L}",
            r"\pL",
            r"\y",
            r"(?W)\w+",
            r"(?m)a",
            r"a++",
            r"(?>a)",
            r"\K",
            r"\h",
            r"\R",
            r"[a&&b]",
            r"[]a]",
            r"[a",
            r"(?<n>a)",
            r"\1",
        ];
        for pattern in patterns {
            assert!(!regex_read_alike(pattern), "{pattern}");
        }
    }
}
