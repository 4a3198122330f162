//! Jinja2's built-in filters.

use super::json::{dumps, DumpOptions};
use crate::error::{err, Result};
use crate::eval::{CallArgs, Evaluator};
use crate::pystr;
use crate::syntax::lexer::is_py_space;
use crate::value::{Object, UndefInfo, Value};
use std::cmp::Ordering;
use std::rc::Rc;

/// The names of the environment's filters.
pub const FILTERS: &[&str] = &[
    "abs",
    "attr",
    "batch",
    "capitalize",
    "center",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "filesizeformat",
    "first",
    "float",
    "forceescape",
    "format",
    "groupby",
    "indent",
    "int",
    "items",
    "join",
    "last",
    "length",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "pprint",
    "random",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "safe",
    "select",
    "selectattr",
    "slice",
    "sort",
    "string",
    "striptags",
    "sum",
    "title",
    "tojson",
    "trim",
    "truncate",
    "unique",
    "upper",
    "urlencode",
    "urlize",
    "wordcount",
    "wordwrap",
    "xmlattr",
];

/// Appends `s` with HTML special characters escaped as markupsafe does.
pub fn escape_into(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

fn undefined_hint<'a>(msg: &str) -> Value<'a> {
    Value::Undefined(Some(Rc::new(UndefInfo::Hint(
        msg.to_string(),
        crate::error::ErrorKind::UndefinedError,
    ))))
}

/// `soft_str`: strings stay as they are (borrowed), everything else goes through `str()`.
fn soft_str<'a>(v: &Value<'a>) -> Value<'a> {
    if v.is_str() {
        v.clone()
    } else {
        Value::string(v.to_py_str())
    }
}

fn no_len_iter(v: &Value) -> Result<()> {
    if let Value::Iter(_) = v {
        return Err(err!(TypeError, "object of type 'generator' has no len()"));
    }
    Ok(())
}

/// Looks up a dotted attribute path (`a.b.0`) the way Jinja2's `make_attrgetter` does.
fn attr_path<'a>(item: &Value<'a>, path: &Value<'a>) -> Result<Value<'a>> {
    let Some(p) = path.as_str() else {
        return super::getitem(item, path);
    };
    let mut cur = item.clone();
    let parts: Vec<&str> = p.split('.').collect();
    for part in parts {
        let key = match part.parse::<i64>() {
            Ok(i) if part.bytes().all(|b| b.is_ascii_digit()) => Value::Int(i),
            _ => match path {
                Value::Str(s) => {
                    let start = part.as_ptr() as usize - s.as_ptr() as usize;
                    Value::Str(&s[start..start + part.len()])
                }
                _ => Value::string(part),
            },
        };
        cur = super::getitem(&cur, &key)?;
    }
    Ok(cur)
}

fn sort_key<'a>(v: &Value<'a>, case_sensitive: bool) -> Value<'a> {
    match v.as_str() {
        Some(s) if !case_sensitive => Value::string(s.to_lowercase()),
        _ => v.clone(),
    }
}

