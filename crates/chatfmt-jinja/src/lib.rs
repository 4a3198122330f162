//! chatfmt-jinja
pub mod pystr;
