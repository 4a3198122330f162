//! The format-spec mini-language (`format(value, spec)`, the part after `:`
//! in `str.format` fields) for `str`, `int`/`bool` and `float`.

use super::float::{exp_abs, fixed_abs, general_abs, repr_abs};
use super::methods::push_n;
use super::percent::int_digits;
use super::{check_size, FormatArg, PyError, PyErrorKind};
use num_bigint::BigInt;

/// A parsed format spec.
struct Spec {
    fill: char,
    align: Option<char>,
    sign: Option<char>,
    no_neg_0: bool,
    alt: bool,
    width: usize,
    sep: Option<char>,
    prec: Option<usize>,
    ty: Option<char>,
}

/// CPython's way to show a presentation type in messages.
fn show_type(c: char) -> String {
    if (c as u32) > 32 && (c as u32) < 128 {
        c.to_string()
    } else {
        format!("\\x{:x}", c as u32)
    }
}

fn parse_int(chars: &[char], pos: &mut usize) -> Result<Option<usize>, PyError> {
    let start = *pos;
    let mut v: usize = 0;
    while let Some(d) = chars.get(*pos).and_then(|c| c.to_digit(10)) {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(d as usize))
            .filter(|&v| v <= isize::MAX as usize)
            .ok_or_else(|| PyError::value("Too many decimal digits in format string"))?;
        *pos += 1;
    }
    Ok((*pos > start).then_some(v))
}

fn is_align(c: Option<&char>) -> bool {
    matches!(c, Some('<' | '>' | '=' | '^'))
}

/// Parses `spec` for an object of type `type_name` whose default type is
/// `default_type` and default alignment `default_align`.
fn parse_spec(spec: &str, type_name: &str, default_type: Option<char>, default_align: char) -> Result<Spec, PyError> {
    let chars: Vec<char> = spec.chars().collect();
    let mut s = Spec {
        fill: ' ',
        align: None,
        sign: None,
        no_neg_0: false,
        alt: false,
        width: 0,
        sep: None,
        prec: None,
        ty: default_type,
    };
    let mut pos = 0;
    let mut fill_specified = false;
    if is_align(chars.get(1)) {
        s.fill = chars[0];
        s.align = Some(chars[1]);
        fill_specified = true;
        pos = 2;
    } else if is_align(chars.first()) {
        s.align = Some(chars[0]);
        pos = 1;
    }
    if let Some(&c @ ('+' | '-' | ' ')) = chars.get(pos) {
        s.sign = Some(c);
        pos += 1;
    }
    if chars.get(pos) == Some(&'z') {
        s.no_neg_0 = true;
        pos += 1;
    }
    if chars.get(pos) == Some(&'#') {
        s.alt = true;
        pos += 1;
    }
    if chars.get(pos) == Some(&'0') && !fill_specified {
        s.fill = '0';
        if s.align.is_none() && default_align == '>' {
            s.align = Some('=');
        }
        pos += 1;
    }
    s.width = parse_int(&chars, &mut pos)?.unwrap_or(0);
    let both = || PyError::value("Cannot specify both ',' and '_'.");
    if chars.get(pos) == Some(&',') {
        s.sep = Some(',');
        pos += 1;
    }
    if chars.get(pos) == Some(&'_') {
        if s.sep.is_some() {
            return Err(both());
        }
        s.sep = Some('_');
        pos += 1;
    }
    if chars.get(pos) == Some(&',') && s.sep == Some('_') {
        return Err(both());
    }
    if chars.get(pos) == Some(&'.') {
        pos += 1;
        s.prec = parse_int(&chars, &mut pos)?;
        if s.prec.is_none() {
            return Err(PyError::value("Format specifier missing precision"));
        }
    }
    match chars.len() - pos.min(chars.len()) {
        0 => {}
        1 => s.ty = Some(chars[pos]),
        _ => {
            return Err(PyError::value(format!(
                "Invalid format specifier '{spec}' for object of type '{type_name}'"
            )))
        }
    }
    if let Some(sep) = s.sep {
        let ok = match s.ty {
            None | Some('d' | 'e' | 'f' | 'g' | 'E' | 'G' | '%' | 'F') => true,
            Some('b' | 'o' | 'x' | 'X') => sep == '_',
            Some(_) => false,
        };
        if !ok {
            let ty = s.ty.map_or(String::new(), show_type);
            return Err(PyError::value(format!("Cannot specify '{sep}' with '{ty}'.")));
        }
    }
    Ok(s)
}

fn unknown_code(ty: char, type_name: &str) -> PyError {
    PyError::value(format!(
        "Unknown format code '{}' for object of type '{type_name}'",
        show_type(ty)
    ))
}

