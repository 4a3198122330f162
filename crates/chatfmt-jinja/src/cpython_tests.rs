//! The engine's own Python semantics against the CPython reference values of `tests/data/pystr/`.

use crate::pystr::test_support::{int, load, result, string, Py};
use crate::value::{Dict, Value};
use std::rc::Rc;

/// The engine's value for a Python value of the reference files.
fn value<'a>(py: &Py<'a>) -> Value<'a> {
    match py {
        Py::None => Value::None,
        Py::Bool(b) => Value::Bool(*b),
        Py::Int(i) => Value::Int(*i),
        Py::Float(f) => Value::Float(*f),
        Py::Str(s) => Value::Str(s),
        Py::List(items) => Value::list(items.iter().map(value).collect()),
        Py::Tuple(items) => Value::Tuple(Rc::new(items.iter().map(value).collect())),
        Py::Dict(items) => {
            let mut d = Dict::default();
            for (k, v) in items {
                d.insert(value(k), value(v)).expect("a hashable key");
            }
            Value::Dict(Rc::new(d))
        }
        Py::Object(t) => panic!("no engine value for a {t} object"),
    }
}

#[test]
fn repr_matches_cpython() {
    for case in load("value_repr", 27) {
        let v = Py::from_json(&case[0]);
        let mut out = String::new();
        value(&v).write_repr(&mut out);
        assert_eq!(out, string(&case[1]), "{v:?}");
    }
}

/// Jinja turns the `IndexError` of a subscript into an undefined value.
#[test]
fn string_indexing_matches_cpython() {
    for case in load("str_index", 36) {
        let (s, i) = (string(&case[0]), int(&case[1]));
        let got = Value::Str(s).get_item_opt(&Value::Int(i));
        let want = result(&case[2], string).ok();
        assert_eq!(got.as_ref().and_then(Value::as_str), want, "{s:?}[{i}]");
    }
}
