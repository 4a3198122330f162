//! Global functions (`range`, `dict`, `namespace`, `raise_exception`, `strftime_now`, ...) and the
//! `loop` object's attributes and methods.

use crate::error::{err, Error, ErrorKind, Result};
use crate::eval::{CallArgs, Evaluator};
use crate::value::{range_len, Dict, LoopValue, Object, UndefInfo, Value};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// The names of the environment's global functions.
pub const GLOBALS: &[&str] = &[
    "range",
    "dict",
    "namespace",
    "cycler",
    "joiner",
    "lipsum",
    "raise_exception",
    "strftime_now",
];

/// Jinja2's sandbox cap on `range()`.
pub const MAX_RANGE: usize = 100_000;

fn int_param(v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(*b as i64),
        Value::Undefined(_) => Err(v.undefined_error()),
        _ => Err(err!(
            TypeError,
            "'{}' object cannot be interpreted as an integer",
            v.type_name()
        )),
    }
}

/// Calls a global function.
pub fn call_global<'a>(ev: &mut Evaluator<'a>, name: &str, args: CallArgs<'a>) -> Result<Value<'a>> {
    match name {
        "range" => {
            if !args.kw.is_empty() {
                return Err(err!(TypeError, "range() takes no keyword arguments"));
            }
            let p: Vec<i64> = args.pos.iter().map(int_param).collect::<Result<_>>()?;
            let (a, b, s) = match p.as_slice() {
                [b] => (0, *b, 1),
                [a, b] => (*a, *b, 1),
                [a, b, s] => (*a, *b, *s),
                [] => return Err(err!(TypeError, "range expected at least 1 argument, got 0")),
                _ => return Err(err!(TypeError, "range expected at most 3 arguments, got {}", p.len())),
            };
            if s == 0 {
                return Err(err!(ValueError, "range() arg 3 must not be zero"));
            }
            if range_len(a, b, s) > MAX_RANGE {
                return Err(err!(
                    OverflowError,
                    "Range too big. The sandbox blocks ranges larger than MAX_RANGE ({MAX_RANGE})."
                ));
            }
            Ok(Value::Object(Rc::new(Object::Range(a, b, s))))
        }
        "dict" => {
            let mut d = Dict::default();
            if let Some(first) = args.pos.first() {
                if args.pos.len() > 1 {
                    return Err(err!(
                        TypeError,
                        "dict expected at most 1 argument, got {}",
                        args.pos.len()
                    ));
                }
                fill_dict(&mut d, first)?;
            }
            for (k, v) in args.kw {
                d.insert(Value::Str(k), v);
            }
            Ok(Value::Dict(Rc::new(d)))
        }
        "namespace" => {
            let mut d = Dict::default();
            for a in &args.pos {
                fill_dict(&mut d, a)?;
            }
            for (k, v) in args.kw {
                d.insert(Value::Str(k), v);
            }
            for (k, _) in &d.entries {
                if let Some(name) = k.as_str() {
                    check_namespace_name(name)?;
                }
            }
            Ok(Value::Object(Rc::new(Object::Namespace(RefCell::new(d)))))
        }
        "cycler" => {
            if args.pos.is_empty() {
                return Err(err!(RuntimeError, "at least one item has to be provided"));
            }
            Ok(Value::Object(Rc::new(Object::Cycler(args.pos, Cell::new(0)))))
        }
        "joiner" => {
            let [sep] = args.bind("joiner", ["sep"])?;
            Ok(Value::Object(Rc::new(Object::Joiner(
                sep.unwrap_or(Value::Str(", ")),
                Cell::new(false),
            ))))
        }
        "raise_exception" => {
            let [message] = args.bind("raise_exception", ["message"])?;
            let Some(m) = message else {
                return Err(err!(
                    TypeError,
                    "raise_exception() missing 1 required positional argument: 'message'"
                ));
            };
            Err(Error::new(ErrorKind::TemplateError, m.to_py_str()))
        }
        "strftime_now" => {
            let [fmt] = args.bind("strftime_now", ["format"])?;
            let fmt = fmt.ok_or_else(|| {
                err!(
                    TypeError,
                    "strftime_now() missing 1 required positional argument: 'format'"
                )
            })?;
            let Some(f) = fmt.as_str() else {
                return Err(err!(
                    TypeError,
                    "strftime() argument 1 must be str, not {}",
                    fmt.type_name()
                ));
            };
            Ok(Value::string(super::format::strftime_now(&ev.context().clock, f)?))
        }
        "lipsum" => Err(err!(
            TemplateRuntimeError,
            "lipsum() produces random text and is not supported"
        )),
        _ => Err(err!(TypeError, "'{name}' is not callable")),
    }
}

