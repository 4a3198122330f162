//! Jinja2's built-in filters.

use super::args::{Bound, CallArgs};
use super::entry::Builtin;
use super::json::{dumps, DumpOptions};
use super::table::{FILTERS, TESTS};
use crate::error::{err, Result};
use crate::pystr::{self, escape_into, is_py_space};
use crate::value::{check_hashable, sort_values, LoopItems, Object, UndefInfo, Value};
use serde_json::Value as Json;
use std::cmp::Ordering;
use std::rc::Rc;

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
    if let Value::Iter(g) = v {
        return Err(err!(TypeError, "object of type '{}' has no len()", g.kind()));
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
        if !p.contains('.') && !pystr::isdigit(p) {
            if let Some(j) = crate::value::json_map_get(m, p) {
                return Ok(Value::from_json(j));
            }
        }
    }
    let mut cur = item.clone();
    for part in p.split('.') {
        // A part that `str.isdigit()` accepts is `int(part)` (which refuses digits that are not
        // decimal, such as `'²'`).
        let key = match part.parse::<i64>() {
            Ok(i) if part.bytes().all(|b| b.is_ascii_digit()) => Value::Int(i),
            _ if pystr::isdigit(part) => Value::from_bigint(pystr::parse_int(part, 10).map_err(crate::error::py_err)?),
            _ => match path {
                Value::Str(s) => {
                    let start = part.as_ptr() as usize - s.as_ptr() as usize;
                    Value::Str(&s[start..start + part.len()])
                }
                Value::Safe(_) => Value::Safe(part.into()),
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

/// Jinja2's `make_attrgetter` turns its path into parts when the filter is called, so a part that
/// `int()` refuses (digits that are not decimal, such as `'²'`) fails then, before the value is read.
fn check_attr_path(attribute: Option<&Value>) -> Result<()> {
    for part in attribute.and_then(Value::as_str).into_iter().flat_map(|p| p.split('.')) {
        if !part.bytes().all(|b| b.is_ascii_digit()) && pystr::isdigit(part) {
            pystr::parse_int(part, 10).map_err(crate::error::py_err)?;
        }
    }
    Ok(())
}

/// The sort key of `make_multi_attrgetter`: a list of the (comma-separated) attributes' values.
fn multi_key<'a>(item: &Value<'a>, attribute: &Option<Value<'a>>, case_sensitive: bool) -> Result<Value<'a>> {
    let parts = match attribute {
        Some(a) if a.as_str().is_some_and(|s| s.contains(',')) => {
            let s = a.as_str().unwrap_or("");
            s.split(',')
                .map(|p| match a {
                    Value::Safe(_) => Value::Safe(p.into()),
                    _ => Value::string(p),
                })
                .collect()
        }
        _ => vec![attribute.clone().unwrap_or(Value::None)],
    };
    let mut key = Vec::with_capacity(parts.len());
    for part in &parts {
        let v = match part {
            Value::None => item.clone(),
            p => attr_path(item, p)?,
        };
        key.push(ignore_case(v, case_sensitive));
    }
    Ok(Value::list(key))
}

fn bool_arg(v: &Option<Value>) -> bool {
    v.as_ref().is_some_and(|v| v.truthy())
}

/// A parameter whose Python default is `None`: an explicit `none` is the default too.
fn or_default<'a>(v: Option<Value<'a>>) -> Option<Value<'a>> {
    v.filter(|v| !matches!(v, Value::None))
}

/// An argument read through `__index__` into a C `ssize_t` (`c_int`: into a C `int`).
fn index_arg(v: &Value, c_int: bool) -> Result<i64> {
    let too_large = || {
        let ty = if c_int { "int" } else { "ssize_t" };
        err!(OverflowError, "Python int too large to convert to C {ty}")
    };
    match v {
        Value::Int(i) if c_int && i32::try_from(*i).is_err() => Err(too_large()),
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::BigInt(_) => Err(too_large()),
        _ => Err(err!(
            TypeError,
            "'{}' object cannot be interpreted as an integer",
            v.type_name()
        )),
    }
}

/// Python `int(x)` of a float: the integer toward zero, however large.
fn float_to_int<'a>(x: f64) -> Result<Value<'a>> {
    if x.is_nan() {
        return Err(err!(ValueError, "cannot convert float NaN to integer"));
    }
    if x.is_infinite() {
        return Err(err!(OverflowError, "cannot convert float infinity to integer"));
    }
    let t = x.trunc();
    if t.abs() < 9.0e18 {
        return Ok(Value::Int(t as i64));
    }
    // |t| >= 2^53: an integer mantissa times a power of two.
    let bits = t.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1075;
    let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let mut b = num_bigint::BigInt::from(mantissa);
    b = if exp >= 0 {
        b << exp as usize
    } else {
        b >> (-exp) as usize
    };
    if t < 0.0 {
        b = -b;
    }
    Ok(Value::from_bigint(b))
}

/// The count of `sequence * n` for a value `n`, with the errors of Python's sequence repetition.
fn repeat_count(n: &Value) -> Result<usize> {
    match n {
        Value::Int(i) => Ok((*i).max(0) as usize),
        Value::Bool(b) => Ok(usize::from(*b)),
        Value::BigInt(b) if b.sign() == num_bigint::Sign::Minus => Ok(0),
        Value::BigInt(_) => Err(err!(OverflowError, "cannot fit 'int' into an index-sized integer")),
        Value::Undefined(_) => Err(n.undefined_error()),
        _ => Err(err!(
            TypeError,
            "can't multiply sequence by non-int of type '{}'",
            n.type_name()
        )),
    }
}

/// `s * n` for a value `n`.
fn repeat_str(s: &str, n: &Value) -> Result<String> {
    let count = repeat_count(n)?;
    crate::limits::check_value_size(s.len().saturating_mul(count))?;
    Ok(s.repeat(count))
}

/// `a, b = item`: the two values, or the errors of Python's unpacking.
fn unpack2<'a>(item: &Value<'a>) -> Result<(Value<'a>, Value<'a>)> {
    let parts = item
        .iterate()
        .map_err(|_| err!(TypeError, "cannot unpack non-iterable {} object", item.type_name()))?;
    match parts.as_slice() {
        [a, b] => Ok((a.clone(), b.clone())),
        p if p.len() < 2 => Err(err!(
            ValueError,
            "not enough values to unpack (expected 2, got {})",
            p.len()
        )),
        _ => Err(err!(ValueError, "too many values to unpack (expected 2)")),
    }
}

/// `getattr(x, name)` failing for an object without that attribute (a method Jinja2 calls).
fn no_attribute(v: &Value, name: &str) -> crate::error::Error {
    match v {
        Value::Undefined(_) => v.undefined_error(),
        Value::Object(o) if matches!(&**o, Object::Namespace(_)) => err!(AttributeError, "{name}"),
        _ => err!(AttributeError, "'{}' object has no attribute '{name}'", v.type_name()),
    }
}

/// `d.items()` of Jinja2's filters: the pairs of a mapping, or the error of the attribute lookup.
fn mapping_items<'a>(v: &Value<'a>) -> Result<Vec<(Value<'a>, Value<'a>)>> {
    if let Value::Object(o) = v {
        if let Object::Cycler(..) = &**o {
            return Err(err!(TypeError, "'tuple' object is not callable"));
        }
    }
    if !v.is_mapping() {
        return Err(no_attribute(v, "items"));
    }
    let mut pairs = Vec::new();
    v.for_each_pair(|k, x| pairs.push((k, x)));
    Ok(pairs)
}

