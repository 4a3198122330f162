//! Case conversions and character-class predicates of `str`, with CPython's
//! full (multi-character) mappings and final-sigma rule.

use super::tables::{
    ALPHA, CASE_IGNORABLE, DECIMAL, DIGIT, FOLD_MAP, LOWER, LOWER_MAP, NUMERIC, PRINTABLE, SPACE, TITLE, TITLE_MAP,
    UPPER, UPPER_MAP, XID_CONTINUE, XID_START,
};
use super::unicode::{has, is_cased, map_lookup};

const CAPITAL_SIGMA: char = '\u{3a3}';

fn push_mapped(out: &mut String, table: &'static [(char, &'static str)], c: char) {
    match map_lookup(table, c) {
        Some(m) => out.push_str(m),
        None => out.push(c),
    }
}

/// CPython's final-sigma test for the capital sigma at `chars[i]`: preceded
/// by a cased letter and not followed by one (case-ignorable ones skipped).
fn is_final_sigma(chars: &[char], i: usize) -> bool {
    let before = chars[..i].iter().rev().find(|&&c| !has(c, CASE_IGNORABLE));
    if !before.is_some_and(|&c| is_cased(c)) {
        return false;
    }
    let after = chars[i + 1..].iter().find(|&&c| !has(c, CASE_IGNORABLE));
    !after.is_some_and(|&c| is_cased(c))
}

/// Lowercases `chars[i]` into `out`, applying the final-sigma rule.
fn push_lower(out: &mut String, chars: &[char], i: usize) {
    let c = chars[i];
    if c == CAPITAL_SIGMA {
        out.push(if is_final_sigma(chars, i) { '\u{3c2}' } else { '\u{3c3}' });
    } else {
        push_mapped(out, &LOWER_MAP, c);
    }
}

/// Python `s.upper()` (full mappings: `'ß'` → `'SS'`, `'ﬁ'` → `'FI'`).
pub fn upper(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // ASCII maps without a table lookup; a run of one character is looked up once.
    let mut last: Option<(char, Option<&'static str>)> = None;
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_uppercase());
            continue;
        }
        let mapped = match last {
            Some((prev, m)) if prev == c => m,
            _ => {
                let m = map_lookup(&UPPER_MAP, c);
                last = Some((c, m));
                m
            }
        };
        match mapped {
            Some(m) => out.push_str(m),
            None => out.push(c),
        }
    }
    out
}

/// Python `s.lower()` (full mappings, `'İ'` → `'i̇'`, final sigma → `'ς'`).
pub fn lower(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for i in 0..chars.len() {
        push_lower(&mut out, &chars, i);
    }
    out
}

/// Python `s.casefold()`.
pub fn casefold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_mapped(&mut out, &FOLD_MAP, c);
    }
    out
}

/// Python `s.capitalize()`: first character title-cased, the rest lowercased.
pub fn capitalize(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        if i == 0 {
            push_mapped(&mut out, &TITLE_MAP, c);
        } else {
            push_lower(&mut out, &chars, i);
        }
    }
    out
}

/// Python `s.title()`: a character following a cased one is lowercased,
/// any other is title-cased (so `"they're"` → `"They'Re"`).
pub fn title(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for (i, &c) in chars.iter().enumerate() {
        if prev_cased {
            push_lower(&mut out, &chars, i);
        } else {
            push_mapped(&mut out, &TITLE_MAP, c);
        }
        prev_cased = is_cased(c);
    }
    out
}

/// Python `s.swapcase()`.
pub fn swapcase(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        if has(c, UPPER) {
            push_lower(&mut out, &chars, i);
        } else if has(c, LOWER) {
            push_mapped(&mut out, &UPPER_MAP, c);
        } else {
            out.push(c);
        }
    }
    out
}

fn all_nonempty(s: &str, bits: u16) -> bool {
    !s.is_empty() && s.chars().all(|c| has(c, bits))
}

/// Python `s.isalpha()`.
pub fn isalpha(s: &str) -> bool {
    all_nonempty(s, ALPHA)
}

