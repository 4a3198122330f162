//! Rust errors raised as the Python exceptions transformers raises: builtins (`TypeError`,
//! `ValueError`, ...) as themselves, Jinja's classes as `chatfmt.<Name>` (defined in
//! `chatfmt/_errors.py`, where they also derive from jinja2's when it is installed), with `.lineno`
//! and `.name`; loading failures as `OSError`.

use chatfmt::jinja::{Error as JinjaError, ErrorKind as JinjaKind};
use pyo3::exceptions::{
    PyAssertionError, PyAttributeError, PyIndexError, PyKeyError, PyNameError, PyOSError, PyOverflowError,
    PyRecursionError, PyRuntimeError, PySyntaxError, PyTypeError, PyValueError, PyZeroDivisionError,
};
use pyo3::prelude::*;

/// A `chatfmt.<class_name>` exception with `message`, `.lineno` and `.name`.
fn chatfmt_class(py: Python<'_>, class_name: &str, message: &str, line: Option<u32>, name: Option<&str>) -> PyErr {
    let made = py
        .import("chatfmt._errors")
        .and_then(|m| m.getattr(class_name))
        .and_then(|cls| cls.call1((message, line, name)));
    match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// The key of a `KeyError` whose message is `message`: the engine words it as CPython's
/// `str(KeyError(key))`, the key's repr, so the key is that literal read back (`0` for `0`, `'a'`
/// for `"'a'"`), and the message itself when it is no literal.
fn key_of(py: Python<'_>, message: String) -> Py<PyAny> {
    let key = py
        .import("ast")
        .and_then(|ast| ast.call_method1("literal_eval", (message.as_str(),)));
    match key {
        Ok(key) => key.unbind(),
        Err(_) => pyo3::types::PyString::new(py, &message).into_any().unbind(),
    }
}

/// The engine's error as the exception transformers raises for it.
pub fn jinja_error(py: Python<'_>, e: &JinjaError) -> PyErr {
    let msg = e.message().to_string();
    match e.kind() {
        JinjaKind::TypeError => PyTypeError::new_err(msg),
        JinjaKind::ValueError => PyValueError::new_err(msg),
        JinjaKind::KeyError => PyKeyError::new_err(key_of(py, msg)),
        JinjaKind::IndexError => PyIndexError::new_err(msg),
        JinjaKind::AttributeError => PyAttributeError::new_err(msg),
        JinjaKind::ZeroDivisionError => PyZeroDivisionError::new_err(msg),
        JinjaKind::OverflowError => PyOverflowError::new_err(msg),
        JinjaKind::RecursionError => PyRecursionError::new_err(msg),
        JinjaKind::RuntimeError => PyRuntimeError::new_err(msg),
        JinjaKind::AssertionError => PyAssertionError::new_err(msg),
        JinjaKind::NameError => PyNameError::new_err(msg),
        JinjaKind::SyntaxError => PySyntaxError::new_err(msg),
        JinjaKind::LimitExceeded => chatfmt_class(py, "LimitError", &limit_message(e), e.line(), e.template_name()),
        kind => chatfmt_class(py, kind.python_name(), &msg, e.line(), e.template_name()),
    }
}

/// A failure of rendering and tokenizing.
pub fn tokenize_error(py: Python<'_>, e: &chatfmt_tokenize::Error) -> PyErr {
    if let Some(t) = e.template_error() {
        return jinja_error(py, t);
    }
    match e.python_class() {
        Some("ValueError") => PyValueError::new_err(e.message().to_string()),
        Some("OverflowError") => PyOverflowError::new_err(e.message().to_string()),
        Some(_) => chatfmt_class(py, "OffsetError", e.message(), None, None),
        None => PyOSError::new_err(e.with_causes()),
    }
}

/// `Class: message` of the exception [`jinja_error`] raises (the message is its first argument).
pub fn jinja_error_text(e: &JinjaError) -> String {
    match e.kind() {
        JinjaKind::LimitExceeded => format!("LimitError: {}", limit_message(e)),
        kind => format!("{}: {}", kind.python_name(), e.message()),
    }
}

/// A limit's message, with how to raise the step budget when that is the limit passed.
fn limit_message(e: &JinjaError) -> String {
    let msg = e.message();
    if e.is_step_limit() {
        format!("{msg}; raise the budget with tokenizer.max_steps = N (or from_pretrained(..., max_steps=N))")
    } else {
        msg.to_string()
    }
}

/// `Class: message` of the exception [`tokenize_error`] raises, the message being its first argument.
pub fn tokenize_error_text(e: &chatfmt_tokenize::Error) -> String {
    if let Some(t) = e.template_error() {
        return jinja_error_text(t);
    }
    match e.python_class() {
        Some(class @ ("ValueError" | "OverflowError")) => format!("{class}: {}", e.message()),
        Some(_) => format!("OffsetError: {}", e.message()),
        None => format!("OSError: {}", e.with_causes()),
    }
}

/// A failure to find or read a model.
pub fn load_error(e: &chatfmt::Error) -> PyErr {
    PyOSError::new_err(format!("{e:#}"))
}
