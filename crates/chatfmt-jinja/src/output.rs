//! Provenance of rendered output: which spans came from template text, which from input values
//! (and from where in the input), and which were computed during rendering.

use crate::context::{Borrowed, ByteSpan, Context, Layer, Origin, Span};
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

    /// Resolves addresses to JSON paths of `vars`.
    pub(crate) fn resolve(self, ctx: &Context) -> Vec<Span> {
        let mut index = ValueIndex::default();
        for (k, v) in &ctx.vars {
            let root = index.node(None, Step::Name(k));
            index.add(v, root);
        }
        for layer in &ctx.layers {
            match layer {
                Layer::Var(name, Borrowed::Json(v)) => {
                    let root = index.node(None, Step::Name(name));
                    index.add(v, root);
                }
                Layer::Var(name, Borrowed::List(items)) => {
                    let root = index.node(None, Step::Name(name));
                    for (i, item) in items.iter().enumerate() {
                        let at = index.node(Some(root), Step::Index(i));
                        index.add(item, at);
                    }
                }
                Layer::Map(m) => {
                    for (k, v) in *m {
                        let root = index.node(None, Step::Name(k));
                        index.add(v, root);
                    }
                }
            }
        }
        index.places.sort_by_key(|&(start, _, _)| start);
        let mut names: Vec<Option<String>> = vec![None; index.nodes.len()];
        let mut path_of = |addr: usize| -> Option<String> {
            let at = index.places.partition_point(|&(s, _, _)| s <= addr);
            match at.checked_sub(1).map(|i| index.places[i]) {
                Some((s, len, node)) if addr < s + len.max(1) => {
                    Some(names[node].get_or_insert_with(|| index.path(node)).clone())
                }
                _ => None,
            }
        };
        self.spans
            .into_iter()
            .map(|(start, end, raw)| {
                let origin = match raw {
                    RawOrigin::Template => Origin::Template,
                    RawOrigin::Computed(from, to) => {
                        let mut paths: Vec<String> = (self.reads.get(from..to).unwrap_or_default().iter())
                            .filter_map(|&addr| path_of(addr))
                            .collect();
                        paths.sort_unstable();
                        paths.dedup();
                        Origin::Computed(paths)
                    }
                    RawOrigin::Borrowed(addr) => path_of(addr).map_or(Origin::Template, Origin::Input),
                };
                Span { start, end, origin }
            })
            .collect()
    }
}

/// One step of a JSON path: a variable or key name, or a list index.
#[derive(Clone, Copy)]
enum Step<'c> {
    Name(&'c str),
    Index(usize),
}

/// Every string, array and object of the render context, found by address, with its JSON path
/// kept as a chain of steps: a path is spelled out only for the values a span names.
#[derive(Default)]
struct ValueIndex<'c> {
    /// (parent, step) of each path.
    nodes: Vec<(Option<usize>, Step<'c>)>,
    /// (address, byte length, node) of each value: a string by the address of its text, an array
    /// or object by its own (how the evaluator sees each).
    places: Vec<(usize, usize, usize)>,
}

impl<'c> ValueIndex<'c> {
    fn node(&mut self, parent: Option<usize>, step: Step<'c>) -> usize {
        self.nodes.push((parent, step));
        self.nodes.len() - 1
    }

    fn add(&mut self, v: &'c Json, node: usize) {
        match v {
            Json::String(s) => self.places.push((s.as_ptr() as usize, s.len(), node)),
            Json::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let at = self.node(Some(node), Step::Index(i));
                    self.add(item, at);
                }
                self.places
                    .push((v as *const Json as usize, std::mem::size_of::<Json>(), node));
            }
            Json::Object(m) => {
                for (k, item) in m {
                    let at = self.node(Some(node), Step::Name(k));
                    self.add(item, at);
                }
                self.places
                    .push((v as *const Json as usize, std::mem::size_of::<Json>(), node));
            }
            _ => {}
        }
    }

    /// The path of `node`, such as `messages[2].content`.
    fn path(&self, node: usize) -> String {
        let mut steps = Vec::with_capacity(4);
        let mut at = Some(node);
        while let Some(n) = at {
            steps.push(self.nodes[n].1);
            at = self.nodes[n].0;
        }
        let mut out = String::with_capacity(32);
        for (i, step) in steps.iter().rev().enumerate() {
            match step {
                Step::Name(name) if i == 0 => out.push_str(name),
                Step::Name(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                Step::Index(k) => {
                    out.push('[');
                    out.push_str(itoa::Buffer::new().format(*k));
                    out.push(']');
                }
            }
        }
        out
    }
}

