//! Float to text conversions with CPython's rules (`repr`, `%`-style and
//! format-spec `e`/`f`/`g`), all correctly rounded.

/// Fractional digits that show every f64 exactly in positional notation
/// (the smallest subnormal has 1074).
const EXACT_FIXED_DIGITS: usize = 1100;
/// Mantissa digits that show every f64 exactly in scientific notation (at
/// most 767 significant digits).
const EXACT_SCI_DIGITS: usize = 800;

/// `format!("{:.prec$}", x)` for any `prec` (Rust's formatter limits the
/// precision to `u16::MAX`; digits past the exact expansion are zeros).
fn fmt_fixed(x: f64, prec: usize) -> String {
    if prec <= EXACT_FIXED_DIGITS {
        return format!("{:.*}", prec, x);
    }
    let mut s = format!("{:.*}", EXACT_FIXED_DIGITS, x);
    super::methods::push_n(&mut s, '0', prec - EXACT_FIXED_DIGITS);
    s
}

/// `format!("{:.prec$e}", x)` for any `prec` (see [`fmt_fixed`]).
fn fmt_sci(x: f64, prec: usize) -> String {
    if prec <= EXACT_SCI_DIGITS {
        return format!("{:.*e}", prec, x);
    }
    let s = format!("{:.*e}", EXACT_SCI_DIGITS, x);
    let (mant, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let mut out = mant.to_string();
    super::methods::push_n(&mut out, '0', prec - EXACT_SCI_DIGITS);
    out.push('e');
    out.push_str(exp);
    out
}

/// Splits Rust's `{:e}` output into mantissa digits and exponent.
fn split_sci(s: &str) -> (String, i32) {
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// Shortest round-trip decimal digits of a finite `x >= 0` and the decimal
/// exponent of the first digit (value = d.ddd × 10^exp), as CPython's repr
/// picks them: among the shortest strings that round-trip, the one nearest
/// to `x`, ties to even.
fn shortest_digits(x: f64) -> (String, i32) {
    let shortest = format!("{:e}", x);
    let (digits, exp) = split_sci(&shortest);
    // Rust's shortest mode may settle an exact tie between two candidates
    // upwards; the correctly rounded (ties-to-even) string of the same
    // length is CPython's choice whenever it round-trips too.
    let rounded = fmt_sci(x, digits.len().saturating_sub(1));
    if rounded != shortest && rounded.parse::<f64>() == Ok(x) {
        return split_sci(&rounded);
    }
    (digits, exp)
}

/// Places `digits` (first digit at decimal exponent `exp`) in positional
/// notation; when `min_frac` is true a fractional part of at least one digit
/// is always written.
fn positional(digits: &str, exp: i32, min_frac: bool) -> String {
    let mut out = String::new();
    if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits);
        return out;
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        out.push_str(digits);
        for _ in digits.len()..int_len {
            out.push('0');
        }
        if min_frac {
            out.push_str(".0");
        }
    } else {
        out.push_str(&digits[..int_len]);
        out.push('.');
        out.push_str(&digits[int_len..]);
    }
    out
}

/// Python's exponent suffix: `e+05`, `e-10`, `e+300` (at least two digits).
fn push_exponent(out: &mut String, exp: i32, upper: bool) {
    out.push(if upper { 'E' } else { 'e' });
    out.push(if exp < 0 { '-' } else { '+' });
    let a = exp.unsigned_abs();
    if a < 10 {
        out.push('0');
    }
    out.push_str(&a.to_string());
}

/// Scientific notation of `digits` with exponent `exp`, as `repr` writes it.
fn scientific(digits: &str, exp: i32, upper: bool) -> String {
    let mut out = String::new();
    let (first, rest) = digits.split_at(1.min(digits.len()));
    out.push_str(first);
    if !rest.is_empty() {
        out.push('.');
        out.push_str(rest);
    }
    push_exponent(&mut out, exp, upper);
    out
}

/// `repr()` of a finite, non-negative float, without the sign.
/// `add_dot_0` appends `.0` to integral positional results (as repr does).
pub(crate) fn repr_abs(x: f64, add_dot_0: bool) -> String {
    let (digits, exp) = shortest_digits(x);
    if (-4..16).contains(&exp) {
        positional(&digits, exp, add_dot_0)
    } else {
        scientific(&digits, exp, false)
    }
}

