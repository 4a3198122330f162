//! Resource limits for untrusted templates: evaluation steps, recursion, output size and the size
//! of values built while rendering.

use crate::error::{err, Error, Result};
use std::cell::Cell;

/// Resource limits for rendering untrusted templates. The defaults never trip on real chat
/// templates and stop a hostile one in well under a second.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Evaluation steps (statements run and loop iterations).
    pub max_steps: u64,
    /// Nesting depth of macro calls and recursive loops (CPython's recursion limit stops Jinja2
    /// at about 200 nested macro calls; past this chatfmt raises `RecursionError` too).
    pub max_recursion: usize,
    /// Bytes of rendered output, captured blocks included.
    pub max_output_bytes: usize,
    /// Bytes of one string, or items of one list, built while rendering.
    pub max_value_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: 5_000_000,
            max_recursion: 200,
            max_output_bytes: 256 << 20,
            max_value_size: 16 << 20,
        }
    }
}

thread_local! {
    static MAX_VALUE_SIZE: Cell<usize> = const { Cell::new(16 << 20) };
}

/// Sets the value-size limit for renders on this thread (the evaluator does it per render).
pub(crate) fn set_max_value_size(n: usize) {
    MAX_VALUE_SIZE.with(|m| m.set(n));
}

/// Fails when a string of `bytes` bytes (or a list of that many items) would exceed the limit.
pub(crate) fn check_value_size(bytes: usize) -> Result<()> {
    let max = MAX_VALUE_SIZE.with(Cell::get);
    if bytes > max {
        return Err(err!(
            LimitExceeded,
            "a value of {bytes} bytes or items exceeds Limits::max_value_size ({max})"
        ));
    }
    Ok(())
}

/// The error for running out of steps.
pub(crate) fn steps_exceeded(max: u64) -> Error {
    err!(
        LimitExceeded,
        "the render took more than Limits::max_steps ({max}) steps"
    )
}

/// The error for too much output.
pub(crate) fn output_exceeded(max: usize) -> Error {
    err!(LimitExceeded, "the output grew beyond Limits::max_output_bytes ({max})")
}

/// The deepest nesting of lists, tuples and dicts a template may build.
pub const MAX_VALUE_NESTING: usize = 500;

/// Fails when putting `items` into a new container would nest values deeper than the limit.
pub(crate) fn check_nesting<'v, 'a: 'v>(items: impl IntoIterator<Item = &'v crate::value::Value<'a>>) -> Result<()> {
    for item in items {
        if nesting(item, MAX_VALUE_NESTING) >= MAX_VALUE_NESTING {
            return Err(err!(
                LimitExceeded,
                "values nested deeper than {MAX_VALUE_NESTING} levels"
            ));
        }
    }
    Ok(())
}

/// How deeply `v` nests containers, counting no further than `limit`.
fn nesting(v: &crate::value::Value, limit: usize) -> usize {
    use crate::value::Value;
    if limit == 0 {
        return 0;
    }
    match v {
        Value::List(items) | Value::Tuple(items) | Value::Iter(items) => {
            1 + items.iter().map(|i| nesting(i, limit - 1)).max().unwrap_or(0)
        }
        Value::Dict(d) => 1 + d.entries.iter().map(|(_, i)| nesting(i, limit - 1)).max().unwrap_or(0),
        _ => 0,
    }
}
