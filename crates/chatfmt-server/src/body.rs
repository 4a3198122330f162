//! Request bodies: read within the size limit, parsed as one JSON object, and fields read with
//! their types checked, each failure a 400 naming the field as FastAPI locates it (`body.tokens`).
//!
//! vLLM and SGLang validate a body with pydantic in lax mode (`Model.model_validate(json.loads(body))`),
//! which coerces some values: the readers here take what it takes, with its messages. llama.cpp's
//! routes and `/v1/render` read JSON booleans and integers only ([`Fields::strict_bool`]).

use crate::api::ApiError;
use axum::body::Body;
use axum::http::{header, HeaderMap, StatusCode};
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use std::borrow::Cow;

/// Reads the whole body; over `limit` bytes is a 413.
pub async fn read(body: Body, limit: usize) -> Result<axum::body::Bytes, ApiError> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let too_large = std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
            || e.to_string().contains("length limit");
        if too_large {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!("the request body is larger than the limit of {limit} bytes"),
            )
        } else {
            ApiError::bad("the request body could not be read", Some("body"))
        }
    })
}

/// Whether the `Content-Type` is `application/json` (parameters aside).
pub fn is_json(headers: &HeaderMap) -> bool {
    let value = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    // As vLLM's and SGLang's `validate_json_request`: the part before `;`, in any case, untrimmed.
    let media = value.split(';').next().unwrap_or("");
    media.eq_ignore_ascii_case("application/json")
}

/// The 415 of vLLM's routes.
pub fn unsupported_media_type() -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        "Unsupported Media Type: Only 'application/json' is allowed",
    )
}

/// The largest body of a request that runs on the async runtime instead of a worker (see
/// [`Fields::light`]): a conversation of this size renders and tokenizes in tens of microseconds,
/// less than the hand-off to a worker and back costs.
const LIGHT_BODY_BYTES: usize = 8 * 1024;

/// Whether a request of `len` bytes that renders with the model's own template is light (see
/// [`Fields`]).
pub fn is_light(len: usize) -> bool {
    len <= LIGHT_BODY_BYTES
}

// The deepest nesting of arrays and objects a body may have, that of every JSON input
// (`chatfmt::json_input::MAX_DEPTH`): about as deep as Python's `json.loads` (vLLM's and SGLang's
// parser) reads. A deeper body is refused before it is parsed. The parser moves its recursion to
// stacks on the heap, and so do templates; everything else that walks a value recursively (drop,
// clone, write) takes at most about 0.5 KiB of stack a level, under 1 MiB at this depth, within the
// 2 MiB stacks of the runtime's and the pool's threads.
use chatfmt::json_input::MAX_DEPTH;

/// The body as a JSON object.
pub fn object(bytes: &[u8]) -> Result<Fields, ApiError> {
    let text = as_python_reads(bytes)?;
    let mut de = serde_json::Deserializer::from_slice(&text);
    de.disable_recursion_limit();
    // No limit of serde_json's own (128 levels); its recursion moves to stacks on the heap.
    let value = Json::deserialize(serde_stacker::Deserializer::new(&mut de))
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| {
            ApiError::bad(
                format!("JSON decode error at line {}, column {}", e.line(), e.column()),
                Some("body"),
            )
        })?;
    match value {
        Json::Object(map) => {
            // A template sent with the request (vLLM also reads one from `chat_template_kwargs`)
            // renders on a worker.
            let sends_template = map.contains_key("chat_template")
                || map
                    .get("chat_template_kwargs")
                    .is_some_and(|k| k.get("chat_template").is_some());
            let light = is_light(bytes.len()) && !sends_template;
            Ok(Fields(map, light))
        }
        _ => Err(ApiError::bad(
            "Input should be a valid dictionary or object to extract fields from",
            Some("body"),
        )),
    }
}

