//! Provenance of rendered output: which spans came from template text, which from input values
//! (and from where in the input), and which were computed during rendering.

use crate::template::{Borrowed, Context, Layer};
use serde_json::Value as Json;

/// Where a span of output came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Template text or a string literal of the template.
    Template,
    /// A string of the render context, printed unchanged or as a sub-string (e.g. after `trim`):
    /// its JSON path, such as `messages[2].content` or `messages[0].content[1].text`.
    Input(String),
    /// Text the template computed (numbers, `tojson`, concatenations, macro output, ...).
    Computed,
}

/// A span of the rendered text, in character offsets (Unicode code points), and its origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Offset of the first character.
    pub start: usize,
    /// Offset just past the last character.
    pub end: usize,
    /// Where the text of the span came from.
    pub origin: Origin,
}

/// The origin of a span while rendering: template text, or the address of a borrowed string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawOrigin {
    Template,
    Borrowed(usize),
    Computed,
}

/// Byte spans recorded during a render.
#[derive(Debug, Default)]
pub(crate) struct SpanRecorder {
    spans: Vec<(usize, usize, RawOrigin)>,
}

impl SpanRecorder {
    /// Records that `start..end` of the output came from `origin`; adjacent template spans merge.
    pub(crate) fn record(&mut self, start: usize, end: usize, origin: RawOrigin) {
        if start == end {
            return;
        }
        if let Some(last) = self.spans.last_mut() {
            if last.1 == start && last.2 == RawOrigin::Template && origin == RawOrigin::Template {
                last.1 = end;
                return;
            }
        }
        self.spans.push((start, end, origin));
    }

    /// Resolves addresses to JSON paths of `vars` and byte offsets of `text` to character offsets.
    pub(crate) fn resolve(self, text: &str, ctx: &Context) -> Vec<Span> {
        let mut index = Vec::new();
        for (k, v) in &ctx.vars {
            index_strings(v, k.clone(), &mut index);
        }
        for layer in &ctx.layers {
            match layer {
                Layer::Var(name, Borrowed::Json(v)) => index_strings(v, name.to_string(), &mut index),
                Layer::Var(name, Borrowed::List(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        index_strings(item, format!("{name}[{i}]"), &mut index);
                    }
                }
                Layer::Map(m) => {
                    for (k, v) in *m {
                        index_strings(v, k.clone(), &mut index);
                    }
                }
            }
        }
        index.sort_by_key(|(start, _, _)| *start);
        let mut chars = CharOffsets::new(text);
        self.spans
            .into_iter()
            .map(|(start, end, raw)| {
                let origin = match raw {
                    RawOrigin::Template => Origin::Template,
                    RawOrigin::Computed => Origin::Computed,
                    RawOrigin::Borrowed(addr) => {
                        let at = index.partition_point(|(s, _, _)| *s <= addr);
                        match at.checked_sub(1).map(|i| &index[i]) {
                            Some((s, len, path)) if addr < s + len.max(&1) => Origin::Input(path.clone()),
                            _ => Origin::Template,
                        }
                    }
                };
                Span {
                    start: chars.at(start),
                    end: chars.at(end),
                    origin,
                }
            })
            .collect()
    }
}

/// Every string of a JSON value: (address, byte length, path).
fn index_strings(v: &Json, path: String, out: &mut Vec<(usize, usize, String)>) {
    match v {
        Json::String(s) => out.push((s.as_ptr() as usize, s.len(), path)),
        Json::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                index_strings(item, format!("{path}[{i}]"), out);
            }
        }
        Json::Object(m) => {
            for (k, item) in m {
                index_strings(item, format!("{path}.{k}"), out);
            }
        }
        _ => {}
    }
}

/// Converts increasing byte offsets to character offsets in one pass.
struct CharOffsets<'t> {
    text: &'t str,
    byte: usize,
    chars: usize,
}

impl<'t> CharOffsets<'t> {
    fn new(text: &'t str) -> Self {
        CharOffsets {
            text,
            byte: 0,
            chars: 0,
        }
    }

    fn at(&mut self, byte: usize) -> usize {
        if byte < self.byte {
            self.byte = 0;
            self.chars = 0;
        }
        self.chars += self.text.get(self.byte..byte).map_or(0, |s| s.chars().count());
        self.byte = byte;
        self.chars
    }
}
