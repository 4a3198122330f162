//! Reading a GGUF file's chat template(s) and special tokens from its metadata, without touching
//! the tensors: the header (magic, version 2 or 3, tensor and key counts), then the metadata
//! key/value pairs, little-endian as llama.cpp writes them. Reading stops before the tensor table.
//!
//! What is taken follows transformers' GGUF tokenizer loading: `tokenizer.chat_template`, and the
//! `bos`/`eos`/`unk`/`pad` tokens as `tokenizer.ggml.tokens[tokenizer.ggml.<name>_token_id]`. The named
//! templates llama.cpp stores as `tokenizer.chat_template.<name>` are taken as well (transformers
//! ignores them), and a file without `general.architecture` is read (transformers refuses it: it needs
//! the architecture for the model, which rendering does not). `scripts/check_gguf_reader.py` checks
//! this reader against files written by llama.cpp's `gguf` package.

use super::ChatTemplate;
use crate::{Error, ErrorKind};
use serde_json::{Map, Value as Json};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

const MAGIC: &[u8; 4] = b"GGUF";
const TEMPLATE_KEY: &str = "tokenizer.chat_template";
const TOKENS_KEY: &str = "tokenizer.ggml.tokens";
/// The special tokens transformers reads, with the suffix of their `tokenizer.ggml.*` id key.
const SPECIAL_TOKENS: [(&str, &str); 4] = [
    ("bos_token", "bos_token_id"),
    ("eos_token", "eos_token_id"),
    ("unk_token", "unknown_token_id"),
    ("pad_token", "padding_token_id"),
];
/// Arrays nest (an array of arrays is legal); deeper nesting than this is refused, not recursed into.
const MAX_ARRAY_DEPTH: usize = 16;

/// One metadata value. All GGUF value types are read; the chat layer uses strings, integers and the
/// token array.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(String),
    Array(Vec<Value>),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::U8(_) => "uint8",
            Value::I8(_) => "int8",
            Value::U16(_) => "uint16",
            Value::I16(_) => "int16",
            Value::U32(_) => "uint32",
            Value::I32(_) => "int32",
            Value::F32(_) => "float32",
            Value::Bool(_) => "bool",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::U64(_) => "uint64",
            Value::I64(_) => "int64",
            Value::F64(_) => "float64",
        }
    }

    /// The value as an integer, for the integer types.
    fn as_int(&self) -> Option<i128> {
        Some(match *self {
            Value::U8(v) => v.into(),
            Value::I8(v) => v.into(),
            Value::U16(v) => v.into(),
            Value::I16(v) => v.into(),
            Value::U32(v) => v.into(),
            Value::I32(v) => v.into(),
            Value::U64(v) => v.into(),
            Value::I64(v) => v.into(),
            _ => return None,
        })
    }
}

/// A sequential little-endian reader that knows its byte offset and the file's length, so lengths
/// read from the file are checked before anything is allocated for them. Descriptions of what is
/// being read (`part` + `what`: "the length of " + "'general.name'") are only formatted on failure.
struct Reader<R> {
    inner: R,
    offset: u64,
    len: u64,
}

/// A reading failure: the byte offset where it happened and what was wrong.
struct Failure {
    offset: u64,
    message: String,
}

type Parsed<T> = Result<T, Failure>;

impl<R: Read> Reader<R> {
    fn fail<T>(&self, offset: u64, message: impl Into<String>) -> Parsed<T> {
        Err(Failure {
            offset,
            message: message.into(),
        })
    }

    fn truncated<T>(&self, start: u64, needed: u64, part: &str, what: &str) -> Parsed<T> {
        self.fail(
            start,
            format!(
                "the file ends inside {part}{what} ({needed} bytes needed, {} left): it is truncated",
                self.len.saturating_sub(start)
            ),
        )
    }

    fn bytes<const N: usize>(&mut self, part: &str, what: &str) -> Parsed<[u8; N]> {
        let mut buf = [0u8; N];
        self.fill(&mut buf, part, what)?;
        Ok(buf)
    }

