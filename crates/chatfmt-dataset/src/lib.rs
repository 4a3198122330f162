//! chatfmt-dataset: formats whole chat datasets — JSON Lines or Parquet in, Parquet or JSON Lines out —
//! into prompt text and, optionally, token ids, attention masks and assistant (loss) masks identical to
//! transformers' `apply_chat_template(tokenize=True, return_assistant_tokens_mask=True)`.
//!
//! Rows stream through in chunks (bounded memory): each chunk is formatted and encoded by one worker
//! of a rayon pool, and chunks are written in input order. Every input row is in the output, its
//! input columns first and then the new columns of [`columns`] (the schema `chatfmt.format_batch`
//! returns); a row that cannot be formatted has its `error` set there and also goes to the rejects
//! file with its index, the kind of failure and the reason, so rows in = rows formatted + rows
//! rejected, always. Outputs are written to temporary files renamed into place only on success, and
//! no output may be the input under another name.

pub mod columns;
pub mod conversation;
pub mod input;
pub mod output;
mod row_json;
mod run;
pub mod safe_file;

pub use columns::{Columns, Formatted, Tokens};
pub use conversation::{Conversation, Fields, Format};
pub use input::InputFormat;
pub use output::{OutputFormat, Reject};
pub use run::{run, Config, Progress, Summary, Total};

use std::path::{Path, PathBuf};

/// What kind of failure stopped a run.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request cannot be honoured as given (an output that is the input, a folder, a symlink).
    Usage,
    /// The input cannot be read as a dataset (missing, unsupported format, undecodable).
    Input,
    /// One row is not a conversation (malformed JSON, a missing or mistyped field); the row is
    /// rejected, the run goes on.
    InvalidRow,
    /// The model (template or tokenizer) cannot be loaded.
    Model,
    /// Writing an output failed.
    Output,
    /// A row was rejected under `strict`.
    Rejected,
    /// The run was cancelled (its outputs were not written).
    Cancelled,
}

/// A failure that stops the run; no output file is left behind.
#[derive(Debug, thiserror::Error)]
#[error("{}{message}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
pub struct Error {
    kind: ErrorKind,
    message: String,
    path: Option<PathBuf>,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    /// A new error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            path: None,
            source: None,
        }
    }

    /// The same error, about the file `path`.
    pub fn at(mut self, path: &Path) -> Error {
        self.path = Some(path.to_path_buf());
        self
    }

    /// The same error, caused by `source`.
    pub fn caused_by(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.source = Some(Box::new(source));
        self
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The file concerned, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub(crate) fn file(kind: ErrorKind, path: &Path, message: impl std::fmt::Display) -> Error {
        Error::new(kind, message.to_string()).at(path)
    }
}
