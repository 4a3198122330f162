//! Python's `fmt % args` on values, on top of the printf-style formatting in [`crate::pystr`].

use super::{Object, Value};
use crate::error::{py_err, Result};
use crate::pystr::{self, FormatArg, FormatMapping, PercentArgs, PyError};

impl FormatArg for Value<'_> {
    fn py_str(&self) -> String {
        self.to_py_str()
    }

    fn py_repr(&self) -> String {
        let mut s = String::new();
        self.write_repr(&mut s);
        s
    }

    fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }

    fn as_float(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Bool(b) => Some(*b as i64 as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    fn type_name(&self) -> &str {
        Value::type_name(self)
    }

    fn as_big_int(&self) -> Option<&num_bigint::BigInt> {
        match self {
            Value::BigInt(b) => Some(b),
            _ => None,
        }
    }

    /// An undefined value's `__int__` raises its error.
    fn int_conversion(&self) -> Option<std::result::Result<(bool, String), PyError>> {
        self.is_undefined().then(|| Err(undefined(self)))
    }

    /// An undefined value's `__float__` raises its error.
    fn float_conversion(&self) -> Option<std::result::Result<f64, PyError>> {
        self.is_undefined().then(|| Err(undefined(self)))
    }
}

/// The error an undefined value raises when it is used.
fn undefined(v: &Value) -> PyError {
    PyError {
        kind: pystr::PyErrorKind::UndefinedError,
        message: v.undefined_error().message().to_string(),
    }
}

/// An argument of `Markup % args`: markupsafe wraps each in `_MarkupEscapeHelper`, whose `str()`
/// and `repr()` are HTML-escaped (a `Markup` value stays as it is) and whose `int()` and `float()`
/// are the value's own.
struct Escaped<'a>(Value<'a>);

impl FormatArg for Escaped<'_> {
    fn py_str(&self) -> String {
        if let Value::Safe(s) = &self.0 {
            return s.to_string();
        }
        let mut out = String::new();
        pystr::escape_into(&self.0.to_py_str(), &mut out);
        out
    }

    fn py_repr(&self) -> String {
        let mut out = String::new();
        pystr::escape_into(&self.0.py_repr(), &mut out);
        out
    }

    fn as_int(&self) -> Option<i64> {
        None
    }

    fn as_float(&self) -> Option<f64> {
        None
    }

    fn type_name(&self) -> &str {
        "_MarkupEscapeHelper"
    }

    fn int_conversion(&self) -> Option<std::result::Result<(bool, String), PyError>> {
        let v = &self.0;
        Some(match v {
            Value::Int(i) => Ok((*i < 0, i.unsigned_abs().to_string())),
            Value::Bool(b) => Ok((false, u8::from(*b).to_string())),
            Value::BigInt(b) => Ok(pystr::big_digits(b, 10, false)),
            Value::Float(x) => pystr::float_to_int(*x).map(|b| pystr::big_digits(&b, 10, false)),
            _ if v.is_str() => pystr::parse_int(v.as_str().unwrap_or(""), 10).map(|b| pystr::big_digits(&b, 10, false)),
            _ => Err(PyError::type_error(format!(
                "int() argument must be a string, a bytes-like object or a real number, not '{}'",
                v.type_name()
            ))),
        })
    }

    fn float_conversion(&self) -> Option<std::result::Result<f64, PyError>> {
        let v = &self.0;
        Some(match v {
            Value::Int(i) => Ok(*i as f64),
            Value::Bool(b) => Ok(f64::from(u8::from(*b))),
            Value::Float(x) => Ok(*x),
            Value::BigInt(b) => pystr::int_to_float(b),
            _ if v.is_str() => pystr::parse_float(v.as_str().unwrap_or("")),
            _ => Err(PyError::type_error(format!(
                "float() argument must be a string or a real number, not '{}'",
                v.type_name()
            ))),
        })
    }
}

/// One argument of `%`: the value, or the value escaped for `Markup % args`.
enum Arg<'v, 'a> {
    Plain(&'v Value<'a>),
    Escaped(Escaped<'a>),
}

impl<'v, 'a> Arg<'v, 'a> {
    fn new(v: &'v Value<'a>, markup: bool) -> Arg<'v, 'a> {
        if markup {
            Arg::Escaped(Escaped(v.clone()))
        } else {
            Arg::Plain(v)
        }
    }

    fn as_dyn(&self) -> &dyn FormatArg {
        match self {
            Arg::Plain(v) => *v,
            Arg::Escaped(e) => e,
        }
    }
}

/// A mapping's items collected so `%(key)s` can borrow them (as [`Escaped`] for `Markup % args`).
struct Items<'v, 'a, T> {
    whole: &'v Value<'a>,
    pairs: Vec<(Value<'a>, T)>,
}

impl<T: FormatArg> FormatMapping for Items<'_, '_, T> {
    fn get_item(&self, key: &str) -> std::result::Result<&dyn FormatArg, PyError> {
        if self.whole.is_undefined() {
            return Err(undefined(self.whole));
        }
        if !self.whole.is_mapping() {
            return Err(PyError::type_error(format!(
                "{} indices must be integers or slices, not str",
                self.whole.type_name()
            )));
        }
        self.pairs
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v as &dyn FormatArg)
            .ok_or_else(|| pystr::key_error(key))
    }
}

/// Python `fmt % args`; with `markup`, `Markup(fmt) % args` (each argument escaped, see
/// [`Escaped`]).
pub fn percent_format(fmt: &str, args: &Value, markup: bool) -> Result<String> {
    // `groupby`'s groups are tuples.
    if let Value::Object(o) = args {
        if let Object::Group(grouper, list) = &**o {
            let (a, b) = (Arg::new(grouper, markup), Arg::new(list, markup));
            let refs: [&dyn FormatArg; 2] = [a.as_dyn(), b.as_dyn()];
            return pystr::percent_format(fmt, PercentArgs::Tuple(&refs)).map_err(py_err);
        }
    }
    let r = match args {
        Value::Tuple(items) => {
            let wrapped: Vec<Arg> = items.iter().map(|v| Arg::new(v, markup)).collect();
            let refs: Vec<&dyn FormatArg> = wrapped.iter().map(Arg::as_dyn).collect();
            pystr::percent_format(fmt, PercentArgs::Tuple(&refs))
        }
        // Whatever has `__getitem__` (an undefined value, a range) `%` takes for a mapping.
        v if v.is_mapping()
            || v.is_sequence_like()
            || v.is_undefined()
            || matches!(v, Value::Object(o) if matches!(&**o, Object::Range(..))) =>
        {
            let mut pairs = Vec::new();
            v.for_each_pair(|k, x| pairs.push((k, x)));
            let whole = Arg::new(v, markup);
            let whole = whole.as_dyn();
            if markup {
                let pairs = pairs.into_iter().map(|(k, x)| (k, Escaped(x))).collect();
                let items = Items { whole: v, pairs };
                pystr::percent_format(fmt, PercentArgs::Mapping { whole, map: &items })
            } else {
                let items = Items { whole: v, pairs };
                pystr::percent_format(fmt, PercentArgs::Mapping { whole, map: &items })
            }
        }
        v => {
            let single = Arg::new(v, markup);
            pystr::percent_format(fmt, PercentArgs::Single(single.as_dyn()))
        }
    };
    r.map_err(py_err)
}
