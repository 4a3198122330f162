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

/// Filters that take no argument besides the value.
const NO_ARGUMENTS: &[&str] = &[
    "abs",
    "capitalize",
    "count",
    "e",
    "escape",
    "first",
    "forceescape",
    "items",
    "last",
    "length",
    "list",
    "lower",
    "random",
    "reverse",
    "safe",
    "string",
    "striptags",
    "title",
    "upper",
    "urlencode",
    "wordcount",
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
    attr_path_or(item, path, None)
}

/// [`attr_path`] where an undefined step is replaced by `default` (as `make_attrgetter(default=)`).
fn attr_path_or<'a>(item: &Value<'a>, path: &Value<'a>, default: Option<&Value<'a>>) -> Result<Value<'a>> {
    let Some(p) = path.as_str() else {
        let v = super::getitem(item, path)?;
        return Ok(match default {
            Some(d) if v.is_undefined() => d.clone(),
            _ => v,
        });
    };
    // One key of a JSON object, read in place.
    if let Value::Json(serde_json::Value::Object(m)) = item {
        if !p.contains('.') && !p.bytes().all(|b| b.is_ascii_digit()) {
            if let Some(j) = crate::value::json_map_get(m, p) {
                return Ok(Value::from_json(j));
            }
        }
    }
    let mut cur = item.clone();
    for part in p.split('.') {
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
        if let (Some(d), true) = (default, cur.is_undefined()) {
            cur = d.clone();
        }
    }
    Ok(cur)
}

/// The sort key of `make_multi_attrgetter`: a list of the (comma-separated) attributes' values.
fn multi_key<'a>(item: &Value<'a>, attribute: &Option<Value<'a>>, case_sensitive: bool) -> Result<Value<'a>> {
    let parts = match attribute.as_ref().and_then(|a| a.as_str()) {
        Some(a) if a.contains(',') => a.split(',').map(Value::string).collect(),
        _ => vec![attribute.clone().unwrap_or(Value::None)],
    };
    let mut key = Vec::with_capacity(parts.len());
    for part in &parts {
        let v = match part {
            Value::None => item.clone(),
            p => attr_path(item, p)?,
        };
        key.push(sort_key(&v, case_sensitive));
    }
    Ok(Value::list(key))
}

fn sort_key<'a>(v: &Value<'a>, case_sensitive: bool) -> Value<'a> {
    match v.as_str() {
        Some(s) if !case_sensitive => Value::string(s.to_lowercase()),
        _ => v.clone(),
    }
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
        (Err(e), None) => Err(super::format::py_err(e)),
        _ => Ok(()),
    }
}

fn bool_arg(v: &Option<Value>) -> bool {
    v.as_ref().is_some_and(|v| v.truthy())
}