fn sort_values<'a>(items: &mut [(Value<'a>, Value<'a>)], reverse: bool) -> Result<()> {
    let mut failure = None;
    items.sort_by(|a, b| {
        let o = a.0.py_cmp(&b.0, "<").unwrap_or_else(|e| {
            failure.get_or_insert(e);
            Ordering::Equal
        });
        if reverse {
            o.reverse()
        } else {
            o
        }
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn bool_arg(v: &Option<Value>) -> bool {
    v.as_ref().is_some_and(|v| v.truthy())
}

fn select_like<'a>(ev: &mut Evaluator<'a>, name: &str, v: Value<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
    let by_attr = name.ends_with("attr");
    let keep_when = name.starts_with("select");
    let mut pos = args.pos.into_iter();
    let attr = if by_attr {
        Some(
            pos.next()
                .ok_or_else(|| err!(TypeError, "{name}() missing required argument 'attr'"))?,
        )
    } else {
        None
    };
    let test = pos.next();
    let test_args: Vec<Value<'a>> = pos.collect();
    let test_name = match &test {
        None => None,
        Some(t) => Some(
            t.as_str()
                .map(str::to_string)
                .ok_or_else(|| err!(TypeError, "test name must be a string"))?,
        ),
    };
    if v.is_undefined() {
        return Ok(Value::Iter(Rc::new(Vec::new())));
    }
    let mut out = Vec::new();
    for item in v.iterate()?.iter() {
        let subject = match &attr {
            Some(a) => attr_path(item, a)?,
            None => item.clone(),
        };
        let ok = match &test_name {
            None => subject.truthy(),
            Some(t) => {
                if !super::is_test(t) {
                    return Err(err!(TemplateRuntimeError, "No test named '{t}'."));
                }
                let a = CallArgs {
                    pos: test_args.clone(),
                    kw: args.kw.clone(),
                };
                super::tests::call_test(ev, t, &subject, a)?
            }
        };
        if ok == keep_when {
            out.push(item.clone());
        }
    }
    Ok(Value::Iter(Rc::new(out)))
}

/// Python `round(x, ndigits)` with round-half-even on the exact binary value.
fn py_round(x: f64, ndigits: i64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if ndigits > 22 {
        return x;
    }
    let s = format!("{:.*}", ndigits.max(0) as usize, x);
    if ndigits >= 0 {
        return s.parse().unwrap_or(x);
    }
    let p = 10f64.powi((-ndigits) as i32);
    let y = x / p;
    let r = y.round();
    let r = if (y - y.trunc()).abs() == 0.5 {
        2.0 * (y / 2.0).round()
    } else {
        r
    };
    r * p
}

/// Applies filter `name` to `v`.
pub fn call_filter<'a>(ev: &mut Evaluator<'a>, name: &str, v: Value<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
    Ok(match name {
        "default" | "d" => {
            let [default, boolean] = args.bind(name, ["default_value", "boolean"])?;
            if v.is_undefined() || (bool_arg(&boolean) && !v.truthy()) {
                default.unwrap_or(Value::Str(""))
            } else {
                v
            }
        }
        "length" | "count" => {
            no_len_iter(&v)?;
            Value::Int(v.py_len()? as i64)
        }
        "string" => soft_str(&v),
        "trim" => {
            let [chars] = args.bind(name, ["chars"])?;
            let s = soft_str(&v);
            let text = s.as_str().unwrap_or("");
            let r = match chars.as_ref().and_then(|c| c.as_str()) {
                Some(set) => text.trim_matches(|c| set.contains(c)),
                None => text.trim_matches(is_py_space),
            };
            let start = r.as_ptr() as usize - text.as_ptr() as usize;
            s.substr(start, start + r.len())
        }
        "upper" => Value::string(pystr::upper(soft_str(&v).as_str().unwrap_or(""))),
        "lower" => Value::string(pystr::lower(soft_str(&v).as_str().unwrap_or(""))),
        "capitalize" => Value::string(pystr::capitalize(soft_str(&v).as_str().unwrap_or(""))),
        "title" => {
            let s = soft_str(&v);
            let text = s.as_str().unwrap_or("");
            let mut out = String::new();
            let mut at_word_start = true;
            for c in text.chars() {
                let sep = c == '-' || is_py_space(c) || "({[<".contains(c);
                if sep {
                    out.push(c);
                    at_word_start = true;
                } else if at_word_start {
                    out.extend(c.to_uppercase());
                    at_word_start = false;
                } else {
                    out.extend(c.to_lowercase());
                }
            }
            Value::string(out)
        }
        "safe" => Value::Safe(v.to_py_str().into()),
        "escape" | "e" | "forceescape" => {
            if let (Value::Safe(_), false) = (&v, name == "forceescape") {
                return Ok(v);
            }
            let mut out = String::new();
            escape_into(&v.to_py_str(), &mut out);
            Value::Safe(out.into())
        }
        "items" => {
            if v.is_undefined() {
                return Ok(Value::Iter(Rc::new(Vec::new())));
            }
            if !v.is_mapping() {
                return Err(err!(TypeError, "Can only get item pairs from a mapping."));
            }
            let mut out = Vec::new();
            v.for_each_pair(|k, x| out.push(Value::Tuple(Rc::new(vec![k, x]))));
            Value::Iter(Rc::new(out))
        }
        "list" => Value::list(v.iterate()?.to_vec()),
        "join" => {
            let [sep, attribute] = args.bind(name, ["d", "attribute"])?;
            let sep = sep.map(|s| s.to_py_str()).unwrap_or_default();
            let mut out = String::new();
            for (i, item) in v.iterate()?.iter().enumerate() {
                if i > 0 {
                    out.push_str(&sep);
                }
                let item = match &attribute {
                    Some(a) => attr_path(item, a)?,
                    None => item.clone(),
                };
                item.write_str(&mut out);
            }
            Value::string(out)
        }
        "first" => match v.iterate()?.first() {
            Some(x) => x.clone(),
            None => undefined_hint("No first item, sequence was empty."),
        },
        "last" => {
            if let Value::Iter(_) = v {
                return Err(err!(TypeError, "'generator' object is not reversible"));
            }
            match v.iterate()?.last() {
                Some(x) => x.clone(),
                None => undefined_hint("No last item, sequence was empty."),
            }
        }
        "reverse" => {
            if let Some(s) = v.as_str() {
                return Ok(Value::string(s.chars().rev().collect::<String>()));
            }
            if let Value::Iter(_) = v {
                let mut items = v.iterate()?.to_vec();
                items.reverse();
                return Ok(Value::list(items));
            }
            let mut items = v.iterate()?.to_vec();
            items.reverse();
            Value::Iter(Rc::new(items))
        }
        "select" | "reject" | "selectattr" | "rejectattr" => select_like(ev, name, v, args)?,
        "map" => {
            let mut pos = args.pos.clone();
            let attribute = args.kw.iter().find(|(k, _)| *k == "attribute").map(|(_, v)| v.clone());
            let default = args.kw.iter().find(|(k, _)| *k == "default").map(|(_, v)| v.clone());
            if v.is_undefined() {
                return Ok(Value::Iter(Rc::new(Vec::new())));
            }
            let items = v.iterate()?;
            let mut out = Vec::with_capacity(items.len());
            if let Some(a) = attribute {
                for item in items.iter() {
                    let x = attr_path(item, &a)?;
                    out.push(match (&default, x.is_undefined()) {
                        (Some(d), true) => d.clone(),
                        _ => x,
                    });
                }
            } else {
                if pos.is_empty() {
                    return Err(err!(FilterArgumentError, "map requires a filter argument"));
                }
                let f = pos.remove(0);
                let fname = f.to_py_str();
                let kw: Vec<_> = args
                    .kw
                    .iter()
                    .filter(|(k, _)| *k != "attribute" && *k != "default")
                    .cloned()
                    .collect();
                for item in items.iter() {
                    let a = CallArgs {
                        pos: pos.clone(),
                        kw: kw.clone(),
                    };
                    if !super::is_filter(&fname) {
                        return Err(err!(TemplateRuntimeError, "No filter named '{fname}'."));
                    }
                    out.push(call_filter(ev, &fname, item.clone(), a)?);
                }
            }
            Value::Iter(Rc::new(out))
        }
        "dictsort" => {
            let [case_sensitive, by, reverse] = args.bind(name, ["case_sensitive", "by", "reverse"])?;
            if !v.is_mapping() {
                return Err(err!(
                    FilterArgumentError,
                    "You can only sort by either \"key\" or \"value\""
                ));
            }
            let by_value = match by.as_ref().and_then(|b| b.as_str()) {
                None | Some("key") => false,
                Some("value") => true,
                Some(_) => {
                    return Err(err!(
                        FilterArgumentError,
                        "You can only sort by either \"key\" or \"value\""
                    ))
                }
            };
            let cs = bool_arg(&case_sensitive);
            let mut pairs = Vec::new();
            v.for_each_pair(|k, x| {
                let key = sort_key(if by_value { &x } else { &k }, cs);
                pairs.push((key, Value::Tuple(Rc::new(vec![k, x]))));
            });
            sort_values(&mut pairs, bool_arg(&reverse))?;
            Value::list(pairs.into_iter().map(|(_, p)| p).collect())
        }
        "sort" => {
            let [reverse, case_sensitive, attribute] = args.bind(name, ["reverse", "case_sensitive", "attribute"])?;
            let cs = bool_arg(&case_sensitive);
            let mut pairs = Vec::new();
            for item in v.iterate()?.iter() {
                let key = match &attribute {
                    Some(a) => attr_path(item, a)?,
                    None => item.clone(),
                };
                pairs.push((sort_key(&key, cs), item.clone()));
            }
            sort_values(&mut pairs, bool_arg(&reverse))?;
            Value::list(pairs.into_iter().map(|(_, p)| p).collect())
        }
        "unique" => {
            let [case_sensitive, attribute] = args.bind(name, ["case_sensitive", "attribute"])?;
            let cs = bool_arg(&case_sensitive);
            let mut seen: Vec<Value> = Vec::new();
            let mut out = Vec::new();
            for item in v.iterate()?.iter() {
                let key = match &attribute {
                    Some(a) => attr_path(item, a)?,
                    None => item.clone(),
                };
                let key = sort_key(&key, cs);
                if !seen.iter().any(|s| s.py_eq(&key)) {
                    seen.push(key);
                    out.push(item.clone());
                }
            }
            Value::Iter(Rc::new(out))
        }
        "min" | "max" => {
            let [case_sensitive, attribute] = args.bind(name, ["case_sensitive", "attribute"])?;
            let cs = bool_arg(&case_sensitive);
            let mut best: Option<(Value, Value)> = None;
            for item in v.iterate()?.iter() {
                let key = match &attribute {
                    Some(a) => attr_path(item, a)?,
                    None => item.clone(),
                };
                let key = sort_key(&key, cs);
                let better = match &best {
                    None => true,
                    Some((b, _)) => {
                        let o = key.py_cmp(b, "<")?;
                        if name == "min" {
                            o == Ordering::Less
                        } else {
                            o == Ordering::Greater
                        }
                    }
                };
                if better {
                    best = Some((key, item.clone()));
                }
            }
            match best {
                Some((_, item)) => item,
                None => undefined_hint(if name == "min" {
                    "No smallest item, sequence was empty."
                } else {
                    "No largest item, sequence was empty."
                }),
            }
        }
        "sum" => {
            let [attribute, start] = args.bind(name, ["attribute", "start"])?;
            let mut total = start.unwrap_or(Value::Int(0));
            for item in v.iterate()?.iter() {
                let x = match &attribute {
                    Some(a) => attr_path(item, a)?,
                    None => item.clone(),
                };
                total = total.binary(crate::syntax::ast::BinOp::Add, &x)?;
            }
            total
        }
        "abs" => match v {
            Value::Int(i) => Value::Int(i.checked_abs().ok_or_else(|| err!(OverflowError, "integer overflow"))?),
            Value::Bool(b) => Value::Int(b as i64),
            Value::Float(f) => Value::Float(f.abs()),
            _ => return Err(err!(TypeError, "bad operand type for abs(): '{}'", v.type_name())),
        },
        "round" => {
            let [precision, method] = args.bind(name, ["precision", "method"])?;
            let precision = match precision {
                None => 0,
                Some(Value::Int(p)) => p,
                Some(p) => {
                    return Err(err!(
                        TypeError,
                        "'{}' object cannot be interpreted as an integer",
                        p.type_name()
                    ))
                }
            };
            let method = method.map(|m| m.to_py_str()).unwrap_or_else(|| "common".to_string());
            let x = match v {
                Value::Int(i) if method == "common" => return Ok(Value::Int(i)),
                Value::Int(i) => i as f64,
                Value::Bool(b) => b as i64 as f64,
                Value::Float(f) => f,
                _ => {
                    return Err(err!(
                        TypeError,
                        "type {} doesn't define __round__ method",
                        v.type_name()
                    ))
                }
            };
            let p = 10f64.powi(precision as i32);
            match method.as_str() {
                "common" => Value::Float(py_round(x, precision)),
                "ceil" => Value::Float((x * p).ceil() / p),
                "floor" => Value::Float((x * p).floor() / p),
                _ => return Err(err!(FilterArgumentError, "method must be common, ceil or floor")),
            }
        }
        "int" => {
            let [default, base] = args.bind(name, ["default", "base"])?;
            let default = default.unwrap_or(Value::Int(0));
            let base = match base {
                Some(Value::Int(b)) => b,
                _ => 10,
            };
            match &v {
                Value::Int(_) => v,
                Value::Bool(b) => Value::Int(*b as i64),
                Value::Float(f) if f.is_finite() => Value::Int(f.trunc() as i64),
                _ if v.is_str() => {
                    let s = v.as_str().unwrap_or("");
                    match py_int_parse(s, base) {
                        Some(i) => Value::Int(i),
                        None => match py_float_parse(s) {
                            Some(f) if f.is_finite() => Value::Int(f.trunc() as i64),
                            _ => default,
                        },
                    }
                }
                _ => default,
            }
        }
        "float" => {
            let [default] = args.bind(name, ["default"])?;
            let default = default.unwrap_or(Value::Float(0.0));
            match &v {
                Value::Int(i) => Value::Float(*i as f64),
                Value::Bool(b) => Value::Float(*b as i64 as f64),
                Value::Float(_) => v,
                _ if v.is_str() => py_float_parse(v.as_str().unwrap_or(""))
                    .map(Value::Float)
                    .unwrap_or(default),
                _ => default,
            }
        }
        "replace" => {
            let [old, new, count] = args.bind(name, ["old", "new", "count"])?;
            let s = soft_str(&v);
            let text = s.as_str().unwrap_or("");
            let old = old.map(|o| o.to_py_str()).unwrap_or_default();
            let new = new.map(|o| o.to_py_str()).unwrap_or_default();
            Value::string(match count {
                Some(Value::Int(c)) if c >= 0 => text.replacen(&old, &new, c as usize),
                _ => text.replace(&old, &new),
            })
        }
        "indent" => {
            let [width, first, blank] = args.bind(name, ["width", "first", "blank"])?;
            let indention = match width {
                None => "    ".to_string(),
                Some(w) if w.is_str() => w.to_py_str(),
                Some(Value::Int(n)) => " ".repeat(n.max(0) as usize),
                Some(w) => {
                    return Err(err!(
                        TypeError,
                        "can't multiply sequence by non-int of type '{}'",
                        w.type_name()
                    ))
                }
            };
            let mut s = v.to_py_str();
            s.push('\n');
            let lines: Vec<&str> = split_lines(&s);
            let mut rv = String::new();
            if bool_arg(&blank) {
                rv = lines.join(&format!("\n{indention}"));
            } else if let Some((first_line, rest)) = lines.split_first() {
                rv.push_str(first_line);
                if !rest.is_empty() {
                    rv.push('\n');
                    let joined: Vec<String> = rest
                        .iter()
                        .map(|l| {
                            if l.is_empty() {
                                String::new()
                            } else {
                                format!("{indention}{l}")
                            }
                        })
                        .collect();
                    rv.push_str(&joined.join("\n"));
                }
            }
            if bool_arg(&first) {
                rv = format!("{indention}{rv}");
            }
            Value::string(rv)
        }
        "center" => {
            let [width] = args.bind(name, ["width"])?;
            let w = match width {
                Some(Value::Int(w)) => w.max(0) as usize,
                _ => 80,
            };
            let s = v.to_py_str();
            let n = s.chars().count();
            if n >= w {
                Value::string(s)
            } else {
                let pad = w - n;
                let left = pad / 2 + (pad & w & 1);
                Value::string(format!("{}{}{}", " ".repeat(left), s, " ".repeat(pad - left)))
            }
        }
        "wordcount" => {
            let s = v.to_py_str();
            let n = s
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .count();
            Value::Int(n as i64)
        }
        "tojson" => {
            let [ensure_ascii, indent, separators, sort_keys] =
                args.bind("tojson", ["ensure_ascii", "indent", "separators", "sort_keys"])?;
            let indent = match indent {
                None | Some(Value::None) => None,
                Some(Value::Int(n)) => Some(" ".repeat(n.max(0) as usize)),
                Some(Value::Bool(b)) => Some(" ".repeat(b as usize)),
                Some(s) if s.is_str() => Some(s.to_py_str()),
                Some(other) => {
                    return Err(err!(
                        TypeError,
                        "can't multiply sequence by non-int of type '{}'",
                        other.type_name()
                    ))
                }
            };
            let (item_sep, key_sep) = match separators {
                None | Some(Value::None) => (if indent.is_some() { "," } else { ", " }.to_string(), ": ".to_string()),
                Some(s) => {
                    let parts = s.iterate()?;
                    if parts.len() != 2 {
                        return Err(err!(
                            ValueError,
                            "{} values to unpack (expected 2{})",
                            if parts.len() < 2 { "not enough" } else { "too many" },
                            if parts.len() < 2 {
                                format!(", got {}", parts.len())
                            } else {
                                String::new()
                            }
                        ));
                    }
                    (parts[0].to_py_str(), parts[1].to_py_str())
                }
            };
            let opts = DumpOptions {
                ensure_ascii: ensure_ascii.is_some_and(|e| e.truthy()),
                indent,
                item_sep,
                key_sep,
                sort_keys: bool_arg(&sort_keys),
            };
            let mut out = String::new();
            dumps(&v, &opts, 0, &mut out)?;
            Value::string(out)
        }
        "attr" => {
            let [attribute] = args.bind(name, ["name"])?;
            match attribute {
                Some(Value::Str(n)) => super::getattr(&v, n)?,
                Some(other) => super::getitem(&v, &other)?,
                None => return Err(err!(TypeError, "attr() missing 1 required positional argument: 'name'")),
            }
        }
        "format" => {
            let s = v.to_py_str();
            let a = if !args.kw.is_empty() {
                crate::value::ops::dict_from(args.kw.iter().map(|(k, v)| (Value::Str(k), v.clone())).collect())
            } else {
                Value::Tuple(Rc::new(args.pos))
            };
            Value::string(super::format::percent_format(&s, &a)?)
        }
        "batch" | "slice" => {
            let [count, fill] = args.bind(name, ["linecount", "fill_with"])?;
            let n = match count {
                Some(Value::Int(n)) => n,
                _ => return Err(err!(TypeError, "{name}() requires an integer count")),
            };
            let items = v.iterate()?;
            let mut out = Vec::new();
            if name == "batch" {
                if n <= 0 {
                    return Err(err!(ValueError, "range() arg 3 must not be zero"));
                }
                for chunk in items.chunks(n as usize) {
                    let mut c = chunk.to_vec();
                    if let Some(f) = &fill {
                        while c.len() < n as usize {
                            c.push(f.clone());
                        }
                    }
                    out.push(Value::list(c));
                }
            } else {
                if n <= 0 {
                    return Err(err!(ZeroDivisionError, "integer division or modulo by zero"));
                }
                let n = n as usize;
                let per = items.len() / n;
                let extra = items.len() % n;
                let mut offset = 0;
                for i in 0..n {
                    let start = i * per + i.min(extra);
                    let end = (i + 1) * per + (i + 1).min(extra);
                    let mut c = items[start..end].to_vec();
                    if let Some(f) = &fill {
                        if i >= extra && extra > 0 {
                            c.push(f.clone());
                        }
                    }
                    offset += 1;
                    out.push(Value::list(c));
                }
                let _ = offset;
            }
            Value::Iter(Rc::new(out))
        }
        "truncate" => {
            let [length, killwords, end, leeway] = args.bind(name, ["length", "killwords", "end", "leeway"])?;
            let s = v.to_py_str();
            let length = match length {
                Some(Value::Int(l)) => l,
                _ => 255,
            };
            let end = end.map(|e| e.to_py_str()).unwrap_or_else(|| "...".to_string());
            let leeway = match leeway {
                Some(Value::Int(l)) => l,
                _ => 5,
            };
            let chars: Vec<char> = s.chars().collect();
            let n = chars.len() as i64;
            if n <= length + leeway {
                Value::string(s)
            } else {
                let keep = (length - end.chars().count() as i64).max(0) as usize;
                let head: String = chars[..keep.min(chars.len())].iter().collect();
                if bool_arg(&killwords) {
                    Value::string(head + &end)
                } else {
                    let cut = match head.rfind(' ') {
                        Some(i) => &head[..i],
                        None => head.as_str(),
                    };
                    Value::string(format!("{cut}{end}"))
                }
            }
        }
        "striptags" => {
            let s = v.to_py_str();
            let mut out = String::new();
            let mut in_tag = false;
            for c in s.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' if in_tag => in_tag = false,
                    c if !in_tag => out.push(c),
                    _ => {}
                }
            }
            let words: Vec<&str> = pystr::split(&out, None, -1).map_err(super::format::py_err)?;
            Value::string(words.join(" "))
        }
        "pprint" => {
            let mut out = String::new();
            v.write_repr(&mut out);
            Value::string(out)
        }
        "groupby" | "random" | "urlencode" | "urlize" | "wordwrap" | "filesizeformat" | "xmlattr" => {
            return Err(err!(
                TemplateRuntimeError,
                "the '{name}' filter is not supported by chatfmt yet"
            ));
        }
        _ => {
            let _ = Object::Function;
            return Err(err!(TemplateRuntimeError, "No filter named '{name}' found."));
        }
    })
}

