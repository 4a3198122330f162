//! How SGLang hands a message's content part list to a Jinja template: joined into a string, or as
//! the list of parts, decided once per template from its source
//! (`detect_jinja_template_content_format`, sglang/srt/parser/jinja_template_utils.py).

/// How SGLang hands a content part list to a Jinja template
/// (`detect_jinja_template_content_format`, parser/jinja_template_utils.py).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentFormat {
    /// Text parts joined with spaces.
    String,
    /// The parts kept, normalized (`{"type": "text", "text"}`).
    OpenAi,
}

impl ContentFormat {
    /// The format of a template: "openai" when its text mentions an image, audio, video or vision, or
    /// when it loops over a message's content (`for x in message['content']`, `message.content`,
    /// `msg.content`, `m.content`, through filters, tests or slices); else, and when it does not
    /// compile, "string".
    pub fn of(source: &str, compiles: bool) -> ContentFormat {
        if ["image", "audio", "video", "vision"].iter().any(|w| source.contains(w)) {
            return ContentFormat::OpenAi;
        }
        if compiles && statements(source).iter().any(|s| loops_over_content(s)) {
            ContentFormat::OpenAi
        } else {
            ContentFormat::String
        }
    }
}

/// The inside of each `{% ... %}` tag of a template (whitespace control marks left out), outside
/// comments and `raw` blocks, as Jinja's lexer finds them (strings inside tags may hold `%}`).
fn statements(source: &str) -> Vec<&str> {
    let b = source.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut raw) = (0, false);
    while let Some(j) = (i..b.len().saturating_sub(1)).find(|&j| b[j] == b'{' && matches!(b[j + 1], b'{' | b'%' | b'#'))
    {
        match b[j + 1] {
            b'#' if !raw => i = source[j + 2..].find("#}").map_or(b.len(), |k| j + 2 + k + 2),
            b'{' if !raw => i = tag_end(b, j + 2, b'}').unwrap_or(b.len()),
            b'%' => {
                // An unclosed tag does not compile: nothing follows it.
                let Some(end) = tag_end(b, j + 2, b'%') else { break };
                let inner = source[j + 2..end - 2]
                    .trim_start_matches(['-', '+'])
                    .trim_end_matches(['-', '+'])
                    .trim();
                let first = inner.split(|c: char| !c.is_alphanumeric() && c != '_').next();
                match first {
                    Some("endraw") => raw = false,
                    _ if raw => {}
                    Some("raw") => raw = true,
                    _ => out.push(inner),
                }
                i = end;
            }
            _ => i = j + 2,
        }
    }
    out
}

/// Where a tag opened before `from` ends: past its closing `<close>}` outside strings.
fn tag_end(b: &[u8], from: usize, close: u8) -> Option<usize> {
    let mut quote = None;
    let mut k = from;
    while k < b.len() {
        match (quote, b[k]) {
            (Some(_), b'\\') => k += 1,
            (Some(q), c) if c == q => quote = None,
            (None, b'\'' | b'"') => quote = Some(b[k]),
            (None, c) if c == close && b.get(k + 1) == Some(&b'}') => return Some(k + 2),
            _ => {}
        }
        k += 1;
    }
    None
}

/// A token of a tag's expression, as far as [`loops_over_content`] needs them.
#[derive(Debug, PartialEq)]
enum Tok<'a> {
    Name(&'a str),
    Str(&'a str),
    Punct(char),
    /// A number.
    Other,
}

fn tokens(s: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let mut take_while = |f: &dyn Fn(char) -> bool| {
            let mut end = i + c.len_utf8();
            while let Some(&(k, d)) = chars.peek() {
                if !f(d) {
                    break;
                }
                end = k + d.len_utf8();
                chars.next();
            }
            end
        };
        if c.is_alphabetic() || c == '_' {
            let end = take_while(&|d| d.is_alphanumeric() || d == '_');
            out.push(Tok::Name(&s[i..end]));
        } else if c.is_ascii_digit() {
            take_while(&|d| d.is_ascii_alphanumeric() || d == '.' || d == '_');
            out.push(Tok::Other);
        } else if c == '\'' || c == '"' {
            let mut escaped = false;
            let mut end = s.len();
            for (k, d) in chars.by_ref() {
                if escaped {
                    escaped = false;
                } else if d == '\\' {
                    escaped = true;
                } else if d == c {
                    end = k;
                    break;
                }
            }
            out.push(Tok::Str(&s[i + 1..end.max(i + 1)]));
        } else {
            out.push(Tok::Punct(c));
        }
    }
    out
}

