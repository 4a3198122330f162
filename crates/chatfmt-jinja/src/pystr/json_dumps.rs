//! `json.dumps` of a value tree, over a small trait the engine implements.

use super::arith::cmp_int_float;
use super::float::float_json;
use super::json::json_write_str;
use super::sort::python_sort;
use super::{PyError, PyErrorKind};
use std::cmp::Ordering;

/// A dict key as `json.dumps` sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JsonKey<'a> {
    /// A `str` key.
    Str(&'a str),
    /// An `int` key (written as its decimal text).
    Int(i64),
    /// A `float` key (written as its repr, or `NaN`/`Infinity`).
    Float(f64),
    /// A `bool` key (`true`/`false`).
    Bool(bool),
    /// `None` (`null`).
    None,
    /// A key of any other type, by type name: a `TypeError`.
    Other(&'a str),
}

/// One value as `json.dumps` sees it.
pub enum JsonValue<'a> {
    /// `None`.
    Null,
    /// `True`/`False`.
    Bool(bool),
    /// An `int`.
    Int(i64),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(&'a str),
    /// A list or tuple.
    List(Vec<&'a dyn ToJson>),
    /// A dict, items in insertion order.
    Dict(Vec<(JsonKey<'a>, &'a dyn ToJson)>),
    /// Anything else, by type name:
    /// `TypeError: Object of type X is not JSON serializable`.
    Other(&'a str),
}

/// Implemented by the engine's value type to be serialised by [`json_dumps`].
pub trait ToJson {
    /// This value's JSON view.
    fn to_json(&self) -> JsonValue<'_>;
}

/// `json.dumps` options; `JsonOptions::default()` is Python's defaults.
#[derive(Debug, Clone)]
pub struct JsonOptions<'a> {
    /// Escape every non-ASCII character (Python's default is `true`; pass
    /// `false` for `ensure_ascii=False`).
    pub ensure_ascii: bool,
    /// The indent string (`indent=2` is `"  "`, a negative number is `""`,
    /// a string is itself); `None` for a single line.
    pub indent: Option<&'a str>,
    /// `(item_separator, key_separator)`; `None` means `(", ", ": ")`, or
    /// `(",", ": ")` when indenting.
    pub separators: Option<(&'a str, &'a str)>,
    /// Sort dict items by key (`sort_keys=True`).
    pub sort_keys: bool,
}

impl Default for JsonOptions<'_> {
    fn default() -> Self {
        JsonOptions {
            ensure_ascii: true,
            indent: None,
            separators: None,
            sort_keys: false,
        }
    }
}

/// Nesting depth at which CPython's recursion limit would stop the encoder.
const MAX_DEPTH: usize = 990;

/// Python `json.dumps(value, ...)` with the given options (`allow_nan` and
/// `check_circular` at their defaults; nesting deeper than CPython's
/// recursion limit is `RecursionError: maximum recursion depth exceeded
/// while encoding a JSON object`).
pub fn json_dumps(value: &dyn ToJson, opts: &JsonOptions<'_>) -> Result<String, PyError> {
    let (item_sep, key_sep) = opts.separators.unwrap_or(if opts.indent.is_some() {
        (",", ": ")
    } else {
        (", ", ": ")
    });
    let mut enc = Encoder {
        opts,
        item_sep,
        key_sep,
        out: String::new(),
    };
    enc.value(value, 0)?;
    Ok(enc.out)
}

struct Encoder<'o> {
    opts: &'o JsonOptions<'o>,
    item_sep: &'o str,
    key_sep: &'o str,
    out: String,
}

fn type_name_of_key(k: &JsonKey<'_>) -> &'static str {
    match k {
        JsonKey::Str(_) => "str",
        JsonKey::Int(_) => "int",
        JsonKey::Float(_) => "float",
        JsonKey::Bool(_) => "bool",
        JsonKey::None => "NoneType",
        JsonKey::Other(_) => "object",
    }
}

/// Python's `a < b` on dict keys; `TypeError` for unorderable types.
fn key_lt(a: &JsonKey<'_>, b: &JsonKey<'_>) -> Result<bool, PyError> {
    let num = |k: &JsonKey<'_>| -> Option<Result<i64, f64>> {
        match *k {
            JsonKey::Int(i) => Some(Ok(i)),
            JsonKey::Bool(v) => Some(Ok(v as i64)),
            JsonKey::Float(f) => Some(Err(f)),
            _ => None,
        }
    };
    let ord = match (a, b) {
        (JsonKey::Str(x), JsonKey::Str(y)) => Some(x.cmp(y)),
        _ => match (num(a), num(b)) {
            (Some(Ok(x)), Some(Ok(y))) => Some(x.cmp(&y)),
            (Some(Err(x)), Some(Err(y))) => x.partial_cmp(&y),
            (Some(Ok(x)), Some(Err(y))) => cmp_int_float(x, y),
            (Some(Err(x)), Some(Ok(y))) => cmp_int_float(y, x).map(Ordering::reverse),
            _ => {
                let name = |k: &JsonKey<'_>| match k {
                    JsonKey::Other(n) => n.to_string(),
                    k => type_name_of_key(k).to_string(),
                };
                return Err(PyError::type_error(format!(
                    "'<' not supported between instances of '{}' and '{}'",
                    name(a),
                    name(b)
                )));
            }
        },
    };
    Ok(ord == Some(Ordering::Less))
}

