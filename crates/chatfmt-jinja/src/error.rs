//! The engine's error type: a kind that maps onto the Python exception class, a message, and where.

use crate::pystr::{PyError, PyErrorKind};
use std::fmt;

/// What went wrong, named after the Python exception class Jinja2 / CPython raise for it.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `jinja2.exceptions.TemplateSyntaxError`: the template does not parse.
    TemplateSyntaxError,
    /// `jinja2.exceptions.TemplateAssertionError`: a compile-time check failed (unknown filter or test).
    TemplateAssertionError,
    /// `jinja2.exceptions.UndefinedError`: an operation on an undefined value.
    UndefinedError,
    /// `jinja2.exceptions.SecurityError`: the sandbox refused an attribute or call.
    SecurityError,
    /// `jinja2.exceptions.TemplateRuntimeError`: e.g. an unknown filter in a branch that ran.
    TemplateRuntimeError,
    /// `jinja2.exceptions.FilterArgumentError`: a filter got an argument it cannot use.
    FilterArgumentError,
    /// `jinja2.exceptions.TemplateError`: the template's own `raise_exception(...)`.
    TemplateError,
    /// Python `TypeError`.
    TypeError,
    /// Python `ValueError` (also raised by the chat layer, as transformers does).
    ValueError,
    /// Python `KeyError`.
    KeyError,
    /// Python `IndexError`.
    IndexError,
    /// Python `LookupError` (an unknown codec or codec error handler).
    LookupError,
    /// Python `UnicodeEncodeError`.
    UnicodeEncodeError,
    /// Python `AttributeError`.
    AttributeError,
    /// Python `ZeroDivisionError`.
    ZeroDivisionError,
    /// Python `OverflowError` (also `range()` beyond the sandbox cap).
    OverflowError,
    /// Python `RecursionError`.
    RecursionError,
    /// Python `RuntimeError` (e.g. `cycler()` without items).
    RuntimeError,
    /// Python `AssertionError` (a failed `assert` inside a Jinja2 filter).
    AssertionError,
    /// Python `NameError`.
    NameError,
    /// Python `SyntaxError` raised when Jinja2 compiles its generated code (e.g. `break` outside a loop).
    SyntaxError,
    /// A resource limit of chatfmt's sandbox (steps, depth, output or value size) was exceeded.
    LimitExceeded,
}

impl ErrorKind {
    /// The Python class name this kind stands for (as in the conformance kits' `error.name`).
    pub fn python_name(self) -> &'static str {
        match self {
            ErrorKind::TemplateSyntaxError => "TemplateSyntaxError",
            ErrorKind::TemplateAssertionError => "TemplateAssertionError",
            ErrorKind::UndefinedError => "UndefinedError",
            ErrorKind::SecurityError => "SecurityError",
            ErrorKind::TemplateRuntimeError => "TemplateRuntimeError",
            ErrorKind::FilterArgumentError => "FilterArgumentError",
            ErrorKind::TemplateError => "TemplateError",
            ErrorKind::TypeError => "TypeError",
            ErrorKind::ValueError => "ValueError",
            ErrorKind::KeyError => "KeyError",
            ErrorKind::IndexError => "IndexError",
            ErrorKind::LookupError => "LookupError",
            ErrorKind::UnicodeEncodeError => "UnicodeEncodeError",
            ErrorKind::AttributeError => "AttributeError",
            ErrorKind::ZeroDivisionError => "ZeroDivisionError",
            ErrorKind::OverflowError => "OverflowError",
            ErrorKind::RecursionError => "RecursionError",
            ErrorKind::RuntimeError => "RuntimeError",
            ErrorKind::AssertionError => "AssertionError",
            ErrorKind::NameError => "NameError",
            ErrorKind::SyntaxError => "SyntaxError",
            ErrorKind::LimitExceeded => "LimitExceeded",
        }
    }
}

/// An error from compiling or rendering a template. It is one pointer wide, so the results that
/// every evaluation step returns stay small.
#[derive(Debug, Clone)]
pub struct Error(Box<Details>);

#[derive(Debug, Clone)]
struct Details {
    kind: ErrorKind,
    message: String,
    template: Option<String>,
    line: u32,
    col: u32,
    source_line: Option<String>,
}

