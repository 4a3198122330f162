//! Python operators on values: equality, ordering, arithmetic, membership, subscripts and slices.

use super::{Dict, Object, UndefInfo, Value};
use crate::ast::{BinOp, CmpOp};
use crate::error::py_err;
use crate::error::{err, Result};
use crate::pystr::{self, PyNumber, MAX_INT_BITS};
use num_bigint::BigInt;
use serde_json::Value as Json;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::rc::Rc;

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(*b as i64 as f64),
        Value::Int(i) => Some(*i as f64),
        Value::BigInt(b) => Some(big_to_f64(b)),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// An int, bool or big int as a big integer.
fn big(v: &Value) -> Option<BigInt> {
    match v {
        Value::Bool(b) => Some(BigInt::from(*b as i64)),
        Value::Int(i) => Some(BigInt::from(*i)),
        Value::BigInt(b) => Some((**b).clone()),
        _ => None,
    }
}

/// `float(b)`, infinite where Python raises `OverflowError`.
fn big_to_f64(b: &BigInt) -> f64 {
    pystr::int_to_float(b).unwrap_or(if b.sign() == num_bigint::Sign::Minus {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    })
}

/// Python's exact comparison of two numbers (bools, ints, big ints, floats); `None` when a NaN
/// is involved or a value is not a number.
fn num_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    let int_float = |i: &Value, f: f64| match i {
        Value::BigInt(n) => pystr::cmp_big_float(n, f),
        _ => pystr::cmp_int_float(int(i)?, f),
    };
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Float(x), i) => int_float(i, *x).map(Ordering::reverse),
        (i, Value::Float(y)) => int_float(i, *y),
        _ => Some(big(a)?.cmp(&big(b)?)),
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(*b as i64),
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

/// How many times `seq * times` repeats: an int (or bool), a negative one as none; a count beyond 64
/// bits is CPython's `OverflowError`, anything else the `TypeError` that `not_int` words from its
/// type name.
fn repeat_count(times: &Value, not_int: impl FnOnce(&str) -> String) -> Result<usize> {
    if matches!(times, Value::BigInt(_)) {
        return Err(err!(OverflowError, "cannot fit 'int' into an index-sized integer"));
    }
    match int(times) {
        Some(n) => Ok(n.max(0) as usize),
        None => Err(err!(TypeError, "{}", not_int(times.type_name()))),
    }
}

/// `s` repeated `count` times, within the size limit and charged for the bytes copied.
fn repeated(s: &str, count: usize) -> Result<String> {
    crate::limits::check_value_size(s.len().saturating_mul(count))?;
    crate::limits::charge_copy(s.len().saturating_mul(count))?;
    Ok(s.repeat(count))
}

/// The bytes of a `bytes` value.
fn bytes_of<'v>(v: &'v Value) -> Option<&'v [u8]> {
    match v {
        Value::Object(o) => match &**o {
            Object::Bytes(b) => Some(b),
            _ => None,
        },
        _ => None,
    }
}

/// A `bytes` value of `b`, within the size limit and charged for the bytes copied.
fn bytes_result<'a>(b: Vec<u8>) -> Result<Value<'a>> {
    crate::limits::check_value_size(b.len())?;
    crate::limits::charge_copy(b.len())?;
    Ok(Value::Object(Rc::new(Object::Bytes(b))))
}

/// Python's operator symbol for error messages.
pub fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::FloorDiv => "//",
        BinOp::Mod => "%",
        BinOp::Pow => "** or pow()",
    }
}

fn seq_items<'a>(v: &Value<'a>) -> Option<Vec<Value<'a>>> {
    let mut out = Vec::new();
    match v {
        Value::List(_) | Value::Tuple(_) | Value::Json(Json::Array(_)) => {
            v.for_each_item(|x| out.push(x));
            Some(out)
        }
        _ => None,
    }
}

