//! Jinja filters whose result is pure Python string semantics.

use super::case::{lower, upper};
use super::tables::{ALPHA, DECIMAL, DIGIT, NUMERIC, XID_CONTINUE};
use super::unicode::{has, is_py_whitespace};

/// Jinja's `|title`: the text is split at runs of `-`, whitespace, `(`,
/// `{`, `[` and `<` (kept); every piece gets `piece[0].upper() +
/// piece[1:].lower()` (Python's full case mappings).
pub fn jinja_title(s: &str) -> String {
    let is_sep = |c: char| matches!(c, '-' | '(' | '{' | '[' | '<') || is_py_whitespace(c);
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(first) = rest.chars().next() {
        let sep = is_sep(first);
        let end = rest
            .char_indices()
            .find(|&(_, c)| is_sep(c) != sep)
            .map_or(rest.len(), |(i, _)| i);
        let piece = &rest[..end];
        let first_len = first.len_utf8();
        out.push_str(&upper(&piece[..first_len]));
        out.push_str(&lower(&piece[first_len..]));
        rest = &rest[end..];
    }
    out
}

/// A character of a Jinja name token: a Python `\w` character (alphanumeric in the `str.isalnum`
/// sense, or `_`) or an XID_Continue one (Jinja2's lexer adds those, such as `·` and combining
/// marks). The token is a name only if it is also a Python identifier.
pub fn is_jinja_name_char(c: char) -> bool {
    c == '_' || has(c, ALPHA | DECIMAL | DIGIT | NUMERIC | XID_CONTINUE)
}

/// Jinja's `|wordcount`: the number of `\w+` runs (Python's Unicode word
/// characters: alphanumeric in the `str.isalnum` sense, or `_`).
pub fn jinja_wordcount(s: &str) -> usize {
    let word = |c: char| c == '_' || has(c, ALPHA | DECIMAL | DIGIT | NUMERIC);
    let mut count = 0;
    let mut in_word = false;
    for c in s.chars() {
        let w = word(c);
        if w && !in_word {
            count += 1;
        }
        in_word = w;
    }
    count
}

/// Appends `s` with HTML special characters escaped as markupsafe does.
pub fn escape_into(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}
