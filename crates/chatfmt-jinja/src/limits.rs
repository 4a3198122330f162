//! Resource limits for untrusted templates: evaluation steps, wall-clock time, recursion, output
//! size and the size of values built while rendering.

use crate::error::{err, Error, Result};
use std::cell::Cell;
use std::time::{Duration, Instant};

/// Resource limits for rendering untrusted templates. The defaults stop a hostile template in well
/// under a second; real chat templates stay within them except on conversations of thousands of
/// messages with templates that rescan the conversation per message (KNOWN_DIFFERENCES.md, "Step
/// budget on very long conversations").
#[derive(Debug, Clone)]
pub struct Limits {
    /// Evaluation steps. A step is the unit of work, some tens of nanoseconds: each statement run,
    /// loop iteration, test and item of a literal is one, each call of a filter, method, function
    /// or macro four, and built-ins charge in proportion to what they touch: one step per element
    /// read or hashed (`unique`, `join`, `in` on a list, dict methods), per comparison of a sort
    /// (about n log2 n), per 16 bytes of a string scanned or built (`replace`, `split`, `in` on a
    /// string, `tojson`, `format`, any string a filter or method returns), per 256 bytes of a
    /// string copied or counted whole (`+`, `~`, `*`, `length`), per 8 values copied or built
    /// (`list`, `+` and `*` on lists, iterating a string, a JSON array or a range), and per item
    /// of lists, tuples and dicts compared (`==`, `<`). The charge is made before the work, so a render over budget stops before doing
    /// it. The default stops a hostile template within a second or two.
    pub max_steps: u64,
    /// Wall-clock time a render may take, checked every few thousand steps; `None` (the default)
    /// sets no deadline.
    pub max_duration: Option<Duration>,
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
            max_steps: 20_000_000,
            max_duration: None,
            max_recursion: 200,
            max_output_bytes: 256 << 20,
            max_value_size: 16 << 20,
        }
    }
}

thread_local! {
    static MAX_VALUE_SIZE: Cell<usize> = const { Cell::new(16 << 20) };
}

