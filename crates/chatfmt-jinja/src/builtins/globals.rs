//! Global functions (`range`, `dict`, `namespace`, `raise_exception`, `strftime_now`, ...), the
//! `loop` object's attributes, and the bodies of the methods of `loop` and `cycler`.

use super::args::{Bound, CallArgs, Signature};
use super::entry::{bad_argument, wrong_receiver, MethodCall};
use crate::context::Clock;
use crate::error::{err, Error, ErrorKind, Result};
use crate::value::{range_len, Dict, LoopValue, Object, UndefInfo, Value};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Jinja2's sandbox cap on `range()`.
pub const MAX_RANGE: usize = 100_000;

fn int_param(v: &Value) -> Result<i128> {
    match v {
        Value::Int(i) => Ok(i128::from(*i)),
        Value::Bool(b) => Ok(i128::from(*b)),
        Value::BigInt(b) => i128::try_from(&**b).map_err(|_| err!(LimitExceeded, "range bounds beyond 128 bits")),
        _ => Err(err!(
            TypeError,
            "'{}' object cannot be interpreted as an integer",
            v.type_name()
        )),
    }
}

pub(super) fn range<'a>(_: &Clock, b: Bound<'a>) -> Result<Value<'a>> {
    let p: Vec<i128> = b.rest.iter().map(int_param).collect::<Result<_>>()?;
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

/// The mapping `dict(...)` and `namespace(...)` build from their arguments.
fn dict_of<'a>(b: Bound<'a>) -> Result<Dict<'a>> {
    let mut d = Dict::default();
    if b.rest.len() > 1 {
        return Err(err!(
            TypeError,
            "dict expected at most 1 argument, got {}",
            b.rest.len()
        ));
    }
    if let Some(first) = b.rest.first() {
        fill_dict(&mut d, first)?;
    }
    crate::limits::charge_items(b.kwrest.len())?;
    for (k, v) in b.kwrest {
        d.insert_str(k, v);
    }
    Ok(d)
}

pub(super) fn dict<'a>(_: &Clock, b: Bound<'a>) -> Result<Value<'a>> {
    Ok(Value::Dict(Rc::new(dict_of(b)?)))
}

pub(super) fn namespace<'a>(_: &Clock, b: Bound<'a>) -> Result<Value<'a>> {
    let d = dict_of(b)?;
    for k in d.keys() {
        if let Some(name) = k.as_str() {
            check_namespace_name(name)?;
        }
    }
    Ok(Value::Object(Rc::new(Object::Namespace(RefCell::new(d)))))
}

pub(super) fn cycler<'a>(_: &Clock, b: Bound<'a>) -> Result<Value<'a>> {
    if b.rest.is_empty() {
        return Err(err!(RuntimeError, "at least one item has to be provided"));
    }
    Ok(Value::Object(Rc::new(Object::Cycler(b.rest, Cell::new(0)))))
}

pub(super) fn joiner<'a>(_: &Clock, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [sep] = b.take();
    Ok(Value::Object(Rc::new(Object::Joiner(
        sep.unwrap_or(Value::Str(", ")),
        Cell::new(false),
    ))))
}

pub(super) fn raise_exception<'a>(_: &Clock, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [message] = b.take();
    Err(Error::new(
        ErrorKind::TemplateError,
        message.map(|m| m.to_py_str()).unwrap_or_default(),
    ))
}

pub(super) fn strftime_now<'a>(clock: &Clock, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [fmt] = b.take();
    let fmt = fmt.unwrap_or(Value::None);
    let Some(f) = fmt.as_str() else {
        return Err(bad_argument("strftime", "argument 1", "str", &fmt));
    };
    Ok(Value::string(super::format::strftime_now(clock, f)?))
}

