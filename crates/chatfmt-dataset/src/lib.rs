//! chatfmt-dataset: formats whole chat datasets — JSON Lines or Parquet in, Parquet or JSON Lines out —
//! into prompt text and, optionally, token ids, attention masks and assistant (loss) masks identical to
//! transformers' `apply_chat_template(tokenize=True, return_assistant_tokens_mask=True)`.
//!
//! Rows stream through in chunks (bounded memory): each chunk is formatted and encoded by one worker
//! of a rayon pool, and chunks are written in input order. A row that cannot be formatted goes to the rejects file with its
//! index and the reason, so rows in = rows out + rows rejected, always.

pub mod conversation;
pub mod input;
pub mod output;
mod row_json;
mod run;

pub use conversation::{Conversation, Fields, Format};
pub use output::{Formatted, OutputFormat, Tokens};
pub use run::{run, Config, Summary};

use std::fmt;
use std::path::Path;

/// A failure that stops the run (unreadable input, unwritable output, a reject under `--strict`).
#[derive(Debug)]
pub struct Error {
    pub message: String,
}

impl Error {
    pub(crate) fn file(path: &Path, message: impl fmt::Display) -> Error {
        Error {
            message: format!("{}: {message}", path.display()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
