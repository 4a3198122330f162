//! `printf`-style formatting: Python's `fmt % args`.

use super::float::{exp_abs, fixed_abs, general_abs};
use super::methods::push_n;
use super::repr::ascii_escape;
use super::{check_size, FormatArg, PercentArgs, PyError, PyErrorKind};
use num_bigint::{BigInt, Sign};

/// Digits of an integer's magnitude in `radix` (2, 8, 10 or 16).
pub(crate) fn int_digits(v: i64, radix: u32, upper: bool) -> String {
    let mut n = v.unsigned_abs();
    if n == 0 {
        return "0".to_string();
    }
    let mut rev = Vec::new();
    while n > 0 {
        let d = (n % radix as u64) as u32;
        let c = char::from_digit(d, radix).unwrap_or('0');
        rev.push(if upper { c.to_ascii_uppercase() } else { c });
        n /= radix as u64;
    }
    rev.iter().rev().collect()
}

/// Sign and digits (in `radix`) of an int beyond `i64`.
pub(crate) fn big_digits(v: &BigInt, radix: u32, upper: bool) -> (bool, String) {
    let digits = v.magnitude().to_str_radix(radix);
    let digits = if upper { digits.to_ascii_uppercase() } else { digits };
    (v.sign() == Sign::Minus, digits)
}

/// Python `int(x)` of a float as (negative, decimal digits of the magnitude).
pub(crate) fn float_to_int_digits(x: f64) -> Result<(bool, String), PyError> {
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
    Ok((t < 0.0, format!("{:.0}", t.abs())))
}

#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    blank: bool,
    alt: bool,
    zero: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

struct State<'a> {
    /// Current argument source: the tuple items, or one object.
    tuple: &'a [&'a dyn FormatArg],
    single: Option<&'a dyn FormatArg>,
    /// CPython's `argidx`/`arglen` (`-2`/`-1` for a single object).
    idx: i64,
    len: i64,
}

impl<'a> State<'a> {
    fn set_single(&mut self, arg: &'a dyn FormatArg) {
        self.single = Some(arg);
        self.idx = -2;
        self.len = -1;
    }

    fn next(&mut self) -> Result<&'a dyn FormatArg, PyError> {
        if self.idx < self.len {
            let i = self.idx;
            self.idx += 1;
            let got = if self.len < 0 {
                self.single
            } else {
                self.tuple.get(i as usize).copied()
            };
            if let Some(arg) = got {
                return Ok(arg);
            }
        }
        Err(PyError::type_error("not enough arguments for format string"))
    }
}

fn star_arg(st: &mut State<'_>) -> Result<i64, PyError> {
    let arg = st.next()?;
    if arg.as_big_int().is_some() {
        return Err(PyError::new(
            PyErrorKind::OverflowError,
            "Python int too large to convert to C ssize_t",
        ));
    }
    match (arg.type_name(), arg.as_int()) {
        ("float", _) | (_, None) => Err(PyError::type_error("* wants int")),
        (_, Some(v)) => Ok(v),
    }
}

fn parse_number(chars: &[char], pos: &mut usize, what: &str) -> Result<usize, PyError> {
    let mut v: usize = 0;
    while let Some(d) = chars.get(*pos).and_then(|c| c.to_digit(10)) {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(d as usize))
            .filter(|&v| v <= i64::MAX as usize)
            .ok_or_else(|| PyError::value(format!("{what} too big")))?;
        *pos += 1;
    }
    Ok(v)
}

