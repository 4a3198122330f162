//! Provenance of rendered output: which spans came from template text, which from input values
//! (and from where in the input), and which were computed during rendering.

use crate::context::{Borrowed, ByteSpan, Context, Layer, Origin, Span};
use crate::value::Value;
use serde_json::Value as Json;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The origin of a span while rendering: template text, the address of a borrowed string, or
/// computed text with the range of [`SpanRecorder`]'s reads its expression made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawOrigin {
    Template,
    Borrowed(usize),
    Computed(usize, usize),
}

/// How many spans and reads a template's last tracked render recorded: the next one starts with
/// buffers that size.
#[derive(Debug, Default)]
pub(crate) struct SpanSizes {
    spans: AtomicUsize,
    reads: AtomicUsize,
}

impl SpanSizes {
    /// A recorder with buffers of the sizes last remembered.
    pub(crate) fn recorder<'a>(&self) -> SpanRecorder<'a> {
        SpanRecorder {
            spans: Vec::with_capacity(self.spans.load(Ordering::Relaxed)),
            reads: Vec::with_capacity(self.reads.load(Ordering::Relaxed)),
            pieces: Vec::with_capacity(8),
            ..SpanRecorder::default()
        }
    }

    /// Remembers the sizes `rec` reached.
    pub(crate) fn remember(&self, rec: &SpanRecorder<'_>) {
        self.spans.store(rec.spans.len(), Ordering::Relaxed);
        self.reads.store(rec.reads.len(), Ordering::Relaxed);
    }
}

/// Byte spans recorded during a render.
#[derive(Debug, Default)]
pub(crate) struct SpanRecorder<'a> {
    spans: Vec<(usize, usize, RawOrigin)>,
    /// The top-level names the render looked up in the context: values under other names are
    /// out of its reach, so no span can name them.
    names: Vec<&'a str>,
    /// Addresses of the context strings and JSON arrays and objects the template read.
    reads: Vec<usize>,
    /// The pieces of the expression being printed (see [`SpanRecorder::piece`]), each with the
    /// length of `reads` once it was evaluated.
    pieces: Vec<(usize, usize, Piece, usize)>,
    /// How many of `reads` came before the last span was recorded.
    since: usize,
    /// How many of `spans` belong to the output a capture in progress interrupted (see
    /// [`SpanRecorder::begin_capture`]).
    floor: usize,
    /// Strings computed while rendering, by address: what `{% set %}` computed from what the
    /// template read (see [`SpanRecorder::derive`]) and captured text with its spans (see
    /// [`SpanRecorder::end_capture`]). Each string is kept while it is listed, so that no other
    /// string takes its address.
    derived: foldhash::HashMap<usize, Derived>,
    /// How many entries `derived` may reach before the strings no one else holds are dropped.
    derived_cap: usize,
    /// The spans of captured text, each from its text's start, in ranges [`Derived`] names.
    captured: Vec<(usize, usize, RawOrigin)>,
}

/// What a string computed while rendering stands for.
#[derive(Debug)]
struct Derived {
    kept: Rc<str>,
    /// The reads it was computed from (a `{% set %}` value's).
    reads: Vec<usize>,
    /// The range of `captured` holding the spans of its text when it was captured (a macro's
    /// output, a `{% set %}` block).
    spans: (usize, usize),
}

/// Where a piece of a printed expression came from (see [`SpanRecorder::piece`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Piece {
    /// Computed from the reads made while it was evaluated.
    Computed,
    /// The text of the borrowed string at this address.
    Borrowed(usize),
    /// A string with spans of its own (see [`SpanRecorder::end_capture`]).
    Captured(CapturedSpans),
}

/// The range of [`SpanRecorder`]'s captured spans that holds a captured string's spans.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CapturedSpans(usize, usize);

/// What [`SpanRecorder::begin_capture`] saves for [`SpanRecorder::end_capture`].
pub(crate) struct CaptureMark {
    floor: usize,
    since: usize,
}

impl<'a> SpanRecorder<'a> {
    /// Notes that the render looked `name` up in the context.
    pub(crate) fn note_name(&mut self, name: &'a str) {
        if !self.names.contains(&name) {
            self.names.push(name);
        }
    }

