//! Per-character Unicode properties as CPython 3.11 sees them (Unicode 14.0).

use super::tables;

/// Property bits of `c`, from the generated run table.
pub(crate) fn props(c: char) -> u16 {
    let cp = c as u32;
    let i = tables::PROPS.partition_point(|&(start, _)| start <= cp);
    // PROPS starts at code point 0, so `i >= 1` always holds.
    match i.checked_sub(1) {
        Some(j) => tables::PROPS[j].1,
        None => 0,
    }
}

/// Whether `c` has the property bit `bit`.
pub(crate) fn has(c: char, bit: u16) -> bool {
    props(c) & bit != 0
}

/// Python's `str.isprintable()` for one character: false for categories
/// Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs other than the ASCII space.
pub fn is_printable(c: char) -> bool {
    has(c, tables::PRINTABLE)
}

/// Python's `str.isspace()` for one character (the whitespace that
/// `str.split()` and `str.strip()` use by default), e.g. includes `\x1c`-`\x1f` and `\x85`.
pub fn is_py_whitespace(c: char) -> bool {
    has(c, tables::SPACE)
}

/// Python's `str.isspace()` for one character, with an ASCII fast path.
#[inline]
pub fn is_py_space(c: char) -> bool {
    if c.is_ascii() {
        matches!(c, '\t'..='\r' | '\x1c'..='\x1f' | ' ')
    } else {
        is_py_whitespace(c)
    }
}

/// Whether `c` is cased (Lu, Ll, Lt or other upper/lowercase).
pub(crate) fn is_cased(c: char) -> bool {
    has(c, tables::UPPER | tables::LOWER | tables::TITLE)
}

/// Looks `c` up in one of the generated full case mapping tables.
pub(crate) fn map_lookup(table: &'static [(char, &'static str)], c: char) -> Option<&'static str> {
    table.binary_search_by(|&(k, _)| k.cmp(&c)).ok().map(|i| table[i].1)
}

/// Whether `c` is one of Python's line boundaries (`str.splitlines`).
pub(crate) fn is_linebreak(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_samples() {
        for c in ['a', ' ', 'é', '日', '😀', '~'] {
            assert!(is_printable(c), "{c:?}");
        }
        for c in [
            '\0', '\n', '\x7f', '\u{85}', '\u{a0}', '\u{200b}', '\u{2028}', '\u{e000}', '\u{378}', '\u{3000}',
        ] {
            assert!(!is_printable(c), "{c:?}");
        }
    }

    #[test]
    fn whitespace_samples() {
        for c in [
            ' ', '\t', '\n', '\x0b', '\x0c', '\r', '\x1c', '\x1d', '\x1e', '\x1f', '\u{85}', '\u{a0}', '\u{2028}',
            '\u{3000}',
        ] {
            assert!(is_py_whitespace(c), "{c:?}");
        }
        for c in ['a', '\u{200b}', '\0', '\u{feff}'] {
            assert!(!is_py_whitespace(c), "{c:?}");
        }
    }
}