/// Python `s.isdecimal()` (category Nd).
pub fn isdecimal(s: &str) -> bool {
    all_nonempty(s, DECIMAL)
}

/// Python `s.isdigit()` (decimal and digit numeric types, e.g. `'²'`).
pub fn isdigit(s: &str) -> bool {
    all_nonempty(s, DIGIT)
}

/// Python `s.isnumeric()` (any numeric type, e.g. `'½'`, `'五'`).
pub fn isnumeric(s: &str) -> bool {
    all_nonempty(s, NUMERIC)
}

/// Python `s.isalnum()`: every character is alpha, decimal, digit or numeric.
pub fn isalnum(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| has(c, ALPHA | DECIMAL | DIGIT | NUMERIC))
}

/// Python `s.isspace()`.
pub fn isspace(s: &str) -> bool {
    all_nonempty(s, SPACE)
}

/// Python `s.isupper()`: at least one cased character and no lowercase or
/// titlecase one.
pub fn isupper(s: &str) -> bool {
    let mut cased = false;
    for c in s.chars() {
        if has(c, LOWER | TITLE) {
            return false;
        }
        cased |= has(c, UPPER);
    }
    cased
}

/// Python `s.islower()`: at least one cased character and no uppercase or
/// titlecase one.
pub fn islower(s: &str) -> bool {
    let mut cased = false;
    for c in s.chars() {
        if has(c, UPPER | TITLE) {
            return false;
        }
        cased |= has(c, LOWER);
    }
    cased
}

/// Python `s.istitle()`: uppercase/titlecase characters only after uncased
/// ones, lowercase only after cased ones, and at least one cased character.
pub fn istitle(s: &str) -> bool {
    let mut cased = false;
    let mut prev_cased = false;
    for c in s.chars() {
        if has(c, UPPER | TITLE) {
            if prev_cased {
                return false;
            }
            prev_cased = true;
            cased = true;
        } else if has(c, LOWER) {
            if !prev_cased {
                return false;
            }
            prev_cased = true;
            cased = true;
        } else {
            prev_cased = false;
        }
    }
    cased
}

/// Python `s.isidentifier()`: XID_Start or `_`, then XID_Continue characters.
pub fn isidentifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if has(c, XID_START) => chars.all(|c| has(c, XID_CONTINUE)),
        _ => false,
    }
}

/// Python `s.isprintable()` (true for the empty string).
pub fn isprintable(s: &str) -> bool {
    s.chars().all(|c| has(c, PRINTABLE))
}

/// Python `s.isascii()` (true for the empty string).
pub fn isascii(s: &str) -> bool {
    s.is_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{int, load, string};

    #[test]
    fn conversions_match_cpython() {
        for case in load("case", 70).iter().chain(&load("random_case", 1500)) {
            let [s, u, l, c, t, sw, f] = [0, 1, 2, 3, 4, 5, 6].map(|i| string(&case[i]));
            assert_eq!(upper(s), u, "upper {s:?}");
            assert_eq!(lower(s), l, "lower {s:?}");
            assert_eq!(capitalize(s), c, "capitalize {s:?}");
            assert_eq!(title(s), t, "title {s:?}");
            assert_eq!(swapcase(s), sw, "swapcase {s:?}");
            assert_eq!(casefold(s), f, "casefold {s:?}");
        }
    }

    #[test]
    fn predicates_match_cpython() {
        let preds: [fn(&str) -> bool; 13] = [
            isalpha,
            isdigit,
            isdecimal,
            isnumeric,
            isalnum,
            isspace,
            isupper,
            islower,
            istitle,
            isidentifier,
            isprintable,
            isascii,
            |s| s.is_empty(),
        ];
        for case in load("predicate", 3818).iter().chain(&load("random_predicate", 1500)) {
            let (s, mask) = (string(&case[0]), int(&case[1]));
            for (bit, p) in preds.iter().enumerate() {
                assert_eq!(p(s), mask & (1 << bit) != 0, "predicate {bit} of {s:?}");
            }
        }
    }
}