impl<'a> Value<'a> {
    /// Python `==`.
    pub fn py_eq(&self, other: &Value<'a>) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => return a == b,
            (Value::Bool(a), Value::Bool(b)) => return a == b,
            // The same JSON list or object of the context: Python compares a container's items
            // identity first, and JSON holds no NaN, so it equals itself.
            (Value::Json(a @ (Json::Array(_) | Json::Object(_))), Value::Json(b)) if std::ptr::eq(*a, *b) => {
                return true
            }
            _ => {}
        }
        if let (Some(a), Some(b)) = (self.as_str(), other.as_str()) {
            return a == b;
        }
        crate::limits::grow_stack(|| self.py_eq_inner(other))
    }

    fn py_eq_inner(&self, other: &Value<'a>) -> bool {
        if let (Some(a), Some(b)) = (self.as_str(), other.as_str()) {
            return a == b;
        }
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::BigInt(_), Value::BigInt(_) | Value::Int(_) | Value::Bool(_))
            | (Value::Int(_) | Value::Bool(_), Value::BigInt(_)) => big(self) == big(other),
            (Value::None, Value::None) => true,
            (Value::Undefined(_), Value::Undefined(_)) => true,
            (a, b) if num(a).is_some() && num(b).is_some() => num_cmp(a, b) == Some(Ordering::Equal),
            (Value::Tuple(a), Value::Tuple(b)) => {
                crate::limits::charge_later(a.len().min(b.len()) as u64);
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.py_eq(y))
            }
            (Value::Tuple(_), _) | (_, Value::Tuple(_)) => false,
            (a, b) if a.is_sequence_like() && b.is_sequence_like() => {
                let (x, y) = (seq_items(a).unwrap_or_default(), seq_items(b).unwrap_or_default());
                crate::limits::charge_later(x.len().min(y.len()) as u64);
                x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| p.py_eq(q))
            }
            (a, b) if a.is_mapping() && b.is_mapping() => {
                let (Ok(la), Ok(lb)) = (a.py_len(), b.py_len()) else {
                    return false;
                };
                if la != lb {
                    return false;
                }
                crate::limits::charge_later(la as u64);
                let mut same = true;
                a.for_each_pair(|k, v| {
                    if same {
                        same = matches!(b.get_item_opt(&k), Some(w) if w.py_eq(&v));
                    }
                });
                same
            }
            (Value::Object(a), Value::Object(b)) => match (&**a, &**b) {
                _ if set_view(self).is_some() && set_view(other).is_some() => set_views_hold(CmpOp::Eq, self, other),
                (Object::Bytes(x), Object::Bytes(y)) => x == y,
                (Object::Range(..), Object::Range(..)) => {
                    let (x, y) = (self.iterate().unwrap_or_default(), other.iterate().unwrap_or_default());
                    x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| p.py_eq(q))
                }
                _ => Rc::ptr_eq(a, b),
            },
            (Value::Iter(a), Value::Iter(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// Python ordering (`<` and friends); a TypeError for unorderable types.
    pub fn py_cmp(&self, other: &Value<'a>, op: &str) -> Result<Ordering> {
        if let (Value::Int(a), Value::Int(b)) = (self, other) {
            return Ok(a.cmp(b));
        }
        crate::limits::grow_stack(|| self.py_cmp_inner(other, op))
    }

    fn py_cmp_inner(&self, other: &Value<'a>, op: &str) -> Result<Ordering> {
        if let (Some(a), Some(b)) = (self.as_str(), other.as_str()) {
            return Ok(a.cmp(b));
        }
        if let (Some(a), Some(b)) = (int(self), int(other)) {
            return Ok(a.cmp(&b));
        }
        if matches!(self, Value::BigInt(_)) || matches!(other, Value::BigInt(_)) {
            if let (Some(a), Some(b)) = (big(self), big(other)) {
                return Ok(a.cmp(&b));
            }
        }
        if num(self).is_some() && num(other).is_some() {
            // NaN compares false every way; report "equal-ish" so no ordering operator holds.
            return Ok(num_cmp(self, other).unwrap_or(Ordering::Equal));
        }
        if let (Value::Object(a), Value::Object(b)) = (self, other) {
            if let (Object::Bytes(x), Object::Bytes(y)) = (&**a, &**b) {
                return Ok(x.cmp(y));
            }
        }
        let same_kind = matches!((self, other), (Value::Tuple(_), Value::Tuple(_)))
            || (self.is_sequence_like()
                && other.is_sequence_like()
                && !matches!(self, Value::Tuple(_))
                && !matches!(other, Value::Tuple(_)));
        if same_kind {
            let (a, b) = (
                seq_items(self).unwrap_or_default(),
                seq_items(other).unwrap_or_default(),
            );
            crate::limits::charge_later(a.len().min(b.len()) as u64);
            for (x, y) in a.iter().zip(b.iter()) {
                if !x.py_eq(y) {
                    return x.py_cmp(y, op);
                }
            }
            return Ok(a.len().cmp(&b.len()));
        }
        if self.is_undefined() {
            return Err(self.undefined_error());
        }
        if other.is_undefined() {
            return Err(other.undefined_error());
        }
        Err(err!(
            TypeError,
            "'{op}' not supported between instances of '{}' and '{}'",
            self.type_name(),
            other.type_name()
        ))
    }

    /// Python `item in self`.
    pub fn contains(&self, item: &Value<'a>) -> Result<bool> {
        if let Some(hay) = self.as_str() {
            return match item.as_str() {
                Some(needle) => {
                    crate::limits::charge_bytes(hay.len())?;
                    Ok(hay.contains(needle))
                }
                None => Err(err!(
                    TypeError,
                    "'in <string>' requires string as left operand, not {}",
                    item.type_name()
                )),
            };
        }
        if let Some(hay) = bytes_of(self) {
            crate::limits::charge_bytes(hay.len())?;
            return match (item, bytes_of(item)) {
                (_, Some(needle)) => Ok(needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)),
                (Value::Int(_) | Value::Bool(_) | Value::BigInt(_), _) => {
                    match int(item).filter(|b| (0..256).contains(b)) {
                        Some(b) => Ok(hay.contains(&(b as u8))),
                        None => Err(err!(ValueError, "byte must be in range(0, 256)")),
                    }
                }
                _ => Err(err!(
                    TypeError,
                    "a bytes-like object is required, not '{}'",
                    item.type_name()
                )),
            };
        }
        match self {
            Value::Json(Json::Object(m)) => match item.as_str() {
                Some(k) => Ok(super::json_map_get(m, k).is_some()),
                None => super::check_hashable(item).map(|_| false),
            },
            Value::Dict(d) => d.contains(item),
            // CPython answers for an int without scanning the range.
            Value::Object(o)
                if matches!(&**o, Object::Range(..))
                    && matches!(item, Value::Int(_) | Value::Bool(_) | Value::BigInt(_)) =>
            {
                let wide = match item {
                    Value::BigInt(n) => i128::try_from(&**n).ok(),
                    _ => int(item).map(i128::from),
                };
                let (Object::Range(a, b, s), Some(i)) = (&**o, wide) else {
                    return Ok(false);
                };
                let (a, b, s) = (*a, *b, *s);
                let inside = if s > 0 { a <= i && i < b } else { b < i && i <= a };
                Ok(inside && (i - a) % s == 0)
            }
            Value::Undefined(_) => Ok(false),
            // A generator is consumed up to the item found.
            Value::Iter(g) => {
                while let Some(x) = g.next_item() {
                    crate::limits::charge_items(1)?;
                    if x.py_eq(item) {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Value::Object(o) if matches!(&**o, Object::Namespace(_)) => Err(err!(
                TypeError,
                "argument of type '{}' is not iterable",
                self.type_name()
            )),
            _ => match self.iterate() {
                Ok(items) => {
                    crate::limits::charge_items(items.len())?;
                    Ok(items.iter().any(|x| x.py_eq(item)))
                }
                Err(_) => Err(err!(
                    TypeError,
                    "argument of type '{}' is not iterable",
                    self.type_name()
                )),
            },
        }
    }

    /// `self[key]` without Jinja's attribute fallback; `None` when missing.
    pub fn get_item_opt(&self, key: &Value<'a>) -> Option<Value<'a>> {
        match self {
            Value::Json(Json::Object(m)) => key
                .as_str()
                .and_then(|k| super::json_map_get(m, k))
                .map(Value::from_json),
            Value::Dict(d) => d.get(key).cloned(),
            Value::Json(Json::Array(_)) | Value::List(_) | Value::Tuple(_) => {
                let i = int(key)?;
                let len = self.py_len().ok()? as i64;
                let idx = if i < 0 { i + len } else { i };
                if idx < 0 || idx >= len {
                    return None;
                }
                match self {
                    Value::Json(Json::Array(a)) => a.get(idx as usize).map(Value::from_json),
                    Value::List(v) | Value::Tuple(v) => v.get(idx as usize).cloned(),
                    _ => None,
                }
            }
            Value::Str(_) | Value::String(_) | Value::Safe(_) => {
                let s = self.as_str()?;
                let i = int(key)?;
                crate::limits::charge_later((s.len() / crate::limits::BYTES_PER_STEP) as u64);
                let len = s.chars().count() as i64;
                let idx = if i < 0 { i + len } else { i };
                if idx < 0 || idx >= len {
                    return None;
                }
                let (start, c) = s.char_indices().nth(idx as usize)?;
                Some(self.substr(start, start + c.len_utf8()))
            }
            Value::Object(o) => match &**o {
                Object::Namespace(d) => key.as_str().and_then(|_| d.borrow().get(key).cloned()),
                Object::Group(k, l) => match int(key)? {
                    0 | -2 => Some(k.clone()),
                    1 | -1 => Some(l.clone()),
                    _ => None,
                },
                Object::Range(a, b, s) => {
                    let i = i128::from(int(key)?);
                    let len = super::range_len(*a, *b, *s) as i128;
                    let idx = if i < 0 { i + len } else { i };
                    (0..len).contains(&idx).then(|| Value::from_i128(a + s * idx))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// A sub-string of a string value, borrowing where the value borrows.
    pub fn substr(&self, start: usize, end: usize) -> Value<'a> {
        match self {
            Value::Str(s) => Value::Str(&s[start..end]),
            Value::String(s) => Value::string(&s[start..end]),
            Value::Safe(s) => Value::Safe(s[start..end].into()),
            _ => Value::Undefined(None),
        }
    }

    /// Python slicing `self[start:stop:step]`.
    pub fn slice(&self, start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Result<Value<'a>> {
        if let Some(s) = self.as_str() {
            // Finding a string's character offsets walks it.
            crate::limits::charge_bytes(s.len())?;
            return Ok(match pystr::str_slice(s, start, stop, step).map_err(py_err)? {
                Cow::Borrowed(part) => {
                    let at = part.as_ptr() as usize - s.as_ptr() as usize;
                    self.substr(at, at + part.len())
                }
                // `Markup.__getitem__` keeps the type.
                Cow::Owned(out) if matches!(self, Value::Safe(_)) => Value::Safe(out.into()),
                Cow::Owned(out) => Value::string(out),
            });
        }
        if let Value::Json(Json::Array(items)) = self {
            return slice_json(items, start, stop, step);
        }
        let len = match self {
            Value::Object(o) if matches!(&**o, Object::Range(..)) => self.py_len()? as i64,
            _ if self.is_sequence_like() => self.py_len()? as i64,
            Value::Undefined(_) => return Err(self.undefined_error()),
            // A mapping looks the slice up as a key, and CPython 3.11's slices are unhashable.
            _ if self.is_mapping() => return Err(err!(TypeError, "unhashable type: 'slice'")),
            _ => return Err(err!(TypeError, "'{}' object is not subscriptable", self.type_name())),
        };
        let (first, stop, step, count) = pystr::slice_indices(len, start, stop, step).map_err(py_err)?;
        // The positions visited, all within `0..len`; with step 1 a contiguous run, copied directly.
        let positions = (0..count).map(move |k| (first + k * step) as usize);
        let run = |items: &[Value<'a>]| -> Vec<Value<'a>> {
            match items.get(first as usize..(first + count) as usize) {
                Some(run) if step == 1 => run.to_vec(),
                _ => positions.clone().filter_map(|i| items.get(i).cloned()).collect(),
            }
        };
        Ok(match self {
            Value::List(items) => Value::list(run(items)),
            Value::Tuple(items) => Value::Tuple(Rc::new(run(items))),
            Value::Object(o) => match &**o {
                // A range slice is a range.
                Object::Range(a, _, s) => {
                    let at = |i: i64| s.checked_mul(i128::from(i)).and_then(|x| x.checked_add(*a));
                    match (at(first), at(stop), s.checked_mul(i128::from(step))) {
                        (Some(b), Some(e), Some(k)) => Value::Object(Rc::new(Object::Range(b, e, k))),
                        _ => return Err(err!(LimitExceeded, "range bounds beyond 128 bits")),
                    }
                }
                _ => Value::list(Vec::new()),
            },
            _ => Value::list(Vec::new()),
        })
    }

    /// Python `-x`, `+x`.
    pub fn negate(&self, negative: bool) -> Result<Value<'a>> {
        match self {
            Value::Int(_) | Value::Bool(_) => {
                let i = int(self).unwrap_or(0);
                if negative {
                    Ok(i.checked_neg()
                        .map(Value::Int)
                        .unwrap_or_else(|| Value::from_bigint(-BigInt::from(i))))
                } else {
                    Ok(Value::Int(i))
                }
            }
            Value::BigInt(b) => {
                if negative {
                    Ok(Value::from_bigint(-(**b).clone()))
                } else {
                    Ok(self.clone())
                }
            }
            Value::Float(f) => Ok(Value::Float(if negative { -f } else { *f })),
            Value::Undefined(_) => Err(self.undefined_error()),
            _ => Err(err!(
                TypeError,
                "bad operand type for unary {}: '{}'",
                if negative { "-" } else { "+" },
                self.type_name()
            )),
        }
    }

    /// Python binary arithmetic.
    pub fn binary(&self, op: BinOp, other: &Value<'a>) -> Result<Value<'a>> {
        if op == BinOp::Mod && self.is_str() && !matches!(self, Value::Safe(_)) {
            return percent(self, other);
        }
        if op == BinOp::Add {
            if let Some(v) = markup_concat(self, other) {
                return Ok(v);
            }
        }
        if self.is_undefined() {
            return Err(self.undefined_error());
        }
        if other.is_undefined() {
            return Err(other.undefined_error());
        }
        if let (Some(a), Some(b)) = (int(self), int(other)) {
            return int_op(op, a, b);
        }
        if matches!(self, Value::BigInt(_)) || matches!(other, Value::BigInt(_)) {
            if let (Some(a), Some(b)) = (big(self), big(other)) {
                return big_op(op, a, b);
            }
            if let (Some(a), Some(b)) = (num(self), num(other)) {
                if a.is_infinite() && matches!(self, Value::BigInt(_))
                    || b.is_infinite() && matches!(other, Value::BigInt(_))
                {
                    return Err(err!(OverflowError, "int too large to convert to float"));
                }
                return float_op(op, a, b);
            }
        }
        if let (Some(a), Some(b)) = (num(self), num(other)) {
            return float_op(op, a, b);
        }
        match op {
            BinOp::Add => {
                if let (Some(a), Some(b)) = (self.as_str(), other.as_str()) {
                    crate::limits::check_value_size(a.len() + b.len())?;
                    crate::limits::charge_copy(a.len() + b.len())?;
                    let mut s = String::with_capacity(a.len() + b.len());
                    s.push_str(a);
                    s.push_str(b);
                    return Ok(Value::string(s));
                }
                if let Some(a) = bytes_of(self) {
                    return match bytes_of(other) {
                        Some(b) => bytes_result([a, b].concat()),
                        None => Err(err!(TypeError, "can't concat {} to bytes", other.type_name())),
                    };
                }
                let kinds = (self.type_name(), other.type_name());
                if self.is_sequence_like() && kinds.0 == kinds.1 {
                    crate::limits::charge_values(self.py_len()?.saturating_add(other.py_len()?))?;
                    let mut items = seq_items(self).unwrap_or_default();
                    items.extend(seq_items(other).unwrap_or_default());
                    crate::limits::check_value_size(items.len())?;
                    return Ok(match self {
                        Value::Tuple(_) => Value::Tuple(Rc::new(items)),
                        _ => Value::list(items),
                    });
                }
                // `Markup.__add__` declines what is not a string, leaving an unsupported pair.
                if self.is_str() && !matches!(self, Value::Safe(_)) {
                    return Err(err!(
                        TypeError,
                        "can only concatenate str (not \"{}\") to str",
                        other.type_name()
                    ));
                }
                if self.is_sequence_like() {
                    return Err(err!(
                        TypeError,
                        "can only concatenate {} (not \"{}\") to {}",
                        kinds.0,
                        kinds.1,
                        kinds.0
                    ));
                }
            }
            // Python's sequence repetition: a str, list or tuple times an int (or bool), either
            // way round; any other right-hand side of a sequence is "non-int", and no sequence at
            // all (None, a dict, a range) is an unsupported operand pair.
            BinOp::Mul => {
                // `Markup` overrides `__mul__` and `__rmul__` (tried before any other operand's
                // repetition): an int repeats it and stays Markup, anything else cannot be an index.
                let markup = match (self, other) {
                    (Value::Safe(s), n) | (n, Value::Safe(s)) => Some((s, n)),
                    _ => None,
                };
                if let Some((s, n)) = markup {
                    let count = repeat_count(n, |t| format!("'{t}' object cannot be interpreted as an integer"))?;
                    return Ok(Value::Safe(repeated(s, count)?.into()));
                }
                let is_seq = |v: &Value| v.is_str() || v.is_sequence_like() || bytes_of(v).is_some();
                let pair = if is_seq(self) {
                    Some((self, other))
                } else if is_seq(other) {
                    Some((other, self))
                } else {
                    None
                };
                if let Some((seq, times)) = pair {
                    let count = repeat_count(times, |t| format!("can't multiply sequence by non-int of type '{t}'"))?;
                    if let Some(s) = seq.as_str() {
                        return Ok(Value::string(repeated(s, count)?));
                    }
                    if let Some(b) = bytes_of(seq) {
                        crate::limits::check_value_size(b.len().saturating_mul(count))?;
                        return bytes_result(b.repeat(count));
                    }
                    if let Some(items) = seq_items(seq) {
                        crate::limits::check_value_size(items.len().saturating_mul(count))?;
                        crate::limits::charge_values(items.len().saturating_mul(count))?;
                        let mut out = Vec::with_capacity(items.len() * count);
                        for _ in 0..count {
                            out.extend(items.iter().cloned());
                        }
                        return Ok(match seq {
                            Value::Tuple(_) => Value::Tuple(Rc::new(out)),
                            _ => Value::list(out),
                        });
                    }
                }
            }
            BinOp::Mod if self.is_str() => {
                return percent(self, other);
            }
            _ => {}
        }
        Err(err!(
            TypeError,
            "unsupported operand type(s) for {}: '{}' and '{}'",
            op_symbol(op),
            self.type_name(),
            other.type_name()
        ))
    }
}

/// `str % args` (a `Markup` format escapes the arguments and gives `Markup`), charged for the
/// string it builds.
fn percent<'a>(s: &Value<'a>, args: &Value<'a>) -> Result<Value<'a>> {
    let markup = matches!(s, Value::Safe(_));
    let out = crate::value::percent::percent_format(s.as_str().unwrap_or(""), args, markup)?;
    crate::limits::charge_bytes(out.len())?;
    Ok(if markup {
        Value::Safe(out.into())
    } else {
        Value::string(out)
    })
}

/// Python integer arithmetic beyond 64 bits.
fn big_op<'a>(op: BinOp, a: BigInt, b: BigInt) -> Result<Value<'a>> {
    use num_bigint::Sign;
    use num_integer::Integer;
    let nonzero = |msg: &str| {
        if b.sign() == Sign::NoSign {
            Err(err!(ZeroDivisionError, "{msg}"))
        } else {
            Ok(())
        }
    };
    Ok(match op {
        BinOp::Add => Value::from_bigint(a + b),
        BinOp::Sub => Value::from_bigint(a - b),
        BinOp::Mul => {
            if a.bits() + b.bits() > MAX_INT_BITS {
                return Err(err!(LimitExceeded, "integer result beyond {MAX_INT_BITS} bits"));
            }
            Value::from_bigint(a * b)
        }
        BinOp::Div => Value::Float(pystr::big_truediv(&a, &b).map_err(py_err)?),
        BinOp::FloorDiv => {
            nonzero("integer division or modulo by zero")?;
            Value::from_bigint(a.div_floor(&b))
        }
        BinOp::Mod => {
            nonzero("integer modulo by zero")?;
            Value::from_bigint(a.mod_floor(&b))
        }
        BinOp::Pow => {
            if b.sign() == Sign::Minus {
                // Python computes `float(a) ** float(b)`.
                let (x, y) = (pystr::int_to_float(&a), pystr::int_to_float(&b));
                return float_op(op, x.map_err(py_err)?, y.map_err(py_err)?);
            }
            if b.sign() == Sign::NoSign {
                return Ok(Value::Int(1));
            }
            if a.magnitude().bits() <= 1 {
                // 0, 1 and -1 stay small whatever the exponent.
                let even = b.is_even();
                return Ok(Value::from_bigint(if a.sign() == Sign::Minus && even { -a } else { a }));
            }
            let e = u32::try_from(&b).map_err(|_| err!(LimitExceeded, "exponent too large"))?;
            if a.bits().saturating_mul(e as u64) > MAX_INT_BITS {
                return Err(err!(LimitExceeded, "integer result beyond {MAX_INT_BITS} bits"));
            }
            Value::from_bigint(a.pow(e))
        }
    })
}

/// Python int arithmetic on 64-bit operands; a result that needs more bits is computed as a big int.
fn int_op<'a>(op: BinOp, a: i64, b: i64) -> Result<Value<'a>> {
    let fits = match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mul => a.checked_mul(b),
        BinOp::Div => return pystr::int_truediv(a, b).map(Value::Float).map_err(py_err),
        BinOp::FloorDiv => pystr::int_floordiv(a, b).map_err(py_err)?,
        BinOp::Mod => Some(pystr::int_mod(a, b).map_err(py_err)?),
        BinOp::Pow => match pystr::int_pow(a, b).map_err(py_err)? {
            Some(PyNumber::Float(x)) => return Ok(Value::Float(x)),
            Some(PyNumber::Int(i)) => Some(i),
            None => None,
        },
    };
    match fits {
        Some(i) => Ok(Value::Int(i)),
        None => big_op(op, a.into(), b.into()),
    }
}

fn float_op<'a>(op: BinOp, a: f64, b: f64) -> Result<Value<'a>> {
    let r = match op {
        BinOp::Add => Ok(a + b),
        BinOp::Sub => Ok(a - b),
        BinOp::Mul => Ok(a * b),
        BinOp::Div => pystr::float_truediv(a, b),
        BinOp::FloorDiv => pystr::float_floordiv(a, b),
        BinOp::Mod => pystr::float_mod(a, b),
        BinOp::Pow => pystr::float_pow(a, b),
    };
    r.map(Value::Float).map_err(py_err)
}

/// Builds a dict value from key/value pairs.
pub fn dict_from<'a>(pairs: Vec<(Value<'a>, Value<'a>)>) -> Result<Value<'a>> {
    let mut d = Dict::default();
    for (k, v) in pairs {
        d.insert(k, v)?;
    }
    Ok(Value::Dict(Rc::new(d)))
}

impl<'a> UndefInfo<'a> {
    /// The sandbox's undefined for an attribute it refuses.
    pub fn unsafe_attr(attr: &str, owner: &Value<'a>) -> Value<'a> {
        Value::Undefined(Some(Rc::new(UndefInfo::Hint(
            format!(
                "access to attribute '{attr}' of '{}' object is unsafe.",
                owner.type_name()
            ),
            crate::error::ErrorKind::SecurityError,
        ))))
    }
}

/// `Markup + str` and `str + Markup`: the plain operand is HTML-escaped, the result is Markup.
fn markup_concat<'a>(a: &Value<'a>, b: &Value<'a>) -> Option<Value<'a>> {
    let escaped = |v: &Value| -> Option<String> {
        match v {
            Value::Safe(s) => Some(s.to_string()),
            v if v.is_str() => {
                let mut out = String::new();
                crate::pystr::escape_into(v.as_str().unwrap_or(""), &mut out);
                Some(out)
            }
            _ => None,
        }
    };
    if !matches!(a, Value::Safe(_)) && !matches!(b, Value::Safe(_)) {
        return None;
    }
    let (x, y) = (escaped(a)?, escaped(b)?);
    Some(Value::Safe(format!("{x}{y}").into()))
}

/// Python comparison operators.
pub fn compare<'a>(op: CmpOp, a: &Value<'a>, b: &Value<'a>) -> Result<bool> {
    Ok(match op {
        CmpOp::Eq => a.py_eq(b),
        CmpOp::Ne => !a.py_eq(b),
        CmpOp::In => b.contains(a)?,
        CmpOp::NotIn => !b.contains(a)?,
        CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => {
            let sym = match op {
                CmpOp::Lt => "<",
                CmpOp::Le => "<=",
                CmpOp::Gt => ">",
                _ => ">=",
            };
            // `dict_keys` and `dict_items` order as sets do: by inclusion.
            if set_view(a).is_some() && set_view(b).is_some() {
                return Ok(set_views_hold(op, a, b));
            }
            // Every ordering with NaN is false (either operand: `1.5 >= nan` too).
            let nan = |v: &Value| matches!(v, Value::Float(x) if x.is_nan());
            if nan(a) || nan(b) {
                a.py_cmp(b, sym)?;
                return Ok(false);
            }
            ordering_holds(op, a.py_cmp(b, sym)?)
        }
    })
}

/// The kind, dict and items of a set-like dict view (`dict_keys`, `dict_items`).
fn set_view<'v, 'a>(v: &'v Value<'a>) -> Option<(&'static str, &'v Value<'a>, &'v [Value<'a>])> {
    match v {
        Value::Object(o) => match &**o {
            Object::View(kind, dict, items) if *kind != "dict_values" => Some((kind, dict, items)),
            _ => None,
        },
        _ => None,
    }
}

/// CPython's `dictview_richcompare` of two set-like views: equal when of one length and one holds
/// the other's items, ordered by inclusion.
fn set_views_hold<'a>(op: CmpOp, a: &Value<'a>, b: &Value<'a>) -> bool {
    let (Some(x), Some(y)) = (set_view(a), set_view(b)) else {
        return false;
    };
    let (la, lb) = (x.2.len(), y.2.len());
    match op {
        CmpOp::Eq => la == lb && view_within(x.2, y),
        CmpOp::Ne => !(la == lb && view_within(x.2, y)),
        CmpOp::Lt => la < lb && view_within(x.2, y),
        CmpOp::Le => la <= lb && view_within(x.2, y),
        CmpOp::Gt => la > lb && view_within(y.2, x),
        _ => la >= lb && view_within(y.2, x),
    }
}

/// `all_contained_in(items, view)`: each item is a key of the view's dict (`dict_keys`), or a
/// key and value pair of it (`dict_items`).
fn view_within<'a>(items: &[Value<'a>], (kind, dict, _): (&str, &Value<'a>, &[Value<'a>])) -> bool {
    crate::limits::charge_later(items.len() as u64);
    items.iter().all(|x| match kind {
        "dict_items" => {
            matches!(x, Value::Tuple(t) if t.len() == 2 && matches!(dict.get_item_opt(&t[0]), Some(w) if w.py_eq(&t[1])))
        }
        _ => dict.get_item_opt(x).is_some(),
    })
}

/// Whether the comparison `op` (other than `in` and `not in`) holds between two operands that
/// compare as `order`.
#[inline]
pub(crate) fn ordering_holds(op: CmpOp, order: std::cmp::Ordering) -> bool {
    match op {
        CmpOp::Eq => order.is_eq(),
        CmpOp::Ne => order.is_ne(),
        CmpOp::Lt => order.is_lt(),
        CmpOp::Le => order.is_le(),
        CmpOp::Gt => order.is_gt(),
        _ => order.is_ge(),
    }
}

/// A slice index beyond 64 bits, clamped as Python clamps it to the machine's range (halved, so
/// that the slice arithmetic on it cannot overflow).
pub(crate) fn clamped_index(b: &num_bigint::BigInt) -> i64 {
    if b.sign() == num_bigint::Sign::Minus {
        i64::MIN / 2
    } else {
        i64::MAX / 2
    }
}

/// `items[start:stop:step]` of a JSON list (a JSON array, or the caller's list read in place), as a
/// list value.
pub(crate) fn slice_json<'a>(
    items: &'a [Json],
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
) -> Result<Value<'a>> {
    let (first, _, step, count) = pystr::slice_indices(items.len() as i64, start, stop, step).map_err(py_err)?;
    Ok(Value::list(
        (0..count)
            .filter_map(|k| items.get((first + k * step) as usize).map(Value::from_json))
            .collect(),
    ))
}

/// Python's `sorted(pairs, key=first, reverse=reverse)`: CPython's comparison sequence, stable.
pub(crate) fn sort_values<'a>(items: &mut [(Value<'a>, Value<'a>)], reverse: bool) -> Result<()> {
    let failure = std::cell::RefCell::new(None);
    if reverse {
        items.reverse();
    }
    let r = pystr::python_sort(items, |a, b| match a.0.py_cmp(&b.0, "<") {
        Ok(o) => Ok(o == Ordering::Less),
        Err(e) => {
            let msg = e.message().to_string();
            failure.borrow_mut().get_or_insert(e);
            Err(pystr::PyError::type_error(msg))
        }
    });
    if reverse {
        items.reverse();
    }
    match (r, failure.into_inner()) {
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(py_err(e)),
        _ => Ok(()),
    }
}
