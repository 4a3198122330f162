//! The Python methods of str, dict, list and tuple that templates call, and the methods of
//! Jinja2's helper objects (loop, cycler).

use crate::error::{err, Result};
use crate::eval::{CallArgs, Evaluator};
use crate::pystr;
use crate::value::{Object, Value};
use serde_json::Value as Json;
use std::rc::Rc;

const STR_METHODS: &[&str] = &[
    "capitalize",
    "casefold",
    "center",
    "count",
    "encode",
    "endswith",
    "expandtabs",
    "find",
    "format",
    "format_map",
    "index",
    "isalnum",
    "isalpha",
    "isascii",
    "isdecimal",
    "isdigit",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "istitle",
    "isupper",
    "join",
    "ljust",
    "lower",
    "lstrip",
    "maketrans",
    "partition",
    "removeprefix",
    "removesuffix",
    "replace",
    "rfind",
    "rindex",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "title",
    "translate",
    "upper",
    "zfill",
];
const DICT_METHODS: &[&str] = &[
    "clear",
    "copy",
    "fromkeys",
    "get",
    "items",
    "keys",
    "pop",
    "popitem",
    "setdefault",
    "update",
    "values",
];
const DICT_MUTATORS: &[&str] = &["clear", "pop", "popitem", "setdefault", "update"];
const LIST_METHODS: &[&str] = &[
    "append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove", "reverse", "sort",
];
const LIST_MUTATORS: &[&str] = &[
    "append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort",
];
const TUPLE_METHODS: &[&str] = &["count", "index"];

/// Whether `obj` has a Python method called `name`.
pub fn has_method(obj: &Value, name: &str) -> bool {
    match obj {
        Value::Str(_) | Value::String(_) | Value::Safe(_) => STR_METHODS.contains(&name),
        Value::Json(Json::Object(_)) | Value::Dict(_) => DICT_METHODS.contains(&name),
        Value::Json(Json::Array(_)) | Value::List(_) => LIST_METHODS.contains(&name),
        Value::Tuple(_) => TUPLE_METHODS.contains(&name),
        Value::Int(_) | Value::Bool(_) => matches!(name, "bit_length" | "conjugate"),
        Value::Object(o) if matches!(&**o, Object::Function("dict")) => name == "fromkeys",
        Value::Object(o) if matches!(&**o, Object::Range(..)) => matches!(name, "index" | "count"),
        Value::Float(_) => matches!(name, "is_integer" | "conjugate" | "hex"),
        Value::Object(o) => match &**o {
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
    DICT_METHODS.contains(&name)
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

/// `obj.name(args)`: a method call, or a call of whatever attribute `name` holds.
pub fn call_attr<'a>(ev: &mut Evaluator<'a>, obj: &Value<'a>, name: &'a str, args: CallArgs<'a>) -> Result<Value<'a>> {
    if obj.is_undefined() {
        return Err(obj.undefined_error());
    }
    if has_method(obj, name) && !name.starts_with('_') {
        if is_mutator(obj, name) {
            return Err(err!(
                SecurityError,
                "access to attribute '{name}' of '{}' object is unsafe.",
                obj.type_name()
            ));
        }
        return call_method(obj, name, args);
    }
    let f = super::getattr(obj, name)?;
    ev.call_value(&f, args)
}

fn str_arg<'a>(v: &Option<Value<'a>>, func: &str) -> Result<Option<Value<'a>>> {
    match v {
        None | Some(Value::None) => Ok(None),
        Some(v) if v.is_str() => Ok(Some(v.clone())),
        Some(v) => Err(err!(TypeError, "{func} arg must be None or str, not {}", v.type_name())),
    }
}

fn int_arg(v: &Option<Value>, default: i64) -> Result<i64> {
    match v {
        None => Ok(default),
        Some(Value::Int(i)) => Ok(*i),
        Some(Value::Bool(b)) => Ok(*b as i64),
        Some(v) => Err(err!(
            TypeError,
            "'{}' object cannot be interpreted as an integer",
            v.type_name()
        )),
    }
}

fn sub<'a>(recv: &Value<'a>, whole: &str, part: &str) -> Value<'a> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    recv.substr(start, start + part.len())
}

