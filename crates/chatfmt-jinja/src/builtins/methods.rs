//! The bodies of the Python methods of str (and MarkupSafe's `Markup`), dict, list, tuple and
//! range that templates call ([`super::dispatch`] calls them). The int and float bodies live in
//! [`super::num_methods`], those of Jinja2's helper objects in [`super::globals`].

use super::args::CallArgs;
use super::entry::{bad_argument, not_integer, ssize, wrong_receiver, MethodCall};
use crate::error::{err, py_err, Result};
use crate::pystr::{self, PyError};
use crate::value::{Dict, Object, Value};
use std::rc::Rc;

/// An integer argument converted to a C `int`.
fn c_int(v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) if i32::try_from(*i).is_ok() => Ok(*i),
        Value::Bool(b) => Ok(*b as i64),
        Value::Int(_) | Value::BigInt(_) => Err(err!(OverflowError, "Python int too large to convert to C int")),
        _ => Err(not_integer(v)),
    }
}

/// A slice bound (`_PyEval_SliceIndex`): huge integers clamp; `None` is allowed where `none_ok`.
fn slice_index(v: Option<Value>, none_ok: bool) -> Result<Option<i64>> {
    match v {
        None => Ok(None),
        Some(Value::None) if none_ok => Ok(None),
        Some(Value::Int(i)) => Ok(Some(i)),
        Some(Value::Bool(b)) => Ok(Some(b as i64)),
        Some(Value::BigInt(b)) => Ok(Some(crate::value::ops::clamped_index(&b))),
        Some(_) if none_ok => Err(err!(
            TypeError,
            "slice indices must be integers or None or have an __index__ method"
        )),
        Some(_) => Err(err!(
            TypeError,
            "slice indices must be integers or have an __index__ method"
        )),
    }
}

/// MarkupSafe's `escape`: Markup unchanged, other values as escaped `str()`.
fn escape<'a>(v: &Value<'a>) -> Value<'a> {
    if let Value::Safe(_) = v {
        return v.clone();
    }
    let mut out = String::new();
    pystr::html_escape(&v.to_py_str(), &mut out);
    Value::Safe(out.into())
}

fn sub<'a>(recv: &Value<'a>, whole: &str, part: &str) -> Value<'a> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    recv.substr(start, start + part.len())
}

/// The text of a string receiver.
fn text_of<'s>(recv: &'s Value) -> &'s str {
    recv.as_str().unwrap_or("")
}

/// A string result, markup when the receiver is.
fn text<'a>(recv: &Value<'a>, t: String) -> Value<'a> {
    if matches!(recv, Value::Safe(_)) {
        Value::Safe(t.into())
    } else {
        Value::string(t)
    }
}

/// An argument inserted into the result: escaped first when the receiver is markup (Markup's
/// overrides escape what they insert).
fn inserted<'a>(recv: &Value<'a>, v: Option<Value<'a>>) -> Option<Value<'a>> {
    match recv {
        Value::Safe(_) => v.as_ref().map(escape),
        _ => v,
    }
}

/// The case mappings (`upper`, `lower`, `title`, ...).
pub(crate) fn case<'a>(recv: &Value<'a>, f: impl Fn(&str) -> String) -> Result<Value<'a>> {
    Ok(text(recv, f(text_of(recv))))
}

/// The character class tests (`isdigit`, `isspace`, ...).
pub(crate) fn test<'a>(recv: &Value<'a>, f: impl Fn(&str) -> bool) -> Result<Value<'a>> {
    Ok(Value::Bool(f(text_of(recv))))
}

/// `strip`, `lstrip`, `rstrip`.
pub(crate) fn trim<'a>(
    recv: &Value<'a>,
    c: MethodCall<'a>,
    f: impl for<'s> Fn(&'s str, Option<&str>) -> &'s str,
) -> Result<Value<'a>> {
    let chars = match c.arg(0) {
        None | Some(Value::None) => None,
        Some(v) if v.is_str() => Some(v),
        Some(_) => return Err(err!(TypeError, "{} arg must be None or str", c.name())),
    };
    let s = text_of(recv);
    Ok(sub(recv, s, f(s, chars.as_ref().and_then(|v| v.as_str()))))
}

