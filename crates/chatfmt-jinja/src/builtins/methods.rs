//! The Python methods of str (and MarkupSafe's `Markup`), dict, list and tuple that templates
//! call, and the methods of Jinja2's helper objects (loop, cycler). Arguments are bound by the
//! signature table of [`super::method_sig`]; int and float methods live in [`super::num_methods`].

use super::args::CallArgs;
use super::method_sig::{self, Sig};
use super::num_methods;
use crate::error::{err, Error, Result};
use crate::pystr;
use crate::value::{Dict, Object, Value};
use serde_json::Value as Json;
use std::rc::Rc;

const DICT_MUTATORS: &[&str] = &["clear", "pop", "popitem", "setdefault", "update"];
const LIST_MUTATORS: &[&str] = &[
    "append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort",
];

/// Whether `obj` has a Python method called `name`.
pub fn has_method(obj: &Value, name: &str) -> bool {
    if method_sig::lookup(obj, name).is_some() {
        return true;
    }
    match obj {
        Value::Object(o) => match &**o {
            Object::Function("dict") => name == "fromkeys",
            Object::Loop(_) => matches!(name, "cycle" | "changed"),
            Object::Cycler(..) => matches!(name, "next" | "reset"),
            Object::View(kind, ..) => *kind != "dict_values" && name == "isdisjoint",
            _ => false,
        },
        _ => false,
    }
}

/// Whether `name` is a method of `dict` (so `d.name` is the method, not the item).
pub fn is_dict_method(name: &str) -> bool {
    method_sig::lookup(&Value::Dict(Rc::default()), name).is_some()
}

/// Whether `name` is a list or dict method that mutates its receiver (none is a `str` method, so a
/// call of such a name fails on any value that has it).
pub(crate) fn is_mutator_name(name: &str) -> bool {
    LIST_MUTATORS.contains(&name) || DICT_MUTATORS.contains(&name)
}

/// Whether the method mutates its receiver (the immutable sandbox refuses those).
pub fn is_mutator(obj: &Value, name: &str) -> bool {
    match obj {
        Value::Json(Json::Object(_)) | Value::Dict(_) => DICT_MUTATORS.contains(&name),
        Value::Json(Json::Array(_)) | Value::List(_) => LIST_MUTATORS.contains(&name),
        _ => false,
    }
}

/// The one argument of slot `i`, if given.
pub(crate) fn arg<'a>(a: &[Option<Value<'a>>], i: usize) -> Option<Value<'a>> {
    a.get(i).cloned().flatten()
}

/// The type name CPython's `_PyArg_BadArgument` prints (`None` for `None`).
pub(crate) fn arg_type_name(v: &Value) -> &'static str {
    match v {
        Value::None => "None",
        _ => v.type_name(),
    }
}

/// `func() which must be expected, not T` (`which` is e.g. "argument 2").
pub(crate) fn bad_argument(func: &str, which: &str, expected: &str, v: &Value) -> Error {
    err!(
        TypeError,
        "{func}() {which} must be {expected}, not {}",
        arg_type_name(v)
    )
}

fn not_integer(v: &Value) -> Error {
    err!(
        TypeError,
        "'{}' object cannot be interpreted as an integer",
        v.type_name()
    )
}

/// An integer argument converted to a C `Py_ssize_t` (`__index__`).
pub(crate) fn ssize(v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(*b as i64),
        Value::BigInt(_) => Err(err!(OverflowError, "Python int too large to convert to C ssize_t")),
        _ => Err(not_integer(v)),
    }
}

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
        Some(Value::BigInt(b)) => Ok(Some(if b.sign() == num_bigint::Sign::Minus {
            i64::MIN / 2
        } else {
            i64::MAX / 2
        })),
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

