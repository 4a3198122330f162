//! chatfmt-jinja
