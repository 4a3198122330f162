//! Parsing of `str.format` strings (the replacement-field syntax).
//!
//! [`format_iter`] yields literal text and replacement fields one at a time,
//! assigning automatic field numbers like CPython; rendering each piece as it
//! comes (look the value up, walk [`FormatField::accessors`], apply
//! [`FormatField::conversion`], expand a spec with fields through
//! [`FormatIter::spec_iter`], then
//! [`apply_format_spec`](super::apply_format_spec)) reproduces CPython's
//! results and the order of its errors exactly.

use super::PyError;

/// One piece of a parsed format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatPiece<'a> {
    /// Literal text, a slice of the input (`{{` and `}}` already reduced to
    /// one brace: an escape ends one literal piece).
    Literal(&'a str),
    /// A replacement field.
    Field(FormatField<'a>),
}

/// Which argument a field refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldArg<'a> {
    /// A positional argument: explicit (`{0}`) or automatically numbered (`{}`).
    Index(usize),
    /// A keyword argument (`{name}`); any text that is not all digits,
    /// e.g. `{-1}` or `{ 0 }` names the keyword `"-1"` or `" 0 "`.
    Name(&'a str),
}

/// One step of a field's access chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldAccessor<'a> {
    /// `.name`: `getattr(obj, name)`.
    Attr(&'a str),
    /// `[123]`: `obj[123]` with an integer.
    Index(usize),
    /// `[key]`: `obj["key"]` with a string.
    Key(&'a str),
}

/// A field's conversion (`!s`, `!r`, `!a`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// `!s`: `str(value)`.
    Str,
    /// `!r`: `repr(value)`.
    Repr,
    /// `!a`: `ascii(value)`.
    Ascii,
}

/// A replacement field `{arg.path!c:spec}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatField<'a> {
    /// The argument.
    pub arg: FieldArg<'a>,
    /// The raw access chain after the argument name, e.g. `.b[c][0]`; walk
    /// it with [`FormatField::accessors`].
    pub path: &'a str,
    /// The raw conversion character after `!`, if any; check it with
    /// [`FormatField::conversion`].
    pub conversion_char: Option<char>,
    /// The raw format spec after `:` (empty if none). If it contains `{`
    /// it holds nested fields: expand it with [`FormatIter::spec_iter`];
    /// otherwise it is the spec string itself.
    pub spec_text: &'a str,
}

/// Python's `get_integer`: `None` if `s` is not all ASCII digits (or is
/// empty), an error if it overflows.
fn get_integer(s: &str) -> Result<Option<usize>, PyError> {
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_digit()) {
        return Ok(None);
    }
    let mut v: usize = 0;
    for d in s.bytes() {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add((d - b'0') as usize))
            .filter(|&v| v <= isize::MAX as usize)
            .ok_or_else(|| PyError::value("Too many decimal digits in format string"))?;
    }
    Ok(Some(v))
}

impl<'a> FormatField<'a> {
    /// The conversion, with CPython's error for an unknown one
    /// (`ValueError: Unknown conversion specifier x`).
    pub fn conversion(&self) -> Result<Option<Conversion>, PyError> {
        match self.conversion_char {
            None => Ok(None),
            Some('s') => Ok(Some(Conversion::Str)),
            Some('r') => Ok(Some(Conversion::Repr)),
            Some('a') => Ok(Some(Conversion::Ascii)),
            Some(c) if (c as u32) > 32 && (c as u32) < 127 => {
                Err(PyError::value(format!("Unknown conversion specifier {c}")))
            }
            Some(c) => Err(PyError::value(format!(
                "Unknown conversion specifier \\x{:x}",
                c as u32
            ))),
        }
    }

    /// The access chain, step by step; a malformed step yields CPython's
    /// error at that point (as Python raises it only when it gets there).
    pub fn accessors(&self) -> Accessors<'a> {
        Accessors { rest: self.path }
    }
}