fn fill_dict<'a>(d: &mut Dict<'a>, src: &Value<'a>) -> Result<()> {
    if src.is_mapping() {
        src.for_each_pair(|k, v| d.insert(k, v));
        return Ok(());
    }
    for (i, item) in src.iterate()?.iter().enumerate() {
        let pair = item.iterate().map_err(|_| {
            err!(
                TypeError,
                "cannot convert dictionary update sequence element #{i} to a sequence"
            )
        })?;
        if pair.len() != 2 {
            return Err(err!(
                ValueError,
                "dictionary update sequence element #{i} has length {}; 2 is required",
                pair.len()
            ));
        }
        d.insert(pair[0].clone(), pair[1].clone());
    }
    Ok(())
}

/// transformers' namespace refuses underscore-prefixed attribute names.
pub fn check_namespace_name(name: &str) -> Result<()> {
    if name.starts_with('_') {
        let mut r = String::new();
        crate::pystr::str_repr(name, &mut r);
        return Err(err!(
            SecurityError,
            "Chat templates cannot store underscore-prefixed attributes on a namespace, but got {r}. Please rename the attribute."
        ));
    }
    Ok(())
}

/// `dict.fromkeys(iterable, value=None)`.
pub fn dict_fromkeys<'a>(args: CallArgs<'a>) -> Result<Value<'a>> {
    let [keys, value] = args.bind("fromkeys", ["iterable", "value"])?;
    let keys = keys.ok_or_else(|| err!(TypeError, "fromkeys expected at least 1 argument, got 0"))?;
    let value = value.unwrap_or(Value::None);
    let mut d = Dict::default();
    for k in keys.iterate()?.iter() {
        crate::builtins::filters::check_hashable(k)?;
        d.insert(k.clone(), value.clone());
    }
    Ok(Value::Dict(Rc::new(d)))
}

/// Calls a joiner: empty the first time, the separator after.
pub fn call_joiner<'a>(sep: &Value<'a>, used: &Cell<bool>) -> Value<'a> {
    if used.replace(true) {
        sep.clone()
    } else {
        Value::Str("")
    }
}

/// The attributes of `loop`.
pub fn loop_attribute<'a>(obj: &Value<'a>, l: &LoopValue<'a>, name: &'a str) -> Option<Value<'a>> {
    let i = l.index0.get();
    let n = l.items.len();
    Some(match name {
        "index" => Value::Int(i as i64 + 1),
        "index0" => Value::Int(i as i64),
        "revindex" => Value::Int((n - i) as i64),
        "revindex0" => Value::Int((n - i - 1) as i64),
        "first" => Value::Bool(i == 0),
        "last" => Value::Bool(i + 1 == n),
        "length" => Value::Int(n as i64),
        "depth" => Value::Int(l.depth0 as i64 + 1),
        "depth0" => Value::Int(l.depth0 as i64),
        "previtem" => match i.checked_sub(1) {
            Some(p) => l.items[p].clone(),
            None => Value::Undefined(Some(Rc::new(UndefInfo::Hint(
                "there is no previous item".into(),
                ErrorKind::UndefinedError,
            )))),
        },
        "nextitem" => match l.items.get(i + 1) {
            Some(v) => v.clone(),
            None => Value::Undefined(Some(Rc::new(UndefInfo::Hint(
                "there is no next item".into(),
                ErrorKind::UndefinedError,
            )))),
        },
        "cycle" | "changed" => Value::Object(Rc::new(Object::Method(obj.clone(), name))),
        _ => return None,
    })
}

/// The methods of `loop`: `cycle(...)` and `changed(...)`.
pub fn loop_method<'a>(l: &LoopValue<'a>, name: &str, args: CallArgs<'a>) -> Result<Value<'a>> {
    match name {
        "cycle" => {
            if args.pos.is_empty() {
                return Err(err!(TypeError, "no items for cycling given"));
            }
            Ok(args.pos[l.index0.get() % args.pos.len()].clone())
        }
        _ => {
            let mut last = l.changed_last.borrow_mut();
            let same = last.as_ref().is_some_and(|prev| {
                prev.len() == args.pos.len() && prev.iter().zip(args.pos.iter()).all(|(a, b)| a.py_eq(b))
            });
            if same {
                return Ok(Value::Bool(false));
            }
            *last = Some(args.pos);
            Ok(Value::Bool(true))
        }
    }
}
