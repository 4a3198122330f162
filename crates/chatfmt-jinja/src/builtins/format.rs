//! String formatting: `%` (printf style), `str.format`, and `strftime_now`.

use crate::error::{err, Result};
use crate::eval::{CallArgs, Evaluator};
use crate::template::Clock;
use crate::value::Value;

/// Python `fmt % args`.
pub fn percent_format(fmt: &str, args: &Value) -> Result<String> {
    let seq: Vec<Value> = match args {
        Value::Tuple(items) => items.to_vec(),
        other => vec![other.clone()],
    };
    let mapping = args.is_mapping().then_some(args);
    let mut next = 0;
    let mut out = String::new();
    let mut chars = fmt.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut key = None;
        if let Some((_, '(')) = chars.peek() {
            chars.next();
            let mut k = String::new();
            for (_, c) in chars.by_ref() {
                if c == ')' {
                    break;
                }
                k.push(c);
            }
            key = Some(k);
        }
        let mut flags = String::new();
        while let Some((_, c)) = chars.peek() {
            if "-+ #0".contains(*c) {
                flags.push(*c);
                chars.next();
            } else {
                break;
            }
        }
        let mut width = String::new();
        while let Some((_, c)) = chars.peek().filter(|(_, c)| c.is_ascii_digit()) {
            width.push(*c);
            chars.next();
        }
        let mut precision = None;
        if let Some((_, '.')) = chars.peek() {
            chars.next();
            let mut p = String::new();
            while let Some((_, c)) = chars.peek().filter(|(_, c)| c.is_ascii_digit()) {
                p.push(*c);
                chars.next();
            }
            precision = Some(p.parse::<usize>().unwrap_or(0));
        }
        let Some((ci, conv)) = chars.next() else {
            return Err(err!(ValueError, "incomplete format"));
        };
        if conv == '%' {
            out.push('%');
            continue;
        }
        let arg = match (&key, mapping) {
            (Some(k), Some(m)) => m
                .get_item_opt(&Value::String(k.as_str().into()))
                .ok_or_else(|| err!(KeyError, "'{k}'"))?,
            (Some(_), None) => return Err(err!(TypeError, "format requires a mapping")),
            (None, _) => {
                let a = seq
                    .get(next)
                    .cloned()
                    .ok_or_else(|| err!(TypeError, "not enough arguments for format string"))?;
                next += 1;
                a
            }
        };
        let body = match conv {
            's' => arg.to_py_str(),
            'r' | 'a' => {
                let mut s = String::new();
                arg.write_repr(&mut s);
                s
            }
            'd' | 'i' | 'u' => match arg {
                Value::Int(v) => v.to_string(),
                Value::Bool(b) => (b as i64).to_string(),
                Value::Float(f) => (f.trunc() as i64).to_string(),
                _ => {
                    return Err(err!(
                        TypeError,
                        "%{conv} format: a real number is required, not {}",
                        arg.type_name()
                    ))
                }
            },
            'f' | 'F' => match arg {
                Value::Int(v) => format!("{:.*}", precision.unwrap_or(6), v as f64),
                Value::Bool(b) => format!("{:.*}", precision.unwrap_or(6), b as i64 as f64),
                Value::Float(f) => format!("{:.*}", precision.unwrap_or(6), f),
                _ => return Err(err!(TypeError, "must be real number, not {}", arg.type_name())),
            },
            'x' | 'X' => match arg {
                Value::Int(v) if conv == 'x' => format!("{v:x}"),
                Value::Int(v) => format!("{v:X}"),
                _ => {
                    return Err(err!(
                        TypeError,
                        "%{conv} format: an integer is required, not {}",
                        arg.type_name()
                    ))
                }
            },
            other => {
                return Err(err!(
                    ValueError,
                    "unsupported format character '{other}' (0x{:x}) at index {}",
                    other as u32,
                    ci.max(i)
                ))
            }
        };
        let w: usize = width.parse().unwrap_or(0);
        let len = body.chars().count();
        if len < w {
            let pad = w - len;
            if flags.contains('-') {
                out.push_str(&body);
                out.push_str(&" ".repeat(pad));
            } else if flags.contains('0') && conv != 's' && conv != 'r' {
                let (sign, digits) = body.strip_prefix('-').map_or(("", body.as_str()), |d| ("-", d));
                out.push_str(sign);
                out.push_str(&"0".repeat(pad));
                out.push_str(digits);
            } else {
                out.push_str(&" ".repeat(pad));
                out.push_str(&body);
            }
        } else {
            out.push_str(&body);
        }
    }
    if mapping.is_none() && next < seq.len() && !matches!(args, Value::Tuple(_) if next == 0 && seq.is_empty()) {
        return Err(err!(TypeError, "not all arguments converted during string formatting"));
    }
    Ok(out)
}

/// Python `str.format` with the sandbox's attribute rules.
pub fn str_format<'a>(_ev: &mut Evaluator<'a>, fmt: &str, args: CallArgs<'a>) -> Result<String> {
    let mut out = String::new();
    let mut auto = 0;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut field = String::new();
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                    field.push(c);
                }
                let name = field.split([':', '!']).next().unwrap_or("");
                let v = if name.is_empty() {
                    let v = args.pos.get(auto).cloned();
                    auto += 1;
                    v.ok_or_else(|| {
                        err!(
                            IndexError,
                            "Replacement index {} out of range for positional args tuple",
                            auto - 1
                        )
                    })?
                } else if let Ok(i) = name.parse::<usize>() {
                    args.pos.get(i).cloned().ok_or_else(|| {
                        err!(
                            IndexError,
                            "Replacement index {i} out of range for positional args tuple"
                        )
                    })?
                } else {
                    args.kw
                        .iter()
                        .find(|(k, _)| *k == name)
                        .map(|(_, v)| v.clone())
                        .ok_or_else(|| err!(KeyError, "'{name}'"))?
                };
                v.write_str(&mut out);
            }
            '}' => return Err(err!(ValueError, "Single '}}' encountered in format string")),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// `strftime_now(fmt)`: the clock's time formatted as Python's `datetime.strftime`.
pub fn strftime_now(clock: &Clock, fmt: &str) -> Result<String> {
    let _ = (clock, fmt);
    Err(err!(TemplateRuntimeError, "strftime_now is not available yet"))
}
