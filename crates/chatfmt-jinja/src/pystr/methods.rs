//! `str` methods with CPython's semantics. Indices are code points.
//! Results that are pieces of the input are returned as slices of it.

use super::unicode::{is_linebreak, is_py_whitespace};
use super::{check_size, PyError};

/// Number of code points in `s`.
fn cp_len(s: &str) -> i64 {
    s.chars().count() as i64
}

/// Byte offset of code point `i` (clamped to `0..=len`).
fn byte_at(s: &str, i: i64) -> usize {
    if i <= 0 {
        return 0;
    }
    s.char_indices().nth(i as usize).map_or(s.len(), |(b, _)| b)
}

/// CPython's `ADJUST_INDICES`: slice-style start/end for a string of `len`
/// code points. `end` is clamped to `0..=len`; `start` only from below.
fn adjust(start: Option<i64>, end: Option<i64>, len: i64) -> (i64, i64) {
    let mut end = end.unwrap_or(len);
    if end > len {
        end = len;
    } else if end < 0 {
        end = (end + len).max(0);
    }
    let mut start = start.unwrap_or(0);
    if start < 0 {
        start = (start + len).max(0);
    }
    (start, end)
}

fn strip_set(chars: Option<&str>) -> impl Fn(char) -> bool + '_ {
    move |c| match chars {
        None => is_py_whitespace(c),
        Some(set) => set.contains(c),
    }
}

/// Python `s.strip(chars)`; `None` strips `str.isspace` whitespace.
pub fn strip<'a>(s: &'a str, chars: Option<&str>) -> &'a str {
    s.trim_matches(strip_set(chars))
}

/// Python `s.lstrip(chars)`; `None` strips `str.isspace` whitespace.
pub fn lstrip<'a>(s: &'a str, chars: Option<&str>) -> &'a str {
    s.trim_start_matches(strip_set(chars))
}

/// Python `s.rstrip(chars)`; `None` strips `str.isspace` whitespace.
pub fn rstrip<'a>(s: &'a str, chars: Option<&str>) -> &'a str {
    s.trim_end_matches(strip_set(chars))
}

fn empty_separator() -> PyError {
    PyError::value("empty separator")
}

