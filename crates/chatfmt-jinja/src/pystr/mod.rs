//! Pure functions reproducing CPython 3.11's string and number semantics.
//!
//! Everything here works on plain Rust values (`&str`, `i64`, `f64`, `char`,
//! big ints) or on the small traits defined in this module, so that the template engine
//! can call it without this module knowing the engine's value type.
//!
//! Indices and lengths are counted in code points, as in Python. Where a
//! result is a piece of the input (strip, split, partition, step-1 slices,
//! format literals) it is returned as a `&str` slice of that input.
//!
//! Functions that can fail in Python return `Result<_, PyError>` carrying
//! the exception class and CPython's exact message.
//!
//! # Map
//!
//! - Numbers to text: [`float_repr`] (`repr`/`str` of a float),
//!   [`json_write_float`].
//! - Strings to text: [`str_repr`], [`ascii_escape`] (of a repr),
//!   [`json_write_str`]; MarkupSafe's [`html_escape`], [`striptags`] and
//!   [`html_unescape`].
//! - `str` methods: [`strip`], [`lstrip`], [`rstrip`], [`split`],
//!   [`rsplit`], [`splitlines`], [`startswith`], [`endswith`], [`find`],
//!   [`rfind`], [`index`], [`rindex`], [`count`], [`replace_sized`],
//!   [`partition`], [`rpartition`], [`removeprefix`], [`removesuffix`],
//!   [`zfill`], [`center`], [`ljust`], [`rjust`], [`expandtabs`].
//! - Case and classes: [`upper`], [`lower`], [`capitalize`], [`title`],
//!   [`swapcase`], [`casefold`], [`isalpha`], [`isdigit`], [`isdecimal`],
//!   [`isnumeric`], [`isalnum`], [`isspace`], [`isupper`], [`islower`],
//!   [`istitle`], [`isidentifier`], [`isprintable`], [`isascii`];
//!   per character [`is_printable`], [`is_py_whitespace`].
//! - Slicing: [`str_slice`], [`slice_indices`].
//! - `%` formatting: [`percent_format`] with [`PercentArgs`],
//!   [`FormatArg`], [`FormatMapping`].
//! - `str.format`: [`format_iter`] (lazy, in CPython's error order), then
//!   [`apply_format_spec`] per field.
//! - Parsing numbers: [`parse_float`] (`float(s)`), [`parse_int`]
//!   (`int(s, base)`), [`py_round`] (`round(x, n)`), [`py_round_int`].
//! - Arithmetic: [`int_floordiv`], [`int_mod`], [`int_truediv`],
//!   [`big_truediv`], [`int_pow`], [`float_truediv`], [`float_floordiv`],
//!   [`float_mod`], [`float_pow`]; conversions [`float_to_int`],
//!   [`int_to_float`]; exact comparison [`cmp_int_float`], [`cmp_big_float`].
//! - Jinja filters that are pure Python string logic: [`jinja_title`],
//!   [`jinja_wordcount`].
//! - Sorting: [`python_sort`] (CPython's comparison sequence and errors).
//! - Dates: [`DateTimeFields`] and [`strftime`].

#![warn(missing_docs)]

mod arith;
mod case;
mod float;
mod format;
mod format_spec;
mod html;
#[rustfmt::skip]
mod html_entities;
mod jinja;
mod json;
mod methods;
mod numbers;
mod percent;
mod repr;
#[cfg(test)]
mod robustness;
mod slice;
mod sort;
mod strftime;
#[rustfmt::skip]
mod tables;
#[cfg(test)]
pub(crate) mod test_support;
mod unicode;

pub use arith::{
    big_truediv, cmp_big_float, cmp_int_float, float_floordiv, float_mod, float_pow, float_to_int, float_truediv,
    int_floordiv, int_mod, int_pow, int_to_float, int_truediv, PyNumber,
};
pub use case::{
    capitalize, casefold, isalnum, isalpha, isascii, isdecimal, isdigit, isidentifier, islower, isnumeric, isprintable,
    isspace, istitle, isupper, lower, swapcase, title, upper,
};
pub use float::float_repr;
pub use format::{format_iter, Conversion, FieldAccessor, FieldArg, FormatIter, FormatPiece};
pub use format_spec::apply_format_spec;
pub use html::{html_unescape, striptags};
pub use jinja::{escape_into, is_jinja_name_char, jinja_title, jinja_wordcount};
pub use json::{html_escape, json_write_float, json_write_str};
pub use methods::{
    center, count, endswith, expandtabs, find, index, ljust, lstrip, partition, removeprefix, removesuffix,
    replace_sized, replaced_len, rfind, rindex, rjust, rpartition, rsplit, rstrip, split, splitlines, startswith,
    strip, zfill,
};
pub use numbers::{parse_float, parse_int, py_round, py_round_int};
pub(crate) use percent::big_digits;
pub use percent::percent_format;
pub use repr::{ascii_escape, str_repr};
pub use slice::{slice_indices, str_slice};
pub use sort::python_sort;
pub use strftime::{strftime, DateTimeFields};
pub use unicode::{is_py_space, is_py_whitespace};

use std::fmt;

