//! Parquet and Arrow rows as JSON values, read straight from the Arrow arrays.
//!
//! [`template_row`] gives a row as a chat template sees it when a Hugging Face `datasets` user hands
//! the row to transformers' `apply_chat_template`: datasets turns each Arrow value into a Python
//! object and transformers' `_plain_template_data` rebuilds it from plain JSON types, with a
//! `<TypeName>` placeholder for anything else. So
//!
//! - strings, integers, booleans, lists and structs are themselves; a dictionary-encoded value is
//!   its value;
//! - floats (half, single, double) are Python floats, widened to f64 (`0.1f32` is
//!   `0.10000000149011612`); NaN and infinities, which a template would print as `NaN` or
//!   `Infinity`, have no JSON form and refuse the row;
//! - strings of the `datasets` `Json` feature (the Arrow extension `arrow.json`, at any nesting
//!   level) are decoded as datasets decodes them, with pandas' `ujson_loads` (see [`ujson`]);
//! - timestamps are `<datetime>` (`<Timestamp>` in nanoseconds, pandas' type, and `<NaTType>` for
//!   its not-a-time), dates `<date>`, times `<time>`, durations `<timedelta>` (`<Timedelta>`,
//!   `<NaTType>` in nanoseconds), binaries `<bytes>`, decimals `<Decimal>`; a value Python's
//!   `datetime`, `date` or `timedelta` cannot hold refuses the row, as datasets fails on it;
//! - types datasets cannot load at all (maps, unions, intervals, run-end encoded arrays, 32- and
//!   64-bit decimals, unknown extension types) refuse the row rather than guess; list views, which
//!   pyarrow gives as lists, are lists.
//!
//! A refusal names the value's path in the row (`messages[1].tool_calls[0].function.arguments`).
//!
//! [`row`] gives the row as `arrow_json` writes it with explicit nulls, for the types it converts
//! directly (strings, integers, booleans, lists, structs; `arrow.json` strings stay strings); for
//! the others the caller goes through `arrow_json`. It serves the JSON Lines output of input
//! columns, which keeps their values (a timestamp as its ISO text, not a placeholder).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType,
    DurationSecondType, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, GenericListArray, GenericListViewArray, OffsetSizeTrait, RecordBatch};
use arrow_schema::{DataType, Field, TimeUnit};
use serde_json::{Map, Number, Value as Json};
use std::fmt;

/// Row `i` of `batch` as an object of its columns, or `None` when a value has a type without a
/// direct conversion.
pub(crate) fn row(batch: &RecordBatch, i: usize) -> Option<Json> {
    object::<false>(batch, i).ok()
}

/// Row `i` of `batch` as an object of its columns, as a chat template sees it (see the module), or
/// why it cannot be.
pub(crate) fn template_row(batch: &RecordBatch, i: usize) -> Result<Json, Unrepresentable> {
    object::<true>(batch, i).map_err(|fail| match fail {
        Fail::Invalid(invalid) => invalid.finish(),
        // Every type has a conversion for templates; kept for completeness.
        Fail::Unsupported => Unrepresentable {
            path: String::new(),
            reason: "has a type without a conversion".to_string(),
        },
    })
}

/// A value of a row that a template cannot be given as datasets would give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unrepresentable {
    /// Where the value is: its column, then struct fields (`.name`) and list positions (`[i]`).
    pub path: String,
    /// Why, beginning with a verb ("is NaN, ...").
    pub reason: String,
}

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.path, self.reason)
    }
}

/// One step of a value's path, innermost first while the error goes up.
#[derive(Debug)]
enum Step {
    Key(String),
    Index(usize),
}

#[derive(Debug)]
struct Invalid {
    /// Innermost first.
    steps: Vec<Step>,
    reason: String,
}

impl Invalid {
    fn finish(self) -> Unrepresentable {
        let mut path = String::new();
        for step in self.steps.iter().rev() {
            match step {
                Step::Key(k) if path.is_empty() => path.push_str(k),
                Step::Key(k) => {
                    path.push('.');
                    path.push_str(k);
                }
                Step::Index(i) => {
                    path.push('[');
                    path.push_str(&i.to_string());
                    path.push(']');
                }
            }
        }
        Unrepresentable {
            path,
            reason: self.reason,
        }
    }
}

/// Why a value was not converted.
#[derive(Debug)]
enum Fail {
    /// Output conversion: the type has no direct conversion.
    Unsupported,
    /// Template conversion: the value cannot be given to a template.
    Invalid(Box<Invalid>),
}

impl Fail {
    fn invalid(reason: impl Into<String>) -> Fail {
        Fail::Invalid(Box::new(Invalid {
            steps: Vec::new(),
            reason: reason.into(),
        }))
    }

    fn at(mut self, step: impl FnOnce() -> Step) -> Fail {
        if let Fail::Invalid(invalid) = &mut self {
            invalid.steps.push(step());
        }
        self
    }
}

const EXTENSION_NAME: &str = "ARROW:extension:name";
const JSON_EXTENSION: &str = "arrow.json";

/// What the Arrow extension type of a field makes of its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ext<'a> {
    /// No extension type.
    None,
    /// `arrow.json`: JSON text, decoded.
    Json,
    /// Another extension type, which datasets does not load.
    Other(&'a str),
}

fn ext_of(field: &Field) -> Ext<'_> {
    let metadata = field.metadata();
    if metadata.is_empty() {
        return Ext::None;
    }
    match metadata.get(EXTENSION_NAME).map(String::as_str) {
        None => Ext::None,
        Some(JSON_EXTENSION) => Ext::Json,
        Some(other) => Ext::Other(other),
    }
}

