//! The Python methods of str, dict, list and tuple that templates call, and the methods of
//! Jinja2's helper objects (loop, cycler).

use crate::error::{err, Result};
use crate::eval::{CallArgs, Evaluator};
use crate::syntax::lexer::is_py_space;
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
        Value::Float(_) => matches!(name, "is_integer" | "conjugate"),
        Value::Object(o) => match &**o {
            Object::Loop(_) => matches!(name, "cycle" | "changed"),
            Object::Cycler(..) => matches!(name, "next" | "reset"),
            _ => false,
        },
        _ => false,
    }
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

/// Python's `str.split(sep, maxsplit)`.
pub fn py_split<'s>(s: &'s str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<&'s str>> {
    let mut out = Vec::new();
    match sep {
        Some("") => return Err(err!(ValueError, "empty separator")),
        Some(sep) => {
            let mut rest = s;
            while maxsplit < 0 || (out.len() as i64) < maxsplit {
                match rest.find(sep) {
                    Some(i) => {
                        out.push(&rest[..i]);
                        rest = &rest[i + sep.len()..];
                    }
                    None => break,
                }
            }
            out.push(rest);
        }
        None => {
            let mut rest = s.trim_start_matches(is_py_space);
            while !rest.is_empty() {
                if maxsplit >= 0 && out.len() as i64 >= maxsplit {
                    out.push(rest.trim_end_matches(is_py_space));
                    break;
                }
                let end = rest.find(is_py_space).unwrap_or(rest.len());
                out.push(&rest[..end]);
                rest = rest[end..].trim_start_matches(is_py_space);
            }
        }
    }
    Ok(out)
}

/// Python's `str.rsplit(sep, maxsplit)`.
pub fn py_rsplit<'s>(s: &'s str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<&'s str>> {
    if maxsplit < 0 {
        return py_split(s, sep, maxsplit);
    }
    let mut out = Vec::new();
    match sep {
        Some("") => return Err(err!(ValueError, "empty separator")),
        Some(sep) => {
            let mut rest = s;
            while (out.len() as i64) < maxsplit {
                match rest.rfind(sep) {
                    Some(i) => {
                        out.push(&rest[i + sep.len()..]);
                        rest = &rest[..i];
                    }
                    None => break,
                }
            }
            out.push(rest);
        }
        None => {
            let mut rest = s.trim_end_matches(is_py_space);
            while !rest.is_empty() {
                if out.len() as i64 >= maxsplit {
                    out.push(rest.trim_start_matches(is_py_space));
                    break;
                }
                let start = rest
                    .rfind(is_py_space)
                    .map_or(0, |i| i + rest[i..].chars().next().map_or(1, |c| c.len_utf8()));
                out.push(&rest[start..]);
                rest = rest[..start].trim_end_matches(is_py_space);
            }
        }
    }
    out.reverse();
    Ok(out)
}

fn strip_with<'s>(s: &'s str, chars: Option<&str>, left: bool, right: bool) -> &'s str {
    let pred = |c: char| match chars {
        Some(set) => set.contains(c),
        None => is_py_space(c),
    };
    let mut r = s;
    if left {
        r = r.trim_start_matches(pred);
    }
    if right {
        r = r.trim_end_matches(pred);
    }
    r
}

fn sub<'a>(recv: &Value<'a>, whole: &str, part: &str) -> Value<'a> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    recv.substr(start, start + part.len())
}

/// Python `str.title()`.
pub fn py_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for c in s.chars() {
        if prev_cased {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        prev_cased =
            c.is_alphabetic() && (c.is_lowercase() || c.is_uppercase() || c.to_lowercase().ne(c.to_uppercase()));
    }
    out
}

/// Python `str.capitalize()`.
pub fn py_capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => {
            let mut out: String = first.to_uppercase().collect();
            out.extend(chars.flat_map(|c| c.to_lowercase()));
            out
        }
        None => String::new(),
    }
}

fn affix_test(recv: &str, arg: &Value, start: bool) -> Result<bool> {
    let check = |p: &str| {
        if start {
            recv.starts_with(p)
        } else {
            recv.ends_with(p)
        }
    };
    if let Some(p) = arg.as_str() {
        return Ok(check(p));
    }
    if let Value::Tuple(items) = arg {
        for i in items.iter() {
            match i.as_str() {
                Some(p) if check(p) => return Ok(true),
                Some(_) => {}
                None => {
                    return Err(err!(
                        TypeError,
                        "tuple for {}swith must only contain str, not {}",
                        if start { "start" } else { "end" },
                        i.type_name()
                    ))
                }
            }
        }
        return Ok(false);
    }
    Err(err!(
        TypeError,
        "{}swith first arg must be str or a tuple of str, not {}",
        if start { "start" } else { "end" },
        arg.type_name()
    ))
}

