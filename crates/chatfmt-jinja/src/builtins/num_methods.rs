//! The bodies of the Python methods of int and float, and `str.encode`: the methods whose results
//! are numbers or `bytes`.

use super::entry::{bad_argument, ssize, wrong_receiver, MethodCall};
use crate::error::{err, Error, Result};
use crate::value::{Object, Value};
use num_bigint::{BigInt, BigUint, Sign};
use std::rc::Rc;

fn big(v: &Value) -> BigInt {
    match v {
        Value::Int(i) => BigInt::from(*i),
        Value::Bool(b) => BigInt::from(*b as i64),
        Value::BigInt(b) => (**b).clone(),
        _ => BigInt::default(),
    }
}

/// The value as a plain `int` (`True` is 1).
fn as_int<'a>(v: &Value<'a>) -> Value<'a> {
    match v {
        Value::Bool(b) => Value::Int(*b as i64),
        _ => v.clone(),
    }
}

pub(crate) fn bytes_value<'a>(b: Vec<u8>) -> Value<'a> {
    Value::Object(Rc::new(Object::Bytes(b)))
}

/// `byteorder` of `to_bytes` / `from_bytes`: whether it is little-endian.
fn byteorder<'a>(func: &str, v: Option<Value<'a>>) -> Result<Option<Value<'a>>> {
    match v {
        Some(b) if !b.is_str() => Err(bad_argument(func, "argument 'byteorder'", "str", &b)),
        other => Ok(other),
    }
}

fn little_endian(order: Option<Value>) -> Result<bool> {
    match order.as_ref().and_then(|o| o.as_str()) {
        None | Some("big") => Ok(false),
        Some("little") => Ok(true),
        Some(_) => Err(err!(ValueError, "byteorder must be either 'little' or 'big'")),
    }
}

/// `int.as_integer_ratio`.
pub(crate) fn int_ratio<'a>(recv: &Value<'a>, _: MethodCall<'a>) -> Result<Value<'a>> {
    Ok(Value::Tuple(Rc::new(vec![as_int(recv), Value::Int(1)])))
}

/// `int.bit_count`.
pub(crate) fn bit_count<'a>(recv: &Value<'a>, _: MethodCall<'a>) -> Result<Value<'a>> {
    Ok(Value::Int(big(recv).magnitude().count_ones() as i64))
}

/// `int.bit_length`.
pub(crate) fn bit_length<'a>(recv: &Value<'a>, _: MethodCall<'a>) -> Result<Value<'a>> {
    Ok(Value::Int(big(recv).bits() as i64))
}

/// `int.conjugate`: the number as a plain `int`.
pub(crate) fn int_itself<'a>(recv: &Value<'a>, _: MethodCall<'a>) -> Result<Value<'a>> {
    Ok(as_int(recv))
}

/// `int.to_bytes`.
pub(crate) fn to_bytes<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let length = c.arg(0).map_or(Ok(1), |l| ssize(&l))?;
    let order = byteorder("to_bytes", c.arg(1))?;
    let signed = c.arg(2).is_some_and(|s| s.truthy());
    let little = little_endian(order)?;
    if length < 0 {
        return Err(err!(ValueError, "length argument must be non-negative"));
    }
    crate::limits::check_value_size(length as usize)?;
    Ok(bytes_value(int_bytes(&big(recv), length as usize, little, signed)?))
}

/// `int.from_bytes`.
pub(crate) fn from_bytes<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let data = c.arg(0).unwrap_or(Value::None);
    let order = byteorder("from_bytes", c.arg(1))?;
    let signed = c.arg(2).is_some_and(|s| s.truthy());
    let little = little_endian(order)?;
    let mut bytes = to_byte_vec(&data)?;
    if little {
        bytes.reverse();
    }
    let n = if signed {
        BigInt::from_signed_bytes_be(&bytes)
    } else {
        BigInt::from_bytes_be(Sign::Plus, &bytes)
    };
    Ok(match recv {
        // `bool.from_bytes` converts its result with `bool()`.
        Value::Bool(_) => Value::Bool(n.sign() != Sign::NoSign),
        _ => Value::from_bigint(n),
    })
}

