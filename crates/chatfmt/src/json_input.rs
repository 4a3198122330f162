//! Reading JSON inputs with errors that say where: the file, the line and column, and the JSON path
//! (`messages[2].content`) of the place the syntax broke.
//!
//! ```
//! use chatfmt::json_input::{parse, Root};
//! let e = parse("[{\"role\": \"user\", \"content\": tru}]", "conv.json", Root::File("messages")).unwrap_err();
//! assert_eq!(e.to_string(), "conv.json: malformed JSON at line 1, column 33 in messages[0].content: expected ident");
//! ```

use crate::{Error, ErrorKind};
use serde::Deserialize;
use serde_json::Value as Json;

/// The deepest nesting of arrays and objects an input may have: about as deep as Python's `json`
/// reads before its recursion limit (990 levels on CPython 3.11, 1490 on 3.12), as for the render
/// server's request bodies. Past serde_json's own limit (128 levels) the parser's recursion moves
/// to stacks on the heap.
pub const MAX_DEPTH: usize = 1500;

/// A syntax error of serde_json as an [`ErrorKind::Malformed`] error at its line and column, the
/// message without the place.
fn syntax_error(e: &serde_json::Error) -> Error {
    let full = e.to_string();
    let place = format!(" at line {} column {}", e.line(), e.column());
    Error::new(ErrorKind::Malformed, full.strip_suffix(&place).unwrap_or(&full)).at(e.line(), e.column())
}

/// Parses JSON text as [`serde_json::from_str`] does, but as deep as [`MAX_DEPTH`] levels. A syntax
/// error is [`ErrorKind::Malformed`] and deeper text [`ErrorKind::TooDeep`], at the bracket that
/// opens the level past the limit unless a syntax error comes first; either has its line and
/// column (bytes, 1-based, as serde_json counts them) and a message without them.
pub fn from_str(text: &str) -> Result<Json, Error> {
    serde_json::from_str(text).or_else(|e| {
        // Only text nested past serde_json's limit is read again, without the limit, and only up
        // to where it passes MAX_DEPTH.
        let (depth, past) = nesting_depth(text);
        if depth < 128 {
            return Err(syntax_error(&e));
        }
        let end = past.unwrap_or(text.len());
        let mut de = serde_json::Deserializer::from_str(&text[..end]);
        de.disable_recursion_limit();
        let read = Json::deserialize(serde_stacker::Deserializer::new(&mut de)).and_then(|v| de.end().map(|()| v));
        match (read, past) {
            (Ok(value), None) => Ok(value),
            (Err(e), None) => Err(syntax_error(&e)),
            (Err(e), Some(_)) if !e.is_eof() => Err(syntax_error(&e)),
            (_, Some(at)) => {
                let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
                Err(Error::new(
                    ErrorKind::TooDeep,
                    format!("arrays and objects nested deeper than {MAX_DEPTH} levels"),
                )
                .at(1 + text[..at].matches('\n').count(), at - line_start + 1))
            }
        }
    })
}