/// Sets the value-size limit for renders on this thread (done per render by [`BudgetScope`]).
fn set_max_value_size(n: usize) {
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
fn steps_exceeded(max: u64) -> Error {
    err!(LimitExceeded, "{} ({max}) steps", crate::error::STEPS_EXCEEDED)
}

/// The error for running out of time.
fn duration_exceeded(max: Duration) -> Error {
    err!(
        LimitExceeded,
        "the render took longer than Limits::max_duration ({max:?})"
    )
}

/// Steps between two reads of the clock when a render has a deadline.
const CLOCK_INTERVAL: u64 = 4096;

/// The step budget of the render running on this thread. Built-ins charge it wherever they are,
/// without a handle on the evaluator.
struct Budget {
    used: Cell<u64>,
    /// The count past which [`charge`] takes its slow path: the step limit, or the next clock read.
    next_check: Cell<u64>,
    max: Cell<u64>,
    deadline: Cell<Option<(Instant, Duration)>>,
}

thread_local! {
    static BUDGET: Budget = const {
        Budget {
            used: Cell::new(0),
            next_check: Cell::new(u64::MAX),
            max: Cell::new(u64::MAX),
            deadline: Cell::new(None),
        }
    };
}

/// Charges `n` steps of work to the render on this thread, failing when that exceeds
/// [`Limits::max_steps`] or the render is past [`Limits::max_duration`].
#[inline]
pub(crate) fn charge(n: u64) -> Result<()> {
    BUDGET.with(|b| {
        let used = b.used.get().saturating_add(n);
        b.used.set(used);
        if used > b.next_check.get() {
            return over_check(b, used);
        }
        Ok(())
    })
}

/// Charges the steps of `n` items of work (see [`charge`]).
#[inline]
pub(crate) fn charge_items(n: usize) -> Result<()> {
    charge(n as u64)
}

/// Bytes of string work that cost one step.
pub(crate) const BYTES_PER_STEP: usize = 16;

/// Charges the steps of scanning or building `n` bytes of strings (see [`charge`]).
#[inline]
pub(crate) fn charge_bytes(n: usize) -> Result<()> {
    charge((n / BYTES_PER_STEP) as u64)
}

/// The steps of a call of a filter, method, function or macro (binding its arguments, building
/// its result), besides what it charges for its work.
pub(crate) const CALL_STEPS: u64 = 4;

/// Bytes of plain string copying (concatenation, repetition) that cost one step.
pub(crate) const COPY_BYTES_PER_STEP: usize = 256;

/// Charges the steps of copying `n` bytes of strings whole (see [`charge`]).
#[inline]
pub(crate) fn charge_copy(n: usize) -> Result<()> {
    charge((n / COPY_BYTES_PER_STEP) as u64)
}

/// Cheap values built or copied (a JSON array's items, a string's characters, a range's numbers,
/// the items of `list`, `+` and `*` on lists) that cost one step.
pub(crate) const VALUES_PER_STEP: usize = 8;

/// Charges the steps of building `n` cheap values (see [`charge`]).
#[inline]
pub(crate) fn charge_values(n: usize) -> Result<()> {
    charge((n / VALUES_PER_STEP) as u64)
}

/// Charges `n` steps where no error can be returned (comparisons, lookups): the next charge fails
/// if the budget is exceeded, so the work is done once, then the render stops.
#[inline]
pub(crate) fn charge_later(n: u64) {
    BUDGET.with(|b| b.used.set(b.used.get().saturating_add(n)));
}

/// Charges the comparisons of sorting `n` items: about n log2 n.
pub(crate) fn charge_sort(n: usize) -> Result<()> {
    let log = usize::BITS - n.leading_zeros();
    charge((n as u64).saturating_mul(u64::from(log)))
}

/// The slow path of [`charge`]: the step limit, then the clock.
#[cold]
fn over_check(b: &Budget, used: u64) -> Result<()> {
    let max = b.max.get();
    if used > max {
        return Err(steps_exceeded(max));
    }
    match b.deadline.get() {
        Some((deadline, limit)) => {
            if Instant::now() >= deadline {
                return Err(duration_exceeded(limit));
            }
            b.next_check.set(max.min(used.saturating_add(CLOCK_INTERVAL)));
        }
        None => b.next_check.set(max),
    }
    Ok(())
}

/// The budget of one render on this thread; the previous budget (of an enclosing render) comes
/// back when it is dropped.
pub(crate) struct BudgetScope {
    saved: (u64, u64, u64, Option<(Instant, Duration)>, usize),
}

impl BudgetScope {
    /// Starts counting a render's steps against `limits`.
    #[inline]
    pub(crate) fn start(limits: &Limits) -> BudgetScope {
        let deadline = limits
            .max_duration
            .and_then(|d| Instant::now().checked_add(d).map(|at| (at, d)));
        let max = limits.max_steps;
        let saved = BUDGET.with(|b| {
            let saved = (
                b.used.get(),
                b.next_check.get(),
                b.max.get(),
                b.deadline.get(),
                MAX_VALUE_SIZE.with(Cell::get),
            );
            b.used.set(0);
            b.max.set(max);
            b.deadline.set(deadline);
            b.next_check.set(if deadline.is_some() {
                max.min(CLOCK_INTERVAL)
            } else {
                max
            });
            saved
        });
        set_max_value_size(limits.max_value_size);
        BudgetScope { saved }
    }

    /// The steps charged so far.
    pub(crate) fn used(&self) -> u64 {
        BUDGET.with(|b| b.used.get())
    }

    /// Sets the steps used back to `used` (a count [`used`](Self::used) gave earlier in this scope).
    pub(crate) fn rewind(&self, used: u64) {
        BUDGET.with(|b| b.used.set(used))
    }
}

impl Drop for BudgetScope {
    fn drop(&mut self) {
        let (used, next_check, max, deadline, value_size) = self.saved;
        set_max_value_size(value_size);
        BUDGET.with(|b| {
            b.used.set(used);
            b.next_check.set(next_check);
            b.max.set(max);
            b.deadline.set(deadline);
        });
    }
}

/// The error for too much output.
pub(crate) fn output_exceeded(max: usize) -> Error {
    err!(LimitExceeded, "the output grew beyond Limits::max_output_bytes ({max})")
}

/// The deepest nesting of lists, tuples and dicts a template may build.
pub const MAX_VALUE_NESTING: usize = 500;

/// Deep recursion (nested expressions, macros, recursive loops) grows the stack on the heap when
/// less than this much is left, so no template can overflow the thread's stack.
pub(crate) const STACK_RED_ZONE: usize = 256 * 1024;
/// The size of each extra stack segment.
pub(crate) const STACK_SEGMENT: usize = 1024 * 1024;

/// Runs a recursive step, growing the stack on the heap when it runs low.
pub(crate) fn grow_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, f)
}