/// Python `format(value, spec)` for `str`, `int`, `bool` and `float`
/// values (by [`FormatArg::type_name`]); an empty spec gives `str(value)`
/// for any value, a non-empty one for another type is CPython's
/// `TypeError: unsupported format string passed to T.__format__`.
pub fn apply_format_spec(spec: &str, arg: &dyn FormatArg) -> Result<String, PyError> {
    if spec.is_empty() {
        return Ok(arg.py_str());
    }
    let type_name = arg.type_name();
    match type_name {
        "str" => format_str(spec, &arg.py_str()),
        "float" => {
            let s = parse_spec(spec, type_name, None, '>')?;
            match s.ty {
                None | Some('e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'n' | '%') => {
                    format_float(&s, arg.as_float().unwrap_or(f64::NAN))
                }
                Some(c) => Err(unknown_code(c, type_name)),
            }
        }
        _ => {
            let v = match (arg.as_int(), arg.as_big_int()) {
                (Some(v), _) => Int::Small(v),
                (None, Some(b)) => Int::Big(b),
                (None, None) => {
                    return Err(PyError::type_error(format!(
                        "unsupported format string passed to {type_name}.__format__"
                    )))
                }
            };
            let s = parse_spec(spec, type_name, Some('d'), '>')?;
            match s.ty {
                Some('b' | 'c' | 'd' | 'o' | 'x' | 'X' | 'n') | None => format_int(&s, v),
                Some('e' | 'E' | 'f' | 'F' | 'g' | 'G' | '%') => format_float(&s, v.to_f64()?),
                Some(c) => Err(unknown_code(c, type_name)),
            }
        }
    }
}

/// An int to format: within `i64`, or beyond it.
#[derive(Clone, Copy)]
enum Int<'a> {
    Small(i64),
    Big(&'a BigInt),
}

impl Int<'_> {
    /// Python `float(v)`.
    fn to_f64(self) -> Result<f64, PyError> {
        match self {
            Int::Small(v) => Ok(v as f64),
            Int::Big(b) => super::int_to_float(b),
        }
    }
}

fn format_str(spec: &str, value: &str) -> Result<String, PyError> {
    let s = parse_spec(spec, "str", Some('s'), '<')?;
    match s.ty {
        Some('s') | None => {}
        Some(c) => return Err(unknown_code(c, "str")),
    }
    if let Some(sign) = s.sign {
        return Err(PyError::value(if sign == ' ' {
            "Space not allowed in string format specifier"
        } else {
            "Sign not allowed in string format specifier"
        }));
    }
    if s.no_neg_0 {
        return Err(PyError::value(
            "Negative zero coercion (z) not allowed in string format specifier",
        ));
    }
    if s.alt {
        return Err(PyError::value(
            "Alternate form (#) not allowed in string format specifier",
        ));
    }
    if s.align == Some('=') {
        return Err(PyError::value("'=' alignment not allowed in string format specifier"));
    }
    let body = match s.prec.and_then(|p| value.char_indices().nth(p)) {
        Some((b, _)) => &value[..b],
        None => value,
    };
    check_size(s.width)?;
    let len = body.chars().count();
    let pad = s.width.saturating_sub(len);
    let (left, right) = match s.align.unwrap_or('<') {
        '>' => (pad, 0),
        '^' => (pad / 2, pad - pad / 2),
        _ => (0, pad),
    };
    let mut out = String::with_capacity(body.len() + pad);
    push_n(&mut out, s.fill, left);
    out.push_str(body);
    push_n(&mut out, s.fill, right);
    Ok(out)
}

fn format_int(s: &Spec, v: Int<'_>) -> Result<String, PyError> {
    if s.prec.is_some() {
        return Err(PyError::value("Precision not allowed in integer format specifier"));
    }
    if s.no_neg_0 {
        return Err(PyError::value(
            "Negative zero coercion (z) not allowed in integer format specifier",
        ));
    }
    let ty = s.ty.unwrap_or('d');
    if ty == 'c' {
        if s.sign.is_some() {
            return Err(PyError::value("Sign not allowed with integer format specifier 'c'"));
        }
        if s.alt {
            return Err(PyError::value(
                "Alternate form (#) not allowed with integer format specifier 'c'",
            ));
        }
        let Int::Small(v) = v else {
            return Err(PyError::new(
                PyErrorKind::OverflowError,
                "Python int too large to convert to C long",
            ));
        };
        let c = super::py_chr(v)?;
        return render_number(s, false, "", &c.to_string(), "", 3);
    }
    let (radix, prefix, upper) = match ty {
        'b' => (2, "0b", false),
        'o' => (8, "0o", false),
        'x' => (16, "0x", false),
        'X' => (16, "0X", true),
        _ => (10, "", false),
    };
    let (negative, digits) = match v {
        Int::Small(v) => (v < 0, int_digits(v, radix, upper)),
        Int::Big(b) => super::big_digits(b, radix, upper),
    };
    let prefix = if s.alt { prefix } else { "" };
    let group = if radix == 10 { 3 } else { 4 };
    render_number(s, negative, prefix, &digits, "", group)
}