/// `int.to_bytes`: two's complement when `signed`, padded to `length` bytes.
fn int_bytes(n: &BigInt, length: usize, little: bool, signed: bool) -> Result<Vec<u8>> {
    let negative = n.sign() == Sign::Minus;
    if negative && !signed {
        return Err(err!(OverflowError, "can't convert negative int to unsigned"));
    }
    let mut out = match n.sign() {
        Sign::NoSign => Vec::new(),
        _ if signed => n.to_signed_bytes_be(),
        _ => n.to_bytes_be().1,
    };
    if out.len() > length {
        return Err(err!(OverflowError, "int too big to convert"));
    }
    let fill = if negative { 0xff } else { 0 };
    let mut padded = vec![fill; length - out.len()];
    padded.append(&mut out);
    if little {
        padded.reverse();
    }
    Ok(padded)
}

/// Python `bytes(x)` as `int.from_bytes` takes it: bytes, or an iterable of integers in
/// `range(0, 256)`.
fn to_byte_vec(v: &Value) -> Result<Vec<u8>> {
    if let Value::Object(o) = v {
        if let Object::Bytes(b) = &**o {
            return Ok(b.clone());
        }
    }
    let cannot = || err!(TypeError, "cannot convert '{}' object to bytes", v.type_name());
    if v.is_str() {
        return Err(cannot());
    }
    let items = v.iterate().map_err(|_| cannot())?;
    items
        .iter()
        .map(|i| {
            let n = match i {
                Value::BigInt(_) => -1,
                _ => ssize(i)?,
            };
            u8::try_from(n).map_err(|_| err!(ValueError, "bytes must be in range(0, 256)"))
        })
        .collect()
}

/// The number of a `float` receiver.
fn float_of(recv: &Value, c: &MethodCall) -> Result<f64> {
    match recv {
        Value::Float(f) => Ok(*f),
        _ => Err(wrong_receiver(c, recv)),
    }
}

/// `float.is_integer`.
pub(crate) fn is_integer<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let f = float_of(recv, &c)?;
    Ok(Value::Bool(f.is_finite() && f.fract() == 0.0))
}

/// `float.hex`.
pub(crate) fn hex<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    Ok(Value::string(float_hex(float_of(recv, &c)?)))
}

/// `float.as_integer_ratio`.
pub(crate) fn float_ratio<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    let (n, d) = integer_ratio(float_of(recv, &c)?)?;
    Ok(Value::Tuple(Rc::new(vec![
        Value::from_bigint(n),
        Value::from_bigint(d),
    ])))
}

/// `float.fromhex`.
pub(crate) fn fromhex<'a>(_: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    match c.arg(0) {
        Some(s) if s.is_str() => Ok(Value::Float(float_fromhex(s.as_str().unwrap_or(""))?)),
        _ => Err(err!(TypeError, "bad argument type for built-in operation")),
    }
}

/// `float.conjugate`.
pub(crate) fn float_itself<'a>(recv: &Value<'a>, c: MethodCall<'a>) -> Result<Value<'a>> {
    Ok(Value::Float(float_of(recv, &c)?))
}

/// `float.as_integer_ratio()`: the exact fraction in lowest terms.
fn integer_ratio(f: f64) -> Result<(BigInt, BigInt)> {
    if f.is_nan() {
        return Err(err!(ValueError, "cannot convert NaN to integer ratio"));
    }
    if f.is_infinite() {
        return Err(err!(OverflowError, "cannot convert Infinity to integer ratio"));
    }
    let bits = f.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1 << 52) - 1);
    let (mut mant, mut e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), exp - 1075)
    };
    if mant == 0 {
        return Ok((BigInt::from(0), BigInt::from(1)));
    }
    let tz = mant.trailing_zeros() as i64;
    let shift = if e < 0 { tz.min(-e) } else { tz };
    mant >>= shift;
    e += shift;
    let mut n = BigInt::from(mant);
    if f < 0.0 {
        n = -n;
    }
    if e >= 0 {
        Ok((n << e as usize, BigInt::from(1)))
    } else {
        Ok((n, BigInt::from(1) << (-e) as usize))
    }
}