/// A value as seen by `%`-formatting and `str.format`: the engine implements
/// this for its own value type.
pub trait FormatArg {
    /// Python `str(value)`.
    fn py_str(&self) -> String;
    /// Python `repr(value)`.
    fn py_repr(&self) -> String;
    /// The value if it is an `int` or a `bool` (`True` is 1), else `None`.
    fn as_int(&self) -> Option<i64>;
    /// The value as a float if it is an `int`, `bool` or `float`, else `None`.
    fn as_float(&self) -> Option<f64>;
    /// Python's type name (`type(value).__name__`): `"str"`, `"int"`,
    /// `"bool"`, `"float"`, `"NoneType"`, `"list"`, `"dict"`, ...
    fn type_name(&self) -> &str;
    /// An `int` beyond `i64` (for which [`as_int`](Self::as_int) is `None`).
    fn as_big_int(&self) -> Option<&num_bigint::BigInt> {
        None
    }
    /// For an argument that is not a number but defines `__int__` (`%d` calls `int()` on it): the
    /// result's sign and decimal digits, or the error `int()` raises. `None` without `__int__`.
    fn int_conversion(&self) -> Option<Result<(bool, String), PyError>> {
        None
    }
    /// For an argument that is not a number but defines `__float__` (`%f` calls `float()` on
    /// it): the result, or the error `float()` raises. `None` without `__float__`.
    fn float_conversion(&self) -> Option<Result<f64, PyError>> {
        None
    }
}

/// Item lookup for `%(key)s` formatting.
pub trait FormatMapping {
    /// Python `mapping[key]`; a missing key is the engine's error, normally
    /// `KeyError` with the message `repr(key)` (see [`key_error`]).
    fn get_item(&self, key: &str) -> Result<&dyn FormatArg, PyError>;
}

/// The right operand of `fmt % args`.
#[derive(Clone, Copy)]
pub enum PercentArgs<'a> {
    /// A tuple: its items are the positional arguments.
    Tuple(&'a [&'a dyn FormatArg]),
    /// Any other object that is not a mapping: the single positional argument.
    Single(&'a dyn FormatArg),
    /// An object with `__getitem__` that is neither a tuple nor a str (a
    /// dict, but also a list): `whole` is used by plain `%s` specs, `map`
    /// by `%(key)s` ones, and unused arguments are not an error.
    Mapping {
        /// The object itself, for specs without a key.
        whole: &'a dyn FormatArg,
        /// Its item lookup.
        map: &'a dyn FormatMapping,
    },
}

/// `chr(v)` as `%c` and the `c` presentation type do it: `OverflowError:
/// %c arg not in range(0x110000)`. A surrogate code point, which CPython
/// accepts but a Rust string cannot hold, is a `ValueError` here.
pub(crate) fn py_chr(v: i64) -> Result<char, PyError> {
    if !(0..0x110000).contains(&v) {
        return Err(PyError::new(
            PyErrorKind::OverflowError,
            "%c arg not in range(0x110000)",
        ));
    }
    char::from_u32(v as u32).ok_or_else(|| {
        PyError::value(format!(
            "character U+{v:04X} is a lone surrogate, which cannot be represented here"
        ))
    })
}

/// A `KeyError` for a missing string key, worded as CPython does (`'key'`).
pub fn key_error(key: &str) -> PyError {
    let mut message = String::new();
    str_repr(key, &mut message);
    PyError::new(PyErrorKind::KeyError, message)
}

/// The Python exception class a failing operation raises.
#[allow(clippy::enum_variant_names, reason = "the variants are Python's class names")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyErrorKind {
    /// `ValueError`.
    ValueError,
    /// `TypeError`.
    TypeError,
    /// `KeyError`.
    KeyError,
    /// `IndexError` (only CPython's `str.format` vectors raise it: the sandbox's formatter words
    /// a missing positional field as a tuple index error).
    #[cfg(test)]
    IndexError,
    /// `OverflowError`.
    OverflowError,
    /// `ZeroDivisionError`.
    ZeroDivisionError,
    /// `MemoryError` (message empty): raised here instead of building a
    /// result longer than [`MAX_OUTPUT_CHARS`].
    MemoryError,
    /// Jinja2's `UndefinedError`: what an undefined argument raises when `%` converts or indexes it.
    UndefinedError,
}

/// The widest integer, in bits, that arithmetic and parsing build (CPython's ints are unbounded;
/// this keeps a hostile template's numbers small enough to compute).
pub(crate) const MAX_INT_BITS: u64 = 1 << 20;

/// The longest result (in characters, roughly) that padding, repetition and
/// replacement will build; beyond it functions fail with `MemoryError`
/// rather than trying to allocate (CPython would try, then usually fail).
pub const MAX_OUTPUT_CHARS: usize = 1 << 28;

/// `Err(MemoryError)` when a result of `n` characters would exceed
/// [`MAX_OUTPUT_CHARS`].
pub(crate) fn check_size(n: usize) -> Result<(), PyError> {
    if n > MAX_OUTPUT_CHARS {
        Err(PyError::new(PyErrorKind::MemoryError, ""))
    } else {
        Ok(())
    }
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
            #[cfg(test)]
            PyErrorKind::IndexError => "IndexError",
            PyErrorKind::OverflowError => "OverflowError",
            PyErrorKind::MemoryError => "MemoryError",
            PyErrorKind::ZeroDivisionError => "ZeroDivisionError",
            PyErrorKind::UndefinedError => "UndefinedError",
        };
        write!(f, "{}: {}", name, self.message)
    }
}

impl std::error::Error for PyError {}