fn format_float(s: &Spec, x: f64) -> Result<String, PyError> {
    let mut ty = s.ty;
    let mut x = x;
    let mut pct = false;
    if ty == Some('n') {
        ty = Some('g');
    }
    if ty == Some('%') {
        ty = Some('f');
        x *= 100.0;
        pct = true;
    }
    let upper = matches!(ty, Some('E' | 'F' | 'G'));
    let prec = s.prec.unwrap_or(6);
    if prec > i32::MAX as usize {
        return Err(PyError::value("precision too big"));
    }
    check_size(prec)?;
    let a = x.abs();
    let mut body = if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        "inf".to_string()
    } else {
        match ty {
            None if s.prec.is_none() => {
                let mut r = repr_abs(a, true);
                if s.alt && !r.contains('.') {
                    let at = r.find('e').unwrap_or(r.len());
                    r.insert(at, '.');
                }
                r
            }
            None => general_abs(a, prec, s.alt, false, true),
            Some('e' | 'E') => exp_abs(a, prec, s.alt, upper),
            Some('f' | 'F') => fixed_abs(a, prec, s.alt),
            _ => general_abs(a, prec, s.alt, upper, false),
        }
    };
    if upper {
        body = body.to_ascii_uppercase();
    }
    let mut negative = x.is_sign_negative() && !x.is_nan();
    if negative && s.no_neg_0 {
        let mantissa = body.split(['e', 'E']).next().unwrap_or("");
        if !mantissa.chars().any(|c| c.is_ascii_digit() && c != '0') && x.is_finite() {
            negative = false;
        }
    }
    let split = body.find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len());
    let (digits, rest) = body.split_at(split);
    let mut remainder = rest.to_string();
    if pct {
        remainder.push('%');
    }
    render_number(s, negative, "", digits, &remainder, 3)
}

/// Inserts the separator every `group` digits from the right, padding with
/// zeros until at least `min_width` characters (CPython's grouping with a
/// minimum width used for `0=` padding).
fn group_digits(digits: &str, sep: Option<char>, group: usize, min_width: usize) -> String {
    let Some(sep) = sep else {
        let mut out = String::new();
        push_n(&mut out, '0', min_width.saturating_sub(digits.chars().count()));
        out.push_str(digits);
        return out;
    };
    if digits.is_empty() {
        return String::new();
    }
    let mut remaining = digits.len() as i64;
    let mut min_width = min_width as i64;
    let group = group as i64;
    let mut parts: Vec<String> = Vec::new();
    loop {
        let l = remaining.max(min_width).max(1).min(group);
        let n_chars = remaining.min(l).max(0);
        let n_zeros = (l - remaining).max(0);
        let mut part = String::new();
        push_n(&mut part, '0', n_zeros as usize);
        let end = remaining as usize;
        part.push_str(&digits[end - n_chars as usize..end]);
        parts.push(part);
        remaining -= n_chars;
        min_width -= l;
        if remaining <= 0 && min_width <= 0 {
            break;
        }
        min_width -= 1;
    }
    parts.reverse();
    parts.join(&sep.to_string())
}

/// Lays out sign, prefix, grouped digits and remainder with fill and alignment.
fn render_number(
    s: &Spec,
    negative: bool,
    prefix: &str,
    digits: &str,
    remainder: &str,
    group: usize,
) -> Result<String, PyError> {
    check_size(s.width)?;
    let sign = if negative {
        "-"
    } else {
        match s.sign {
            Some('+') => "+",
            Some(' ') => " ",
            _ => "",
        }
    };
    let align = s.align.unwrap_or('>');
    let fixed_len = sign.len() + prefix.len() + remainder.chars().count();
    let min_width = if s.fill == '0' && align == '=' {
        s.width.saturating_sub(fixed_len)
    } else {
        0
    };
    let grouped = group_digits(digits, s.sep, group, min_width);
    let len = fixed_len + grouped.chars().count();
    let pad = s.width.saturating_sub(len);
    let mut out = String::with_capacity(len + pad);
    let (left, right) = match align {
        '<' => (0, pad),
        '^' => (pad / 2, pad - pad / 2),
        '=' => (0, 0),
        _ => (pad, 0),
    };
    push_n(&mut out, s.fill, left);
    out.push_str(sign);
    out.push_str(prefix);
    if align == '=' {
        push_n(&mut out, s.fill, pad);
    }
    out.push_str(&grouped);
    out.push_str(remainder);
    push_n(&mut out, s.fill, right);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{check, load, result, string, A};

    #[test]
    fn format_spec_matches_cpython() {
        for case in load("format_spec", 5281).iter().chain(&load("random_spec", 4000)) {
            let (spec, v, want) = (string(&case[0]), A::from_json(&case[1]), result(&case[2], string));
            check(apply_format_spec(spec, &v), &want, &format!("format({v:?}, {spec:?})"));
        }
    }
}