/// Whether Python's `reversed()` accepts the value.
fn is_reversible(v: &Value) -> bool {
    v.is_str()
        || v.is_sequence_like()
        || v.is_mapping()
        || v.is_undefined()
        || matches!(v, Value::Object(o) if matches!(&**o, Object::Range(..) | Object::Group(..) | Object::View(..)))
}

/// Jinja2's `ignore_case`: strings lowercased, everything else as it is.
fn ignore_case<'a>(v: Value<'a>, case_sensitive: bool) -> Value<'a> {
    match v.as_str() {
        Some(s) if !case_sensitive => Value::string(pystr::lower(s)),
        _ => v,
    }
}

/// The getter of Jinja2's `make_attrgetter`: `attribute` (`None`: the item itself) looked up on
/// the item, an undefined step replaced by `default`.
fn get_attr<'a>(item: &Value<'a>, attribute: Option<&Value<'a>>, default: Option<&Value<'a>>) -> Result<Value<'a>> {
    match attribute {
        None => Ok(item.clone()),
        Some(a) => attr_path_or(item, a, default),
    }
}

/// Looks up the filter or test `name` (any value) in the environment's map, as `dict.get` does.
fn lookup_name<'t, F>(kind: &str, name: &Value, table: &'t [Builtin<F>]) -> Result<&'t Builtin<F>> {
    check_hashable(name)?;
    if let Some(b) = name.as_str().and_then(|n| table.iter().find(|b| b.name == n)) {
        return Ok(b);
    }
    let mut msg = format!("No {kind} named ");
    name.write_repr(&mut msg);
    msg.push('.');
    if name.is_undefined() {
        let e = name.undefined_error();
        msg.push_str(&format!(
            " ({}; did you forget to quote the callable name?)",
            e.message()
        ));
    }
    Err(err!(TemplateRuntimeError, "{msg}"))
}

pub(super) fn do_select<'a>(v: Value<'a>, b: Bound<'a>) -> Result<Value<'a>> {
    select_like(v, b, false, true)
}

pub(super) fn do_reject<'a>(v: Value<'a>, b: Bound<'a>) -> Result<Value<'a>> {
    select_like(v, b, false, false)
}

pub(super) fn do_selectattr<'a>(v: Value<'a>, b: Bound<'a>) -> Result<Value<'a>> {
    select_like(v, b, true, true)
}

pub(super) fn do_rejectattr<'a>(v: Value<'a>, b: Bound<'a>) -> Result<Value<'a>> {
    select_like(v, b, true, false)
}

/// The `(context, value, *args, **kwargs)` filters `select`, `reject`, `selectattr`, `rejectattr`:
/// the items whose value (or attribute) passes the test, or fails it.
fn select_like<'a>(v: Value<'a>, b: Bound<'a>, by_attr: bool, keep_when: bool) -> Result<Value<'a>> {
    // Jinja2 reads the arguments and iterates only `if value:`: a falsy input selects nothing.
    if !v.truthy() {
        return Ok(Value::generator(Vec::new()));
    }
    // The attribute and the test lead the positional arguments; the test's own follow, kept in
    // the same list.
    let mut pos = b.rest;
    let lead = usize::from(by_attr) + 1;
    let mut head = pos.drain(..lead.min(pos.len()));
    let attr = match by_attr {
        true => Some(
            head.next()
                .ok_or_else(|| err!(FilterArgumentError, "Missing parameter for attribute name"))?,
        ),
        false => None,
    };
    let test = head.next();
    drop(head);
    let test_args = CallArgs { pos, kw: b.kwrest };
    // A list of the caller's JSON is read in place; anything else as its items.
    let items = match &v {
        Value::Json(Json::Array(a)) => LoopItems::Json(a),
        _ => LoopItems::Values(v.iterate()?),
    };
    crate::limits::charge_items(items.len())?;
    let mut out = Vec::with_capacity(items.len());
    // The test and its bound arguments, found and bound at the first item (where Jinja2 would
    // first fail to), then reused.
    let mut bound_test = None;
    // For `equalto` (`eq`, `==`), the value compared with, taken from the bound arguments once.
    let mut equal_to = None;
    for item in (0..items.len()).filter_map(|i| items.get(i)) {
        let subject = get_attr(&item, attr.as_ref().filter(|a| !matches!(a, Value::None)), None)?;
        let ok = match &test {
            None => subject.truthy(),
            Some(t) => {
                let (t, bound) = match &bound_test {
                    Some(found) => found,
                    None => {
                        let t = lookup_name("test", t, TESTS)?;
                        // `operator.eq` binds only one positional argument: that one is compared
                        // with directly; any other call fails in the binder.
                        let is_eq = matches!(t.name, "eq" | "equalto" | "==");
                        match (&test_args.pos[..], test_args.kw.is_empty(), is_eq) {
                            ([other], true, true) => {
                                equal_to = Some(other.clone());
                                bound_test.insert((t, Bound::default()))
                            }
                            _ => bound_test.insert((t, test_args.bind_sig(&t.sig)?)),
                        }
                    }
                };
                match &equal_to {
                    Some(other) => subject.py_eq(other),
                    None => (t.run)(&subject, bound.clone())?,
                }
            }
        };
        if ok == keep_when {
            out.push(item);
        }
    }
    Ok(Value::generator(out))
}

/// `map(name, *args, **kwargs)` or `map(attribute=..., default=...)`.
pub(super) fn map_filter<'a>(v: Value<'a>, b: Bound<'a>) -> Result<Value<'a>> {
    // As in Jinja2, the arguments are read and the input iterated only `if value:`.
    if !v.truthy() {
        return Ok(Value::generator(Vec::new()));
    }
    let mut kw = b.kwrest;
    let mut out = Vec::new();
    let items = |v: &Value<'a>| -> Result<Rc<Vec<Value<'a>>>> {
        let items = v.iterate()?;
        crate::limits::charge_items(items.len())?;
        Ok(items)
    };
    if b.rest.is_empty() && kw.iter().any(|(k, _)| *k == "attribute") {
        let mut take = |name: &str| kw.iter().position(|(k, _)| *k == name).map(|i| kw.remove(i).1);
        let attribute = take("attribute");
        let default = or_default(take("default"));
        if let Some((k, _)) = kw.first() {
            let mut r = String::new();
            pystr::str_repr(k, &mut r);
            return Err(err!(FilterArgumentError, "Unexpected keyword argument {r}"));
        }
        let attribute = attribute.filter(|a| !matches!(a, Value::None));
        for item in items(&v)?.iter() {
            out.push(get_attr(item, attribute.as_ref(), default.as_ref())?);
        }
    } else {
        let mut pos = b.rest.into_iter();
        let f = pos
            .next()
            .ok_or_else(|| err!(FilterArgumentError, "map requires a filter argument"))?;
        let pos: Vec<Value<'a>> = pos.collect();
        for item in items(&v)?.iter() {
            let filter = lookup_name("filter", &f, FILTERS)?;
            let a = CallArgs {
                pos: pos.clone(),
                kw: kw.clone(),
            };
            let mapped = super::call_filter(filter, item.clone(), a)?;
            super::charge_result(&mapped)?;
            out.push(mapped);
        }
    }
    Ok(Value::generator(out))
}

