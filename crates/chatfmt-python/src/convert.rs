//! Python values to JSON, as transformers' `_plain_template_data` rebuilds what a template sees: JSON
//! scalars and containers as they are (subclasses of `str`, `int`, `float` reduced to the base type),
//! mappings, lists and tuples element by element, NumPy scalars (`numpy.generic`) by their `.item()`,
//! dataclasses by their fields, pydantic models by `model_dump()`, and anything else (NumPy arrays
//! included) as a `<TypeName>` placeholder. JSON cannot hold everything Python can: tuples arrive as
//! lists, and a mapping key that is not a string, or a NaN or infinite float, is refused.

use pyo3::exceptions::{PyRecursionError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple, PyType};
use serde_json::{Map, Number, Value as Json};

/// Nesting deeper than this is refused as CPython's recursion limit would refuse it.
const MAX_DEPTH: usize = 900;

/// The JSON value a template sees for `obj`.
pub fn to_json(obj: &Bound<'_, PyAny>) -> PyResult<Json> {
    plain(obj, 0)
}

/// The JSON object of a mapping (template variables).
pub fn to_object(obj: &Bound<'_, PyAny>) -> PyResult<Map<String, Json>> {
    match plain(obj, 0)? {
        Json::Object(m) => Ok(m),
        _ => Err(PyTypeError::new_err("expected a dict")),
    }
}

fn plain(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Json> {
    if depth > MAX_DEPTH {
        return Err(PyRecursionError::new_err("maximum recursion depth exceeded"));
    }
    if obj.is_none() {
        return Ok(Json::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Json::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Json::String(s.to_cow()?.into_owned()));
    }
    if obj.cast::<PyInt>().is_ok() {
        return int(obj);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return float(f.value());
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return mapping(d.iter(), depth);
    }
    if let Ok(list) = obj.cast::<PyList>() {
        return list.iter().map(|v| plain(&v, depth + 1)).collect();
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().map(|v| plain(&v, depth + 1)).collect();
    }
    if let Ok(m) = obj.cast::<PyMapping>() {
        let items = m.items()?;
        let pairs: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> =
            items.iter().map(|kv| kv.extract()).collect::<PyResult<_>>()?;
        return mapping(pairs.into_iter(), depth);
    }
    let py = obj.py();
    let ty = obj.get_type();
    let module: String = ty.getattr("__module__").and_then(|m| m.extract()).unwrap_or_default();
    if module == "numpy" && obj.is_instance(&py.import("numpy")?.getattr("generic")?)? {
        return plain(&obj.call_method0("item")?, depth + 1);
    }
    if ty.hasattr("__dataclass_fields__")? && obj.cast::<PyType>().is_err() {
        let fields = py.import("dataclasses")?.call_method1("fields", (obj,))?;
        let mut out = Map::new();
        for field in fields.try_iter()? {
            let name: String = field?.getattr("name")?.extract()?;
            out.insert(name.clone(), plain(&obj.getattr(name.as_str())?, depth + 1)?);
        }
        return Ok(Json::Object(out));
    }
    if let Ok(dump) = obj.getattr("model_dump") {
        if dump.is_callable() {
            return plain(&dump.call0()?, depth + 1);
        }
    }
    Ok(Json::String(format!("<{}>", ty.name()?)))
}

/// An `int` (or subclass): exact within 64 bits, else the nearest float.
fn int(obj: &Bound<'_, PyAny>) -> PyResult<Json> {
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Json::from(i));
    }
    if let Ok(u) = obj.extract::<u64>() {
        return Ok(Json::from(u));
    }
    float(obj.extract::<f64>()?)
}

fn float(f: f64) -> PyResult<Json> {
    Number::from_f64(f).map(Json::Number).ok_or_else(|| {
        PyValueError::new_err(format!(
            "chatfmt cannot pass the float {f} to a template (NaN and infinities have no JSON form)"
        ))
    })
}

/// A mapping's items. Keys must be strings: a template would see another key as itself (`d[1]`,
/// `{1: 'a'}` printed), which a JSON object cannot hold.
fn mapping<'py>(items: impl Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>, depth: usize) -> PyResult<Json> {
    let mut out = Map::new();
    for (k, v) in items {
        let Json::String(key) = plain(&k, depth + 1)? else {
            return Err(PyTypeError::new_err(format!(
                "chatfmt passes only str keys to a template (JSON objects), but got the {} key {}; convert the keys to str",
                k.get_type().name()?,
                k.repr()?
            )));
        };
        out.insert(key, plain(&v, depth + 1)?);
    }
    Ok(Json::Object(out))
}
