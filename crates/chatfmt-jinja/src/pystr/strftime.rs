//! `datetime.strftime` as CPython 3.11 on Linux (glibc, C locale) does it:
//! Python itself expands `%z`, `%Z` and `%f`, glibc the rest, including the
//! GNU flags (`-`, `_`, `0`, `^`, `#`), widths and `E`/`O` modifiers.

use super::PyError;

/// Calendar fields of a `datetime`, plus its UTC offset when it is aware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTimeFields {
    /// 1..=9999.
    pub year: i32,
    /// 1..=12.
    pub month: u32,
    /// 1..=31.
    pub day: u32,
    /// 0..=23.
    pub hour: u32,
    /// 0..=59.
    pub minute: u32,
    /// 0..=59.
    pub second: u32,
    /// 0..=999999.
    pub microsecond: u32,
    /// Python's `weekday()`: Monday is 0, Sunday is 6.
    pub weekday: u32,
    /// Day of the year, 1..=366.
    pub yday: u32,
    /// `None` for a naive datetime; otherwise its fixed UTC offset in
    /// microseconds, east positive (`%z` gives `+HHMM`, `%Z` gives `UTC` or
    /// `UTC+HH:MM`, as for `datetime.timezone` offsets).
    pub utc_offset_us: Option<i64>,
    /// What `%s` prints: the seconds since the epoch of these fields read as the machine's local
    /// time (glibc's `mktime`, which Python's `%s` calls whatever the `tzinfo`); `None` reads them as
    /// UTC (the local time of a UTC machine).
    pub local_epoch: Option<i64>,
}

type IsoTime = (i64, i64, i64, i64, Option<i64>);

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

fn out_of_range(what: &str, lo: i64, hi: i64, v: i64) -> Result<(), PyError> {
    if v < lo || v > hi {
        Err(PyError::value(format!("{what} must be in {lo}..{hi}")))
    } else {
        Ok(())
    }
}

impl DateTimeFields {
    /// A naive datetime, validated like `datetime(...)` (same messages,
    /// e.g. `month must be in 1..12`, `day is out of range for month`).
    pub fn new(
        year: i64,
        month: i64,
        day: i64,
        hour: i64,
        minute: i64,
        second: i64,
        microsecond: i64,
    ) -> Result<Self, PyError> {
        if !(1..=9999).contains(&year) {
            return Err(PyError::value(format!("year {year} is out of range")));
        }
        out_of_range("month", 1, 12, month)?;
        if day < 1 || day > days_in_month(year, month as u32) as i64 {
            return Err(PyError::value("day is out of range for month"));
        }
        out_of_range("hour", 0, 23, hour)?;
        out_of_range("minute", 0, 59, minute)?;
        out_of_range("second", 0, 59, second)?;
        out_of_range("microsecond", 0, 999_999, microsecond)?;
        let days = days_from_civil(year, month as u32, day as u32);
        // 1970-01-01 was a Thursday (weekday 3).
        let weekday = (days + 3).rem_euclid(7) as u32;
        let yday = (days - days_from_civil(year, 1, 1) + 1) as u32;
        Ok(DateTimeFields {
            year: year as i32,
            month: month as u32,
            day: day as u32,
            hour: hour as u32,
            minute: minute as u32,
            second: second as u32,
            microsecond: microsecond as u32,
            weekday,
            yday,
            utc_offset_us: None,
            local_epoch: None,
        })
    }

    /// What `datetime.now()` gives for the system time `secs` + `nanos`
    /// since the Unix epoch in a zone `utc_offset` seconds east of UTC
    /// (nanoseconds truncated to microseconds, as CPython does). Naive: set
    /// `utc_offset_us` for an aware value.
    pub fn from_unix(secs: i64, nanos: u32, utc_offset: i32) -> Result<Self, PyError> {
        let local = secs
            .checked_add(utc_offset as i64)
            .filter(|v| v.unsigned_abs() < 1 << 50)
            .ok_or_else(|| PyError::value("year is out of range"))?;
        let days = local.div_euclid(86400);
        let sod = local.rem_euclid(86400);
        let (y, m, d) = civil_from_days(days);
        let us = (nanos.min(999_999_999) / 1000) as i64;
        Self::new(y, m as i64, d as i64, sod / 3600, sod / 60 % 60, sod % 60, us)
    }