fn str_method<'a>(recv: &Value<'a>, name: &str, args: CallArgs<'a>) -> Result<Value<'a>> {
    let s = recv.as_str().unwrap_or("");
    Ok(match name {
        "strip" | "lstrip" | "rstrip" => {
            let [chars] = args.bind(name, ["chars"])?;
            let chars = str_arg(&chars, name)?;
            let cs = chars.as_ref().and_then(|c| c.as_str());
            let r = strip_with(s, cs, name != "rstrip", name != "lstrip");
            sub(recv, s, r)
        }
        "split" | "rsplit" => {
            let [sep, maxsplit] = args.bind(name, ["sep", "maxsplit"])?;
            let sep = str_arg(&sep, name)?;
            let max = int_arg(&maxsplit, -1)?;
            let sep_s = sep.as_ref().and_then(|v| v.as_str());
            let parts = if name == "split" {
                py_split(s, sep_s, max)?
            } else {
                py_rsplit(s, sep_s, max)?
            };
            Value::list(parts.into_iter().map(|p| sub(recv, s, p)).collect())
        }
        "startswith" | "endswith" => {
            let [prefix] = args.bind(name, ["prefix"])?;
            let Some(p) = prefix else {
                return Err(err!(TypeError, "{name}() takes at least 1 argument (0 given)"));
            };
            Value::Bool(affix_test(s, &p, name == "startswith")?)
        }
        "upper" => Value::string(s.to_uppercase()),
        "lower" => Value::string(s.to_lowercase()),
        "title" => Value::string(py_title(s)),
        "capitalize" => Value::string(py_capitalize(s)),
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
                return Err(err!(
                    TypeError,
                    "replace() argument 1 must be str, not {}",
                    old.type_name()
                ));
            };
            let count = int_arg(&count, -1)?;
            Value::string(if count < 0 {
                s.replace(o, n)
            } else {
                s.replacen(o, n, count as usize)
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
            Value::string(out)
        }
        "find" | "rfind" | "index" | "rindex" | "count" => {
            let [needle] = args.bind(name, ["sub"])?;
            let needle = needle.unwrap_or(Value::Undefined(None));
            let Some(n) = needle.as_str() else {
                return Err(err!(TypeError, "must be str, not {}", needle.type_name()));
            };
            let to_chars = |b: usize| s[..b].chars().count() as i64;
            match name {
                "count" => Value::Int(if n.is_empty() {
                    s.chars().count() as i64 + 1
                } else {
                    s.matches(n).count() as i64
                }),
                "find" => Value::Int(s.find(n).map_or(-1, to_chars)),
                "rfind" => Value::Int(s.rfind(n).map_or(-1, to_chars)),
                "index" => Value::Int(to_chars(
                    s.find(n).ok_or_else(|| err!(ValueError, "substring not found"))?,
                )),
                _ => Value::Int(to_chars(
                    s.rfind(n).ok_or_else(|| err!(ValueError, "substring not found"))?,
                )),
            }
        }
        "splitlines" => {
            let [keepends] = args.bind(name, ["keepends"])?;
            let keep = keepends.is_some_and(|k| k.truthy());
            let mut out = Vec::new();
            let mut start = 0;
            let mut it = s.char_indices().peekable();
            while let Some((i, c)) = it.next() {
                if matches!(
                    c,
                    '\n' | '\r' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}' | '\u{2029}'
                ) {
                    let mut end = i + c.len_utf8();
                    if c == '\r' {
                        if let Some((_, '\n')) = it.peek() {
                            it.next();
                            end += 1;
                        }
                    }
                    out.push(sub(recv, s, &s[start..if keep { end } else { i }]));
                    start = end;
                }
            }
            if start < s.len() {
                out.push(sub(recv, s, &s[start..]));
            }
            Value::list(out)
        }
        "isdigit" | "isdecimal" | "isnumeric" => Value::Bool(!s.is_empty() && s.chars().all(|c| c.is_numeric())),
        "isalpha" => Value::Bool(!s.is_empty() && s.chars().all(char::is_alphabetic)),
        "isalnum" => Value::Bool(!s.is_empty() && s.chars().all(char::is_alphanumeric)),
        "isspace" => Value::Bool(!s.is_empty() && s.chars().all(is_py_space)),
        "isupper" => Value::Bool(s.chars().any(char::is_uppercase) && !s.chars().any(char::is_lowercase)),
        "islower" => Value::Bool(s.chars().any(char::is_lowercase) && !s.chars().any(char::is_uppercase)),
        "isascii" => Value::Bool(s.is_ascii()),
        "swapcase" => Value::string(
            s.chars()
                .flat_map(|c| -> Vec<char> {
                    if c.is_uppercase() {
                        c.to_lowercase().collect()
                    } else {
                        c.to_uppercase().collect()
                    }
                })
                .collect::<String>(),
        ),
        "removeprefix" | "removesuffix" => {
            let [affix] = args.bind(name, ["affix"])?;
            let affix = affix.unwrap_or(Value::Undefined(None));
            let a = affix.as_str().unwrap_or("");
            let r = if name == "removeprefix" {
                s.strip_prefix(a)
            } else {
                s.strip_suffix(a)
            };
            sub(recv, s, r.unwrap_or(s))
        }
        "format" => Value::string(super::format::str_format(s, args)?),
        _ => return Err(err!(AttributeError, "'str' object has no attribute '{name}'")),
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
                Value::list(out)
            }
            "keys" => {
                args.none("dict.keys")?;
                let mut out = Vec::new();
                recv.for_each_pair(|k, _| out.push(k));
                Value::list(out)
            }
            "values" => {
                args.none("dict.values")?;
                let mut out = Vec::new();
                recv.for_each_pair(|_, v| out.push(v));
                Value::list(out)
            }
            "get" => {
                let [key, default] = args.bind("get", ["key", "default"])?;
                let key = key.ok_or_else(|| err!(TypeError, "get expected at least 1 argument, got 0"))?;
                recv.get_item_opt(&key).unwrap_or(default.unwrap_or(Value::None))
            }
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
    if let Value::Object(o) = recv {
        match &**o {
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
