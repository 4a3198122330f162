//! CPython 3.11's `html.unescape` and MarkupSafe 3.0's `Markup.striptags`, which calls it.

use super::html_entities::{DROPPED, NAMED, REPLACED};

/// `html.unescape(s)`: every character reference `&#NN;`, `&#xHH;` or `&name;` decoded as the
/// HTML5 rules CPython follows (the `;` optional, an unknown name decoded by its longest known
/// prefix among the legacy names that need no `;`, references to invalid code points replaced or
/// dropped), everything else kept.
pub fn html_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        rest = match reference(after) {
            Some(len) => {
                decode(&after[..len], &mut out);
                &after[len..]
            }
            None => {
                out.push('&');
                after
            }
        };
    }
    out.push_str(rest);
    out
}

/// The length of the reference `text` starts with (after its `&`), as CPython's pattern
/// `#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?` matches it.
fn reference(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let with_semicolon = |end: usize| end + usize::from(b.get(end) == Some(&b';'));
    if b.first() == Some(&b'#') {
        let digits = |from: usize, ok: fn(&u8) -> bool| b[from..].iter().take_while(|c| ok(c)).count();
        let decimal = digits(1, u8::is_ascii_digit);
        if decimal > 0 {
            return Some(with_semicolon(1 + decimal));
        }
        if matches!(b.get(1), Some(b'x' | b'X')) {
            let hex = digits(2, u8::is_ascii_hexdigit);
            if hex > 0 {
                return Some(with_semicolon(2 + hex));
            }
        }
        return None;
    }
    let end = text
        .char_indices()
        .take_while(|&(_, c)| !matches!(c, '\t' | '\n' | '\x0c' | ' ' | '<' | '&' | '#' | ';'))
        .take(32)
        .last()
        .map(|(i, c)| i + c.len_utf8())?;
    Some(with_semicolon(end))
}

/// Appends what the reference `r` (without its `&`) decodes to.
fn decode(r: &str, out: &mut String) {
    if let Some(digits) = r.strip_prefix('#') {
        let digits = digits.trim_end_matches(';');
        let (digits, radix) = match digits.strip_prefix(['x', 'X']) {
            Some(hex) => (hex, 16),
            None => (digits, 10),
        };
        // Anything past the last code point decodes alike: saturate there.
        let num = digits.chars().fold(0u32, |n, c| {
            let digit = c.to_digit(radix).unwrap_or(0);
            n.saturating_mul(radix).saturating_add(digit).min(0x11_0000)
        });
        if let Ok(i) = REPLACED.binary_search_by_key(&num, |&(n, _)| n) {
            out.push(REPLACED[i].1);
        } else if (0xD800..=0xDFFF).contains(&num) || num > 0x10_FFFF {
            out.push('\u{fffd}');
        } else if DROPPED.binary_search(&num).is_err() {
            out.extend(char::from_u32(num));
        }
        return;
    }
    if let Some(value) = named(r) {
        out.push_str(value);
        return;
    }
    // The longest prefix of at least two characters that is a name, the rest kept as it is.
    let ends: Vec<usize> = r.char_indices().map(|(i, _)| i).skip(2).collect();
    let prefix = ends
        .into_iter()
        .rev()
        .find_map(|end| named(&r[..end]).map(|value| (end, value)));
    match prefix {
        Some((end, value)) => {
            out.push_str(value);
            out.push_str(&r[end..]);
        }
        None => {
            out.push('&');
            out.push_str(r);
        }
    }
}

fn named(name: &str) -> Option<&'static str> {
    NAMED
        .binary_search_by(|&(n, _)| n.as_bytes().cmp(name.as_bytes()))
        .ok()
        .map(|i| NAMED[i].1)
}

/// MarkupSafe's `Markup(s).striptags()`: comments (`<!-- -->`) and tags (`<...>`) removed up to
/// the first one left open, runs of whitespace (as `str.split()` sees it) collapsed to one space,
/// the ends stripped, then [`html_unescape`].
pub fn striptags(s: &str) -> String {
    let mut kept = String::with_capacity(s.len());
    let mut pos = 0;
    while let Some(start) = s[pos..].find('<').map(|i| pos + i) {
        let end = if s[start..].starts_with("<!--") {
            s[start + 4..].find("-->").map(|i| start + 4 + i + 3)
        } else {
            s[start..].find('>').map(|i| start + i + 1)
        };
        let Some(end) = end else { break };
        kept.push_str(&s[pos..start]);
        pos = end;
    }
    kept.push_str(&s[pos..]);
    let mut collapsed = String::with_capacity(kept.len());
    for word in kept.split(super::is_py_whitespace).filter(|w| !w.is_empty()) {
        if !collapsed.is_empty() {
            collapsed.push(' ');
        }
        collapsed.push_str(word);
    }
    html_unescape(&collapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_decode_as_cpython_does() {
        // Expected values from CPython 3.11's html.unescape.
        for (input, expected) in [
            ("&amp;&lt;&gt;&quot;&apos;", "&<>\"'"),
            ("&nbsp;x &copy &hellip;", "\u{a0}x \u{a9} \u{2026}"),
            ("&amp &ampx &notit; &notin;", "& &x \u{ac}it; \u{2209}"),
            (
                "&#0;|&#x80;|&#xD800;|&#1;|&#65|&#x41;|&#X41",
                "\u{fffd}|\u{20ac}|\u{fffd}||A|A|A",
            ),
            ("&#99999999999999999999;&#x;&#;&;&", "\u{fffd}&#x;&#;&;&"),
            ("&unknown; &Aacute &#0x41", "&unknown; \u{c1} \u{fffd}x41"),
        ] {
            assert_eq!(html_unescape(input), expected, "{input:?}");
        }
    }

    #[test]
    fn striptags_as_markupsafe() {
        for (input, expected) in [
            ("a<br>b", "ab"),
            ("a<!--x", "a<!--x"),
            ("a<!-- <b> -->c <i>d</i>\t\n e", "ac d e"),
            ("x <b unclosed", "x <b unclosed"),
            ("&nbsp;x", "\u{a0}x"),
        ] {
            assert_eq!(striptags(input), expected, "{input:?}");
        }
    }
}
