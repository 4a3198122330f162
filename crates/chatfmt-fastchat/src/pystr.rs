//! Python's `str.isspace` and `str.strip()`, as FastChat's code applies them to messages.

/// Python's `str.isspace` (Rust's whitespace plus the ASCII separators U+001C..U+001F).
fn py_is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_is_space)
}