    /// Parses a string as Python 3.11's `datetime.fromisoformat` does
    /// (following CPython's C parser, quirks included): a date (`YYYY-MM-DD`,
    /// `YYYYMMDD`, `YYYY-Www[-D]`, `YYYYWww[D]`), optionally any one
    /// separator character and a time `HH[:MM[:SS[.f+]]]` (or without
    /// colons, `,` also accepted for `.`) with an optional UTC offset (`Z`,
    /// `±HH[:MM[:SS[.ffffff]]]`). Errors: `Invalid isoformat string: '...'`
    /// and the `datetime`/`timezone` range errors.
    pub fn from_iso(s: &str) -> Result<Self, PyError> {
        let invalid = || {
            let mut m = String::from("Invalid isoformat string: ");
            super::str_repr(s, &mut m);
            PyError::value(m)
        };
        let b = s.as_bytes();
        let sep = iso_separator(b).ok_or_else(invalid)?;
        let (y, m, d) = iso_date(b, sep).ok_or_else(invalid)?;
        let (mut h, mut mi, mut se, mut us, mut off) = (0, 0, 0, 0, None);
        if sep < b.len() {
            // Skip the separator, which may be any character.
            let skip = s.get(sep..).and_then(|r| r.chars().next()).map_or(1, char::len_utf8);
            (h, mi, se, us, off) = iso_time(b.get(sep + skip..).unwrap_or(&[])).ok_or_else(invalid)?;
        }
        if let Some(total) = off {
            let day = 86_400_000_000i64;
            if total <= -day || total >= day {
                return Err(PyError::value(format!(
                    "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24), not {}.",
                    timedelta_repr(total)
                )));
            }
        }
        let mut dt = DateTimeFields::new(y, m, d, h, mi, se, us)?;
        dt.utc_offset_us = off;
        Ok(dt)
    }
}

/// Python's `repr(timedelta(microseconds=us))`.
fn timedelta_repr(us: i64) -> String {
    let days = us.div_euclid(86_400_000_000);
    let rest = us.rem_euclid(86_400_000_000);
    let (secs, micros) = (rest / 1_000_000, rest % 1_000_000);
    let mut parts = Vec::new();
    if days != 0 {
        parts.push(format!("days={days}"));
    }
    if secs != 0 {
        parts.push(format!("seconds={secs}"));
    }
    if micros != 0 {
        parts.push(format!("microseconds={micros}"));
    }
    if parts.is_empty() {
        parts.push("0".to_string());
    }
    format!("datetime.timedelta({})", parts.join(", "))
}

/// Byte at `i`, or 0 past the end (CPython reads a NUL-terminated buffer).
fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

/// `n` ASCII digits at `i`, as a number.
fn digits_at(b: &[u8], i: usize, n: usize) -> Option<i64> {
    let mut v = 0i64;
    for k in 0..n {
        let c = at(b, i + k);
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as i64;
    }
    Some(v)
}

/// Where the date part ends (CPython's `_find_isoformat_datetime_separator`).
fn iso_separator(b: &[u8]) -> Option<usize> {
    let len = b.len();
    if len == 7 {
        return Some(7);
    }
    if at(b, 4) == b'-' {
        if at(b, 5) != b'W' {
            return Some(10);
        }
        if len < 8 {
            return None;
        }
        if len > 8 && at(b, 8) == b'-' {
            if len == 9 {
                return None;
            }
            if len > 10 && at(b, 10).is_ascii_digit() {
                return Some(8);
            }
            return Some(10);
        }
        return Some(8);
    }
    if at(b, 4) == b'W' {
        let mut idx = 7;
        while idx < len && at(b, idx).is_ascii_digit() {
            idx += 1;
        }
        if idx < 9 {
            return Some(idx);
        }
        return Some(if idx % 2 == 0 { 7 } else { 8 });
    }
    Some(8)
}

/// CPython's `parse_isoformat_date`; `len` is where the date part ends.
fn iso_date(b: &[u8], len: usize) -> Option<(i64, i64, i64)> {
    let year = digits_at(b, 0, 4)?;
    let mut p = 4;
    let sep = at(b, p) == b'-';
    if sep {
        p += 1;
    }
    if at(b, p) == b'W' {
        p += 1;
        let week = digits_at(b, p, 2)?;
        p += 2;
        let day = if p < len {
            if sep {
                if at(b, p) != b'-' {
                    return None;
                }
                p += 1;
            }
            digits_at(b, p, 1)?
        } else {
            1
        };
        return iso_week_date(year, week, day);
    }
    let month = digits_at(b, p, 2)?;
    p += 2;
    if sep {
        if at(b, p) != b'-' {
            return None;
        }
        p += 1;
    }
    let day = digits_at(b, p, 2)?;
    Some((year, month, day))
}

