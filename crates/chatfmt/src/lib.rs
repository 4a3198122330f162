//! chatfmt
