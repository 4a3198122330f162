//! Number conversions: `float(str)`, `int(str, base)` and `round(x, n)`.

use super::repr::str_repr;
use super::tables::DECIMAL_ZEROS;
use super::unicode::is_py_whitespace;
use super::{PyError, PyErrorKind, MAX_INT_BITS};
use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;

/// CPython's `_PyUnicode_TransformDecimalAndSpaceToASCII`: non-ASCII
/// whitespace becomes a space, non-ASCII decimal digits become ASCII ones;
/// anything else non-ASCII ends the text with `?` (which then fails).
fn to_ascii_number(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if (c as u32) < 127 {
            out.push(c);
        } else if is_py_whitespace(c) {
            out.push(' ');
        } else if let Some(d) = decimal_value(c) {
            out.push(char::from(b'0' + d));
        } else {
            out.push('?');
            break;
        }
    }
    out
}

/// The value of a Unicode decimal digit (category Nd), from the run of ten
/// that starts at the nearest zero at or below it.
fn decimal_value(c: char) -> Option<u8> {
    if !super::isdecimal(c.encode_utf8(&mut [0; 4])) {
        return None;
    }
    let cp = c as u32;
    let i = DECIMAL_ZEROS.partition_point(|&z| z <= cp);
    let zero = DECIMAL_ZEROS.get(i.checked_sub(1)?)?;
    u8::try_from(cp - zero).ok().filter(|&d| d < 10)
}

/// Python's ASCII whitespace set used by the number parsers.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

fn float_error(s: &str) -> PyError {
    let mut m = String::from("could not convert string to float: ");
    str_repr(s, &mut m);
    PyError::value(m)
}

/// Removes underscores that sit between two digits; `None` if any other
/// underscore is present.
fn strip_underscores(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let before = i > 0 && b[i - 1].is_ascii_digit();
            let after = b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !(before && after) {
                return None;
            }
        } else {
            out.push(c as char);
        }
    }
    Some(out)
}

/// Whether `s` is a decimal float literal as C's `strtod` reads it
/// (digits with an optional point and exponent, after an optional sign).
fn is_decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut digits = i - start;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let f = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        digits += i - f;
    }
    if digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let e = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == e {
            return false;
        }
    }
    i == b.len()
}

/// Python `float(s)` for a string: surrounding whitespace ignored,
/// underscores between digits, Unicode decimal digits, `inf`/`infinity`/
/// `nan` in any case with a sign; out-of-range values become `±inf` or 0.
/// Error: `ValueError: could not convert string to float: '...'`.
pub fn parse_float(s: &str) -> Result<f64, PyError> {
    let ascii = to_ascii_number(s);
    let t = ascii.trim_matches(is_c_space);
    let t = if t.contains('_') {
        strip_underscores(t).ok_or_else(|| float_error(s))?
    } else {
        t.to_string()
    };
    let (sign, body) = match t.as_bytes().first() {
        Some(b'-') => (-1.0, &t[1..]),
        Some(b'+') => (1.0, &t[1..]),
        _ => (1.0, t.as_str()),
    };
    let lower = body.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" {
        return Ok(sign * f64::INFINITY);
    }
    if lower == "nan" {
        return Ok(f64::NAN);
    }
    if !is_decimal_literal(&t) {
        return Err(float_error(s));
    }
    t.parse::<f64>().map_err(|_| float_error(s))
}