/// The date of ISO year/week/day, if that week and day exist.
fn iso_week_date(year: i64, week: i64, day: i64) -> Option<(i64, i64, i64)> {
    if week <= 0 || week >= 53 {
        let jan1 = (days_from_civil(year, 1, 1) + 3).rem_euclid(7);
        let long_year = jan1 == 3 || (jan1 == 2 && is_leap(year));
        if !(week == 53 && long_year) {
            return None;
        }
    }
    if !(1..=7).contains(&day) {
        return None;
    }
    let jan4 = days_from_civil(year, 1, 4);
    let week1_monday = jan4 - (jan4 + 3).rem_euclid(7);
    let (y, m, d) = civil_from_days(week1_monday + (week - 1) * 7 + day - 1);
    Some((y, m as i64, d as i64))
}

/// CPython's `parse_hh_mm_ss_ff` on `b[..end]` (reading past `end` as it
/// does): `[h, m, s, us]` and whether text is left over, `None` on error.
fn iso_hms(b: &[u8], end: usize) -> Option<([i64; 4], bool)> {
    let mut vals = [0i64; 4];
    let mut p = 0;
    let mut has_sep = true;
    for i in 0..3 {
        vals[i] = digits_at(b, p, 2)?;
        p += 2;
        let c = at(b, p);
        p += 1;
        if i == 0 {
            has_sep = c == b':';
        }
        if p >= end {
            return Some((vals, c != 0));
        } else if has_sep && c == b':' {
            continue;
        } else if c == b'.' || c == b',' {
            break;
        } else if !has_sep {
            p -= 1;
        } else {
            return None;
        }
    }
    let n = end.saturating_sub(p).min(6);
    let mut us = digits_at(b, p, n)?;
    for _ in n..6 {
        us *= 10;
    }
    vals[3] = us;
    p += n;
    while at(b, p).is_ascii_digit() {
        p += 1;
    }
    Some((vals, at(b, p) != 0))
}

/// CPython's `parse_isoformat_time`: (h, m, s, us, UTC offset in µs).
fn iso_time(b: &[u8]) -> Option<IsoTime> {
    let len = b.len();
    let mut tz = 0;
    loop {
        if matches!(at(b, tz), b'Z' | b'+' | b'-') {
            break;
        }
        tz += 1;
        if tz >= len {
            break;
        }
    }
    let ([h, m, s, us], rest) = iso_hms(b, tz)?;
    if tz >= len {
        return (!rest).then_some((h, m, s, us, None));
    }
    if at(b, tz) == b'Z' {
        return (tz + 1 == len).then_some((h, m, s, us, Some(0)));
    }
    let sign = if at(b, tz) == b'-' { -1 } else { 1 };
    let tb = b.get(tz + 1..).unwrap_or(&[]);
    let ([oh, om, os, ous], rest) = iso_hms(tb, tb.len())?;
    if rest {
        return None;
    }
    let total = sign * ((oh * 3600 + om * 60 + os) * 1_000_000 + ous);
    Some((h, m, s, us, Some(total)))
}

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Python's own expansion of `%z`, `%Z` and `%f` (done before glibc sees
/// the format); other `%x` pairs are passed through untouched.
fn python_pass(fmt: &str, t: &DateTimeFields) -> String {
    let mut out = String::with_capacity(fmt.len() + 8);
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            None => out.push('%'),
            Some('z') => {
                if let Some(off) = t.utc_offset_us {
                    out.push_str(&format_offset(off, ""));
                }
            }
            Some('Z') => {
                if let Some(off) = t.utc_offset_us {
                    out.push_str("UTC");
                    if off != 0 {
                        out.push_str(&format_offset(off, ":"));
                    }
                }
            }
            Some('f') => out.push_str(&format!("{:06}", t.microsecond)),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
        }
    }
    out
}

