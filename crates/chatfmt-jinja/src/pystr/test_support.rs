//! Test doubles for [`FormatArg`] and helpers shared by the unit tests.

use super::{float_repr, key_error, str_repr, FormatArg, FormatMapping, PyError, PyErrorKind};

/// A Python value in the generated test tables.
#[derive(Debug, Clone, Copy)]
pub enum A {
    /// `int`
    I(i64),
    /// `bool`
    B(bool),
    /// `float`, by bits
    F(u64),
    /// `str`
    S(&'static str),
    /// `None`
    N,
}

impl FormatArg for A {
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
    pub vals: &'a [A],
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
        PyErrorKind::RecursionError => "RecursionError",
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
