//! Arithmetic on Python `int` and `float` values with CPython's rules: floor
//! division and modulo signs, correctly rounded true division, `**` special
//! cases, exact int/float comparison and conversion, and CPython's errors.
//! Ints are `i64` where a result that needs more bits is reported as `None`
//! (the caller computes it as a big int), or [`BigInt`] where any size is exact.

use super::{PyError, PyErrorKind};
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{FromPrimitive, ToPrimitive};
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

/// Python `a // b` for ints (rounds towards negative infinity); `None` for
/// the one quotient beyond 64 bits, `i64::MIN // -1`.
/// `ZeroDivisionError: integer division or modulo by zero`.
pub fn int_floordiv(a: i64, b: i64) -> Result<Option<i64>, PyError> {
    if b == 0 {
        return Err(zero_div("integer division or modulo by zero"));
    }
    let Some(q) = a.checked_div(b) else {
        return Ok(None);
    };
    let r = a.wrapping_rem(b);
    Ok(Some(if r != 0 && ((r < 0) != (b < 0)) { q - 1 } else { q }))
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
    const EXACT: u64 = 1 << 53;
    if b != 0 && a.unsigned_abs() <= EXACT && b.unsigned_abs() <= EXACT {
        // Both operands are exact floats: one IEEE division rounds correctly.
        return Ok(a as f64 / b as f64);
    }
    big_truediv(&BigInt::from(a), &BigInt::from(b))
}

/// Python `a / b` for ints of any size: the correctly rounded float quotient
/// (ties to even, subnormal results included). Errors: `ZeroDivisionError:
/// division by zero`, `OverflowError: integer division result too large for
/// a float`.
pub fn big_truediv(a: &BigInt, b: &BigInt) -> Result<f64, PyError> {
    if b.sign() == Sign::NoSign {
        return Err(zero_div("division by zero"));
    }
    let negative = (a.sign() == Sign::Minus) != (b.sign() == Sign::Minus);
    let signed = |x: f64| if negative { -x } else { x };
    if a.sign() == Sign::NoSign {
        return Ok(signed(0.0));
    }
    let (n, d) = (a.magnitude(), b.magnitude());
    // Scale so that the integer quotient has 55 or 56 bits: at least 53
    // kept and a rounding bit, with the remainder as a sticky bit.
    let shift = 55 - (n.bits() as i64 - d.bits() as i64);
    let (q, r) = if shift >= 0 {
        let n = n << shift as u64;
        (&n / d, &n % d)
    } else {
        let d = d << shift.unsigned_abs();
        (n / &d, n % &d)
    };
    // The quotient is q * 2^-shift; its leading bit has weight 2^top.
    let top = q.bits() as i64 - 1 - shift;
    if top >= 1024 {
        return Err(overflowing_division());
    }
    // The weight of the last kept bit: 53 significant bits, or fewer where
    // the result is subnormal. At least two bits of q are dropped.
    let unit = (top - 52).max(-1074);
    let drop = (unit + shift) as u64;
    let kept = &q >> drop;
    let dropped = &q - (&kept << drop);
    let half = BigUint::from(1u8) << (drop - 1);
    let mut m = kept.to_u64().unwrap_or(u64::MAX);
    if dropped > half || (dropped == half && (r.bits() > 0 || m & 1 == 1)) {
        m += 1;
    }
    let x = m as f64 * pow2(unit);
    if x.is_infinite() {
        return Err(overflowing_division());
    }
    Ok(signed(x))
}

fn overflowing_division() -> PyError {
    PyError::new(
        PyErrorKind::OverflowError,
        "integer division result too large for a float",
    )
}

/// `2^e` for `-1074 <= e <= 1023`, exactly.
fn pow2(e: i64) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (e + 1074))
    }
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
/// (`ZeroDivisionError: 0.0 cannot be raised to a negative power`); `None`
/// when the int needs more than 64 bits.
pub fn int_pow(a: i64, b: i64) -> Result<Option<PyNumber>, PyError> {
    if b < 0 {
        // Both operands are within a float's range: Python computes `float(a) ** float(b)`.
        return float_pow(a as f64, b as f64).map(|x| Some(PyNumber::Float(x)));
    }
    let mut result: i64 = 1;
    let mut base = a;
    let mut e = b.unsigned_abs();
    while e > 0 {
        if e & 1 == 1 {
            let Some(r) = result.checked_mul(base) else {
                return Ok(None);
            };
            result = r;
        }
        e >>= 1;
        if e > 0 {
            // |base| >= 2^32 with more factors to come: the result needs more bits.
            let Some(b2) = base.checked_mul(base) else {
                return Ok(None);
            };
            base = b2;
        }
    }
    Ok(Some(PyNumber::Int(result)))
}

/// Python's exact comparison of an `int` with a `float` (`None` when the
/// float is NaN): e.g. `2**53 + 1 > float(2**53)`.
pub fn cmp_int_float(a: i64, b: f64) -> Option<Ordering> {
    if a.unsigned_abs() <= 1 << 53 {
        // `a` is exactly a float.
        return (a as f64).partial_cmp(&b);
    }
    cmp_big_float(&BigInt::from(a), b)
}

/// [`cmp_int_float`] for an int of any size.
pub fn cmp_big_float(a: &BigInt, b: f64) -> Option<Ordering> {
    if b.is_nan() {
        return None;
    }
    if b.is_infinite() {
        return Some(if b > 0.0 { Ordering::Less } else { Ordering::Greater });
    }
    let t = b.trunc();
    match a.cmp(&BigInt::from_f64(t)?) {
        // Equal integer parts: the fraction decides.
        Ordering::Equal => 0.0.partial_cmp(&(b - t)),
        o => Some(o),
    }
}

/// Python `int(x)` for a float: exact truncation towards zero. Errors:
/// `ValueError: cannot convert float NaN to integer`, `OverflowError:
/// cannot convert float infinity to integer`.
pub fn float_to_int(x: f64) -> Result<BigInt, PyError> {
    if x.is_nan() {
        return Err(PyError::value("cannot convert float NaN to integer"));
    }
    BigInt::from_f64(x.trunc())
        .ok_or_else(|| PyError::new(PyErrorKind::OverflowError, "cannot convert float infinity to integer"))
}

/// Python `float(n)` for an int of any size: correctly rounded.
/// `OverflowError: int too large to convert to float`.
pub fn int_to_float(n: &BigInt) -> Result<f64, PyError> {
    match n.to_f64() {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(PyError::new(
            PyErrorKind::OverflowError,
            "int too large to convert to float",
        )),
    }
}
