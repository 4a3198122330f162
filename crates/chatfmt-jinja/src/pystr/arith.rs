//! Arithmetic on Python `int` (here `i64`) and `float` values with CPython's
//! rules: floor division and modulo signs, correctly rounded true division,
//! `**` special cases, exact int/float comparison, and CPython's errors.
//! Results that would need a Python int wider than 64 bits are reported as
//! `OverflowError: integer overflow` (Python itself would switch to a big int).

use super::{PyError, PyErrorKind};
use std::cmp::Ordering;

/// A Python number: `int` or `float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PyNumber {
    /// An `int`.
    Int(i64),
    /// A `float`.
    Float(f64),
}

fn zero_div(msg: &str) -> PyError {
    PyError::new(PyErrorKind::ZeroDivisionError, msg)
}

fn int_overflow() -> PyError {
    PyError::new(PyErrorKind::OverflowError, "integer overflow")
}

/// Python `a // b` for ints (rounds towards negative infinity).
/// `ZeroDivisionError: integer division or modulo by zero`.
pub fn int_floordiv(a: i64, b: i64) -> Result<i64, PyError> {
    if b == 0 {
        return Err(zero_div("integer division or modulo by zero"));
    }
    let q = a.checked_div(b).ok_or_else(int_overflow)?;
    let r = a.wrapping_rem(b);
    Ok(if r != 0 && ((r < 0) != (b < 0)) { q - 1 } else { q })
}

/// Python `a % b` for ints (the result has the sign of `b`).
/// `ZeroDivisionError: integer modulo by zero`.
pub fn int_mod(a: i64, b: i64) -> Result<i64, PyError> {
    if b == 0 {
        return Err(zero_div("integer modulo by zero"));
    }
    let r = a.wrapping_rem(b);
    Ok(if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r })
}

/// Python `a / b` for ints: the correctly rounded float quotient.
/// `ZeroDivisionError: division by zero`.
pub fn int_truediv(a: i64, b: i64) -> Result<f64, PyError> {
    if b == 0 {
        return Err(zero_div("division by zero"));
    }
    const EXACT: u64 = 1 << 53;
    if a.unsigned_abs() <= EXACT && b.unsigned_abs() <= EXACT {
        return Ok(a as f64 / b as f64);
    }
    let negative = (a < 0) != (b < 0);
    let q = divide_rounded(a.unsigned_abs(), b.unsigned_abs());
    Ok(if negative { -q } else { q })
}

/// `n / d` correctly rounded to a float (ties to even), `d > 0`.
fn divide_rounded(n: u64, d: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (n, d) = (n as u128, d as u128);
    // Collect 55 significant quotient bits, then the sticky remainder.
    let mut q = n / d;
    let mut r = n % d;
    let mut exp: i32 = 0; // value = q * 2^exp (+ remainder)
    while q < (1u128 << 54) {
        r <<= 1;
        q <<= 1;
        if r >= d {
            r -= d;
            q |= 1;
        }
        exp -= 1;
    }
    // q has 55+ bits; keep 53 and round half to even with a sticky bit.
    let extra = 128 - q.leading_zeros() as i32 - 53;
    let mut sticky = r != 0;
    if extra > 0 {
        let mask = (1u128 << extra) - 1;
        let dropped = q & mask;
        let half = 1u128 << (extra - 1);
        sticky |= dropped & (half - 1) != 0;
        let mut m = q >> extra;
        if dropped & half != 0 && (sticky || m & 1 == 1) {
            m += 1;
        }
        q = m;
        exp += extra;
    }
    (q as f64) * 2f64.powi(exp)
}

/// Python `a / b` for floats. `ZeroDivisionError: float division by zero`.
pub fn float_truediv(a: f64, b: f64) -> Result<f64, PyError> {
    if b == 0.0 {
        return Err(zero_div("float division by zero"));
    }
    Ok(a / b)
}

/// CPython's `_float_div_mod`: (floor quotient, modulo).
fn float_divmod(vx: f64, wx: f64) -> (f64, f64) {
    let mut m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 {
        if (wx < 0.0) != (m < 0.0) {
            m += wx;
            div -= 1.0;
        }
    } else {
        m = 0f64.copysign(wx);
    }
    let floordiv = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 {
            f + 1.0
        } else {
            f
        }
    } else {
        0f64.copysign(vx / wx)
    };
    (floordiv, m)
}