pub(super) fn do_default<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [default, boolean] = b.take();
    Ok(if v.is_undefined() || (bool_arg(&boolean) && !v.truthy()) {
        default.unwrap_or(Value::Str(""))
    } else {
        v
    })
}

pub(super) fn do_length<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    no_len_iter(&v)?;
    Ok(Value::Int(v.py_len()? as i64))
}

pub(super) fn do_string<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    Ok(soft_str(&v))
}

/// `s` without leading and trailing whitespace, as Python's `str.strip()` gives it.
pub(super) fn trim_space(s: &str) -> &str {
    // Text that starts and ends with an ASCII character other than whitespace is kept whole.
    let kept = |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii() && !is_py_space(char::from(b)));
    if kept(s.as_bytes().first()) && kept(s.as_bytes().last()) {
        return s;
    }
    s.trim_matches(is_py_space)
}

pub(super) fn do_trim<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [chars] = b.take();
    let chars = match chars {
        None | Some(Value::None) => None,
        Some(c) if c.is_str() => Some(c),
        Some(_) => return Err(err!(TypeError, "strip arg must be None or str")),
    };
    let s = soft_str(&v);
    let text = s.as_str().unwrap_or("");
    let r = match chars.as_ref().and_then(|c| c.as_str()) {
        Some(set) => text.trim_matches(|c| set.contains(c)),
        None => trim_space(text),
    };
    let start = r.as_ptr() as usize - text.as_ptr() as usize;
    Ok(s.substr(start, start + r.len()))
}

/// A string made from `v` by a `str` method: Markup when `v` is, as `Markup`'s methods return it.
fn like<'a>(v: &Value<'a>, s: String) -> Value<'a> {
    match v {
        Value::Safe(_) => Value::Safe(s.into()),
        _ => Value::string(s),
    }
}

pub(super) fn do_upper<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    Ok(like(&v, pystr::upper(soft_str(&v).as_str().unwrap_or(""))))
}

pub(super) fn do_lower<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    Ok(like(&v, pystr::lower(soft_str(&v).as_str().unwrap_or(""))))
}

pub(super) fn do_capitalize<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    Ok(like(&v, pystr::capitalize(soft_str(&v).as_str().unwrap_or(""))))
}

pub(super) fn do_title<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    Ok(Value::string(pystr::jinja_title(soft_str(&v).as_str().unwrap_or(""))))
}

pub(super) fn do_safe<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    Ok(Value::Safe(v.to_py_str().into()))
}

pub(super) fn do_escape<'a>(v: Value<'a>, b: Bound<'a>) -> Result<Value<'a>> {
    if let Value::Safe(_) = v {
        return Ok(v);
    }
    do_forceescape(v, b)
}

pub(super) fn do_forceescape<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    let mut out = String::new();
    escape_into(&v.to_py_str(), &mut out);
    Ok(Value::Safe(out.into()))
}

pub(super) fn do_items<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    if v.is_undefined() {
        return Ok(Value::generator(Vec::new()));
    }
    if !v.is_mapping() {
        return Err(err!(TypeError, "Can only get item pairs from a mapping."));
    }
    let mut out = Vec::new();
    v.for_each_pair(|k, x| out.push(Value::Tuple(Rc::new(vec![k, x]))));
    Ok(Value::generator(out))
}

pub(super) fn do_list<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    // A generator's items become the list as they are: a list is never changed in place.
    if let Value::Iter(g) = &v {
        let items = g.drain();
        crate::limits::charge_values(items.len())?;
        return Ok(Value::List(items));
    }
    let items = v.iterate()?;
    crate::limits::charge_values(items.len())?;
    Ok(Value::list(items.to_vec()))
}

pub(super) fn do_join<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [sep, attribute] = b.take();
    let attribute = or_default(attribute);
    let sep = sep.map(|s| s.to_py_str()).unwrap_or_default();
    check_attr_path(attribute.as_ref())?;
    let mut out = String::new();
    let items = v.iterate()?;
    crate::limits::charge_items(items.len())?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(&sep);
        }
        get_attr(item, attribute.as_ref(), None)?.write_str(&mut out);
        crate::limits::check_value_size(out.len())?;
    }
    Ok(Value::string(out))
}

pub(super) fn do_first<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    // `next(iter(seq))`: a generator gives up one item.
    if let Value::Iter(g) = &v {
        return Ok(g
            .next_item()
            .unwrap_or_else(|| undefined_hint("No first item, sequence was empty.")));
    }
    Ok(match v.iterate()?.first() {
        Some(x) => x.clone(),
        None => undefined_hint("No first item, sequence was empty."),
    })
}

pub(super) fn do_last<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    if !is_reversible(&v) {
        return Err(err!(TypeError, "'{}' object is not reversible", v.type_name()));
    }
    Ok(match v.iterate()?.last() {
        // `reversed()` indexes a Markup string, and `Markup[i]` is Markup.
        Some(x) if matches!(v, Value::Safe(_)) => Value::Safe(x.to_py_str().into()),
        Some(x) => x.clone(),
        None => undefined_hint("No last item, sequence was empty."),
    })
}

pub(super) fn do_reverse<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    if let Some(s) = v.as_str() {
        let r: String = s.chars().rev().collect();
        return Ok(like(&v, r));
    }
    let mut items = v
        .iterate()
        .map_err(|_| err!(FilterArgumentError, "argument must be iterable"))?
        .to_vec();
    crate::limits::charge_values(items.len())?;
    items.reverse();
    // `reversed(value)`, whose type depends on the value's; a value that is not reversible (a
    // generator) becomes a reversed list.
    let kind = match &v {
        Value::Json(Json::Array(_)) | Value::List(_) => "list_reverseiterator",
        Value::Json(_) | Value::Dict(_) => "dict_reversekeyiterator",
        Value::Object(o) => match &**o {
            Object::View("dict_values", ..) => "dict_reversevalueiterator",
            Object::View("dict_items", ..) => "dict_reverseitemiterator",
            Object::View(..) => "dict_reversekeyiterator",
            Object::Range(..) => "range_iterator",
            Object::Group(..) | Object::Bytes(_) => "reversed",
            _ => return Ok(Value::list(items)),
        },
        // Undefined has `__len__` (0) and `__getitem__`: `reversed` takes it as a sequence.
        Value::Tuple(_) | Value::Undefined(_) => "reversed",
        _ => return Ok(Value::list(items)),
    };
    Ok(Value::iterator(kind, items))
}

//ALIAS select,reject,selectattr,rejectattr -> select_like
//ALIAS map -> map_filter
pub(super) fn do_dictsort<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [case_sensitive, by, reverse] = b.take();
    let by_value = match &by {
        None => false,
        Some(b) if b.as_str() == Some("key") => false,
        Some(b) if b.as_str() == Some("value") => true,
        Some(_) => {
            return Err(err!(
                FilterArgumentError,
                "You can only sort by either \"key\" or \"value\""
            ))
        }
    };
    let pairs = mapping_items(&v)?;
    let reverse = match &reverse {
        Some(r) => index_arg(r, true)? != 0,
        None => false,
    };
    let cs = bool_arg(&case_sensitive);
    crate::limits::charge_items(pairs.len())?;
    crate::limits::charge_sort(pairs.len())?;
    let mut keyed = Vec::with_capacity(pairs.len());
    for (k, x) in pairs {
        let key = ignore_case(if by_value { x.clone() } else { k.clone() }, cs);
        keyed.push((key, Value::Tuple(Rc::new(vec![k, x]))));
    }
    sort_values(&mut keyed, reverse)?;
    Ok(Value::list(keyed.into_iter().map(|(_, p)| p).collect()))
}