fn object<const TEMPLATE: bool>(batch: &RecordBatch, i: usize) -> Result<Json, Fail> {
    let schema = batch.schema_ref();
    let mut obj = Map::with_capacity(batch.num_columns());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let v = value::<TEMPLATE>(ext_of(field), column.as_ref(), i)
            .map_err(|e| e.at(|| Step::Key(field.name().clone())))?;
        obj.insert(field.name().clone(), v);
    }
    Ok(Json::Object(obj))
}

fn value<const TEMPLATE: bool>(ext: Ext<'_>, a: &dyn Array, i: usize) -> Result<Json, Fail> {
    if a.is_null(i) {
        return Ok(Json::Null);
    }
    if let (true, Ext::Other(name)) = (TEMPLATE, ext) {
        return Err(Fail::invalid(format!(
            "has the Arrow extension type {name}, which datasets does not load; chatfmt does not guess how a template would see it"
        )));
    }
    Ok(match a.data_type() {
        DataType::Null => Json::Null,
        DataType::Boolean => Json::Bool(a.as_boolean().value(i)),
        DataType::Int8 => Json::from(a.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => Json::from(a.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => Json::from(a.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => Json::from(a.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => Json::from(a.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => Json::from(a.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => Json::from(a.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => Json::from(a.as_primitive::<UInt64Type>().value(i)),
        DataType::Utf8 => text::<TEMPLATE>(ext, a.as_string::<i32>().value(i))?,
        DataType::LargeUtf8 => text::<TEMPLATE>(ext, a.as_string::<i64>().value(i))?,
        DataType::Utf8View => text::<TEMPLATE>(ext, a.as_string_view().value(i))?,
        DataType::List(field) => list::<TEMPLATE, i32>(ext_of(field), a.as_list::<i32>(), i)?,
        DataType::LargeList(field) => list::<TEMPLATE, i64>(ext_of(field), a.as_list::<i64>(), i)?,
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let mut obj = Map::with_capacity(fields.len());
            for (field, child) in fields.iter().zip(s.columns()) {
                let v = value::<TEMPLATE>(ext_of(field), child.as_ref(), i)
                    .map_err(|e| e.at(|| Step::Key(field.name().clone())))?;
                obj.insert(field.name().clone(), v);
            }
            Json::Object(obj)
        }
        other if TEMPLATE => python_only(other, a, i)?,
        _ => return Err(Fail::Unsupported),
    })
}

fn text<const TEMPLATE: bool>(ext: Ext<'_>, s: &str) -> Result<Json, Fail> {
    if TEMPLATE && ext == Ext::Json {
        return ujson::loads(s).map_err(|e| {
            Fail::invalid(format!(
                "is a datasets Json value (Arrow extension arrow.json) that datasets' decoder (pandas ujson_loads) does not give a template as JSON: {e}"
            ))
        });
    }
    Ok(Json::String(s.to_owned()))
}

fn list<const TEMPLATE: bool, O: OffsetSizeTrait>(
    ext: Ext<'_>,
    a: &GenericListArray<O>,
    i: usize,
) -> Result<Json, Fail> {
    let offsets = a.value_offsets();
    let (start, end) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
    items::<TEMPLATE>(ext, a.values().as_ref(), start, end)
}

fn items<const TEMPLATE: bool>(ext: Ext<'_>, values: &dyn Array, start: usize, end: usize) -> Result<Json, Fail> {
    let mut out = Vec::with_capacity(end - start);
    for j in start..end {
        out.push(value::<TEMPLATE>(ext, values, j).map_err(|e| e.at(|| Step::Index(j - start)))?);
    }
    Ok(Json::Array(out))
}

/// A list view (datasets cannot load them, but pyarrow gives them as lists, and `format_batch` has
/// always read them so).
fn list_view<O: OffsetSizeTrait>(ext: Ext<'_>, a: &GenericListViewArray<O>, i: usize) -> Result<Json, Fail> {
    let start = a.value_offsets()[i].as_usize();
    items::<true>(ext, a.values().as_ref(), start, start + a.value_sizes()[i].as_usize())
}

/// The values of the types only templates convert: as datasets gives them to Python, then
/// `_plain_template_data`.
fn python_only(t: &DataType, a: &dyn Array, i: usize) -> Result<Json, Fail> {
    let placeholder = |name: &str| Ok(Json::String(format!("<{name}>")));
    match t {
        DataType::Float16 => float(a.as_primitive::<Float16Type>().value(i).to_f64()),
        DataType::Float32 => float(f64::from(a.as_primitive::<Float32Type>().value(i))),
        DataType::Float64 => float(a.as_primitive::<Float64Type>().value(i)),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => placeholder("bytes"),
        DataType::Decimal128(..) | DataType::Decimal256(..) => placeholder("Decimal"),
        DataType::Date32 => date(i64::from(a.as_primitive::<Date32Type>().value(i))),
        DataType::Date64 => date(a.as_primitive::<Date64Type>().value(i).div_euclid(86_400_000)),
        DataType::Time32(_) | DataType::Time64(TimeUnit::Nanosecond) => placeholder("time"),
        DataType::Time64(_) => {
            // pyarrow makes the time of the epoch plus the value: a `datetime` first.
            let us = i128::from(a.as_primitive::<Time64MicrosecondType>().value(i));
            match DATETIME_US.contains(&us) {
                true => placeholder("time"),
                false => Err(Fail::invalid(format!(
                    "is a time64[us] of {us} microseconds, beyond Python's datetime range: datasets cannot load it"
                ))),
            }
        }
        DataType::Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => a.as_primitive::<TimestampSecondType>().value(i),
                TimeUnit::Millisecond => a.as_primitive::<TimestampMillisecondType>().value(i),
                TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(i),
                TimeUnit::Nanosecond => a.as_primitive::<TimestampNanosecondType>().value(i),
            };
            timestamp(v, *unit, tz.as_deref())
        }
        DataType::Duration(unit) => {
            let v = match unit {
                TimeUnit::Second => a.as_primitive::<DurationSecondType>().value(i),
                TimeUnit::Millisecond => a.as_primitive::<DurationMillisecondType>().value(i),
                TimeUnit::Microsecond => a.as_primitive::<DurationMicrosecondType>().value(i),
                TimeUnit::Nanosecond => a.as_primitive::<DurationNanosecondType>().value(i),
            };
            duration(v, *unit)
        }
        DataType::FixedSizeList(field, _) => {
            let l = a.as_fixed_size_list();
            let start = l.value_offset_at(i);
            let end = start + l.value_length().max(0) as usize;
            items::<true>(ext_of(field), l.values().as_ref(), start, end)
        }
        // datasets cannot load list views, but pyarrow gives them as lists, and `format_batch` has
        // always read them so.
        DataType::ListView(field) => list_view(ext_of(field), a.as_list_view::<i32>(), i),
        DataType::LargeListView(field) => list_view(ext_of(field), a.as_list_view::<i64>(), i),
        DataType::Dictionary(..) => {
            let d = a.as_any_dictionary();
            let values = d.values().as_ref();
            match key(d.keys(), i).filter(|&k| k < values.len()) {
                Some(k) => value::<true>(Ext::None, values, k),
                None => Err(Fail::invalid("has a dictionary key out of bounds")),
            }
        }
        // Decimal32/64, maps, unions, intervals, run-end encoded arrays.
        other => Err(Fail::invalid(format!(
            "is of the Arrow type {other}, which datasets cannot load (\"does not have a datasets dtype equivalent\"); chatfmt does not guess how a template would see it"
        ))),
    }
}

/// A Python float: finite, or refused (a template would print NaN or Infinity, which JSON, and so
/// chatfmt, cannot carry).
fn float(v: f64) -> Result<Json, Fail> {
    Number::from_f64(v)
        .map(Json::Number)
        .ok_or_else(|| Fail::invalid(format!("is {}; replace or drop the value", non_finite(v))))
}

/// What a non-finite float is to Python, and why chatfmt refuses it.
fn non_finite(v: f64) -> String {
    let (python, json) = match () {
        _ if v.is_nan() => ("nan", "NaN"),
        _ if v > 0.0 => ("inf", "Infinity"),
        _ => ("-inf", "-Infinity"),
    };
    format!(
        "{json}: a template would print it as {python} (and `tojson` as {json}), which chatfmt's JSON values \
         cannot carry"
    )
}

/// Microseconds from the epoch that Python's `datetime` holds (years 1 to 9999).
const DATETIME_US: std::ops::RangeInclusive<i128> = -62_135_596_800_000_000..=253_402_300_799_999_999;
/// Days from the epoch that Python's `date` holds.
const DATE_DAYS: std::ops::RangeInclusive<i64> = -719_162..=2_932_896;
/// Microseconds that Python's `timedelta` holds (±999,999,999 days).
const TIMEDELTA_US: std::ops::RangeInclusive<i128> = -86_400_000_000 * 999_999_999..=86_400_000_000 * 1_000_000_000 - 1;

fn micros(v: i64, unit: TimeUnit) -> i128 {
    let v = i128::from(v);
    match unit {
        TimeUnit::Second => v * 1_000_000,
        TimeUnit::Millisecond => v * 1_000,
        TimeUnit::Microsecond => v,
        TimeUnit::Nanosecond => v.div_euclid(1_000),
    }
}

fn date(days: i64) -> Result<Json, Fail> {
    match DATE_DAYS.contains(&days) {
        true => Ok(Json::String("<date>".to_string())),
        false => Err(Fail::invalid(
            "is a date outside Python's date range (years 1 to 9999): datasets cannot load it",
        )),
    }
}

/// A timezone's fixed offset in microseconds: `±HH:MM`, `±HHMM`, `±HH`; 0 for `UTC` and named
/// zones (whose offset is not known here).
fn tz_offset_us(tz: &str) -> i128 {
    let (sign, rest) = match tz.as_bytes().first() {
        Some(b'+') => (1, &tz[1..]),
        Some(b'-') => (-1, &tz[1..]),
        _ => return 0,
    };
    let digits: String = rest.chars().filter(char::is_ascii_digit).collect();
    let (h, m) = match digits.len() {
        2 => (&digits[..2], "0"),
        4 => (&digits[..2], &digits[2..]),
        _ => return 0,
    };
    match (h.parse::<i128>(), m.parse::<i128>()) {
        (Ok(h), Ok(m)) => sign * (h * 3600 + m * 60) * 1_000_000,
        _ => 0,
    }
}

fn timestamp(v: i64, unit: TimeUnit, tz: Option<&str>) -> Result<Json, Fail> {
    if unit == TimeUnit::Nanosecond {
        // pyarrow gives a pandas Timestamp (NaT for the smallest value).
        let name = if v == i64::MIN { "<NaTType>" } else { "<Timestamp>" };
        return Ok(Json::String(name.to_string()));
    }
    let local = micros(v, unit) + tz.map_or(0, tz_offset_us);
    match DATETIME_US.contains(&local) {
        true => Ok(Json::String("<datetime>".to_string())),
        false => Err(Fail::invalid(
            "is a timestamp outside Python's datetime range (years 1 to 9999): datasets cannot load it",
        )),
    }
}

fn duration(v: i64, unit: TimeUnit) -> Result<Json, Fail> {
    if unit == TimeUnit::Nanosecond {
        let name = if v == i64::MIN { "<NaTType>" } else { "<Timedelta>" };
        return Ok(Json::String(name.to_string()));
    }
    match TIMEDELTA_US.contains(&micros(v, unit)) {
        true => Ok(Json::String("<timedelta>".to_string())),
        false => Err(Fail::invalid(
            "is a duration beyond Python's timedelta range (999999999 days): datasets cannot load it",
        )),
    }
}

/// The `i`-th key of a dictionary's keys (an integer array), when not negative.
fn key(keys: &dyn Array, i: usize) -> Option<usize> {
    let k: i128 = match keys.data_type() {
        DataType::Int8 => keys.as_primitive::<Int8Type>().value(i).into(),
        DataType::Int16 => keys.as_primitive::<Int16Type>().value(i).into(),
        DataType::Int32 => keys.as_primitive::<Int32Type>().value(i).into(),
        DataType::Int64 => keys.as_primitive::<Int64Type>().value(i).into(),
        DataType::UInt8 => keys.as_primitive::<UInt8Type>().value(i).into(),
        DataType::UInt16 => keys.as_primitive::<UInt16Type>().value(i).into(),
        DataType::UInt32 => keys.as_primitive::<UInt32Type>().value(i).into(),
        DataType::UInt64 => keys.as_primitive::<UInt64Type>().value(i).into(),
        _ => return None,
    };
    usize::try_from(k).ok()
}

/// JSON text decoded as datasets decodes its `Json` feature: pandas' vendored ujson
/// (`pd.io.json.ujson_loads`, `precise_float=False`), whose results differ from a correctly rounded
/// parser's. Numbers follow its algorithm exactly: integers accumulate in 64 bits (too big for
/// them is an error, though a wrapped 20-digit value passes as ujson lets it pass), a fraction keeps
/// 15 digits and is `(int + frac * 10^-digits) * sign`, an exponent multiplies by `pow(10, exp)`;
/// `NaN` is None (null). Its other leniencies are kept too: leading zeros, `1.`, a trailing comma in
/// an object, control characters in strings, duplicate keys (the last wins). What ujson turns into
/// something JSON cannot hold, or decodes inconsistently, is an error: infinities (and numbers that
/// overflow to them), lone surrogate escapes.
pub(crate) mod ujson {
    use super::non_finite;
    use serde_json::{Map, Number, Value as Json};

    /// ujson's `JSON_MAX_OBJECT_DEPTH`.
    const MAX_DEPTH: usize = 1024;
    /// ujson's `JSON_DOUBLE_MAX_DECIMALS`.
    const MAX_DECIMALS: usize = 15;
    /// ujson's `g_pow10`.
    const POW10: [f64; MAX_DECIMALS + 1] = [
        1.0,
        0.1,
        0.01,
        0.001,
        0.0001,
        0.00001,
        0.000001,
        0.0000001,
        0.00000001,
        0.000000001,
        0.0000000001,
        0.00000000001,
        0.000000000001,
        0.0000000000001,
        0.00000000000001,
        0.000000000000001,
    ];

    /// The value of `text`, or why datasets' decoder refuses it (or chatfmt cannot carry it).
    pub(crate) fn loads(text: &str) -> Result<Json, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            pos: 0,
            depth: 0,
        };
        let v = p.any()?;
        p.skip_ws();
        if p.pos < p.s.len() {
            return Err(p.error("trailing data"));
        }
        Ok(v)
    }

    struct Parser<'a> {
        s: &'a [u8],
        pos: usize,
        depth: usize,
    }

    impl Parser<'_> {
        /// The next byte; 0 at the end, as ujson reads its NUL-terminated buffer.
        fn peek(&self) -> u8 {
            self.s.get(self.pos).copied().unwrap_or(0)
        }

        fn error(&self, what: &str) -> String {
            format!("{what} at byte {}", self.pos)
        }

        fn skip_ws(&mut self) {
            while matches!(self.peek(), b' ' | b'\t' | b'\r' | b'\n') {
                self.pos += 1;
            }
        }

        fn any(&mut self) -> Result<Json, String> {
            self.skip_ws();
            match self.peek() {
                b'"' => self.string().map(Json::String),
                b'0'..=b'9' | b'-' | b'I' | b'N' => self.number(),
                b'[' => self.array(),
                b'{' => self.object(),
                b't' => self.word("true", Json::Bool(true)),
                b'f' => self.word("false", Json::Bool(false)),
                b'n' => self.word("null", Json::Null),
                _ => Err(self.error("expected a value")),
            }
        }

        fn word(&mut self, word: &str, v: Json) -> Result<Json, String> {
            match self.s[self.pos..].starts_with(word.as_bytes()) {
                true => {
                    self.pos += word.len();
                    Ok(v)
                }
                false => Err(self.error(&format!("unexpected character decoding '{word}'"))),
            }
        }

        fn enter(&mut self) -> Result<(), String> {
            self.depth += 1;
            match self.depth > MAX_DEPTH {
                true => Err(self.error("nested deeper than ujson's limit of 1024")),
                false => Ok(()),
            }
        }

        fn array(&mut self) -> Result<Json, String> {
            self.enter()?;
            self.pos += 1;
            let mut items = Vec::new();
            loop {
                self.skip_ws();
                if self.peek() == b']' && items.is_empty() {
                    self.pos += 1;
                    break;
                }
                items.push(self.any()?);
                if self.closes(b']', "an array")? {
                    break;
                }
            }
            self.depth -= 1;
            Ok(Json::Array(items))
        }

        fn object(&mut self) -> Result<Json, String> {
            self.enter()?;
            self.pos += 1;
            let mut obj = Map::new();
            loop {
                self.skip_ws();
                if self.peek() == b'}' {
                    // `{}`, or after a trailing comma, which ujson accepts in objects.
                    self.pos += 1;
                    break;
                }
                if self.peek() != b'"' {
                    return Err(self.error("an object key must be a string"));
                }
                let key = self.string()?;
                self.skip_ws();
                if self.peek() != b':' {
                    return Err(self.error("no ':' after an object key"));
                }
                self.pos += 1;
                let v = self.any()?;
                // As a Python dict: the last of duplicate keys wins, at the first one's place.
                obj.insert(key, v);
                if self.closes(b'}', "an object")? {
                    break;
                }
            }
            self.depth -= 1;
            Ok(Json::Object(obj))
        }

        /// After a member of an array or object: whether `close` ends it there (a comma goes on).
        fn closes(&mut self, close: u8, what: &str) -> Result<bool, String> {
            self.skip_ws();
            let at = self.peek();
            if at != close && at != b',' {
                return Err(self.error(&format!("unexpected character in {what}")));
            }
            self.pos += 1;
            Ok(at == close)
        }

        fn hex4(&mut self) -> Result<u32, String> {
            let digits = self
                .s
                .get(self.pos..self.pos + 4)
                .ok_or_else(|| self.error("unterminated \\u escape"))?;
            let mut v = 0u32;
            for &d in digits {
                let n = (d as char).to_digit(16).ok_or_else(|| self.error("bad \\u escape"))?;
                v = v * 16 + n;
            }
            self.pos += 4;
            Ok(v)
        }

        fn string(&mut self) -> Result<String, String> {
            self.pos += 1;
            let start = self.pos;
            // Without escapes, the text itself.
            while let Some(&b) = self.s.get(self.pos) {
                match b {
                    b'"' => {
                        let s = std::str::from_utf8(&self.s[start..self.pos]).map_err(|e| e.to_string())?;
                        self.pos += 1;
                        return Ok(s.to_owned());
                    }
                    b'\\' | 0 => break,
                    _ => self.pos += 1,
                }
            }
            let mut out: Vec<u8> = self.s[start..self.pos].to_vec();
            loop {
                match self.peek() {
                    0 => return Err(self.error("unterminated string")),
                    b'"' => {
                        self.pos += 1;
                        return String::from_utf8(out).map_err(|e| e.to_string());
                    }
                    b'\\' => {
                        self.pos += 1;
                        let c = match self.peek() {
                            b'\\' => '\\',
                            b'"' => '"',
                            b'/' => '/',
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'n' => '\n',
                            b'r' => '\r',
                            b't' => '\t',
                            b'u' => {
                                self.pos += 1;
                                let hi = self.hex4()?;
                                let code = match hi {
                                    0xd800..=0xdbff if self.s[self.pos..].starts_with(b"\\u") => {
                                        self.pos += 2;
                                        let lo = self.hex4()?;
                                        if !(0xdc00..=0xdfff).contains(&lo) {
                                            return Err(self.error("a lone surrogate \\u escape"));
                                        }
                                        0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                                    }
                                    0xd800..=0xdfff => return Err(self.error("a lone surrogate \\u escape")),
                                    _ => hi,
                                };
                                let c = char::from_u32(code).ok_or_else(|| self.error("bad \\u escape"))?;
                                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                                continue;
                            }
                            _ => return Err(self.error("unrecognized escape sequence")),
                        };
                        self.pos += 1;
                        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                    b => {
                        out.push(b);
                        self.pos += 1;
                    }
                }
            }
        }

        /// ujson's `decode_numeric`, step for step.
        fn number(&mut self) -> Result<Json, String> {
            let begin = self.pos;
            let mut negative = false;
            if self.peek() == b'N' {
                return self.word("NaN", Json::Null);
            }
            if self.peek() == b'-' {
                negative = true;
                self.pos += 1;
            }
            if self.peek() == b'I' {
                self.word("Infinity", Json::Null)?;
                return Err(non_finite(if negative { f64::NEG_INFINITY } else { f64::INFINITY }));
            }
            let mut int: u64 = 0;
            loop {
                match self.peek() {
                    d @ b'0'..=b'9' => {
                        let prev = int;
                        int = int.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
                        if !negative && prev > int {
                            return Err(self.error("integer too big for ujson (\"Value is too big!\")"));
                        }
                        if negative && int > 1 << 63 {
                            return Err(self.error("integer too small for ujson (\"Value is too small\")"));
                        }
                        self.pos += 1;
                    }
                    b'.' => {
                        self.pos += 1;
                        return self.fraction(begin, negative, int);
                    }
                    b'e' | b'E' => {
                        self.pos += 1;
                        return self.exponent(begin, negative, int, 0.0, 0);
                    }
                    _ => break,
                }
            }
            Ok(match (negative, int) {
                (false, v) if v >> 63 != 0 => Json::from(v),
                (false, v) => Json::from(v as i64),
                (true, v) => Json::from(v.wrapping_neg() as i64),
            })
        }

        fn fraction(&mut self, begin: usize, negative: bool, int: u64) -> Result<Json, String> {
            let mut frac = 0.0f64;
            let mut decimals = 0usize;
            loop {
                match self.peek() {
                    d @ b'0'..=b'9' => {
                        if decimals < MAX_DECIMALS {
                            frac = frac * 10.0 + f64::from(d - b'0');
                            decimals += 1;
                        }
                        self.pos += 1;
                    }
                    b'e' | b'E' => {
                        self.pos += 1;
                        return self.exponent(begin, negative, int, frac, decimals);
                    }
                    _ => return self.double(begin, create_double(negative, int, frac, decimals)),
                }
            }
        }

        fn exponent(
            &mut self,
            begin: usize,
            negative: bool,
            int: u64,
            frac: f64,
            decimals: usize,
        ) -> Result<Json, String> {
            let mut exp_sign = 1.0f64;
            match self.peek() {
                b'-' => {
                    exp_sign = -1.0;
                    self.pos += 1;
                }
                b'+' => self.pos += 1,
                _ => {}
            }
            let mut exp = 0.0f64;
            while let d @ b'0'..=b'9' = self.peek() {
                exp = exp * 10.0 + f64::from(d - b'0');
                self.pos += 1;
            }
            let v = create_double(negative, int, frac, decimals) * 10f64.powf(exp * exp_sign);
            self.double(begin, v)
        }

        fn double(&self, begin: usize, v: f64) -> Result<Json, String> {
            Number::from_f64(v).map(Json::Number).ok_or_else(|| {
                let text = String::from_utf8_lossy(&self.s[begin..self.pos]);
                format!("the number {text} decodes to {}", non_finite(v))
            })
        }
    }

    /// ujson's `createDouble`.
    fn create_double(negative: bool, int: u64, frac: f64, decimals: usize) -> f64 {
        let sign = if negative { -1.0 } else { 1.0 };
        (int as f64 + frac * POW10[decimals]) * sign
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Int64Builder, MapBuilder, StringBuilder};
    use arrow_array::{
        ArrayRef, BinaryArray, Date32Array, Date64Array, Decimal128Array, DictionaryArray, DurationMillisecondArray,
        DurationNanosecondArray, FixedSizeBinaryArray, Float16Array, Float32Array, Float64Array, LargeStringArray,
        ListArray, RecordBatch, StringArray, StringViewArray, StructArray, Time32SecondArray, Time64MicrosecondArray,
        TimestampMicrosecondArray, TimestampNanosecondArray, TimestampSecondArray,
    };
    use std::sync::Arc;

    /// Every row converted directly equals what arrow_json writes for it.
    fn same_as_arrow_json(batch: &RecordBatch) {
        for i in 0..batch.num_rows() {
            let direct = row(batch, i).expect("direct conversion");
            let via_json = crate::input::batch_to_json(&batch.slice(i, 1))
                .expect("arrow_json")
                .pop();
            assert_eq!(Some(direct), via_json, "row {i}");
        }
    }

    #[test]
    fn nested_rows_match_arrow_json() {
        let rows = [
            r#"{"messages": [{"role": "user", "content": "héllo", "n": 3, "ok": true}], "tools": null}"#,
            r#"{"messages": [{"role": "assistant", "content": null, "n": -7, "ok": false}, null], "tools": "[]"}"#,
            r#"{"messages": null, "tools": "x"}"#,
            r#"{"messages": [], "tools": null}"#,
        ];
        let schema = Arc::new(arrow_schema::Schema::new(vec![
            arrow_schema::Field::new(
                "messages",
                DataType::List(Arc::new(arrow_schema::Field::new(
                    "item",
                    DataType::Struct(
                        vec![
                            arrow_schema::Field::new("role", DataType::Utf8, true),
                            arrow_schema::Field::new("content", DataType::LargeUtf8, true),
                            arrow_schema::Field::new("n", DataType::Int64, true),
                            arrow_schema::Field::new("ok", DataType::Boolean, true),
                        ]
                        .into(),
                    ),
                    true,
                ))),
                true,
            ),
            arrow_schema::Field::new("tools", DataType::Utf8View, true),
        ]));
        let mut decoder = arrow_json::ReaderBuilder::new(schema).build_decoder().expect("decoder");
        decoder.decode(rows.join("\n").as_bytes()).expect("decode");
        let batch = decoder.flush().expect("flush").expect("rows");
        same_as_arrow_json(&batch);
        same_as_arrow_json(&batch.slice(1, 3));
    }

    #[test]
    fn floats_have_no_direct_conversion() {
        let column: ArrayRef = Arc::new(Float64Array::from(vec![0.1]));
        let batch = RecordBatch::try_from_iter([("x", column)]).expect("batch");
        assert_eq!(row(&batch, 0), None);
    }

    fn json_field(name: &str, t: DataType) -> Field {
        let metadata = [(EXTENSION_NAME.to_string(), JSON_EXTENSION.to_string())];
        Field::new(name, t, true).with_metadata(metadata.into_iter().collect::<std::collections::HashMap<_, _>>())
    }

    fn batch_of(fields: Vec<Field>, columns: Vec<ArrayRef>) -> RecordBatch {
        RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns).expect("batch")
    }

    /// A list array of one-element lists (row `i` holds `values[i]`), null where `valid` is false.
    fn lists(item: Field, values: ArrayRef, valid: Option<Vec<bool>>) -> ArrayRef {
        let n = values.len() as i32;
        let offsets = arrow_buffer::OffsetBuffer::new((0..=n).collect::<Vec<i32>>().into());
        let nulls = valid.map(arrow_buffer::NullBuffer::from);
        Arc::new(ListArray::try_new(Arc::new(item), offsets, values, nulls).expect("list"))
    }

    fn struct_of(fields: Vec<Field>, columns: Vec<ArrayRef>) -> ArrayRef {
        Arc::new(StructArray::try_new(fields.into(), columns, None).expect("struct"))
    }

    fn template(batch: &RecordBatch, i: usize) -> Result<Json, String> {
        template_row(batch, i).map_err(|e| e.to_string())
    }

    /// `x` of a one-column batch, as a template sees it.
    fn template_x(column: ArrayRef, i: usize) -> Result<Json, String> {
        let batch = RecordBatch::try_from_iter([("x", column)]).expect("batch");
        template(&batch, i).map(|mut row| row["x"].take())
    }

    #[test]
    fn json_extension_values_are_decoded_at_any_level() {
        // messages: list<struct<role, tool_calls: list<struct<function: struct<name, arguments: json>>>>>,
        // meta: json, notes: list<json>.
        let arguments = json_field("arguments", DataType::Utf8);
        let name = Field::new("name", DataType::Utf8, true);
        let function_t = DataType::Struct(vec![name.clone(), arguments.clone()].into());
        let function = struct_of(
            vec![name, arguments],
            vec![
                Arc::new(StringArray::from(vec![Some("f"), Some("g")])),
                Arc::new(StringArray::from(vec![
                    Some(r#"{"city": "Paris", "k": 3, "lat": 48.85}"#),
                    None,
                ])),
            ],
        );
        let call_t = DataType::Struct(vec![Field::new("function", function_t.clone(), true)].into());
        let calls = struct_of(vec![Field::new("function", function_t, true)], vec![function]);
        let tool_calls = lists(Field::new("item", call_t, true), calls, None);
        let role = Field::new("role", DataType::Utf8, true);
        let tool_calls_f = Field::new("tool_calls", tool_calls.data_type().clone(), true);
        let message = struct_of(
            vec![role.clone(), tool_calls_f.clone()],
            vec![Arc::new(StringArray::from(vec!["assistant", "assistant"])), tool_calls],
        );
        let message_t = DataType::Struct(vec![role, tool_calls_f].into());
        let messages = lists(Field::new("item", message_t, true), message, None);
        let meta: ArrayRef = Arc::new(LargeStringArray::from(vec![Some(r#"[1, "two", null]"#), Some("NaN")]));
        let notes = lists(
            json_field("item", DataType::Utf8View),
            Arc::new(StringViewArray::from(vec![
                Some(r#"{"b": 0, "a": 1, "b": 2}"#),
                Some("x"),
            ])),
            Some(vec![true, false]),
        );
        let batch = batch_of(
            vec![
                Field::new("messages", messages.data_type().clone(), true),
                json_field("meta", DataType::LargeUtf8),
                Field::new("notes", notes.data_type().clone(), true),
            ],
            vec![messages, meta, notes],
        );
        // Expected from the Python reference: ds[i] of the same rows (Json decoded by ujson_loads,
        // which reads NaN as None and keeps the first place of a duplicate key with the last value).
        let expected = serde_json::json!({
            "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"city": "Paris", "k": 3, "lat": 48.85}}}]}],
            "meta": [1, "two", null],
            "notes": [{"b": 2, "a": 1}],
        });
        assert_eq!(template(&batch, 0), Ok(expected));
        let expected = serde_json::json!({
            "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "g", "arguments": null}}]}],
            "meta": null,
            "notes": null,
        });
        assert_eq!(template(&batch, 1), Ok(expected));
        // The output conversion keeps the JSON text.
        assert_eq!(row(&batch, 0).expect("row")["meta"], Json::from(r#"[1, "two", null]"#));
        // JSON a template cannot be given names its place.
        let bad: ArrayRef = Arc::new(StringArray::from(vec![r#"{"a": 1e400}"#]));
        let batch = batch_of(vec![json_field("meta", DataType::Utf8)], vec![bad]);
        let e = template(&batch, 0).expect_err("infinity");
        assert!(
            e.starts_with("meta is a datasets Json value") && e.contains("1e400 decodes to Infinity"),
            "{e}"
        );
    }

    /// Expected values from the Python reference: `pd.io.json.ujson_loads(text)`, which datasets'
    /// `Json.decode_example` calls (pandas' ujson, precise_float=False).
    #[test]
    fn json_numbers_decode_as_ujson_does() {
        let floats = [
            ("0.001099860412068665", 0.001099860412068),
            ("1.0270784629388736e-273", 1.027078462938873e-273),
            ("1.26753247473822E-38", 1.2675324747382198e-38),
            ("1e5", 100000.0),
            ("1.", 1.0),
            ("-0.0", -0.0),
            ("5e-324", 0.0),
            ("1.7976931348623157e308", 1.7976931348623151e308),
            ("12345678901234567890.5", 1.2345678901234567e19),
            ("0.1", 0.1),
            ("48.8499984741", 48.8499984741),
        ];
        for (text, want) in floats {
            let got = ujson::loads(text).expect(text);
            assert!(got.is_f64(), "{text}");
            let got = got.as_f64().expect(text);
            assert_eq!(got.to_bits(), f64::to_bits(want), "{text}: {got:?} != {want:?}");
        }
        let ints = [
            ("27670116110564327424", Json::from(9223372036854775808u64)),
            ("18446744073709551615", Json::from(u64::MAX)),
            ("-9223372036854775808", Json::from(i64::MIN)),
            ("01", Json::from(1)),
            ("-0", Json::from(0)),
            ("-", Json::from(0)),
            ("NaN", Json::Null),
        ];
        for (text, want) in ints {
            assert_eq!(ujson::loads(text).as_ref(), Ok(&want), "{text}");
        }
        assert_eq!(
            ujson::loads(r#"{"a": 1, "b": 2, "a": 3,}"#),
            Ok(serde_json::json!({"a": 3, "b": 2}))
        );
        let refused = [
            "18446744073709551616",
            "-9223372036854775809",
            "[1,]",
            r#""\x41""#,
            "",
            "3 x",
            "Infinity",
            "1e400",
            r#""\ud800""#,
        ];
        for text in refused {
            assert!(ujson::loads(text).is_err(), "{text}");
        }
    }

    /// Expected values from the Python reference: `float(np.float32(v))`, `float(np.float16(v))`.
    #[test]
    fn floats_widen_and_non_finite_values_refuse_the_row() {
        let f32s: ArrayRef = Arc::new(Float32Array::from(vec![0.1, 48.85, 3.4e38, f32::NAN]));
        assert_eq!(template_x(f32s.clone(), 0), Ok(Json::from(0.10000000149011612)));
        assert_eq!(template_x(f32s.clone(), 1), Ok(Json::from(48.849998474121094)));
        assert_eq!(template_x(f32s.clone(), 2), Ok(Json::from(3.3999999521443642e38)));
        let e = template_x(f32s, 3).expect_err("NaN");
        assert!(e.starts_with("x is NaN: a template would print it as nan"), "{e}");
        // f16 0.1 is 0x2e66.
        let bits = arrow_buffer::ScalarBuffer::new(arrow_buffer::Buffer::from_vec(vec![0x2e66u16]), 0, 1);
        let f16s: ArrayRef = Arc::new(Float16Array::new(bits, None));
        assert_eq!(template_x(f16s, 0), Ok(Json::from(0.0999755859375)));
        let f64s: ArrayRef = Arc::new(Float64Array::from(vec![1e16, 1e-7, -0.0, 1e22, f64::NEG_INFINITY]));
        for (i, v) in [1e16, 1e-7, -0.0, 1e22].into_iter().enumerate() {
            let got = template_x(f64s.clone(), i).expect("finite").as_f64().expect("float");
            assert_eq!(got.to_bits(), f64::to_bits(v));
        }
        let e = template_x(f64s, 4).expect_err("-inf");
        assert!(e.starts_with("x is -Infinity"), "{e}");
    }

    /// Expected values from the Python reference: `_plain_template_data(ds[i]["x"])` for a
    /// `datasets.Dataset` of the same Arrow array (and its failures for values out of range).
    #[test]
    fn other_types_are_placeholders_as_transformers_makes_them() {
        let s = |v: &str| Ok(Json::from(v));
        let utc: ArrayRef = Arc::new(TimestampSecondArray::from(vec![0]).with_timezone("UTC"));
        assert_eq!(template_x(utc, 0), s("<datetime>"));
        let ns: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![0, i64::MIN]));
        assert_eq!(template_x(ns.clone(), 0), s("<Timestamp>"));
        assert_eq!(template_x(ns, 1), s("<NaTType>"));
        let us: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![
            253402300799999999,
            253402300800000000,
        ]));
        assert_eq!(template_x(us.clone(), 0), s("<datetime>"));
        let e = template_x(us, 1).expect_err("year 10000");
        assert!(e.contains("outside Python's datetime range"), "{e}");
        let offset: ArrayRef = Arc::new(
            TimestampMicrosecondArray::from(vec![
                253402300799999999 - 3_600_000_000,
                253402300800000000 - 3_600_000_000,
            ])
            .with_timezone("+01:00"),
        );
        assert_eq!(template_x(offset.clone(), 0), s("<datetime>"));
        assert!(template_x(offset, 1).is_err());
        let dates: ArrayRef = Arc::new(Date32Array::from(vec![-719162, 2932897]));
        assert_eq!(template_x(dates.clone(), 0), s("<date>"));
        assert!(template_x(dates, 1).is_err());
        let dates64: ArrayRef = Arc::new(Date64Array::from(vec![86_400_000 * 3 + 5]));
        assert_eq!(template_x(dates64, 0), s("<date>"));
        let t32: ArrayRef = Arc::new(Time32SecondArray::from(vec![-1]));
        assert_eq!(template_x(t32, 0), s("<time>"));
        let t64: ArrayRef = Arc::new(Time64MicrosecondArray::from(vec![253402300800000000]));
        assert!(template_x(t64, 0).is_err());
        let d: ArrayRef = Arc::new(DurationMillisecondArray::from(vec![
            -999999999 * 86400000,
            -999999999 * 86400000 - 1,
        ]));
        assert_eq!(template_x(d.clone(), 0), s("<timedelta>"));
        assert!(template_x(d, 1).expect_err("too long").contains("timedelta"));
        let dns: ArrayRef = Arc::new(DurationNanosecondArray::from(vec![5]));
        assert_eq!(template_x(dns, 0), s("<Timedelta>"));
        let bin: ArrayRef = Arc::new(BinaryArray::from(vec![b"\x00ab".as_slice()]));
        assert_eq!(template_x(bin, 0), s("<bytes>"));
        let fixed: ArrayRef = Arc::new(FixedSizeBinaryArray::try_from_iter([b"ab"].into_iter()).expect("fixed"));
        assert_eq!(template_x(fixed, 0), s("<bytes>"));
        let dec: ArrayRef = Arc::new(
            Decimal128Array::from(vec![1250])
                .with_precision_and_scale(10, 3)
                .expect("decimal"),
        );
        assert_eq!(template_x(dec, 0), s("<Decimal>"));
        let dict: ArrayRef = Arc::new(
            vec![Some("a"), None, Some("b")]
                .into_iter()
                .collect::<DictionaryArray<Int8Type>>(),
        );
        assert_eq!(template_x(dict.clone(), 0), s("a"));
        assert_eq!(template_x(dict.clone(), 1), Ok(Json::Null));
        assert_eq!(template_x(dict, 2), s("b"));
    }

    #[test]
    fn maps_refuse_the_row_naming_the_value() {
        // datasets: "Arrow type map<string, int64> does not have a datasets dtype equivalent."
        let mut b = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
        b.keys().append_value("a");
        b.values().append_value(1);
        b.append(true).expect("map");
        let map: ArrayRef = Arc::new(b.finish());
        let m = Field::new("m", map.data_type().clone(), true);
        let item = Field::new("item", DataType::Struct(vec![m.clone()].into()), true);
        let messages = lists(item, struct_of(vec![m], vec![map]), None);
        let batch = batch_of(
            vec![Field::new("messages", messages.data_type().clone(), true)],
            vec![messages],
        );
        let e = template(&batch, 0).expect_err("map");
        assert!(e.starts_with("messages[0].m is of the Arrow type Map("), "{e}");
        assert!(e.contains("datasets cannot load"), "{e}");
    }
}
