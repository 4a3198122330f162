//! Pieces of `json.dumps`.

use super::float::float_json;
use std::fmt::Write;

/// Appends `s` as a JSON string literal exactly as Python's `json.dumps`
/// writes it: `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other control
/// characters as `\u00XX`; with `ensure_ascii` every non-ASCII character (and
/// DEL) as `\uXXXX`, astral characters as surrogate pairs; without it they
/// are written raw.
pub fn json_write_str(s: &str, ensure_ascii: bool, out: &mut String) {
    out.reserve(s.len() + 2);
    out.push('"');
    if ensure_ascii {
        write_ascii_escaped(s, out);
    } else {
        // Only ASCII characters are escaped, so the text is copied in runs between them; eight
        // bytes are passed over at once when none of them is escaped.
        let bytes = s.as_bytes();
        let (mut run, mut i) = (0, 0);
        while i < bytes.len() {
            let word = bytes.get(i..i + 8).and_then(|w| <[u8; 8]>::try_from(w).ok());
            if word.is_some_and(|w| !may_escape(u64::from_le_bytes(w))) {
                i += 8;
                continue;
            }
            let end = (i + 8).min(bytes.len());
            while i < end {
                let b = bytes[i];
                if ESCAPED[usize::from(b)] {
                    out.push_str(&s[run..i]);
                    write_escape(b, out);
                    run = i + 1;
                }
                i += 1;
            }
        }
        out.push_str(&s[run..]);
    }
    out.push('"');
}

/// The characters of `s` as `json.dumps(ensure_ascii=True)` writes them between the quotes (kept
/// apart from the commoner raw case, which inlines lighter).
#[inline(never)]
fn write_ascii_escaped(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            c if (c as u32) < 0x20 || c == '"' || c == '\\' => write_escape(c as u8, out),
            c if (c as u32) >= 0x7f => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    // Writing to a String never fails.
                    let _ = write!(out, "\\u{:04x}", u);
                }
            }
            c => out.push(c),
        }
    }
}

/// The bytes `json.dumps` escapes in any case: control characters, the quote and the backslash.
static ESCAPED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Whether any byte of the eight in `w` may need an escape: a control character, a quote or a
/// backslash (never a false "no").
fn may_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH != 0;
    below_space || has_zero(w ^ (ONES * u64::from(b'"'))) || has_zero(w ^ (ONES * u64::from(b'\\')))
}

/// Appends the escape of a control character, a quote or a backslash.
fn write_escape(b: u8, out: &mut String) {
    match b {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        0x08 => out.push_str("\\b"),
        0x0c => out.push_str("\\f"),
        _ => {
            let _ = write!(out, "\\u{:04x}", b);
        }
    }
}

/// Appends a float as `json.dumps` writes it (`NaN`, `Infinity`,
/// `-Infinity`, otherwise `repr`).
pub fn json_write_float(x: f64, out: &mut String) {
    out.push_str(&float_json(x));
}

/// MarkupSafe's `escape` (Jinja's `|e` and autoescaping): `&`, `<`, `>`,
/// `'` and `"` become `&amp;`, `&lt;`, `&gt;`, `&#39;` and `&#34;`.
pub fn html_escape(s: &str, out: &mut String) {
    out.reserve(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&#39;"),
            '"' => out.push_str("&#34;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{bits, load, string};

    #[test]
    fn html_escape_matches_markupsafe() {
        for case in load("html", 27) {
            let [input, escaped] = [0, 1].map(|i| string(&case[i]));
            let mut out = String::new();
            html_escape(input, &mut out);
            assert_eq!(out, escaped, "escape {input:?}");
        }
    }

    #[test]
    fn strings_match_cpython() {
        for case in load("json_str", 24) {
            let [input, ascii, raw] = [0, 1, 2].map(|i| string(&case[i]));
            let mut out = String::new();
            json_write_str(input, true, &mut out);
            assert_eq!(out, ascii, "ensure_ascii of {input:?}");
            let mut out = String::new();
            json_write_str(input, false, &mut out);
            assert_eq!(out, raw, "raw of {input:?}");
        }
    }

    #[test]
    fn escapes_are_found_at_every_position_of_long_strings() {
        let reference = |s: &str| {
            let mut out = String::from('"');
            for c in s.chars() {
                match c {
                    '"' | '\\' | '\u{0}'..='\u{1f}' => write_escape(c as u8, &mut out),
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        };
        let base = "abcdefghij\u{e9}klmnopqrstuvwxyz0123456789";
        for special in ["\"", "\\", "\n", "\u{1}", "\u{1f}", "\u{7f}", " ", "!", "#", "[", "]"] {
            for at in 0..=base.len() {
                if !base.is_char_boundary(at) {
                    continue;
                }
                let s = format!("{}{special}{}", &base[..at], &base[at..]);
                let mut out = String::new();
                json_write_str(&s, false, &mut out);
                assert_eq!(out, reference(&s), "{s:?}");
            }
        }
    }

    #[test]
    fn floats_match_cpython() {
        for case in load("float", 3115) {
            let (bits, json) = (bits(&case[0]), string(&case[2]));
            let mut out = String::new();
            json_write_float(f64::from_bits(bits), &mut out);
            assert_eq!(out, json);
        }
    }
}