pub(super) fn do_sort<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [reverse, case_sensitive, attribute] = b.take();
    let cs = bool_arg(&case_sensitive);
    if let Some(a) = attribute.as_ref().and_then(Value::as_str) {
        a.split(',')
            .try_for_each(|part| check_attr_path(Some(&Value::Str(part))))?;
    }
    let items = v.iterate()?;
    let reverse = match &reverse {
        Some(r) => index_arg(r, true)? != 0,
        None => false,
    };
    crate::limits::charge_items(items.len())?;
    crate::limits::charge_sort(items.len())?;
    let mut pairs = Vec::with_capacity(items.len());
    for item in items.iter() {
        pairs.push((multi_key(item, &attribute, cs)?, item.clone()));
    }
    sort_values(&mut pairs, reverse)?;
    Ok(Value::list(pairs.into_iter().map(|(_, p)| p).collect()))
}

pub(super) fn do_unique<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [case_sensitive, attribute] = b.take();
    let attribute = or_default(attribute);
    let cs = bool_arg(&case_sensitive);
    check_attr_path(attribute.as_ref())?;
    let mut seen = crate::value::Set::default();
    let mut out = Vec::new();
    let items = v.iterate()?;
    crate::limits::charge_items(items.len())?;
    for item in items.iter() {
        let key = ignore_case(get_attr(item, attribute.as_ref(), None)?, cs);
        if seen.insert(key)? {
            out.push(item.clone());
        }
    }
    Ok(Value::generator(out))
}

pub(super) fn do_min<'a>(v: Value<'a>, b: Bound<'a>) -> Result<Value<'a>> {
    extreme(v, b, "<", Ordering::Less)
}

pub(super) fn do_max<'a>(v: Value<'a>, b: Bound<'a>) -> Result<Value<'a>> {
    extreme(v, b, ">", Ordering::Greater)
}

/// `min` / `max`: the first item whose key compares `wanted` (by `op`) to every other.
fn extreme<'a>(v: Value<'a>, mut b: Bound<'a>, op: &str, wanted: Ordering) -> Result<Value<'a>> {
    let [case_sensitive, attribute] = b.take();
    let attribute = or_default(attribute);
    let cs = bool_arg(&case_sensitive);
    let mut best: Option<(Value, Value)> = None;
    let items = v.iterate()?;
    crate::limits::charge_items(items.len())?;
    for item in items.iter() {
        let key = ignore_case(get_attr(item, attribute.as_ref(), None)?, cs);
        let better = match &best {
            None => true,
            Some((b, _)) => key.py_cmp(b, op)? == wanted,
        };
        if better {
            best = Some((key, item.clone()));
        }
    }
    Ok(match best {
        Some((_, item)) => item,
        None => undefined_hint("No aggregated item, sequence was empty."),
    })
}

pub(super) fn do_sum<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [attribute, start] = b.take();
    let attribute = or_default(attribute);
    check_attr_path(attribute.as_ref())?;
    let items = v.iterate()?;
    crate::limits::charge_items(items.len())?;
    let mut total = start.unwrap_or(Value::Int(0));
    if total.is_str() {
        return Err(err!(TypeError, "sum() can't sum strings [use ''.join(seq) instead]"));
    }
    for item in items.iter() {
        let x = get_attr(item, attribute.as_ref(), None)?;
        total = total.binary(crate::ast::BinOp::Add, &x)?;
    }
    Ok(total)
}

pub(super) fn do_abs<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    Ok(match v {
        Value::Int(i) => match i.checked_abs() {
            Some(a) => Value::Int(a),
            None => Value::from_bigint(-num_bigint::BigInt::from(i)),
        },
        Value::BigInt(ref n) => Value::from_bigint(if n.sign() == num_bigint::Sign::Minus {
            -(**n).clone()
        } else {
            (**n).clone()
        }),
        Value::Bool(b) => Value::Int(b as i64),
        Value::Float(f) => Value::Float(f.abs()),
        _ => return Err(err!(TypeError, "bad operand type for abs(): '{}'", v.type_name())),
    })
}

//ALIAS round -> round_filter
pub(super) fn do_int<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [default, base] = b.take();
    if v.is_undefined() {
        return Err(v.undefined_error());
    }
    let default = default.unwrap_or(Value::Int(0));
    // `int(value, base)`: a base that is not an integer fails the parse, as a bad base does.
    let base = match base {
        None => Some(10),
        Some(b) => index_arg(&b, false).ok(),
    };
    Ok(match &v {
        Value::Int(_) | Value::BigInt(_) => v,
        Value::Bool(b) => Value::Int(*b as i64),
        Value::Float(f) => int_of_float(*f, default)?,
        _ if v.is_str() => {
            let s = v.as_str().unwrap_or("");
            match base.map(|b| pystr::parse_int(s, b)) {
                Some(Ok(i)) => Value::from_bigint(i),
                Some(Err(e)) if e.kind != pystr::PyErrorKind::ValueError => return Err(crate::error::py_err(e)),
                // After a ValueError Jinja2 tries `int(float(value))`, any error giving the default.
                _ => match pystr::parse_float(s).map(pystr::float_to_int) {
                    Ok(Ok(i)) => Value::from_bigint(i),
                    _ => default,
                },
            }
        }
        _ => default,
    })
}

pub(super) fn do_float<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [default] = b.take();
    if v.is_undefined() {
        return Err(v.undefined_error());
    }
    let default = default.unwrap_or(Value::Float(0.0));
    Ok(match &v {
        Value::Int(i) => Value::Float(*i as f64),
        Value::BigInt(i) => Value::Float(pystr::int_to_float(i).map_err(crate::error::py_err)?),
        Value::Bool(b) => Value::Float(*b as i64 as f64),
        Value::Float(_) => v,
        // Python's `float(s)`; what it refuses gives the default.
        _ if v.is_str() => pystr::parse_float(v.as_str().unwrap_or(""))
            .map(Value::Float)
            .unwrap_or(default),
        _ => default,
    })
}

pub(super) fn do_replace<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [old, new, count] = b.take();
    let s = soft_str(&v);
    let text = s.as_str().unwrap_or("");
    let old = old.map(|o| o.to_py_str()).unwrap_or_default();
    let new = new.map(|o| o.to_py_str()).unwrap_or_default();
    // `str.replace` reads the count through `__index__` (None is Jinja2's -1).
    let count = match count {
        None | Some(Value::None) => -1,
        Some(c) => index_arg(&c, false)?,
    };
    crate::limits::charge_bytes(text.len())?;
    let len = pystr::replaced_len(text, &old, &new, count);
    crate::limits::check_value_size(len)?;
    Ok(Value::string(
        pystr::replace_sized(text, &old, &new, count, len).map_err(crate::error::py_err)?,
    ))
}

//ALIAS indent -> indent_filter
pub(super) fn do_center<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [width] = b.take();
    let w = match width {
        None => 80,
        Some(w) => index_arg(&w, false)?,
    };
    let centered = pystr::center(&v.to_py_str(), w, None).map_err(crate::error::py_err)?;
    Ok(like(&v, centered))
}