/// Python's `float.hex()`.
fn float_hex(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let bits = f.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mantissa = bits & ((1 << 52) - 1);
    match (exp, mantissa) {
        (0, 0) => format!("{sign}0x0.0p+0"),
        (0, m) => format!("{sign}0x0.{m:013x}p-1022"),
        (e, m) => {
            let e = e - 1023;
            format!("{sign}0x1.{m:013x}p{}{}", if e < 0 { "-" } else { "+" }, e.abs())
        }
    }
}

fn invalid_hex() -> Error {
    err!(ValueError, "invalid hexadecimal floating-point string")
}

/// Python's `float.fromhex(s)`, correctly rounded (half to even).
fn float_fromhex(s: &str) -> Result<f64> {
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c');
    let t = s.trim_matches(is_space);
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let sign = if negative { -1.0 } else { 1.0 };
    let lower = t.to_ascii_lowercase();
    match lower.as_str() {
        "inf" | "infinity" => return Ok(sign * f64::INFINITY),
        "nan" => return Ok(f64::NAN),
        _ => {}
    }
    let t = lower.strip_prefix("0x").unwrap_or(&lower);
    let (coef, exp) = match t.find('p') {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let (int_part, frac_part) = match coef.find('.') {
        Some(i) => (&coef[..i], &coef[i + 1..]),
        None => (coef, ""),
    };
    let hex = |p: &str| p.chars().all(|c| c.is_ascii_hexdigit());
    if int_part.len() + frac_part.len() == 0 || !hex(int_part) || !hex(frac_part) {
        return Err(invalid_hex());
    }
    let mut e2: i64 = match exp {
        None => 0,
        Some(x) => {
            let digits = x.strip_prefix(['+', '-']).unwrap_or(x);
            if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                return Err(invalid_hex());
            }
            let mut v: i64 = 0;
            for d in digits.bytes() {
                v = (v * 10 + (d - b'0') as i64).min(1 << 40);
            }
            if x.starts_with('-') {
                -v
            } else {
                v
            }
        }
    };
    e2 -= 4 * frac_part.len() as i64;
    let digits: String = int_part.chars().chain(frac_part.chars()).collect();
    let n = BigUint::parse_bytes(digits.as_bytes(), 16).unwrap_or_default();
    if n.bits() == 0 {
        return Ok(sign * 0.0);
    }
    let top = n.bits() as i64 - 1 + e2;
    let too_large = || err!(OverflowError, "hexadecimal value too large to represent as a float");
    if top > 1023 {
        return Err(too_large());
    }
    // The exponent of the result's last bit: 53 bits of precision, or the subnormal floor.
    let mut lsb = (top - 52).max(-1074);
    let shift = lsb - e2;
    let mut mant: u64 = if shift > n.bits() as i64 {
        // Below half the smallest subnormal: rounds to zero.
        0
    } else if shift <= 0 {
        let m: BigUint = n << (-shift) as usize;
        m.iter_u64_digits().next().unwrap_or(0)
    } else {
        let shift = shift as usize;
        let kept: BigUint = &n >> shift;
        let mut m = kept.iter_u64_digits().next().unwrap_or(0);
        let rest = n - (kept << shift);
        let half = BigUint::from(1u8) << (shift - 1);
        if rest > half || (rest == half && m & 1 == 1) {
            m += 1;
        }
        m
    };
    if mant == 1 << 53 {
        mant >>= 1;
        lsb += 1;
    }
    let bits = if mant >= 1 << 52 {
        let biased = lsb + 52 + 1023;
        if biased >= 0x7ff {
            return Err(too_large());
        }
        ((biased as u64) << 52) | (mant & ((1 << 52) - 1))
    } else {
        mant
    };
    Ok(sign * f64::from_bits(bits))
}

