//! String formatting: `%` (printf style), `str.format` with the sandbox's attribute rules, and
//! `strftime_now`, on top of the CPython semantics in [`crate::pystr`].

use crate::builtins::args::CallArgs;
use crate::context::Clock;
use crate::error::{py_err, Error, ErrorKind, Result};
use crate::pystr::{self, FieldAccessor, FieldArg, FormatArg, FormatPiece};
use crate::value::{Object, Value};

/// Where the fields of a format string find their values: the call's arguments (`format`) or a
/// mapping (`format_map`).
enum Source<'v, 'a> {
    Call(&'v CallArgs<'a>),
    Map(&'v Value<'a>),
}

impl<'a> Source<'_, 'a> {
    /// `string.Formatter.get_value`: `args[i]` or `kwargs[name]`.
    fn get(&self, arg: FieldArg) -> Result<Value<'a>> {
        let no_index = || Error::new(ErrorKind::IndexError, "tuple index out of range".to_string());
        match (self, arg) {
            (Source::Call(args), FieldArg::Index(i)) => args.pos.get(i).cloned().ok_or_else(no_index),
            (Source::Map(_), FieldArg::Index(_)) => Err(no_index()),
            (Source::Call(args), FieldArg::Name(n)) => args
                .kw
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.clone())
                .ok_or_else(|| py_err(pystr::key_error(n))),
            (Source::Map(m), FieldArg::Name(n)) => subscript_str(m, n),
        }
    }
}

/// Python `m[key]` for a string key, without the sandbox's attribute fallback.
fn subscript_str<'a>(m: &Value<'a>, key: &str) -> Result<Value<'a>> {
    if m.is_mapping() {
        return m
            .get_item_opt(&Value::string(key))
            .ok_or_else(|| py_err(pystr::key_error(key)));
    }
    let message = match m {
        Value::Undefined(_) => return Err(m.undefined_error()),
        _ if m.is_str() => "string indices must be integers, not 'str'".to_string(),
        Value::Object(o) if matches!(&**o, Object::Range(..)) => {
            "range indices must be integers or slices, not str".to_string()
        }
        _ if m.is_sequence_like() => format!("{} indices must be integers or slices, not str", m.type_name()),
        _ => format!("'{}' object is not subscriptable", m.type_name()),
    };
    Err(Error::new(ErrorKind::TypeError, message))
}

/// `recv.format(*args, **kwargs)` as the sandbox runs it (`string.Formatter`, looking attributes
/// up through the sandbox); a Markup receiver escapes what it inserts and stays Markup.
pub fn str_format_value<'a>(recv: &Value<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
    format_with(recv, &Source::Call(&args))
}

/// `recv.format_map(mapping)` as the sandbox runs it.
pub fn str_format_map<'a>(recv: &Value<'a>, mapping: Value<'a>) -> Result<Value<'a>> {
    format_with(recv, &Source::Map(&mapping))
}

fn format_with<'a>(recv: &Value<'a>, source: &Source<'_, 'a>) -> Result<Value<'a>> {
    let markup = matches!(recv, Value::Safe(_));
    let mut out = String::new();
    let fmt = recv.as_str().unwrap_or("");
    format_pieces(&mut pystr::format_iter(fmt), source, markup, &mut out)?;
    Ok(if markup {
        Value::Safe(out.into())
    } else {
        Value::string(out)
    })
}

fn format_pieces<'a>(
    iter: &mut pystr::FormatIter<'_, '_>,
    source: &Source<'_, 'a>,
    markup: bool,
    out: &mut String,
) -> Result<()> {
    while let Some(piece) = iter.next() {
        let field = match piece.map_err(py_err)? {
            FormatPiece::Literal(s) => {
                out.push_str(s);
                continue;
            }
            FormatPiece::Field(f) => f,
        };
        let mut v = source.get(field.arg)?;
        for acc in field.accessors() {
            v = match acc.map_err(py_err)? {
                FieldAccessor::Attr(name) => super::getattr_transient(&v, name)?,
                FieldAccessor::Index(i) => super::getitem(&v, &Value::Int(i as i64))?,
                FieldAccessor::Key(k) => super::getitem(&v, &Value::string(k))?,
            };
        }
        let converted = match field.conversion().map_err(py_err)? {
            None => v,
            Some(pystr::Conversion::Str) => Value::string(v.to_py_str()),
            Some(pystr::Conversion::Repr) => Value::string(v.py_repr()),
            Some(pystr::Conversion::Ascii) => Value::string(pystr::ascii_escape(&v.py_repr())),
        };
        let mut spec = String::new();
        if field.spec_text.contains('{') {
            format_pieces(
                &mut iter.spec_iter(field.spec_text).map_err(py_err)?,
                source,
                markup,
                &mut spec,
            )?;
        } else {
            spec.push_str(field.spec_text);
        }
        let mut text = String::new();
        if spec.is_empty() {
            converted.write_str(&mut text);
        } else if markup && matches!(converted, Value::Safe(_)) {
            return Err(Error::new(
                ErrorKind::ValueError,
                "Unsupported format specification for Markup.".to_string(),
            ));
        } else if matches!(
            converted,
            Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Bool(_)
        ) || converted.is_str()
        {
            text.push_str(&pystr::apply_format_spec(&spec, &converted).map_err(py_err)?);
        } else {
            return Err(Error::new(
                ErrorKind::TypeError,
                format!(
                    "unsupported format string passed to {}.__format__",
                    converted.type_name()
                ),
            ));
        }
        if markup && !matches!(converted, Value::Safe(_)) {
            pystr::html_escape(&text, out);
        } else {
            out.push_str(&text);
        }
    }
    Ok(())
}

/// `strftime_now(fmt)`: the clock's time formatted as Python's `datetime.now().strftime(fmt)`.
pub fn strftime_now(clock: &Clock, fmt: &str) -> Result<String> {
    let mut t = match clock {
        Clock::Fixed(iso) => pystr::DateTimeFields::from_iso(iso).map_err(py_err)?,
        Clock::Local => {
            use chrono::Offset;
            let now = chrono::Local::now();
            let offset = now.offset().fix().local_minus_utc();
            pystr::DateTimeFields::from_unix(now.timestamp(), now.timestamp_subsec_nanos(), offset).map_err(py_err)?
        }
    };
    if fmt.contains("%s") {
        t.local_epoch = local_epoch(&t);
    }
    Ok(pystr::strftime(fmt, &t))
}

/// The seconds since the epoch of `t`'s fields read as the machine's local time, as glibc's
/// `mktime` gives them for `%s`: an hour that occurs twice is its first occurrence, and an hour a
/// change of offset skips is read with the offset before the change.
fn local_epoch(t: &pystr::DateTimeFields) -> Option<i64> {
    use chrono::{LocalResult, Offset, TimeZone};
    let naive = chrono::NaiveDate::from_ymd_opt(t.year, t.month, t.day)?.and_hms_opt(t.hour, t.minute, t.second)?;
    match chrono::Local.from_local_datetime(&naive) {
        LocalResult::Single(at) => Some(at.timestamp()),
        LocalResult::Ambiguous(a, b) => Some(a.timestamp().min(b.timestamp())),
        LocalResult::None => {
            let before = naive.and_utc() - chrono::TimeDelta::days(1);
            let offset = chrono::Local
                .offset_from_utc_datetime(&before.naive_utc())
                .fix()
                .local_minus_utc();
            Some(naive.and_utc().timestamp() - i64::from(offset))
        }
    }
}
