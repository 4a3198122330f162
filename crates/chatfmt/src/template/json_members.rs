//! Text edits of one top-level member of a JSON object that keep every other byte: a serde round trip
//! would reformat the file and turn integers beyond `f64` (transformers writes `model_max_length` as
//! 1000000000000000019884624838656) into floats. Values are written as Python's
//! `json.dumps(indent=2, sort_keys=True, ensure_ascii=False)` writes them, transformers' format.

use serde_json::Value as Json;

/// A member of the top-level object, as byte offsets into the text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Member {
    /// Just after the `{` or `,` before the member (where its leading whitespace starts).
    lead: usize,
    /// The opening quote of the key.
    key_start: usize,
    /// The key, unescaped.
    key: String,
    /// The first byte of the value.
    value_start: usize,
    /// Just after the value.
    value_end: usize,
}

/// The top-level object of a JSON text: its braces and members.
#[derive(Debug)]
struct Object {
    open: usize,
    close: usize,
    members: Vec<Member>,
}

struct Scanner<'t> {
    bytes: &'t [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.peek() == Some(b)).then(|| self.pos += 1)
    }

    /// Skips a string starting at its opening quote and returns its raw contents (escapes kept).
    fn string(&mut self) -> Option<&[u8]> {
        self.expect(b'"')?;
        let start = self.pos;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
        }
        let raw = self.bytes.get(start..self.pos)?;
        self.pos += 1;
        Some(raw)
    }

    /// Skips any value.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                let start = self.pos;
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.pos += 1;
                }
                (self.pos > start).then_some(())
            }
        }
    }
}

