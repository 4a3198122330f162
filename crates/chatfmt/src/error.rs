//! The one error type of the chat layer: a kind, a message saying what went wrong and what to do,
//! where it happened (file or other input, line and column, JSON path, byte offset) and the error
//! that caused it.
//!
//! `Display` prints one line, `path: message`; `{:#}` appends the causes (`: cause`), as a command
//! line reports a chain.
//!
//! ```
//! use chatfmt::{ErrorKind, TemplateRequest};
//!
//! let request = TemplateRequest { default_template: Some("chatml2".into()), ..Default::default() };
//! let e = request.resolve().unwrap_err();
//! assert_eq!(e.kind(), ErrorKind::NotFound);
//! assert!(e.to_string().starts_with("no built-in template named 'chatml2'; available: chatml"));
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

/// What kind of failure an [`Error`] is.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A file, folder, cached repository or built-in template that does not exist.
    NotFound,
    /// The model was found and read, but holds no chat template.
    NoTemplate,
    /// Content is malformed: JSON syntax, GGUF layout, values of the wrong type.
    Malformed,
    /// JSON input nested deeper than [`crate::json_input::MAX_DEPTH`] levels.
    TooDeep,
    /// A template does not compile; the engine's error is the source ([`Error::template_error`]).
    Template,
    /// A name that cannot be used: a template name that is not a plain file name.
    InvalidName,
    /// A file of the model folder would hide what is being saved.
    Conflict,
    /// The request names nothing to work with.
    Usage,
    /// Reading or writing failed for another reason (permissions, I/O); the I/O error is the source.
    Io,
}

/// A failure of the chat layer: loading a model or template, reading JSON input, saving a template,
/// reading a kit. [`ChatTemplate::apply`](crate::ChatTemplate::apply) fails with the engine's
/// [`chatfmt_jinja::Error`] instead, whose class is what transformers raises.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(Box<Details>);

#[derive(Debug, thiserror::Error)]
struct Details {
    kind: ErrorKind,
    message: String,
    path: Option<PathBuf>,
    origin: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    json_path: Option<String>,
    offset: Option<u64>,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl fmt::Display for Details {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, &self.origin) {
            (Some(path), _) => write!(f, "{}: ", path.display())?,
            (None, Some(origin)) => write!(f, "{origin}: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)?;
        if f.alternate() {
            let mut cause = std::error::Error::source(self);
            while let Some(e) = cause {
                write!(f, ": {e}")?;
                cause = e.source();
            }
        }
        Ok(())
    }
}

impl Error {
    /// A new error of `kind`; `message` says what went wrong and what to do.
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error(Box::new(Details {
            kind,
            message: message.into(),
            path: None,
            origin: None,
            line: None,
            column: None,
            json_path: None,
            offset: None,
            source: None,
        }))
    }

    /// A failed read of `path` ("cannot {what}"): `NotFound` when the file is missing, else `Io`.
    pub(crate) fn read(path: &Path, what: &str, e: std::io::Error) -> Error {
        let kind = match e.kind() {
            std::io::ErrorKind::NotFound => ErrorKind::NotFound,
            _ => ErrorKind::Io,
        };
        Error::new(kind, format!("cannot {what}")).in_file(path).caused_by(e)
    }