/// Python `int(s, base)` for a string (`base` 0 or 2..=36): surrounding
/// whitespace ignored, a sign, a `0x`/`0o`/`0b` prefix matching the base (or
/// selecting it when `base == 0`), underscores between digits, Unicode
/// decimal digits. Errors: `ValueError: invalid literal for int() with base
/// 10: '...'`, `ValueError: int() base must be >= 2 and <= 36, or 0`, and
/// beyond 4300 digits in a base that is not a power of two CPython's
/// `ValueError: Exceeds the limit (4300 digits) ...`; a value wider than
/// [`MAX_INT_BITS`] is a `MemoryError`.
pub fn parse_int(s: &str, base: i64) -> Result<BigInt, PyError> {
    if base != 0 && !(2..=36).contains(&base) {
        return Err(PyError::value("int() base must be >= 2 and <= 36, or 0"));
    }
    let invalid = || {
        let mut r = String::new();
        str_repr(s, &mut r);
        // CPython formats the repr with `%.200R`.
        let r: String = r.chars().take(200).collect();
        PyError::value(format!("invalid literal for int() with base {base}: {r}"))
    };
    let ascii = to_ascii_number(s);
    let t = ascii.trim_matches(is_c_space);
    let (negative, mut body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut radix = base as u32;
    let lower = body.get(..2).map(str::to_ascii_lowercase);
    let prefix_radix = match lower.as_deref() {
        Some("0x") => 16,
        Some("0o") => 8,
        Some("0b") => 2,
        _ => 0,
    };
    let mut prefixed = false;
    if prefix_radix != 0 && (base == 0 || base as u32 == prefix_radix) {
        radix = prefix_radix;
        body = &body[2..];
        prefixed = true;
    } else if base == 0 {
        radix = 10;
    }
    // After a prefix one leading underscore is allowed.
    if prefixed {
        if let Some(rest) = body.strip_prefix('_') {
            body = rest;
        }
    }
    // The digits up to the first character that is not one.
    let mut digits = Vec::with_capacity(body.len());
    let mut well_formed = !(body.is_empty() || body.starts_with('_') || body.ends_with('_') || body.contains("__"));
    for c in body.chars().filter(|&c| c != '_') {
        match c.to_digit(radix) {
            Some(d) => digits.push(d as u8),
            None => {
                well_formed = false;
                break;
            }
        }
    }
    if !radix.is_power_of_two() && digits.len() > MAX_STR_DIGITS {
        return Err(PyError::value(format!(
            "Exceeds the limit ({MAX_STR_DIGITS} digits) for integer string conversion: value has {} digits; \
             use sys.set_int_max_str_digits() to increase the limit",
            digits.len()
        )));
    }
    if !well_formed {
        return Err(invalid());
    }
    if base == 0 && !prefixed && digits.len() > 1 && digits[0] == 0 && digits.iter().any(|&d| d != 0) {
        // Leading zeros are only allowed for zero itself.
        return Err(invalid());
    }
    if digits.len() as f64 * f64::from(radix).log2() > MAX_INT_BITS as f64 + 8.0 {
        return Err(PyError::new(PyErrorKind::MemoryError, ""));
    }
    let magnitude = BigUint::from_radix_be(&digits, radix).ok_or_else(invalid)?;
    Ok(BigInt::from_biguint(
        if negative { Sign::Minus } else { Sign::Plus },
        magnitude,
    ))
}

/// CPython's limit on the digits of an `int(s)` in a base that is not a power of two.
const MAX_STR_DIGITS: usize = 4300;

/// Python `round(x, ndigits)` for a float (`ndigits` given, so the result is
/// a float): correctly rounded, exact ties to even; NaN and infinities are
/// returned as they are. Error: `OverflowError: rounded value too large to
/// represent`.
pub fn py_round(x: f64, ndigits: i64) -> Result<f64, PyError> {
    if !x.is_finite() {
        return Ok(x);
    }
    if ndigits > 323 {
        return Ok(x);
    }
    if ndigits < -308 {
        return Ok(0.0 * x);
    }
    if ndigits >= 0 {
        let s = format!("{:.*}", ndigits as usize, x);
        return Ok(s.parse().unwrap_or(x));
    }
    let k = ndigits.unsigned_abs() as usize;
    let int_digits = format!("{:.0}", x.abs().trunc());
    let fraction = x.fract() != 0.0;
    // Pad so that there is at least one digit above the rounding position.
    let mut digits = String::new();
    for _ in int_digits.len()..=k {
        digits.push('0');
    }
    digits.push_str(&int_digits);
    let (head, tail) = digits.split_at(digits.len() - k);
    let tail = tail.as_bytes();
    let up = match tail[0].cmp(&b'5') {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => {
            if tail[1..].iter().any(|&d| d != b'0') || fraction {
                true
            } else {
                head.as_bytes().last().is_some_and(|d| (d - b'0') % 2 == 1)
            }
        }
    };
    let mut head: Vec<u8> = head.bytes().collect();
    if up {
        let mut i = head.len();
        loop {
            if i == 0 {
                head.insert(0, b'1');
                break;
            }
            i -= 1;
            if head[i] == b'9' {
                head[i] = b'0';
            } else {
                head[i] += 1;
                break;
            }
        }
    }
    let mut text = String::from(if x.is_sign_negative() { "-" } else { "" });
    text.extend(head.iter().map(|&b| b as char));
    text.push_str(&format!("e{k}"));
    let r: f64 = text.parse().unwrap_or(f64::INFINITY);
    if r.is_infinite() {
        return Err(PyError::new(
            PyErrorKind::OverflowError,
            "rounded value too large to represent",
        ));
    }
    Ok(r)
}

/// Python `round(n, ndigits)` for an int: `n` itself when `ndigits >= 0`, else rounded to a
/// multiple of `10**-ndigits`, exact ties to even (`int.__round__`).
pub fn py_round_int(n: &BigInt, ndigits: i64) -> BigInt {
    if ndigits >= 0 {
        return n.clone();
    }
    let k = ndigits.unsigned_abs();
    // A power of ten past twice the magnitude rounds everything to 0 (and is never built).
    if k > n.bits().saturating_add(1) {
        return BigInt::default();
    }
    let p = BigInt::from(10u32).pow(k as u32);
    let (q, r) = (n.div_floor(&p), n.mod_floor(&p));
    let twice = &r * 2u32;
    let up = match twice.cmp(&p) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => q.is_odd(),
    };
    (q + u32::from(up)) * p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{bits, check, int, load, result, result_message, string};

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn parse_float_matches_cpython() {
        for case in load("parse_float", 68) {
            let (s, want) = (string(&case[0]), result_message(&case[1], bits));
            match (parse_float(s), want) {
                (Ok(g), Ok(w)) => assert!(same(g, f64::from_bits(w)), "{s:?}: {g}"),
                (Err(e), Err(m)) => assert_eq!(e.message, m, "{s:?}"),
                (g, w) => panic!("{s:?}: got {g:?}, want {w:?}"),
            }
        }
    }

    #[test]
    fn parse_int_matches_cpython() {
        for case in load("parse_int", 61) {
            let (s, base) = (string(&case[0]), int(&case[1]));
            let got = parse_int(s, base).map(|n| n.to_string());
            let want = match result(&case[2], |v| int(v).to_string()) {
                // The reference values are 64-bit: a wider result is written as this error.
                Err(("OverflowError", "Python int too large to convert to C long")) => {
                    let digits = s.trim().trim_start_matches('+');
                    BigInt::parse_bytes(digits.as_bytes(), base as u32)
                        .map(|n| n.to_string())
                        .ok_or(("unparsable", s))
                }
                want => want,
            };
            check(got, &want, &format!("int({s:?}, {base})"));
        }
    }

    #[test]
    fn int_round_matches_cpython() {
        let big = |v: &serde_json::Value| {
            v.as_str()
                .and_then(|s| s.parse::<BigInt>().ok())
                .expect("a decimal string")
        };
        for case in load("round_int", 279) {
            let (n, k, want) = (big(&case[0]), int(&case[1]), big(&case[2]["ok"]));
            assert_eq!(py_round_int(&n, k), want, "round({n}, {k})");
        }
    }

    #[test]
    fn round_matches_cpython() {
        for case in load("round", 647) {
            let (x, n, want) = (
                f64::from_bits(bits(&case[0])),
                int(&case[1]),
                result_message(&case[2], bits),
            );
            match (py_round(x, n), want) {
                (Ok(g), Ok(w)) => assert!(same(g, f64::from_bits(w)), "round({x:?}, {n}): {g:?}"),
                (Err(e), Err(m)) => assert_eq!(e.message, m, "round({x:?}, {n})"),
                (g, w) => panic!("round({x:?}, {n}): got {g:?}, want {w:?}"),
            }
        }
    }
}