pub(super) fn do_wordcount<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    let s = v.to_py_str();
    crate::limits::charge_bytes(s.len())?;
    Ok(Value::Int(pystr::jinja_wordcount(&s) as i64))
}

/// The bytes `tojson` reserves before writing: room for a typical tool schema, so that most
/// dumps never grow their string.
const DUMPS_CAPACITY: usize = 512;

pub(super) fn do_tojson<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [ensure_ascii, indent, separators, sort_keys] = b.take();
    let separators = match separators {
        None | Some(Value::None) => None,
        Some(s) => {
            let (a, b) = unpack2(&s)?;
            Some((a.to_py_str().into(), b.to_py_str().into()))
        }
    };
    let markup_indent = matches!(indent, Some(Value::Safe(_)));
    let indent = match indent {
        None | Some(Value::None) => None,
        // `JSONEncoder.encode` returns a string's JSON before it reads the indent.
        Some(_) if v.is_str() => None,
        Some(s) if s.is_str() => Some(s.to_py_str()),
        Some(n) => Some(repeat_str(" ", &n)?),
    };
    let (item_sep, key_sep) =
        separators.unwrap_or_else(|| (if indent.is_some() { "," } else { ", " }.into(), ": ".into()));
    let opts = DumpOptions {
        ensure_ascii: ensure_ascii.is_some_and(|e| e.truthy()),
        indent,
        item_sep,
        key_sep,
        sort_keys: bool_arg(&sort_keys),
        markup_indent,
    };
    let mut out = String::with_capacity(DUMPS_CAPACITY);
    dumps(&v, &opts, 0, &mut out)?;
    Ok(Value::string(out))
}

pub(super) fn do_attr<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [attribute] = b.take();
    let attribute = attribute.unwrap_or(Value::None);
    let Some(n) = attribute.as_str() else {
        check_hashable(&attribute)?;
        return Err(err!(
            TypeError,
            "attribute name must be string, not '{}'",
            attribute.type_name()
        ));
    };
    if v.is_undefined() && !super::has_private_attr(&v, n) {
        return Err(v.undefined_error());
    }
    let found = match &attribute {
        Value::Str(s) if !s.starts_with('_') => super::attribute(&v, s),
        _ => super::python_attribute(&v, n),
    };
    Ok(found.unwrap_or_else(|| Value::missing_member(&v, attribute.clone())))
}

pub(super) fn do_format<'a>(v: Value<'a>, b: Bound<'a>) -> Result<Value<'a>> {
    if !b.kwrest.is_empty() && !b.rest.is_empty() {
        return Err(err!(
            FilterArgumentError,
            "can't handle positional and keyword arguments at the same time"
        ));
    }
    // `Markup % args` escapes the arguments.
    let safe = matches!(v, Value::Safe(_));
    let s = v.to_py_str();
    let a = if !b.kwrest.is_empty() {
        crate::value::ops::dict_from(b.kwrest.into_iter().map(|(k, v)| (Value::Str(k), v)).collect())?
    } else {
        Value::Tuple(Rc::new(b.rest))
    };
    let out = crate::value::percent::percent_format(&s, &a, safe)?;
    Ok(if safe {
        Value::Safe(out.into())
    } else {
        Value::string(out)
    })
}

pub(super) fn do_batch<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [count, fill] = b.take();
    let count = count.unwrap_or(Value::None);
    let fill = or_default(fill);
    let mut out = Vec::new();
    let mut tmp: Vec<Value> = Vec::new();
    let items = v.iterate()?;
    crate::limits::charge_items(items.len())?;
    for item in items.iter() {
        if Value::Int(tmp.len() as i64).py_eq(&count) {
            out.push(Value::list(std::mem::take(&mut tmp)));
        }
        tmp.push(item.clone());
    }
    if !tmp.is_empty() {
        if let Some(f) = &fill {
            let have = Value::Int(tmp.len() as i64);
            if crate::value::compare(crate::ast::CmpOp::Lt, &have, &count)? {
                let missing = count.binary(crate::ast::BinOp::Sub, &have)?;
                let n = repeat_count(&missing)?;
                crate::limits::check_value_size(n)?;
                tmp.extend(std::iter::repeat_n(f.clone(), n));
            }
        }
        out.push(Value::list(tmp));
    }
    Ok(Value::generator(out))
}

//ALIAS slice -> slice_filter
//ALIAS truncate -> truncate_filter
pub(super) fn do_striptags<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    let s = v.to_py_str();
    crate::limits::charge_bytes(s.len())?;
    Ok(Value::string(pystr::striptags(&s)))
}

pub(super) fn do_pprint<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    let mut out = String::new();
    pformat(&v, 0, 80, &mut out);
    Ok(Value::string(out))
}

pub(super) fn do_groupby<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [attribute, default, case_sensitive] = b.take();
    let attribute = or_default(attribute);
    let default = or_default(default);
    let cs = bool_arg(&case_sensitive);
    check_attr_path(attribute.as_ref())?;
    let key_of = |item: &Value<'a>| -> Result<Value<'a>> {
        Ok(ignore_case(get_attr(item, attribute.as_ref(), default.as_ref())?, cs))
    };
    let mut pairs = Vec::new();
    let items = v.iterate()?;
    crate::limits::charge_items(items.len())?;
    crate::limits::charge_sort(items.len())?;
    for item in items.iter() {
        pairs.push((key_of(item)?, item.clone()));
    }
    sort_values(&mut pairs, false)?;
    let mut groups: Vec<(Value, Vec<Value>)> = Vec::new();
    for (_, item) in pairs {
        let key = key_of(&item)?;
        match groups.last_mut() {
            Some((k, members)) if k.py_eq(&key) => members.push(item),
            _ => groups.push((key, vec![item])),
        }
    }
    let mut out = Vec::with_capacity(groups.len());
    for (key, members) in groups {
        let grouper = match (cs, members.first()) {
            (false, Some(first)) => get_attr(first, attribute.as_ref(), default.as_ref())?,
            _ => key,
        };
        out.push(Value::Object(Rc::new(Object::Group(grouper, Value::list(members)))));
    }
    Ok(Value::list(out))
}

pub(super) fn do_random<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    no_len_iter(&v)?;
    v.py_len()?;
    let items = v.iterate()?;
    if items.is_empty() {
        return Ok(undefined_hint("No random item, sequence was empty."));
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as usize);
    let i = nanos % items.len();
    // `random.choice` indexes the value: a mapping is looked up by the position.
    if v.is_mapping() {
        let key = Value::Int(i as i64);
        return v.get_item_opt(&key).ok_or_else(|| err!(KeyError, "{i}"));
    }
    Ok(items[i].clone())
}

pub(super) fn do_urlencode<'a>(v: Value<'a>, _: Bound<'a>) -> Result<Value<'a>> {
    let iterable = v.is_sequence_like()
        || v.is_mapping()
        || v.is_undefined()
        || matches!(v, Value::Iter(_))
        || matches!(&v, Value::Object(o) if matches!(&**o, Object::Range(..) | Object::Group(..) | Object::View(..) | Object::FailedGenerator(..)));
    if v.is_str() || !iterable {
        return Ok(Value::string(url_quote(&v.to_py_str(), false)));
    }
    let pairs = if v.is_mapping() {
        mapping_items(&v)?
    } else {
        v.iterate()?.iter().map(unpack2).collect::<Result<Vec<_>>>()?
    };
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
    Ok(Value::string(parts.join("&")))
}