/// Python `a // b` for floats. `ZeroDivisionError: float floor division by zero`.
pub fn float_floordiv(a: f64, b: f64) -> Result<f64, PyError> {
    if b == 0.0 {
        return Err(zero_div("float floor division by zero"));
    }
    Ok(float_divmod(a, b).0)
}

/// Python `a % b` for floats (sign of `b`). `ZeroDivisionError: float modulo`.
pub fn float_mod(a: f64, b: f64) -> Result<f64, PyError> {
    if b == 0.0 {
        return Err(zero_div("float modulo"));
    }
    let mut m = a % b;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
        }
    } else {
        m = 0f64.copysign(b);
    }
    Ok(m)
}

fn is_odd_integer(x: f64) -> bool {
    (x % 2.0).abs() == 1.0
}

/// Python `a ** b` for floats (CPython's special cases, glibc `pow`).
/// Errors: `ZeroDivisionError: 0.0 cannot be raised to a negative power`,
/// `OverflowError: (34, 'Numerical result out of range')`. A negative base
/// with a fractional exponent gives a complex number in Python, which has no
/// representation here: `ValueError: negative number cannot be raised to a
/// fractional power` (or CPython's `OverflowError: complex exponentiation`
/// when that complex number would overflow).
pub fn float_pow(v: f64, w: f64) -> Result<f64, PyError> {
    if w == 0.0 {
        return Ok(1.0);
    }
    if v.is_nan() {
        return Ok(v);
    }
    if w.is_nan() {
        return Ok(if v == 1.0 { 1.0 } else { w });
    }
    if w.is_infinite() {
        let a = v.abs();
        return Ok(if a == 1.0 {
            1.0
        } else if (w > 0.0) == (a > 1.0) {
            w.abs()
        } else {
            0.0
        });
    }
    if v.is_infinite() {
        let odd = is_odd_integer(w);
        return Ok(if w > 0.0 {
            if odd {
                v
            } else {
                v.abs()
            }
        } else if odd {
            0f64.copysign(v)
        } else {
            0.0
        });
    }
    if v == 0.0 {
        if w < 0.0 {
            return Err(zero_div("0.0 cannot be raised to a negative power"));
        }
        return Ok(if is_odd_integer(w) { v } else { 0.0 });
    }
    let mut base = v;
    let mut negate = false;
    if v < 0.0 {
        if w != w.floor() {
            // Python computes a complex power here.
            if (-v).powf(w).is_infinite() {
                return Err(PyError::new(PyErrorKind::OverflowError, "complex exponentiation"));
            }
            return Err(PyError::value("negative number cannot be raised to a fractional power"));
        }
        base = -v;
        negate = is_odd_integer(w);
    }
    if base == 1.0 {
        return Ok(if negate { -1.0 } else { 1.0 });
    }
    let x = base.powf(w);
    if x.is_infinite() {
        return Err(PyError::new(
            PyErrorKind::OverflowError,
            "(34, 'Numerical result out of range')",
        ));
    }
    Ok(if negate { -x } else { x })
}

/// Python `a ** b` for ints: an int for `b >= 0`, else a float
/// (`ZeroDivisionError: 0.0 cannot be raised to a negative power`).
pub fn int_pow(a: i64, b: i64) -> Result<PyNumber, PyError> {
    if b < 0 {
        return float_pow(a as f64, b as f64).map(PyNumber::Float);
    }
    let mut result: i64 = 1;
    let mut base = a;
    let mut e = b as u64;
    while e > 0 {
        if e & 1 == 1 {
            result = result.checked_mul(base).ok_or_else(int_overflow)?;
        }
        e >>= 1;
        if e > 0 {
            base = match base.checked_mul(base) {
                Some(b2) => b2,
                // |base| >= 2^32 and more factors follow: overflow unless
                // the result is already 0 (impossible for base != 0).
                None => return Err(int_overflow()),
            };
        }
    }
    Ok(PyNumber::Int(result))
}

/// Python's exact comparison of an `int` with a `float` (`None` when the
/// float is NaN): e.g. `2**53 + 1 > float(2**53)`.
pub fn cmp_int_float(a: i64, b: f64) -> Option<Ordering> {
    if b.is_nan() {
        return None;
    }
    if b.is_infinite() {
        return Some(if b > 0.0 { Ordering::Less } else { Ordering::Greater });
    }
    // |b| < 2^127 here is enough: i64 values are far smaller.
    if b.abs() >= 1.7e38 {
        return Some(if b > 0.0 { Ordering::Less } else { Ordering::Greater });
    }
    let t = b.trunc();
    let ti = t as i128;
    match (a as i128).cmp(&ti) {
        Ordering::Equal => {
            let f = b - t;
            Some(if f > 0.0 {
                Ordering::Less
            } else if f < 0.0 {
                Ordering::Greater
            } else {
                Ordering::Equal
            })
        }
        o => Some(o),
    }
}