    /// A failed read or write of `path` ("cannot {what}"), of kind `Io` whatever the cause.
    pub(crate) fn io(path: &Path, what: &str, e: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, format!("cannot {what}"))
            .in_file(path)
            .caused_by(e)
    }

    /// The same error, about the file or folder `path` (it replaces any other origin).
    pub(crate) fn in_file(mut self, path: &Path) -> Error {
        self.0.path = Some(path.to_path_buf());
        self.0.origin = None;
        self
    }

    /// The same error, about an input that is not a file (`--var x`, `<stdin>`); empty is none.
    pub(crate) fn in_input(mut self, origin: &str) -> Error {
        self.0.origin = (!origin.is_empty()).then(|| origin.to_string());
        self
    }

    /// The same error, at a 1-based line and column.
    pub(crate) fn at(mut self, line: usize, column: usize) -> Error {
        self.0.line = Some(line);
        self.0.column = Some(column);
        self
    }

    /// The same error, at a JSON path (`messages[2].content`); empty is the top level.
    pub(crate) fn at_json_path(mut self, path: String) -> Error {
        self.0.json_path = (!path.is_empty()).then_some(path);
        self
    }

    /// The same error, at a byte offset of the file.
    pub(crate) fn at_offset(mut self, offset: u64) -> Error {
        self.0.offset = Some(offset);
        self
    }

    /// The same error, caused by `source`.
    pub(crate) fn caused_by(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.0.source = Some(Box::new(source));
        self
    }

    /// The same error, with what to do appended to the message (`...; fix the file first`).
    pub(crate) fn advise(mut self, what_to_do: &str) -> Error {
        self.0.message = format!("{}; {what_to_do}", self.0.message);
        self
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// What went wrong and what to do, without the file name or the causes.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The file or folder concerned, if any.
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }

    /// The input concerned when it is not a file (`--var x`, `<stdin>`), as the caller named it.
    pub fn origin(&self) -> Option<&str> {
        self.0.origin.as_deref()
    }

    /// The 1-based line, for JSON syntax errors and templates that do not compile.
    pub fn line(&self) -> Option<usize> {
        self.0.line
    }

    /// The column, as the line's reader counts it (serde_json counts bytes from 1; 0 is the line's
    /// start), or the template column from 1.
    pub fn column(&self) -> Option<usize> {
        self.0.column
    }

    /// The JSON path of the value a JSON syntax error is in (`messages[2].content`).
    pub fn json_path(&self) -> Option<&str> {
        self.0.json_path.as_deref()
    }

    /// The byte offset of the file where a GGUF file is malformed.
    pub fn byte_offset(&self) -> Option<u64> {
        self.0.offset
    }

    /// The engine's error, for a template that does not compile.
    pub fn template_error(&self) -> Option<&chatfmt_jinja::Error> {
        self.0.source.as_deref()?.downcast_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_one_line_and_the_alternate_form_adds_the_causes() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = Error::read(Path::new("m/t.jinja"), "read the template", io);
        assert_eq!(e.kind(), ErrorKind::Io);
        assert_eq!(e.to_string(), "m/t.jinja: cannot read the template");
        assert_eq!(format!("{e:#}"), "m/t.jinja: cannot read the template: denied");
        assert_eq!(
            std::error::Error::source(&e).map(ToString::to_string).as_deref(),
            Some("denied")
        );
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(Error::read(Path::new("x"), "read", missing).kind(), ErrorKind::NotFound);
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(Error::io(Path::new("x"), "write", missing).kind(), ErrorKind::Io);
    }

    #[test]
    fn the_engine_error_is_the_source_of_a_template_error() {
        let Err(engine) = chatfmt_jinja::Template::new("t", "{% for %}") else {
            panic!("compiled")
        };
        let e = Error::new(ErrorKind::Template, "the template does not compile").caused_by(engine.clone());
        assert_eq!(e.template_error().map(|t| t.kind()), Some(engine.kind()));
        assert_eq!(format!("{e:#}"), format!("the template does not compile: {engine}"));
        assert!(Error::new(ErrorKind::Usage, "x").template_error().is_none());
    }

    #[test]
    fn a_file_replaces_the_origin() {
        let e = Error::new(ErrorKind::Malformed, "bad").in_input("--var x");
        assert_eq!(
            (e.to_string(), e.origin()),
            ("--var x: bad".to_string(), Some("--var x"))
        );
        let e = e.in_file(Path::new("c.json"));
        assert_eq!((e.to_string(), e.origin()), ("c.json: bad".to_string(), None));
        assert_eq!(Error::new(ErrorKind::Malformed, "bad").in_input("").to_string(), "bad");
    }
}
