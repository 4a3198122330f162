//! The crate's one error type: what kind of failure, the file it concerns, the Python exception class
//! transformers raises for it, and what caused it.

use std::fmt;
use std::path::{Path, PathBuf};

/// What kind of failure an [`Error`] is.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A tokenizer file could not be read (missing, permissions); the source is the I/O error.
    Io,
    /// `tokenizer.json` or `tokenizer_config.json` is not what transformers reads: JSON syntax, a
    /// missing or mistyped field, a setting outside its values.
    Malformed,
    /// The `tokenizers` pipeline cannot be built from `tokenizer.json` (a model or component it does
    /// not support); the source is its error.
    Unsupported,
    /// The template failed on the conversation; the source is the engine's error, whose Python class
    /// this error has.
    Render,
    /// Options that `apply_chat_template` refuses together, before rendering (`ValueError`).
    Options,
    /// Padding was asked for but the tokenizer has no pad token (`ValueError`).
    Padding,
    /// A text could not be encoded as asked (`ValueError`).
    Encode,
    /// The token offsets that assistant masks need cannot be rebuilt for this tokenizer or text
    /// (`OffsetError`, chatfmt's own class: transformers reads offsets from its tokenizer).
    Offsets,
    /// Ids could not be decoded into text (`ValueError`).
    Decode,
    /// A generation block transformers cannot map to tokens: an empty one at the start of the text,
    /// whose last character it looks up at index -1 (`OverflowError`).
    Mask,
}

/// Where `apply_chat_template(tokenize=True)` failed, as the tokens kit records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Before or while rendering the template.
    Render,
    /// While encoding the rendered text.
    Tokenize,
}

impl fmt::Display for Stage {
    /// `rendering` or `tokenizing`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Render => "rendering",
            Stage::Tokenize => "tokenizing",
        })
    }
}

impl ErrorKind {
    /// The stage of `apply_chat_template` a failure of this kind belongs to (`None`: loading or
    /// decoding, which are not part of it).
    pub fn stage(self) -> Option<Stage> {
        match self {
            ErrorKind::Render | ErrorKind::Options => Some(Stage::Render),
            ErrorKind::Padding | ErrorKind::Encode | ErrorKind::Offsets | ErrorKind::Mask => Some(Stage::Tokenize),
            ErrorKind::Io | ErrorKind::Malformed | ErrorKind::Unsupported | ErrorKind::Decode => None,
        }
    }
}

/// A failure to load a tokenizer, render a conversation, or encode or decode text.
///
/// `Display` prints one line: the file (when there is one), the stage and Python class (for chat
/// failures), and what went wrong; the cause is the [`source`](std::error::Error::source)
/// ([`Error::with_causes`] appends it).
#[derive(Debug, thiserror::Error)]
#[error("{}", Line(self))]
pub struct Error {
    kind: ErrorKind,
    message: String,
    path: Option<PathBuf>,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// The `Display` line of an [`Error`].
struct Line<'e>(&'e Error);

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.0;
        if let Some(path) = &e.path {
            write!(f, "{}: ", path.display())?;
        }
        match (e.kind, e.stage(), e.python_class()) {
            // The engine's error (class, message, place) is the source.
            (ErrorKind::Render, Some(stage), _) => write!(f, "{stage} failed"),
            (_, Some(stage), Some(class)) => write!(f, "{stage} failed: {class}: {}", e.message),
            (_, None, Some(class)) => write!(f, "{class}: {}", e.message),
            (_, _, None) => f.write_str(&e.message),
        }
    }
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            path: None,
            source: None,
        }
    }

    /// A JSON syntax error, with its line and column.
    pub(crate) fn json(e: &serde_json::Error) -> Error {
        Error::json_at(e, e.line(), e.column())
    }

    /// [`Error::json`] at `line` and `column` of the file (for an error in a part of it), with what
    /// serde quotes of the value cut short.
    pub(crate) fn json_at(e: &serde_json::Error, line: usize, column: usize) -> Error {
        const QUOTED: usize = 160;
        let full = e.to_string();
        let what = (full.strip_suffix(&format!(" at line {} column {}", e.line(), e.column()))).unwrap_or(&full);
        let what = match what.char_indices().nth(QUOTED) {
            Some((cut, _)) => format!("{}...", &what[..cut]),
            None => what.to_string(),
        };
        Error::new(
            ErrorKind::Malformed,
            format!("malformed JSON at line {line}, column {column}: {what}"),
        )
    }

    /// Token offsets that cannot be rebuilt, and why.
    pub(crate) fn offsets(why: impl fmt::Display) -> Error {
        Error::new(
            ErrorKind::Offsets,
            format!("cannot rebuild token offsets (assistant masks and message spans need them): {why}"),
        )
    }

    /// The same error, about the file `path` (a path it already names stays).
    pub(crate) fn at(mut self, path: &Path) -> Error {
        self.path.get_or_insert_with(|| path.to_path_buf());
        self
    }

    /// The same error, caused by `source`.
    pub(crate) fn caused_by(mut self, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        self.source = Some(source.into());
        self
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The file concerned, if any (tokenizer files; a template's name and place are in
    /// [`Error::template_error`]).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The stage of `apply_chat_template` that failed, for chat failures.
    pub fn stage(&self) -> Option<Stage> {
        self.kind.stage()
    }

    /// What went wrong, without the file, stage or class: for a render failure, the engine's message
    /// and where in the template (`'x' is undefined (in NAME, line 3, column 5)`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The exact Python exception class transformers raises for this failure (`ValueError`,
    /// `TemplateError`, `UndefinedError`, ...; `OffsetError` for [`ErrorKind::Offsets`]). `None` for
    /// loading failures, which the kits do not compare.
    pub fn python_class(&self) -> Option<&'static str> {
        match self.kind {
            ErrorKind::Render => self.template_error().map(|e| e.kind().python_name()),
            ErrorKind::Options | ErrorKind::Padding | ErrorKind::Encode | ErrorKind::Decode => Some("ValueError"),
            ErrorKind::Offsets => Some("OffsetError"),
            ErrorKind::Mask => Some("OverflowError"),
            ErrorKind::Io | ErrorKind::Malformed | ErrorKind::Unsupported => None,
        }
    }

    /// The error's line followed by each of its causes, joined by `: ` (as `anyhow` prints a chain).
    pub fn with_causes(&self) -> String {
        let mut out = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            out.push_str(&format!(": {c}"));
            cause = c.source();
        }
        out
    }

    /// The engine's error of a render failure: its kind, template name, line and column.
    pub fn template_error(&self) -> Option<&chatfmt::jinja::Error> {
        self.source.as_deref()?.downcast_ref()
    }
}

impl From<chatfmt::jinja::Error> for Error {
    /// A render failure caused by the engine's error.
    fn from(e: chatfmt::jinja::Error) -> Error {
        Error::new(ErrorKind::Render, e.located_message()).caused_by(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_value_is_cut_short() {
        let long = format!("\"{}\"", "y".repeat(5000));
        let e = serde_json::from_str::<bool>(&long).unwrap_err();
        let message = Error::json(&e).to_string();
        assert!(
            message.starts_with("malformed JSON at line 1, column 5002: invalid type: string \"yyy")
                && message.ends_with("...")
                && message.len() < 250,
            "{message}"
        );
    }
}
