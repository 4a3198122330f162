//! Splits normalised template source into tokens, following Jinja2's lexer rules with
//! `trim_blocks`, `lstrip_blocks`, `-`/`+` whitespace control and `{% raw %}`.

use crate::error::{err, Error, Result};
use crate::pystr::is_py_space;

/// One lexical token; text borrows from the normalised source.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok<'s> {
    Data(&'s str),
    VarBegin,
    VarEnd,
    BlockBegin,
    BlockEnd,
    Name(&'s str),
    Str(String),
    Int(i64),
    /// An integer literal beyond 64 bits.
    BigInt(Box<num_bigint::BigInt>),
    Float(f64),
    Op(&'static str),
    Eof,
}

/// A token and where it starts (1-based line and column).
#[derive(Debug, Clone)]
pub struct Token<'s> {
    pub tok: Tok<'s>,
    pub line: u32,
    pub col: u32,
}

/// Jinja2's source preparation: every `\r\n`, `\r` and `\n` becomes `\n`, and one trailing newline is dropped.
pub fn normalize_source(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    if out.ends_with('\n') {
        out.pop();
    }
    out
}

const OPERATORS: [&str; 26] = [
    "//", "**", "==", "!=", "<=", ">=", "+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", "<", ">", "=", ".",
    ":", "|", ",", ";",
];

fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(is_py_space)
}

fn skip_space(src: &str, pos: usize) -> usize {
    pos + (src[pos..].len() - src[pos..].trim_start_matches(is_py_space).len())
}

struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    line_starting: bool,
    out: Vec<Token<'s>>,
    /// The last position whose line and line start were computed (positions are asked in order).
    cursor: std::cell::Cell<(usize, u32, u32)>,
}

#[derive(Clone, Copy, PartialEq)]
enum Begin {
    Var,
    Block,
    Comment,
}

impl<'s> Lexer<'s> {
    /// The 1-based line and column of a byte position, advancing a cursor so lexing stays linear.
    fn line_col(&self, pos: usize) -> (u32, u32) {
        let (mut at, mut line, mut col) = self.cursor.get();
        if pos < at {
            (at, line, col) = (0, 1, 1);
        }
        for c in self.src[at..pos].chars() {
            if c == '\n' {
                line += 1;
                col = 1;
            } else {
                col += 1;
            }
        }
        self.cursor.set((pos, line, col));
        (line, col)
    }

    fn push(&mut self, tok: Tok<'s>, pos: usize) {
        let (line, col) = self.line_col(pos);
        self.out.push(Token { tok, line, col });
    }