pub(super) fn do_xmlattr<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [autospace] = b.take();
    let autospace = autospace.is_none_or(|a| a.truthy());
    let mut items = Vec::new();
    for (k, x) in mapping_items(&v)? {
        if matches!(x, Value::None | Value::Undefined(_)) {
            continue;
        }
        let Some(key) = k.as_str() else {
            return Err(err!(
                TypeError,
                "expected string or bytes-like object, got '{}'",
                k.type_name()
            ));
        };
        if key.chars().any(|c| matches!(c, ' ' | '\t'..='\r' | '/' | '>' | '=')) {
            let mut r = String::new();
            k.write_repr(&mut r);
            return Err(err!(ValueError, "Invalid character in attribute name: {r}"));
        }
        let mut item = String::new();
        push_escaped(&k, &mut item);
        item.push_str("=\"");
        push_escaped(&x, &mut item);
        item.push('"');
        items.push(item);
    }
    let mut rv = items.join(" ");
    if autospace && !rv.is_empty() {
        rv.insert(0, ' ');
    }
    Ok(Value::string(rv))
}

//ALIAS wordwrap -> wordwrap_filter
pub(super) fn do_filesizeformat<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [binary] = b.take();
    let bytes = match &v {
        Value::Int(i) => *i as f64,
        Value::BigInt(_) => big_to_float(&v)?,
        Value::Bool(b) => *b as i64 as f64,
        Value::Float(f) => *f,
        Value::Safe(s) => pystr::parse_float(s).map_err(|_| {
            let mut r = String::new();
            v.write_repr(&mut r);
            err!(ValueError, "could not convert string to float: {r}")
        })?,
        _ if v.is_str() => pystr::parse_float(v.as_str().unwrap_or("")).map_err(crate::error::py_err)?,
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
    Ok(if bytes == 1.0 {
        Value::Str("1 Byte")
    } else if bytes < base {
        Value::string(format!("{} Bytes", float_to_int(bytes)?.to_py_str()))
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
        let num = pystr::percent_format("%.1f", pystr::PercentArgs::Single(&Value::Float(base * bytes / unit)))
            .map_err(crate::error::py_err)?;
        Value::string(format!("{num} {prefix}"))
    })
}

//ALIAS urlize -> urlize_filter
//SKIP         _ => return Err(err!(TemplateRuntimeError, "No filter named '{name}' fou

/// Appends `escape(x)`: Markup as it is, anything else as its escaped text.
fn push_escaped(x: &Value, out: &mut String) {
    match x {
        Value::Safe(s) => out.push_str(s),
        _ => escape_into(&x.to_py_str(), out),
    }
}

/// `float(n)` of a big integer.
fn big_to_float(v: &Value) -> Result<f64> {
    let f = v.to_py_str().parse::<f64>().unwrap_or(f64::INFINITY);
    if f.is_infinite() {
        return Err(err!(OverflowError, "int too large to convert to float"));
    }
    Ok(f)
}

/// `round(value, precision=0, method="common")`.
pub(super) fn round_filter<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [precision, method] = b.take();
    if let Some(m) = &method {
        check_hashable(m)?;
    }
    let method = method.as_ref().map_or(Some("common"), |m| m.as_str());
    let Some(method @ ("common" | "ceil" | "floor")) = method else {
        return Err(err!(FilterArgumentError, "method must be common, ceil or floor"));
    };
    let precision = precision.unwrap_or(Value::Int(0));
    if method != "common" {
        // `math.floor(value * 10 ** precision) / 10 ** precision` (or `ceil`), step by step.
        use crate::ast::BinOp;
        let scale = Value::Int(10).binary(BinOp::Pow, &precision)?;
        let floored = match v.binary(BinOp::Mul, &scale)? {
            n @ (Value::Int(_) | Value::BigInt(_)) => n,
            Value::Bool(b) => Value::Int(i64::from(b)),
            Value::Float(f) => float_to_int(if method == "ceil" { f.ceil() } else { f.floor() })?,
            other => return Err(err!(TypeError, "must be real number, not {}", other.type_name())),
        };
        return floored.binary(BinOp::Div, &scale);
    }
    if !matches!(v, Value::Int(_) | Value::BigInt(_) | Value::Bool(_) | Value::Float(_)) {
        return Err(err!(
            TypeError,
            "type {} doesn't define __round__ method",
            v.type_name()
        ));
    }
    // `round(x, None)` is `round(x)`: an integer.
    let ndigits = match &precision {
        Value::None => None,
        // `__round__` clamps the digits to the range of a C `ssize_t`.
        Value::BigInt(n) if n.sign() == num_bigint::Sign::Minus => Some(i64::MIN),
        Value::BigInt(_) => Some(i64::MAX),
        p => Some(index_arg(p, false)?),
    };
    Ok(match (v, ndigits) {
        (Value::Bool(b), None) => Value::Int(i64::from(b)),
        (Value::Int(i), None) => Value::Int(i),
        (Value::Bool(b), Some(d)) => Value::from_bigint(pystr::py_round_int(&i64::from(b).into(), d)),
        (Value::Int(i), Some(d)) => Value::from_bigint(pystr::py_round_int(&i.into(), d)),
        (Value::BigInt(n), Some(d)) => Value::from_bigint(pystr::py_round_int(&n, d)),
        (Value::Float(f), None) => float_to_int(pystr::py_round(f, 0).map_err(crate::error::py_err)?)?,
        (Value::Float(f), Some(n)) => Value::Float(pystr::py_round(f, n).map_err(crate::error::py_err)?),
        (other, _) => other,
    })
}

/// `indent(width=4, first=False, blank=False)`.
pub(super) fn indent_filter<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [width, first, blank] = b.take();
    let indention = match width {
        None => "    ".to_string(),
        Some(w) if w.is_str() => w.to_py_str(),
        Some(w) => repeat_str(" ", &w)?,
    };
    // `s += "\n"` before `s.splitlines()`.
    match &v {
        _ if v.is_str() => {}
        Value::Undefined(_) => return Err(v.undefined_error()),
        Value::List(_) | Value::Json(serde_json::Value::Array(_)) => return Err(no_attribute(&v, "splitlines")),
        Value::Tuple(_) => return Err(err!(TypeError, "can only concatenate tuple (not \"str\") to tuple")),
        _ => {
            return Err(err!(
                TypeError,
                "unsupported operand type(s) for +=: '{}' and 'str'",
                v.type_name()
            ))
        }
    }
    let mut s = v.to_py_str();
    s.push('\n');
    let lines: Vec<&str> = pystr::splitlines(&s, false);
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
    Ok(match v {
        Value::Safe(_) => Value::Safe(rv.into()),
        _ => Value::string(rv),
    })
}

