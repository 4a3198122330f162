//! Runners for the conformance kits: they replay the reference cases through chatfmt and
//! count what matches. The `chatfmt conformance` command and the test suite both use them.

pub mod fastchat;
pub mod hf;
pub mod jinja;
mod known;
pub mod tokens;

pub use known::KnownDifferences;

use serde::Serialize;
use std::path::Path;

/// One case that did not match.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// The case id (probe id, or template + scenario).
    pub id: String,
    /// What kind of mismatch (`output_mismatch`, `wrong_error_class`, ...).
    pub kind: String,
    /// The reference result.
    pub expected: String,
    /// chatfmt's result.
    pub actual: String,
}

/// What kind of problem stopped a kit from being replayed.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A kit file could not be read (missing, permissions).
    Io,
    /// A kit file is not what the kit format says (JSON syntax, missing fields, unknown names).
    Malformed,
}

/// A kit that cannot be replayed; the message names the file (and line) concerned.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// A malformed kit.
    pub fn malformed(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Malformed,
            message: message.into(),
        }
    }

    /// A kit file that could not be read.
    pub fn io(path: &Path, e: &std::io::Error) -> Error {
        Error {
            kind: ErrorKind::Io,
            message: format!("{}: {e}", path.display()),
        }
    }

    /// What kind of problem it is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where two texts first differ: the byte offset of the first differing character (or the shorter
/// length), and where to start showing them, about 40 characters before it. Both offsets are
/// character boundaries of both texts, which agree up to the difference.
pub fn first_difference(expected: &str, actual: &str) -> (usize, usize) {
    let at = expected
        .char_indices()
        .zip(actual.chars())
        .find(|((_, a), b)| a != b)
        .map_or(expected.len().min(actual.len()), |((i, _), _)| i);
    let start = expected[..at].char_indices().rev().nth(40).map_or(0, |(i, _)| i);
    (at, start)
}

/// Reads a JSON Lines file into values, naming the file and line on error.
pub fn read_jsonl(path: &Path) -> Result<Vec<serde_json::Value>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| Error::malformed(format!("{}:{}: {e}", path.display(), i + 1)))
        })
        .collect()
}

/// Reads a JSON file, naming the file on error.
pub(crate) fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
    serde_json::from_str(&text).map_err(|e| Error::malformed(format!("{}: {e}", path.display())))
}
