//! Python slicing and indexing of strings (code points).

use super::PyError;
use std::borrow::Cow;

/// Python's `slice(start, stop, step).indices(length)` plus the resulting
/// length, exactly as `PySlice_Unpack` + `PySlice_AdjustIndices` compute
/// them: `(start, stop, step, count)`. `step == Some(0)` is
/// `ValueError: slice step cannot be zero`. Works for any sequence length.
pub fn slice_indices(
    length: i64,
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
) -> Result<(i64, i64, i64, i64), PyError> {
    let step = match step {
        None => 1,
        Some(0) => return Err(PyError::value("slice step cannot be zero")),
        Some(s) => s.max(-i64::MAX),
    };
    let neg = step < 0;
    let clamp = |v: Option<i64>, default: i64| -> i64 {
        let mut v = v.unwrap_or(default);
        if v < 0 {
            v = v.saturating_add(length);
            if v < 0 {
                v = if neg { -1 } else { 0 };
            }
        } else if v >= length {
            v = if neg { length - 1 } else { length };
        }
        v
    };
    let start = clamp(start, if neg { i64::MAX } else { 0 });
    let stop = clamp(stop, if neg { i64::MIN } else { i64::MAX });
    let count = if neg {
        if stop < start {
            (start - stop - 1) / (-step) + 1
        } else {
            0
        }
    } else if start < stop {
        (stop - start - 1) / step + 1
    } else {
        0
    };
    Ok((start, stop, step, count))
}

/// Byte offset of code point `i` of `s` (`s.len()` past the end).
fn byte_at(s: &str, i: i64) -> usize {
    if i <= 0 {
        return 0;
    }
    s.char_indices().nth(i as usize).map_or(s.len(), |(b, _)| b)
}

/// Python `s[start:stop:step]`. With step 1 (or `None`) the result borrows
/// a slice of `s`; otherwise it is a new string.
pub fn str_slice<'a>(
    s: &'a str,
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
) -> Result<Cow<'a, str>, PyError> {
    let len = s.chars().count() as i64;
    let (start, stop, step, count) = slice_indices(len, start, stop, step)?;
    if count == 0 {
        return Ok(Cow::Borrowed(&s[..0]));
    }
    if step == 1 {
        return Ok(Cow::Borrowed(&s[byte_at(s, start)..byte_at(s, stop)]));
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(count as usize);
    let mut i = start;
    for _ in 0..count {
        if let Some(&c) = usize::try_from(i).ok().and_then(|i| chars.get(i)) {
            out.push(c);
        }
        i = i.saturating_add(step);
    }
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_one_borrows() {
        let s = "héllo";
        let Ok(Cow::Borrowed(b)) = str_slice(s, Some(1), Some(3), None) else {
            panic!("step 1 must borrow");
        };
        assert_eq!(b.as_ptr() as usize - s.as_ptr() as usize, 1);
    }

    #[test]
    fn indices_of_extremes() {
        assert_eq!(slice_indices(5, None, None, Some(-1)), Ok((4, -1, -1, 5)));
        assert_eq!(
            slice_indices(5, Some(i64::MIN), Some(i64::MAX), Some(i64::MIN)),
            Ok((-1, 4, -i64::MAX, 0))
        );
        assert_eq!(slice_indices(0, None, None, None), Ok((0, 0, 1, 0)));
    }
}