/// The codecs `str.encode` knows, by their normalised names and aliases.
const CODECS: &[(&str, &[&str])] = &[
    ("utf_8", &["u8", "utf", "utf8", "utf8_ucs2", "utf8_ucs4", "cp65001"]),
    (
        "ascii",
        &[
            "646",
            "ansi_x3.4_1968",
            "ansi_x3_4_1968",
            "ansi_x3.4_1986",
            "cp367",
            "csascii",
            "ibm367",
            "iso646_us",
            "iso_646.irv_1991",
            "iso_ir_6",
            "us",
            "us_ascii",
        ],
    ),
    (
        "latin_1",
        &[
            "8859",
            "cp819",
            "csisolatin1",
            "ibm819",
            "iso8859",
            "iso8859_1",
            "iso_8859_1",
            "iso_8859_1_1987",
            "iso_ir_100",
            "l1",
            "latin",
            "latin1",
        ],
    ),
    ("utf_16", &["u16", "utf16"]),
    ("utf_16_be", &["unicodebigunmarked", "utf_16be"]),
    ("utf_16_le", &["unicodelittleunmarked", "utf_16le"]),
    ("utf_32", &["u32", "utf32"]),
    ("utf_32_be", &["utf_32be"]),
    ("utf_32_le", &["utf_32le"]),
];

/// The codec module an encoding name leads to (`encodings.normalize_encoding` and the aliases).
fn codec(name: &str) -> Option<&'static str> {
    let mut norm = String::new();
    let mut punct = false;
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '.' {
            if punct && !norm.is_empty() {
                norm.push('_');
            }
            if c.is_ascii() {
                norm.push(c);
            }
            punct = false;
        } else {
            punct = true;
        }
    }
    let underscored = norm.replace('.', "_");
    CODECS
        .iter()
        .find(|(m, aliases)| *m == norm || aliases.contains(&norm.as_str()) || aliases.contains(&underscored.as_str()))
        .map(|(m, _)| *m)
}

/// `str.encode(encoding, errors)`.
pub(crate) fn encode(s: &str, encoding: Option<Value>, errors: Option<Value>) -> Result<Vec<u8>> {
    let text = |v: &Option<Value>, which: &str| -> Result<Option<String>> {
        match v {
            None => Ok(None),
            Some(x) => x
                .as_str()
                .map(|t| Some(t.to_string()))
                .ok_or_else(|| bad_argument("encode", which, "str", x)),
        }
    };
    let encoding = text(&encoding, "argument 'encoding'")?.unwrap_or_else(|| "utf-8".to_string());
    let errors = text(&errors, "argument 'errors'")?.unwrap_or_else(|| "strict".to_string());
    let Some(module) = codec(&encoding) else {
        return Err(err!(LookupError, "unknown encoding: {encoding}"));
    };
    let units = |f: fn(u32) -> Vec<u8>| s.chars().flat_map(|c| f(c as u32)).collect::<Vec<u8>>();
    let utf16 = |c: char, little: bool| -> Vec<u8> {
        let mut buf = [0u16; 2];
        c.encode_utf16(&mut buf)
            .iter()
            .flat_map(|u| if little { u.to_le_bytes() } else { u.to_be_bytes() })
            .collect()
    };
    let out = match module {
        "utf_8" => s.as_bytes().to_vec(),
        "ascii" => narrow(s, 0x80, "ascii", &errors)?,
        "latin_1" => narrow(s, 0x100, "latin-1", &errors)?,
        "utf_16" | "utf_16_le" | "utf_16_be" => {
            let little = module != "utf_16_be";
            let mut out = if module == "utf_16" {
                vec![0xff, 0xfe]
            } else {
                Vec::new()
            };
            out.extend(s.chars().flat_map(|c| utf16(c, little)));
            out
        }
        "utf_32_be" => units(|c| c.to_be_bytes().to_vec()),
        _ => {
            let mut out = if module == "utf_32" {
                vec![0xff, 0xfe, 0, 0]
            } else {
                Vec::new()
            };
            out.extend(units(|c| c.to_le_bytes().to_vec()));
            out
        }
    };
    crate::limits::check_value_size(out.len())?;
    Ok(out)
}

/// `\xNN`, `\uNNNN` or `\UNNNNNNNN`, as Python escapes a character.
fn backslash_escape(c: char) -> String {
    match c as u32 {
        n if n < 0x100 => format!("\\x{n:02x}"),
        n if n < 0x10000 => format!("\\u{n:04x}"),
        n => format!("\\U{n:08x}"),
    }
}