fn slice_bound(v: &Option<Value>) -> Result<Option<i64>> {
    match v {
        None | Some(Value::None) => Ok(None),
        Some(Value::Int(i)) => Ok(Some(*i)),
        Some(Value::Bool(b)) => Ok(Some(*b as i64)),
        Some(_) => Err(err!(
            TypeError,
            "slice indices must be integers or None or have an __index__ method"
        )),
    }
}

fn needle<'v>(v: &'v Option<Value>, what: &str) -> Result<&'v str> {
    match v {
        Some(x) if x.is_str() => Ok(x.as_str().unwrap_or("")),
        Some(x) => Err(err!(TypeError, "must be str, not {}", x.type_name())),
        None => Err(err!(TypeError, "{what}() takes at least 1 argument (0 given)")),
    }
}

fn str_method<'a>(recv: &Value<'a>, name: &str, args: CallArgs<'a>) -> Result<Value<'a>> {
    use super::format::py_err;
    let s = recv.as_str().unwrap_or("");
    let text = |t: String| Value::string(t);
    Ok(match name {
        "strip" | "lstrip" | "rstrip" => {
            let [chars] = args.bind(name, ["chars"])?;
            let chars = str_arg(&chars, name)?;
            let cs = chars.as_ref().and_then(|c| c.as_str());
            let r = match name {
                "strip" => pystr::strip(s, cs),
                "lstrip" => pystr::lstrip(s, cs),
                _ => pystr::rstrip(s, cs),
            };
            sub(recv, s, r)
        }
        "split" | "rsplit" => {
            let [sep, maxsplit] = args.bind(name, ["sep", "maxsplit"])?;
            let sep = str_arg(&sep, name)?;
            let max = int_arg(&maxsplit, -1)?;
            let sep_s = sep.as_ref().and_then(|v| v.as_str());
            let parts = if name == "split" {
                pystr::split(s, sep_s, max)
            } else {
                pystr::rsplit(s, sep_s, max)
            };
            Value::list(parts.map_err(py_err)?.into_iter().map(|p| sub(recv, s, p)).collect())
        }
        "splitlines" => {
            let [keepends] = args.bind(name, ["keepends"])?;
            let keep = keepends.is_some_and(|k| k.truthy());
            Value::list(
                pystr::splitlines(s, keep)
                    .into_iter()
                    .map(|p| sub(recv, s, p))
                    .collect(),
            )
        }
        "startswith" | "endswith" => {
            let [prefix, start, end] = args.bind(name, ["prefix", "start", "end"])?;
            let (start, end) = (slice_bound(&start)?, slice_bound(&end)?);
            let test = |p: &str| {
                if name == "startswith" {
                    pystr::startswith(s, p, start, end)
                } else {
                    pystr::endswith(s, p, start, end)
                }
            };
            match prefix {
                Some(p) if p.is_str() => Value::Bool(test(p.as_str().unwrap_or(""))),
                Some(Value::Tuple(items)) => {
                    let mut hit = false;
                    for i in items.iter() {
                        match i.as_str() {
                            Some(p) => hit = hit || test(p),
                            None => {
                                return Err(err!(
                                    TypeError,
                                    "tuple for {name} must only contain str, not {}",
                                    i.type_name()
                                ))
                            }
                        }
                    }
                    Value::Bool(hit)
                }
                Some(p) => {
                    return Err(err!(
                        TypeError,
                        "{name} first arg must be str or a tuple of str, not {}",
                        p.type_name()
                    ))
                }
                None => return Err(err!(TypeError, "{name}() takes at least 1 argument (0 given)")),
            }
        }
        "replace" => {
            let [old, new, count] = args.bind(name, ["old", "new", "count"])?;
            let (Some(old), Some(new)) = (old, new) else {
                return Err(err!(
                    TypeError,
                    "replace expected at least 2 arguments, got {}",
                    args.pos.len()
                ));
            };
            let (Some(o), Some(n)) = (old.as_str(), new.as_str()) else {
                let bad = if old.is_str() { &new } else { &old };
                return Err(err!(
                    TypeError,
                    "replace() argument {} must be str, not {}",
                    if old.is_str() { 2 } else { 1 },
                    bad.type_name()
                ));
            };
            let count = int_arg(&count, -1)?;
            let len = pystr::replaced_len(s, o, n, count);
            crate::limits::check_value_size(len)?;
            text(pystr::replace_sized(s, o, n, count, len).map_err(py_err)?)
        }
        "find" | "rfind" | "index" | "rindex" | "count" => {
            let [sub_arg, start, end] = args.bind(name, ["sub", "start", "end"])?;
            let n = needle(&sub_arg, name)?;
            let (start, end) = (slice_bound(&start)?, slice_bound(&end)?);
            Value::Int(match name {
                "find" => pystr::find(s, n, start, end),
                "rfind" => pystr::rfind(s, n, start, end),
                "index" => pystr::index(s, n, start, end).map_err(py_err)?,
                "rindex" => pystr::rindex(s, n, start, end).map_err(py_err)?,
                _ => pystr::count(s, n, start, end),
            })
        }
        "partition" | "rpartition" => {
            let [sep] = args.bind(name, ["sep"])?;
            let sep = needle(&sep, name)?;
            let (a, b, c) = if name == "partition" {
                pystr::partition(s, sep)
            } else {
                pystr::rpartition(s, sep)
            }
            .map_err(py_err)?;
            let piece = |p: &str| if p.is_empty() { Value::Str("") } else { sub(recv, s, p) };
            let mid = if b.is_empty() { Value::Str("") } else { Value::string(b) };
            Value::Tuple(std::rc::Rc::new(vec![piece(a), mid, piece(c)]))
        }
        "removeprefix" | "removesuffix" => {
            let [affix] = args.bind(name, ["affix"])?;
            let a = needle(&affix, name)?;
            let r = if name == "removeprefix" {
                pystr::removeprefix(s, a)
            } else {
                pystr::removesuffix(s, a)
            };
            sub(recv, s, r)
        }
        "zfill" => {
            let [width] = args.bind(name, ["width"])?;
            text(pystr::zfill(s, int_arg(&width, 0)?).map_err(py_err)?)
        }
        "center" | "ljust" | "rjust" => {
            let [width, fill] = args.bind(name, ["width", "fillchar"])?;
            if width.is_none() {
                return Err(err!(TypeError, "{name} expected at least 1 argument, got 0"));
            }
            let w = int_arg(&width, 0)?;
            let fill_s = match &fill {
                None => None,
                Some(f) if f.is_str() => f.as_str(),
                Some(f) => {
                    return Err(err!(
                        TypeError,
                        "{name}() argument 2 must be str, not {}",
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
            let [tabsize] = args.bind(name, ["tabsize"])?;
            text(pystr::expandtabs(s, int_arg(&tabsize, 8)?).map_err(py_err)?)
        }
        "upper" | "lower" | "casefold" | "capitalize" | "title" | "swapcase" => {
            args.none(&format!("str.{name}"))?;
            text(match name {
                "upper" => pystr::upper(s),
                "lower" => pystr::lower(s),
                "casefold" => pystr::casefold(s),
                "capitalize" => pystr::capitalize(s),
                "title" => pystr::title(s),
                _ => pystr::swapcase(s),
            })
        }
        "isalnum" | "isalpha" | "isascii" | "isdecimal" | "isdigit" | "isidentifier" | "islower" | "isnumeric"
        | "isprintable" | "isspace" | "istitle" | "isupper" => {
            args.none(&format!("str.{name}"))?;
            Value::Bool(match name {
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
            })
        }
        "join" => {
            let [items] = args.bind(name, ["iterable"])?;
            let items = items.unwrap_or(Value::Undefined(None)).iterate()?;
            let mut out = String::new();
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(s);
                }
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
            }
            text(out)
        }
        "format" => text(super::format::str_format(s, args)?),
        "format_map" => {
            let [mapping] = args.bind(name, ["mapping"])?;
            let mut kw = Vec::new();
            if let Some(m) = &mapping {
                m.for_each_pair(|k, v| {
                    if let Value::Str(k) = k {
                        kw.push((k, v))
                    }
                });
            }
            text(super::format::str_format(s, CallArgs { pos: Vec::new(), kw })?)
        }
        _ => return Err(err!(TypeError, "str.{name}() is not supported by chatfmt")),
    })
}

/// Calls the method `name` of `recv`.
pub fn call_method<'a>(recv: &Value<'a>, name: &str, args: CallArgs<'a>) -> Result<Value<'a>> {
    if recv.is_str() {
        return str_method(recv, name, args);
    }
    if recv.is_mapping() {
        return Ok(match name {
            "items" => {
                args.none("dict.items")?;
                let mut out = Vec::new();
                recv.for_each_pair(|k, v| out.push(Value::Tuple(Rc::new(vec![k, v]))));
                Value::view("dict_items", recv, out)
            }
            "keys" => {
                args.none("dict.keys")?;
                let mut out = Vec::new();
                recv.for_each_pair(|k, _| out.push(k));
                Value::view("dict_keys", recv, out)
            }
            "values" => {
                args.none("dict.values")?;
                let mut out = Vec::new();
                recv.for_each_pair(|_, v| out.push(v));
                Value::view("dict_values", recv, out)
            }
            "get" => {
                let [key, default] = args.bind("get", ["key", "default"])?;
                let key = key.ok_or_else(|| err!(TypeError, "get expected at least 1 argument, got 0"))?;
                recv.get_item_opt(&key).unwrap_or(default.unwrap_or(Value::None))
            }
            "fromkeys" => super::globals::dict_fromkeys(args)?,
            "copy" => {
                let mut pairs = Vec::new();
                recv.for_each_pair(|k, v| pairs.push((k, v)));
                crate::value::ops::dict_from(pairs)
            }
            _ => return Err(err!(AttributeError, "'dict' object has no attribute '{name}'")),
        });
    }
    if recv.is_sequence_like() {
        let items = recv.iterate()?;
        return Ok(match name {
            "count" => {
                let [x] = args.bind(name, ["value"])?;
                let x = x.unwrap_or(Value::Undefined(None));
                Value::Int(items.iter().filter(|i| i.py_eq(&x)).count() as i64)
            }
            "index" => {
                let [x] = args.bind(name, ["value"])?;
                let x = x.unwrap_or(Value::Undefined(None));
                match items.iter().position(|i| i.py_eq(&x)) {
                    Some(i) => Value::Int(i as i64),
                    None => {
                        let mut r = String::new();
                        x.write_repr(&mut r);
                        return Err(err!(ValueError, "{r} is not in list"));
                    }
                }
            }
            "copy" => Value::list(items.to_vec()),
            _ => return Err(err!(AttributeError, "'list' object has no attribute '{name}'")),
        });
    }
    match recv {
        Value::Int(_) | Value::Bool(_) => {
            args.none(&format!("int.{name}"))?;
            let i = match recv {
                Value::Int(i) => *i,
                Value::Bool(b) => *b as i64,
                _ => 0,
            };
            return Ok(match name {
                "bit_length" => Value::Int(64 - i.unsigned_abs().leading_zeros() as i64),
                _ => Value::Int(i),
            });
        }
        Value::Float(f) => {
            args.none(&format!("float.{name}"))?;
            return Ok(match name {
                "is_integer" => Value::Bool(f.is_finite() && f.fract() == 0.0),
                "hex" => Value::string(float_hex(*f)),
                _ => Value::Float(*f),
            });
        }
        _ => {}
    }
    if let Value::Object(o) = recv {
        match &**o {
            Object::Function("dict") => return super::globals::dict_fromkeys(args),
            Object::View(_, _, items) => {
                let [other] = args.bind("isdisjoint", ["other"])?;
                let other = other.unwrap_or(Value::Undefined(None)).iterate()?;
                return Ok(Value::Bool(!items.iter().any(|i| other.iter().any(|o| o.py_eq(i)))));
            }
            Object::Range(..) => {
                let [x] = args.bind(name, ["value"])?;
                let x = x.unwrap_or(Value::Undefined(None));
                let items = recv.iterate()?;
                return match name {
                    "count" => Ok(Value::Int(items.iter().filter(|i| i.py_eq(&x)).count() as i64)),
                    _ => match items.iter().position(|i| i.py_eq(&x)) {
                        Some(i) => Ok(Value::Int(i as i64)),
                        None => {
                            let mut r = String::new();
                            x.write_repr(&mut r);
                            Err(err!(ValueError, "{r} is not in range"))
                        }
                    },
                };
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
    Err(err!(
        AttributeError,
        "'{}' object has no attribute '{name}'",
        recv.type_name()
    ))
}

/// Python's `float.hex()`.
fn float_hex(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let bits = f.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mantissa = bits & ((1 << 52) - 1);
    match (exp, mantissa) {
        (0, 0) => format!("{sign}0x0.0p+0"),
        (0, m) => format!("{sign}0x0.{m:013x}p-1022"),
        (e, m) => {
            let e = e - 1023;
            format!("{sign}0x1.{m:013x}p{}{}", if e < 0 { "-" } else { "+" }, e.abs())
        }
    }
}