/// `split`, `rsplit`.
pub(crate) fn split<'a>(
    recv: &Value<'a>,
    c: MethodCall<'a>,
    f: impl for<'s> Fn(&'s str, Option<&str>, i64) -> std::result::Result<Vec<&'s str>, PyError>,
) -> Result<Value<'a>> {
    let max = c.arg(1).map_or(Ok(-1), |m| ssize(&m))?;
    let sep = match c.arg(0) {
        None | Some(Value::None) => None,
        Some(v) if v.is_str() => Some(v),
        Some(v) => return Err(err!(TypeError, "must be str or None, not {}", v.type_name())),
    };
    let s = text_of(recv);
    let parts = f(s, sep.as_ref().and_then(|v| v.as_str()), max).map_err(py_err)?;
    Ok(Value::list(parts.into_iter().map(|p| sub(recv, s, p)).collect()))
}

/// `splitlines`.
pub(crate) fn splitlines<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let keep = c.arg(0).map_or(Ok(0), |k| c_int(&k))? != 0;
    let s = text_of(recv);
    Ok(Value::list(
        pystr::splitlines(s, keep)
            .into_iter()
            .map(|p| sub(recv, s, p))
            .collect(),
    ))
}

/// `startswith`, `endswith`: a string or a tuple of them, within `[start:end]`.
pub(crate) fn affix<'a>(
    recv: &Value<'a>,
    c: MethodCall<'a>,
    f: impl Fn(&str, &str, Option<i64>, Option<i64>) -> bool,
) -> Result<Value<'a>> {
    let (start, end) = (slice_index(c.arg(1), true)?, slice_index(c.arg(2), true)?);
    let s = text_of(recv);
    let name = c.name();
    match c.arg(0).unwrap_or(Value::None) {
        p if p.is_str() => Ok(Value::Bool(f(s, p.as_str().unwrap_or(""), start, end))),
        Value::Tuple(items) => {
            for i in items.iter() {
                match i.as_str() {
                    Some(p) if f(s, p, start, end) => return Ok(Value::Bool(true)),
                    Some(_) => {}
                    None => {
                        return Err(err!(
                            TypeError,
                            "tuple for {name} must only contain str, not {}",
                            i.type_name()
                        ))
                    }
                }
            }
            Ok(Value::Bool(false))
        }
        p => Err(err!(
            TypeError,
            "{name} first arg must be str or a tuple of str, not {}",
            p.type_name()
        )),
    }
}

/// `replace`.
pub(crate) fn replace<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let old = c.arg(0).unwrap_or(Value::None);
    let new = inserted(recv, c.arg(1)).unwrap_or(Value::None);
    let o = old
        .as_str()
        .ok_or_else(|| bad_argument("replace", "argument 1", "str", &old))?;
    let n = new
        .as_str()
        .ok_or_else(|| bad_argument("replace", "argument 2", "str", &new))?;
    let count = c.arg(2).map_or(Ok(-1), |c| ssize(&c))?;
    let s = text_of(recv);
    let len = pystr::replaced_len(s, o, n, count);
    crate::limits::check_value_size(len)?;
    Ok(text(recv, pystr::replace_sized(s, o, n, count, len).map_err(py_err)?))
}

/// `find`, `rfind`, `index`, `rindex`, `count`: `sub` within `[start:end]`.
pub(crate) fn search<'a>(
    recv: &Value<'a>,
    c: MethodCall<'a>,
    f: impl Fn(&str, &str, Option<i64>, Option<i64>) -> std::result::Result<i64, PyError>,
) -> Result<Value<'a>> {
    let (start, end) = (slice_index(c.arg(1), true)?, slice_index(c.arg(2), true)?);
    let needle = c.arg(0).unwrap_or(Value::None);
    let n = needle
        .as_str()
        .ok_or_else(|| err!(TypeError, "must be str, not {}", needle.type_name()))?;
    Ok(Value::Int(f(text_of(recv), n, start, end).map_err(py_err)?))
}

/// `partition`, `rpartition`.
pub(crate) fn partition<'a>(
    recv: &Value<'a>,
    c: MethodCall<'a>,
    f: impl for<'s> Fn(&'s str, &str) -> std::result::Result<(&'s str, &'s str, &'s str), PyError>,
) -> Result<Value<'a>> {
    let sep = c.arg(0).unwrap_or(Value::None);
    let sep = sep
        .as_str()
        .ok_or_else(|| err!(TypeError, "must be str, not {}", sep.type_name()))?;
    let s = text_of(recv);
    let (l, m, r) = f(s, sep).map_err(py_err)?;
    let piece = |p: &str| {
        if p.is_empty() {
            recv.substr(0, 0)
        } else {
            sub(recv, s, p)
        }
    };
    let mid = if m.is_empty() {
        recv.substr(0, 0)
    } else {
        text(recv, m.to_string())
    };
    Ok(Value::Tuple(Rc::new(vec![piece(l), mid, piece(r)])))
}