/// `slice(slices, fill_with=None)`.
pub(super) fn slice_filter<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    use crate::ast::BinOp;
    let [count, fill] = b.take();
    let count = count.unwrap_or(Value::None);
    let fill = or_default(fill);
    let items = v.iterate()?;
    let length = Value::Int(items.len() as i64);
    let per = length.binary(BinOp::FloorDiv, &count)?;
    let extra = length.binary(BinOp::Mod, &count)?;
    let n = index_arg(&count, false)?;
    let (per, extra) = (index_arg(&per, false)?, index_arg(&extra, false)?);
    let mut out = Vec::new();
    let mut offset: i64 = 0;
    for i in 0..n.max(0) {
        let start = offset + i * per;
        if i < extra {
            offset += 1;
        }
        let end = offset + (i + 1) * per;
        let (lo, hi) = (
            start.clamp(0, items.len() as i64) as usize,
            end.clamp(0, items.len() as i64) as usize,
        );
        let mut c = if lo < hi { items[lo..hi].to_vec() } else { Vec::new() };
        if let (Some(f), true) = (&fill, i >= extra) {
            c.push(f.clone());
        }
        out.push(Value::list(c));
        crate::limits::check_value_size(out.len())?;
    }
    Ok(Value::generator(out))
}

/// `truncate(length=255, killwords=False, end="...", leeway=None)`.
pub(super) fn truncate_filter<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    use crate::ast::{BinOp, CmpOp};
    use crate::value::compare;
    let [length, killwords, end, leeway] = b.take();
    let length = length.unwrap_or(Value::Int(255));
    let end = end.unwrap_or(Value::Str("..."));
    let leeway = or_default(leeway).unwrap_or(Value::Int(5));
    no_len_iter(&end)?;
    let end_len = Value::Int(end.py_len()? as i64);
    if !compare(CmpOp::Ge, &length, &end_len)? {
        return Err(err!(
            AssertionError,
            "expected length >= {}, got {}",
            end_len.to_py_str(),
            length.to_py_str()
        ));
    }
    if !compare(CmpOp::Ge, &leeway, &Value::Int(0))? {
        return Err(err!(AssertionError, "expected leeway >= 0, got {}", leeway.to_py_str()));
    }
    no_len_iter(&v)?;
    let len = Value::Int(v.py_len()? as i64);
    if compare(CmpOp::Le, &len, &length.binary(BinOp::Add, &leeway)?)? {
        return Ok(v);
    }
    let keep = length.binary(BinOp::Sub, &end_len)?;
    if !v.is_str() {
        return Err(if bool_arg(&killwords) {
            err!(
                TypeError,
                "can only concatenate {} (not \"str\") to {}",
                v.type_name(),
                v.type_name()
            )
        } else {
            no_attribute(&v, "rsplit")
        });
    }
    let keep = match keep {
        Value::Int(k) => k,
        Value::Bool(k) => i64::from(k),
        _ => {
            return Err(err!(
                TypeError,
                "slice indices must be integers or None or have an __index__ method"
            ))
        }
    };
    let head = match v.slice(None, Some(keep), None)? {
        h if h.is_str() => h.to_py_str(),
        _ => String::new(),
    };
    let cut = match head.rfind(' ') {
        Some(i) if !bool_arg(&killwords) => &head[..i],
        _ => head.as_str(),
    };
    // `cut + end` in Python: markup on either side escapes the other and gives markup.
    let escaped = |s: &str| {
        let mut out = String::with_capacity(s.len());
        pystr::html_escape(s, &mut out);
        out
    };
    Ok(match (&v, &end) {
        (Value::Safe(_), Value::Safe(e)) => Value::Safe(format!("{cut}{e}").into()),
        (Value::Safe(_), e) => Value::Safe(format!("{cut}{}", escaped(&e.to_py_str())).into()),
        (_, Value::Safe(e)) => Value::Safe(format!("{}{e}", escaped(cut)).into()),
        (_, e) => Value::string(format!("{cut}{}", e.to_py_str())),
    })
}

/// `wordwrap(width=79, break_long_words=True, wrapstring=None, break_on_hyphens=True)`.
pub(super) fn wordwrap_filter<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    let [width, break_long, wrapstring, break_hyphens] = b.take();
    let wrap = match or_default(wrapstring) {
        None => "\n".to_string(),
        Some(w) if w.is_str() => w.to_py_str(),
        Some(w) => return Err(no_attribute(&w, "join")),
    };
    if let Value::Object(o) = &v {
        // `bytes` has `splitlines`, and textwrap's str pattern then refuses each line.
        if let Object::Bytes(b) = &**o {
            return match b.is_empty() {
                true => Ok(Value::string(String::new())),
                false => Err(err!(TypeError, "cannot use a string pattern on a bytes-like object")),
            };
        }
    }
    if !v.is_str() {
        return Err(no_attribute(&v, "splitlines"));
    }
    let width = width.unwrap_or(Value::Int(79));
    let long = break_long.is_none_or(|b| b.truthy());
    // textwrap splits words after hyphens only when `break_on_hyphens is True`.
    let split_hyphens = matches!(break_hyphens, None | Some(Value::Bool(true)));
    let hyphens = break_hyphens.is_none_or(|b| b.truthy());
    let text = v.to_py_str();
    let mut paragraphs = Vec::new();
    for line in pystr::splitlines(&text, false) {
        let limit = wrap_width(&width)?;
        paragraphs.push(text_wrap(line, limit, long, split_hyphens, hyphens)?.join(&wrap));
    }
    Ok(Value::string(paragraphs.join(&wrap)))
}

/// `TextWrapper.width` as `_wrap_chunks` uses it: checked `> 0`; `None` for no limit at all.
fn wrap_width(width: &Value) -> Result<Option<WrapWidth>> {
    use crate::ast::CmpOp;
    use crate::value::compare;
    if compare(CmpOp::Le, width, &Value::Int(0))? {
        let mut r = String::new();
        width.write_repr(&mut r);
        return Err(err!(ValueError, "invalid width {r} (must be > 0)"));
    }
    Ok(match width {
        Value::Int(w) => Some(WrapWidth {
            limit: *w as f64,
            float: false,
        }),
        Value::Bool(_) => Some(WrapWidth {
            limit: 1.0,
            float: false,
        }),
        Value::Float(f) if f.is_finite() => Some(WrapWidth { limit: *f, float: true }),
        _ => None,
    })
}

/// A line width: compared as a number (a float width as a float), and used as a slice index
/// only when a word longer than a line is broken, which Python refuses for a float.
#[derive(Clone, Copy)]
struct WrapWidth {
    limit: f64,
    float: bool,
}