fn split_lines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes: Vec<(usize, char)> = s.char_indices().collect();
    let mut i = 0;
    while i < bytes.len() {
        let (pos, c) = bytes[i];
        if matches!(
            c,
            '\n' | '\r' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}' | '\u{2029}'
        ) {
            out.push(&s[start..pos]);
            let mut next = pos + c.len_utf8();
            if c == '\r' && bytes.get(i + 1).map(|b| b.1) == Some('\n') {
                next += 1;
                i += 1;
            }
            start = next;
        }
        i += 1;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Python `int(s, base)` for strings; `None` where Python raises ValueError.
pub fn py_int_parse(s: &str, base: i64) -> Option<i64> {
    let t = s.trim_matches(is_py_space);
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let lower = t.to_ascii_lowercase();
    let (radix, body) = match base {
        0 => {
            if let Some(r) = lower.strip_prefix("0x") {
                (16, r.trim_start_matches('_'))
            } else if let Some(r) = lower.strip_prefix("0o") {
                (8, r.trim_start_matches('_'))
            } else if let Some(r) = lower.strip_prefix("0b") {
                (2, r.trim_start_matches('_'))
            } else {
                if lower.len() > 1 && lower.starts_with('0') && lower.chars().any(|c| c != '0' && c != '_') {
                    return None;
                }
                (10, lower.as_str())
            }
        }
        2..=36 => {
            let prefix = match base {
                16 => "0x",
                8 => "0o",
                2 => "0b",
                _ => "",
            };
            match (prefix.is_empty(), lower.strip_prefix(prefix)) {
                (false, Some(r)) => (base as u32, r.trim_start_matches('_')),
                _ => (base as u32, lower.as_str()),
            }
        }
        _ => return None,
    };
    if body.is_empty() || body.starts_with('_') || body.ends_with('_') || body.contains("__") {
        return None;
    }
    let mut value: i64 = 0;
    for c in body.chars().filter(|c| *c != '_') {
        let d = match c.to_digit(radix) {
            Some(d) => d as i64,
            None => unicode_decimal(c).filter(|_| radix == 10)? as i64,
        };
        value = value.checked_mul(radix as i64)?.checked_add(d)?;
    }
    Some(if neg { -value } else { value })
}