/// Iterator over a field's access chain (see [`FormatField::accessors`]).
#[derive(Debug, Clone)]
pub struct Accessors<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Accessors<'a> {
    type Item = Result<FieldAccessor<'a>, PyError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut chars = self.rest.chars();
        let first = chars.next()?;
        let result = match first {
            '.' => {
                let body = &self.rest[1..];
                let end = body.find(['.', '[']).unwrap_or(body.len());
                let name = &body[..end];
                self.rest = &body[end..];
                if name.is_empty() {
                    Err(PyError::value("Empty attribute in format string"))
                } else {
                    get_integer(name).map(|_| FieldAccessor::Attr(name))
                }
            }
            '[' => {
                let body = &self.rest[1..];
                match body.find(']') {
                    None => {
                        self.rest = "";
                        Err(PyError::value("Missing ']' in format string"))
                    }
                    Some(end) => {
                        let key = &body[..end];
                        self.rest = &body[end + 1..];
                        if key.is_empty() {
                            Err(PyError::value("Empty attribute in format string"))
                        } else {
                            get_integer(key).map(|i| match i {
                                Some(i) => FieldAccessor::Index(i),
                                None => FieldAccessor::Key(key),
                            })
                        }
                    }
                }
            }
            _ => {
                self.rest = "";
                Err(PyError::value(
                    "Only '.' or '[' may follow ']' in format field specifier",
                ))
            }
        };
        if result.is_err() {
            self.rest = "";
        }
        Some(result)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Numbering {
    Init,
    Auto(usize),
    Manual,
}

/// The automatic-numbering state, owned by the top-level iterator and
/// borrowed by the ones expanding nested specs.
enum NumberingRef<'n> {
    Own(Numbering),
    Borrowed(&'n mut Numbering),
}

impl NumberingRef<'_> {
    fn get(&mut self) -> &mut Numbering {
        match self {
            NumberingRef::Own(n) => n,
            NumberingRef::Borrowed(n) => n,
        }
    }
}

/// Lazily parses a format string piece by piece (see [`format_iter`]).
/// After an error it yields nothing more.
pub struct FormatIter<'a, 'n> {
    rest: &'a str,
    depth: u32,
    numbering: NumberingRef<'n>,
}

/// Starts parsing a `str.format` string. Each item is a literal piece or a
/// field, or CPython's error at that point (`Single '}' encountered in
/// format string`, `cannot switch from manual field specification to
/// automatic field numbering`, ...).
///
/// A field's nested spec is parsed with [`FormatIter::spec_iter`], then
/// applied with [`apply_format_spec`] (see the test
/// `renders_piece_by_piece`).
pub fn format_iter(s: &str) -> FormatIter<'_, 'static> {
    FormatIter {
        rest: s,
        depth: 2,
        numbering: NumberingRef::Own(Numbering::Init),
    }
}

impl<'a> FormatIter<'a, '_> {
    /// An iterator over the pieces of a field's spec (its `spec_text`),
    /// sharing this iterator's automatic numbering; call it when rendering
    /// that field, after its value and conversion. Fails with `Max string
    /// recursion exceeded` for a spec nested in a spec.
    pub fn spec_iter(&mut self, spec_text: &'a str) -> Result<FormatIter<'a, '_>, PyError> {
        if self.depth <= 1 {
            return Err(PyError::value("Max string recursion exceeded"));
        }
        Ok(FormatIter {
            rest: spec_text,
            depth: self.depth - 1,
            numbering: NumberingRef::Borrowed(self.numbering.get()),
        })
    }
}

impl<'a> Iterator for FormatIter<'a, '_> {
    type Item = Result<FormatPiece<'a>, PyError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let item = self.next_piece();
        if item.is_err() {
            self.rest = "";
        }
        Some(item)
    }
}