/// `removeprefix`, `removesuffix`.
pub(crate) fn remove_affix<'a>(
    recv: &Value<'a>,
    c: MethodCall<'a>,
    f: impl for<'s> Fn(&'s str, &str) -> &'s str,
) -> Result<Value<'a>> {
    let affix = c.arg(0).unwrap_or(Value::None);
    let x = affix
        .as_str()
        .ok_or_else(|| bad_argument(c.name(), "argument", "str", &affix))?;
    let s = text_of(recv);
    Ok(sub(recv, s, f(s, x)))
}

/// `zfill`.
pub(crate) fn zfill<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let width = ssize(&c.arg(0).unwrap_or(Value::None))?;
    Ok(text(recv, pystr::zfill(text_of(recv), width).map_err(py_err)?))
}

/// `center`, `ljust`, `rjust`.
pub(crate) fn pad<'a>(
    recv: &Value<'a>,
    c: MethodCall<'a>,
    f: impl Fn(&str, i64, Option<&str>) -> std::result::Result<String, PyError>,
) -> Result<Value<'a>> {
    let fill = inserted(recv, c.arg(1));
    let w = ssize(&c.arg(0).unwrap_or(Value::None))?;
    let fill_s = match &fill {
        None => None,
        Some(f) if f.is_str() => f.as_str(),
        Some(f) => {
            return Err(err!(
                TypeError,
                "The fill character must be a unicode character, not {}",
                f.type_name()
            ))
        }
    };
    Ok(text(recv, f(text_of(recv), w, fill_s).map_err(py_err)?))
}

/// `expandtabs`.
pub(crate) fn expandtabs<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let tab = c.arg(0).map_or(Ok(8), |t| c_int(&t))?;
    Ok(text(recv, pystr::expandtabs(text_of(recv), tab).map_err(py_err)?))
}

/// `join`.
pub(crate) fn join<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let markup = matches!(recv, Value::Safe(_));
    let joined = join_items(text_of(recv), &c.arg(0).unwrap_or(Value::None), markup)?;
    Ok(text(recv, joined))
}

/// `format`.
pub(crate) fn format<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    super::format::str_format_value(recv, c.given)
}

/// `format_map`.
pub(crate) fn format_map<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    super::format::str_format_map(recv, c.arg(0).unwrap_or(Value::None))
}

/// `encode`.
pub(crate) fn encode<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let bytes = super::num_methods::encode(text_of(recv), c.arg(0), c.arg(1))?;
    Ok(super::num_methods::bytes_value(bytes))
}

/// `translate`.
pub(crate) fn translate<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let table = c.arg(0).unwrap_or(Value::None);
    Ok(text(recv, translate_text(text_of(recv), &table)?))
}

/// The items of a dict as a view of kind `kind`, each pair made an item by `item`.
pub(crate) fn dict_view<'a>(
    recv: &Value<'a>,
    kind: &'static str,
    item: impl Fn(Value<'a>, Value<'a>) -> Value<'a>,
) -> Result<Value<'a>> {
    crate::limits::charge_items(recv.py_len()?)?;
    let mut out = Vec::new();
    recv.for_each_pair(|k, v| out.push(item(k, v)));
    Ok(Value::view(kind, recv, out))
}

/// `dict.copy`.
pub(crate) fn dict_copy<'a>(recv: &Value<'a>, _: MethodCall<'a>) -> Result<Value<'a>> {
    crate::limits::charge_items(recv.py_len()?)?;
    let mut pairs = Vec::new();
    recv.for_each_pair(|k, v| pairs.push((k, v)));
    crate::value::ops::dict_from(pairs)
}

/// `dict.get`.
pub(crate) fn dict_get<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let key = c.arg(0).unwrap_or(Value::None);
    crate::value::check_hashable(&key)?;
    Ok(recv.get_item_opt(&key).unwrap_or(c.arg(1).unwrap_or(Value::None)))
}