    /// Notes a value the template read, when it may be part of the context.
    #[inline]
    pub(crate) fn note(&mut self, v: &Value<'_>) {
        match v {
            // Empty strings share one dangling address: they name nothing.
            Value::Str(s) if !s.is_empty() => self.reads.push(s.as_ptr() as usize),
            Value::Json(j) => self.reads.push(*j as *const Json as usize),
            // A string `set` computed stands for what it was computed from.
            Value::String(s) | Value::Safe(s) if !self.derived.is_empty() => {
                if let Some(d) = self.derived.get(&(s.as_ptr() as usize)) {
                    self.reads.extend_from_slice(&d.reads);
                }
            }
            _ => {}
        }
    }

    /// How many reads were noted so far: the mark [`derive`](Self::derive) takes.
    pub(crate) fn reads_mark(&self) -> usize {
        self.reads.len()
    }

    /// Remembers that `v`, a value `{% set %}` bound, was computed from the reads since `mark`: when
    /// it is read again (printed later, or used in another computation), it notes them again, so
    /// that what it prints names the input it came from however far from the `set`.
    pub(crate) fn derive(&mut self, v: &Value<'_>, mark: usize) {
        let (Value::String(s) | Value::Safe(s)) = v else { return };
        let Some(reads) = self.reads.get(mark..).filter(|r| !r.is_empty()) else {
            return;
        };
        let reads = reads.to_vec();
        self.keep(s).reads = reads;
    }

    /// The entry of `s` in `derived`, made empty when there is none.
    fn keep(&mut self, s: &Rc<str>) -> &mut Derived {
        if self.derived.len() >= self.derived_cap.max(64) {
            // Strings only this map holds can no longer be read.
            self.derived.retain(|_, d| Rc::strong_count(&d.kept) > 1);
            self.derived_cap = 2 * self.derived.len();
        }
        self.derived.entry(s.as_ptr() as usize).or_insert_with(|| Derived {
            kept: Rc::clone(s),
            reads: Vec::new(),
            spans: (0, 0),
        })
    }

    /// Drops the reads since `mark`, which a statement that wrote nothing made (a condition, a
    /// `{% set %}`): text written later is not computed from them. What the statement decided
    /// was whether text is written, and a string it bound stands for them itself
    /// ([`derive`](Self::derive)).
    pub(crate) fn unread(&mut self, mark: usize) {
        self.reads.truncate(mark);
    }

    /// Starts capturing output (a macro's body, a `{% set %}` block) into a buffer of its own: the
    /// spans recorded until [`end_capture`](Self::end_capture) are that buffer's.
    pub(crate) fn begin_capture(&mut self) -> CaptureMark {
        let mark = CaptureMark {
            floor: self.floor,
            since: self.since,
        };
        self.floor = self.spans.len();
        mark
    }

    /// Ends the capture `mark` began, whose text became `text` (when it did): the spans recorded
    /// since stand for it, so that printing it as it is records them again, as printing its text
    /// where it was captured would have. Text that uses it otherwise is computed from every read
    /// made since the span before the capture began.
    pub(crate) fn end_capture(&mut self, mark: CaptureMark, text: Option<&Rc<str>>) {
        let floor = std::mem::replace(&mut self.floor, mark.floor);
        self.since = mark.since;
        if let Some(t) = text.filter(|_| self.spans.len() > floor) {
            let start = self.captured.len();
            self.captured.extend_from_slice(&self.spans[floor..]);
            let end = self.captured.len();
            self.keep(t).spans = (start, end);
        }
        self.spans.truncate(floor);
    }

    /// Where the spans of `s` are kept when it was captured with spans (see
    /// [`end_capture`](Self::end_capture)).
    #[inline]
    pub(crate) fn captured(&self, s: &Rc<str>) -> Option<CapturedSpans> {
        if self.derived.is_empty() {
            return None;
        }
        let (from, to) = self.derived.get(&(s.as_ptr() as usize))?.spans;
        (to > from).then_some(CapturedSpans(from, to))
    }

    /// Records the spans of a captured string (see [`captured`](Self::captured)), its text written
    /// at `at`.
    pub(crate) fn replay(&mut self, CapturedSpans(from, to): CapturedSpans, at: usize) {
        for k in from..to {
            let (start, end, origin) = self.captured[k];
            self.record(at + start, at + end, origin);
        }
    }

    /// Starts printing an expression piece by piece; gives the mark [`forget_reads`] returns to.
    ///
    /// [`forget_reads`]: SpanRecorder::forget_reads
    pub(crate) fn begin_pieces(&mut self) -> usize {
        self.pieces.clear();
        self.reads.len()
    }

    /// Notes that `start..end` of the output is a piece of the expression being printed. Its spans
    /// are recorded by [`record_pieces`], once every piece was evaluated, as printing a value
    /// records them.
    ///
    /// [`record_pieces`]: SpanRecorder::record_pieces
    pub(crate) fn piece(&mut self, start: usize, end: usize, piece: Piece) {
        self.pieces.push((start, end, piece, self.reads.len()));
    }