impl Encoder<'_> {
    fn newline(&mut self, level: usize) {
        if let Some(ind) = self.opts.indent {
            self.out.push('\n');
            for _ in 0..level {
                self.out.push_str(ind);
            }
        }
    }

    fn value(&mut self, v: &dyn ToJson, level: usize) -> Result<(), PyError> {
        if level > MAX_DEPTH {
            return Err(PyError::new(
                PyErrorKind::RecursionError,
                "maximum recursion depth exceeded while encoding a JSON object",
            ));
        }
        match v.to_json() {
            JsonValue::Null => self.out.push_str("null"),
            JsonValue::Bool(b) => self.out.push_str(if b { "true" } else { "false" }),
            JsonValue::Int(i) => self.out.push_str(&i.to_string()),
            JsonValue::Float(f) => self.out.push_str(&float_json(f)),
            JsonValue::Str(s) => json_write_str(s, self.opts.ensure_ascii, &mut self.out),
            JsonValue::Other(t) => {
                return Err(PyError::type_error(format!(
                    "Object of type {t} is not JSON serializable"
                )))
            }
            JsonValue::List(items) => {
                if items.is_empty() {
                    self.out.push_str("[]");
                    return Ok(());
                }
                self.out.push('[');
                self.newline(level + 1);
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(self.item_sep);
                        self.newline(level + 1);
                    }
                    self.value(*item, level + 1)?;
                }
                self.newline(level);
                self.out.push(']');
            }
            JsonValue::Dict(mut items) => {
                if items.is_empty() {
                    self.out.push_str("{}");
                    return Ok(());
                }
                if self.opts.sort_keys {
                    python_sort(&mut items, |a, b| key_lt(&a.0, &b.0))?;
                }
                self.out.push('{');
                self.newline(level + 1);
                for (i, (key, item)) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(self.item_sep);
                        self.newline(level + 1);
                    }
                    match *key {
                        JsonKey::Str(s) => json_write_str(s, self.opts.ensure_ascii, &mut self.out),
                        JsonKey::Int(k) => self.out.push_str(&format!("\"{k}\"")),
                        JsonKey::Float(f) => {
                            self.out.push('"');
                            self.out.push_str(&float_json(f));
                            self.out.push('"');
                        }
                        JsonKey::Bool(b) => self.out.push_str(if b { "\"true\"" } else { "\"false\"" }),
                        JsonKey::None => self.out.push_str("\"null\""),
                        JsonKey::Other(t) => {
                            return Err(PyError::type_error(format!(
                                "keys must be str, int, float, bool or None, not {t}"
                            )))
                        }
                    }
                    self.out.push_str(self.key_sep);
                    self.value(*item, level + 1)?;
                }
                self.newline(level);
                self.out.push('}');
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{boolean, check, load, opt_string, result, string, Py};

    fn key<'a>(k: &Py<'a>) -> JsonKey<'a> {
        match *k {
            Py::None => JsonKey::None,
            Py::Bool(b) => JsonKey::Bool(b),
            Py::Int(i) => JsonKey::Int(i),
            Py::Float(f) => JsonKey::Float(f),
            Py::Str(s) => JsonKey::Str(s),
            Py::Object(t) => JsonKey::Other(t),
            _ => panic!("not a key: {k:?}"),
        }
    }

    impl ToJson for Py<'_> {
        fn to_json(&self) -> JsonValue<'_> {
            match self {
                Py::None => JsonValue::Null,
                Py::Bool(b) => JsonValue::Bool(*b),
                Py::Int(i) => JsonValue::Int(*i),
                Py::Float(f) => JsonValue::Float(*f),
                Py::Str(s) => JsonValue::Str(s),
                Py::List(items) | Py::Tuple(items) => JsonValue::List(items.iter().map(|v| v as &dyn ToJson).collect()),
                Py::Dict(items) => JsonValue::Dict(items.iter().map(|(k, v)| (key(k), v as &dyn ToJson)).collect()),
                Py::Object(t) => JsonValue::Other(t),
            }
        }
    }

    #[test]
    fn dumps_matches_cpython() {
        for case in load("json_dumps", 288) {
            let v = Py::from_json(&case[0]);
            let separators = (!case[3].is_null()).then(|| (string(&case[3][0]), string(&case[3][1])));
            let opts = JsonOptions {
                ensure_ascii: boolean(&case[1]),
                indent: opt_string(&case[2]),
                separators,
                sort_keys: boolean(&case[4]),
            };
            let want = result(&case[5], string);
            check(json_dumps(&v, &opts), &want, &format!("json.dumps({v:?}, {opts:?})"));
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        struct Deep(usize);
        impl ToJson for Deep {
            fn to_json(&self) -> JsonValue<'_> {
                if self.0 == 0 {
                    JsonValue::Null
                } else {
                    JsonValue::List(vec![Box::leak(Box::new(Deep(self.0 - 1)))])
                }
            }
        }
        let err = json_dumps(&Deep(5000), &JsonOptions::default()).map_err(|e| e.kind);
        assert_eq!(err, Err(PyErrorKind::RecursionError));
        assert_eq!(
            json_dumps(&Deep(3), &JsonOptions::default()).as_deref(),
            Ok("[[[null]]]")
        );
    }
}