/// Python `int(x)` for a float: truncation towards zero. Errors:
/// `ValueError: cannot convert float NaN to integer`, `OverflowError:
/// cannot convert float infinity to integer`; beyond `i64` (a big int in
/// Python) `OverflowError: integer overflow`.
pub fn float_to_int(x: f64) -> Result<i64, PyError> {
    if x.is_nan() {
        return Err(PyError::value("cannot convert float NaN to integer"));
    }
    if x.is_infinite() {
        return Err(PyError::new(
            PyErrorKind::OverflowError,
            "cannot convert float infinity to integer",
        ));
    }
    let t = x.trunc();
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&t) {
        Ok(t as i64)
    } else {
        Err(int_overflow())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{bits, float_bits, int, kind_name, load, result};
    use serde_json::Value;

    /// An `int` or a `float` as `scripts/gen_pystr_cases.py` writes them.
    fn number(v: &Value) -> PyNumber {
        match v {
            Value::Number(_) => PyNumber::Int(int(v)),
            _ => PyNumber::Float(f64::from_bits(float_bits(v))),
        }
    }

    /// The four expected results of an arithmetic case, in fields 2 to 5.
    fn results(case: &[Value]) -> [Result<PyNumber, (&str, &str)>; 4] {
        [2, 3, 4, 5].map(|i| result(&case[i], number))
    }

    fn same(got: Result<PyNumber, PyError>, want: &Result<PyNumber, (&str, &str)>, what: &str) {
        match (got, want) {
            (Ok(PyNumber::Float(g)), Ok(PyNumber::Float(w))) => {
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{what}: {g:?} != {w:?}"
                );
            }
            (Ok(g), Ok(w)) => assert_eq!(g, *w, "{what}"),
            (Err(e), Err((k, m))) => {
                assert_eq!((kind_name(e.kind), e.message.as_str()), (*k, *m), "{what}")
            }
            (g, w) => panic!("{what}: got {g:?}, want {w:?}"),
        }
    }

    #[test]
    fn int_arithmetic_matches_cpython() {
        for case in load("int_arith", 2500) {
            let (a, b) = (int(&case[0]), int(&case[1]));
            let [fd, m, td, pw] = &results(&case);
            same(int_floordiv(a, b).map(PyNumber::Int), fd, &format!("{a} // {b}"));
            same(int_mod(a, b).map(PyNumber::Int), m, &format!("{a} % {b}"));
            same(int_truediv(a, b).map(PyNumber::Float), td, &format!("{a} / {b}"));
            same(int_pow(a, b), pw, &format!("{a} ** {b}"));
        }
    }

    #[test]
    fn float_arithmetic_matches_cpython() {
        for case in load("float_arith", 676) {
            let (a, b) = (f64::from_bits(bits(&case[0])), f64::from_bits(bits(&case[1])));
            let [td, fd, m, pw] = &results(&case);
            same(float_truediv(a, b).map(PyNumber::Float), td, &format!("{a:?} / {b:?}"));
            same(
                float_floordiv(a, b).map(PyNumber::Float),
                fd,
                &format!("{a:?} // {b:?}"),
            );
            same(float_mod(a, b).map(PyNumber::Float), m, &format!("{a:?} % {b:?}"));
            same(float_pow(a, b).map(PyNumber::Float), pw, &format!("{a:?} ** {b:?}"));
        }
    }

    #[test]
    fn comparisons_and_conversions_match_cpython() {
        for case in load("cmp_int_float", 620) {
            let (a, b) = (int(&case[0]), bits(&case[1]));
            let want = case[2].as_i64().map(|c| c.cmp(&0));
            assert_eq!(
                cmp_int_float(a, f64::from_bits(b)),
                want,
                "{a} vs {}",
                f64::from_bits(b)
            );
        }
        for case in load("float_to_int", 33) {
            let (x, want) = (bits(&case[0]), result(&case[1], number));
            same(
                float_to_int(f64::from_bits(x)).map(PyNumber::Int),
                &want,
                &format!("int({})", f64::from_bits(x)),
            );
        }
    }
}