/// Python `fmt % args` (`str.__mod__`), with CPython's errors.
///
/// Supports `%(key)`, flags `-+ #0`, width and precision (also `*`), an ignored `h`, `l` or `L`, and the
/// conversions `s r a d i u o x X e E f F g G c %`.
pub fn percent_format(fmt: &str, args: PercentArgs<'_>) -> Result<String, PyError> {
    let (mut st, map) = match args {
        PercentArgs::Tuple(t) => (
            State {
                tuple: t,
                single: None,
                idx: 0,
                len: t.len() as i64,
            },
            None,
        ),
        PercentArgs::Single(a) => (
            State {
                tuple: &[],
                single: Some(a),
                idx: -2,
                len: -1,
            },
            None,
        ),
        PercentArgs::Mapping { whole, map } => (
            State {
                tuple: &[],
                single: Some(whole),
                idx: -2,
                len: -1,
            },
            Some(map),
        ),
    };
    let chars: Vec<char> = fmt.chars().collect();
    let mut out = String::with_capacity(fmt.len());
    let mut pos = 0;
    while pos < chars.len() {
        let c = chars[pos];
        pos += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.get(pos) == Some(&'%') {
            out.push('%');
            pos += 1;
            continue;
        }
        if chars.get(pos) == Some(&'(') {
            let Some(map) = map else {
                return Err(PyError::type_error("format requires a mapping"));
            };
            pos += 1;
            let start = pos;
            let mut depth = 1;
            while pos < chars.len() {
                match chars[pos] {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                pos += 1;
            }
            if depth != 0 {
                return Err(PyError::value("incomplete format key"));
            }
            let key: String = chars[start..pos].iter().collect();
            pos += 1;
            st.set_single(map.get_item(&key)?);
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.get(pos) {
            match f {
                '-' => spec.left = true,
                '+' => spec.plus = true,
                ' ' => spec.blank = true,
                '#' => spec.alt = true,
                '0' => spec.zero = true,
                _ => break,
            }
            pos += 1;
        }
        if chars.get(pos) == Some(&'*') {
            pos += 1;
            let w = star_arg(&mut st)?;
            if w < 0 {
                spec.left = true;
            }
            spec.width = Some(w.unsigned_abs() as usize);
        } else {
            spec.width = Some(parse_number(&chars, &mut pos, "width")?);
        }
        if chars.get(pos) == Some(&'.') {
            pos += 1;
            if chars.get(pos) == Some(&'*') {
                pos += 1;
                let p = star_arg(&mut st)?;
                if p > i32::MAX as i64 || p < i32::MIN as i64 {
                    return Err(PyError::new(
                        PyErrorKind::OverflowError,
                        "Python int too large to convert to C int",
                    ));
                }
                spec.prec = Some(p.max(0) as usize);
            } else {
                let p = parse_number(&chars, &mut pos, "precision")?;
                if p > i32::MAX as usize {
                    return Err(PyError::value("precision too big"));
                }
                spec.prec = Some(p);
            }
        }
        // One `h`, `l` or `L` length modifier is read and ignored, as C's (`%ld`).
        if matches!(chars.get(pos), Some('h' | 'l' | 'L')) {
            pos += 1;
        }
        let Some(&conv) = chars.get(pos) else {
            return Err(PyError::value("incomplete format"));
        };
        pos += 1;
        let arg = st.next()?;
        format_one(&mut out, conv, &spec, arg, pos - 1)?;
    }
    if st.idx < st.len && map.is_none() {
        return Err(PyError::type_error(
            "not all arguments converted during string formatting",
        ));
    }
    Ok(out)
}

/// Writes `body` padded to the width with spaces (strings and `%c`).
fn push_padded_text(out: &mut String, body: &str, spec: &Spec) -> Result<(), PyError> {
    check_size(spec.width.unwrap_or(0))?;
    let len = body.chars().count();
    let pad = spec.width.unwrap_or(0).saturating_sub(len);
    if !spec.left {
        push_n(out, ' ', pad);
    }
    out.push_str(body);
    if spec.left {
        push_n(out, ' ', pad);
    }
    Ok(())
}

/// Writes a number: sign, prefix, digits, padded per the flags.
fn push_number(out: &mut String, negative: bool, prefix: &str, digits: &str, spec: &Spec) -> Result<(), PyError> {
    check_size(spec.width.unwrap_or(0))?;
    let sign = if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.blank {
        " "
    } else {
        ""
    };
    let len = sign.len() + prefix.len() + digits.chars().count();
    let pad = spec.width.unwrap_or(0).saturating_sub(len);
    let zero = spec.zero && !spec.left;
    if !spec.left && !zero {
        push_n(out, ' ', pad);
    }
    out.push_str(sign);
    out.push_str(prefix);
    if zero {
        push_n(out, '0', pad);
    }
    out.push_str(digits);
    if spec.left {
        push_n(out, ' ', pad);
    }
    Ok(())
}

fn format_one(out: &mut String, conv: char, spec: &Spec, arg: &dyn FormatArg, index: usize) -> Result<(), PyError> {
    match conv {
        's' | 'r' | 'a' => {
            let text = match conv {
                's' => arg.py_str(),
                'r' => arg.py_repr(),
                _ => ascii_escape(&arg.py_repr()),
            };
            let body = match spec.prec {
                Some(p) => match text.char_indices().nth(p) {
                    Some((b, _)) => &text[..b],
                    None => &text,
                },
                None => &text,
            };
            push_padded_text(out, body, spec)?;
        }
        'c' => {
            let ch = if arg.type_name() == "str" {
                let s = arg.py_str();
                let mut it = s.chars();
                match (it.next(), it.next()) {
                    (Some(c), None) => c,
                    _ => return Err(PyError::type_error("%c requires int or char")),
                }
            } else if arg.type_name() == "float" {
                return Err(PyError::type_error("%c requires int or char"));
            } else if arg.as_big_int().is_some() {
                return Err(PyError::new(
                    PyErrorKind::OverflowError,
                    "%c arg not in range(0x110000)",
                ));
            } else {
                let v = arg
                    .as_int()
                    .ok_or_else(|| PyError::type_error("%c requires int or char"))?;
                super::py_chr(v)?
            };
            push_padded_text(out, ch.encode_utf8(&mut [0; 4]), spec)?;
        }
        'd' | 'i' | 'u' | 'o' | 'x' | 'X' => {
            let is_float = arg.type_name() == "float";
            let (radix, upper) = match conv {
                'o' => (8, false),
                'x' => (16, false),
                'X' => (16, true),
                _ => (10, false),
            };
            let (negative, mut digits) = match (arg.as_int(), arg.as_big_int()) {
                (Some(v), _) if !is_float => (v < 0, int_digits(v, radix, upper)),
                (_, Some(b)) => big_digits(b, radix, upper),
                _ => {
                    let decimal = matches!(conv, 'd' | 'i' | 'u');
                    match (arg.as_float(), arg.int_conversion()) {
                        (Some(x), _) if decimal && is_float => float_to_int_digits(x)?,
                        // `int()` raising `TypeError` is reported as the wrong type, like a value
                        // without `__int__`.
                        (_, Some(Ok(converted))) if decimal => converted,
                        (_, Some(Err(e))) if decimal && e.kind != PyErrorKind::TypeError => return Err(e),
                        _ => {
                            let need = if decimal { "a real number" } else { "an integer" };
                            return Err(PyError::type_error(format!(
                                "%{conv} format: {need} is required, not {}",
                                arg.type_name()
                            )));
                        }
                    }
                }
            };
            if let Some(p) = spec.prec {
                check_size(p)?;
                let len = digits.len();
                if p > len {
                    let mut padded = String::with_capacity(p);
                    push_n(&mut padded, '0', p - len);
                    padded.push_str(&digits);
                    digits = padded;
                }
            }
            let prefix = match (spec.alt, conv) {
                (true, 'o') => "0o",
                (true, 'x') => "0x",
                (true, 'X') => "0X",
                _ => "",
            };
            push_number(out, negative, prefix, &digits, spec)?;
        }
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' => {
            let x = match (arg.as_float(), arg.as_big_int(), arg.float_conversion()) {
                (Some(x), _, _) => x,
                (None, Some(b), _) => super::int_to_float(b)?,
                (None, None, Some(converted)) => converted?,
                (None, None, None) => {
                    return Err(PyError::type_error(format!(
                        "must be real number, not {}",
                        arg.type_name()
                    )))
                }
            };
            check_size(spec.prec.unwrap_or(0))?;
            let upper = conv.is_ascii_uppercase();
            let body = float_body(
                x.abs(),
                conv.to_ascii_lowercase(),
                spec.prec.unwrap_or(6),
                spec.alt,
                upper,
            );
            push_number(out, x.is_sign_negative() && !x.is_nan(), "", &body, spec)?;
        }
        _ => {
            let shown = if ('\x1f'..='~').contains(&conv) { conv } else { '?' };
            return Err(PyError::value(format!(
                "unsupported format character '{shown}' (0x{:x}) at index {index}",
                conv as u32
            )));
        }
    }
    Ok(())
}

/// Magnitude of a float in `e`, `f` or `g` style (`inf`/`nan` for non-finite).
pub(crate) fn float_body(x: f64, kind: char, prec: usize, alt: bool, upper: bool) -> String {
    let s = if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        "inf".to_string()
    } else {
        match kind {
            'e' => exp_abs(x, prec, alt, upper),
            'f' => fixed_abs(x, prec, alt),
            _ => general_abs(x, prec, alt, upper, false),
        }
    };
    if upper {
        s.to_ascii_uppercase()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{array, check, load, result, string, strings, Dict, A};

    #[test]
    fn percent_matches_cpython() {
        for case in load("percent", 2749)
            .iter()
            .chain(&load("random_percent", 3000))
            .chain(&load("random_percent_tuple", 1500))
        {
            let (fmt, kind) = (string(&case[0]), string(&case[1]));
            let vals: Vec<A> = array(&case[2]).iter().map(A::from_json).collect();
            let keys = strings(&case[3]);
            let want = result(&case[4], string);
            let refs: Vec<&dyn FormatArg> = vals.iter().map(|v| v as &dyn FormatArg).collect();
            let dict = Dict {
                keys: &keys,
                vals: &vals,
            };
            let args = match kind {
                "tuple" => PercentArgs::Tuple(&refs),
                "single" => PercentArgs::Single(&vals[0]),
                "dict" => PercentArgs::Mapping {
                    whole: &dict,
                    map: &dict,
                },
                _ => panic!("{case:?}: unknown kind of arguments"),
            };
            check(percent_format(fmt, args), &want, &format!("{fmt:?} % {vals:?}"));
        }
    }
}