    /// Drops the pieces and the reads since `mark` (the expression is evaluated again another way).
    pub(crate) fn forget_reads(&mut self, mark: usize) {
        self.pieces.clear();
        self.reads.truncate(mark);
    }

    /// Records the spans of each piece, in order: a computed piece is computed from the reads made
    /// after the previous piece (the first one, since the previous span), and a captured one
    /// records its own spans, as if each piece were printed on its own.
    pub(crate) fn record_pieces(&mut self) {
        let pieces = std::mem::take(&mut self.pieces);
        let mut from = self.since;
        for &(start, end, piece, to) in &pieces {
            match piece {
                Piece::Computed => self.record(start, end, RawOrigin::Computed(from, to)),
                Piece::Borrowed(addr) => self.record(start, end, RawOrigin::Borrowed(addr)),
                Piece::Captured(spans) => self.replay(spans, start),
            }
            from = to;
        }
        self.pieces = pieces;
    }

    /// The origin of computed text written now: the reads since the previous span.
    pub(crate) fn computed(&self) -> RawOrigin {
        RawOrigin::Computed(self.since, self.reads.len())
    }

    /// Records that `start..end` of the output (of the capture in progress, if any) came from
    /// `origin`; adjacent template spans merge.
    pub(crate) fn record(&mut self, start: usize, end: usize, origin: RawOrigin) {
        if start == end {
            return;
        }
        self.since = self.reads.len();
        // A capture's first span starts its own buffer.
        if let Some(last) = self.spans.get_mut(self.floor..).and_then(<[_]>::last_mut) {
            if last.1 == start && last.2 == RawOrigin::Template && origin == RawOrigin::Template {
                last.1 = end;
                return;
            }
        }
        self.spans.push((start, end, origin));
    }

    /// The addresses the spans name, ascending, each once.
    fn wanted(&self) -> Vec<usize> {
        let mut wanted: Vec<usize> = Vec::with_capacity(self.spans.len() + 8);
        for &(_, _, raw) in &self.spans {
            match raw {
                RawOrigin::Template => {}
                RawOrigin::Borrowed(addr) => wanted.push(addr),
                RawOrigin::Computed(from, to) => wanted.extend_from_slice(self.reads(from, to)),
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        wanted
    }

    fn reads(&self, from: usize, to: usize) -> &[usize] {
        self.reads.get(from..to).unwrap_or_default()
    }

    /// Resolves addresses to JSON paths of `vars` and the layers, into `out`.
    pub(crate) fn resolve(self, ctx: &Context, out: &mut Vec<Span>) {
        // Only the addresses a span names are looked up.
        let wanted = self.wanted();
        // Each path, and the span of `out` it was moved into (it is cloned for later spans).
        let mut paths: Vec<(String, Option<usize>)> = Vec::with_capacity(wanted.len());
        let found = PathFinder::find(ctx, &self.names, &wanted, |path| {
            paths.push((path.to_string(), None));
            paths.len() - 1
        });
        let path_of = |addr: usize| wanted.binary_search(&addr).ok().and_then(|at| found[at]);
        out.reserve(self.spans.len());
        for &(start, end, raw) in &self.spans {
            // A copy of a path, from the input span it was moved into if it was.
            let copy = |out: &[Span], (path, moved): &(String, Option<usize>)| match moved.map(|k| &out[k].origin) {
                Some(Origin::Input(p)) => p.clone(),
                _ => path.clone(),
            };
            let origin = match raw {
                RawOrigin::Template => Origin::Template,
                RawOrigin::Computed(from, to) => {
                    let mut names: Vec<String> = (self.reads(from, to).iter())
                        .filter_map(|&addr| path_of(addr).map(|p| copy(out, &paths[p])))
                        .collect();
                    names.sort_unstable();
                    names.dedup();
                    Origin::Computed(names)
                }
                RawOrigin::Borrowed(addr) => match path_of(addr) {
                    None => Origin::Template,
                    Some(p) if paths[p].1.is_some() => Origin::Input(copy(out, &paths[p])),
                    Some(p) => {
                        paths[p].1 = Some(out.len());
                        Origin::Input(std::mem::take(&mut paths[p].0))
                    }
                },
            };
            out.push(Span { start, end, origin });
        }
    }

    /// The spans whose origin, resolved as [`resolve`](Self::resolve) would, names a path `names`
    /// accepts (an input path, or one of a computed span's), with no path kept.
    pub(crate) fn named_spans(self, ctx: &Context, names: &dyn Fn(&str) -> bool) -> Vec<ByteSpan> {
        let wanted = self.wanted();
        let found = PathFinder::find(ctx, &self.names, &wanted, names);
        let named = |addr: &usize| wanted.binary_search(addr).is_ok_and(|at| found[at] == Some(true));
        (self.spans.iter())
            .filter(|&&(_, _, raw)| match raw {
                RawOrigin::Template => false,
                RawOrigin::Borrowed(addr) => named(&addr),
                RawOrigin::Computed(from, to) => self.reads(from, to).iter().any(named),
            })
            .map(|&(start, end, _)| (start, end))
            .collect()
    }
}

/// One step of a JSON path: a variable or key name, or a list index.
#[derive(Clone, Copy)]
enum Step<'c> {
    Name(&'c str),
    Index(usize),
}

/// Finds the JSON paths of the context values that hold given addresses: a string by the range of
/// its text, an array or object by its own (how the evaluator sees each). The values under the
/// names the render read are visited in context order and a later value holding an address wins;
/// `name` is asked only about the path of a value that holds one.
struct PathFinder<'w, T, F> {
    names: &'w [&'w str],
    /// The addresses, ascending, each once.
    wanted: &'w [usize],
    /// For each of `wanted`, what `name` gave for the path of the value holding it.
    found: Vec<Option<T>>,
    name: F,
    /// The path of the value being visited, such as `messages[2].content`.
    path: String,
}