/// The value of a Unicode decimal digit (category Nd), which Python's `int()` accepts.
fn unicode_decimal(c: char) -> Option<u32> {
    if !c.is_numeric() {
        return None;
    }
    // Decimal digit blocks are runs of ten consecutive code points starting at a zero.
    const ZEROS: [u32; 20] = [
        0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xe50, 0xed0, 0xf20,
        0x1040, 0x17e0, 0x1810, 0xff10, 0x1d7ce,
    ];
    let n = c as u32;
    ZEROS.iter().find(|z| (**z..**z + 10).contains(&n)).map(|z| n - z)
}

/// Python `float(s)` for strings; `None` where Python raises ValueError.
pub fn py_float_parse(s: &str) -> Option<f64> {
    let t = s.trim_matches(is_py_space);
    if t.starts_with('_') || t.ends_with('_') || t.contains("__") {
        return None;
    }
    let t: String = t.chars().filter(|c| *c != '_').collect();
    let lower = t.to_ascii_lowercase();
    let (sign, body) = match lower.strip_prefix('-') {
        Some(r) => (-1.0, r),
        None => (1.0, lower.strip_prefix('+').unwrap_or(&lower)),
    };
    match body {
        "nan" => return Some(f64::NAN),
        "inf" | "infinity" => return Some(sign * f64::INFINITY),
        _ => {}
    }
    if body.is_empty()
        || !body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-'))
    {
        return None;
    }
    body.parse::<f64>().ok().map(|f| sign * f)
}