    fn fill(&mut self, buf: &mut [u8], part: &str, what: &str) -> Parsed<()> {
        let start = self.offset;
        match self.inner.read_exact(buf) {
            Ok(()) => {
                self.offset += buf.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                self.truncated(start, buf.len() as u64, part, what)
            }
            Err(e) => self.fail(start, format!("cannot read {part}{what}: {e}")),
        }
    }

    /// Reads `n` bytes without keeping them.
    fn skip(&mut self, n: u64, part: &str, what: &str) -> Parsed<()> {
        let start = self.offset;
        match std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink()) {
            Ok(copied) if copied == n => {
                self.offset += n;
                Ok(())
            }
            Ok(_) => self.truncated(start, n, part, what),
            Err(e) => self.fail(start, format!("cannot read {part}{what}: {e}")),
        }
    }

    fn u32(&mut self, part: &str, what: &str) -> Parsed<u32> {
        self.bytes::<4>(part, what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, part: &str, what: &str) -> Parsed<u64> {
        self.bytes::<8>(part, what).map(u64::from_le_bytes)
    }

    /// Checks that `count` items of at least `min_size` bytes each can fit in the rest of the file.
    fn check_fits(&self, at: u64, count: u64, min_size: u64, part: &str, what: &str) -> Parsed<()> {
        let left = self.len.saturating_sub(self.offset);
        let fits = matches!(count.checked_mul(min_size), Some(need) if need <= left);
        if !fits {
            return self.fail(
                at,
                format!(
                    "{part}{what} claims {count} items of at least {min_size} bytes each, but only {left} bytes \
                     remain: the file is truncated or corrupt"
                ),
            );
        }
        Ok(())
    }

    /// A string's length, checked against the rest of the file.
    fn string_len(&mut self, what: &str) -> Parsed<u64> {
        let at = self.offset;
        let len = self.u64("the length of ", what)?;
        self.check_fits(at, len, 1, "the length of ", what)?;
        Ok(len)
    }

    fn string(&mut self, what: &str) -> Parsed<String> {
        let at = self.offset;
        let len = self.string_len(what)?;
        let mut buf = vec![0u8; len as usize];
        self.fill(&mut buf, "", what)?;
        String::from_utf8(buf).or_else(|e| {
            let bad = at + 8 + e.utf8_error().valid_up_to() as u64;
            self.fail(bad, format!("{what} is not valid UTF-8"))
        })
    }

    /// The smallest number of bytes a value of `value_type` occupies (for bounds checks), or `None`
    /// for an unknown type.
    fn min_size(value_type: u32) -> Option<u64> {
        Some(match value_type {
            0 | 1 | 7 => 1,
            2 | 3 => 2,
            4..=6 => 4,
            8 | 10..=12 => 8,
            9 => 12,
            _ => return None,
        })
    }

    /// Reads a value of `value_type`. With `keep` false, an array is walked and checked but not kept
    /// (its strings are not decoded, as transformers' reader leaves the arrays it does not need), and
    /// `None` is returned for it.
    fn value(&mut self, value_type: u32, what: &str, depth: usize, keep: bool) -> Parsed<Option<Value>> {
        let at = self.offset;
        Ok(Some(match value_type {
            0 => Value::U8(u8::from_le_bytes(self.bytes("", what)?)),
            1 => Value::I8(i8::from_le_bytes(self.bytes("", what)?)),
            2 => Value::U16(u16::from_le_bytes(self.bytes("", what)?)),
            3 => Value::I16(i16::from_le_bytes(self.bytes("", what)?)),
            4 => Value::U32(u32::from_le_bytes(self.bytes("", what)?)),
            5 => Value::I32(i32::from_le_bytes(self.bytes("", what)?)),
            6 => Value::F32(f32::from_le_bytes(self.bytes("", what)?)),
            7 => match self.bytes::<1>("", what)?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => return self.fail(at, format!("{what} is a bool stored as {b}, not 0 or 1")),
            },
            8 if keep => Value::String(self.string(what)?),
            8 => {
                let len = self.string_len(what)?;
                self.skip(len, "", what)?;
                return Ok(None);
            }
            9 => {
                if depth >= MAX_ARRAY_DEPTH {
                    return self.fail(at, format!("{what} nests arrays more than {MAX_ARRAY_DEPTH} deep"));
                }
                let element_type = self.u32("the element type of ", what)?;
                let count_at = self.offset;
                let count = self.u64("the length of ", what)?;
                let Some(min) = Self::min_size(element_type) else {
                    return self.fail(at, format!("{what} is an array of unknown value type {element_type}"));
                };
                self.check_fits(count_at, count, min, "the array ", what)?;
                if !keep && !matches!(element_type, 8 | 9) {
                    self.skip(count * min, "", what)?;
                    return Ok(None);
                }
                let mut items = Vec::with_capacity(if keep { count as usize } else { 0 });
                for i in 0..count {
                    let item = self.value(element_type, what, depth + 1, keep).map_err(|mut f| {
                        f.message = format!("{} (item {i})", f.message);
                        f
                    })?;
                    items.extend(item);
                }
                if !keep {
                    return Ok(None);
                }
                Value::Array(items)
            }
            10 => Value::U64(u64::from_le_bytes(self.bytes("", what)?)),
            11 => Value::I64(i64::from_le_bytes(self.bytes("", what)?)),
            12 => Value::F64(f64::from_le_bytes(self.bytes("", what)?)),
            other => {
                return self.fail(
                    at.saturating_sub(4),
                    format!("{what} has unknown value type {other} (GGUF defines 0 to 12)"),
                )
            }
        }))
    }
}

