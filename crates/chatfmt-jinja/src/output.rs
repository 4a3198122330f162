//! Provenance of rendered output: which spans came from template text, which from input values
//! (and from where in the input), and which were computed during rendering.

use crate::context::{Borrowed, Context, Layer, Origin, Span};
use crate::value::Value;
use serde_json::Value as Json;

/// The origin of a span while rendering: template text, the address of a borrowed string, or
/// computed text with the range of [`SpanRecorder`]'s reads its expression made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawOrigin {
    Template,
    Borrowed(usize),
    Computed(usize, usize),
}

/// Byte spans recorded during a render.
#[derive(Debug, Default)]
pub(crate) struct SpanRecorder {
    spans: Vec<(usize, usize, RawOrigin)>,
    /// Addresses of the context strings and JSON arrays and objects the template read.
    reads: Vec<usize>,
    /// How many of `reads` came before the last span was recorded.
    since: usize,
}

impl SpanRecorder {
    /// Notes a value the template read, when it may be part of the context.
    #[inline]
    pub(crate) fn note(&mut self, v: &Value<'_>) {
        match v {
            // Empty strings share one dangling address: they name nothing.
            Value::Str(s) if !s.is_empty() => self.reads.push(s.as_ptr() as usize),
            Value::Json(j) => self.reads.push(*j as *const Json as usize),
            _ => {}
        }
    }

    /// The origin of computed text written now: the reads since the previous span.
    pub(crate) fn computed(&self) -> RawOrigin {
        RawOrigin::Computed(self.since, self.reads.len())
    }

    /// Records that `start..end` of the output came from `origin`; adjacent template spans merge.
    pub(crate) fn record(&mut self, start: usize, end: usize, origin: RawOrigin) {
        if start == end {
            return;
        }
        self.since = self.reads.len();
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
            index_values(v, k.clone(), &mut index);
        }
        for layer in &ctx.layers {
            match layer {
                Layer::Var(name, Borrowed::Json(v)) => index_values(v, name.to_string(), &mut index),
                Layer::Var(name, Borrowed::List(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        index_values(item, format!("{name}[{i}]"), &mut index);
                    }
                }
                Layer::Map(m) => {
                    for (k, v) in *m {
                        index_values(v, k.clone(), &mut index);
                    }
                }
            }
        }
        index.sort_by_key(|(start, _, _)| *start);
        let path_of = |addr: usize| {
            let at = index.partition_point(|(s, _, _)| *s <= addr);
            match at.checked_sub(1).map(|i| &index[i]) {
                Some((s, len, path)) if addr < s + len.max(&1) => Some(path),
                _ => None,
            }
        };
        let mut chars = CharOffsets::new(text);
        self.spans
            .into_iter()
            .map(|(start, end, raw)| {
                let origin = match raw {
                    RawOrigin::Template => Origin::Template,
                    RawOrigin::Computed(from, to) => {
                        let mut paths: Vec<String> = (self.reads.get(from..to).unwrap_or_default().iter())
                            .filter_map(|&addr| path_of(addr).cloned())
                            .collect();
                        paths.sort_unstable();
                        paths.dedup();
                        Origin::Computed(paths)
                    }
                    RawOrigin::Borrowed(addr) => path_of(addr).map_or(Origin::Template, |p| Origin::Input(p.clone())),
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

/// Every string, array and object of a JSON value: (address, byte length, path). A string is found
/// by the address of its text, an array or object by its own (how the evaluator sees each).
fn index_values(v: &Json, path: String, out: &mut Vec<(usize, usize, String)>) {
    let node = (v as *const Json as usize, std::mem::size_of::<Json>());
    match v {
        Json::String(s) => out.push((s.as_ptr() as usize, s.len(), path)),
        Json::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                index_values(item, format!("{path}[{i}]"), out);
            }
            out.push((node.0, node.1, path));
        }
        Json::Object(m) => {
            for (k, item) in m {
                index_values(item, format!("{path}.{k}"), out);
            }
            out.push((node.0, node.1, path));
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
