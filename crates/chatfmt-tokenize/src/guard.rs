//! Calls into `tokenizers` that cannot crash the caller: a panic inside the library (its 1.0
//! release candidate has some on unusual inputs, such as a `single_word` added token after a
//! normalizer that writes multi-byte characters) becomes an error of this crate, and its report on
//! stderr is left out (other panics are reported as before).

use crate::{Error, ErrorKind};
use std::cell::Cell;
use std::fmt::Display;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Whether this thread runs a guarded call (whose panic the hook does not report).
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a call of the `tokenizers` pipeline); its failure or panic is an error of `kind`,
/// `what` saying what failed.
pub(crate) fn guarded<T, E: Display>(
    kind: ErrorKind,
    what: &str,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, Error> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let outer = GUARDED.with(|g| g.replace(true));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(outer));
    match r {
        Ok(r) => r.map_err(|e| Error::new(kind, format!("{what}: {e}"))),
        Err(panic) => {
            let why = (panic.downcast_ref::<&str>().copied())
                .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("no message");
            Err(Error::new(
                kind,
                format!("{what}: the tokenizers library stopped on this input ({why})"),
            ))
        }
    }
}