/// Code-point offsets (Python string indices) of a text's byte offsets: the one conversion, made
/// only where an output promises Python indices (the JSON of `render --json` and `tokenize --json`,
/// dataset columns, the Python API, comparisons with goldens recorded in Python).
#[derive(Debug, Clone, Default)]
pub struct CodePoints {
    /// For each character of more than one byte, in order: the byte offset just past it, and how
    /// many bytes beyond one each such character up to it has, summed.
    wide: Vec<(usize, usize)>,
}

impl CodePoints {
    /// The conversion for `text` (nothing to remember when it is ASCII).
    pub fn new(text: &str) -> Self {
        if text.is_ascii() {
            return CodePoints::default();
        }
        let mut extra = 0;
        let wide = (text.char_indices())
            .filter(|(_, c)| !c.is_ascii())
            .map(|(at, c)| {
                extra += c.len_utf8() - 1;
                (at + c.len_utf8(), extra)
            })
            .collect();
        CodePoints { wide }
    }

    /// `span` (byte offsets on character boundaries of the text) as a half-open range of code points.
    pub fn span(&self, (start, end): ByteSpan) -> (usize, usize) {
        let at = |byte: usize| {
            let before = self.wide.partition_point(|&(past, _)| past <= byte);
            byte - before.checked_sub(1).map_or(0, |i| self.wide[i].1)
        };
        (at(start), at(end))
    }

    /// The half-open code-point range of the characters holding any byte of `start..end`, for
    /// offsets that may fall inside a character (a byte-level token can hold part of one).
    pub fn covering(&self, (start, end): ByteSpan) -> (usize, usize) {
        // The wide character `byte` is inside of (strictly after its first byte), as (its first
        // byte, its byte just past, its extra bytes, the extra bytes of wide characters before it).
        let inside = |byte: usize| {
            let i = self.wide.partition_point(|&(past, _)| past <= byte);
            let before = i.checked_sub(1).map_or(0, |j| self.wide[j].1);
            match self.wide.get(i) {
                Some(&(past, extra)) if past - (extra - before) - 1 < byte => {
                    Some((past - (extra - before) - 1, past, extra, before))
                }
                _ => None,
            }
        };
        let first = match inside(start) {
            Some((char_start, _, _, before)) => char_start - before,
            None => self.span((start, start)).0,
        };
        let last = match inside(end) {
            Some((_, past, extra, _)) => past - extra,
            None => self.span((end, end)).0,
        };
        (first, last)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn covering_snaps_offsets_inside_characters_outward() {
        // "a" (1 byte), "é" (2), "😀" (4), "b" (1): bytes 0, 1-2, 3-6, 7.
        let cp = CodePoints::new("aé😀b");
        assert_eq!(cp.covering((0, 1)), (0, 1));
        assert_eq!(cp.covering((1, 3)), (1, 2));
        assert_eq!(cp.covering((3, 5)), (2, 3), "the first half of the emoji");
        assert_eq!(cp.covering((5, 7)), (2, 3), "the second half of the emoji");
        assert_eq!(cp.covering((2, 8)), (1, 4));
        assert_eq!(cp.covering((7, 8)), (3, 4));
        assert_eq!(CodePoints::new("ab").covering((1, 2)), (1, 2));
    }

    use super::*;

    #[test]
    fn code_points_count_the_characters_before_each_boundary() {
        let text = "a\u{e9}\u{6771}\u{1f600}b".repeat(3);
        let cp = CodePoints::new(&text);
        let boundaries: Vec<usize> = (text.char_indices().map(|(b, _)| b)).chain([text.len()]).collect();
        for (chars, &byte) in boundaries.iter().enumerate() {
            assert_eq!(cp.span((byte, byte)), (chars, chars), "byte {byte}");
        }
        assert_eq!(cp.span((1, 10)), (1, 4));
        assert_eq!(CodePoints::new("plain").span((2, 5)), (2, 5));
    }
}