/// `+HH<sep>MM[<sep>SS[.ffffff]]` as Python writes UTC offsets.
fn format_offset(off_us: i64, sep: &str) -> String {
    let sign = if off_us < 0 { '-' } else { '+' };
    let a = off_us.unsigned_abs();
    let (secs, us) = (a / 1_000_000, a % 1_000_000);
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = format!("{sign}{h:02}{sep}{m:02}");
    if s != 0 || us != 0 {
        out.push_str(&format!("{sep}{s:02}"));
    }
    if us != 0 {
        out.push_str(&format!(".{us:06}"));
    }
    out
}

/// How glibc pads a number when no flag is given.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NumKind {
    /// Zero padded to its digit count.
    Zero,
    /// Space padded to its digit count (`%e`, `%k`, `%l`).
    Space,
    /// Years and centuries: not padded except to an explicit width (zeros,
    /// or spaces with the `_` and `-` flags).
    Year,
    /// `%s`: not padded, spaces up to an explicit width.
    Epoch,
}

struct Directive {
    pad: Option<char>,
    upper: bool,
    swap: bool,
    width: Option<usize>,
}

fn pad_to(out: &mut String, body: &str, width: usize, fill: char) {
    let len = body.chars().count();
    for _ in len..width {
        out.push(fill);
    }
    out.push_str(body);
}

/// ISO 8601 year and week number.
fn iso_year_week(t: &DateTimeFields) -> (i64, u32) {
    let days = days_from_civil(t.year as i64, t.month, t.day);
    let thursday = days + 3 - t.weekday as i64;
    let (y, _, _) = civil_from_days(thursday);
    let week = (thursday - days_from_civil(y, 1, 1)) / 7 + 1;
    (y, week as u32)
}

/// Python `dt.strftime(fmt)` on Linux/glibc in the C locale. `%s` treats the
/// fields as UTC (the local zone of a UTC machine); the format ends at a NUL
/// character, as in CPython; widths are capped at 2^20.
pub fn strftime(fmt: &str, t: &DateTimeFields) -> String {
    // CPython hands the format to C as a NUL-terminated string.
    let fmt = fmt.split('\0').next().unwrap_or("");
    let pre = python_pass(fmt, t);
    let mut out = String::with_capacity(pre.len() + 16);
    glibc_format(&pre, t, &mut out);
    out
}

fn glibc_format(fmt: &str, t: &DateTimeFields, out: &mut String) {
    let chars: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        let start = i - 1;
        let mut d = Directive {
            pad: None,
            upper: false,
            swap: false,
            width: None,
        };
        while let Some(&f) = chars.get(i) {
            match f {
                '_' | '-' | '0' => d.pad = Some(f),
                '^' => d.upper = true,
                '#' => d.swap = true,
                _ => break,
            }
            i += 1;
        }
        while let Some(v) = chars.get(i).and_then(|c| c.to_digit(10)) {
            let w = d.width.unwrap_or(0);
            d.width = Some(w.saturating_mul(10).saturating_add(v as usize).min(1 << 20));
            i += 1;
        }
        let mut modifier = None;
        if let Some(&m @ ('E' | 'O')) = chars.get(i) {
            modifier = Some(m);
            i += 1;
        }
        let Some(&conv) = chars.get(i) else {
            // `%` sequence cut by the end of the format: copied as is.
            let text: String = chars[start..].iter().collect();
            bad_format(out, &text, &d);
            break;
        };
        i += 1;
        let allowed = match modifier {
            None => "abcdeghjklmnprstuwxyzABCDFGHIMPRSTUVWXYZ%",
            Some('E') => "cnprstuxyzCPRTXYZ%",
            _ => "bdeghjklmnprstuwyzBCGHIMPRSTUVWZ%",
        };
        if !allowed.contains(conv) {
            let text: String = chars[start..i].iter().collect();
            // glibc applies `#` for %b/%h before rejecting the modifier.
            if d.swap && matches!(conv, 'b' | 'h') {
                d.upper = true;
            }
            bad_format(out, &text, &d);
            continue;
        }
        directive(out, conv, &d, t);
    }
}

fn bad_format(out: &mut String, text: &str, d: &Directive) {
    let text = if d.upper {
        text.to_ascii_uppercase()
    } else {
        text.to_string()
    };
    push_text(out, &text, d);
}

/// Writes a text result padded to the width (zeros with the `0` flag).
fn push_text(out: &mut String, text: &str, d: &Directive) {
    let fill = if d.pad == Some('0') { '0' } else { ' ' };
    pad_to(out, text, d.width.unwrap_or(0), fill);
}