/// The deepest nesting of arrays and objects in `text`, strings passed over, and the byte offset
/// of the bracket that first opens a level past [`MAX_DEPTH`].
fn nesting_depth(text: &str) -> (usize, Option<usize>) {
    let (mut depth, mut deepest, mut past) = (0usize, 0usize, None);
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if depth > MAX_DEPTH && past.is_none() {
                    past = Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    (deepest, past)
}

/// A [`from_str`] error as serde_json words one: `message at line L column C`.
pub fn with_place(e: &Error) -> String {
    format!(
        "{} at line {} column {}",
        e.message(),
        e.line().unwrap_or(1),
        e.column().unwrap_or(0)
    )
}

/// How the top-level value is named in JSON paths.
#[derive(Clone, Copy)]
pub enum Root<'a> {
    /// An input file: the items of a top-level array are `name[i]`, and the keys of a top-level
    /// object name themselves (`{"messages": [...]}` gives `messages[0]`).
    File(&'a str),
    /// A value called `name`: every path starts with it (`name.key`, `name[0]`).
    Value(&'a str),
}

/// Parses `text` read from `origin` (nested at most [`MAX_DEPTH`] levels). A syntax error
/// ([`ErrorKind::Malformed`]) names `origin`, the line and column, and the JSON path there; deeper
/// text ([`ErrorKind::TooDeep`]) names `origin`, the line and column.
pub fn parse(text: &str, origin: &str, root: Root) -> Result<Json, Error> {
    // A UTF-8 byte order mark, as some editors write one, is not part of the JSON.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    from_str(text).map_err(|e| {
        let at = (e.line().unwrap_or(1), e.column().unwrap_or(0));
        if e.kind() == ErrorKind::TooDeep {
            // The path there is the same index or key some 1,500 times over.
            return Error::new(
                ErrorKind::TooDeep,
                format!(
                    "JSON input at line {}, column {}: {}, the most an input may have",
                    at.0,
                    at.1,
                    e.message()
                ),
            )
            .in_input(origin)
            .at(at.0, at.1);
        }
        let path = path_at(text, byte_offset(text, at.0, at.1), root);
        let place = if path.is_empty() {
            String::new()
        } else {
            format!(" in {path}")
        };
        Error::new(
            ErrorKind::Malformed,
            format!(
                "malformed JSON at line {}, column {}{place}: {}",
                at.0,
                at.1,
                e.message()
            ),
        )
        .in_input(origin)
        .at(at.0, at.1)
        .at_json_path(path)
    })
}

/// The byte offset of serde_json's 1-based line and column (the column counts bytes).
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    (line_start + column.saturating_sub(1)).min(text.len())
}

/// A container open at some point of the text.
enum Frame {
    /// An array and the index of the item being read.
    Array(usize),
    /// An object and the key whose value is being read (`None` before the key is complete).
    Object(Option<String>),
}

/// The JSON path of the innermost value open at byte `offset`: `messages[2].content`, `tools[0]`,
/// `messages[1]["odd key"]`; empty at the top level of a file.
fn path_at(text: &str, offset: usize, root: Root) -> String {
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < offset {
        match bytes[i] {
            b'{' => stack.push(Frame::Object(None)),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array(n)) => *n += 1,
                Some(Frame::Object(key)) => *key = None,
                None => {}
            },
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object(key @ None)) = stack.last_mut() {
                    *key = Some(text.get(start..j.min(text.len())).unwrap_or("").to_string());
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = match root {
        Root::Value(name) => name.to_string(),
        Root::File(_) => String::new(),
    };
    for frame in &stack {
        match frame {
            Frame::Array(n) => match root {
                Root::File(name) if path.is_empty() => path += &format!("{name}[{n}]"),
                _ => path += &format!("[{n}]"),
            },
            Frame::Object(Some(key)) => {
                let plain = key.starts_with(|c: char| c.is_alphabetic() || c == '_')
                    && key.chars().all(|c| c.is_alphanumeric() || c == '_');
                match (plain, path.is_empty()) {
                    (true, true) => path += key,
                    (true, false) => path += &format!(".{key}"),
                    (false, _) => path += &format!("[\"{key}\"]"),
                }
            }
            Frame::Object(None) => {}
        }
    }
    path
}

