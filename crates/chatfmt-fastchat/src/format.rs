//! Python `str.format` for system templates, with the single keyword `system_message`.
//!
//! FastChat builds the system prompt as `system_template.format(system_message=...)`: `{{` and
//! `}}` unescape, `{system_message}` is replaced (braces inside the message itself stay), any
//! other field is an error of the same class Python raises. Supported on the field: the `!s`
//! conversion and string format specs (`[[fill]align][0][width][.precision]`); other features
//! (attribute or index access, `!r`, numeric specs) are reported as errors, never guessed.

use super::error::{Error, ErrorKind, Result};

/// Formats `template` the way `template.format(system_message=system_message)` does.
pub fn format_system(template: &str, system_message: &str) -> Result<String> {
    let mut out = String::with_capacity(template.len() + system_message.len());
    let mut chars = template.chars().peekable();
    let mut auto_index = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '{' => {
                let mut field = String::new();
                let mut depth = 1usize;
                loop {
                    match chars.next() {
                        None => return Err(syntax("expected '}' before end of string")),
                        Some('{') => {
                            depth += 1;
                            field.push('{');
                        }
                        Some('}') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                            field.push('}');
                        }
                        Some(other) => field.push(other),
                    }
                }
                render_field(&field, system_message, &mut auto_index, &mut out)?;
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '}' => return Err(syntax("Single '}' encountered in format string")),
            other => out.push(other),
        }
    }
    Ok(out)
}

fn syntax(message: &str) -> Error {
    Error::new(ErrorKind::SystemTemplateSyntax, format!("system_template: {message}"))
}

fn render_field(field: &str, value: &str, auto_index: &mut usize, out: &mut String) -> Result<()> {
    let name_end = field.find(['.', '[', '!', ':']).unwrap_or(field.len());
    let (name, rest) = field.split_at(name_end);
    if name.is_empty() || name.bytes().all(|b| b.is_ascii_digit()) {
        let index = if name.is_empty() {
            let i = *auto_index;
            *auto_index += 1;
            i
        } else {
            name.parse::<usize>().unwrap_or(usize::MAX)
        };
        return Err(Error::new(
            ErrorKind::SystemTemplatePositional,
            format!("Replacement index {index} out of range for positional args tuple"),
        ));
    }
    if name != "system_message" {
        return Err(Error::new(ErrorKind::SystemTemplateField, format!("'{name}'")));
    }
    let (conversion, spec) = match rest.strip_prefix('!') {
        Some(after) => match after.split_once(':') {
            Some((conv, spec)) => (Some(conv), spec),
            None => (Some(after), ""),
        },
        None => match rest.strip_prefix(':') {
            Some(spec) => (None, spec),
            None if rest.is_empty() => (None, ""),
            None => {
                return Err(syntax(&format!(
                    "attribute or index access in {{{field}}} is not supported"
                )))
            }
        },
    };
    match conversion {
        None | Some("s") => {}
        Some(conv) => return Err(syntax(&format!("conversion !{conv} in {{{field}}} is not supported"))),
    }
    apply_string_spec(value, spec, out)
        .ok_or_else(|| syntax(&format!("format spec {spec:?} in {{{field}}} is not supported")))
}

/// Applies a string format spec `[[fill]align][0][width][.precision][s]`; `None` if unsupported.
fn apply_string_spec(value: &str, spec: &str, out: &mut String) -> Option<()> {
    if spec.is_empty() {
        out.push_str(value);
        return Some(());
    }
    let chars: Vec<char> = spec.chars().collect();
    let is_align = |c: char| matches!(c, '<' | '>' | '^');
    let (explicit_fill, align, mut i) = if chars.len() >= 2 && is_align(chars[1]) {
        (Some(chars[0]), chars[1], 2)
    } else if is_align(chars[0]) {
        (None, chars[0], 1)
    } else {
        (None, '<', 0)
    };
    // The `0` flag pads with zeros unless a fill is given (strings stay left-aligned).
    let zero = chars.get(i) == Some(&'0');
    if zero {
        i += 1;
    }
    let fill = explicit_fill.unwrap_or(if zero { '0' } else { ' ' });
    let digits = |i: &mut usize| -> Option<usize> {
        let start = *i;
        while *i < chars.len() && chars[*i].is_ascii_digit() {
            *i += 1;
        }
        (start < *i).then(|| chars[start..*i].iter().collect::<String>().parse().ok())?
    };
    let width = digits(&mut i).unwrap_or(0);
    let precision = if chars.get(i) == Some(&'.') {
        i += 1;
        Some(digits(&mut i)?)
    } else {
        None
    };
    if chars.get(i) == Some(&'s') {
        i += 1;
    }
    if i != chars.len() {
        return None;
    }
    let text: String = match precision {
        Some(p) => value.chars().take(p).collect(),
        None => value.to_owned(),
    };
    let pad = width.saturating_sub(text.chars().count());
    let (left, right) = match align {
        '>' => (pad, 0),
        '^' => (pad / 2, pad - pad / 2),
        _ => (0, pad),
    };
    out.extend(std::iter::repeat_n(fill, left));
    out.push_str(&text);
    out.extend(std::iter::repeat_n(fill, right));
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutes_and_unescapes() {
        assert_eq!(
            format_system("<<{system_message}>> {{x}}", "SYS {x}").unwrap(),
            "<<SYS {x}>> {x}"
        );
    }

    #[test]
    fn errors_like_python() {
        let e = format_system("{other} {system_message}", "s").unwrap_err();
        assert_eq!((e.kind(), e.message()), (ErrorKind::SystemTemplateField, "'other'"));
        let e = format_system("{} {system_message}", "s").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::SystemTemplatePositional);
        assert_eq!(
            e.message(),
            "Replacement index 0 out of range for positional args tuple"
        );
        assert_eq!(
            format_system("a } b", "s").unwrap_err().kind(),
            ErrorKind::SystemTemplateSyntax
        );
    }

    #[test]
    fn string_specs_like_python() {
        // Expected values printed by CPython 3.11: format('ab', spec).
        for (spec, expected) in [
            ("010", "ab00000000"),
            (">010", "00000000ab"),
            ("*>010", "********ab"),
            ("0", "ab"),
            ("05.2", "ab000"),
            ("^5", " ab  "),
            ("x<5", "abxxx"),
            ("<05", "ab000"),
        ] {
            let template = format!("{{system_message:{spec}}}");
            assert_eq!(format_system(&template, "ab").unwrap(), expected, "{spec}");
        }
    }

    #[test]
    fn string_specs() {
        assert_eq!(
            format_system("[{system_message:*^7.3}]", "abcdef").unwrap(),
            "[**abc**]"
        );
        assert_eq!(format_system("[{system_message!s:>4}]", "ab").unwrap(), "[  ab]");
    }
}
