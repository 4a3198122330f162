//! Calls into libraries that cannot crash the caller: a panic inside one (a tokenizer pipeline on an
//! unusual input, an Arrow or Parquet reader on a corrupt file) is given back as its message, and its
//! report on stderr is left out (other panics are reported as before).

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Whether this thread runs a guarded call (whose panic the hook does not report).
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`; a panic inside it is `Err` with the panic's message.
pub fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
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
    r.map_err(|panic| {
        (panic.downcast_ref::<&str>().copied())
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("no message")
            .to_string()
    })
}