/// Python's truth value of a JSON value, as `bool(json.loads(...))` gives it.
pub fn py_truthy(value: &Json) -> bool {
    match value {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Json::String(s) => !s.is_empty(),
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_values_are_pythons() {
        let truthy: Vec<bool> = [
            "null",
            "false",
            "true",
            "0",
            "0.0",
            "-0.0",
            "2",
            "\"\"",
            "\"0\"",
            "[]",
            "[0]",
            "{}",
            "{\"a\":0}",
        ]
        .iter()
        .map(|t| py_truthy(&serde_json::from_str(t).unwrap()))
        .collect();
        let want = [
            false, false, true, false, false, false, true, false, true, false, true, false, true,
        ];
        assert_eq!(truthy, want);
    }

    #[test]
    fn inputs_nest_as_deep_as_pythons_json_reads() {
        let nested = |n: usize, inner: &str| format!("{}{inner}{}", "[".repeat(n), "]".repeat(n));
        for n in [127, 128, 300, MAX_DEPTH] {
            let v = from_str(&nested(n, "\"[{\\\"\"")).unwrap();
            let mut at = &v;
            for _ in 1..n {
                at = &at[0];
            }
            assert_eq!(at[0], "[{\"", "{n}");
        }
        // Past the limit, and a syntax error deep down, are errors with their place.
        let e = parse(&nested(MAX_DEPTH + 1, ""), "deep.json", Root::File("messages")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "deep.json: JSON input at line 1, column 1501: arrays and objects nested deeper than 1500 levels, \
             the most an input may have"
        );
        let e = from_str(&format!("[\n {{\"a\":\n  {}", nested(2000, ""))).unwrap_err();
        assert_eq!(
            (e.line(), e.column(), e.kind()),
            (Some(3), Some(2 + 1499), ErrorKind::TooDeep)
        );
        let e = parse(&nested(300, "tru"), "deep.json", Root::File("messages")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("deep.json: malformed JSON at line 1, column 304"),
            "{e}"
        );
        // A syntax error before the place the text passes the limit is that error.
        let e = from_str(&format!("{}tru{}", "[".repeat(400), nested(MAX_DEPTH, ""))).unwrap_err();
        assert_eq!(
            (e.column(), e.message(), e.kind()),
            (Some(404), "expected ident", ErrorKind::Malformed)
        );
        let e = from_str(&format!("[] {}", nested(MAX_DEPTH + 1, ""))).unwrap_err();
        assert_eq!((e.column(), e.message()), (Some(4), "trailing characters"));
        // Brackets in strings are not nesting.
        assert_eq!(nesting_depth(r#"["[[[\"{{", {"a": "]]"}]"#), (2, None));
    }

    fn error(text: &str) -> String {
        parse(text, "conv.json", Root::File("messages"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn syntax_errors_name_the_json_path() {
        let text = "[\n {\"role\": \"user\", \"content\": \"a\"},\n {\"role\": \"assistant\", \"content\": \"b\"},\n {\"role\": \"user\", \"content\": \"c\n";
        assert_eq!(
            error(text),
            "conv.json: malformed JSON at line 5, column 0 in messages[2].content: control character (\\u0000-\\u001F) found while parsing a string"
        );
        assert_eq!(
            error("{\"messages\": [{\"role\": \"user\", \"content\": tru}]}"),
            "conv.json: malformed JSON at line 1, column 46 in messages[0].content: expected ident"
        );
        assert!(error("{\"messages\": [1, 2,]}").contains(" in messages[2]: "));
        assert!(error("{\"tools\": [{\"odd key\": [1 2]}]}").contains(" in tools[0][\"odd key\"][0]: "));
        assert!(error("{\"added\": {\"1\": {\"content\": \"<s>\",}}}").contains(" in added[\"1\"]: trailing comma"));
        assert!(error("[{\"a\\\"b\": 1 }, {\"k\": }]").contains(" in messages[1].k: "));
        assert!(error("{\"messages\": [{\"role\": ").contains(" in messages[0].role: EOF while parsing a value"));
        assert_eq!(
            error(""),
            "conv.json: malformed JSON at line 1, column 0: EOF while parsing a value"
        );
    }

    #[test]
    fn named_values_prefix_every_path() {
        let e = parse("{\"city\": [1,,]}", "--var loc", Root::Value("loc")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--var loc: malformed JSON at line 1, column 13 in loc.city[1]: expected value"
        );
        assert_eq!(e.kind(), ErrorKind::Malformed);
        assert_eq!((e.origin(), e.path()), (Some("--var loc"), None));
        assert_eq!(
            (e.line(), e.column(), e.json_path()),
            (Some(1), Some(13), Some("loc.city[1]"))
        );
        let e = parse("tru", "--var x", Root::Value("x")).unwrap_err();
        assert!(e.to_string().contains(" in x: "), "{e}");
    }

    #[test]
    fn offsets_follow_lines() {
        assert_eq!(byte_offset("ab\ncd\nef", 3, 2), 7);
        assert_eq!(byte_offset("ab", 1, 0), 0);
        assert_eq!(byte_offset("ab", 9, 9), 2);
    }
}