impl<'w, T: Copy, F: FnMut(&str) -> T> PathFinder<'w, T, F> {
    /// For each of `wanted` (ascending), what `name` gives for the path of the value holding it.
    fn find(ctx: &Context, names: &'w [&'w str], wanted: &'w [usize], name: F) -> Vec<Option<T>> {
        let mut finder = PathFinder {
            names,
            wanted,
            found: vec![None; wanted.len()],
            name,
            path: String::new(),
        };
        if !wanted.is_empty() {
            finder.path.reserve(64);
            finder.walk_context(ctx);
        }
        finder.found
    }

    fn walk_context(&mut self, ctx: &Context) {
        let read = |name: &str| self.names.contains(&name);
        for (k, v) in &ctx.vars {
            if read(k) {
                self.visit(Step::Name(k), v);
            }
        }
        for layer in ctx.layers {
            match layer {
                Layer::Var(name, _) if !read(name) => {}
                Layer::Var(name, Borrowed::Json(v)) => self.visit(Step::Name(name), v),
                Layer::Var(name, Borrowed::List(items)) => {
                    self.path.push_str(name);
                    for (i, item) in items.iter().enumerate() {
                        self.visit(Step::Index(i), item);
                    }
                    self.path.clear();
                }
                Layer::Map(m) => {
                    for (k, v) in *m {
                        if read(k) {
                            self.visit(Step::Name(k), v);
                        }
                    }
                }
            }
        }
    }

    /// Visits `v`, reached from the current path by `step`: its members first, then itself.
    fn visit(&mut self, step: Step<'_>, v: &Json) {
        let parent = self.path.len();
        match step {
            Step::Name(name) if parent == 0 => self.path.push_str(name),
            Step::Name(name) => {
                self.path.push('.');
                self.path.push_str(name);
            }
            Step::Index(k) => {
                self.path.push('[');
                self.path.push_str(itoa::Buffer::new().format(k));
                self.path.push(']');
            }
        }
        match v {
            Json::String(s) => self.claim(s.as_ptr() as usize, s.len()),
            Json::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.visit(Step::Index(i), item);
                }
                self.claim(v as *const Json as usize, std::mem::size_of::<Json>());
            }
            Json::Object(m) => {
                for (k, item) in m {
                    self.visit(Step::Name(k), item);
                }
                self.claim(v as *const Json as usize, std::mem::size_of::<Json>());
            }
            _ => {}
        }
        self.path.truncate(parent);
    }

    /// Gives what `name` says of the current path to the wanted addresses in `start..start + len`
    /// (one byte when empty).
    fn claim(&mut self, start: usize, len: usize) {
        let first = self.wanted.partition_point(|&a| a < start);
        let end = start + len.max(1);
        let mut at = first;
        while at < self.wanted.len() && self.wanted[at] < end {
            at += 1;
        }
        if at == first {
            return;
        }
        let named = (self.name)(&self.path);
        for found in &mut self.found[first..at] {
            *found = Some(named);
        }
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
