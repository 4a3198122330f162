//! `repr()` (and so `str()`) of containers: lists, tuples and dicts of
//! Python values, over a small trait the engine implements.

use super::float::float_repr;
use super::repr::str_repr;
use super::{PyError, PyErrorKind};

/// One value as `repr()` sees it.
pub enum ReprValue<'a> {
    /// `None`.
    None,
    /// `True`/`False`.
    Bool(bool),
    /// An `int`.
    Int(i64),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(&'a str),
    /// A list: `[a, b]`.
    List(Vec<&'a dyn ToRepr>),
    /// A tuple: `()`, `(a,)`, `(a, b)`.
    Tuple(Vec<&'a dyn ToRepr>),
    /// A dict: `{k: v, ...}` in insertion order.
    Dict(Vec<(&'a dyn ToRepr, &'a dyn ToRepr)>),
    /// Any other object, with its repr text already made (e.g.
    /// `Markup('x')`).
    Text(String),
}

/// Implemented by the engine's value type for [`py_repr`].
pub trait ToRepr {
    /// This value's repr view.
    fn to_repr(&self) -> ReprValue<'_>;
}

/// Nesting depth at which CPython's recursion limit would stop `repr`.
const MAX_DEPTH: usize = 990;

/// Python `repr(value)`; for containers this is also `str(value)`
/// (`[1, 'a', None]`, `{'k': 1.5}`, `(1,)`). Nesting deeper than CPython's
/// recursion limit is `RecursionError: maximum recursion depth exceeded
/// while getting the repr of an object`.
pub fn py_repr(value: &dyn ToRepr) -> Result<String, PyError> {
    let mut out = String::new();
    write_repr(value, 0, &mut out)?;
    Ok(out)
}

fn write_repr(value: &dyn ToRepr, depth: usize, out: &mut String) -> Result<(), PyError> {
    if depth > MAX_DEPTH {
        return Err(PyError::new(
            PyErrorKind::RecursionError,
            "maximum recursion depth exceeded while getting the repr of an object",
        ));
    }
    match value.to_repr() {
        ReprValue::None => out.push_str("None"),
        ReprValue::Bool(b) => out.push_str(if b { "True" } else { "False" }),
        ReprValue::Int(i) => out.push_str(&i.to_string()),
        ReprValue::Float(f) => out.push_str(&float_repr(f)),
        ReprValue::Str(s) => str_repr(s, out),
        ReprValue::Text(t) => out.push_str(&t),
        ReprValue::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(*item, depth + 1, out)?;
            }
            out.push(']');
        }
        ReprValue::Tuple(items) => {
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(*item, depth + 1, out)?;
            }
            if items.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        ReprValue::Dict(items) => {
            out.push('{');
            for (i, (k, v)) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(*k, depth + 1, out)?;
                out.push_str(": ");
                write_repr(*v, depth + 1, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{load, string, Py};

    impl ToRepr for Py<'_> {
        fn to_repr(&self) -> ReprValue<'_> {
            match self {
                Py::None => ReprValue::None,
                Py::Bool(b) => ReprValue::Bool(*b),
                Py::Int(i) => ReprValue::Int(*i),
                Py::Float(f) => ReprValue::Float(*f),
                Py::Str(s) => ReprValue::Str(s),
                Py::List(items) => ReprValue::List(items.iter().map(|v| v as &dyn ToRepr).collect()),
                Py::Tuple(items) => ReprValue::Tuple(items.iter().map(|v| v as &dyn ToRepr).collect()),
                Py::Object(t) => panic!("no repr for a {t} object"),
                Py::Dict(items) => ReprValue::Dict(
                    items
                        .iter()
                        .map(|(k, v)| (k as &dyn ToRepr, v as &dyn ToRepr))
                        .collect(),
                ),
            }
        }
    }

    #[test]
    fn repr_matches_cpython() {
        for case in load("value_repr", 27) {
            let (v, want) = (Py::from_json(&case[0]), string(&case[1]));
            assert_eq!(py_repr(&v).as_deref(), Ok(want), "{v:?}");
        }
    }

    #[test]
    fn other_objects_and_depth() {
        struct Deep(usize);
        impl ToRepr for Deep {
            fn to_repr(&self) -> ReprValue<'_> {
                match self.0 {
                    0 => ReprValue::Text("Markup('x')".to_string()),
                    n => ReprValue::List(vec![Box::leak(Box::new(Deep(n - 1)))]),
                }
            }
        }
        assert_eq!(py_repr(&Deep(2)).as_deref(), Ok("[[Markup('x')]]"));
        let err = py_repr(&Deep(5000)).map_err(|e| e.kind);
        assert_eq!(err, Err(PyErrorKind::RecursionError));
    }
}
