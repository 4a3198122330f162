//! Calls into `tokenizers` that cannot crash the caller: a panic inside the library (its 1.0
//! release candidate has some on unusual inputs, such as a `single_word` added token after a
//! normalizer that writes multi-byte characters) becomes an error of this crate, and its report on
//! stderr is left out (other panics are reported as before).

use crate::{Error, ErrorKind};
use std::fmt::Display;

/// Runs `f` (a call of the `tokenizers` pipeline); its failure or panic is an error of `kind`,
/// `what` saying what failed.
pub(crate) fn guarded<T, E: Display>(
    kind: ErrorKind,
    what: &str,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, Error> {
    match chatfmt::guard::quietly(f) {
        Ok(r) => r.map_err(|e| Error::new(kind, format!("{what}: {e}"))),
        Err(why) => Err(Error::new(
            kind,
            format!("{what}: the tokenizers library stopped on this input ({why})"),
        )),
    }
}