fn select_like<'a>(ev: &mut Evaluator<'a>, name: &str, v: Value<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
    // Jinja2 reads the arguments and iterates only `if value:`: a falsy input selects nothing.
    if !v.truthy() {
        return Ok(Value::Iter(Rc::new(Vec::new())));
    }
    let by_attr = name.ends_with("attr");
    let keep_when = name.starts_with("select");
    let mut pos = args.pos.into_iter();
    let attr = if by_attr {
        Some(
            pos.next()
                .ok_or_else(|| err!(FilterArgumentError, "Missing parameter for attribute name"))?,
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
    let known_test = test_name.as_deref().is_none_or(super::is_test);
    let test_args = CallArgs {
        pos: test_args,
        kw: args.kw,
    };
    let mut out = Vec::new();
    for item in v.iterate()?.iter() {
        let subject = match &attr {
            Some(a) => attr_path(item, a)?,
            None => item.clone(),
        };
        let ok = match &test_name {
            None => subject.truthy(),
            Some(t) => {
                if !known_test {
                    return Err(err!(TemplateRuntimeError, "No test named '{t}'."));
                }
                super::tests::call_test(ev, t, &subject, &test_args)?
            }
        };
        if ok == keep_when {
            out.push(item.clone());
        }
    }
    Ok(Value::Iter(Rc::new(out)))
}

/// Applies filter `name` to `v`.
pub fn call_filter<'a>(ev: &mut Evaluator<'a>, name: &str, v: Value<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
    if (!args.pos.is_empty() || !args.kw.is_empty()) && NO_ARGUMENTS.contains(&name) {
        let given = args.pos.len() + args.kw.len() + 1;
        return Err(err!(
            TypeError,
            "{name}() takes 1 positional argument but {given} were given"
        ));
    }
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
        "title" => Value::string(pystr::jinja_title(soft_str(&v).as_str().unwrap_or(""))),
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
                crate::limits::check_value_size(out.len())?;
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
            let mut items = v
                .iterate()
                .map_err(|_| err!(FilterArgumentError, "argument must be iterable"))?
                .to_vec();
            items.reverse();
            if let Value::Iter(_) = v {
                return Ok(Value::list(items));
            }
            Value::Iter(Rc::new(items))
        }
        "select" | "reject" | "selectattr" | "rejectattr" => select_like(ev, name, v, args)?,
        "map" => {
            let mut pos = args.pos.clone();
            let attribute = args.kw.iter().find(|(k, _)| *k == "attribute").map(|(_, v)| v.clone());
            let default = args.kw.iter().find(|(k, _)| *k == "default").map(|(_, v)| v.clone());
            // As in Jinja2, the arguments are read and the input iterated only `if value:`.
            if !v.truthy() {
                return Ok(Value::Iter(Rc::new(Vec::new())));
            }
            let items = v.iterate()?;
            let mut out = Vec::with_capacity(items.len());
            if let Some(a) = attribute {
                for item in items.iter() {
                    out.push(attr_path_or(item, &a, default.as_ref())?);
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
            if v.is_undefined() {
                return Err(v.undefined_error());
            }
            if !v.is_mapping() {
                return Err(err!(
                    AttributeError,
                    "'{}' object has no attribute 'items'",
                    v.type_name()
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
                pairs.push((multi_key(item, &attribute, cs)?, item.clone()));
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
                check_hashable(&key)?;
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
                Value::Int(i) if method == "common" => {
                    return Ok(Value::Int(
                        pystr::py_round_int(i, precision).map_err(super::format::py_err)?,
                    ))
                }
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
                "common" => Value::Float(pystr::py_round(x, precision).map_err(super::format::py_err)?),
                "ceil" => Value::Float((x * p).ceil() / p),
                "floor" => Value::Float((x * p).floor() / p),
                _ => return Err(err!(FilterArgumentError, "method must be common, ceil or floor")),
            }
        }
        "int" => {
            let [default, base] = args.bind(name, ["default", "base"])?;
            if v.is_undefined() {
                return Err(v.undefined_error());
            }
            let default = default.unwrap_or(Value::Int(0));
            // `int(value, base)`; a base that is not an int is a TypeError, handled as a ValueError.
            let base = match base {
                None => Some(10),
                Some(Value::Int(b)) => Some(b),
                Some(Value::Bool(b)) => Some(b as i64),
                _ => None,
            };
            match &v {
                Value::Int(_) | Value::BigInt(_) => v,
                Value::Bool(b) => Value::Int(*b as i64),
                Value::Float(f) => int_of_float(*f, default)?,
                _ if v.is_str() => {
                    let s = v.as_str().unwrap_or("");
                    match base.map(|b| pystr::parse_int(s, b)) {
                        Some(Ok(i)) => Value::from_bigint(i),
                        Some(Err(e)) if e.kind != pystr::PyErrorKind::ValueError => {
                            return Err(super::format::py_err(e))
                        }
                        // After a ValueError Jinja2 tries `int(float(value))`, any error giving the default.
                        _ => match pystr::parse_float(s).map(pystr::float_to_int) {
                            Ok(Ok(i)) => Value::from_bigint(i),
                            _ => default,
                        },
                    }
                }
                _ => default,
            }
        }
        "float" => {
            let [default] = args.bind(name, ["default"])?;
            if v.is_undefined() {
                return Err(v.undefined_error());
            }
            let default = default.unwrap_or(Value::Float(0.0));
            match &v {
                Value::Int(i) => Value::Float(*i as f64),
                Value::BigInt(i) => Value::Float(pystr::int_to_float(i).map_err(super::format::py_err)?),
                Value::Bool(b) => Value::Float(*b as i64 as f64),
                Value::Float(_) => v,
                _ if v.is_str() => py_float_parse(v.as_str().unwrap_or(""))
                    .map(Value::Float)
                    .unwrap_or(default),
                _ => default,
            }
        }
        "replace" => {
            let [old, new, count] = args.bind_def("do_replace", 2, ["old", "new", "count"], 2)?;
            let s = soft_str(&v);
            let text = s.as_str().unwrap_or("");
            let old = old.map(|o| o.to_py_str()).unwrap_or_default();
            let new = new.map(|o| o.to_py_str()).unwrap_or_default();
            // `str.replace` reads the count through `__index__` (None is Jinja2's -1).
            let count = match count {
                None | Some(Value::None) => -1,
                Some(Value::Int(c)) => c,
                Some(Value::Bool(b)) => i64::from(b),
                Some(Value::BigInt(_)) => {
                    return Err(err!(OverflowError, "Python int too large to convert to C ssize_t"));
                }
                Some(other) => {
                    return Err(err!(
                        TypeError,
                        "'{}' object cannot be interpreted as an integer",
                        other.type_name()
                    ));
                }
            };
            let len = pystr::replaced_len(text, &old, &new, count);
            crate::limits::check_value_size(len)?;
            Value::string(pystr::replace_sized(text, &old, &new, count, len).map_err(super::format::py_err)?)
        }
        "indent" => {
            let [width, first, blank] = args.bind(name, ["width", "first", "blank"])?;
            if v.is_undefined() {
                return Err(v.undefined_error());
            }
            if !v.is_str() {
                return Err(err!(
                    TypeError,
                    "unsupported operand type(s) for +=: '{}' and 'str'",
                    v.type_name()
                ));
            }
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
                None => 80,
                Some(Value::Int(w)) => w,
                Some(Value::Bool(b)) => b as i64,
                Some(w) => {
                    return Err(err!(
                        TypeError,
                        "'{}' object cannot be interpreted as an integer",
                        w.type_name()
                    ))
                }
            };
            Value::string(pystr::center(&v.to_py_str(), w, None).map_err(super::format::py_err)?)
        }
        "wordcount" => Value::Int(pystr::jinja_wordcount(&v.to_py_str()) as i64),
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
            let Some(attribute) = attribute else {
                return Err(err!(TypeError, "attr() missing 1 required positional argument: 'name'"));
            };
            let n = attribute.to_py_str();
            match super::python_attribute(&v, &n) {
                Some(x) => x,
                None => Value::missing_member(&v, Value::string(n)),
            }
        }
        "format" => {
            if !args.kw.is_empty() && !args.pos.is_empty() {
                return Err(err!(
                    FilterArgumentError,
                    "can't handle positional and keyword arguments"
                ));
            }
            let s = v.to_py_str();
            let a = if !args.kw.is_empty() {
                crate::value::ops::dict_from(args.kw.iter().map(|(k, v)| (Value::Str(k), v.clone())).collect())
            } else {
                Value::Tuple(Rc::new(args.pos))
            };
            Value::string(super::format::percent_format(&s, &a)?)
        }
        "batch" => {
            let [count, fill] = args.bind(name, ["linecount", "fill_with"])?;
            let count = count.ok_or_else(|| err!(TypeError, "batch() missing required argument 'linecount'"))?;
            let mut out = Vec::new();
            let mut tmp: Vec<Value> = Vec::new();
            for item in v.iterate()?.iter() {
                if Value::Int(tmp.len() as i64).py_eq(&count) {
                    out.push(Value::list(std::mem::take(&mut tmp)));
                }
                tmp.push(item.clone());
            }
            if !tmp.is_empty() {
                if let (Some(f), Value::Int(n)) = (&fill, &count) {
                    while (tmp.len() as i64) < *n {
                        tmp.push(f.clone());
                    }
                }
                out.push(Value::list(tmp));
            }
            Value::Iter(Rc::new(out))
        }
        "slice" => {
            let [count, fill] = args.bind(name, ["slices", "fill_with"])?;
            let n = match count {
                Some(Value::Int(n)) => n,
                Some(c) => {
                    return Err(err!(
                        TypeError,
                        "'{}' object cannot be interpreted as an integer",
                        c.type_name()
                    ))
                }
                None => return Err(err!(TypeError, "slice() missing required argument 'slices'")),
            };
            let items = v.iterate()?;
            if n <= 0 {
                return Err(err!(ZeroDivisionError, "integer division or modulo by zero"));
            }
            let n = n as usize;
            let per = items.len() / n;
            let extra = items.len() % n;
            let mut out = Vec::new();
            let mut offset = 0;
            for i in 0..n {
                let start = offset + i * per;
                if i < extra {
                    offset += 1;
                }
                let end = offset + (i + 1) * per;
                let mut c = items[start..end].to_vec();
                if let (Some(f), true) = (&fill, i >= extra && extra > 0) {
                    c.push(f.clone());
                }
                out.push(Value::list(c));
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
            let end_len = end.chars().count() as i64;
            if length < end_len {
                return Err(err!(AssertionError, "expected length >= {end_len}, got {length}"));
            }
            if leeway < 0 {
                return Err(err!(AssertionError, "expected leeway >= 0, got {leeway}"));
            }
            let chars: Vec<char> = s.chars().collect();
            if chars.len() as i64 <= length + leeway {
                Value::string(s)
            } else {
                let keep = (length - end_len) as usize;
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
            let mut rest = s.as_str();
            while !rest.is_empty() {
                if let Some(after) = rest.strip_prefix("<!--") {
                    rest = after.find("-->").map_or("", |i| &after[i + 3..]);
                    out.push(' ');
                } else if rest.starts_with('<') && rest[1..].find('>').is_some() {
                    let close = rest[1..].find('>').map_or(rest.len(), |i| i + 2);
                    rest = &rest[close..];
                    out.push(' ');
                } else {
                    let c = rest.chars().next().unwrap_or(' ');
                    out.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
            let words: Vec<&str> = pystr::split(&out, None, -1).map_err(super::format::py_err)?;
            Value::string(html_unescape(&words.join(" ")))
        }
        "pprint" => {
            let mut out = String::new();
            pformat(&v, 0, 80, &mut out);
            Value::string(out)
        }
        "groupby" => {
            let [attribute, default, case_sensitive] = args.bind(name, ["attribute", "default", "case_sensitive"])?;
            let attribute =
                attribute.ok_or_else(|| err!(TypeError, "groupby() missing required argument 'attribute'"))?;
            let cs = bool_arg(&case_sensitive);
            let mut pairs = Vec::new();
            for item in v.iterate()?.iter() {
                let key = attr_path_or(item, &attribute, default.as_ref())?;
                pairs.push((sort_key(&key, cs), item.clone()));
            }
            sort_values(&mut pairs, false)?;
            let mut groups: Vec<(Value, Vec<Value>)> = Vec::new();
            for (key, item) in pairs {
                match groups.last_mut() {
                    Some((k, members)) if k.py_eq(&key) => members.push(item),
                    _ => groups.push((key, vec![item])),
                }
            }
            let mut out = Vec::with_capacity(groups.len());
            for (key, members) in groups {
                let grouper = if cs {
                    key
                } else {
                    attr_path_or(&members[0], &attribute, default.as_ref())?
                };
                out.push(Value::Object(Rc::new(Object::Group(grouper, Value::list(members)))));
            }
            Value::list(out)
        }
        "random" => {
            let items = v.iterate()?;
            if items.is_empty() {
                return Ok(undefined_hint("No random item, sequence was empty."));
            }
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos() as usize);
            items[nanos % items.len()].clone()
        }
        "urlencode" => {
            if v.is_undefined() {
                return Ok(Value::Str(""));
            }
            if v.is_str() || !(v.is_sequence_like() || v.is_mapping() || matches!(v, Value::Iter(_))) {
                return Ok(Value::string(url_quote(&v.to_py_str(), false)));
            }
            let mut pairs = Vec::new();
            if v.is_mapping() {
                v.for_each_pair(|k, x| pairs.push((k, x)));
            } else {
                for item in v.iterate()?.iter() {
                    let kv = item.iterate()?;
                    if kv.len() != 2 {
                        return Err(err!(ValueError, "too many values to unpack (expected 2)"));
                    }
                    pairs.push((kv[0].clone(), kv[1].clone()));
                }
            }
            let parts: Vec<String> = pairs
                .iter()
                .map(|(k, x)| {
                    format!(
                        "{}={}",
                        url_quote(&k.to_py_str(), true),
                        url_quote(&x.to_py_str(), true)
                    )
                })
                .collect();
            Value::string(parts.join("&"))
        }
        "xmlattr" => {
            let [autospace] = args.bind(name, ["autospace"])?;
            let autospace = autospace.is_none_or(|a| a.truthy());
            let mut pairs = Vec::new();
            v.for_each_pair(|k, x| pairs.push((k, x)));
            let mut items = Vec::new();
            for (k, x) in pairs {
                if matches!(x, Value::None | Value::Undefined(_)) {
                    continue;
                }
                let key = k.to_py_str();
                if key
                    .chars()
                    .any(|c| c.is_ascii_whitespace() || matches!(c, '/' | '>' | '='))
                {
                    let mut r = String::new();
                    k.write_repr(&mut r);
                    return Err(err!(ValueError, "Invalid character in attribute name: {r}"));
                }
                let mut item = String::new();
                escape_into(&key, &mut item);
                item.push_str("=\"");
                escape_into(&x.to_py_str(), &mut item);
                item.push('"');
                items.push(item);
            }
            let mut rv = items.join(" ");
            if autospace && !rv.is_empty() {
                rv.insert(0, ' ');
            }
            Value::string(rv)
        }
        "wordwrap" => {
            let [width, break_long, wrapstring, break_hyphens] =
                args.bind(name, ["width", "break_long_words", "wrapstring", "break_on_hyphens"])?;
            if v.is_undefined() {
                return Err(v.undefined_error());
            }
            let width = match width {
                None => 79,
                Some(Value::Int(w)) => w,
                Some(w) => {
                    return Err(err!(
                        TypeError,
                        "'<=' not supported between instances of '{}' and 'int'",
                        w.type_name()
                    ))
                }
            };
            if width <= 0 {
                return Err(err!(ValueError, "invalid width {width} (must be > 0)"));
            }
            let wrap = wrapstring.map(|w| w.to_py_str()).unwrap_or_else(|| "\n".to_string());
            let long = break_long.is_none_or(|b| b.truthy());
            let hyphens = break_hyphens.is_none_or(|b| b.truthy());
            let text = v.to_py_str();
            let paragraphs: Vec<String> = pystr::splitlines(&text, false)
                .into_iter()
                .map(|line| text_wrap(line, width as usize, long, hyphens).join(&wrap))
                .collect();
            Value::string(paragraphs.join(&wrap))
        }
        "filesizeformat" => {
            let [binary] = args.bind(name, ["binary"])?;
            let bytes = match &v {
                Value::Int(i) => *i as f64,
                Value::Bool(b) => *b as i64 as f64,
                Value::Float(f) => *f,
                _ if v.is_str() => pystr::parse_float(v.as_str().unwrap_or("")).map_err(super::format::py_err)?,
                Value::Undefined(_) => return Err(v.undefined_error()),
                _ => {
                    return Err(err!(
                        TypeError,
                        "float() argument must be a string or a real number, not '{}'",
                        v.type_name()
                    ))
                }
            };
            let binary = bool_arg(&binary);
            let base: f64 = if binary { 1024.0 } else { 1000.0 };
            let prefixes = if binary {
                ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"]
            } else {
                ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"]
            };
            if bytes == 1.0 {
                Value::Str("1 Byte")
            } else if bytes < base {
                Value::string(format!("{} Bytes", bytes.trunc() as i64))
            } else {
                let mut unit = base;
                let mut prefix = prefixes[0];
                for (i, p) in prefixes.iter().enumerate() {
                    unit = base.powi(i as i32 + 2);
                    prefix = p;
                    if bytes < unit {
                        break;
                    }
                }
                let mut num = String::new();
                num.push_str(
                    &pystr::percent_format("%.1f", pystr::PercentArgs::Single(&Value::Float(base * bytes / unit)))
                        .map_err(super::format::py_err)?,
                );
                Value::string(format!("{num} {prefix}"))
            }
        }
        "urlize" => {
            let [limit, nofollow, target, rel] = args.bind(name, ["trim_url_limit", "nofollow", "target", "rel"])?;
            let limit = match limit {
                Some(Value::Int(n)) => Some(n.max(0) as usize),
                _ => None,
            };
            let mut rels: Vec<String> = rel
                .map(|r| r.to_py_str().split_whitespace().map(str::to_string).collect())
                .unwrap_or_default();
            if bool_arg(&nofollow) {
                rels.push("nofollow".to_string());
            }
            rels.push("noopener".to_string());
            rels.sort();
            rels.dedup();
            let rel = rels.join(" ");
            let target = target.filter(|t| t.truthy()).map(|t| t.to_py_str());
            Value::string(super::urlize::urlize(
                &v.to_py_str(),
                limit,
                Some(&rel),
                target.as_deref(),
            ))
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

/// `int(x)` for a float in the `int` filter: the `ValueError` of NaN gives the default, the
/// `OverflowError` of an infinity is raised.
fn int_of_float<'a>(x: f64, default: Value<'a>) -> Result<Value<'a>> {
    match pystr::float_to_int(x) {
        Ok(i) => Ok(Value::from_bigint(i)),
        Err(e) if e.kind == pystr::PyErrorKind::ValueError => Ok(default),
        Err(e) => Err(super::format::py_err(e)),
    }
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

/// Python's `hash()` refuses mutable containers.
pub fn check_hashable(v: &Value) -> Result<()> {
    if (v.is_sequence_like() && !matches!(v, Value::Tuple(_))) || v.is_mapping() {
        return Err(err!(TypeError, "unhashable type: '{}'", v.type_name()));
    }
    if let Value::Tuple(items) = v {
        items.iter().try_for_each(check_hashable)?;
    }
    Ok(())
}

/// `urllib.parse.quote` as Jinja2's `url_quote` uses it (`for_qs`: no safe `/`, spaces as `+`).
fn url_quote(s: &str, for_qs: bool) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => out.push(b as char),
            b'/' if !for_qs => out.push('/'),
            b' ' if for_qs => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Reverses markupsafe's escaping of the five special characters and numeric references.
fn html_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let entity = rest.find(';').map(|j| &rest[1..j]);
        let decoded = match entity {
            Some("amp") => Some('&'),
            Some("lt") => Some('<'),
            Some("gt") => Some('>'),
            Some("quot") => Some('"'),
            Some("apos") => Some('\''),
            Some(e) if e.starts_with("#x") || e.starts_with("#X") => {
                u32::from_str_radix(&e[2..], 16).ok().and_then(char::from_u32)
            }
            Some(e) if e.starts_with('#') => e[1..].parse::<u32>().ok().and_then(char::from_u32),
            _ => None,
        };
        match (decoded, entity) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &rest[e.len() + 2..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Greedy line filling as Python's `textwrap.wrap(width, expand_tabs=False, replace_whitespace=False)`.
fn text_wrap(text: &str, width: usize, break_long: bool, break_on_hyphens: bool) -> Vec<String> {
    // Chunks: runs of whitespace, and words (optionally split after hyphens between letters).
    let mut chunks: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut in_space = false;
    for c in text.chars() {
        let space = pystr::is_py_whitespace(c);
        if !cur.is_empty() && space != in_space {
            chunks.push(std::mem::take(&mut cur));
        }
        in_space = space;
        cur.push(c);
        if !space && break_on_hyphens && c == '-' && cur.chars().count() > 1 {
            let prev_alpha = cur.chars().rev().nth(1).is_some_and(char::is_alphanumeric);
            if prev_alpha {
                chunks.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        chunks.push(cur);
    }
    chunks.reverse();
    let len = |s: &str| s.chars().count();
    let mut lines = Vec::new();
    while !chunks.is_empty() {
        let mut line: Vec<String> = Vec::new();
        let mut cur_len = 0;
        if lines.is_empty() || !chunks.last().is_some_and(|c| c.chars().all(pystr::is_py_whitespace)) {
        } else {
            chunks.pop();
        }
        while let Some(chunk) = chunks.last() {
            let l = len(chunk);
            if cur_len + l <= width {
                cur_len += l;
                line.push(chunks.pop().unwrap_or_default());
            } else {
                break;
            }
        }
        if let Some(chunk) = chunks.last() {
            if len(chunk) > width {
                if break_long {
                    let space_left = (width - cur_len).max(1);
                    let chunk = chunks.pop().unwrap_or_default();
                    let head: String = chunk.chars().take(space_left).collect();
                    let tail: String = chunk.chars().skip(space_left).collect();
                    line.push(head);
                    chunks.push(tail);
                } else if line.is_empty() {
                    line.push(chunks.pop().unwrap_or_default());
                }
            }
        }
        while line.last().is_some_and(|c| c.chars().all(pystr::is_py_whitespace)) {
            line.pop();
        }
        if !line.is_empty() {
            lines.push(line.concat());
        }
    }
    lines
}

/// Python's `pprint.pformat(value)` (width 80, dict keys sorted).
fn pformat(v: &Value, indent: usize, width: usize, out: &mut String) {
    let mut flat = String::new();
    pformat_flat(v, &mut flat);
    if flat.chars().count() + indent <= width || !(v.is_sequence_like() || v.is_mapping()) {
        out.push_str(&flat);
        return;
    }
    if v.is_mapping() {
        let mut pairs = Vec::new();
        v.for_each_pair(|k, x| pairs.push((k, x)));
        let _ = sort_values(&mut pairs, false);
        out.push('{');
        for (i, (k, x)) in pairs.iter().enumerate() {
            if i > 0 {
                out.push_str(",\n");
                out.push_str(&" ".repeat(indent + 1));
            }
            let mut key = String::new();
            k.write_repr(&mut key);
            out.push_str(&key);
            out.push_str(": ");
            pformat(x, indent + key.chars().count() + 3, width, out);
        }
        out.push('}');
        return;
    }
    let (open, close) = if matches!(v, Value::Tuple(_)) {
        ('(', ')')
    } else {
        ('[', ']')
    };
    out.push(open);
    let items = v.iterate().map(|i| i.to_vec()).unwrap_or_default();
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
            out.push_str(&" ".repeat(indent + 1));
        }
        pformat(x, indent + 1, width, out);
    }
    if items.len() == 1 && open == '(' {
        out.push(',');
    }
    out.push(close);
}

fn pformat_flat(v: &Value, out: &mut String) {
    if v.is_mapping() {
        let mut pairs = Vec::new();
        v.for_each_pair(|k, x| pairs.push((k, x)));
        let _ = sort_values(&mut pairs, false);
        out.push('{');
        for (i, (k, x)) in pairs.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            k.write_repr(out);
            out.push_str(": ");
            pformat_flat(x, out);
        }
        out.push('}');
    } else if v.is_sequence_like() {
        let (open, close) = if matches!(v, Value::Tuple(_)) {
            ('(', ')')
        } else {
            ('[', ']')
        };
        out.push(open);
        let items = v.iterate().map(|i| i.to_vec()).unwrap_or_default();
        for (i, x) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            pformat_flat(x, out);
        }
        if items.len() == 1 && open == '(' {
            out.push(',');
        }
        out.push(close);
    } else {
        v.write_repr(out);
    }
}
