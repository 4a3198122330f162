//! Python's `str()` and `repr()` of values.

use super::Value;

/// Python `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16.
pub fn float_repr(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("nan");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "inf" } else { "-inf" });
        return;
    }
    if f == 0.0 {
        out.push_str(if f.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    let sci = format!("{:e}", f);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if neg {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let point = exp as usize + 1;
            if digits.len() <= point {
                out.push_str(&digits);
                for _ in digits.len()..point {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
    }
}

/// Python's `str.isprintable()` for one character (approximation by Unicode general category).
pub fn is_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32,
        0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x890..=0x891 | 0x8e2 | 0x180e | 0x200b..=0x200f
        | 0x2028..=0x202e | 0x2060..=0x2064 | 0x2066..=0x206f | 0xfeff | 0xfff9..=0xfffb | 0x110bd | 0x110cd
        | 0xd800..=0xdfff | 0xe000..=0xf8ff | 0xf0000..=0x10ffff | 0xe0001 | 0xe0020..=0xe007f
        | 0xfdd0..=0xfdef | 0xfffe | 0xffff)
}

/// Python `repr(str)`.
pub fn write_str_repr(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c => {
                let n = c as u32;
                if n < 0x100 {
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
        }
    }
    out.push(quote);
}

impl Value<'_> {
    /// Appends Python's `str(self)`.
    pub fn write_str(&self, out: &mut String) {
        match self {
            Value::Undefined(_) => {}
            Value::Str(s) => out.push_str(s),
            Value::String(s) | Value::Safe(s) => out.push_str(s),
            Value::Int(i) => {
                use std::fmt::Write;
                let _ = write!(out, "{i}");
            }
            _ => self.write_repr(out),
        }
    }

    /// Python's `str(self)` as a new string.
    pub fn to_py_str(&self) -> String {
        let mut s = String::new();
        self.write_str(&mut s);
        s
    }

    /// Appends Python's `repr(self)`.
    pub fn write_repr(&self, out: &mut String) {
        match self {
            Value::Undefined(_) => out.push_str("Undefined"),
            Value::None => out.push_str("None"),
            Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            Value::Int(i) => out.push_str(&i.to_string()),
            Value::Float(f) => float_repr(*f, out),
            Value::Str(s) => write_str_repr(s, out),
            Value::String(s) => write_str_repr(s, out),
            Value::Safe(s) => {
                out.push_str("Markup(");
                write_str_repr(s, out);
                out.push(')');
            }
            Value::Tuple(items) => {
                out.push('(');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write_repr(out);
                }
                if items.len() == 1 {
                    out.push(',');
                }
                out.push(')');
            }
            Value::Iter(_) => out.push_str("<generator object at 0x0>"),
            Value::Object(o) => o.write_repr(out),
            _ if self.is_sequence_like() => {
                out.push('[');
                let mut first = true;
                self.for_each_item(|v| {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    v.write_repr(out);
                });
                out.push(']');
            }
            _ => {
                out.push('{');
                let mut first = true;
                self.for_each_pair(|k, v| {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    k.write_repr(out);
                    out.push_str(": ");
                    v.write_repr(out);
                });
                out.push('}');
            }
        }
    }
}