fn fill_dict<'a>(d: &mut Dict<'a>, src: &Value<'a>) -> Result<()> {
    // `dict(x)` first looks up `x.keys`, which an undefined value refuses.
    if src.is_undefined() {
        return Err(src.undefined_error());
    }
    if src.is_mapping() {
        crate::limits::charge_items(src.py_len()?)?;
        let mut r = Ok(());
        src.for_each_pair(|k, v| {
            if r.is_ok() {
                r = d.insert(k, v);
            }
        });
        return r;
    }
    let items = src.iterate()?;
    crate::limits::charge_items(items.len())?;
    for (i, item) in items.iter().enumerate() {
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
        d.insert(pair[0].clone(), pair[1].clone())?;
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

/// Calls a joiner: empty the first time, the separator after.
pub fn call_joiner<'a>(sep: &Value<'a>, used: &Cell<bool>, args: &CallArgs<'a>) -> Result<Value<'a>> {
    args.bind_sig(&Signature::def("Joiner.__call__", &["self"], 1, 1, &[]))?;
    Ok(if used.replace(true) {
        sep.clone()
    } else {
        Value::Str("")
    })
}

/// Words of the generated placeholder text.
const LOREM_WORDS: &[&str] = &[
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
    "aliqua",
    "enim",
    "ad",
    "minim",
    "veniam",
    "quis",
    "nostrud",
    "exercitation",
    "ullamco",
    "laboris",
    "nisi",
    "aliquip",
    "ex",
    "ea",
    "commodo",
    "consequat",
    "duis",
    "aute",
    "irure",
    "in",
    "reprehenderit",
    "voluptate",
    "velit",
    "esse",
    "cillum",
    "fugiat",
    "nulla",
    "pariatur",
    "excepteur",
    "sint",
    "occaecat",
    "cupidatat",
    "non",
    "proident",
    "sunt",
    "culpa",
    "qui",
    "officia",
    "deserunt",
    "mollit",
    "anim",
    "id",
    "est",
    "laborum",
];

/// A small pseudo-random source for `lipsum` (seeded from the clock; the text is random anyway).
struct Rng(u64);

impl Rng {
    fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x9e37_79b9, |d| d.as_nanos() as u64);
        Rng(nanos | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Python's `randrange(lo, hi)`, with its error for an empty range.
    fn randrange(&mut self, lo: i64, hi: i64) -> Result<i64> {
        let width = hi.saturating_sub(lo);
        if width <= 0 {
            return Err(err!(ValueError, "empty range for randrange() ({lo}, {hi}, {width})"));
        }
        Ok(lo + (self.next() % width as u64) as i64)
    }
}

/// A bound of `randrange()`: an integer, or what `int()` makes of it when it equals the value.
fn randrange_arg(v: &Value, which: &str) -> Result<i64> {
    let non_integer = || err!(ValueError, "non-integer {which} for randrange()");
    match v {
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::Float(f) if f.is_nan() => Err(err!(ValueError, "cannot convert float NaN to integer")),
        Value::Float(f) if f.is_infinite() => Err(err!(OverflowError, "cannot convert float infinity to integer")),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => Ok(*f as i64),
        Value::Float(_) => Err(non_integer()),
        Value::Undefined(_) => Err(v.undefined_error()),
        _ if v.is_str() => match crate::pystr::parse_int(v.as_str().unwrap_or(""), 10) {
            Ok(_) => Err(non_integer()),
            Err(_) => {
                let mut r = String::new();
                v.write_repr(&mut r);
                Err(err!(ValueError, "invalid literal for int() with base 10: {r}"))
            }
        },
        _ => Err(err!(
            TypeError,
            "int() argument must be a string, a bytes-like object or a real number, not '{}'",
            v.type_name()
        )),
    }
}

/// `lipsum(n=5, html=True, min=20, max=100)`: `n` paragraphs of `min` to `max - 1` random words.
pub(super) fn lipsum<'a>(_: &Clock, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [n, html, min, max] = b.take();
    let n = n.as_ref().map_or(Ok(5), int_param)?;
    let html = html.is_none_or(|h| h.truthy());
    let mut rng = Rng::new();
    let mut paragraphs = Vec::new();
    for _ in 0..n.max(0) {
        let lo = min.as_ref().map_or(Ok(20), |m| randrange_arg(m, "arg 1"))?;
        let hi = max.as_ref().map_or(Ok(100), |m| randrange_arg(m, "stop"))?;
        let count = rng.randrange(lo, hi)?;
        let mut words: Vec<String> = Vec::new();
        let (mut last_comma, mut last_fullstop) = (0, 0);
        let mut capitalize = true;
        let mut last = "";
        for idx in 0..count.max(0) {
            let word = loop {
                let w = LOREM_WORDS[(rng.next() % LOREM_WORDS.len() as u64) as usize];
                if w != last {
                    break w;
                }
            };
            last = word;
            let mut text = if capitalize {
                capitalize = false;
                crate::pystr::capitalize(word)
            } else {
                word.to_string()
            };
            if idx - rng.randrange(3, 8)? > last_comma {
                last_comma = idx;
                last_fullstop += 2;
                text.push(',');
            }
            if idx - rng.randrange(10, 20)? > last_fullstop {
                last_comma = idx;
                last_fullstop = idx;
                text.push('.');
                capitalize = true;
            }
            words.push(text);
        }
        let mut p = words.join(" ");
        if p.ends_with(',') {
            p.pop();
            p.push('.');
        } else if !p.ends_with('.') {
            p.push('.');
        }
        paragraphs.push(p);
        crate::limits::check_value_size(paragraphs.iter().map(String::len).sum())?;
    }
    if !html {
        return Ok(Value::string(paragraphs.join("\n\n")));
    }
    let mut out = String::new();
    for (i, p) in paragraphs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("<p>");
        crate::pystr::escape_into(p, &mut out);
        out.push_str("</p>");
    }
    Ok(Value::Safe(out.into()))
}

