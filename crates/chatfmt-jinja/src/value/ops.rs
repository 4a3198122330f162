//! Python operators on values: equality, ordering, arithmetic, membership, subscripts and slices.

use super::{Dict, Object, UndefInfo, Value};
use crate::error::{err, Error, Result};
use crate::syntax::ast::BinOp;
use num_bigint::BigInt;
use serde_json::Value as Json;
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

fn big_to_f64(b: &BigInt) -> f64 {
    b.to_string().parse::<f64>().unwrap_or(f64::NAN)
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(*b as i64),
        Value::Int(i) => Some(*i),
        _ => None,
    }
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
            _ => {}
        }
        if let (Some(a), Some(b)) = (self.as_str(), other.as_str()) {
            return a == b;
        }
        crate::eval::grow_stack(|| self.py_eq_inner(other))
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
            (a, b) if num(a).is_some() && num(b).is_some() => match (int(a), int(b)) {
                (Some(x), Some(y)) => x == y,
                _ => num(a) == num(b),
            },
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
        crate::eval::grow_stack(|| self.py_cmp_inner(other, op))
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
        if let (Some(a), Some(b)) = (num(self), num(other)) {
            // NaN compares false every way; report "equal-ish" so no ordering operator holds.
            return Ok(a.partial_cmp(&b).unwrap_or(Ordering::Equal));
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
                let (Object::Range(a, b, s), Some(i)) = (&**o, int(item)) else {
                    return Ok(false);
                };
                let (a, b, s, i) = (i128::from(*a), i128::from(*b), i128::from(*s), i128::from(i));
                let inside = if s > 0 { a <= i && i < b } else { b < i && i <= a };
                Ok(inside && (i - a) % s == 0)
            }
            Value::Undefined(_) => Ok(false),
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
                    let i = int(key)?;
                    let len = super::range_len(*a, *b, *s) as i64;
                    let idx = if i < 0 { i + len } else { i };
                    (0..len)
                        .contains(&idx)
                        .then(|| s.checked_mul(idx).and_then(|x| a.checked_add(x)).map(Value::Int))
                        .flatten()
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
        let step = step.unwrap_or(1);
        if step == 0 {
            return Err(err!(ValueError, "slice step cannot be zero"));
        }
        // Finding a string's character offsets walks it.
        crate::limits::charge_bytes(self.as_str().map_or(0, str::len))?;
        let len = match self {
            Value::Object(o) if matches!(&**o, Object::Range(..)) => self.py_len()? as i64,
            _ if self.is_str() || self.is_sequence_like() => self.py_len()? as i64,
            Value::Undefined(_) => return Err(self.undefined_error()),
            _ => return Err(err!(TypeError, "'{}' object is not subscriptable", self.type_name())),
        };
        if step == 1 {
            // A contiguous run of a list, tuple or JSON array, copied without an index list.
            let (a, b) = slice_bounds(len, start, stop, step);
            let range = a.max(0) as usize..b.max(a).max(0) as usize;
            match self {
                Value::List(items) => return Ok(Value::list(items[range].to_vec())),
                Value::Tuple(items) => return Ok(Value::Tuple(Rc::new(items[range].to_vec()))),
                Value::Json(Json::Array(items)) => {
                    return Ok(Value::list(items[range].iter().map(Value::from_json).collect()))
                }
                _ => {}
            }
        }
        let idx = slice_indices(len, start, stop, step);
        if let Some(s) = self.as_str() {
            if step == 1 {
                let (a, b) = (idx.first().copied(), idx.last().copied());
                return Ok(match (a, b) {
                    (Some(a), Some(b)) => {
                        let mut offsets = s.char_indices().map(|(i, _)| i).chain(std::iter::once(s.len()));
                        let begin = offsets.nth(a).unwrap_or(s.len());
                        let end = s
                            .char_indices()
                            .map(|(i, _)| i)
                            .chain(std::iter::once(s.len()))
                            .nth(b + 1)
                            .unwrap_or(s.len());
                        self.substr(begin, end)
                    }
                    _ => self.substr(0, 0),
                });
            }
            let chars: Vec<char> = s.chars().collect();
            let out: String = idx.iter().map(|i| chars[*i]).collect();
            return Ok(Value::string(out));
        }
        if let Value::Object(o) = self {
            if let Object::Range(a, _, s) = &**o {
                // A range slice is a range; materialise its items as a new range-like list.
                let items: Vec<Value> = idx.iter().map(|i| Value::Int(a + s * *i as i64)).collect();
                return Ok(Value::list(items));
            }
        }
        let items = seq_items(self).unwrap_or_default();
        let out: Vec<Value<'a>> = idx.iter().map(|i| items[*i].clone()).collect();
        Ok(match self {
            Value::Tuple(_) => Value::Tuple(Rc::new(out)),
            _ => Value::list(out),
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
            return match int_op(op, a, b) {
                Err(e) if e.kind() == crate::error::ErrorKind::OverflowError => big_op(op, a.into(), b.into()),
                r => r,
            };
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
                if self.is_str() {
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
            BinOp::Mul => {
                let (seq, n) = match (int(self), int(other)) {
                    (Some(n), None) => (other, n),
                    (None, Some(n)) => (self, n),
                    _ => (self, i64::MIN),
                };
                if n != i64::MIN {
                    let count = n.max(0) as usize;
                    if let Some(s) = seq.as_str() {
                        crate::limits::check_value_size(s.len().saturating_mul(count))?;
                        crate::limits::charge_copy(s.len().saturating_mul(count))?;
                        return Ok(Value::string(s.repeat(count)));
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
                    if !matches!(seq, Value::Float(_)) {
                        return Err(err!(
                            TypeError,
                            "can't multiply sequence by non-int of type '{}'",
                            if int(self).is_some() {
                                self.type_name()
                            } else {
                                other.type_name()
                            }
                        ));
                    }
                } else if (self.is_str() || self.is_sequence_like()) && !matches!(other, Value::Int(_)) {
                    return Err(err!(
                        TypeError,
                        "can't multiply sequence by non-int of type '{}'",
                        other.type_name()
                    ));
                } else if (other.is_str() || other.is_sequence_like()) && !matches!(self, Value::Int(_)) {
                    return Err(err!(
                        TypeError,
                        "can't multiply sequence by non-int of type '{}'",
                        self.type_name()
                    ));
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

fn overflow() -> Error {
    err!(OverflowError, "integer result too large for chatfmt (beyond 64 bits)")
}

/// `str % args`, charged for the string it builds.
fn percent<'a>(s: &Value<'a>, args: &Value<'a>) -> Result<Value<'a>> {
    let out = crate::builtins::format::percent_format(s.as_str().unwrap_or(""), args)?;
    crate::limits::charge_bytes(out.len())?;
    Ok(Value::string(out))
}

/// Python integer arithmetic beyond 64 bits.
fn big_op<'a>(op: BinOp, a: BigInt, b: BigInt) -> Result<Value<'a>> {
    use num_bigint::Sign;
    let zero = BigInt::from(0);
    let floor_divmod = |a: &BigInt, b: &BigInt| {
        let (mut q, mut r) = (a / b, a % b);
        if r != zero && ((r.sign() == Sign::Minus) != (b.sign() == Sign::Minus)) {
            q -= 1;
            r += b;
        }
        (q, r)
    };
    Ok(match op {
        BinOp::Add => Value::from_bigint(a + b),
        BinOp::Sub => Value::from_bigint(a - b),
        BinOp::Mul => {
            if a.bits() + b.bits() > MAX_BIGINT_BITS {
                return Err(err!(LimitExceeded, "integer result beyond {MAX_BIGINT_BITS} bits"));
            }
            Value::from_bigint(a * b)
        }
        BinOp::Div => {
            if b == zero {
                return Err(err!(ZeroDivisionError, "division by zero"));
            }
            let r = big_to_f64(&a) / big_to_f64(&b);
            if r.is_infinite() {
                return Err(err!(OverflowError, "integer division result too large for a float"));
            }
            Value::Float(r)
        }
        BinOp::FloorDiv | BinOp::Mod => {
            if b == zero {
                return Err(err!(ZeroDivisionError, "integer division or modulo by zero"));
            }
            let (q, r) = floor_divmod(&a, &b);
            Value::from_bigint(if op == BinOp::FloorDiv { q } else { r })
        }
        BinOp::Pow => {
            if b.sign() == Sign::Minus {
                return float_op(op, big_to_f64(&a), big_to_f64(&b));
            }
            let e = u32::try_from(&b).map_err(|_| err!(LimitExceeded, "exponent too large"))?;
            if a.bits().saturating_mul(e as u64) > MAX_BIGINT_BITS {
                return Err(err!(LimitExceeded, "integer result beyond {MAX_BIGINT_BITS} bits"));
            }
            Value::from_bigint(a.pow(e))
        }
    })
}

/// The largest integer chatfmt computes (CPython has no limit; this keeps hostile templates bounded).
const MAX_BIGINT_BITS: u64 = 1 << 20;

fn int_op<'a>(op: BinOp, a: i64, b: i64) -> Result<Value<'a>> {
    Ok(match op {
        BinOp::Add => Value::Int(a.checked_add(b).ok_or_else(overflow)?),
        BinOp::Sub => Value::Int(a.checked_sub(b).ok_or_else(overflow)?),
        BinOp::Mul => Value::Int(a.checked_mul(b).ok_or_else(overflow)?),
        BinOp::Div => {
            if b == 0 {
                return Err(err!(ZeroDivisionError, "division by zero"));
            }
            Value::Float(a as f64 / b as f64)
        }
        BinOp::FloorDiv => {
            if b == 0 {
                return Err(err!(ZeroDivisionError, "integer division or modulo by zero"));
            }
            // Only i64::MIN // -1 overflows; Python's result is 2**63.
            let q = a.checked_div_euclid(b).ok_or_else(overflow)?;
            Value::Int(q - if (a.rem_euclid(b) != 0) && b < 0 { 1 } else { 0 })
        }
        BinOp::Mod => {
            if b == 0 {
                return Err(err!(ZeroDivisionError, "integer division or modulo by zero"));
            }
            // i64::MIN % -1 overflows in Rust; its remainder is 0.
            let r = a.checked_rem(b).unwrap_or(0);
            Value::Int(if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r })
        }
        BinOp::Pow => {
            if b < 0 {
                if a == 0 {
                    return Err(err!(ZeroDivisionError, "0.0 cannot be raised to a negative power"));
                }
                Value::Float((a as f64).powf(b as f64))
            } else {
                let e = u32::try_from(b).map_err(|_| overflow())?;
                Value::Int(a.checked_pow(e).ok_or_else(overflow)?)
            }
        }
    })
}

fn float_op<'a>(op: BinOp, a: f64, b: f64) -> Result<Value<'a>> {
    Ok(Value::Float(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => {
            if b == 0.0 {
                return Err(err!(ZeroDivisionError, "float division by zero"));
            }
            a / b
        }
        BinOp::FloorDiv => {
            if b == 0.0 {
                return Err(err!(ZeroDivisionError, "float floor division by zero"));
            }
            (a / b).floor()
        }
        BinOp::Mod => {
            if b == 0.0 {
                return Err(err!(ZeroDivisionError, "float modulo"));
            }
            return crate::pystr::float_mod(a, b)
                .map(Value::Float)
                .map_err(crate::builtins::format::py_err);
        }
        BinOp::Pow => {
            if a == 0.0 && b < 0.0 {
                return Err(err!(ZeroDivisionError, "0.0 cannot be raised to a negative power"));
            }
            let r = a.powf(b);
            if r.is_infinite() && a.is_finite() && b.is_finite() {
                return Err(err!(OverflowError, "(34, 'Numerical result out of range')"));
            }
            r
        }
    }))
}

/// The indices Python's `slice(start, stop, step).indices(len)` visits.
pub fn slice_indices(len: i64, start: Option<i64>, stop: Option<i64>, step: i64) -> Vec<usize> {
    let (s, e) = slice_bounds(len, start, stop, step);
    let mut out = Vec::new();
    let mut i = s;
    while (step > 0 && i < e) || (step < 0 && i > e) {
        out.push(i as usize);
        // A step past the end of the 64-bit range ends the slice (the next index is out of range).
        match i.checked_add(step) {
            Some(next) => i = next,
            None => break,
        }
    }
    out
}

/// Python's normalised `start` and `stop` of a slice of a sequence of length `len` (`step` is not 0).
fn slice_bounds(len: i64, start: Option<i64>, stop: Option<i64>, step: i64) -> (i64, i64) {
    let clamp = |v: i64, lo: i64, hi: i64| v.max(lo).min(hi);
    let (lo, hi) = if step > 0 { (0, len) } else { (-1, len - 1) };
    let norm = |v: Option<i64>, default: i64| match v {
        None => default,
        Some(v) if v < 0 => clamp(v + len, lo, hi),
        Some(v) => clamp(v, lo, hi),
    };
    if step > 0 {
        (norm(start, 0), norm(stop, len))
    } else {
        (norm(start, len - 1), norm(stop, -1))
    }
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
                crate::builtins::filters::escape_into(v.as_str().unwrap_or(""), &mut out);
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