/// Encodes to a one-byte charset whose codes stop at `limit`, with the error handler `errors`.
fn narrow(s: &str, limit: u32, codec: &str, errors: &str) -> Result<Vec<u8>> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if (c as u32) < limit {
            out.push(c as u32 as u8);
            i += 1;
            continue;
        }
        let end = (i..chars.len())
            .find(|j| (chars[*j] as u32) < limit)
            .unwrap_or(chars.len());
        let run = &chars[i..end];
        let mut put = |t: String| out.extend(t.bytes());
        match errors {
            "ignore" => {}
            "replace" => put("?".repeat(run.len())),
            "backslashreplace" => put(run.iter().map(|c| backslash_escape(*c)).collect()),
            "xmlcharrefreplace" => put(run.iter().map(|c| format!("&#{};", *c as u32)).collect()),
            "namereplace" => put(run
                .iter()
                .map(|c| match unicode_names2::name(*c) {
                    Some(n) => format!("\\N{{{n}}}"),
                    None => backslash_escape(*c),
                })
                .collect()),
            "strict" | "surrogateescape" | "surrogatepass" => {
                let reason = format!("ordinal not in range({limit})");
                return Err(if run.len() == 1 {
                    let shown = backslash_escape(c);
                    err!(
                        UnicodeEncodeError,
                        "'{codec}' codec can't encode character '{shown}' in position {i}: {reason}"
                    )
                } else {
                    err!(
                        UnicodeEncodeError,
                        "'{codec}' codec can't encode characters in position {i}-{}: {reason}",
                        end - 1
                    )
                });
            }
            other => return Err(err!(LookupError, "unknown error handler name '{other}'")),
        }
        i = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fromhex_rounds_half_to_even_down_to_subnormals() {
        let hex = |s: &str| float_hex(float_fromhex(s).unwrap_or(f64::NAN));
        assert_eq!(hex("0x1.8p1"), "0x1.8000000000000p+1");
        assert_eq!(hex("0x1p-1074"), "0x0.0000000000001p-1022");
        assert_eq!(hex("0x1.8p-1075"), "0x0.0000000000001p-1022");
        assert_eq!(hex("0x3p-1076"), "0x0.0000000000001p-1022");
        assert_eq!(hex("0x1.fffffffffffff7p1023"), "0x1.fffffffffffffp+1023");
        assert_eq!(hex("0x1.00000000000008p0"), "0x1.0000000000000p+0");
        assert_eq!(hex("0x1.00000000000018p0"), "0x1.0000000000002p+0");
        assert_eq!(hex("0x1.ffffffffffffffp-1023"), "0x1.0000000000000p-1022");
        assert_eq!(hex("-0x.1P-3"), "-0x1.0000000000000p-7");
        assert_eq!(hex("0x1p-99999999999999999999"), "0x0.0p+0");
        assert!(float_fromhex("0x1.fffffffffffff8p1023").is_err());
        assert!(float_fromhex("0x.").is_err());
    }

    #[test]
    fn integer_ratio_and_bytes() {
        let (n, d) = integer_ratio(0.1).unwrap_or_default();
        assert_eq!(
            (n.to_string(), d.to_string()),
            ("3602879701896397".into(), "36028797018963968".into())
        );
        assert_eq!(
            int_bytes(&BigInt::from(-129), 2, true, true).ok(),
            Some(vec![0x7f, 0xff])
        );
        assert!(int_bytes(&BigInt::from(128), 1, false, true).is_err());
        assert_eq!(int_bytes(&BigInt::from(0), 0, false, false).ok(), Some(Vec::new()));
    }

    #[test]
    fn encode_handlers() {
        let enc = |s: &str, e: &str, h: &str| {
            encode(s, Some(Value::Str(e)), Some(Value::Str(h))).map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        assert_eq!(
            enc("é€🙂x", "ascii", "namereplace").ok().as_deref(),
            Some("\\N{LATIN SMALL LETTER E WITH ACUTE}\\N{EURO SIGN}\\N{SLIGHTLY SMILING FACE}x")
        );
        assert_eq!(
            enc("aé€", "latin-1", "xmlcharrefreplace").ok().as_deref(),
            Some("a\u{fffd}&#8364;")
        );
        assert!(enc("a", " UTF--8 ", "bogus").is_ok());
        assert!(enc("a", "l", "strict").is_err());
    }
}