/// The attributes of `loop`.
pub fn loop_attribute<'a>(l: &LoopValue<'a>, name: &'a str) -> Option<Value<'a>> {
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
        "previtem" => match i.checked_sub(1).and_then(|p| l.items.get(p)) {
            Some(v) => v,
            None => Value::Undefined(Some(Rc::new(UndefInfo::Hint(
                "there is no previous item".into(),
                ErrorKind::UndefinedError,
            )))),
        },
        "nextitem" => match l.items.get(i + 1) {
            Some(v) => v,
            None => Value::Undefined(Some(Rc::new(UndefInfo::Hint(
                "there is no next item".into(),
                ErrorKind::UndefinedError,
            )))),
        },
        _ => return None,
    })
}

/// The `loop` a method of it is called on.
fn the_loop<'r, 'a>(recv: &'r Value<'a>, c: &MethodCall<'a>) -> Result<&'r LoopValue<'a>> {
    match recv {
        Value::Object(o) => match &**o {
            Object::Loop(l) => Ok(l),
            _ => Err(wrong_receiver(c, recv)),
        },
        _ => Err(wrong_receiver(c, recv)),
    }
}

/// `loop.cycle(*args)`: the argument at the loop's index, cycling.
pub fn loop_cycle<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let l = the_loop(recv, &c)?;
    let args = &c.given.pos;
    if args.is_empty() {
        return Err(err!(TypeError, "no items for cycling given"));
    }
    Ok(args[l.index0.get() % args.len()].clone())
}

/// `loop.changed(*value)`: whether the arguments differ from the last call's.
pub fn loop_changed<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let l = the_loop(recv, &c)?;
    let mut last = l.changed_last.borrow_mut();
    let args = c.given.pos;
    let same = last
        .as_ref()
        .is_some_and(|prev| prev.len() == args.len() && prev.iter().zip(args.iter()).all(|(a, b)| a.py_eq(b)));
    if same {
        return Ok(Value::Bool(false));
    }
    *last = Some(args);
    Ok(Value::Bool(true))
}

/// The items and position of the cycler a method of it is called on.
fn the_cycler<'r, 'a>(recv: &'r Value<'a>, c: &MethodCall<'a>) -> Result<(&'r [Value<'a>], &'r Cell<usize>)> {
    match recv {
        Value::Object(o) => match &**o {
            Object::Cycler(items, pos) => Ok((items, pos)),
            _ => Err(wrong_receiver(c, recv)),
        },
        _ => Err(wrong_receiver(c, recv)),
    }
}

/// `cycler.next()`: the current item, moving on to the next.
pub fn cycler_next<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let (items, pos) = the_cycler(recv, &c)?;
    let v = items.get(pos.get()).cloned().unwrap_or(Value::None);
    pos.set((pos.get() + 1) % items.len().max(1));
    Ok(v)
}

/// `cycler.reset()`: back to the first item.
pub fn cycler_reset<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    the_cycler(recv, &c)?.1.set(0);
    Ok(Value::None)
}