/// The body ready for serde_json to read as Python's `json` module does: refused when nested deeper
/// than [`MAX_DEPTH`], and each number `-0` written ` 0` (Python reads the integer 0, serde_json
/// the float -0.0; the text keeps its length, so error columns stay right).
fn as_python_reads(bytes: &[u8]) -> Result<Cow<'_, [u8]>, ApiError> {
    let mut depth = 0usize;
    let mut minus_zeros = Vec::new();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            // A string: on to its closing quote, skipping escaped characters.
            b'"' => {
                i += 1;
                loop {
                    match bytes.get(i..).and_then(|rest| memchr::memchr2(b'"', b'\\', rest)) {
                        // Unterminated: the rest of the body is in the string.
                        None => {
                            i = bytes.len();
                            break;
                        }
                        Some(at) => {
                            i += at + 1;
                            if bytes[i - 1] == b'"' {
                                break;
                            }
                            i += 1;
                        }
                    }
                }
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(ApiError::bad(
                        format!("the request body nests arrays and objects deeper than {MAX_DEPTH} levels"),
                        Some("body"),
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            // A number `-0` (not an exponent's sign, not `-0.5` or `-0e1`).
            b'-' if bytes.get(i + 1) == Some(&b'0')
                && !matches!(bytes.get(i + 2), Some(b'0'..=b'9' | b'.' | b'e' | b'E'))
                && !matches!(i.checked_sub(1).map(|j| bytes[j]), Some(b'e' | b'E')) =>
            {
                minus_zeros.push(i);
            }
            _ => {}
        }
        i += 1;
    }
    if minus_zeros.is_empty() {
        return Ok(Cow::Borrowed(bytes));
    }
    let mut text = bytes.to_vec();
    for i in minus_zeros {
        text[i] = b' ';
    }
    Ok(Cow::Owned(text))
}

/// A request object whose fields are taken out one by one, and whether the request is light: a
/// small body using the model's own template (a template sent with the request may take up to its
/// limits), whose work runs on the async runtime rather than on a worker (see `Pool::run`).
#[derive(Debug)]
pub struct Fields(pub Map<String, Json>, pub bool);

fn param(name: &str) -> String {
    format!("body.{name}")
}

pub fn wrong(name: &str, expected: &str) -> ApiError {
    invalid(name, &format!("Input should be {expected}"))
}

/// A 400 with pydantic's `message` about the field `name`.
pub fn invalid(name: &str, message: &str) -> ApiError {
    ApiError::bad(message, Some(&param(name)))
}

// pydantic's messages for a value its lax mode does not take for the field's type.
const INT: &str = "Input should be a valid integer";
const INT_PARSING: &str = "Input should be a valid integer, unable to parse string as an integer";
const INT_FROM_FLOAT: &str = "Input should be a valid integer, got a number with a fractional part";
/// Also said here of integers past 64 bits, which pydantic takes (any size) and the server does not.
const INT_SIZE: &str = "Unable to parse input string as an integer, exceeded maximum size";
const BOOL: &str = "Input should be a valid boolean";
const BOOL_PARSING: &str = "Input should be a valid boolean, unable to interpret input";
const FLOAT: &str = "Input should be a valid number";
const FLOAT_PARSING: &str = "Input should be a valid number, unable to parse string as a number";

/// A value as pydantic's lax `int`: an integer, a boolean, a float without a fraction, or a string
/// of one (whitespace around it, `_` between digits and a `.0` fraction allowed). Else pydantic's
/// message.
pub fn lax_int(v: &Json) -> Result<i64, &'static str> {
    match v {
        Json::Bool(b) => Ok(i64::from(*b)),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Ok(i),
            None if n.is_u64() => Err(INT_SIZE),
            None => n.as_f64().map_or(Err(INT), float_int),
        },
        Json::String(s) => str_int(s),
        _ => Err(INT),
    }
}

/// A float as pydantic's lax `int`.
fn float_int(f: f64) -> Result<i64, &'static str> {
    if f % 1.0 != 0.0 {
        Err(INT_FROM_FLOAT)
    } else if (i64::MIN as f64) < f && f < (i64::MAX as f64) {
        Ok(f as i64)
    } else {
        Err(INT_SIZE)
    }
}