/// Unescapes a JSON string's raw contents (`None` if an escape is malformed).
fn unescape(raw: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(raw).ok()?;
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'u' => {
                let hex = |chars: &mut std::str::Chars<'_>| {
                    let digits: String = chars.take(4).collect();
                    u32::from_str_radix(&digits, 16).ok().filter(|_| digits.len() == 4)
                };
                let unit = hex(&mut chars)?;
                let code = if (0xD800..0xDC00).contains(&unit) {
                    let rest = chars.as_str();
                    match rest
                        .strip_prefix("\\u")
                        .and_then(|r| u32::from_str_radix(r.get(..4)?, 16).ok())
                    {
                        Some(low) if (0xDC00..0xE000).contains(&low) => {
                            chars = rest.get(6..)?.chars();
                            0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        }
                        _ => unit,
                    }
                } else {
                    unit
                };
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// Scans the top-level object of `text`; `None` if the text is not a well-formed JSON object.
fn scan(text: &str) -> Option<Object> {
    let mut s = Scanner {
        bytes: text.as_bytes(),
        pos: 0,
    };
    s.skip_ws();
    let open = s.pos;
    s.expect(b'{')?;
    let mut members = Vec::new();
    let mut lead = s.pos;
    s.skip_ws();
    if s.peek() != Some(b'}') {
        loop {
            let key_start = s.pos;
            let key = unescape(s.string()?)?;
            s.skip_ws();
            s.expect(b':')?;
            s.skip_ws();
            let value_start = s.pos;
            s.value()?;
            members.push(Member {
                lead,
                key_start,
                key,
                value_start,
                value_end: s.pos,
            });
            s.skip_ws();
            if s.peek() == Some(b',') {
                s.pos += 1;
                lead = s.pos;
                s.skip_ws();
            } else {
                break;
            }
        }
    }
    let close = s.pos;
    s.expect(b'}')?;
    s.skip_ws();
    (s.pos == text.len()).then_some(Object { open, close, members })
}

/// Removes every top-level member named `key`, with its comma and the whitespace before the next
/// member, as `json.dumps` would have written the object without it. `None` if `text` is not a JSON
/// object.
pub(super) fn remove_member(text: &str, key: &str) -> Option<String> {
    let mut text = text.to_string();
    loop {
        let obj = scan(&text)?;
        let Some(i) = obj.members.iter().position(|m| m.key == key) else {
            return Some(text);
        };
        let m = &obj.members[i];
        let range = if obj.members.len() == 1 {
            obj.open + 1..obj.close
        } else if let Some(next) = obj.members.get(i + 1) {
            m.key_start..next.key_start
        } else {
            obj.members[i - 1].value_end..m.value_end
        };
        text.replace_range(range, "");
    }
}

/// Sets the top-level member `key` to `value`: the last member of that name has its value replaced
/// (earlier duplicates are removed); otherwise the member is inserted before the first key that
/// sorts after it, or last, with the whitespace of its neighbours. `None` if `text` is not a JSON
/// object.
pub(super) fn set_member(text: &str, key: &str, value: &Json) -> Option<String> {
    let mut text = text.to_string();
    let obj = loop {
        let obj = scan(&text)?;
        let found: Vec<usize> = (0..obj.members.len()).filter(|&i| obj.members[i].key == key).collect();
        if found.len() < 2 {
            break obj;
        }
        let first = &obj.members[found[0]];
        let next = &obj.members[found[0] + 1];
        text.replace_range(first.key_start..next.key_start, "");
    };
    let indent = obj.members.first().map_or(Some("  ".to_string()), |m| {
        let lead = &text[m.lead..m.key_start];
        lead.rfind('\n').map(|nl| lead[nl + 1..].to_string())
    });
    let written = python_json(value, indent.as_deref(), 1);
    let member = format!("{}: {written}", python_json(&Json::String(key.to_string()), None, 1));
    // The whitespace after the new comma: a neighbour's on an indented object, else `json.dumps`' one space.
    let lead = |m: &Member| match indent {
        Some(_) => text[m.lead..m.key_start].to_string(),
        None => " ".to_string(),
    };
    if let Some(m) = obj.members.iter().find(|m| m.key == key) {
        text.replace_range(m.value_start..m.value_end, &written);
    } else if let Some(after) = obj.members.iter().find(|m| m.key.as_str() > key) {
        let insert = format!("{member},{}", lead(after));
        text.insert_str(after.key_start, &insert);
    } else if let Some(last) = obj.members.last() {
        let insert = format!(",{}{member}", lead(last));
        text.insert_str(last.value_end, &insert);
    } else {
        text.replace_range(obj.open + 1..obj.close, &format!("\n  {member}\n"));
    }
    Some(text)
}

/// `value` as Python's `json.dumps(value, indent=indent, sort_keys=True, ensure_ascii=False)` writes it
/// at nesting `depth`; `None` for `indent` is the one-line form (`", "` and `": "` separators).
fn python_json(value: &Json, indent: Option<&str>, depth: usize) -> String {
    let (open_item, close) = match indent {
        Some(unit) => (
            format!("\n{}", unit.repeat(depth + 1)),
            format!("\n{}", unit.repeat(depth)),
        ),
        None => (String::new(), String::new()),
    };
    let separator = if indent.is_some() { "," } else { ", " };
    match value {
        Json::Array(items) if !items.is_empty() => {
            let inner: Vec<String> = items
                .iter()
                .map(|v| format!("{open_item}{}", python_json(v, indent, depth + 1)))
                .collect();
            format!("[{}{close}]", inner.join(separator))
        }
        Json::Object(map) if !map.is_empty() => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{open_item}{}: {}",
                        python_json(&Json::String(k.to_string()), indent, depth + 1),
                        python_json(&map[k.as_str()], indent, depth + 1)
                    )
                })
                .collect();
            format!("{{{}{close}}}", inner.join(separator))
        }
        Json::Array(_) => "[]".to_string(),
        Json::Object(_) => "{}".to_string(),
        // serde_json escapes strings as json.dumps(ensure_ascii=False) does: `"`, `\`, the short escapes
        // `\b \f \n \r \t`, other control characters as lowercase `\u00XX`, everything else as is.
        scalar => scalar.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const BIG: &str = "1000000000000000019884624838656";

    fn config(members: &[&str]) -> String {
        format!("{{\n  {}\n}}\n", members.join(",\n  "))
    }

    #[test]
    fn removes_the_key_wherever_it_is_and_keeps_every_other_byte() {
        let tpl = r#""chat_template": "{{ '}, \"x\": [' }}\u00e9\ud83d\ude00 caf\u00e9""#;
        let a = r#""a\u00e9": "naïve ✓ \u001b \"q\" \\""#;
        let big = format!(r#""model_max_length": {BIG}"#);
        let z = r#""zeta": {"chat_template": "nested stays", "list": [1, {"chat_template": 2}]}"#;
        for (before, after) in [
            (config(&[tpl, a, &big, z]), config(&[a, &big, z])),
            (config(&[a, tpl, &big, z]), config(&[a, &big, z])),
            (config(&[a, &big, z, tpl]), config(&[a, &big, z])),
            (config(&[tpl]), "{}\n".to_string()),
        ] {
            assert_eq!(remove_member(&before, "chat_template").as_deref(), Some(after.as_str()));
        }
        let none = config(&[a, z]);
        assert_eq!(remove_member(&none, "chat_template").as_deref(), Some(none.as_str()));
    }

    #[test]
    fn a_key_spelled_with_escapes_is_the_same_key() {
        let text = r#"{"chat\u005ftemplate": "x", "b": 1}"#;
        assert_eq!(remove_member(text, "chat_template").as_deref(), Some(r#"{"b": 1}"#));
        let pair = r#"{"\ud83d\ude00": 1, "é": 2}"#;
        assert_eq!(remove_member(pair, "😀").as_deref(), Some(r#"{"é": 2}"#));
    }

    #[test]
    fn duplicates_and_compact_text() {
        let text = r#"{"chat_template":"a","b":[1,2],"chat_template":"c"}"#;
        assert_eq!(remove_member(text, "chat_template").as_deref(), Some(r#"{"b":[1,2]}"#));
        let set = set_member(text, "chat_template", &json!("new"));
        assert_eq!(set.as_deref(), Some(r#"{"b":[1,2],"chat_template":"new"}"#));
    }

    #[test]
    fn not_an_object_is_refused() {
        for text in ["[1]", "", "{\"a\": 1", "{\"a\" 1}", "{\"a\": 1} x", "\"chat_template\""] {
            assert_eq!(remove_member(text, "chat_template"), None, "{text}");
        }
    }

    #[test]
    fn sets_a_value_as_python_writes_it() {
        let a = r#""added": "naïve""#;
        let big = format!(r#""model_max_length": {BIG}"#);
        let value = json!([{"template": "x\u{7}\u{1b}\n\"é\\", "name": "default"}, {"name": "rag", "template": "y"}]);
        let written = "[\n    {\n      \"name\": \"default\",\n      \"template\": \"x\\u0007\\u001b\\n\\\"é\\\\\"\n    },\n    {\n      \"name\": \"rag\",\n      \"template\": \"y\"\n    }\n  ]";
        let member = format!("\"chat_template\": {written}");
        // Inserted in sorted position, last, into an empty object, and replaced in place.
        assert_eq!(
            set_member(&config(&[a, &big]), "chat_template", &value),
            Some(config(&[a, &member, &big]))
        );
        assert_eq!(
            set_member(&config(&[a]), "chat_template", &value),
            Some(config(&[a, &member]))
        );
        assert_eq!(set_member("{}\n", "chat_template", &value), Some(config(&[&member])));
        let old = r#""chat_template": "old {\"}""#;
        assert_eq!(
            set_member(&config(&[a, old, &big]), "chat_template", &value),
            Some(config(&[a, &member, &big]))
        );
        let one_line = set_member(r#"{"a": 1}"#, "chat_template", &json!([{"name": "n", "template": "t"}]));
        assert_eq!(
            one_line.as_deref(),
            Some(r#"{"a": 1, "chat_template": [{"name": "n", "template": "t"}]}"#)
        );
    }
}
