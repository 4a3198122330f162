//! `repr()` and `ascii()` of strings.

use super::unicode::is_printable;
use std::fmt::Write;

/// Appends the escape for `c` used by `repr`/`ascii` (`\xNN`, `\uNNNN` or `\UNNNNNNNN`).
fn push_hex_escape(out: &mut String, c: char) {
    let cp = c as u32;
    // Writing to a String never fails.
    let _ = if cp < 0x100 {
        write!(out, "\\x{cp:02x}")
    } else if cp < 0x10000 {
        write!(out, "\\u{cp:04x}")
    } else {
        write!(out, "\\U{cp:08x}")
    };
}

/// Appends Python's `repr(s)` to `out`: single quotes unless `s` contains `'`
/// and no `"`; `\\`, `\n`, `\r`, `\t` and the quote escaped; other
/// non-printable characters as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
pub fn str_repr(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.reserve(s.len() + 2);
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
            ' '..='~' => out.push(c),
            c if c.is_ascii() => push_hex_escape(out, c),
            c if is_printable(c) => out.push(c),
            c => push_hex_escape(out, c),
        }
    }
    out.push(quote);
}

/// Python's `ascii()` applied to a `repr` text: every non-ASCII character
/// escaped as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
pub fn ascii_escape(repr: &str) -> String {
    let mut out = String::with_capacity(repr.len());
    for c in repr.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            push_hex_escape(&mut out, c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{load, string};

    #[test]
    fn repr_and_ascii_match_cpython() {
        for case in load("repr", 23) {
            let [input, repr, ascii] = [0, 1, 2].map(|i| string(&case[i]));
            let mut out = String::from("prefix");
            str_repr(input, &mut out);
            assert_eq!(out, format!("prefix{repr}"), "repr of {input:?}");
            assert_eq!(ascii_escape(&out["prefix".len()..]), ascii, "ascii of {input:?}");
        }
    }
}