/// The index of the bracket closing the one at `open`, at the same depth.
fn closing(toks: &[Tok], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether a `for` statement iterates over a message's content, as SGLang's
/// `_is_var_or_elems_access(loop.iter, var, "content")` decides for `message`, `msg` and `m`: the
/// content by attribute or constant key, under slices, filters and tests.
fn loops_over_content(statement: &str) -> bool {
    let toks = tokens(statement);
    if toks.first() != Some(&Tok::Name("for")) {
        return false;
    }
    // The iterable runs from the first `in` at depth 0 to the loop's `if` or `recursive`.
    let mut depth = 0i32;
    let (mut start, mut end) = (None, toks.len());
    for (k, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => depth -= 1,
            Tok::Name("in") if depth == 0 && start.is_none() => start = Some(k + 1),
            Tok::Name("if" | "recursive") if depth == 0 && start.is_some() => {
                end = k;
                break;
            }
            _ => {}
        }
    }
    let Some(start) = start else { return false };
    content_access(&toks[start..end])
}

/// Whether an expression is a message's content by attribute or constant key (in parentheses or
/// not), wrapped in slices, filters and tests.
fn content_access(toks: &[Tok]) -> bool {
    let rest = match toks {
        [Tok::Name("message" | "msg" | "m"), Tok::Punct('.'), Tok::Name("content"), rest @ ..]
        | [Tok::Name("message" | "msg" | "m"), Tok::Punct('['), Tok::Str("content"), Tok::Punct(']'), rest @ ..] => {
            rest
        }
        [Tok::Punct('('), ..] => match closing(toks, 0) {
            Some(end) if content_access(&toks[1..end]) => &toks[end + 1..],
            _ => return false,
        },
        _ => return false,
    };
    wrapped_access(rest)
}

/// Whether what follows the content access only wraps it: slices, then filters and tests (not
/// `is not`), each with its arguments.
fn wrapped_access(mut rest: &[Tok]) -> bool {
    while rest.first() == Some(&Tok::Punct('[')) {
        let Some(end) = closing(rest, 0) else { return false };
        let mut depth = 0;
        let slice = rest[1..end].iter().any(|t| {
            match t {
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']' | '}') => depth -= 1,
                _ => {}
            }
            depth == 0 && *t == Tok::Punct(':')
        });
        if !slice {
            return false;
        }
        rest = &rest[end + 1..];
    }
    loop {
        rest = match rest {
            [] => return true,
            [Tok::Punct('|'), Tok::Name(_), more @ ..] => more,
            [Tok::Name("is"), Tok::Name(test), more @ ..] if *test != "not" => match more {
                [Tok::Name(_) | Tok::Str(_) | Tok::Other, after @ ..] if after.first() != Some(&Tok::Punct('.')) => {
                    after
                }
                _ => more,
            },
            _ => return false,
        };
        // A dotted filter name, then the call's arguments.
        while let [Tok::Punct('.'), Tok::Name(_), more @ ..] = rest {
            rest = more;
        }
        if rest.first() == Some(&Tok::Punct('(')) {
            let Some(end) = closing(rest, 0) else { return false };
            rest = &rest[end + 1..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_content_format_is_sglangs() {
        let format = |s: &str| ContentFormat::of(s, true);
        for openai in [
            "{% for c in message['content'] %}{{ c.text }}{% endfor %}",
            "{%- for c in message.content -%}{% endfor %}",
            "{% for c in msg[\"content\"] | selectattr('type', 'equalto', 'text') | list %}{% endfor %}",
            "{% for c in (m.content)[1:] if c.type == 'text' %}{% endfor %}",
            "{% for i, c in message.content is iterable %}{% endfor %}",
            "{% macro f(message) %}{% for c in message.content|batch(2) %}{% endfor %}{% endmacro %}",
            "{{ 'an image' }}",
        ] {
            assert_eq!(format(openai), ContentFormat::OpenAi, "{openai}");
        }
        for string in [
            "{{ message.content }}",
            "{% for c in messages %}{{ c.content }}{% endfor %}",
            "{% for c in message.content[0] %}{% endfor %}",
            "{% for c in message.content.split() %}{% endfor %}",
            "{% for c in message.content is not string %}{% endfor %}",
            "{% for c in content %}{% endfor %}",
            "{# {% for c in message.content %} #}",
            "{% raw %}{% for c in message.content %}{% endraw %}",
            "{{ '{% for c in message.content %}' }}",
            "{% set x = '%}' %}{% for c in messages %}{% endfor %}",
        ] {
            assert_eq!(format(string), ContentFormat::String, "{string}");
        }
        assert_eq!(
            ContentFormat::of("{% for c in message.content %}", false),
            ContentFormat::String,
            "a template that does not compile"
        );
    }
}