    /// Applies the whitespace control of a tag start to the text before it.
    fn strip_text(&self, text: &'s str, sign: Option<char>, kind: Begin) -> &'s str {
        match sign {
            Some('-') => py_rstrip(text),
            Some('+') => text,
            _ if kind == Begin::Var => text,
            _ => {
                let l_pos = text.rfind('\n').map_or(0, |i| i + 1);
                if l_pos > 0 || self.line_starting {
                    let tail = &text[l_pos..];
                    if !tail.is_empty() && tail.chars().all(is_py_space) {
                        return &text[..l_pos];
                    }
                }
                text
            }
        }
    }

    fn run(&mut self) -> Result<()> {
        let src = self.src;
        while self.pos < src.len() {
            let Some(rel) = find_tag_start(&src[self.pos..]) else {
                let text = &src[self.pos..];
                self.push(Tok::Data(text), self.pos);
                self.pos = src.len();
                break;
            };
            let start = self.pos + rel;
            let kind = match &src[start + 1..start + 2] {
                "{" => Begin::Var,
                "%" => Begin::Block,
                _ => Begin::Comment,
            };
            let sign = src[start + 2..].chars().next().filter(|c| *c == '-' || *c == '+');
            let after = start + 2 + sign.map_or(0, |_| 1);
            let text_pos = self.pos;
            let text = self.strip_text(&src[self.pos..start], sign, kind);
            if kind == Begin::Block {
                if let Some(body_start) = raw_begin(src, after) {
                    if !text.is_empty() {
                        self.push(Tok::Data(text), text_pos);
                    }
                    self.raw(start, body_start)?;
                    continue;
                }
            }
            if !text.is_empty() {
                self.push(Tok::Data(text), text_pos);
            }
            self.line_starting = false;
            match kind {
                Begin::Comment => self.comment(start, after)?,
                Begin::Var => {
                    self.push(Tok::VarBegin, start);
                    self.pos = after;
                    self.tag(false)?;
                }
                Begin::Block => {
                    self.push(Tok::BlockBegin, start);
                    self.pos = after;
                    self.tag(true)?;
                }
            }
        }
        // Jinja2's end of template stands where its last token starts (comments and whitespace
        // inside tags are not tokens), on line 1 when there is none.
        let (line, col) = self.out.last().map_or((1, 1), |t| (t.line, t.col));
        self.out.push(Token {
            tok: Tok::Eof,
            line,
            col,
        });
        Ok(())
    }

    fn comment(&mut self, start: usize, after: usize) -> Result<()> {
        let src = self.src;
        let Some(rel) = src[after..].find("#}") else {
            let (line, _) = self.line_col(start);
            return Err(err!(TemplateSyntaxError, "Missing end of comment tag").at(line, 0));
        };
        let hash = after + rel;
        let end = hash + 2;
        // `-#}` strips following whitespace, `+#}` keeps it, `#}` drops one newline (trim_blocks).
        let prev = if hash > after {
            src[..hash].chars().next_back()
        } else {
            None
        };
        self.pos = match prev {
            Some('-') => skip_space(src, end),
            Some('+') => end,
            _ if src[end..].starts_with('\n') => end + 1,
            _ => end,
        };
        self.line_starting = src[..self.pos].ends_with('\n');
        Ok(())
    }

    fn raw(&mut self, start: usize, body_start: usize) -> Result<()> {
        let src = self.src;
        let mut search = body_start;
        loop {
            let Some(rel) = src[search..].find("{%") else {
                if body_start == src.len() {
                    // Jinja2's lexer stops at the end of the source without looking for `endraw`.
                    self.pos = src.len();
                    return Ok(());
                }
                let (line, _) = self.line_col(start);
                return Err(err!(TemplateSyntaxError, "Missing end of raw directive").at(line, 0));
            };
            let tag = search + rel;
            let sign = src[tag + 2..].chars().next().filter(|c| *c == '-' || *c == '+');
            let p = skip_space(src, tag + 2 + sign.map_or(0, |_| 1));
            if src[p..].starts_with("endraw") {
                let q = skip_space(src, p + 6);
                let end = if src[q..].starts_with("+%}") {
                    Some(q + 3)
                } else if src[q..].starts_with("-%}") {
                    Some(skip_space(src, q + 3))
                } else if src[q..].starts_with("%}") {
                    Some(if src[q + 2..].starts_with('\n') { q + 3 } else { q + 2 })
                } else {
                    None
                };
                if let Some(end) = end {
                    self.line_starting = false;
                    let body = self.strip_text(&src[body_start..tag], sign, Begin::Block);
                    if !body.is_empty() {
                        self.push(Tok::Data(body), body_start);
                    }
                    self.pos = end;
                    self.line_starting = src[..end].ends_with('\n');
                    return Ok(());
                }
            }
            search = tag + 2;
        }
    }

    /// Lexes the inside of `{{ }}` or `{% %}` up to and including the end delimiter.
    fn tag(&mut self, block: bool) -> Result<()> {
        let src = self.src;
        let mut balance: Vec<&'static str> = Vec::new();
        loop {
            let pos = self.pos;
            if pos >= src.len() {
                return Ok(());
            }
            let rest = &src[pos..];
            if balance.is_empty() {
                if block {
                    let end = if rest.starts_with("+%}") {
                        Some(pos + 3)
                    } else if rest.starts_with("-%}") {
                        Some(skip_space(src, pos + 3))
                    } else {
                        rest.strip_prefix("%}")
                            .map(|after| if after.starts_with('\n') { pos + 3 } else { pos + 2 })
                    };
                    if let Some(end) = end {
                        self.push(Tok::BlockEnd, pos);
                        self.pos = end;
                        self.line_starting = src[..end].ends_with('\n');
                        return Ok(());
                    }
                } else {
                    let end = if rest.starts_with("-}}") {
                        Some(skip_space(src, pos + 3))
                    } else if rest.starts_with("}}") {
                        Some(pos + 2)
                    } else {
                        None
                    };
                    if let Some(end) = end {
                        self.push(Tok::VarEnd, pos);
                        self.pos = end;
                        self.line_starting = src[..end].ends_with('\n');
                        return Ok(());
                    }
                }
            }
            let c = rest.chars().next().unwrap_or(' ');
            if is_py_space(c) {
                self.pos = skip_space(src, pos);
                continue;
            }
            if let Some(len) = match_float(rest, pos > 0 && src.as_bytes()[pos - 1] == b'.') {
                let text: String = rest[..len].chars().filter(|c| *c != '_').collect();
                let v: f64 = text
                    .parse()
                    .map_err(|_| err!(TemplateSyntaxError, "invalid float literal {text}"))?;
                self.push(Tok::Float(v), pos);
                self.pos += len;
                continue;
            }
            if let Some((len, radix, digits_at)) = match_int(rest) {
                let digits: String = rest[digits_at..len].chars().filter(|c| *c != '_').collect();
                let (line, col) = self.line_col(pos);
                let tok = match i64::from_str_radix(&digits, radix) {
                    Ok(v) => Tok::Int(v),
                    // Beyond 64 bits the literal is read as Python's int() reads it (a decimal one of
                    // more than 4300 digits is refused).
                    Err(_) => Tok::BigInt(Box::new(
                        crate::pystr::parse_int(&digits, i64::from(radix))
                            .map_err(|e| crate::error::py_err(e).at(line, col))?,
                    )),
                };
                self.push(tok, pos);
                self.pos += len;
                continue;
            }
            if crate::pystr::is_jinja_name_char(c) {
                let len = rest
                    .char_indices()
                    .find(|(_, c)| !crate::pystr::is_jinja_name_char(*c))
                    .map_or(rest.len(), |(i, _)| i);
                if !crate::pystr::isidentifier(&rest[..len]) {
                    let (line, col) = self.line_col(pos);
                    return Err(err!(TemplateSyntaxError, "Invalid character in identifier").at(line, col));
                }
                self.push(Tok::Name(&rest[..len]), pos);
                self.pos += len;
                continue;
            }
            if c == '\'' || c == '"' {
                if let Some(len) = match_string(rest, c) {
                    let (line, col) = self.line_col(pos);
                    let v = decode_string(&rest[1..len - 1]).map_err(|e| e.at(line, col))?;
                    self.push(Tok::Str(v), pos);
                    self.pos += len;
                    continue;
                }
            }
            if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(**op)) {
                let (line, col) = self.line_col(pos);
                match *op {
                    "{" => balance.push("}"),
                    "(" => balance.push(")"),
                    "[" => balance.push("]"),
                    "}" | ")" | "]" => match balance.pop() {
                        None => {
                            return Err(err!(TemplateSyntaxError, "unexpected '{op}'").at(line, col));
                        }
                        Some(expected) if expected != *op => {
                            return Err(
                                err!(TemplateSyntaxError, "unexpected '{op}', expected '{expected}'").at(line, col)
                            );
                        }
                        _ => {}
                    },
                    _ => {}
                }
                self.push(Tok::Op(op), pos);
                self.pos += op.len();
                continue;
            }
            let (line, col) = self.line_col(pos);
            let mut repr = String::new();
            crate::value::repr::write_str_repr(&c.to_string(), &mut repr);
            // Python's index: characters, not bytes.
            let at = src[..pos].chars().count();
            return Err(err!(TemplateSyntaxError, "unexpected char {repr} at {at}").at(line, col));
        }
    }
}

