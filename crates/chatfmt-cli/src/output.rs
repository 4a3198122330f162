//! Writing results to stdout without panicking when the reader goes away (`| head`).

use std::io::Write;

/// Writes `text` to stdout; a closed pipe ends the output quietly.
pub fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
