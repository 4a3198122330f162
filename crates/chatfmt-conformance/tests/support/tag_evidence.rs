//! Comparing provenance masks with a template's own `{% generation %}` blocks: the template without
//! its tags, and the characters where the two disagree beyond whitespace and the assistant's header.
#![allow(dead_code)] // each test file uses a different subset

use chatfmt::jinja::CodePoints;
use chatfmt::ChatSpans;
use serde_json::Value as Json;

/// The message a context path belongs to (`messages[3].content` → 3).
pub fn message_of(path: &str) -> Option<usize> {
    let rest = path.strip_prefix("messages[")?;
    rest[..rest.find(']')?].parse().ok()
}

pub fn is_assistant(m: &Json) -> bool {
    m["role"] == "assistant"
}

/// The template without its `{% generation %}` / `{% endgeneration %}` tags.
pub fn without_tags(source: &str) -> String {
    let mut out = String::new();
    let mut rest = source;
    while let Some(at) = rest.find("{%") {
        let Some(end) = rest[at..].find("%}") else { break };
        let tag = rest[at + 2..at + end].trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
        out.push_str(&rest[..at]);
        if tag != "generation" && tag != "endgeneration" {
            out.push_str(&rest[at..at + end + 2]);
        }
        rest = &rest[at + end + 2..];
    }
    out.push_str(rest);
    out
}

/// The assistant spans of `s` in code points, as the tags were recorded (Python string indices).
fn assistant_code_points(s: &ChatSpans) -> Vec<(usize, usize)> {
    let text = CodePoints::new(&s.rendered.text);
    s.assistant_spans.iter().map(|&span| text.span(span)).collect()
}

/// The characters (code points) where provenance spans and the tags disagree, other than
/// whitespace and the assistants' headers: the characters between the previous message's content
/// and this one's.
pub fn differing_chars(messages: &[Json], s: &ChatSpans, tags: &[(usize, usize)]) -> Vec<usize> {
    let text: Vec<char> = s.rendered.text.chars().collect();
    let code_points = CodePoints::new(&s.rendered.text);
    let ours = assistant_code_points(s);
    let inside = |spans: &[(usize, usize)], c: usize| spans.iter().any(|&(a, b)| a <= c && c < b);
    let mut headers = Vec::new();
    let mut prev_end = 0;
    for m in &s.messages {
        if is_assistant(&messages[m.index]) {
            // A message that printed none of its content is all header.
            match (m.content.first(), m.turn) {
                (Some(&first), _) => headers.push((prev_end, code_points.span(first).0)),
                (None, Some(turn)) => headers.push((prev_end, code_points.span(turn).1)),
                (None, None) => {}
            }
        }
        if let Some(&last) = m.content.last() {
            prev_end = code_points.span(last).1;
        }
    }
    (0..text.len())
        .filter(|&c| inside(tags, c) != inside(&ours, c))
        .filter(|&c| !text[c].is_whitespace() && !inside(&headers, c))
        .collect()
}

/// Provenance spans against the tags: the first difference of [`differing_chars`], described.
pub fn against_tags(messages: &[Json], s: &ChatSpans, tags: &[(usize, usize)]) -> Option<String> {
    let differing = differing_chars(messages, s, tags);
    let &c = differing.first()?;
    let text: Vec<char> = s.rendered.text.chars().collect();
    let around: String = text[c.saturating_sub(20)..(c + 20).min(text.len())].iter().collect();
    Some(format!(
        "{} chars differ from the tags, first {c} in {around:?}; tags {tags:?}, provenance {:?}",
        differing.len(),
        assistant_code_points(s)
    ))
}
