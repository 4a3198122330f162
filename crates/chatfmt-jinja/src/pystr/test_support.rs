//! Test doubles for [`FormatArg`], the loader of the expected values in
//! `tests/data/pystr/` and helpers shared by the unit tests.

use super::{float_repr, key_error, str_repr, FormatArg, FormatMapping, PyError, PyErrorKind};
use serde_json::Value;

/// A format argument: a Python `str`, `int`, `bool`, `float` or `None`.
#[derive(Debug, Clone, Copy)]
pub enum A<'a> {
    /// `int`
    I(i64),
    /// `bool`
    B(bool),
    /// `float`, by bits
    F(u64),
    /// `str`
    S(&'a str),
    /// `None`
    N,
}

impl<'a> A<'a> {
    /// Reads an argument written by `scripts/gen_pystr_cases.py`.
    pub fn from_json(v: &'a Value) -> Self {
        match v {
            Value::Null => A::N,
            Value::Bool(b) => A::B(*b),
            Value::String(s) => A::S(s),
            Value::Number(_) => A::I(int(v)),
            _ => A::F(float_bits(v)),
        }
    }
}

impl FormatArg for A<'_> {
    fn py_str(&self) -> String {
        match self {
            A::S(s) => s.to_string(),
            other => other.py_repr(),
        }
    }

    fn py_repr(&self) -> String {
        match *self {
            A::I(v) => v.to_string(),
            A::B(v) => if v { "True" } else { "False" }.to_string(),
            A::F(bits) => float_repr(f64::from_bits(bits)),
            A::S(s) => {
                let mut out = String::new();
                str_repr(s, &mut out);
                out
            }
            A::N => "None".to_string(),
        }
    }

    fn as_int(&self) -> Option<i64> {
        match *self {
            A::I(v) => Some(v),
            A::B(v) => Some(v as i64),
            _ => None,
        }
    }

    fn as_float(&self) -> Option<f64> {
        match *self {
            A::I(v) => Some(v as f64),
            A::B(v) => Some(v as i64 as f64),
            A::F(bits) => Some(f64::from_bits(bits)),
            _ => None,
        }
    }

    fn type_name(&self) -> &str {
        match self {
            A::I(_) => "int",
            A::B(_) => "bool",
            A::F(_) => "float",
            A::S(_) => "str",
            A::N => "NoneType",
        }
    }
}

/// A `dict` with string keys.
pub struct Dict<'a> {
    /// Keys, in insertion order.
    pub keys: &'a [&'a str],
    /// Values, parallel to `keys`.
    pub vals: &'a [A<'a>],
}

impl FormatArg for Dict<'_> {
    fn py_str(&self) -> String {
        self.py_repr()
    }

    fn py_repr(&self) -> String {
        let mut out = String::from("{");
        for (i, (k, v)) in self.keys.iter().zip(self.vals).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            str_repr(k, &mut out);
            out.push_str(": ");
            out.push_str(&v.py_repr());
        }
        out.push('}');
        out
    }

    fn as_int(&self) -> Option<i64> {
        None
    }

    fn as_float(&self) -> Option<f64> {
        None
    }

    fn type_name(&self) -> &str {
        "dict"
    }
}

impl FormatMapping for Dict<'_> {
    fn get_item(&self, key: &str) -> Result<&dyn FormatArg, PyError> {
        match self.keys.iter().position(|k| *k == key) {
            Some(i) => Ok(&self.vals[i]),
            None => Err(key_error(key)),
        }
    }
}

/// Python's class name of an error kind.
pub fn kind_name(k: PyErrorKind) -> &'static str {
    match k {
        PyErrorKind::ValueError => "ValueError",
        PyErrorKind::TypeError => "TypeError",
        PyErrorKind::KeyError => "KeyError",
        PyErrorKind::IndexError => "IndexError",
        PyErrorKind::OverflowError => "OverflowError",
        PyErrorKind::MemoryError => "MemoryError",
        PyErrorKind::ZeroDivisionError => "ZeroDivisionError",
        PyErrorKind::UndefinedError => "UndefinedError",
    }
}

/// Compares a result with an expected `Ok` value or `(class, message)`.
pub fn check<T: PartialEq<U> + std::fmt::Debug, U: std::fmt::Debug>(
    got: Result<T, PyError>,
    want: &Result<U, (&str, &str)>,
    what: &str,
) {
    match (got, want) {
        (Ok(g), Ok(w)) => assert_eq!(g, *w, "{what}"),
        (Err(e), Err((k, m))) if *m == "lone surrogate" => {
            // CPython returns a string with a lone surrogate here.
            assert_eq!(kind_name(e.kind), *k, "{what}");
            assert!(e.message.contains("lone surrogate"), "{what}");
        }
        (Err(e), Err((k, m))) => {
            assert_eq!((kind_name(e.kind), e.message.as_str()), (*k, *m), "{what}")
        }
        (g, w) => panic!("{what}: got {g:?}, want {w:?}"),
    }
}