/// A string as pydantic's lax `int`: JSON's integer syntax, else the string cleaned (trimmed, a
/// `+` sign, leading zeros, a `.0` fraction and `_` between digits taken away) in that syntax.
fn str_int(s: &str) -> Result<i64, &'static str> {
    match json_int(s) {
        Ok(i) => return Ok(i),
        Err(IntText::Big) => return Err(INT_SIZE),
        Err(IntText::Invalid) => {}
    }
    json_int(&cleaned_int(s).ok_or(INT_PARSING)?).map_err(|e| match e {
        IntText::Big => INT_SIZE,
        IntText::Invalid => INT_PARSING,
    })
}

/// Why a text is no `i64`.
enum IntText {
    Invalid,
    /// An integer, past 64 bits.
    Big,
}

/// A text that is exactly a JSON integer (`-?(0|[1-9][0-9]*)`).
fn json_int(s: &str) -> Result<i64, IntText> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let valid =
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    if !valid {
        return Err(IntText::Invalid);
    }
    s.parse().map_err(|_| IntText::Big)
}

/// pydantic's cleaning of an integer's text, or nothing when it is no integer or nothing changed.
fn cleaned_int(text: &str) -> Option<String> {
    let mut s = text.trim();
    if let Some(rest) = s.strip_prefix('+') {
        if rest.starts_with('-') {
            return None;
        }
        s = rest;
    }
    let sign = match s.strip_prefix('-') {
        Some(rest) if rest.starts_with(['-', '+']) => return None,
        Some(rest) => {
            s = rest;
            "-"
        }
        None => "",
    };
    s = without_leading_zeros(s)?;
    if let Some((int, zeros)) = s.split_once('.') {
        if !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') {
            s = int;
        }
    }
    match without_underscores(s) {
        Some(digits) => Some(format!("{sign}{digits}")),
        None => (s.len() != text.len()).then(|| format!("{sign}{s}")),
    }
}

/// The text from its first significant digit, as pydantic strips leading zeros: `0` and `_` skipped
/// up to a digit or `-` (kept), or to a `.` (the zero before it kept); all zeros is the last one.
/// Nothing when the text does not start with a digit or `-`, or has another character among them.
fn without_leading_zeros(s: &str) -> Option<&str> {
    match s.bytes().next() {
        Some(b'0') => {}
        Some(b'1'..=b'9' | b'-') => return Some(s),
        _ => return None,
    }
    for (i, b) in s.bytes().enumerate().skip(1) {
        match b {
            b'0' | b'_' => {}
            b'1'..=b'9' | b'-' => return Some(&s[i..]),
            b'.' => return Some(&s[i - 1..]),
            _ => return None,
        }
    }
    Some(&s[s.len() - 1..])
}

/// A number's text without its `_` separators, when each stands between two other characters.
fn without_underscores(s: &str) -> Option<String> {
    let placed = s.contains('_') && !s.starts_with('_') && !s.ends_with('_') && !s.contains("__");
    placed.then(|| s.replace('_', ""))
}

/// A value as pydantic's lax `bool`: a boolean, 0 or 1 (also as floats), or one of the strings
/// `0 1 f t n y no on off yes false true` in any case.
pub fn lax_bool(v: &Json) -> Result<bool, &'static str> {
    match v {
        Json::Bool(b) => Ok(*b),
        Json::Number(n) => {
            let int = match n.as_i64() {
                Some(i) => i,
                None if n.is_u64() => return Err(BOOL),
                None => n.as_f64().ok_or(BOOL).and_then(|f| float_int(f).map_err(|_| BOOL))?,
            };
            match int {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(BOOL_PARSING),
            }
        }
        Json::String(s) => {
            let is = |words: &[&str]| words.iter().any(|w| s.eq_ignore_ascii_case(w));
            if is(&["0", "f", "n", "no", "off", "false"]) {
                Ok(false)
            } else if is(&["1", "t", "y", "on", "yes", "true"]) {
                Ok(true)
            } else {
                Err(BOOL_PARSING)
            }
        }
        _ => Err(BOOL),
    }
}