/// `Markup.striptags()`.
pub(crate) fn striptags<'a>(recv: &Value<'a>, _: MethodCall<'a>) -> Result<Value<'a>> {
    let text = text_of(recv);
    crate::limits::charge_bytes(text.len())?;
    Ok(Value::string(pystr::striptags(text)))
}

/// `Markup.unescape()`.
pub(crate) fn unescape<'a>(recv: &Value<'a>, _: MethodCall<'a>) -> Result<Value<'a>> {
    let text = text_of(recv);
    crate::limits::charge_bytes(text.len())?;
    Ok(Value::string(pystr::html_unescape(text)))
}

/// `dict.fromkeys(iterable, value=None)`.
pub(crate) fn fromkeys<'a>(_: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let args = CallArgs {
        pos: c.given.pos,
        kw: Vec::new(),
    };
    let [keys, value] = args.bind("fromkeys", ["iterable", "value"])?;
    let keys = keys.ok_or_else(|| err!(TypeError, "fromkeys expected at least 1 argument, got 0"))?;
    let value = value.unwrap_or(Value::None);
    let mut d = Dict::default();
    let keys = keys.iterate()?;
    crate::limits::charge_items(keys.len())?;
    for k in keys.iter() {
        d.insert(k.clone(), value.clone())?;
    }
    Ok(Value::Dict(Rc::new(d)))
}

/// `isdisjoint` of a dict view.
pub(crate) fn isdisjoint<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let items = match recv {
        Value::Object(o) => match &**o {
            Object::View(_, _, items) => items,
            _ => return Err(wrong_receiver(&c, recv)),
        },
        _ => return Err(wrong_receiver(&c, recv)),
    };
    let other = c.arg(0).unwrap_or(Value::Undefined(None)).iterate()?;
    crate::limits::charge((items.len() as u64).saturating_mul(other.len() as u64))?;
    Ok(Value::Bool(!items.iter().any(|i| other.iter().any(|o| o.py_eq(i)))))
}

/// `count` of a list, tuple or range.
pub(crate) fn seq_count<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let items = recv.iterate()?;
    crate::limits::charge_items(items.len())?;
    let x = c.arg(0).unwrap_or(Value::None);
    Ok(Value::Int(items.iter().filter(|i| i.py_eq(&x)).count() as i64))
}

/// `index` of a list, tuple or range.
pub(crate) fn seq_index<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let items = recv.iterate()?;
    crate::limits::charge_items(items.len())?;
    let x = c.arg(0).unwrap_or(Value::None);
    let len = items.len() as i64;
    let bound = |v: Option<i64>, default: i64| match v {
        None => default,
        Some(i) if i < 0 => (i + len).max(0),
        Some(i) => i.min(len),
    };
    let start = bound(slice_index(c.arg(1), false)?, 0);
    let stop = bound(slice_index(c.arg(2), false)?, len);
    match (start..stop).find(|i| items[*i as usize].py_eq(&x)) {
        Some(i) => Ok(Value::Int(i)),
        None => {
            let mut r = String::new();
            x.write_repr(&mut r);
            Err(match recv {
                Value::Tuple(_) => err!(ValueError, "tuple.index(x): x not in tuple"),
                // A range answers ints itself and searches anything else as a generic sequence.
                Value::Object(_) if matches!(x, Value::Int(_) | Value::Bool(_)) => {
                    err!(ValueError, "{r} is not in range")
                }
                Value::Object(_) => err!(ValueError, "sequence.index(x): x not in sequence"),
                _ => err!(ValueError, "{r} is not in list"),
            })
        }
    }
}

/// `list.copy`.
pub(crate) fn list_copy<'a>(recv: &Value<'a>, _: MethodCall<'a>) -> Result<Value<'a>> {
    let items = recv.iterate()?;
    crate::limits::charge_items(items.len())?;
    Ok(Value::list(items.to_vec()))
}

/// `sep.join(iterable)`; Markup's escapes every item first.
fn join_items(sep: &str, items: &Value, markup: bool) -> Result<String> {
    let items = match items.iterate() {
        Ok(items) => items,
        Err(e) if markup => return Err(e),
        Err(_) => return Err(err!(TypeError, "can only join an iterable")),
    };
    crate::limits::charge_items(items.len())?;
    let mut out = String::new();
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        let it = if markup { escape(it) } else { it.clone() };
        match it.as_str() {
            Some(p) => out.push_str(p),
            None => {
                return Err(err!(
                    TypeError,
                    "sequence item {i}: expected str instance, {} found",
                    it.type_name()
                ))
            }
        }
        crate::limits::check_value_size(out.len())?;
    }
    Ok(out)
}

