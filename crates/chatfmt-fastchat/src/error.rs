//! Errors of the FastChat layer: values with a kind, a message, and the Python exception class
//! FastChat raises in the same situation (used by the conformance runner).

use std::fmt;

/// What went wrong.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// No template is registered under the name (FastChat: `KeyError`).
    UnknownTemplate,
    /// `register` without override of a name already registered (FastChat: `AssertionError`).
    DuplicateTemplate,
    /// `update_last_message` on a conversation without messages (FastChat: `IndexError`).
    NoMessages,
    /// `system_template` names a field other than `{system_message}` (FastChat: `KeyError`).
    SystemTemplateField,
    /// `system_template` uses a positional field such as `{}` (FastChat: `IndexError`).
    SystemTemplatePositional,
    /// `system_template` is not a valid format string, or uses a format feature chatfmt does not
    /// implement (FastChat: `ValueError` for malformed strings).
    SystemTemplateSyntax,
    /// The conversation has no separator style (FastChat: `ValueError('Invalid style: None')`).
    InvalidStyle,
    /// The style needs `sep`/`sep2` but it is unset (FastChat: `TypeError`).
    MissingSeparator,
    /// A message has images but the style cannot show them (FastChat crashes or leaks a Python
    /// tuple repr into the prompt; a documented difference).
    ImagesNotSupported,
    /// A conversion that has no faithful form for messages with images (a documented difference).
    ImagesInTextOnlyOutput,
    /// A PEFT folder's `adapter_config.json` is missing or unreadable (FastChat: `ValueError`).
    PeftConfig,
    /// A PEFT adapter whose base model has "peft" in its name (FastChat: `ValueError`).
    PeftBaseModel,
    /// The input is malformed (bad JSON shape, bad role, ...).
    InvalidInput,
    /// Model-path matching was asked for without a model path.
    NoModelPath,
}

impl ErrorKind {
    /// The Python exception class FastChat raises for the same input, where it raises one.
    pub fn python_class(self) -> Option<&'static str> {
        use ErrorKind::*;
        match self {
            UnknownTemplate | SystemTemplateField => Some("KeyError"),
            DuplicateTemplate => Some("AssertionError"),
            NoMessages | SystemTemplatePositional => Some("IndexError"),
            SystemTemplateSyntax | InvalidStyle | PeftConfig | PeftBaseModel => Some("ValueError"),
            MissingSeparator => Some("TypeError"),
            ImagesNotSupported | ImagesInTextOnlyOutput | InvalidInput | NoModelPath => None,
        }
    }
}

/// An error of the FastChat layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// An error of `kind` with a human-readable `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Result with the FastChat layer's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