/// `urlize(trim_url_limit=None, nofollow=False, target=None, rel=None, extra_schemes=None)`.
pub(super) fn urlize_filter<'a>(v: Value<'a>, mut b: Bound<'a>) -> Result<Value<'a>> {
    use crate::ast::CmpOp;
    use crate::value::compare;
    let [limit, nofollow, target, rel, extra_schemes] = b.take();
    let mut rels: Vec<String> = match rel {
        Some(r) if r.truthy() => match r.as_str() {
            Some(s) => s.split_whitespace().map(str::to_string).collect(),
            None => return Err(no_attribute(&r, "split")),
        },
        _ => Vec::new(),
    };
    if bool_arg(&nofollow) {
        rels.push("nofollow".to_string());
    }
    rels.push("noopener".to_string());
    rels.sort();
    rels.dedup();
    let rel = rels.join(" ");
    let mut schemes = Vec::new();
    let extra = or_default(extra_schemes);
    if let Some(e) = &extra {
        for scheme in e.iterate()?.iter() {
            let Some(s) = scheme.as_str() else {
                return Err(err!(
                    TypeError,
                    "expected string or bytes-like object, got '{}'",
                    scheme.type_name()
                ));
            };
            let (prefix, slashes) = match s.find(':') {
                Some(i) => (&s[..i], &s[i + 1..]),
                None => (s, "x"),
            };
            let valid = prefix.chars().count() >= 2
                && prefix
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '+' | '-'))
                && matches!(slashes, "" | "/" | "//");
            if !valid {
                let mut r = String::new();
                pystr::str_repr(s, &mut r);
                return Err(err!(FilterArgumentError, "{r} is not a valid URI scheme prefix."));
            }
            schemes.push(s.to_string());
        }
    }
    let target = match target {
        Some(t) if t.truthy() => {
            let mut out = String::new();
            push_escaped(&t, &mut out);
            Some(out)
        }
        _ => None,
    };
    let limit = or_default(limit);
    let trim = |x: &str| -> Result<String> {
        let Some(n) = &limit else {
            return Ok(x.to_string());
        };
        let len = Value::Int(x.chars().count() as i64);
        if !compare(CmpOp::Gt, &len, n)? {
            return Ok(x.to_string());
        }
        let head = Value::Str(x).slice(
            None,
            Some(index_arg(n, false).map_err(|_| {
                err!(
                    TypeError,
                    "slice indices must be integers or None or have an __index__ method"
                )
            })?),
            None,
        )?;
        Ok(format!("{}...", head.to_py_str()))
    };
    let mut escaped = String::new();
    push_escaped(&v, &mut escaped);
    let out = super::urlize::urlize(
        &escaped,
        trim,
        Some(&rel),
        target.as_deref(),
        extra.is_some().then_some(schemes.as_slice()),
    )?;
    Ok(Value::string(out))
}

/// `int(x)` for a float in the `int` filter: the `ValueError` of NaN gives the default, the
/// `OverflowError` of an infinity is raised.
fn int_of_float<'a>(x: f64, default: Value<'a>) -> Result<Value<'a>> {
    match pystr::float_to_int(x) {
        Ok(i) => Ok(Value::from_bigint(i)),
        Err(e) if e.kind == pystr::PyErrorKind::ValueError => Ok(default),
        Err(e) => Err(crate::error::py_err(e)),
    }
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

/// textwrap's whitespace: the six ASCII characters it splits on.
fn is_wrap_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\x0b' | '\x0c' | '\r' | ' ')
}

/// A regex `\w` character.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A letter as textwrap's `[^\d\W]`.
fn is_letter(c: char) -> bool {
    is_word(c) && !pystr::isdecimal(c.encode_utf8(&mut [0; 4]))
}

/// textwrap's `word_punct`, `[\w!"'&.,?]`.
fn is_word_punct(c: char) -> bool {
    is_word(c) || matches!(c, '!' | '"' | '\'' | '&' | '.' | ',' | '?')
}

/// At `i`: two or more hyphens followed by a word character (an em-dash between words).
fn em_dash_at(chars: &[char], i: usize) -> bool {
    let mut j = i;
    while chars.get(j) == Some(&'-') {
        j += 1;
    }
    j >= i + 2 && chars.get(j).is_some_and(|c| is_word(*c))
}

/// textwrap's chunks: whitespace runs and words, split after hyphens as its `wordsep_re` does
/// (`split_hyphens`), or only at whitespace (`wordsep_simple_re`).
fn wrap_chunks(text: &str, split_hyphens: bool) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let mut chunks = Vec::new();
    let mut i = 0;
    while i < n {
        let start = i;
        if is_wrap_space(chars[i]) {
            while i < n && is_wrap_space(chars[i]) {
                i += 1;
            }
        } else if !split_hyphens {
            while i < n && !is_wrap_space(chars[i]) {
                i += 1;
            }
        } else if i > 0 && is_word_punct(chars[i - 1]) && em_dash_at(&chars, i) {
            while chars.get(i) == Some(&'-') {
                i += 1;
            }
        } else {
            // The shortest run of non-space characters that ends a word: before a hyphenated
            // word's hyphen (included), before whitespace or the end, or before an em-dash.
            let letter = |k: usize| chars.get(k).is_some_and(|c| is_letter(*c));
            let mut k = i + 1;
            loop {
                if k >= n || is_wrap_space(chars[k]) {
                    break;
                }
                if chars[k] == '-' {
                    let before = (k >= 2 && letter(k - 1) && letter(k - 2))
                        || (k >= 3 && letter(k - 1) && chars[k - 2] == '-' && letter(k - 3));
                    let after = letter(k + 1) && (letter(k + 2) || (chars.get(k + 2) == Some(&'-') && letter(k + 3)));
                    if before && after {
                        k += 1;
                        break;
                    }
                }
                if is_word_punct(chars[k - 1]) && em_dash_at(&chars, k) {
                    break;
                }
                k += 1;
            }
            i = k;
        }
        chunks.push(chars[start..i].iter().collect());
    }
    chunks
}

/// Python's `textwrap.wrap(text, width, expand_tabs=False, replace_whitespace=False, ...)`; `None`
/// for a width no line reaches.
fn text_wrap(
    text: &str,
    width: Option<WrapWidth>,
    break_long: bool,
    split_hyphens: bool,
    hyphens: bool,
) -> Result<Vec<String>> {
    let mut chunks = wrap_chunks(text, split_hyphens);
    chunks.reverse();
    let len = |s: &str| s.chars().count();
    let blank = |s: &str| s.chars().all(pystr::is_py_whitespace);
    let mut lines = Vec::new();
    while !chunks.is_empty() {
        let mut line: Vec<String> = Vec::new();
        let mut cur_len = 0;
        if !lines.is_empty() && chunks.last().is_some_and(|c| blank(c)) {
            chunks.pop();
        }
        while let Some(chunk) = chunks.last() {
            let l = len(chunk);
            if width.is_none_or(|w| (cur_len + l) as f64 <= w.limit) {
                cur_len += l;
                line.push(chunks.pop().unwrap_or_default());
            } else {
                break;
            }
        }
        if let (Some(chunk), Some(w)) = (chunks.last(), width) {
            if len(chunk) as f64 > w.limit {
                if break_long {
                    let space_left = if w.limit < 1.0 {
                        1
                    } else if w.float {
                        return Err(err!(
                            TypeError,
                            "slice indices must be integers or None or have an __index__ method"
                        ));
                    } else {
                        (w.limit as usize).saturating_sub(cur_len)
                    };
                    let chunk = chunks.pop().unwrap_or_default();
                    let cs: Vec<char> = chunk.chars().collect();
                    let mut end = space_left;
                    if hyphens && cs.len() > space_left {
                        if let Some(h) = cs[..space_left.min(cs.len())].iter().rposition(|c| *c == '-') {
                            if h > 0 && cs[..h].iter().any(|c| *c != '-') {
                                end = h + 1;
                            }
                        }
                    }
                    let end = end.min(cs.len());
                    line.push(cs[..end].iter().collect());
                    chunks.push(cs[end..].iter().collect());
                } else if line.is_empty() {
                    line.push(chunks.pop().unwrap_or_default());
                }
            }
        }
        if line.last().is_some_and(|c| blank(c)) {
            line.pop();
        }
        if !line.is_empty() {
            lines.push(line.concat());
        }
    }
    Ok(lines)
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