/// Calls the method `name` of `recv`.
pub fn call_method<'a>(recv: &Value<'a>, name: &str, args: CallArgs<'a>) -> Result<Value<'a>> {
    if let Value::Object(o) = recv {
        match &**o {
            Object::Function("dict") => return fromkeys(recv, args),
            Object::View(_, _, items) => {
                let [other] = args.bind("isdisjoint", ["other"])?;
                let other = other.unwrap_or(Value::Undefined(None)).iterate()?;
                crate::limits::charge((items.len() as u64).saturating_mul(other.len() as u64))?;
                return Ok(Value::Bool(!items.iter().any(|i| other.iter().any(|o| o.py_eq(i)))));
            }
            Object::Loop(l) => return super::globals::loop_method(l, name, args),
            Object::Cycler(items, pos) => {
                return Ok(match name {
                    "next" => {
                        let v = items.get(pos.get()).cloned().unwrap_or(Value::None);
                        pos.set((pos.get() + 1) % items.len().max(1));
                        v
                    }
                    _ => {
                        pos.set(0);
                        Value::None
                    }
                })
            }
            _ => {}
        }
    }
    let Some(sig) = method_sig::lookup(recv, name) else {
        return Err(err!(
            AttributeError,
            "'{}' object has no attribute '{name}'",
            recv.type_name()
        ));
    };
    if recv.is_str() {
        return str_method(recv, sig, name, args);
    }
    let a = method_sig::bind(sig, recv, name, &args)?;
    match recv {
        Value::Int(_) | Value::BigInt(_) | Value::Bool(_) => num_methods::int_method(recv, name, &a),
        Value::Float(f) => num_methods::float_method(*f, name, &a),
        _ if recv.is_mapping() => dict_method(recv, name, &a, args),
        _ => sequence_method(recv, name, &a),
    }
}

/// `dict.fromkeys(iterable, value=None)`.
fn fromkeys<'a>(recv: &Value<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
    method_sig::bind(method_sig::fromkeys(), recv, "fromkeys", &args)?;
    super::globals::dict_fromkeys(CallArgs {
        pos: args.pos,
        kw: Vec::new(),
    })
}

fn dict_method<'a>(recv: &Value<'a>, name: &str, a: &[Option<Value<'a>>], args: CallArgs<'a>) -> Result<Value<'a>> {
    if matches!(name, "items" | "keys" | "values" | "copy") {
        crate::limits::charge_items(recv.py_len()?)?;
    }
    Ok(match name {
        "items" => {
            let mut out = Vec::new();
            recv.for_each_pair(|k, v| out.push(Value::Tuple(Rc::new(vec![k, v]))));
            Value::view("dict_items", recv, out)
        }
        "keys" => {
            let mut out = Vec::new();
            recv.for_each_pair(|k, _| out.push(k));
            Value::view("dict_keys", recv, out)
        }
        "values" => {
            let mut out = Vec::new();
            recv.for_each_pair(|_, v| out.push(v));
            Value::view("dict_values", recv, out)
        }
        "get" => {
            let key = arg(a, 0).unwrap_or(Value::None);
            super::filters::check_hashable(&key)?;
            recv.get_item_opt(&key).unwrap_or(arg(a, 1).unwrap_or(Value::None))
        }
        "fromkeys" => fromkeys(recv, args)?,
        _ => {
            let mut pairs = Vec::new();
            recv.for_each_pair(|k, v| pairs.push((k, v)));
            crate::value::ops::dict_from(pairs)?
        }
    })
}

