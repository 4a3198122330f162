//! `tojson`: Python's `json.dumps` with every argument transformers passes.

use crate::error::{err, Result};
use crate::value::Value;
use serde_json::Value as Json;
use std::borrow::Cow;

/// The options of `json.dumps`.
pub struct DumpOptions {
    pub ensure_ascii: bool,
    /// `None`: one line; `Some(s)`: newline plus `s` repeated per level.
    pub indent: Option<String>,
    pub item_sep: Cow<'static, str>,
    pub key_sep: Cow<'static, str>,
    pub sort_keys: bool,
    /// The indent is a `Markup` string: Python's encoder then builds each list item's text as
    /// `Markup(separator + indent) + item`, which HTML-escapes scalar items (and item separators).
    pub markup_indent: bool,
}

/// Appends a list item separator: escaped when built from a `Markup` indent.
fn item_separator(opts: &DumpOptions, out: &mut String) {
    if opts.markup_indent && opts.indent.is_some() {
        crate::pystr::escape_into(&opts.item_sep, out);
    } else {
        out.push_str(&opts.item_sep);
    }
}

/// HTML-escapes a scalar list item written from `start` on, when the indent is `Markup`.
fn escape_scalar_item(opts: &DumpOptions, scalar: bool, start: usize, out: &mut String) {
    if opts.markup_indent && opts.indent.is_some() && scalar {
        let item = out.split_off(start);
        crate::pystr::escape_into(&item, out);
    }
}

/// Appends a JSON string literal the way Python's encoder writes it.
pub fn write_json_str(s: &str, ensure_ascii: bool, out: &mut String) {
    crate::pystr::json_write_str(s, ensure_ascii, out);
}

fn write_float(f: f64, out: &mut String) {
    crate::pystr::json_write_float(f, out);
}

fn key_string(k: &Value) -> Result<String> {
    Ok(match k {
        Value::Str(_) | Value::String(_) | Value::Safe(_) => k.as_str().unwrap_or("").to_string(),
        Value::Bool(b) => (if *b { "true" } else { "false" }).to_string(),
        Value::None => "null".to_string(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(b) => {
            k.check_printable()?;
            b.to_string()
        }
        Value::Float(f) => {
            let mut s = String::new();
            write_float(*f, &mut s);
            s
        }
        _ => {
            return Err(err!(
                TypeError,
                "keys must be str, int, float, bool or None, not {}",
                k.type_name()
            ))
        }
    })
}

fn newline(opts: &DumpOptions, level: usize, out: &mut String) {
    if let Some(ind) = &opts.indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str(ind);
        }
    }
}

fn write_int(i: impl std::fmt::Display, out: &mut String) {
    use std::fmt::Write;
    // Writing to a String never fails.
    let _ = write!(out, "{i}");
}

fn check_depth(level: usize) -> Result<()> {
    if level > 500 {
        return Err(err!(
            RecursionError,
            "maximum recursion depth exceeded while encoding a JSON object"
        ));
    }
    Ok(())
}

/// Writes a JSON value of the context as `json.dumps` would, reading it in place.
fn dumps_json(j: &Json, opts: &DumpOptions, level: usize, out: &mut String) -> Result<()> {
    check_depth(level)?;
    match j {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => write_int(i, out),
            (None, Some(u)) => write_int(u, out),
            _ => write_float(n.as_f64().unwrap_or(f64::NAN), out),
        },
        Json::String(s) => write_json_str(s, opts.ensure_ascii, out),
        Json::Array(items) if items.is_empty() => out.push_str("[]"),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    item_separator(opts, out);
                }
                newline(opts, level + 1, out);
                let start = out.len();
                dumps_json(item, opts, level + 1, out)?;
                escape_scalar_item(opts, !matches!(item, Json::Array(_) | Json::Object(_)), start, out);
            }
            newline(opts, level, out);
            out.push(']');
        }
        Json::Object(m) if m.is_empty() => out.push_str("{}"),
        Json::Object(m) => {
            let mut sorted = Vec::new();
            if opts.sort_keys {
                // Python orders str keys by code point, which is UTF-8's byte order.
                sorted.extend(m.iter());
                sorted.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            let mut write_pair = |i: usize, k: &str, val: &Json| {
                if i > 0 {
                    item_separator(opts, out);
                }
                newline(opts, level + 1, out);
                write_json_str(k, opts.ensure_ascii, out);
                out.push_str(&opts.key_sep);
                dumps_json(val, opts, level + 1, out)
            };
            if opts.sort_keys {
                for (i, (k, val)) in sorted.into_iter().enumerate() {
                    write_pair(i, k, val)?;
                }
            } else {
                for (i, (k, val)) in m.iter().enumerate() {
                    write_pair(i, k, val)?;
                }
            }
            newline(opts, level, out);
            out.push('}');
        }
    }
    Ok(())
}

/// Writes `v` as `json.dumps` would.
pub fn dumps(v: &Value, opts: &DumpOptions, level: usize, out: &mut String) -> Result<()> {
    check_depth(level)?;
    match v {
        Value::Json(j) => dumps_json(j, opts, level, out)?,
        Value::None => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => write_int(*i, out),
        Value::BigInt(b) => {
            v.check_printable()?;
            out.push_str(&b.to_string())
        }
        Value::Float(f) => write_float(*f, out),
        Value::Str(_) | Value::String(_) | Value::Safe(_) => {
            write_json_str(v.as_str().unwrap_or(""), opts.ensure_ascii, out)
        }
        Value::List(_) | Value::Tuple(_) => {
            let items = v.iterate()?;
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    item_separator(opts, out);
                }
                newline(opts, level + 1, out);
                let start = out.len();
                dumps(item, opts, level + 1, out)?;
                let scalar = matches!(
                    item,
                    Value::None
                        | Value::Bool(_)
                        | Value::Int(_)
                        | Value::BigInt(_)
                        | Value::Float(_)
                        | Value::Str(_)
                        | Value::String(_)
                        | Value::Safe(_)
                        | Value::Json(Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_))
                );
                escape_scalar_item(opts, scalar, start, out);
            }
            newline(opts, level, out);
            out.push(']');
        }
        Value::Dict(_) => {
            let mut pairs = Vec::new();
            v.for_each_pair(|k, v| pairs.push((k, v)));
            if pairs.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            if opts.sort_keys {
                // CPython sorts the items with `list.sort`: the same comparisons, the same first error.
                crate::value::sort_values(&mut pairs, false)?;
            }
            out.push('{');
            for (i, (k, val)) in pairs.iter().enumerate() {
                if i > 0 {
                    item_separator(opts, out);
                }
                newline(opts, level + 1, out);
                write_json_str(&key_string(k)?, opts.ensure_ascii, out);
                out.push_str(&opts.key_sep);
                dumps(val, opts, level + 1, out)?;
            }
            newline(opts, level, out);
            out.push('}');
        }
        Value::Object(o) if matches!(&**o, crate::value::Object::Group(..)) => {
            dumps(&Value::list(v.iterate()?.to_vec()), opts, level, out)?
        }
        Value::Object(o) if matches!(&**o, crate::value::Object::Namespace(_)) => {
            return Err(err!(
                TypeError,
                "Object of type TemplateNamespace is not JSON serializable"
            ))
        }
        _ => {
            return Err(err!(
                TypeError,
                "Object of type {} is not JSON serializable",
                v.type_name()
            ))
        }
    }
    Ok(())
}