impl Error {
    /// A new error of `kind` with `message`, not yet located.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Details {
            kind,
            message: message.into(),
            template: None,
            line: 0,
            col: 0,
            source_line: None,
        }))
    }

    /// The kind (Python class) of the error.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// Whether the render ran out of steps (`Limits::max_steps`), the limit a caller may raise for
    /// long conversations.
    pub fn is_step_limit(&self) -> bool {
        self.0.kind == ErrorKind::LimitExceeded && self.0.message.starts_with(STEPS_EXCEEDED)
    }

    /// The message, as Python's `str(exception)` would print it where chatfmt reproduces it.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The 1-based template line, if known.
    pub fn line(&self) -> Option<u32> {
        (self.0.line > 0).then_some(self.0.line)
    }

    /// The 1-based column, if known.
    pub fn column(&self) -> Option<u32> {
        (self.0.col > 0).then_some(self.0.col)
    }

    /// The template name, if known.
    pub fn template_name(&self) -> Option<&str> {
        self.0.template.as_deref()
    }

    pub(crate) fn has_location(&self) -> bool {
        self.0.line > 0
    }

    pub(crate) fn at(mut self, line: u32, col: u32) -> Self {
        if self.0.line == 0 {
            self.0.line = line;
            self.0.col = col;
        }
        self
    }

    pub(crate) fn in_template(mut self, name: &str, source: &str) -> Self {
        if self.0.template.is_none() {
            self.0.template = Some(name.to_string());
        }
        if self.0.line > 0 && self.0.source_line.is_none() {
            self.0.source_line = source.split('\n').nth(self.0.line as usize - 1).map(str::to_string);
        }
        self
    }
}

impl Error {
    /// The message and where it happened, without the class name: `'x' is undefined (in NAME, line
    /// 3, column 5)`.
    pub fn located_message(&self) -> String {
        let mut s = self.0.message.clone();
        if self.0.line > 0 {
            let name = self.0.template.as_deref().unwrap_or("<template>");
            s.push_str(&format!(" (in {name}, line {}", self.0.line));
            if self.0.col > 0 {
                s.push_str(&format!(", column {}", self.0.col));
            }
            s.push(')');
        }
        s
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.kind.python_name(), self.located_message())?;
        if f.alternate() {
            if let Some(src) = &self.0.source_line {
                let gutter = format!("{} | ", self.0.line);
                write!(f, "\n{gutter}{src}")?;
                if self.0.col > 0 {
                    let pad: String = src
                        .chars()
                        .take(self.0.col as usize - 1)
                        .map(|c| if c == '\t' { '\t' } else { ' ' })
                        .collect();
                    write!(f, "\n{}{pad}^", " ".repeat(gutter.len()))?;
                }
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Shorthand for results in this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// How the error for running out of steps begins (see [`Error::is_step_limit`]).
pub(crate) const STEPS_EXCEEDED: &str = "the render took more than Limits::max_steps";

macro_rules! err {
    ($kind:ident, $($arg:tt)*) => {
        $crate::error::Error::new($crate::error::ErrorKind::$kind, format!($($arg)*))
    };
}
pub(crate) use err;

/// Converts a CPython-semantics error into an engine error.
pub fn py_err(e: PyError) -> Error {
    let kind = match e.kind {
        PyErrorKind::ValueError => ErrorKind::ValueError,
        PyErrorKind::TypeError => ErrorKind::TypeError,
        PyErrorKind::KeyError => ErrorKind::KeyError,
        #[cfg(test)]
        PyErrorKind::IndexError => ErrorKind::IndexError,
        PyErrorKind::OverflowError => ErrorKind::OverflowError,
        PyErrorKind::ZeroDivisionError => ErrorKind::ZeroDivisionError,
        PyErrorKind::MemoryError => ErrorKind::LimitExceeded,
        PyErrorKind::UndefinedError => ErrorKind::UndefinedError,
    };
    let message = if e.kind == PyErrorKind::MemoryError {
        "result too large".to_string()
    } else {
        e.message
    };
    Error::new(kind, message)
}