/// The methods of list, tuple and range.
fn sequence_method<'a>(recv: &Value<'a>, name: &str, a: &[Option<Value<'a>>]) -> Result<Value<'a>> {
    let items = recv.iterate()?;
    crate::limits::charge_items(items.len())?;
    let x = arg(a, 0).unwrap_or(Value::None);
    Ok(match name {
        "count" => Value::Int(items.iter().filter(|i| i.py_eq(&x)).count() as i64),
        "index" => {
            let len = items.len() as i64;
            let bound = |v: Option<i64>, default: i64| match v {
                None => default,
                Some(i) if i < 0 => (i + len).max(0),
                Some(i) => i.min(len),
            };
            let start = bound(slice_index(arg(a, 1), false)?, 0);
            let stop = bound(slice_index(arg(a, 2), false)?, len);
            let found = (start..stop).find(|i| items[*i as usize].py_eq(&x));
            match found {
                Some(i) => Value::Int(i),
                None => {
                    let mut r = String::new();
                    x.write_repr(&mut r);
                    return Err(match recv {
                        Value::Tuple(_) => err!(ValueError, "tuple.index(x): x not in tuple"),
                        Value::Object(_) => err!(ValueError, "{r} is not in range"),
                        _ => err!(ValueError, "{r} is not in list"),
                    });
                }
            }
        }
        _ => Value::list(items.to_vec()),
    })
}

/// The methods of str and Markup.
fn str_method<'a>(recv: &Value<'a>, sig: Sig, name: &str, args: CallArgs<'a>) -> Result<Value<'a>> {
    use crate::error::py_err;
    let markup = matches!(recv, Value::Safe(_));
    if name == "format" {
        return super::format::str_format_value(recv, args);
    }
    let mut a = method_sig::bind(sig, recv, name, &args)?;
    if markup {
        // Markup's overrides escape the text they insert.
        let inserted = match name {
            "center" | "ljust" | "rjust" | "replace" => Some(1),
            _ => None,
        };
        if let Some(slot) = inserted.and_then(|i| a.get_mut(i)) {
            *slot = slot.as_ref().map(escape);
        }
    }
    let s = recv.as_str().unwrap_or("");
    // Methods that scan the whole string (those that return a string of their own are charged
    // for it by the evaluator; the prefix and affix methods look at the ends only).
    if !matches!(
        name,
        "strip" | "lstrip" | "rstrip" | "startswith" | "endswith" | "removeprefix" | "removesuffix" | "join"
    ) {
        crate::limits::charge_bytes(s.len())?;
    }
    let text = |t: String| -> Value<'a> {
        if markup {
            Value::Safe(t.into())
        } else {
            Value::string(t)
        }
    };
    Ok(match name {
        "strip" | "lstrip" | "rstrip" => {
            let chars = match arg(&a, 0) {
                None | Some(Value::None) => None,
                Some(c) if c.is_str() => Some(c),
                Some(_) => return Err(err!(TypeError, "{name} arg must be None or str")),
            };
            let cs = chars.as_ref().and_then(|c| c.as_str());
            let r = match name {
                "strip" => pystr::strip(s, cs),
                "lstrip" => pystr::lstrip(s, cs),
                _ => pystr::rstrip(s, cs),
            };
            sub(recv, s, r)
        }
        "split" | "rsplit" => {
            let max = arg(&a, 1).map_or(Ok(-1), |m| ssize(&m))?;
            let sep = match arg(&a, 0) {
                None | Some(Value::None) => None,
                Some(v) if v.is_str() => Some(v),
                Some(v) => return Err(err!(TypeError, "must be str or None, not {}", v.type_name())),
            };
            let sep_s = sep.as_ref().and_then(|v| v.as_str());
            let parts = if name == "split" {
                pystr::split(s, sep_s, max)
            } else {
                pystr::rsplit(s, sep_s, max)
            };
            Value::list(parts.map_err(py_err)?.into_iter().map(|p| sub(recv, s, p)).collect())
        }
        "splitlines" => {
            let keep = arg(&a, 0).map_or(Ok(0), |k| c_int(&k))? != 0;
            Value::list(
                pystr::splitlines(s, keep)
                    .into_iter()
                    .map(|p| sub(recv, s, p))
                    .collect(),
            )
        }
        "startswith" | "endswith" => {
            let (start, end) = (slice_index(arg(&a, 1), true)?, slice_index(arg(&a, 2), true)?);
            let test = |p: &str| {
                if name == "startswith" {
                    pystr::startswith(s, p, start, end)
                } else {
                    pystr::endswith(s, p, start, end)
                }
            };
            match arg(&a, 0).unwrap_or(Value::None) {
                p if p.is_str() => Value::Bool(test(p.as_str().unwrap_or(""))),
                Value::Tuple(items) => {
                    for i in items.iter() {
                        match i.as_str() {
                            Some(p) if test(p) => return Ok(Value::Bool(true)),
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
                    Value::Bool(false)
                }
                p => {
                    return Err(err!(
                        TypeError,
                        "{name} first arg must be str or a tuple of str, not {}",
                        p.type_name()
                    ))
                }
            }
        }
        "replace" => {
            let (old, new) = (arg(&a, 0).unwrap_or(Value::None), arg(&a, 1).unwrap_or(Value::None));
            let o = old
                .as_str()
                .ok_or_else(|| bad_argument(name, "argument 1", "str", &old))?;
            let n = new
                .as_str()
                .ok_or_else(|| bad_argument(name, "argument 2", "str", &new))?;
            let count = arg(&a, 2).map_or(Ok(-1), |c| ssize(&c))?;
            let len = pystr::replaced_len(s, o, n, count);
            crate::limits::check_value_size(len)?;
            text(pystr::replace_sized(s, o, n, count, len).map_err(py_err)?)
        }
        "find" | "rfind" | "index" | "rindex" | "count" => {
            let (start, end) = (slice_index(arg(&a, 1), true)?, slice_index(arg(&a, 2), true)?);
            let needle = arg(&a, 0).unwrap_or(Value::None);
            let n = needle
                .as_str()
                .ok_or_else(|| err!(TypeError, "must be str, not {}", needle.type_name()))?;
            Value::Int(match name {
                "find" => pystr::find(s, n, start, end),
                "rfind" => pystr::rfind(s, n, start, end),
                "index" => pystr::index(s, n, start, end).map_err(py_err)?,
                "rindex" => pystr::rindex(s, n, start, end).map_err(py_err)?,
                _ => pystr::count(s, n, start, end),
            })
        }
        "partition" | "rpartition" => {
            let sep = arg(&a, 0).unwrap_or(Value::None);
            let sep = sep
                .as_str()
                .ok_or_else(|| err!(TypeError, "must be str, not {}", sep.type_name()))?;
            let (l, m, r) = if name == "partition" {
                pystr::partition(s, sep)
            } else {
                pystr::rpartition(s, sep)
            }
            .map_err(py_err)?;
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
                text(m.to_string())
            };
            Value::Tuple(Rc::new(vec![piece(l), mid, piece(r)]))
        }
        "removeprefix" | "removesuffix" => {
            let affix = arg(&a, 0).unwrap_or(Value::None);
            let x = affix
                .as_str()
                .ok_or_else(|| bad_argument(name, "argument", "str", &affix))?;
            let r = if name == "removeprefix" {
                pystr::removeprefix(s, x)
            } else {
                pystr::removesuffix(s, x)
            };
            sub(recv, s, r)
        }
        "zfill" => text(pystr::zfill(s, ssize(&arg(&a, 0).unwrap_or(Value::None))?).map_err(py_err)?),
        "center" | "ljust" | "rjust" => {
            let w = ssize(&arg(&a, 0).unwrap_or(Value::None))?;
            let fill = arg(&a, 1);
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
            let r = match name {
                "center" => pystr::center(s, w, fill_s),
                "ljust" => pystr::ljust(s, w, fill_s),
                _ => pystr::rjust(s, w, fill_s),
            };
            text(r.map_err(py_err)?)
        }
        "expandtabs" => {
            let tab = arg(&a, 0).map_or(Ok(8), |t| c_int(&t))?;
            text(pystr::expandtabs(s, tab).map_err(py_err)?)
        }
        "upper" | "lower" | "casefold" | "capitalize" | "title" | "swapcase" => text(match name {
            "upper" => pystr::upper(s),
            "lower" => pystr::lower(s),
            "casefold" => pystr::casefold(s),
            "capitalize" => pystr::capitalize(s),
            "title" => pystr::title(s),
            _ => pystr::swapcase(s),
        }),
        "isalnum" | "isalpha" | "isascii" | "isdecimal" | "isdigit" | "isidentifier" | "islower" | "isnumeric"
        | "isprintable" | "isspace" | "istitle" | "isupper" => Value::Bool(match name {
            "isalnum" => pystr::isalnum(s),
            "isalpha" => pystr::isalpha(s),
            "isascii" => pystr::isascii(s),
            "isdecimal" => pystr::isdecimal(s),
            "isdigit" => pystr::isdigit(s),
            "isidentifier" => pystr::isidentifier(s),
            "islower" => pystr::islower(s),
            "isnumeric" => pystr::isnumeric(s),
            "isprintable" => pystr::isprintable(s),
            "isspace" => pystr::isspace(s),
            "istitle" => pystr::istitle(s),
            _ => pystr::isupper(s),
        }),
        "join" => text(join(s, &arg(&a, 0).unwrap_or(Value::None), markup)?),
        "format_map" => {
            let mapping = arg(&a, 0).unwrap_or(Value::None);
            super::format::str_format_map(recv, mapping)?
        }
        "encode" => num_methods::bytes_value(num_methods::encode(s, arg(&a, 0), arg(&a, 1))?),
        "translate" => text(translate(s, &arg(&a, 0).unwrap_or(Value::None))?),
        "maketrans" => maketrans(&a)?,
        _ => return Err(err!(AttributeError, "'str' object has no attribute '{name}'")),
    })
}

/// `sep.join(iterable)`; Markup's escapes every item first.
fn join(sep: &str, items: &Value, markup: bool) -> Result<String> {
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
fn translate(s: &str, table: &Value) -> Result<String> {
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
fn maketrans<'a>(a: &[Option<Value<'a>>]) -> Result<Value<'a>> {
    let (x, y, z) = (arg(a, 0).unwrap_or(Value::None), arg(a, 1), arg(a, 2));
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
