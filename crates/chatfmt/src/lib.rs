//! chatfmt

pub mod conversation;