fn push_num(out: &mut String, value: i64, digits: usize, kind: NumKind, d: &Directive) {
    let body = value.to_string();
    let width = d.width.unwrap_or(0);
    let (target, fill) = match (d.pad, kind) {
        (Some('-' | '_'), NumKind::Year) => (width, ' '),
        (_, NumKind::Year) => (width, '0'),
        (Some('-'), _) => (width, ' '),
        (Some('_'), _) | (None, NumKind::Space) => (width.max(digits), ' '),
        (Some(_), _) | (None, NumKind::Zero) => (width.max(digits), '0'),
        (None, NumKind::Epoch) => (width, ' '),
    };
    pad_to(out, &body, target, fill);
}

fn sub(out: &mut String, sub_fmt: &str, t: &DateTimeFields, d: &Directive) {
    let mut s = String::new();
    glibc_format(sub_fmt, t, &mut s);
    if d.upper {
        s = s.to_ascii_uppercase();
    }
    push_text(out, &s, d);
}

fn directive(out: &mut String, conv: char, d: &Directive, t: &DateTimeFields) {
    let wday = ((t.weekday % 7 + 1) % 7) as usize;
    let yday0 = t.yday as i64 - 1;
    let hour12 = match t.hour % 12 {
        0 => 12,
        h => h,
    } as i64;
    let year = t.year as i64;
    let name = |s: &str, d: &Directive, out: &mut String| {
        let s = if d.upper || d.swap {
            s.to_ascii_uppercase()
        } else {
            s.to_string()
        };
        push_text(out, &s, d);
    };
    let month = MONTHS[(t.month.clamp(1, 12) - 1) as usize];
    match conv {
        'a' => name(&DAYS[wday][..3], d, out),
        'A' => name(DAYS[wday], d, out),
        'b' | 'h' => name(&month[..3], d, out),
        'B' => name(month, d, out),
        'c' => sub(out, "%a %b %e %H:%M:%S %Y", t, d),
        'C' => push_num(out, year.div_euclid(100), 2, NumKind::Year, d),
        'd' => push_num(out, t.day as i64, 2, NumKind::Zero, d),
        'D' | 'x' => sub(out, "%m/%d/%y", t, d),
        'e' => push_num(out, t.day as i64, 2, NumKind::Space, d),
        'F' => sub(out, "%Y-%m-%d", t, d),
        'g' => push_num(out, iso_year_week(t).0.rem_euclid(100), 2, NumKind::Zero, d),
        'G' => push_num(out, iso_year_week(t).0, 4, NumKind::Year, d),
        'H' => push_num(out, t.hour as i64, 2, NumKind::Zero, d),
        'I' => push_num(out, hour12, 2, NumKind::Zero, d),
        'j' => push_num(out, t.yday as i64, 3, NumKind::Zero, d),
        'k' => push_num(out, t.hour as i64, 2, NumKind::Space, d),
        'l' => push_num(out, hour12, 2, NumKind::Space, d),
        'm' => push_num(out, t.month as i64, 2, NumKind::Zero, d),
        'M' => push_num(out, t.minute as i64, 2, NumKind::Zero, d),
        'n' => push_text(out, "\n", d),
        't' => push_text(out, "\t", d),
        'p' | 'P' => {
            let am = t.hour < 12;
            let lower = conv == 'P' || d.swap;
            let s = match (am, lower) {
                (true, false) => "AM",
                (false, false) => "PM",
                (true, true) => "am",
                (false, true) => "pm",
            };
            push_text(out, s, d);
        }
        'r' => sub(out, "%I:%M:%S %p", t, d),
        'R' => sub(out, "%H:%M", t, d),
        's' => {
            let days = days_from_civil(year, t.month, t.day);
            let utc = days * 86400 + t.hour as i64 * 3600 + t.minute as i64 * 60 + t.second as i64;
            push_num(out, t.local_epoch.unwrap_or(utc), 1, NumKind::Epoch, d);
        }
        'S' => push_num(out, t.second as i64, 2, NumKind::Zero, d),
        'T' | 'X' => sub(out, "%H:%M:%S", t, d),
        'u' => push_num(out, ((wday + 6) % 7 + 1) as i64, 1, NumKind::Zero, d),
        'U' => push_num(out, (yday0 + 7 - wday as i64) / 7, 2, NumKind::Zero, d),
        'V' => push_num(out, iso_year_week(t).1 as i64, 2, NumKind::Zero, d),
        'w' => push_num(out, wday as i64, 1, NumKind::Zero, d),
        'W' => push_num(out, (yday0 + 7 - ((wday + 6) % 7) as i64) / 7, 2, NumKind::Zero, d),
        'y' => push_num(out, year.rem_euclid(100), 2, NumKind::Zero, d),
        'Y' => push_num(out, year, 4, NumKind::Year, d),
        // glibc's own %z prints nothing (Python passes tm_isdst = -1) and
        // its %Z an empty zone name, padded to the width.
        'z' => {}
        'Z' => push_text(out, "", d),
        _ => push_text(out, "%", d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pystr::test_support::{array, bits, int, load, opt_int, result_message, string};
    use serde_json::Value;

    /// `[y, m, d, H, M, S, us]`.
    fn fields(v: &Value) -> [i64; 7] {
        let a = array(v);
        assert_eq!(a.len(), 7, "{v}");
        [0, 1, 2, 3, 4, 5, 6].map(|i| int(&a[i]))
    }

    fn make(f: [i64; 7], off: Option<i64>) -> DateTimeFields {
        let mut t =
            DateTimeFields::new(f[0], f[1], f[2], f[3], f[4], f[5], f[6]).unwrap_or_else(|e| panic!("{f:?}: {e}"));
        t.utc_offset_us = off;
        t
    }

    #[test]
    fn strftime_matches_cpython() {
        for case in load("strftime", 1880).iter().chain(&load("random_strftime", 3000)) {
            let (f, off) = (fields(&case[0]), opt_int(&case[1]));
            let (fmt, want) = (string(&case[2]), string(&case[3]));
            assert_eq!(strftime(fmt, &make(f, off)), want, "{f:?} {off:?} {fmt:?}");
        }
    }

    /// `datetime.fromtimestamp(ts)` in a fixed zone: the timestamp rounded to
    /// microseconds (half to even) as CPython does, then the clock's conversion.
    #[test]
    fn from_unix_matches_fromtimestamp() {
        for case in load("timestamp", 57) {
            let ts = f64::from_bits(bits(&case[0]));
            let off = i32::try_from(int(&case[1])).unwrap_or_else(|e| panic!("{case:?}: {e}"));
            let f = fields(&case[2]);
            let mut secs = ts.trunc() as i64;
            let mut us = ((ts - ts.trunc()) * 1e6).round_ties_even() as i64;
            if us >= 1_000_000 {
                (secs, us) = (secs + 1, us - 1_000_000);
            } else if us < 0 {
                (secs, us) = (secs - 1, us + 1_000_000);
            }
            let nanos = u32::try_from(us * 1000).unwrap_or_else(|e| panic!("{case:?}: {e}"));
            assert_eq!(
                DateTimeFields::from_unix(secs, nanos, off),
                Ok(make(f, None)),
                "{ts} {off}"
            );
        }
    }

    #[test]
    fn from_iso_matches_cpython() {
        for case in load("iso", 89) {
            let s = string(&case[0]);
            let want = result_message(&case[1], |v| (fields(&v[0]), opt_int(&v[1])));
            let got = DateTimeFields::from_iso(s);
            match want {
                Ok((f, off)) => assert_eq!(got, Ok(make(f, off)), "{s:?}"),
                Err(m) => assert_eq!(got.map_err(|e| e.message), Err(m.to_string()), "{s:?}"),
            }
        }
    }

    #[test]
    fn from_unix_truncates_to_microseconds() {
        let t = DateTimeFields::from_unix(1_709_211_909, 123_456_789, 3600);
        assert_eq!(t, Ok(make([2024, 2, 29, 14, 5, 9, 123_456], None)));
        let t = DateTimeFields::from_unix(-1, 999_999_999, 0);
        assert_eq!(t, Ok(make([1969, 12, 31, 23, 59, 59, 999_999], None)));
        assert!(DateTimeFields::from_unix(i64::MAX, 0, 1).is_err());
        assert!(DateTimeFields::from_unix(253_402_300_800, 0, 0).is_err());
    }

    #[test]
    fn weekday_and_yday() {
        let t = make([2024, 12, 31, 0, 0, 0, 0], None);
        assert_eq!((t.weekday, t.yday), (1, 366));
        let t = make([1, 1, 1, 0, 0, 0, 0], None);
        assert_eq!((t.weekday, t.yday), (0, 1));
    }
}