/// Python `repr(float)` (identical to `str(float)`): the shortest digits that
/// round-trip, positional for exponents in `-4..16`, otherwise scientific
/// (`1e+16`, `1e-05`); `inf`, `-inf`, `nan`, `-0.0`.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    let body = if x.is_infinite() {
        "inf".to_string()
    } else {
        repr_abs(x.abs(), true)
    };
    if x.is_sign_negative() {
        format!("-{body}")
    } else {
        body
    }
}

/// A float as `json.dumps` writes it: `NaN`, `Infinity`, `-Infinity`, else `repr`.
pub fn float_json(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        float_repr(x)
    }
}

/// `%f` of a finite non-negative value with `prec` fractional digits
/// (correctly rounded, ties to even on exact halves like CPython).
pub(crate) fn fixed_abs(x: f64, prec: usize, alt: bool) -> String {
    let mut s = fmt_fixed(x, prec);
    if alt && prec == 0 {
        s.push('.');
    }
    s
}

/// `%e` of a finite non-negative value with `prec` fractional digits.
pub(crate) fn exp_abs(x: f64, prec: usize, alt: bool, upper: bool) -> String {
    let s = fmt_sci(x, prec);
    let (mant, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let mut out = mant.to_string();
    if alt && prec == 0 {
        out.push('.');
    }
    push_exponent(&mut out, exp.parse().unwrap_or(0), upper);
    out
}

/// Decimal exponent of `x` once rounded to `sig` significant digits.
fn rounded_exponent(x: f64, sig: usize) -> i32 {
    let s = fmt_sci(x, sig.saturating_sub(1));
    s.split_once('e').and_then(|(_, e)| e.parse().ok()).unwrap_or(0)
}

/// Strips trailing zeros of the fraction (and a bare trailing point) from a
/// positional or scientific number.
fn strip_fraction_zeros(s: &str) -> String {
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    let mant = if mant.contains('.') {
        mant.trim_end_matches('0').trim_end_matches('.')
    } else {
        mant
    };
    format!("{mant}{exp}")
}

/// `%g` of a finite non-negative value: `prec` significant digits (0 means
/// 1), scientific when the exponent is `< -4` or `>= prec`; trailing zeros
/// removed unless `alt`. With `add_dot_0` (format spec without a type), the
/// switch to scientific happens at `prec - 1` and a positional result keeps
/// at least one fractional digit.
pub(crate) fn general_abs(x: f64, prec: usize, alt: bool, upper: bool, add_dot_0: bool) -> String {
    let p = prec.max(1);
    let exp = rounded_exponent(x, p);
    let limit = if add_dot_0 { p as i32 - 1 } else { p as i32 };
    let s = if exp < -4 || exp >= limit {
        exp_abs(x, p - 1, alt, upper)
    } else {
        let frac = (p as i32 - 1 - exp).max(0) as usize;
        fixed_abs(x, frac, alt)
    };
    let mut s = if alt { s } else { strip_fraction_zeros(&s) };
    if add_dot_0 && !s.contains(['.', 'e', 'E']) {
        s.push_str(".0");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{bits, load, string};

    #[test]
    fn huge_precisions_do_not_hit_the_formatter_limit() {
        let f = fixed_abs(0.1, 70_000, false);
        assert_eq!(f.len(), 70_002);
        assert!(f.starts_with("0.1000000000000000055511151231257827"));
        assert!(f.ends_with("000"));
        let e = exp_abs(5e-324, 70_000, false, false);
        assert!(e.starts_with("4.940656458412465441765687928682213723650598026143247644255856825006755"));
        assert!(e.ends_with("0e-324"));
        assert_eq!(general_abs(1.0, 100_000, false, false, false), "1");
        assert_eq!(rounded_exponent(123.0, 100_000), 2);
    }

    #[test]
    fn repr_and_json_match_cpython() {
        for case in load("float", 3115) {
            let (bits, repr, json) = (bits(&case[0]), string(&case[1]), string(&case[2]));
            let x = f64::from_bits(bits);
            assert_eq!(float_repr(x), repr, "repr of {bits:#x}");
            assert_eq!(float_json(x), json, "json of {bits:#x}");
        }
    }
}