fn find_tag_start(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while let Some(rel) = s[i..].find('{') {
        let p = i + rel;
        if matches!(bytes.get(p + 1), Some(b'{' | b'%' | b'#')) {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// If `{%` at `after` opens a raw block (`\s*raw\s*(-%}\s*|%})`), the position where its body starts.
fn raw_begin(src: &str, after: usize) -> Option<usize> {
    let p = skip_space(src, after);
    if !src[p..].starts_with("raw") {
        return None;
    }
    let q = skip_space(src, p + 3);
    if src[q..].starts_with("-%}") {
        Some(skip_space(src, q + 3))
    } else if src[q..].starts_with("%}") {
        Some(q + 2)
    } else {
        None
    }
}

fn digits_run(s: &[u8], mut i: usize, pred: impl Fn(u8) -> bool) -> usize {
    // `(\d+_)*\d+`: digits separated by single underscores.
    let start = i;
    loop {
        let run = i;
        while i < s.len() && pred(s[i]) {
            i += 1;
        }
        if i == run {
            return if run == start { start } else { run - 1 };
        }
        if i < s.len() && s[i] == b'_' && i + 1 < s.len() && pred(s[i + 1]) {
            i += 1;
        } else {
            return i;
        }
    }
}

fn match_float(s: &str, after_dot: bool) -> Option<usize> {
    if after_dot {
        return None;
    }
    let b = s.as_bytes();
    let dig = |c: u8| c.is_ascii_digit();
    let int_end = digits_run(b, 0, dig);
    if int_end == 0 {
        return None;
    }
    let mut i = int_end;
    let mut frac = false;
    if b.get(i) == Some(&b'.') {
        let e = digits_run(b, i + 1, dig);
        if e > i + 1 {
            i = e;
            frac = true;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let e = digits_run(b, j, dig);
        if e > j {
            return Some(e);
        }
    }
    frac.then_some(i)
}

/// Jinja2's integer literal: `0b…`, `0o…`, `0x…`, `[1-9](_?\d)*` or `0(_?0)*`. Returns (length, radix, digit start).
fn match_int(s: &str) -> Option<(usize, u32, usize)> {
    let b = s.as_bytes();
    let first = *b.first()?;
    if !first.is_ascii_digit() {
        return None;
    }
    let prefixed = |radix: u32, pred: fn(u8) -> bool| -> Option<(usize, u32, usize)> {
        // (_?[digits])+
        let mut i = 2;
        let mut any = false;
        loop {
            let j = if b.get(i) == Some(&b'_') { i + 1 } else { i };
            if b.get(j).is_some_and(|c| pred(*c)) {
                i = j + 1;
                any = true;
            } else {
                break;
            }
        }
        any.then_some((i, radix, 2))
    };
    if first == b'0' {
        let r = match b.get(1) {
            Some(b'b' | b'B') => prefixed(2, |c| c == b'0' || c == b'1'),
            Some(b'o' | b'O') => prefixed(8, |c| (b'0'..=b'7').contains(&c)),
            Some(b'x' | b'X') => prefixed(16, |c| c.is_ascii_hexdigit()),
            _ => None,
        };
        if r.is_some() {
            return r;
        }
        let mut i = 1;
        loop {
            let j = if b.get(i) == Some(&b'_') { i + 1 } else { i };
            if b.get(j) == Some(&b'0') {
                i = j + 1;
            } else {
                break;
            }
        }
        return Some((i, 10, 0));
    }
    let mut i = 1;
    loop {
        let j = if b.get(i) == Some(&b'_') { i + 1 } else { i };
        if b.get(j).is_some_and(|c| c.is_ascii_digit()) {
            i = j + 1;
        } else {
            break;
        }
    }
    Some((i, 10, 0))
}

fn match_string(s: &str, quote: char) -> Option<usize> {
    let mut chars = s.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        if c == '\\' {
            chars.next()?;
        } else if c == quote {
            return Some(i + 1);
        }
    }
    None
}

/// Decodes a string literal body as Jinja2 does: non-ASCII characters are first written as
/// backslash escapes, then the whole text is decoded with Python's `unicode_escape` rules.
/// Errors are unlocated `TemplateSyntaxError`s; the caller adds the literal's position.
fn decode_string(body: &str) -> Result<String> {
    let mut escaped = String::with_capacity(body.len());
    for c in body.chars() {
        let n = c as u32;
        if n < 0x80 {
            escaped.push(c);
        } else if n < 0x100 {
            escaped.push_str(&format!("\\x{n:02x}"));
        } else if n < 0x10000 {
            escaped.push_str(&format!("\\u{n:04x}"));
        } else {
            escaped.push_str(&format!("\\U{n:08x}"));
        }
    }
    let b = escaped.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    let hex = |from: usize, n: usize, what: &str| -> Result<char> {
        let digits = escaped
            .get(from..from + n)
            .filter(|d| d.bytes().all(|c| c.is_ascii_hexdigit()));
        let Some(digits) = digits else {
            return Err(err!(TemplateSyntaxError, "truncated {what} escape"));
        };
        let v = u32::from_str_radix(digits, 16).map_err(|e| err!(TemplateSyntaxError, "{e}"))?;
        match char::from_u32(v) {
            Some(c) => Ok(c),
            None if v > 0x10ffff => Err(err!(TemplateSyntaxError, "illegal Unicode character")),
            // Lone surrogates cannot be held in a Rust string; substitute U+FFFD.
            None => Ok('\u{fffd}'),
        }
    };
    while i < b.len() {
        let c = b[i];
        if c != b'\\' {
            let ch = escaped[i..].chars().next().unwrap_or('\0');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        let Some(&e) = b.get(i + 1) else {
            return Err(err!(TemplateSyntaxError, "\\ at end of string"));
        };
        i += 2;
        match e {
            b'\n' => {}
            b'\\' => out.push('\\'),
            b'\'' => out.push('\''),
            b'"' => out.push('"'),
            b'a' => out.push('\x07'),
            b'b' => out.push('\x08'),
            b'f' => out.push('\x0c'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'v' => out.push('\x0b'),
            b'0'..=b'7' => {
                let mut v = (e - b'0') as u32;
                let mut n = 1;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + (b[i] - b'0') as u32;
                    i += 1;
                    n += 1;
                }
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            b'x' => {
                out.push(hex(i, 2, "\\xXX")?);
                i += 2;
            }
            b'u' => {
                out.push(hex(i, 4, "\\uXXXX")?);
                i += 4;
            }
            b'U' => {
                out.push(hex(i, 8, "\\UXXXXXXXX")?);
                i += 8;
            }
            b'N' => {
                let named = escaped
                    .get(i..)
                    .and_then(|r| r.strip_prefix('{'))
                    .and_then(|r| r.find('}').map(|e| &r[..e]));
                let Some(name) = named else {
                    return Err(err!(TemplateSyntaxError, "malformed \\N character escape"));
                };
                let c = unicode_names2::character(name)
                    .ok_or_else(|| err!(TemplateSyntaxError, "unknown Unicode character name"))?;
                out.push(c);
                i += name.len() + 2;
            }
            _ => {
                out.push('\\');
                out.push(e as char);
            }
        }
    }
    Ok(out)
}

/// Lexes as far as the source allows: the tokens before a lexing error, ended by [`Tok::Eof`] at
/// the error's position, and the error. Jinja2 lexes while it parses, so a parse error in those
/// tokens is raised before the lexing error.
pub fn tokenize_lazily(src: &str) -> (Vec<Token<'_>>, Option<Error>) {
    let mut lexer = Lexer {
        cursor: std::cell::Cell::new((0, 1, 1)),
        src,
        pos: 0,
        line_starting: true,
        out: Vec::new(),
    };
    match lexer.run() {
        Ok(()) => (lexer.out, None),
        Err(e) => {
            let (line, col) = (e.line().unwrap_or(u32::MAX), e.column().unwrap_or(u32::MAX));
            lexer.out.push(Token {
                tok: Tok::Eof,
                line,
                col,
            });
            (lexer.out, Some(e))
        }
    }
}