/// A value as pydantic's lax `float`: a number, a boolean, or a string of a number (whitespace
/// around it, `_` between digits, `inf` and `nan` allowed).
pub fn lax_f64(v: &Json) -> Result<f64, &'static str> {
    match v {
        Json::Bool(b) => Ok(f64::from(u8::from(*b))),
        Json::Number(n) => n.as_f64().ok_or(FLOAT),
        Json::String(s) => (s.trim().parse().ok())
            .or_else(|| without_underscores(s)?.parse().ok())
            .ok_or(FLOAT_PARSING),
        _ => Err(FLOAT),
    }
}

impl Fields {
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// A field that must be there.
    pub fn required(&mut self, name: &str) -> Result<Json, ApiError> {
        self.0
            .remove(name)
            .ok_or_else(|| ApiError::bad("Field required", Some(&param(name))))
    }

    /// A lax boolean, `default` when absent; `null` only when `nullable`.
    pub fn bool(&mut self, name: &str, default: bool, nullable: bool) -> Result<bool, ApiError> {
        match self.0.remove(name) {
            None => Ok(default),
            Some(Json::Null) if nullable => Ok(default),
            Some(v) => lax_bool(&v).map_err(|m| invalid(name, m)),
        }
    }

    /// A JSON boolean, `default` when absent (llama.cpp's routes and `/v1/render`).
    pub fn strict_bool(&mut self, name: &str, default: bool) -> Result<bool, ApiError> {
        match self.0.remove(name) {
            None => Ok(default),
            Some(Json::Bool(b)) => Ok(b),
            Some(_) => Err(wrong(name, "a valid boolean")),
        }
    }

    /// A lax boolean, or nothing when absent or `null`.
    pub fn opt_bool(&mut self, name: &str) -> Result<Option<bool>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => lax_bool(&v).map(Some).map_err(|m| invalid(name, m)),
        }
    }

    /// A string, or nothing when absent or `null`.
    pub fn opt_str(&mut self, name: &str) -> Result<Option<String>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) => Ok(Some(s)),
            Some(_) => Err(wrong(name, "a valid string")),
        }
    }

    /// A string that has a default: nothing when absent; `null` is refused.
    pub fn defaulted_str(&mut self, name: &str) -> Result<Option<String>, ApiError> {
        match self.0.get(name) {
            Some(Json::Null) => Err(wrong(name, "a valid string")),
            _ => self.opt_str(name),
        }
    }

    /// A string that must be there.
    pub fn str(&mut self, name: &str) -> Result<String, ApiError> {
        match self.required(name)? {
            Json::String(s) => Ok(s),
            _ => Err(wrong(name, "a valid string")),
        }
    }

    /// An object, or nothing when absent or `null`.
    pub fn opt_object(&mut self, name: &str) -> Result<Option<Map<String, Json>>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Object(o)) => Ok(Some(o)),
            Some(_) => Err(wrong(name, "a valid dictionary")),
        }
    }

    /// A list, or nothing when absent or `null`.
    pub fn opt_list(&mut self, name: &str) -> Result<Option<Vec<Json>>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Array(a)) => Ok(Some(a)),
            Some(_) => Err(wrong(name, "a valid list")),
        }
    }

    /// A lax float, or nothing when absent or `null`.
    pub fn opt_f64(&mut self, name: &str) -> Result<Option<f64>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => lax_f64(&v).map(Some).map_err(|m| invalid(name, m)),
        }
    }

    /// A lax integer, or nothing when absent or `null`.
    pub fn opt_i64(&mut self, name: &str) -> Result<Option<i64>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => lax_int(&v).map(Some).map_err(|m| invalid(name, m)),
        }
    }

    /// A lax integer, `default` when absent; `null` is refused.
    pub fn i64(&mut self, name: &str, default: i64) -> Result<i64, ApiError> {
        match self.0.remove(name) {
            None => Ok(default),
            Some(v) => lax_int(&v).map_err(|m| invalid(name, m)),
        }
    }

    /// A list of strings, or nothing when absent or `null`; a single string when `one` allows it.
    pub fn opt_strs(&mut self, name: &str, one: bool) -> Result<Option<Vec<String>>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) if one => Ok(Some(vec![s])),
            Some(Json::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Json::String(s) => Ok(s),
                    _ => Err(wrong(&format!("{name}.{i}"), "a valid string")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(wrong(name, "a valid list")),
        }
    }

    /// A list of lax integers of any sign (pydantic's `list[int]`), or nothing when absent or `null`.
    pub fn opt_ints(&mut self, name: &str) -> Result<Option<Vec<i64>>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Array(items)) => (items.iter().enumerate())
                .map(|(i, v)| lax_int(v).map_err(|m| invalid(&format!("{name}.{i}"), m)))
                .collect::<Result<_, _>>()
                .map(Some),
            Some(_) => Err(wrong(name, "a valid list")),
        }
    }

    /// A list of token ids, lax or JSON integers only.
    pub fn token_ids(&mut self, name: &str, lax: bool) -> Result<Vec<u32>, ApiError> {
        let Json::Array(items) = self.required(name)? else {
            return Err(wrong(name, "a valid list"));
        };
        ids_of(name, &items, lax)
    }

    /// Chat messages: a list of objects, each with a string `role`.
    pub fn messages(&mut self) -> Result<Vec<Json>, ApiError> {
        let Json::Array(items) = self.required("messages")? else {
            return Err(wrong("messages", "a valid list"));
        };
        for (i, m) in items.iter().enumerate() {
            let Some(obj) = m.as_object() else {
                return Err(wrong(&format!("messages.{i}"), "a valid dictionary"));
            };
            match obj.get("role") {
                Some(Json::String(_)) => {}
                None => {
                    return Err(ApiError::bad(
                        "Field required",
                        Some(&param(&format!("messages.{i}.role"))),
                    ))
                }
                Some(_) => return Err(wrong(&format!("messages.{i}.role"), "a valid string")),
            }
        }
        Ok(items)
    }

    /// Refuses any field left (for routes that take no others).
    pub fn deny_rest(self) -> Result<(), ApiError> {
        match self.0.keys().next() {
            Some(k) => Err(ApiError::bad("Extra inputs are not permitted", Some(&param(k)))),
            None => Ok(()),
        }
    }
}

