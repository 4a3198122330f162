//! Python's `str()` and `repr()` of values.

use super::Value;

/// Python `repr(float)`.
pub fn float_repr(f: f64, out: &mut String) {
    out.push_str(&crate::pystr::float_repr(f));
}

/// Python `repr(str)`.
pub fn write_str_repr(s: &str, out: &mut String) {
    crate::pystr::str_repr(s, out);
}

/// Python `repr(bytes)`.
pub fn write_bytes_repr(b: &[u8], out: &mut String) {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    out.push('b');
    out.push(quote);
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            _ if c as char == quote => {
                out.push('\\');
                out.push(quote);
            }
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\x{c:02x}")),
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
            Value::BigInt(b) => out.push_str(&b.to_string()),
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
        crate::limits::grow_stack(|| self.write_repr_inner(out))
    }

    fn write_repr_inner(&self, out: &mut String) {
        match self {
            Value::Undefined(_) => out.push_str("Undefined"),
            Value::None => out.push_str("None"),
            Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            Value::Int(i) => out.push_str(&i.to_string()),
            Value::BigInt(b) => out.push_str(&b.to_string()),
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
            Value::Iter(g) => {
                out.push('<');
                out.push_str(g.kind());
                out.push_str(" object ");
                if !g.function().is_empty() {
                    out.push_str(g.function());
                    out.push(' ');
                }
                out.push_str("at 0x0>");
            }
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