/// `str.translate(table)`: each character's code looked up in `table`; a missing entry keeps it.
fn translate_text(s: &str, table: &Value) -> Result<String> {
    crate::limits::charge_items(s.len())?;
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let key = Value::Int(c as i64);
        let mapped = match table {
            Value::Undefined(_) => return Err(table.undefined_error()),
            _ if table.is_mapping() || table.is_sequence_like() || table.is_str() => table.get_item_opt(&key),
            Value::Object(o) if matches!(&**o, Object::Range(..)) => table.get_item_opt(&key),
            Value::Object(o) if matches!(&**o, Object::Bytes(_)) => match &**o {
                Object::Bytes(b) => b.get(c as usize).map(|x| Value::Int(*x as i64)),
                _ => None,
            },
            _ => return Err(err!(TypeError, "'{}' object is not subscriptable", table.type_name())),
        };
        match mapped {
            None => out.push(c),
            Some(Value::None) => {}
            Some(v) if v.is_str() => out.push_str(v.as_str().unwrap_or("")),
            Some(v @ (Value::Int(_) | Value::Bool(_) | Value::BigInt(_))) => {
                let code = match v {
                    Value::Int(i) => u32::try_from(i).ok(),
                    Value::Bool(b) => Some(b as u32),
                    _ => None,
                };
                match code.and_then(char::from_u32) {
                    Some(m) => out.push(m),
                    // A lone surrogate cannot live in the output (it could not be encoded either).
                    None if code.is_some_and(|c| c < 0x110000) => out.push(char::REPLACEMENT_CHARACTER),
                    None => return Err(err!(ValueError, "character mapping must be in range(0x110000)")),
                }
            }
            Some(_) => return Err(err!(TypeError, "character mapping must return integer, None or str")),
        }
        crate::limits::check_value_size(out.len())?;
    }
    Ok(out)
}

/// `str.maketrans(x, y=None, z=None)`.
pub(crate) fn maketrans<'a>(_: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let (x, y, z) = (c.arg(0).unwrap_or(Value::None), c.arg(1), c.arg(2));
    for (v, which) in [(&y, "argument 2"), (&z, "argument 3")] {
        if let Some(v) = v {
            if !v.is_str() {
                return Err(bad_argument("maketrans", which, "str", v));
            }
        }
    }
    let mut d = Dict::default();
    let code = |c: char| Value::Int(c as i64);
    match y {
        None => {
            if !x.is_mapping() {
                return Err(err!(
                    TypeError,
                    "if you give only one argument to maketrans it must be a dict"
                ));
            }
            let mut pairs = Vec::new();
            x.for_each_pair(|k, v| pairs.push((k, v)));
            for (k, v) in pairs {
                let key = match &k {
                    Value::Int(_) | Value::BigInt(_) => k.clone(),
                    Value::Bool(b) => Value::Int(*b as i64),
                    _ => match k.as_str() {
                        Some(s) => {
                            let mut cs = s.chars();
                            match (cs.next(), cs.next()) {
                                (Some(c), None) => code(c),
                                _ => {
                                    return Err(err!(ValueError, "string keys in translate table must be of length 1"))
                                }
                            }
                        }
                        None => return Err(err!(TypeError, "keys in translate table must be strings or integers")),
                    },
                };
                d.insert(key, v)?;
            }
        }
        Some(y) => {
            let (Some(xs), Some(ys)) = (x.as_str(), y.as_str()) else {
                return Err(err!(
                    TypeError,
                    "first maketrans argument must be a string if there is a second argument"
                ));
            };
            if xs.chars().count() != ys.chars().count() {
                return Err(err!(
                    ValueError,
                    "the first two maketrans arguments must have equal length"
                ));
            }
            for (a, b) in xs.chars().zip(ys.chars()) {
                d.insert(code(a), code(b))?;
            }
            if let Some(zs) = z.as_ref().and_then(|z| z.as_str()) {
                for c in zs.chars() {
                    d.insert(code(c), Value::None)?;
                }
            }
        }
    }
    Ok(Value::Dict(Rc::new(d)))
}