impl<'a> FormatIter<'a, '_> {
    /// Parses the next piece; `self.rest` is not empty.
    fn next_piece(&mut self) -> Result<FormatPiece<'a>, PyError> {
        let rest = self.rest;
        let Some(i) = rest.find(['{', '}']) else {
            self.rest = "";
            return Ok(FormatPiece::Literal(rest));
        };
        let brace = rest.as_bytes()[i];
        let after = &rest[i + 1..];
        if after.as_bytes().first() == Some(&brace) {
            // Escaped brace: literal text up to and including one brace.
            self.rest = &after[1..];
            return Ok(FormatPiece::Literal(&rest[..i + 1]));
        }
        if brace == b'}' {
            return Err(PyError::value("Single '}' encountered in format string"));
        }
        if after.is_empty() {
            return Err(PyError::value("Single '{' encountered in format string"));
        }
        if i > 0 {
            // The literal first; the field is parsed on the next call (no
            // lookup can happen in between, so errors keep their order).
            self.rest = &rest[i..];
            return Ok(FormatPiece::Literal(&rest[..i]));
        }
        let (field, remaining) = self.parse_field(after)?;
        self.rest = remaining;
        Ok(FormatPiece::Field(field))
    }

    /// Parses a field whose opening brace was just consumed; returns it and
    /// the text after its closing brace.
    fn parse_field(&mut self, s: &'a str) -> Result<(FormatField<'a>, &'a str), PyError> {
        // The field name runs to '}', ':' or '!', skipping over [...].
        let mut chars = s.char_indices();
        let mut term = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '{' => return Err(PyError::value("unexpected '{' in field name")),
                '[' => {
                    for (_, c2) in chars.by_ref() {
                        if c2 == ']' {
                            break;
                        }
                    }
                }
                '}' | ':' | '!' => {
                    term = Some((i, c));
                    break;
                }
                _ => {}
            }
        }
        let Some((name_end, term_char)) = term else {
            return Err(PyError::value("expected '}' before end of string"));
        };
        let name = &s[..name_end];
        let mut rest = &s[name_end + 1..];
        let mut conversion_char = None;
        let mut spec_text = "";
        if term_char == '!' || term_char == ':' {
            if term_char == '!' {
                let mut it = rest.chars();
                let Some(conv) = it.next() else {
                    return Err(PyError::value("end of string while looking for conversion specifier"));
                };
                conversion_char = Some(conv);
                rest = it.as_str();
                let mut it = rest.chars();
                match it.next() {
                    None => {}
                    Some('}') => {
                        let (arg, path) = self.field_name(name)?;
                        let field = FormatField {
                            arg,
                            path,
                            conversion_char,
                            spec_text: "",
                        };
                        return Ok((field, it.as_str()));
                    }
                    Some(':') => rest = it.as_str(),
                    Some(_) => return Err(PyError::value("expected ':' after conversion specifier")),
                }
            }
            // The spec runs to the matching '}'.
            let mut count = 1;
            let mut end = None;
            for (i, c) in rest.char_indices() {
                match c {
                    '{' => count += 1,
                    '}' => {
                        count -= 1;
                        if count == 0 {
                            end = Some(i);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(end) = end else {
                return Err(PyError::value("unmatched '{' in format spec"));
            };
            spec_text = &rest[..end];
            rest = &rest[end + 1..];
        }
        let (arg, path) = self.field_name(name)?;
        let field = FormatField {
            arg,
            path,
            conversion_char,
            spec_text,
        };
        Ok((field, rest))
    }

    /// Splits a field name into the argument and the access chain, applying
    /// automatic numbering.
    fn field_name(&mut self, name: &'a str) -> Result<(FieldArg<'a>, &'a str), PyError> {
        let first_end = name.find(['.', '[']).unwrap_or(name.len());
        let (first, path) = name.split_at(first_end);
        let index = get_integer(first)?;
        let arg = if first.is_empty() {
            let numbering = self.numbering.get();
            let n = match *numbering {
                Numbering::Manual => {
                    return Err(PyError::value(
                        "cannot switch from manual field specification to automatic field numbering",
                    ))
                }
                Numbering::Init => 0,
                Numbering::Auto(n) => n,
            };
            *numbering = Numbering::Auto(n + 1);
            FieldArg::Index(n)
        } else if let Some(i) = index {
            let numbering = self.numbering.get();
            match *numbering {
                Numbering::Auto(_) => {
                    return Err(PyError::value(
                        "cannot switch from automatic field numbering to manual field specification",
                    ))
                }
                _ => *numbering = Numbering::Manual,
            }
            FieldArg::Index(i)
        } else {
            FieldArg::Name(first)
        };
        Ok((arg, path))
    }
}

#[cfg(test)]
mod tests {
    /// `IndexError` for a positional field past the arguments, worded as CPython.
    fn format_index_error(index: usize) -> PyError {
        PyError::new(
            super::super::PyErrorKind::IndexError,
            format!("Replacement index {index} out of range for positional args tuple"),
        )
    }

    use super::*;
    use crate::pystr::test_support::{check, load, result, string, A};
    use crate::pystr::{apply_format_spec, ascii_escape, key_error, FormatArg, PyErrorKind};

    struct Str(&'static str);

    impl FormatArg for Str {
        fn py_str(&self) -> String {
            self.0.to_string()
        }
        fn py_repr(&self) -> String {
            let mut r = String::new();
            crate::pystr::str_repr(self.0, &mut r);
            r
        }
        fn as_int(&self) -> Option<i64> {
            None
        }
        fn as_float(&self) -> Option<f64> {
            None
        }
        fn type_name(&self) -> &str {
            "str"
        }
    }

    fn render(iter: &mut FormatIter<'_, '_>, args: &[Str], out: &mut String) -> Result<(), PyError> {
        while let Some(piece) = iter.next() {
            match piece? {
                FormatPiece::Literal(text) => out.push_str(text),
                FormatPiece::Field(field) => {
                    let FieldArg::Index(i) = field.arg else {
                        unimplemented!("keywords")
                    };
                    let value = args.get(i).ok_or_else(|| format_index_error(i))?;
                    let converted = field
                        .conversion()?
                        .map(|_| Str(Box::leak(value.py_repr().into_boxed_str())));
                    let mut spec = String::new();
                    if field.spec_text.contains('{') {
                        render(&mut iter.spec_iter(field.spec_text)?, args, &mut spec)?;
                    } else {
                        spec.push_str(field.spec_text);
                    }
                    out.push_str(&apply_format_spec(&spec, converted.as_ref().unwrap_or(value))?);
                }
            }
        }
        Ok(())
    }

    /// `"[{0:>{1}}|{0!r}]".format("ab", "5")`, piece by piece.
    #[test]
    fn renders_piece_by_piece() {
        let mut out = String::new();
        render(&mut format_iter("[{0:>{1}}|{0!r}]"), &[Str("ab"), Str("5")], &mut out).unwrap_or(());
        assert_eq!(out, "[   ab|'ab']");
    }

    const ARGS: [A<'static>; 6] = [
        A::S("x"),
        A::I(5),
        A::F(0x4004000000000000),
        A::S("<"),
        A::I(7),
        A::S("ü"),
    ];
    const KW: [(&str, A<'static>); 2] = [("a", A::S("A")), ("b", A::I(3))];

    /// Looks a field's value up, walks its accessors and applies its conversion.
    fn field_value(f: &FormatField<'_>) -> Result<A<'static>, PyError> {
        let mut value: A<'static> = *match f.arg {
            FieldArg::Index(i) => ARGS.get(i).ok_or_else(|| format_index_error(i))?,
            FieldArg::Name(n) => KW
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v)
                .ok_or_else(|| key_error(n))?,
        };
        for step in f.accessors() {
            value = match (step?, value) {
                (FieldAccessor::Index(i), A::S(s)) => {
                    let c = s
                        .chars()
                        .nth(i)
                        .map(String::from)
                        .ok_or_else(|| PyError::new(PyErrorKind::IndexError, "string index out of range"))?;
                    A::S(Box::leak(c.into_boxed_str()))
                }
                (FieldAccessor::Key(_), A::S(_)) => {
                    return Err(PyError::type_error("string indices must be integers, not 'str'"))
                }
                (FieldAccessor::Attr(_), _) => panic!("attributes are not supported by the test"),
                (_, v) => {
                    return Err(PyError::type_error(format!(
                        "'{}' object is not subscriptable",
                        v.type_name()
                    )))
                }
            };
        }
        let text = match f.conversion()? {
            None => return Ok(value),
            Some(Conversion::Str) => value.py_str(),
            Some(Conversion::Repr) => value.py_repr(),
            Some(Conversion::Ascii) => ascii_escape(&value.py_repr()),
        };
        Ok(A::S(Box::leak(text.into_boxed_str())))
    }

    /// Renders lazily, as CPython does.
    fn render_iter(iter: &mut FormatIter<'_, '_>, out: &mut String) -> Result<(), PyError> {
        while let Some(piece) = iter.next() {
            match piece? {
                FormatPiece::Literal(s) => out.push_str(s),
                FormatPiece::Field(f) => {
                    let value = field_value(&f)?;
                    let mut spec = String::new();
                    if f.spec_text.contains('{') {
                        render_iter(&mut iter.spec_iter(f.spec_text)?, &mut spec)?;
                    } else {
                        spec.push_str(f.spec_text);
                    }
                    out.push_str(&apply_format_spec(&spec, &value)?);
                }
            }
        }
        Ok(())
    }

    #[test]
    fn format_strings_match_cpython() {
        for case in load("format", 63).iter().chain(&load("random_format", 2500)) {
            let (fmt, want) = (string(&case[0]), result(&case[1], string));
            let mut out = String::new();
            let got = render_iter(&mut format_iter(fmt), &mut out).map(|_| out);
            check(got, &want, &format!("{fmt:?}.format(...)"));
        }
    }

    #[test]
    fn literal_pieces_are_input_slices() {
        let s = "a{{b}}c{0}d";
        let pieces: Vec<_> = format_iter(s).collect::<Result<_, _>>().unwrap_or_default();
        assert_eq!(pieces.len(), 5);
        for p in &pieces {
            if let FormatPiece::Literal(l) = p {
                let (lp, sp) = (l.as_ptr() as usize, s.as_ptr() as usize);
                assert!(lp >= sp && lp + l.len() <= sp + s.len());
            }
        }
    }

    #[test]
    fn accessor_chains() {
        let Some(Ok(FormatPiece::Field(f))) = format_iter("{a.b[c][0].d[ x ]!r:>{}}").next() else {
            panic!("no field");
        };
        assert_eq!(f.arg, FieldArg::Name("a"));
        let steps: Vec<_> = f.accessors().collect();
        assert_eq!(
            steps,
            vec![
                Ok(FieldAccessor::Attr("b")),
                Ok(FieldAccessor::Key("c")),
                Ok(FieldAccessor::Index(0)),
                Ok(FieldAccessor::Attr("d")),
                Ok(FieldAccessor::Key(" x ")),
            ]
        );
        assert_eq!(f.conversion(), Ok(Some(Conversion::Repr)));
        assert_eq!(f.spec_text, ">{}");
        let bad = |s: &str| -> Vec<String> {
            match format_iter(s).next() {
                Some(Ok(FormatPiece::Field(f))) => f
                    .accessors()
                    .map(|r| r.map_or_else(|e| e.message, |a| format!("{a:?}")))
                    .collect(),
                _ => vec![],
            }
        };
        assert_eq!(
            bad("{0[1]x}"),
            ["Index(1)", "Only '.' or '[' may follow ']' in format field specifier"]
        );
        assert_eq!(bad("{0.a.}"), ["Attr(\"a\")", "Empty attribute in format string"]);
        assert_eq!(bad("{0[]}"), ["Empty attribute in format string"]);
        assert_eq!(
            bad("{0[99999999999999999999]}"),
            ["Too many decimal digits in format string"]
        );
    }
}
