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
}

/// A mapping's items collected so `%(key)s` can borrow them.
struct Items<'v, 'a> {
    whole: &'v Value<'a>,
    pairs: Vec<(Value<'a>, Value<'a>)>,
}

impl FormatMapping for Items<'_, '_> {
    fn get_item(&self, key: &str) -> std::result::Result<&dyn FormatArg, PyError> {
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

/// Python `fmt % args`.
pub fn percent_format(fmt: &str, args: &Value) -> Result<String> {
    // `groupby`'s groups are tuples.
    if let Value::Object(o) = args {
        if let Object::Group(grouper, list) = &**o {
            let refs: [&dyn FormatArg; 2] = [grouper, list];
            return pystr::percent_format(fmt, PercentArgs::Tuple(&refs)).map_err(py_err);
        }
    }
    let r = match args {
        Value::Tuple(items) => {
            let refs: Vec<&dyn FormatArg> = items.iter().map(|v| v as &dyn FormatArg).collect();
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
            let items = Items { whole: v, pairs };
            pystr::percent_format(fmt, PercentArgs::Mapping { whole: v, map: &items })
        }
        v => pystr::percent_format(fmt, PercentArgs::Single(v)),
    };
    r.map_err(py_err)
}