/// Python `s.split(sep, maxsplit)`; `maxsplit < 0` means no limit.
/// `sep == None` splits on runs of whitespace and drops empty pieces.
/// Errors: `ValueError("empty separator")`.
pub fn split<'a>(s: &'a str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<&'a str>, PyError> {
    let mut limit = if maxsplit < 0 { i64::MAX } else { maxsplit };
    let mut out = Vec::new();
    match sep {
        Some("") => return Err(empty_separator()),
        Some(sep) => {
            let mut rest = s;
            while limit > 0 {
                match rest.find(sep) {
                    Some(i) => {
                        out.push(&rest[..i]);
                        rest = &rest[i + sep.len()..];
                        limit -= 1;
                    }
                    None => break,
                }
            }
            out.push(rest);
        }
        None => {
            let mut rest = lstrip(s, None);
            while !rest.is_empty() {
                if limit == 0 {
                    out.push(rest);
                    break;
                }
                match rest.find(is_py_whitespace) {
                    Some(i) => {
                        out.push(&rest[..i]);
                        rest = lstrip(&rest[i..], None);
                        limit -= 1;
                    }
                    None => {
                        out.push(rest);
                        break;
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Python `s.rsplit(sep, maxsplit)`; like [`split`] but from the right.
pub fn rsplit<'a>(s: &'a str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<&'a str>, PyError> {
    let mut limit = if maxsplit < 0 { i64::MAX } else { maxsplit };
    let mut out = Vec::new();
    match sep {
        Some("") => return Err(empty_separator()),
        Some(sep) => {
            let mut rest = s;
            while limit > 0 {
                match rest.rfind(sep) {
                    Some(i) => {
                        out.push(&rest[i + sep.len()..]);
                        rest = &rest[..i];
                        limit -= 1;
                    }
                    None => break,
                }
            }
            out.push(rest);
        }
        None => {
            let mut rest = rstrip(s, None);
            while !rest.is_empty() {
                if limit == 0 {
                    out.push(rest);
                    break;
                }
                match rest.rfind(is_py_whitespace) {
                    Some(i) => {
                        let ws_len = rest[i..].chars().next().map_or(1, char::len_utf8);
                        out.push(&rest[i + ws_len..]);
                        rest = rstrip(&rest[..i], None);
                        limit -= 1;
                    }
                    None => {
                        out.push(rest);
                        break;
                    }
                }
            }
        }
    }
    out.reverse();
    Ok(out)
}

/// Python `s.splitlines(keepends)`: splits at `\n`, `\r`, `\r\n`, `\x0b`,
/// `\x0c`, `\x1c`, `\x1d`, `\x1e`, `\x85`, `\u2028`, `\u2029`.
pub fn splitlines(s: &str, keepends: bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut iter = s.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        if !is_linebreak(c) {
            continue;
        }
        let mut end = i + c.len_utf8();
        if c == '\r' {
            if let Some(&(j, '\n')) = iter.peek() {
                end = j + 1;
                iter.next();
            }
        }
        out.push(if keepends { &s[start..end] } else { &s[start..i] });
        start = end;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Python `s.startswith(prefix, start, end)` with slice semantics for `start`/`end`.
pub fn startswith(s: &str, prefix: &str, start: Option<i64>, end: Option<i64>) -> bool {
    tailmatch(s, prefix, start, end, false)
}

/// Python `s.endswith(suffix, start, end)` with slice semantics for `start`/`end`.
pub fn endswith(s: &str, suffix: &str, start: Option<i64>, end: Option<i64>) -> bool {
    tailmatch(s, suffix, start, end, true)
}

fn tailmatch(s: &str, sub: &str, start: Option<i64>, end: Option<i64>, at_end: bool) -> bool {
    // The whole string: no code points to count.
    if start.is_none() && end.is_none() {
        return if at_end { s.ends_with(sub) } else { s.starts_with(sub) };
    }
    let (start, end) = adjust(start, end, cp_len(s));
    if end - cp_len(sub) < start {
        return false;
    }
    let window = &s[byte_at(s, start)..byte_at(s, end)];
    if at_end {
        window.ends_with(sub)
    } else {
        window.starts_with(sub)
    }
}

/// The one character of `s`, if it has exactly one (searched for with `memchr`, not as a substring).
fn single_char(s: &str) -> Option<char> {
    let mut chars = s.chars();
    chars.next().filter(|_| chars.next().is_none())
}

/// The byte length of `s.replace(old, new, count)` (an upper bound), found without building it.
pub fn replaced_len(s: &str, old: &str, new: &str, count: i64) -> usize {
    let limit = if count < 0 { i64::MAX } else { count };
    let found = if old.is_empty() {
        cp_len(s) + 1
    } else {
        match single_char(old) {
            Some(c) => s.matches(c).count() as i64,
            None => s.matches(old).count() as i64,
        }
    };
    let n = found.min(limit) as usize;
    s.len().saturating_add(n.saturating_mul(new.len()))
}

/// Python `s.replace(old, new, count)`, given `len = replaced_len(s, old, new, count)` (which the
/// caller checks against its own limit first): `count < 0` replaces all; an empty `old` inserts
/// `new` before every character and at the end. `MemoryError` past
/// [`MAX_OUTPUT_CHARS`](super::MAX_OUTPUT_CHARS).
pub fn replace_sized(s: &str, old: &str, new: &str, count: i64, len: usize) -> Result<String, PyError> {
    let mut limit = if count < 0 { i64::MAX } else { count };
    check_size(len)?;
    let mut out = String::with_capacity(len);
    if old.is_empty() {
        let mut chars = s.char_indices();
        let mut rest_from = 0;
        while limit > 0 {
            out.push_str(new);
            limit -= 1;
            match chars.next() {
                Some((i, c)) => {
                    out.push(c);
                    rest_from = i + c.len_utf8();
                }
                None => {
                    rest_from = s.len();
                    break;
                }
            }
        }
        out.push_str(&s[rest_from..]);
        return Ok(out);
    }
    let mut rest = s;
    let single = single_char(old);
    while limit > 0 {
        let at = match single {
            Some(c) => rest.find(c),
            None => rest.find(old),
        };
        match at {
            Some(i) => {
                out.push_str(&rest[..i]);
                out.push_str(new);
                rest = &rest[i + old.len()..];
                limit -= 1;
            }
            None => break,
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The searched window of `s` for find-like methods, with its start index,
/// or `None` when `sub` cannot fit.
fn window<'a>(s: &'a str, sub: &str, start: Option<i64>, end: Option<i64>) -> Option<(&'a str, i64)> {
    let (start, end) = adjust(start, end, cp_len(s));
    if end - start < cp_len(sub) {
        return None;
    }
    Some((&s[byte_at(s, start)..byte_at(s, end)], start))
}

/// Python `s.find(sub, start, end)`: code point index or -1.
pub fn find(s: &str, sub: &str, start: Option<i64>, end: Option<i64>) -> i64 {
    window(s, sub, start, end)
        .and_then(|(w, base)| w.find(sub).map(|b| base + cp_len(&w[..b])))
        .unwrap_or(-1)
}

/// Python `s.rfind(sub, start, end)`: code point index or -1.
pub fn rfind(s: &str, sub: &str, start: Option<i64>, end: Option<i64>) -> i64 {
    window(s, sub, start, end)
        .and_then(|(w, base)| w.rfind(sub).map(|b| base + cp_len(&w[..b])))
        .unwrap_or(-1)
}

fn not_found() -> PyError {
    PyError::value("substring not found")
}

/// Python `s.index(sub, start, end)`; `ValueError("substring not found")`.
pub fn index(s: &str, sub: &str, start: Option<i64>, end: Option<i64>) -> Result<i64, PyError> {
    match find(s, sub, start, end) {
        -1 => Err(not_found()),
        i => Ok(i),
    }
}

/// Python `s.rindex(sub, start, end)`; `ValueError("substring not found")`.
pub fn rindex(s: &str, sub: &str, start: Option<i64>, end: Option<i64>) -> Result<i64, PyError> {
    match rfind(s, sub, start, end) {
        -1 => Err(not_found()),
        i => Ok(i),
    }
}

/// Python `s.count(sub, start, end)`: non-overlapping occurrences.
pub fn count(s: &str, sub: &str, start: Option<i64>, end: Option<i64>) -> i64 {
    match window(s, sub, start, end) {
        None => 0,
        Some((w, _)) if sub.is_empty() => cp_len(w) + 1,
        Some((w, _)) => w.matches(sub).count() as i64,
    }
}

/// Python `s.partition(sep)`; `ValueError("empty separator")`.
pub fn partition<'a>(s: &'a str, sep: &str) -> Result<(&'a str, &'a str, &'a str), PyError> {
    if sep.is_empty() {
        return Err(empty_separator());
    }
    Ok(match s.find(sep) {
        Some(i) => (&s[..i], &s[i..i + sep.len()], &s[i + sep.len()..]),
        None => (s, &s[s.len()..], &s[s.len()..]),
    })
}

/// Python `s.rpartition(sep)`; `ValueError("empty separator")`.
pub fn rpartition<'a>(s: &'a str, sep: &str) -> Result<(&'a str, &'a str, &'a str), PyError> {
    if sep.is_empty() {
        return Err(empty_separator());
    }
    Ok(match s.rfind(sep) {
        Some(i) => (&s[..i], &s[i..i + sep.len()], &s[i + sep.len()..]),
        None => (&s[..0], &s[..0], s),
    })
}

/// Python `s.removeprefix(prefix)`.
pub fn removeprefix<'a>(s: &'a str, prefix: &str) -> &'a str {
    s.strip_prefix(prefix).unwrap_or(s)
}

/// Python `s.removesuffix(suffix)`.
pub fn removesuffix<'a>(s: &'a str, suffix: &str) -> &'a str {
    s.strip_suffix(suffix).unwrap_or(s)
}

/// Python `s.zfill(width)`: zeros inserted after a leading `+`/`-`.
/// `MemoryError` past [`MAX_OUTPUT_CHARS`](super::MAX_OUTPUT_CHARS).
pub fn zfill(s: &str, width: i64) -> Result<String, PyError> {
    let len = cp_len(s);
    if width <= len {
        return Ok(s.to_string());
    }
    check_size(width as usize)?;
    let fill = (width - len) as usize;
    let mut out = String::with_capacity(s.len() + fill);
    let rest = match s.chars().next() {
        Some(c @ ('+' | '-')) => {
            out.push(c);
            &s[1..]
        }
        _ => s,
    };
    push_n(&mut out, '0', fill);
    out.push_str(rest);
    Ok(out)
}

/// Appends `n` copies of `c`.
pub(crate) fn push_n(out: &mut String, c: char, n: usize) {
    for _ in 0..n {
        out.push(c);
    }
}

fn fill_char(fillchar: Option<&str>) -> Result<char, PyError> {
    let Some(f) = fillchar else { return Ok(' ') };
    let mut it = f.chars();
    match (it.next(), it.next()) {
        (Some(c), None) => Ok(c),
        _ => Err(PyError::type_error(
            "The fill character must be exactly one character long",
        )),
    }
}

fn pad(s: &str, left: usize, right: usize, fill: char) -> Result<String, PyError> {
    check_size(left.saturating_add(right))?;
    let mut out = String::with_capacity(s.len() + (left + right) * fill.len_utf8());
    push_n(&mut out, fill, left);
    out.push_str(s);
    push_n(&mut out, fill, right);
    Ok(out)
}

/// Python `s.center(width, fillchar)` (CPython puts the odd extra fill on
/// the left when `width` is odd). `TypeError` if `fillchar` is not one character.
pub fn center(s: &str, width: i64, fillchar: Option<&str>) -> Result<String, PyError> {
    let fill = fill_char(fillchar)?;
    let len = cp_len(s);
    if width <= len {
        return Ok(s.to_string());
    }
    let marg = width - len;
    let left = marg / 2 + (marg & width & 1);
    pad(s, left as usize, (marg - left) as usize, fill)
}

/// Python `s.ljust(width, fillchar)`. `TypeError` if `fillchar` is not one character.
pub fn ljust(s: &str, width: i64, fillchar: Option<&str>) -> Result<String, PyError> {
    let fill = fill_char(fillchar)?;
    let len = cp_len(s);
    pad(s, 0, width.saturating_sub(len).max(0) as usize, fill)
}

/// Python `s.rjust(width, fillchar)`. `TypeError` if `fillchar` is not one character.
pub fn rjust(s: &str, width: i64, fillchar: Option<&str>) -> Result<String, PyError> {
    let fill = fill_char(fillchar)?;
    let len = cp_len(s);
    pad(s, width.saturating_sub(len).max(0) as usize, 0, fill)
}

/// Python `s.expandtabs(tabsize)`: the column restarts after `\n` and `\r`;
/// with `tabsize <= 0` tabs are removed. `MemoryError` past
/// [`MAX_OUTPUT_CHARS`](super::MAX_OUTPUT_CHARS).
pub fn expandtabs(s: &str, tabsize: i64) -> Result<String, PyError> {
    let mut out = String::with_capacity(s.len());
    let mut col: i64 = 0;
    for c in s.chars() {
        match c {
            '\t' => {
                if tabsize > 0 {
                    let n = tabsize - col % tabsize;
                    check_size((out.len() as u64).saturating_add(n as u64) as usize)?;
                    push_n(&mut out, ' ', n as usize);
                    col += n;
                }
            }
            '\n' | '\r' => {
                out.push(c);
                col = 0;
            }
            c => {
                out.push(c);
                col += 1;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{boolean, check, int, load, opt_int, opt_string, result, string, strings};

    fn is_within(piece: &str, s: &str) -> bool {
        let (p, b) = (piece.as_ptr() as usize, s.as_ptr() as usize);
        p >= b && p + piece.len() <= b + s.len()
    }

    #[test]
    fn strip_matches_cpython() {
        for case in load("strip", 160).iter().chain(&load("random_strip", 800)) {
            let (s, chars) = (string(&case[0]), opt_string(&case[1]));
            let [a, l, r] = [2, 3, 4].map(|i| string(&case[i]));
            assert_eq!(strip(s, chars), a, "{s:?}.strip({chars:?})");
            assert_eq!(lstrip(s, chars), l, "{s:?}.lstrip({chars:?})");
            assert_eq!(rstrip(s, chars), r, "{s:?}.rstrip({chars:?})");
            assert!(is_within(strip(s, chars), s));
        }
    }

    #[test]
    fn split_matches_cpython() {
        for case in load("split", 1000).iter().chain(&load("random_split", 1500)) {
            let (s, sep, m) = (string(&case[0]), opt_string(&case[1]), int(&case[2]));
            let [want, rwant] = [3, 4].map(|i| result(&case[i], strings));
            let what = format!("{s:?}.split({sep:?}, {m})");
            let got = split(s, sep, m);
            if let Ok(pieces) = &got {
                assert!(pieces.iter().all(|p| is_within(p, s)), "{what}");
            }
            check(got, &want, &what);
            check(rsplit(s, sep, m), &rwant, &format!("r{what}"));
        }
    }

    #[test]
    fn splitlines_matches_cpython() {
        for case in load("splitlines", 20).iter().chain(&load("random_splitlines", 800)) {
            let (s, plain, keep) = (string(&case[0]), strings(&case[1]), strings(&case[2]));
            assert_eq!(splitlines(s, false), plain, "{s:?}");
            assert_eq!(splitlines(s, true), keep, "{s:?}");
        }
    }

    #[test]
    fn find_family_matches_cpython() {
        for case in load("find", 2400).iter().chain(&load("random_find", 1500)) {
            let (s, sub, st, en) = (string(&case[0]), string(&case[1]), opt_int(&case[2]), opt_int(&case[3]));
            let (sw, ew) = (boolean(&case[4]), boolean(&case[5]));
            let [f, rf, c] = [6, 7, 8].map(|i| int(&case[i]));
            let what = format!("{s:?} {sub:?} {st:?} {en:?}");
            assert_eq!(startswith(s, sub, st, en), sw, "startswith {what}");
            assert_eq!(endswith(s, sub, st, en), ew, "endswith {what}");
            assert_eq!(find(s, sub, st, en), f, "find {what}");
            assert_eq!(rfind(s, sub, st, en), rf, "rfind {what}");
            assert_eq!(count(s, sub, st, en), c, "count {what}");
            assert_eq!(index(s, sub, st, en).unwrap_or(-1), f, "index {what}");
            assert_eq!(rindex(s, sub, st, en).unwrap_or(-1), rf, "rindex {what}");
        }
        assert_eq!(
            index("abc", "z", None, None).unwrap_err().message,
            "substring not found"
        );
    }

    #[test]
    fn replace_matches_cpython() {
        for case in load("replace", 2100) {
            let [s, old, new, want] = [0, 1, 2, 4].map(|i| string(&case[i]));
            let c = int(&case[3]);
            assert_eq!(
                replace_sized(s, old, new, c, replaced_len(s, old, new, c)).as_deref(),
                Ok(want),
                "{s:?}.replace({old:?}, {new:?}, {c})"
            );
        }
    }

    #[test]
    fn partition_matches_cpython() {
        for case in load("partition", 180) {
            let [s, sep, rmp, rms] = [0, 1, 4, 5].map(|i| string(&case[i]));
            let [p, rp] = [2, 3].map(|i| {
                result(&case[i], |v| {
                    let [a, b, c] = [0, 1, 2].map(|j| string(&v[j]));
                    (a, b, c)
                })
            });
            let what = format!("{s:?} {sep:?}");
            check(partition(s, sep), &p, &what);
            check(rpartition(s, sep), &rp, &what);
            assert_eq!(removeprefix(s, sep), rmp, "{what}");
            assert_eq!(removesuffix(s, sep), rms, "{what}");
        }
    }

    #[test]
    fn justify_matches_cpython() {
        for case in load("just", 600) {
            let (s, w, f) = (string(&case[0]), int(&case[1]), opt_string(&case[2]));
            let [c, l, r] = [3, 4, 5].map(|i| result(&case[i], string));
            let z = string(&case[6]);
            let what = format!("{s:?} {w} {f:?}");
            check(center(s, w, f), &c, &what);
            check(ljust(s, w, f), &l, &what);
            check(rjust(s, w, f), &r, &what);
            assert_eq!(zfill(s, w).as_deref(), Ok(z), "{what}");
        }
    }

    #[test]
    fn huge_results_are_memory_errors() {
        let mem = |r: Result<String, PyError>| r.map_err(|e| e.kind);
        assert_eq!(mem(zfill("1", i64::MAX)), Err(crate::pystr::PyErrorKind::MemoryError));
        assert_eq!(
            mem(center("1", i64::MAX, None)),
            Err(crate::pystr::PyErrorKind::MemoryError)
        );
        assert_eq!(
            mem(ljust("1", 1 << 40, Some("x"))),
            Err(crate::pystr::PyErrorKind::MemoryError)
        );
        assert_eq!(
            mem(expandtabs("\t\t", i64::MAX)),
            Err(crate::pystr::PyErrorKind::MemoryError)
        );
        let big = "x".repeat(1 << 16);
        assert_eq!(
            mem(replace_sized(&big, "", &big, -1, replaced_len(&big, "", &big, -1))),
            Err(crate::pystr::PyErrorKind::MemoryError)
        );
        assert_eq!(rjust("ab", i64::MIN, None).as_deref(), Ok("ab"));
        assert_eq!(zfill("ab", i64::MIN).as_deref(), Ok("ab"));
    }

    #[test]
    fn expandtabs_matches_cpython() {
        for case in load("expandtabs", 100) {
            let (s, t, want) = (string(&case[0]), int(&case[1]), string(&case[2]));
            assert_eq!(expandtabs(s, t).as_deref(), Ok(want), "{s:?} {t}");
        }
    }
}