/// The token ids of a list at field `name` (lax integers, or JSON integers only), each a 400 naming
/// its index when it is not one (a lax one below 0 with pydantic's message for vLLM's `ge=0`).
pub fn ids_of(name: &str, items: &[Json], lax: bool) -> Result<Vec<u32>, ApiError> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let here = || format!("{name}.{i}");
            let id = if lax {
                match lax_int(v).map_err(|m| invalid(&here(), m))? {
                    n if n < 0 => return Err(invalid(&here(), "Input should be greater than or equal to 0")),
                    n => u32::try_from(n).ok(),
                }
            } else {
                v.as_u64().and_then(|n| u32::try_from(n).ok())
            };
            id.ok_or_else(|| wrong(&here(), "a valid token id (an integer from 0 to 4294967295)"))
        })
        .collect()
}

/// An integer of JSON: an integer, or a float without a fraction.
pub fn as_int(v: &Json) -> Option<i64> {
    match v {
        Json::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18)
                .map(|f| f as i64)
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_small_body_with_the_models_template_is_light() {
        let light = |body: &str| object(body.as_bytes()).map(|f| f.1).unwrap();
        assert!(light(r#"{"messages": [{"role": "user", "content": "Hi"}]}"#));
        assert!(
            !light(r#"{"messages": [], "chat_template": "{{ 1 }}"}"#),
            "a request's template"
        );
        assert!(
            !light(r#"{"messages": [], "chat_template_kwargs": {"chat_template": "{{ 1 }}"}}"#),
            "a request's template among its kwargs"
        );
        let big = format!(r#"{{"prompt": "{}"}}"#, "x".repeat(LIGHT_BODY_BYTES));
        assert!(!light(&big), "a body over the size");
    }

    /// Reference: `tests/data/pydantic_lax.json`, what pydantic 2.13 makes of each value for an
    /// `int`, a `bool` and a `float` field (`gen_pydantic_lax.py` beside it).
    #[test]
    fn values_coerce_as_pydantics_lax_mode() {
        let fixture: Json = serde_json::from_str(include_str!("../tests/data/pydantic_lax.json")).unwrap();
        let outcome = |r: Result<Json, &str>| match r {
            Ok(v) => json!({ "value": v }),
            Err(m) => json!({ "error": m }),
        };
        // Python's `repr` of a float that JSON cannot hold.
        let float = |x: f64| match x {
            _ if x.is_nan() => json!("nan"),
            _ if x.is_infinite() => json!(if x > 0.0 { "inf" } else { "-inf" }),
            _ => json!(x),
        };
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() > 100);
        for case in cases {
            let text = case["json"].as_str().unwrap();
            let mut f = object(format!(r#"{{"v": {text}}}"#).as_bytes()).unwrap();
            let v = f.0.remove("v").unwrap();
            assert_eq!(outcome(lax_int(&v).map(Json::from)), case["int"], "int {text}");
            assert_eq!(outcome(lax_bool(&v).map(Json::from)), case["bool"], "bool {text}");
            assert_eq!(outcome(lax_f64(&v).map(float)), case["float"], "float {text}");
        }
    }

    #[test]
    fn json_minus_zero_is_the_integer_zero_as_in_python() {
        let f = object(br#"{"a": -0, "b": [-0], "c": -0.0, "d": -0e1, "e": 1e-0, "f": "-0"}"#).unwrap();
        let v = Json::Object(f.0);
        assert!(v["a"].is_u64() && v["b"][0].is_u64(), "{v}");
        assert!(v["c"].is_f64() && v["d"].is_f64() && v["e"].is_f64(), "{v}");
        assert_eq!(v["f"], "-0");
        // The text keeps its length: an error's column is where it was.
        let text = b"{\"a\": -0, }";
        let column = serde_json::from_slice::<Json>(text).unwrap_err().column();
        let e = object(text).err().unwrap();
        assert_eq!(e.message, format!("JSON decode error at line 1, column {column}"));
    }

    #[test]
    fn nesting_up_to_the_limit_parses_and_deeper_is_refused() {
        let nested = |depth: usize| format!(r#"{{"x": {}1{}}}"#, "[".repeat(depth - 1), "]".repeat(depth - 1));
        assert!(object(nested(MAX_DEPTH).as_bytes()).is_ok());
        let e = object(nested(MAX_DEPTH + 1).as_bytes()).err().unwrap();
        assert_eq!((e.status, e.param.as_deref()), (StatusCode::BAD_REQUEST, Some("body")));
        // Brackets inside strings do not count.
        let quoted = format!(r#"{{"x": "{}\"{}"}}"#, "[".repeat(2 * MAX_DEPTH), "{".repeat(MAX_DEPTH));
        assert!(object(quoted.as_bytes()).is_ok());
    }

    #[test]
    fn strings_are_skipped_whole_whatever_their_escapes() {
        // An escaped backslash ends before the quote, which closes the string: `-0` after it is a number.
        let f = object(br#"{"a": "x\\", "b": -0, "c": "\"-0\\\"[", "d": "\\"}"#).unwrap();
        let v = Json::Object(f.0);
        assert!(v["b"].is_u64(), "{v}");
        assert_eq!(v["c"], "\"-0\\\"[");
        assert_eq!(v["d"], "\\");
        // An unterminated string holds the rest of the body: its brackets do not count, and the
        // error is the JSON's, at the end.
        for body in [
            format!(r#"{{"x": "{}"#, "[".repeat(2 * MAX_DEPTH)),
            r#"{"x": "ab\"#.to_string(),
        ] {
            let column = serde_json::from_slice::<Json>(body.as_bytes()).unwrap_err().column();
            let e = object(body.as_bytes()).err().unwrap();
            assert_eq!(
                e.message,
                format!("JSON decode error at line 1, column {column}"),
                "{body}"
            );
        }
    }
}