/// Reads the metadata key/values of a GGUF file, keeping those `keep` selects (the others are
/// walked and checked, and their strings decoded unless they sit in an array, as transformers'
/// reader does). Stops at the tensor table.
fn read_metadata(path: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<(String, Value)>, Error> {
    let file = File::open(path).map_err(|e| Error::read(path, "open the GGUF file", e))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    let mut r = Reader {
        inner: BufReader::with_capacity(1 << 16, file),
        offset: 0,
        len,
    };
    parse(&mut r, keep).map_err(|f| {
        Error::new(
            ErrorKind::Malformed,
            format!("malformed GGUF at byte offset {}: {}", f.offset, f.message),
        )
        .in_file(path)
        .at_offset(f.offset)
    })
}

fn parse<R: Read>(r: &mut Reader<R>, keep: impl Fn(&str) -> bool) -> Parsed<Vec<(String, Value)>> {
    let magic = r.bytes::<4>("", "the GGUF magic")?;
    if &magic != MAGIC {
        return r.fail(
            0,
            format!("the file starts with {magic:02x?}, not the GGUF magic \"GGUF\": it is not a GGUF file"),
        );
    }
    let version = r.u32("", "the GGUF version")?;
    if version != 2 && version != 3 {
        let hint = if version.swap_bytes() == 2 || version.swap_bytes() == 3 {
            " (this looks like a big-endian GGUF, which is not supported)"
        } else if version == 1 {
            " (GGUF v1 is obsolete; convert the file with a current llama.cpp)"
        } else {
            ""
        };
        return r.fail(
            4,
            format!("GGUF version {version} is not supported, only 2 and 3{hint}"),
        );
    }
    r.u64("", "the tensor count")?;
    let count_at = r.offset;
    let kv_count = r.u64("", "the metadata key/value count")?;
    // Each pair holds at least a key length (8), a value type (4) and a one-byte value.
    r.check_fits(count_at, kv_count, 13, "", "the metadata key/value count")?;
    let mut out = Vec::new();
    for i in 0..kv_count {
        let key = r.string(&format!("metadata key #{i}"))?;
        let what = format!("'{key}'");
        let value_type = r.u32("the value type of ", &what)?;
        let wanted = keep(&key);
        // Scalars are decoded whatever the key (transformers decodes every string outside arrays).
        if let Some(value) = r.value(value_type, &what, 0, wanted || value_type != 9)? {
            if wanted {
                out.push((key, value));
            }
        }
    }
    Ok(out)
}

fn wanted(key: &str) -> bool {
    key == TEMPLATE_KEY
        || key == TOKENS_KEY
        || key.strip_prefix(TEMPLATE_KEY).is_some_and(|rest| rest.starts_with('.'))
        || SPECIAL_TOKENS
            .iter()
            .any(|(_, id)| key.strip_prefix("tokenizer.ggml.") == Some(*id))
}

/// What a GGUF file holds for the chat layer.
struct Contents {
    /// `tokenizer.chat_template`.
    default: Option<String>,
    /// `tokenizer.chat_template.<name>`, in file order.
    named: Vec<(String, String)>,
    special: Map<String, Json>,
}

fn read_contents(path: &Path) -> Result<Contents, Error> {
    let err = |message: String| Error::new(ErrorKind::Malformed, message).in_file(path);
    let metadata = read_metadata(path, wanted)?;
    let get = |key: &str| metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let as_template = |key: &str, v: &Value| match v {
        Value::String(s) => Ok(s.clone()),
        other => Err(err(format!(
            "metadata key '{key}' holds a {}, not a string template",
            other.type_name()
        ))),
    };
    let mut special = Map::new();
    for (name, id_key) in SPECIAL_TOKENS {
        let key = format!("tokenizer.ggml.{id_key}");
        let Some(id) = get(&key) else { continue };
        let Some(id) = id.as_int() else {
            return Err(err(format!(
                "metadata key '{key}' holds a {}, not a token id",
                id.type_name()
            )));
        };
        let Some(Value::Array(tokens)) = get(TOKENS_KEY) else {
            return Err(err(format!(
                "metadata key '{key}' is set but there is no '{TOKENS_KEY}' array to look token {id} up in"
            )));
        };
        // transformers indexes a Python list with the id, so a negative id counts from the end.
        let index = if id < 0 { id + tokens.len() as i128 } else { id };
        match usize::try_from(index).ok().and_then(|i| tokens.get(i)) {
            Some(Value::String(token)) => {
                special.insert(name.to_string(), Json::String(token.clone()));
            }
            Some(other) => {
                return Err(err(format!(
                    "'{TOKENS_KEY}[{id}]' (the {name}) is a {}, not a string",
                    other.type_name()
                )))
            }
            None => {
                return Err(err(format!(
                    "metadata key '{key}' is {id}, outside '{TOKENS_KEY}' ({} tokens)",
                    tokens.len()
                )))
            }
        }
    }
    let default = get(TEMPLATE_KEY).map(|v| as_template(TEMPLATE_KEY, v)).transpose()?;
    let mut named = Vec::new();
    for (key, value) in &metadata {
        if let Some(name) = key.strip_prefix(TEMPLATE_KEY).and_then(|r| r.strip_prefix('.')) {
            named.push((name.to_string(), as_template(key, value)?));
        }
    }
    Ok(Contents {
        default,
        named,
        special,
    })
}

/// The special tokens of a GGUF file (`bos_token`, `eos_token`, `unk_token`, `pad_token` where the
/// file sets their ids), whether or not it has a chat template.
pub fn gguf_special_tokens(path: &Path) -> Result<Map<String, Json>, Error> {
    read_contents(path).map(|c| c.special)
}

/// Whether `path` names a GGUF file: a `.gguf` extension, or a file starting with the GGUF magic.
pub fn is_gguf(path: &Path) -> bool {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf")) {
        return true;
    }
    let mut magic = [0u8; 4];
    path.is_file() && File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == MAGIC
}