/// A Python value as `scripts/gen_pystr_cases.py` writes it.
#[derive(Debug)]
pub enum Py<'a> {
    /// `None`
    None,
    /// `bool`
    Bool(bool),
    /// `int`
    Int(i64),
    /// `float`
    Float(f64),
    /// `str`
    Str(&'a str),
    /// `list`
    List(Vec<Py<'a>>),
    /// `tuple`
    Tuple(Vec<Py<'a>>),
    /// `dict`, in insertion order
    Dict(Vec<(Py<'a>, Py<'a>)>),
    /// An object of any other type, by type name
    Object(&'a str),
}

impl<'a> Py<'a> {
    /// Reads a value.
    pub fn from_json(v: &'a Value) -> Self {
        let items = |v: &'a Value| array(v).iter().map(Py::from_json).collect();
        match v {
            Value::Null => Py::None,
            Value::Bool(b) => Py::Bool(*b),
            Value::String(s) => Py::Str(s),
            Value::Number(_) => Py::Int(int(v)),
            Value::Object(o) => match o.iter().next() {
                Some((k, v)) if k == "float" => Py::Float(f64::from_bits(bits(v))),
                Some((k, v)) if k == "list" => Py::List(items(v)),
                Some((k, v)) if k == "tuple" => Py::Tuple(items(v)),
                Some((k, v)) if k == "dict" => Py::Dict(
                    array(v)
                        .iter()
                        .map(|kv| (Py::from_json(&kv[0]), Py::from_json(&kv[1])))
                        .collect(),
                ),
                Some((k, v)) if k == "object" => Py::Object(string(v)),
                _ => panic!("not a Python value: {v}"),
            },
            Value::Array(_) => panic!("not a Python value: {v}"),
        }
    }
}

/// The cases of one family, `tests/data/pystr/<family>.jsonl` (one JSON array
/// of fields per line), checking that there are exactly `expected` of them.
pub fn load(family: &str, expected: usize) -> Vec<Vec<Value>> {
    let path = format!("{}/tests/data/pystr/{family}.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cases: Vec<Vec<Value>> = text
        .lines()
        .enumerate()
        .map(|(i, line)| serde_json::from_str(line).unwrap_or_else(|e| panic!("{path}:{}: {e}", i + 1)))
        .collect();
    assert_eq!(cases.len(), expected, "number of cases in {path}");
    cases
}

/// A `str` field.
pub fn string(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

/// An optional `str` field.
pub fn opt_string(v: &Value) -> Option<&str> {
    (!v.is_null()).then(|| string(v))
}

/// A list of `str`.
pub fn strings(v: &Value) -> Vec<&str> {
    array(v).iter().map(string).collect()
}

/// An `int` field.
pub fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an int: {v}"))
}

/// An optional `int` field.
pub fn opt_int(v: &Value) -> Option<i64> {
    (!v.is_null()).then(|| int(v))
}

/// A `bool` field.
pub fn boolean(v: &Value) -> bool {
    v.as_bool().unwrap_or_else(|| panic!("not a bool: {v}"))
}

/// A float's bit pattern, written as an unsigned integer.
pub fn bits(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not float bits: {v}"))
}

/// A `float` value, `{"float": BITS}`, by bits.
pub fn float_bits(v: &Value) -> u64 {
    bits(&v["float"])
}

/// A JSON array.
pub fn array(v: &Value) -> &[Value] {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

/// A result, `{"ok": VALUE}` or `{"err": [CLASS, MESSAGE]}`.
pub fn result<'a, T>(v: &'a Value, ok: impl FnOnce(&'a Value) -> T) -> Result<T, (&'a str, &'a str)> {
    match (v.get("ok"), v.get("err")) {
        (Some(value), None) => Ok(ok(value)),
        (None, Some(err)) => Err((string(&err[0]), string(&err[1]))),
        _ => panic!("not a result: {v}"),
    }
}

/// A result whose error is kept as its message only, `{"err": MESSAGE}`.
pub fn result_message<'a, T>(v: &'a Value, ok: impl FnOnce(&'a Value) -> T) -> Result<T, &'a str> {
    match (v.get("ok"), v.get("err")) {
        (Some(value), None) => Ok(ok(value)),
        (None, Some(err)) => Err(string(err)),
        _ => panic!("not a result: {v}"),
    }
}
