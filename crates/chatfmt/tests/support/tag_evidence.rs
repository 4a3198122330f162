//! Comparing provenance masks with a template's own `{% generation %}` blocks: the template without
//! its tags, and the characters where the two disagree beyond whitespace and the assistant's header.
#![allow(dead_code)] // each test file uses a different subset

use chatfmt::jinja::Origin;
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

/// The characters where provenance spans and the tags disagree, other than whitespace and the
/// assistants' headers (between the previous message's content and this one's first character).
pub fn differing_chars(messages: &[Json], s: &ChatSpans, tags: &[(usize, usize)]) -> Vec<usize> {
    let text: Vec<char> = s.rendered.text.chars().collect();
    let inside = |spans: &[(usize, usize)], c: usize| spans.iter().any(|&(a, b)| a <= c && c < b);
    // Each message's first produced character.
    let mut first = vec![usize::MAX; messages.len()];
    for span in &s.rendered.spans {
        let owners: Vec<usize> = match &span.origin {
            Origin::Input(p) => message_of(p).into_iter().collect(),
            Origin::Computed(ps) => ps.iter().filter_map(|p| message_of(p)).collect(),
            Origin::Template => Vec::new(),
        };
        for o in owners {
            if let Some(f) = first.get_mut(o) {
                *f = (*f).min(span.start);
            }
        }
    }
    let mut headers = Vec::new();
    let mut prev_end = 0;
    for m in &s.messages {
        if is_assistant(&messages[m.index]) {
            // A message that printed nothing of its own is all header.
            match (first[m.index], m.turn) {
                (usize::MAX, Some((_, end))) => headers.push((prev_end, end)),
                (usize::MAX, None) => {}
                (f, _) => headers.push((prev_end, f)),
            }
        }
        if let Some(last) = m.content.last() {
            prev_end = last.1;
        }
    }
    (0..text.len())
        .filter(|&c| inside(tags, c) != inside(&s.assistant_spans, c))
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
        s.assistant_spans
    ))
}
