//! Pure functions reproducing CPython 3.11's string and number semantics.
//!
//! Everything here works on plain Rust values (`&str`, `i64`, `f64`, `char`)
//! or on the small traits defined in this module, so that the template engine
//! can call it without this module knowing the engine's value type.
//!
//! Indices and lengths are counted in code points, as in Python.

mod case;
mod float;
mod json;
mod methods;
mod repr;
mod tables;
#[cfg(test)]
mod test_cases;
mod unicode;

pub use case::{
    capitalize, casefold, isalnum, isalpha, isascii, isdecimal, isdigit, isidentifier, islower,
    isnumeric, isprintable, isspace, istitle, isupper, lower, swapcase, title, upper,
};
pub use float::{float_json, float_repr};
pub use json::{json_write_float, json_write_str};
pub use methods::{
    center, count, endswith, expandtabs, find, index, ljust, lstrip, partition, removeprefix,
    removesuffix, replace, rfind, rindex, rjust, rpartition, rsplit, rstrip, split, splitlines,
    startswith, strip, zfill,
};
pub use repr::{str_ascii, str_repr};
pub use unicode::{is_printable, is_py_whitespace};

use std::fmt;

/// The Python exception class a failing operation raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyErrorKind {
    /// `ValueError`.
    ValueError,
    /// `TypeError`.
    TypeError,
    /// `KeyError`.
    KeyError,
    /// `IndexError`.
    IndexError,
    /// `OverflowError`.
    OverflowError,
}

/// A Python exception: its class and CPython's exact message text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyError {
    /// The exception class.
    pub kind: PyErrorKind,
    /// The message, exactly as CPython words it (`str(exc)`).
    pub message: String,
}

impl PyError {
    /// Builds an error of the given kind.
    pub fn new(kind: PyErrorKind, message: impl Into<String>) -> Self {
        PyError {
            kind,
            message: message.into(),
        }
    }

    /// Builds a `ValueError`.
    pub fn value(message: impl Into<String>) -> Self {
        Self::new(PyErrorKind::ValueError, message)
    }

    /// Builds a `TypeError`.
    pub fn type_error(message: impl Into<String>) -> Self {
        Self::new(PyErrorKind::TypeError, message)
    }
}

impl fmt::Display for PyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.kind {
            PyErrorKind::ValueError => "ValueError",
            PyErrorKind::TypeError => "TypeError",
            PyErrorKind::KeyError => "KeyError",
            PyErrorKind::IndexError => "IndexError",
            PyErrorKind::OverflowError => "OverflowError",
        };
        write!(f, "{}: {}", name, self.message)
    }
}

impl std::error::Error for PyError {}