impl ChatTemplate {
    /// Loads the chat template(s) and special tokens stored in a GGUF file's metadata.
    ///
    /// `tokenizer.chat_template` is the template; `tokenizer.chat_template.<name>` keys add named
    /// templates (the unnamed one is then `default`). The special tokens are looked up in
    /// `tokenizer.ggml.tokens` by the `tokenizer.ggml.{bos,eos,unknown,padding}_token_id` keys. Only
    /// the metadata is read; a truncated or malformed file gives an error with the byte offset.
    ///
    /// ```no_run
    /// use chatfmt::ChatTemplate;
    /// let template = ChatTemplate::from_gguf("model.Q4_K_M.gguf".as_ref())?;
    /// # Ok::<(), chatfmt::Error>(())
    /// ```
    pub fn from_gguf(path: &Path) -> Result<ChatTemplate, Error> {
        let Contents {
            default,
            mut named,
            special,
        } = read_contents(path)?;
        match (default, named.is_empty()) {
            (Some(source), true) => Ok(ChatTemplate::from_origin(
                &format!("{} ({TEMPLATE_KEY})", path.display()),
                &source,
                special,
            )),
            (None, true) => Err(Error::new(
                ErrorKind::NoTemplate,
                format!(
                    "this GGUF has no chat template: its metadata has no '{TEMPLATE_KEY}' or \
                     '{TEMPLATE_KEY}.<name>' key; pass a template with --template FILE or a built-in one with \
                     --default-template NAME"
                ),
            )
            .in_file(path)),
            (default, false) => {
                if let Some(source) = default {
                    named.insert(0, ("default".to_string(), source));
                }
                let origins: Vec<String> = named
                    .iter()
                    .map(|(n, _)| match n.as_str() {
                        "default" => format!("{} ({TEMPLATE_KEY})", path.display()),
                        _ => format!("{} ({TEMPLATE_KEY}.{n})", path.display()),
                    })
                    .collect();
                Ok(ChatTemplate::named_from_origins(
                    named
                        .iter()
                        .zip(&origins)
                        .map(|((n, s), o)| (n.as_str(), o.as_str(), s.as_str())),
                    special,
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    }

    /// A v3 header and one key of every scalar type, one nested array.
    fn all_types() -> Vec<u8> {
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b.extend(14u64.to_le_bytes());
        let scalars: [(u32, &[u8]); 12] = [
            (0, &[200]),
            (1, &[0xfe]),
            (2, &[1, 2]),
            (3, &[0xff, 0xff]),
            (4, &[1, 0, 0, 0]),
            (5, &[0xff, 0xff, 0xff, 0xff]),
            (6, &[0, 0, 0x80, 0x3f]),
            (7, &[1]),
            (10, &[9, 0, 0, 0, 0, 0, 0, 0]),
            (11, &[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            (12, &[0, 0, 0, 0, 0, 0, 0xf0, 0x3f]),
            (8, &[2, 0, 0, 0, 0, 0, 0, 0, b'h', b'i']),
        ];
        for (i, (t, bytes)) in scalars.iter().enumerate() {
            string(&mut b, &format!("k{i}"));
            b.extend(t.to_le_bytes());
            b.extend(*bytes);
        }
        string(&mut b, "nested");
        b.extend(9u32.to_le_bytes());
        b.extend(9u32.to_le_bytes());
        b.extend(1u64.to_le_bytes());
        b.extend(3u32.to_le_bytes());
        b.extend(2u64.to_le_bytes());
        b.extend([1, 0, 2, 0]);
        string(&mut b, "empty");
        b.extend(9u32.to_le_bytes());
        b.extend(8u32.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b
    }

    fn parse_bytes(bytes: &[u8]) -> Parsed<Vec<(String, Value)>> {
        parse_keeping(bytes, true)
    }

    fn parse_keeping(bytes: &[u8], keep: bool) -> Parsed<Vec<(String, Value)>> {
        let mut r = Reader {
            inner: bytes,
            offset: 0,
            len: bytes.len() as u64,
        };
        parse(&mut r, |_| keep)
    }

    #[test]
    fn reads_every_value_type() {
        let kv = parse_bytes(&all_types()).unwrap_or_else(|f| panic!("{}: {}", f.offset, f.message));
        let values: Vec<Value> = kv.into_iter().map(|(_, v)| v).collect();
        assert_eq!(
            values,
            vec![
                Value::U8(200),
                Value::I8(-2),
                Value::U16(0x0201),
                Value::I16(-1),
                Value::U32(1),
                Value::I32(-1),
                Value::F32(1.0),
                Value::Bool(true),
                Value::U64(9),
                Value::I64(-2),
                Value::F64(1.0),
                Value::String("hi".into()),
                Value::Array(vec![Value::Array(vec![Value::I16(1), Value::I16(2)])]),
                Value::Array(vec![]),
            ]
        );
    }

    #[test]
    fn every_truncation_is_an_error_with_an_offset_inside_the_file() {
        let full = all_types();
        for keep in [true, false] {
            for cut in 0..full.len() {
                let Err(f) = parse_keeping(&full[..cut], keep) else {
                    panic!("a file cut at {cut} bytes parsed (keep: {keep})");
                };
                assert!(f.offset <= cut as u64, "offset {} past the cut {cut}", f.offset);
                assert!(f.message.contains("truncated"), "{}", f.message);
            }
        }
        let skipped = parse_keeping(&full, false).unwrap_or_else(|f| panic!("{}: {}", f.offset, f.message));
        assert!(skipped.is_empty());
    }

    #[test]
    fn huge_lengths_are_refused_before_allocating() {
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b.extend(1u64.to_le_bytes());
        string(&mut b, "tokenizer.ggml.tokens");
        b.extend(9u32.to_le_bytes());
        b.extend(8u32.to_le_bytes());
        b.extend(u64::MAX.to_le_bytes());
        let f = parse_bytes(&b).expect_err("refused");
        assert_eq!(f.offset, 61);
        assert!(f.message.contains("18446744073709551615 items"), "{}", f.message);
    }

    #[test]
    fn deep_nesting_unknown_types_and_bad_bools_are_errors() {
        let header = |n: u64| {
            let mut b = b"GGUF".to_vec();
            b.extend(2u32.to_le_bytes());
            b.extend(0u64.to_le_bytes());
            b.extend(n.to_le_bytes());
            string(&mut b, "k");
            b
        };
        let mut deep = header(1);
        deep.extend(9u32.to_le_bytes());
        for _ in 0..40 {
            deep.extend(9u32.to_le_bytes());
            deep.extend(1u64.to_le_bytes());
        }
        deep.extend(vec![0; 64]);
        let f = parse_bytes(&deep).expect_err("refused");
        assert!(f.message.contains("nests arrays"), "{}", f.message);

        let mut unknown = header(1);
        unknown.extend(13u32.to_le_bytes());
        unknown.extend([0; 16]);
        let f = parse_bytes(&unknown).expect_err("refused");
        assert!(f.message.contains("unknown value type 13"), "{}", f.message);
        assert_eq!(f.offset, 33);

        let mut bad_bool = header(1);
        bad_bool.extend(7u32.to_le_bytes());
        bad_bool.extend([2; 16]);
        let f = parse_bytes(&bad_bool).expect_err("refused");
        assert!(f.message.contains("bool stored as 2"), "{}", f.message);
    }

    #[test]
    fn arrays_of_unwanted_keys_are_walked_without_decoding() {
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b.extend(1u64.to_le_bytes());
        string(&mut b, "tokenizer.ggml.merges");
        b.extend(9u32.to_le_bytes());
        b.extend(8u32.to_le_bytes());
        b.extend(2u64.to_le_bytes());
        string(&mut b, "a b");
        b.extend(2u64.to_le_bytes());
        b.extend([0xff, 0xfe]);
        assert!(parse_keeping(&b, false).is_ok_and(|kv| kv.is_empty()));
        let f = parse_keeping(&b, true).expect_err("kept strings are decoded");
        assert!(f.message.contains("is not valid UTF-8 (item 1)"), "{}", f.message);
    }

    #[test]
    fn wrong_magic_version_and_invalid_utf8() {
        let f = parse_bytes(b"GGML\x03\0\0\0").expect_err("refused");
        assert!(f.message.contains("not a GGUF file"), "{}", f.message);
        let mut be = b"GGUF".to_vec();
        be.extend(3u32.to_be_bytes());
        be.extend([0; 16]);
        let f = parse_bytes(&be).expect_err("refused");
        assert!(f.message.contains("big-endian"), "{}", f.message);
        let mut bad = b"GGUF".to_vec();
        bad.extend(3u32.to_le_bytes());
        bad.extend(0u64.to_le_bytes());
        bad.extend(1u64.to_le_bytes());
        bad.extend(3u64.to_le_bytes());
        bad.extend([b'a', 0xff, b'b']);
        bad.extend([0; 16]);
        let f = parse_bytes(&bad).expect_err("refused");
        assert_eq!(f.offset, 33);
        assert!(f.message.contains("not valid UTF-8"), "{}", f.message);
    }
}
