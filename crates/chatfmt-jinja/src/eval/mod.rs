//! The evaluator: runs a parsed template against a context, with Jinja2's scoping rules.

use crate::ast::*;
use crate::builtins::table::{FILTERS, TESTS};
use crate::builtins::{
    self,
    args::{Bound, CallArgs},
};
use crate::context::{same_name, Borrowed, ByteSpan, Context, Rendered};
use crate::error::{err, Error, Result};
use crate::limits::{STACK_RED_ZONE, STACK_SEGMENT};
use crate::output::{Piece, RawOrigin, SpanRecorder, SpanSizes};
use crate::value::{compare, JsonPairs, LoopItems, LoopValue, MacroValue, Object, Slots, UndefInfo, Value};
use serde_json::Value as Json;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

pub(crate) mod causal;

/// What a statement tells the enclosing loop.
#[derive(PartialEq, Eq)]
enum Flow {
    Normal,
    Break,
    Continue,
}

const NO_PARENT: usize = usize::MAX;

/// The current stack address (of a local variable: close enough for a red-zone check).
#[inline(always)]
fn stack_pointer() -> usize {
    let here = 0u8;
    std::hint::black_box(&here) as *const u8 as usize
}

/// The stack address below which less than [`STACK_RED_ZONE`] is left on the current stack
/// (`usize::MAX` when the stack's size is unknown, so the first nesting level moves to a segment
/// whose size is known).
fn stack_limit() -> usize {
    match stacker::remaining_stack() {
        Some(left) => stack_pointer().saturating_sub(left).saturating_add(STACK_RED_ZONE),
        None => usize::MAX,
    }
}

/// How many names read outside every scope a render caches the context's values of (in the
/// evaluator itself: no allocation per render).
const OUTER_CACHED: usize = 16;

/// The scope of frames that bind names by name only (a block called as `self.name()`).
const BY_NAME: u32 = u32::MAX;

/// How many slots a frame keeps in place (a scope that binds more names puts them on the heap).
const FRAME_SLOTS: usize = 8;

/// The variables of one run of a scope: a slot per name the scope binds (see [`Scopes`]), plus
/// names bound where the frame chain differs from the template's nesting.
struct Frame<'a> {
    slots: Slots<'a, FRAME_SLOTS>,
    extra: Vec<(&'a str, Value<'a>)>,
    parent: usize,
    scope: u32,
}

/// What a render that runs the statements after a top-level statement again returns to: the
/// template's own scope, the output and generation spans written, and the autoescape setting.
#[derive(Clone)]
struct TopState<'a> {
    slots: Slots<'a, FRAME_SLOTS>,
    extra: Vec<(&'a str, Value<'a>)>,
    out: usize,
    generation: usize,
    autoescape: bool,
}

/// Renders one template once.
pub struct Evaluator<'a> {
    ctx: &'a Context<'a>,
    scopes: &'a Scopes,
    /// The context variables of the first [`OUTER_CACHED`] names of [`Scopes::outer`], each
    /// filled when the name is first read (with an undefined value when the context does not have
    /// it), so a `Borrowed::List` layer becomes a list value once.
    outer: [Option<Value<'a>>; OUTER_CACHED],
    /// The stack address below which the next nesting level runs on a new stack segment
    /// (see [`Evaluator::nested`]).
    stack_limit: usize,
    /// Pieces of the expression being printed (see `eval_pieces`).
    piece_buf: Vec<Value<'a>>,
    frames: Vec<Frame<'a>>,
    /// How many of `frames` are in use.
    live_frames: usize,
    /// The frame new names are bound in.
    current: usize,
    out: String,
    /// The template body (for `self.<block>()`).
    body: &'a [Stmt],
    spans: Option<SpanRecorder<'a>>,
    /// Where the template keeps its recorder's buffer sizes.
    span_sizes: &'a SpanSizes,
    generation_spans: Vec<GenerationSpan>,
    /// How deep the render is in what Jinja2 buffers before it yields it (macro bodies, captured
    /// blocks, a generation block's body, recursive loops).
    buffered: usize,
    /// Where the output stood when the render last went from yielding to buffering: the text
    /// yielded so far, which is what transformers' generation tracker measures.
    yielded: usize,
    depth: usize,
    autoescape: bool,
    /// Where the iterations of a causal loop began, when this render derives prefixes.
    marks: Option<Box<causal::Marks<'a>>>,
}

/// For `for key, value in object | items` or `in object.items()` (no `recursive`): the object's
/// expression and the two targets.
fn pairs_loop(f: &ForLoop) -> Option<(&Expr, &Target, &Target)> {
    let object = match &f.iter.kind {
        ExprKind::Filter(Some(object), name, args) if &*name.name == "items" && args.is_empty() => object,
        ExprKind::Call(callee, args) if args.is_empty() => match &callee.kind {
            ExprKind::GetAttr(object, member) if &**member == "items" => object,
            _ => return None,
        },
        _ => return None,
    };
    match (&f.target, f.recursive) {
        (Target::Tuple(targets), false) => match &targets[..] {
            [key @ Target::Name(..), value @ Target::Name(..)] => Some((object, key, value)),
            _ => None,
        },
        _ => None,
    }
}

fn at(e: Error, pos: Pos) -> Error {
    if e.has_location() {
        e
    } else {
        e.at(pos.line, pos.col)
    }
}

impl<'a> Evaluator<'a> {
    /// A fresh evaluator for the template `body` with `ctx`, recording spans when `track` is set
    /// (in buffers sized by `span_sizes`).
    #[inline(always)]
    pub(crate) fn new(
        body: &'a [Stmt],
        scopes: &'a Scopes,
        span_sizes: &'a SpanSizes,
        ctx: &'a Context<'a>,
        track: bool,
        out: String,
    ) -> Self {
        let root_slots = scopes.layouts.first().map_or(0, |l| l.len());
        Evaluator {
            ctx,
            scopes,
            outer: Default::default(),
            stack_limit: stack_limit(),
            piece_buf: Vec::new(),
            live_frames: 1,
            frames: {
                let mut frames = Vec::with_capacity(4);
                frames.push(Frame {
                    slots: Slots::empty(root_slots),
                    extra: Vec::new(),
                    parent: NO_PARENT,
                    scope: 0,
                });
                frames
            },
            current: 0,
            out,
            body,
            spans: track.then(|| span_sizes.recorder()),
            span_sizes,
            generation_spans: Vec::new(),
            buffered: 0,
            yielded: 0,
            depth: 0,
            autoescape: false,
            marks: None,
        }
    }

    /// Runs the template body and puts the output in `result` (whose span lists are empty).
    #[inline(always)]
    pub fn run(self, body: &'a [Stmt], result: &mut Rendered) -> Result<()> {
        self.run_then(body, result, |rec, ctx, result| rec.resolve(ctx, &mut result.spans))
            .map(|_| ())
    }

    /// Runs the template body with spans, puts the output in `result` and gives the spans whose
    /// origin names a context path `names` accepts (see `SpanRecorder::named_spans`), resolving no
    /// other.
    pub(crate) fn run_named(
        self,
        body: &'a [Stmt],
        result: &mut Rendered,
        names: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<ByteSpan>> {
        let spans = self.run_then(body, result, |rec, ctx, _| rec.named_spans(ctx, names))?;
        Ok(spans.unwrap_or_default())
    }

    /// Runs the template body, puts the output in `result` and gives what `spans` makes of the
    /// spans recorded, if any.
    #[inline(always)]
    fn run_then<R>(
        mut self,
        body: &'a [Stmt],
        result: &mut Rendered,
        spans: impl FnOnce(SpanRecorder<'a>, &Context, &mut Rendered) -> R,
    ) -> Result<Option<R>> {
        let budget = crate::limits::BudgetScope::start(&self.ctx.limits);
        self.exec_block(body)?;
        result.steps = budget.used();
        generation_byte_spans(&self.generation_spans, &self.out, &mut result.generation_spans);
        result.text = self.out;
        Ok(self.spans.map(|rec| {
            self.span_sizes.remember(&rec);
            spans(rec, self.ctx, result)
        }))
    }

    /// Runs the template body for this evaluator's context into `result`, then runs the top-level
    /// statements from `fork` on again with `alt` into `alt_result`, from the state the statements
    /// before `fork` left (the fork point comes from `analysis::fork_point`, which makes that equal
    /// to a whole render with `alt`). The outer error is the first render's; the inner the second's.
    pub fn run_forked(
        mut self,
        fork: usize,
        alt: &'a Context<'a>,
        result: &mut Rendered,
        alt_result: &mut Rendered,
    ) -> Result<Result<()>> {
        debug_assert!(self.spans.is_none() && !alt.track_spans);
        let budget = crate::limits::BudgetScope::start(&self.ctx.limits);
        let (head, tail) = self.body.split_at(fork);
        self.exec_block(head)?;
        let (used, at_fork) = (budget.used(), self.top_state());
        self.exec_block(tail)?;
        result.steps = budget.used();
        generation_byte_spans(&self.generation_spans, &self.out, &mut result.generation_spans);
        result.text.clone_from(&self.out);
        self.ctx = alt;
        // Context values read so far are the same in `alt`, except what the fork is on, which
        // was not read before the fork point; the cache is emptied all the same.
        self.outer = Default::default();
        self.return_to(at_fork);
        budget.rewind(used);
        Ok(self.exec_block(tail).map(|_| {
            alt_result.steps = budget.used();
            generation_byte_spans(&self.generation_spans, &self.out, &mut alt_result.generation_spans);
            alt_result.text = self.out;
        }))
    }

    /// Where the render stands between two top-level statements (see [`TopState`]).
    fn top_state(&self) -> TopState<'a> {
        TopState {
            slots: self.frames[0].slots.clone(),
            extra: self.frames[0].extra.clone(),
            out: self.out.len(),
            generation: self.generation_spans.len(),
            autoescape: self.autoescape,
        }
    }

    /// Returns to `at` to run the statements after it again: the template's scope, output and
    /// generation spans as they were there, and no frame, macro call or capture open (a statement
    /// that raised may have left some).
    fn return_to(&mut self, at: TopState<'a>) {
        (self.frames[0].slots, self.frames[0].extra) = (at.slots, at.extra);
        self.empty_frames(1);
        self.live_frames = 1;
        self.current = 0;
        self.depth = 0;
        self.buffered = 0;
        self.autoescape = at.autoescape;
        self.out.truncate(at.out);
        self.generation_spans.truncate(at.generation);
    }

    /// A top-level variable of the context: `vars`, then the borrowed layers (read once per render
    /// and name, see `outer`).
    fn context_var(&self, name: &str) -> Option<Value<'a>> {
        self.ctx.source(name).map(|v| match v {
            Borrowed::Json(j) => Value::from_json(j),
            Borrowed::List(items) => Value::list(items.iter().map(Value::from_json).collect()),
        })
    }

    /// The caller's list a `for` loop can iterate in place, item by item, instead of as a list
    /// value: the loop iterates a name that only the context binds, as a borrowed list, and has
    /// no filter (its `loop` object, if any, reads the items in place too). A list value made of
    /// it earlier in the render holds the same items. With spans the name is noted as read when
    /// it is first read (a list value itself is never noted).
    fn borrowed_items(&mut self, f: &'a ForLoop) -> Option<&'a [Json]> {
        if f.cond.is_some() {
            return None;
        }
        let ExprKind::Name(name, var) = &f.iter.kind else {
            return None;
        };
        self.borrowed_list(name, *var)
    }

    /// The caller's list a name only the context binds, read in place (a list value made of it
    /// earlier in the render holds the same items, which no template can change). With spans the
    /// name is noted as read when it is first read.
    fn borrowed_list(&mut self, name: &'a str, var: VarRef) -> Option<&'a [Json]> {
        if name == "self" || self.find_in_scopes(name, var).is_some() {
            return None;
        }
        match (self.outer.get(var.outer as usize), self.ctx.source(name)) {
            (Some(cached), Some(Borrowed::List(items))) => {
                if let (None, Some(rec)) = (cached, &mut self.spans) {
                    rec.note_name(name);
                }
                Some(items)
            }
            _ => None,
        }
    }

    /// `name[i]` of the caller's list read in place (see [`borrowed_list`](Self::borrowed_list)),
    /// at an integer literal `i` in range.
    fn borrowed_item(&mut self, obj: &'a Expr, key: &'a Expr) -> Option<Value<'a>> {
        let (ExprKind::Name(name, var), ExprKind::Const(Const::Int(i))) = (&obj.kind, &key.kind) else {
            return None;
        };
        let items = self.borrowed_list(name, *var)?;
        let i = if *i < 0 { i.checked_add(items.len() as i64)? } else { *i };
        items.get(usize::try_from(i).ok()?).map(Value::from_json)
    }

    // ---- scopes ---------------------------------------------------------------------------

    /// The names of a scope's slots (none for [`BY_NAME`]).
    fn layout(&self, scope: u32) -> &'a [Ident] {
        self.scopes.layouts.get(scope as usize).map_or(&[], |l| l)
    }

    /// Opens a frame of `scope` whose lookups continue in `parent`. Frames are reused, so their
    /// slot lists keep their capacity across loop iterations.
    fn push_frame(&mut self, parent: usize, scope: u32) -> usize {
        let id = self.live_frames;
        // A macro or loop object kept past the frame it was made in names a frame that is gone
        // (possibly this very one): its lookups continue at the template's frame instead, so every
        // chain of parents ends.
        let parent = if parent < id { parent } else { 0 };
        let n = self.layout(scope).len();
        if id < self.frames.len() {
            let frame = &mut self.frames[id];
            frame.parent = parent;
            // A frame popped from the same scope keeps its (emptied) slots.
            if frame.scope != scope || frame.slots.len() != n {
                frame.slots.reset(n);
            }
            frame.scope = scope;
        } else {
            self.frames.push(Frame {
                slots: Slots::empty(n),
                extra: Vec::new(),
                parent,
                scope,
            });
        }
        self.live_frames += 1;
        self.current = id;
        id
    }

    /// Runs `f` in a new frame of `scope` inside the current one.
    fn in_frame<R>(&mut self, scope: u32, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        let restore = self.current;
        let id = self.push_frame(restore, scope);
        let r = f(self);
        self.pop_frame(id, restore);
        r
    }

    fn pop_frame(&mut self, id: usize, restore: usize) {
        self.empty_frames(id);
        self.live_frames = id;
        self.current = restore;
    }

    /// Makes the frame `id` current again with nothing bound, as popping it and pushing a frame of
    /// the same scope and parent would (a loop's next iteration). When the loop `rebinds_all` of
    /// the frame's slots before anything reads them, and nothing else is bound, they are left
    /// for the rebinding to replace.
    fn reenter_frame(&mut self, id: usize, rebinds_all: bool) {
        if !(rebinds_all && self.live_frames == id + 1 && self.frames[id].extra.is_empty()) {
            self.empty_frames(id);
        }
        self.live_frames = id + 1;
        self.current = id;
    }

    /// Unbinds every name of the frames from `id` up.
    fn empty_frames(&mut self, id: usize) {
        for frame in &mut self.frames[id..self.live_frames] {
            frame.slots.iter_mut().for_each(|slot| *slot = None);
            frame.extra.clear();
        }
    }

    /// Binds a name in the current frame, in the slot resolution gave it.
    #[inline]
    fn bind(&mut self, name: &'a str, at: Bind, v: Value<'a>) {
        let frame = &mut self.frames[self.current];
        if frame.scope == at.scope {
            if let Some(slot) = frame.slots.get_mut(at.slot as usize) {
                *slot = Some(v);
                return;
            }
        }
        self.bind_by_name(name, v);
    }

    /// Binds a name in the current frame by name: its slot if its scope has one, otherwise an
    /// extra variable of the frame.
    fn bind_by_name(&mut self, name: &'a str, v: Value<'a>) {
        let frame = &mut self.frames[self.current];
        let layout = self.scopes.layouts.get(frame.scope as usize).map_or(&[][..], |l| l);
        if let Some(i) = layout.iter().position(|n| same_name(n, name)) {
            frame.slots[i] = Some(v);
            return;
        }
        match frame.extra.iter_mut().find(|(n, _)| same_name(n, name)) {
            Some(slot) => slot.1 = v,
            None => frame.extra.push((name, v)),
        }
    }

    /// Resolves a variable reference: scopes, then context variables, then globals.
    fn lookup(&mut self, name: &'a str, var: VarRef) -> Value<'a> {
        self.find(name, var)
            .unwrap_or_else(|| Value::Undefined(Some(Rc::new(UndefInfo::Name(name)))))
    }

    /// The value of a variable reference, if it has one.
    fn find(&mut self, name: &'a str, var: VarRef) -> Option<Value<'a>> {
        match self.find_in_scopes(name, var) {
            Some(v) => Some(v.clone()),
            None => self.find_outside_scopes(name, var.outer),
        }
    }

    /// The value a template scope binds to a variable reference: the slots resolution found for
    /// it, or a search by name when the frames are not those of the template's nesting.
    #[inline(always)]
    fn find_in_scopes(&self, name: &'a str, var: VarRef) -> Option<&Value<'a>> {
        if var.scope == VarRef::NO_SCOPE {
            return match var.more {
                true => self.find_more(name, var.res, 0),
                false => None,
            };
        }
        let mut f = self.current;
        for _ in 0..var.up {
            f = self.frames[f].parent;
            if f == NO_PARENT {
                return self.find_by_name(name);
            }
        }
        let frame = &self.frames[f];
        if frame.scope != var.scope {
            return self.find_by_name(name);
        }
        if let Some(Some(v)) = frame.slots.get(usize::from(var.slot)) {
            return Some(v);
        }
        if var.more {
            return self.find_more(name, var.res, 1);
        }
        None
    }

    /// [`find_in_scopes`](Self::find_in_scopes) through the resolution's list of scopes, from the
    /// `skip`-th on.
    #[inline(never)]
    fn find_more(&self, name: &'a str, res: u32, skip: usize) -> Option<&Value<'a>> {
        let Some(res) = self.scopes.names.get(res as usize) else {
            return self.find_by_name(name);
        };
        let mut f = self.current;
        let mut up = 0;
        for at in res.scopes.iter().skip(skip) {
            while up < at.up {
                f = self.frames[f].parent;
                if f == NO_PARENT {
                    return self.find_by_name(name);
                }
                up += 1;
            }
            let frame = &self.frames[f];
            if frame.scope != at.scope {
                return self.find_by_name(name);
            }
            if let Some(Some(v)) = frame.slots.get(at.slot as usize) {
                return Some(v);
            }
        }
        None
    }

    /// The value the frames bind to a name, searched by name from the current frame up.
    #[cold]
    fn find_by_name(&self, name: &str) -> Option<&Value<'a>> {
        let mut f = self.current;
        while f != NO_PARENT {
            let frame = &self.frames[f];
            if let Some((_, v)) = frame.extra.iter().rev().find(|(n, _)| same_name(n, name)) {
                return Some(v);
            }
            let layout = self.layout(frame.scope);
            if let Some(Some(v)) = layout
                .iter()
                .position(|n| same_name(n, name))
                .and_then(|i| frame.slots.get(i))
            {
                return Some(v);
            }
            f = frame.parent;
        }
        None
    }

    /// The value of a name no template scope binds: `self`, the context (read once per render and
    /// name), the globals.
    #[inline(never)]
    fn find_outside_scopes(&mut self, name: &'a str, outer: u32) -> Option<Value<'a>> {
        if outer == VarRef::UNBOUND_OUTSIDE {
            return None;
        }
        if let Some(v) = self.context_value(name, outer) {
            return Some(v.clone());
        }
        if name == "self" {
            let mut blocks = Vec::new();
            collect_blocks(self.body, &mut blocks);
            return Some(Value::Object(Rc::new(Object::SelfRef(blocks))));
        }
        let outer = outer as usize;
        if outer >= OUTER_CACHED {
            if let Some(rec) = &mut self.spans {
                rec.note_name(name);
            }
            if let Some(v) = self.context_var(name) {
                return Some(v);
            }
        }
        let global = self.scopes.outer.get(outer).copied().flatten();
        global.map(|g| Value::Object(Rc::new(Object::Function(g))))
    }

    /// The context's value of a name no template scope binds, where the render keeps it: read
    /// once per render and name (noted as read then) for the first [`OUTER_CACHED`] such names.
    /// `None` for a name the context lacks, for `self`, and for the names past those.
    #[inline]
    fn context_value(&mut self, name: &'a str, outer: u32) -> Option<&Value<'a>> {
        let outer = outer as usize;
        if outer >= OUTER_CACHED || name == "self" {
            return None;
        }
        if self.outer[outer].is_none() {
            if let Some(rec) = &mut self.spans {
                rec.note_name(name);
            }
            // Context values are never undefined: this marks a name the context lacks.
            self.outer[outer] = Some(self.context_var(name).unwrap_or(Value::Undefined(None)));
        }
        match &self.outer[outer] {
            Some(Value::Undefined(None)) | None => None,
            Some(v) => Some(v),
        }
    }

    /// The value of a name no template scope binds, borrowed where the render keeps it or made
    /// (see [`find_outside_scopes`](Self::find_outside_scopes)), given to `f`.
    #[inline]
    fn with_outside<R>(&mut self, name: &'a str, outer: u32, f: impl FnOnce(Option<&Value<'a>>) -> R) -> R {
        match self.context_value(name, outer) {
            Some(v) => f(Some(v)),
            None => f(self.find_outside_scopes(name, outer).as_ref()),
        }
    }

    /// For `name['key']` or `name.key` (a data key) where `name` holds a JSON object: the object
    /// and the key.
    #[inline(always)]
    fn json_member(&mut self, e: &'a Expr) -> Option<(&'a serde_json::Map<String, Json>, &'a str)> {
        let (name, var, key) = named_member(e)?;
        match self.find_json(name, var)? {
            Json::Object(m) => Some((m, key)),
            _ => None,
        }
    }

    /// `name['key']` or `name.key` read in place, as evaluating it would give it: a key of the
    /// JSON object `name` holds, or an attribute of the object a template scope binds to `name`
    /// (`loop.index0`, `ns.found`). `None` when the expression takes the general rules (which
    /// also give the error of a failed attribute read).
    #[inline(never)]
    fn member_in_place(&mut self, e: &'a Expr) -> Option<Value<'a>> {
        let (name, var, key) = named_member(e)?;
        let found = match self.find_in_scopes(name, var) {
            Some(v @ Value::Object(o)) => {
                if !matches!(e.kind, ExprKind::GetAttr(..)) {
                    return None;
                }
                match &**o {
                    Object::Loop(l) => {
                        if let Some(attr) = builtins::globals::loop_attribute(l, key) {
                            return Some(attr);
                        }
                    }
                    Object::Namespace(d) if !key.starts_with('_') => {
                        if let Some(attr) = d.borrow().get_str(key) {
                            return Some(attr.clone());
                        }
                    }
                    _ => {}
                }
                return object_attribute(v, key).ok();
            }
            Some(v) => v.as_json(),
            None => self.with_outside(name, var.outer, |v| v.and_then(Value::as_json)),
        };
        match found? {
            Json::Object(m) => crate::value::json_map_get(m, key).map(Value::from_json),
            _ => None,
        }
    }

    /// The JSON array or object a name holds, if it holds one.
    fn find_json(&mut self, name: &'a str, var: VarRef) -> Option<&'a Json> {
        match self.find_in_scopes(name, var) {
            Some(v) => v.as_json(),
            None => self.with_outside(name, var.outer, |v| v.and_then(Value::as_json)),
        }
    }

    // ---- output ---------------------------------------------------------------------------

    /// The text `f` writes, as a string; with spans, the string keeps the spans of its text (see
    /// `SpanRecorder::end_capture`).
    fn capture(&mut self, f: impl FnOnce(&mut Self) -> Result<Flow>) -> Result<Value<'a>> {
        self.capture_flow(f).map(|(v, _)| v)
    }

    /// [`capture`](Self::capture), with how the body ended: a `break` or `continue` in a `set` or
    /// `filter` block leaves the block there, as in Jinja2's code, which runs those bodies inline.
    fn capture_flow(&mut self, f: impl FnOnce(&mut Self) -> Result<Flow>) -> Result<(Value<'a>, Flow)> {
        self.buffered(|me| {
            let saved = std::mem::take(&mut me.out);
            let mark = me.spans.as_mut().map(SpanRecorder::begin_capture);
            let r = f(me);
            let captured = std::mem::replace(&mut me.out, saved);
            let v = r.map(|flow| (Value::string(captured), flow));
            if let (Some(rec), Some(mark)) = (&mut me.spans, mark) {
                let text = match &v {
                    Ok((Value::String(s), _)) => Some(s),
                    _ => None,
                };
                rec.end_capture(mark, text);
            }
            v
        })
    }

    /// Runs `f` where Jinja2 buffers its text (see [`Evaluator::buffered`](Self::buffered)'s field):
    /// the text written before is what the template has yielded.
    fn buffered<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        if self.buffered == 0 {
            self.yielded = self.out.len();
        }
        self.buffered += 1;
        let r = f(self);
        self.buffered -= 1;
        r
    }

    fn write_value(&mut self, v: &Value<'a>) {
        let start = self.out.len();
        self.write_value_text(v);
        if let Some(rec) = &mut self.spans {
            let verbatim = !self.autoescape || matches!(v, Value::Safe(_));
            match v {
                Value::Str(s) if verbatim => {
                    rec.record(start, self.out.len(), RawOrigin::Borrowed(s.as_ptr() as usize))
                }
                Value::String(s) | Value::Safe(s) if verbatim => match rec.captured(s) {
                    Some(spans) => rec.replay(spans, start),
                    None => rec.record(start, self.out.len(), rec.computed()),
                },
                _ => rec.record(start, self.out.len(), rec.computed()),
            }
        }
    }

    fn write_value_text(&mut self, v: &Value<'a>) {
        if self.autoescape && !matches!(v, Value::Safe(_)) {
            let s = v.to_py_str();
            crate::pystr::escape_into(&s, &mut self.out);
        } else {
            v.write_str(&mut self.out);
        }
    }

    // ---- statements -----------------------------------------------------------------------

    fn exec_block(&mut self, body: &'a [Stmt]) -> Result<Flow> {
        for s in body {
            let flow = self.exec(s)?;
            if flow != Flow::Normal {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    fn exec(&mut self, s: &'a Stmt) -> Result<Flow> {
        self.step().map_err(|e| at(e, s.pos))?;
        let flow = match self.spans.is_some() {
            false => self.nested(|me| me.exec_inner(s))?,
            true => self.exec_tracked(s)?,
        };
        if self.out.len() > self.ctx.limits.max_output_bytes {
            return Err(crate::limits::output_exceeded(self.ctx.limits.max_output_bytes).at(s.pos.line, s.pos.col));
        }
        Ok(flow)
    }

    /// Runs a statement with spans: what a statement that wrote nothing read is no part of the
    /// text written next (see `SpanRecorder::unread`).
    fn exec_tracked(&mut self, s: &'a Stmt) -> Result<Flow> {
        let (mark, len) = (self.spans.as_ref().map_or(0, SpanRecorder::reads_mark), self.out.len());
        let flow = self.nested(|me| me.exec_inner(s))?;
        if let Some(rec) = self.spans.as_mut().filter(|_| self.out.len() == len) {
            rec.unread(mark);
        }
        Ok(flow)
    }

    /// Runs one level of statement or expression nesting, moving to a new stack segment when the
    /// stack runs low. The check is one comparison of the stack pointer with a limit computed
    /// when the segment was entered.
    #[inline]
    fn nested<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        if stack_pointer() < self.stack_limit {
            return self.on_new_segment(f);
        }
        f(self)
    }

    /// Runs `f` on a new stack segment, with that segment's limit.
    #[cold]
    #[inline(never)]
    fn on_new_segment<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.stack_limit;
        let r = stacker::grow(STACK_SEGMENT, || {
            self.stack_limit = stack_limit();
            f(self)
        });
        self.stack_limit = saved;
        r
    }

    /// Counts one evaluation step against the limit.
    #[inline]
    fn step(&mut self) -> Result<()> {
        crate::limits::charge(1)
    }

    fn exec_inner(&mut self, s: &'a Stmt) -> Result<Flow> {
        match &s.kind {
            StmtKind::Text(t) => {
                let start = self.out.len();
                self.out.push_str(t);
                if let Some(rec) = &mut self.spans {
                    rec.record(start, self.out.len(), RawOrigin::Template);
                }
            }
            StmtKind::Print(_, Some(leaves)) if !self.autoescape && self.print_plain(leaves)? => {}
            StmtKind::Print(e, _) => {
                // The piece buffer is reused from print to print (a nested print gets a new one).
                let mut buf = std::mem::take(&mut self.piece_buf);
                let r = self.eval_pieces(e, &mut buf);
                if let Ok(printed) = &r {
                    match printed {
                        Printed::Pieces => buf.iter().for_each(|p| self.write_value(p)),
                        Printed::Value(v) => self.write_value(v),
                    }
                }
                buf.clear();
                self.piece_buf = buf;
                r?;
            }
            StmtKind::If(branches, else_body) => {
                for (test, body) in branches {
                    if self.eval_truthy(test)? {
                        return self.exec_block(body);
                    }
                }
                return self.exec_block(else_body);
            }
            // Jinja2 buffers a recursive loop's text and yields it whole.
            StmtKind::For(f) if f.recursive => return self.buffered(|me| me.exec_for_stmt(f, s.pos)),
            StmtKind::For(f) => return self.exec_for_stmt(f, s.pos),
            StmtKind::Set(target, e) => {
                let v = self.derived(|me| me.eval(e))?;
                self.assign(target, v).map_err(|e| at(e, s.pos))?;
            }
            StmtKind::SetBlock(target, filter, body, scope) => {
                let mut flow = Flow::Normal;
                let v = self.derived(|me| {
                    me.in_frame(*scope, |me| {
                        let v;
                        (v, flow) = me.capture_flow(|me| me.exec_block(body))?;
                        match filter {
                            Some(f) if flow == Flow::Normal => me.eval_filter_chain(f, v),
                            _ => Ok(v),
                        }
                    })
                })?;
                if flow != Flow::Normal {
                    return Ok(flow);
                }
                self.assign(target, v).map_err(|e| at(e, s.pos))?;
            }
            StmtKind::Macro(def) => {
                let m = Value::Object(Rc::new(Object::Macro(MacroValue {
                    def,
                    scope: self.current,
                })));
                self.bind_by_name(&def.name, m);
            }
            StmtKind::CallBlock(call, def) => {
                let caller = Value::Object(Rc::new(Object::Macro(MacroValue {
                    def,
                    scope: self.current,
                })));
                let ExprKind::Call(callee, args) = &call.kind else {
                    return Err(err!(TemplateSyntaxError, "expected call").at(s.pos.line, s.pos.col));
                };
                let f = self.eval(callee)?;
                let mut a = self.eval_args(args)?;
                a.kw.push(("caller", caller));
                let v = self.call_value(&f, a).map_err(|e| at(e, call.pos))?;
                self.write_value(&v);
            }
            StmtKind::FilterBlock(filter, body, scope) => {
                let (v, flow) = self.in_frame(*scope, |me| {
                    let (text, flow) = me.capture_flow(|me| me.exec_block(body))?;
                    match flow {
                        Flow::Normal => Ok((me.eval_filter_chain(filter, text)?, flow)),
                        _ => Ok((text, flow)),
                    }
                })?;
                if flow != Flow::Normal {
                    return Ok(flow);
                }
                if !v.is_str() {
                    return Err(err!(
                        TypeError,
                        "sequence item 0: expected str instance, {} found",
                        v.type_name()
                    )
                    .at(s.pos.line, s.pos.col));
                }
                self.write_value(&v);
            }
            StmtKind::With(assigns, body, scope) => {
                let values = assigns.iter().map(|(_, e)| self.eval(e)).collect::<Result<Vec<_>>>()?;
                return self.in_frame(*scope, |me| {
                    for ((t, _), v) in assigns.iter().zip(values) {
                        me.assign(t, v)?;
                    }
                    me.exec_block(body)
                });
            }
            StmtKind::Break => return Ok(Flow::Break),
            StmtKind::Continue => return Ok(Flow::Continue),
            StmtKind::Generation(body, scope) => {
                // transformers' tracker runs the body as a caller (buffered) and records, when it
                // returns, the length of the text yielded so far and the length of the body's
                // text. At the top level that is where the block's text is; elsewhere (a macro, a
                // captured block) its length is counted from there in characters.
                let top = self.buffered == 0;
                let (start, body_start) = (if top { self.out.len() } else { self.yielded }, self.out.len());
                let flow = self.buffered(|me| me.in_frame(*scope, |me| me.exec_block(body)))?;
                let len = match top {
                    true => GenerationLen::Bytes(self.out.len() - body_start),
                    false => GenerationLen::Chars(self.out[body_start..].chars().count()),
                };
                self.generation_spans.push(GenerationSpan { start, len });
                return Ok(flow);
            }
            StmtKind::Block(_, body, block) => {
                let restore = self.current;
                // An unscoped block's frame hangs off the template's own frame.
                let parent = if block.scoped { restore } else { 0 };
                let id = self.push_frame(parent, block.scope);
                let r = self.exec_block(body);
                self.pop_frame(id, restore);
                return r;
            }
            StmtKind::NeedsLoader(_) => {
                return Err(err!(TypeError, "no loader for this environment specified").at(s.pos.line, s.pos.col));
            }
            StmtKind::Autoescape(e, body, scope) => {
                return self.in_frame(*scope, |me| {
                    let on = me.eval(e)?.truthy();
                    let saved = std::mem::replace(&mut me.autoescape, on);
                    let r = me.exec_block(body);
                    me.autoescape = saved;
                    r
                });
            }
        }
        Ok(Flow::Normal)
    }

    /// Binds `v` to an assignment's target (a name, names to unpack it into, or `ns.attr`).
    #[inline(always)]
    fn assign(&mut self, target: &'a Target, v: Value<'a>) -> Result<()> {
        match target {
            Target::Name(n, at) => {
                self.bind(n, *at, v);
                Ok(())
            }
            Target::Tuple(names) => self.assign_tuple(names, v),
            Target::Attr(ns, var, attr) => self.assign_attr(ns, *var, attr, v),
        }
    }

    /// Unpacks `v` into the targets `names`.
    #[inline(never)]
    fn assign_tuple(&mut self, names: &'a [Target], v: Value<'a>) -> Result<()> {
        let items = unpack(&v, names.len())?;
        for (t, item) in names.iter().zip(items.iter()) {
            self.assign(t, item.clone())?;
        }
        Ok(())
    }

    /// `ns.attr = v` for the namespace a template names `ns`.
    #[inline(never)]
    fn assign_attr(&mut self, ns: &'a str, var: VarRef, attr: &'a str, v: Value<'a>) -> Result<()> {
        match &self.lookup(ns, var) {
            Value::Object(o) => match &**o {
                Object::Namespace(d) => {
                    builtins::globals::check_namespace_name(attr)?;
                    if self.marks.is_some() {
                        self.note_namespace_write(o);
                    }
                    d.borrow_mut().insert_str(attr, v);
                    Ok(())
                }
                _ => Err(err!(
                    TemplateRuntimeError,
                    "cannot assign attribute on non-namespace object"
                )),
            },
            _ => Err(err!(
                TemplateRuntimeError,
                "cannot assign attribute on non-namespace object"
            )),
        }
    }

    /// A `for` statement at `pos`.
    #[inline(always)]
    fn exec_for_stmt(&mut self, f: &'a ForLoop, pos: Pos) -> Result<Flow> {
        if let Some(items) = self.borrowed_items(f) {
            let lp = f.uses_loop.then(|| self.loop_object(f, LoopItems::Json(items), 0));
            return self
                .run_loop(f, items.iter().map(Value::from_json), None, lp)
                .map_err(|e| at(e, pos));
        }
        if let Some(pairs) = pairs_loop(f).filter(|_| self.spans.is_none()) {
            return self.exec_pairs_loop(f, pairs, pos);
        }
        let iter = self.eval(&f.iter)?;
        self.exec_for(f, iter, 0).map_err(|e| at(e, pos))
    }

    fn exec_for(&mut self, f: &'a ForLoop, iter: Value<'a>, depth0: usize) -> Result<Flow> {
        // A loop without `loop` takes its items one at a time, the condition of each evaluated when
        // the loop reaches it, as Jinja2 does; from a generator, whatever a `break` leaves (or the
        // body takes) stays with it. With `loop`, whose `length` and `last` need every item, the
        // items passing the condition are found first.
        let cond = f.cond.as_ref();
        if let (Value::Iter(g), false) = (&iter, f.uses_loop) {
            let g = g.clone();
            return self.run_loop(f, std::iter::from_fn(|| g.next_item()), cond, None);
        }
        let items = iter.iterate()?;
        if !f.uses_loop {
            return self.run_loop(f, items.iter().cloned(), cond, None);
        }
        let items = match cond {
            None => items,
            Some(_) => {
                let mut kept = self.passing(f, items.iter().cloned(), |me, item| me.assign(&f.target, item))?;
                // Jinja2's loop filter yields the unpacked target, so with names to unpack into the
                // loop's items (`loop.previtem`, ...) are tuples.
                if let Target::Tuple(_) = &f.target {
                    for item in &mut kept {
                        *item = target_value(&f.target, item)?;
                    }
                }
                Rc::new(kept)
            }
        };
        let lp = self.loop_object(f, LoopItems::Values(items.clone()), depth0);
        self.run_loop(f, items.iter().cloned(), None, Some(lp))
    }

    /// The items whose condition holds, for a loop whose `loop` object needs them all first:
    /// each bound by `bind` in a frame of its own, the condition evaluated there.
    fn passing<T: Clone>(
        &mut self,
        f: &'a ForLoop,
        items: impl Iterator<Item = T>,
        bind: impl Fn(&mut Self, T) -> Result<()>,
    ) -> Result<Vec<T>> {
        let Some(cond) = &f.cond else {
            return Ok(items.collect());
        };
        let restore = self.current;
        let mut kept = Vec::with_capacity(items.size_hint().0);
        for item in items {
            let id = self.push_frame(restore, f.scope);
            let r = bind(self, item.clone()).and_then(|_| self.eval_truthy(cond));
            self.pop_frame(id, restore);
            if r? {
                kept.push(item);
            }
        }
        Ok(kept)
    }

    /// `for key, value in object | items` (or `object.items()`): over a JSON object of the
    /// context, see [`run_pairs`](Self::run_pairs); over anything else, as any loop.
    #[inline(never)]
    fn exec_pairs_loop(
        &mut self,
        f: &'a ForLoop,
        (object, key, value): (&'a Expr, &'a Target, &'a Target),
        pos: Pos,
    ) -> Result<Flow> {
        let v = self.eval(object)?;
        if let Value::Json(Json::Object(m)) = v {
            // Charged as the filter, or the method, which also charges the view it builds.
            let view = match f.iter.kind {
                ExprKind::Call(..) => m.len(),
                _ => 0,
            };
            crate::limits::charge_items(view)
                .and_then(|_| crate::limits::charge(crate::limits::CALL_STEPS))
                .map_err(|err| at(err, f.iter.pos))?;
            return self.run_pairs(f, m, (key, value)).map_err(|e| at(e, pos));
        }
        let iter = match &f.iter.kind {
            ExprKind::Call(..) => self
                .call_attr(&v, "items", CallArgs::default())
                .and_then(|out| builtins::charge_result(&out).map(|_| out))
                .map_err(|err| at(err, f.iter.pos))?,
            _ => self.finish_filter(&f.iter, v)?,
        };
        self.exec_for(f, iter, 0).map_err(|e| at(e, pos))
    }

    /// `for key, value in object | items` over a JSON object of the context: each key and value
    /// bound as they are, without a tuple per pair (the condition, if any, as in
    /// [`exec_for`](Self::exec_for)).
    fn run_pairs(
        &mut self,
        f: &'a ForLoop,
        m: &'a serde_json::Map<String, Json>,
        (key, value): (&'a Target, &'a Target),
    ) -> Result<Flow> {
        let bind = |me: &mut Self, (k, v): (&'a str, &'a Json)| {
            me.assign(key, Value::Str(k))?;
            me.assign(value, Value::from_json(v))
        };
        let pairs = m.iter().map(|(k, v)| (k.as_str(), v));
        if !f.uses_loop {
            return self.run_loop_with(f, pairs, bind, f.cond.as_ref(), None);
        }
        let pairs = Rc::new(JsonPairs::new(self.passing(f, pairs, bind)?));
        let lp = self.loop_object(f, LoopItems::Pairs(pairs.clone()), 0);
        self.run_loop_with(f, pairs.pairs.iter().copied(), bind, None, Some(lp))
    }

    /// The `loop` object of a loop over `items` that starts in the current frame.
    fn loop_object(&self, f: &'a ForLoop, items: LoopItems<'a>, depth0: usize) -> Rc<Object<'a>> {
        Rc::new(Object::Loop(LoopValue {
            index0: Cell::new(0),
            items,
            depth0,
            changed_last: RefCell::new(None),
            recursive: f.recursive.then_some(f),
            scope: self.current,
        }))
    }

    /// Runs a loop's body for each of `items` (in one frame, emptied between iterations), then
    /// its `else` body when no iteration completed.
    fn run_loop(
        &mut self,
        f: &'a ForLoop,
        items: impl Iterator<Item = Value<'a>>,
        cond: Option<&'a Expr>,
        lp: Option<Rc<Object<'a>>>,
    ) -> Result<Flow> {
        self.run_loop_with(f, items, |me, item| me.assign(&f.target, item), cond, lp)
    }

    /// [`run_loop`](Self::run_loop) over items of any kind, each bound to the loop's target by
    /// `bind`; with `cond`, an item whose condition is false is passed over, the condition being
    /// evaluated as the loop reaches the item (as Jinja2's loop filter does, which sees what the
    /// iterations before it changed).
    #[inline(never)]
    fn run_loop_with<T>(
        &mut self,
        f: &'a ForLoop,
        items: impl Iterator<Item = T>,
        bind: impl Fn(&mut Self, T) -> Result<()>,
        cond: Option<&'a Expr>,
        lp: Option<Rc<Object<'a>>>,
    ) -> Result<Flow> {
        let restore = self.current;
        let mut completed = false;
        let mut frame = None;
        let mut i = 0;
        for item in items {
            if self.marks.is_some() {
                self.mark_iteration(f);
            }
            let id = match frame {
                Some(id) => {
                    self.reenter_frame(id, f.rebinds_all);
                    id
                }
                None => *frame.insert(self.push_frame(restore, f.scope)),
            };
            // The condition sees the item bound in the frame the body then runs in.
            let kept = bind(self, item).and_then(|_| match cond {
                Some(c) => self.eval_truthy(c),
                None => Ok(true),
            });
            let r = match kept {
                Ok(false) => continue,
                Ok(true) => self.step().and_then(|_| {
                    if let Some(lp) = &lp {
                        if let Object::Loop(l) = &**lp {
                            l.index0.set(i);
                        }
                        let at = Bind {
                            scope: f.scope,
                            slot: f.loop_slot,
                        };
                        self.bind("loop", at, Value::Object(lp.clone()));
                    }
                    i += 1;
                    self.exec_block(&f.body)
                }),
                Err(e) => Err(e),
            };
            let flow = match r {
                Ok(flow) => flow,
                Err(e) => {
                    self.pop_frame(id, restore);
                    return Err(e);
                }
            };
            match flow {
                Flow::Break => break,
                Flow::Continue => continue,
                Flow::Normal => completed = true,
            }
        }
        if let Some(id) = frame {
            self.pop_frame(id, restore);
        }
        if !completed && !f.else_body.is_empty() {
            let id = self.push_frame(restore, f.else_scope);
            let r = self.exec_block(&f.else_body);
            self.pop_frame(id, restore);
            return r;
        }
        Ok(Flow::Normal)
    }

    /// A value `{% set %}` binds, computed by `f`; with spans, a string it computed stands for what
    /// `f` read wherever it is read again (see `SpanRecorder::derive`).
    fn derived(&mut self, f: impl FnOnce(&mut Self) -> Result<Value<'a>>) -> Result<Value<'a>> {
        let mark = self.spans.as_ref().map(SpanRecorder::reads_mark);
        let v = f(self)?;
        if let (Some(rec), Some(mark)) = (&mut self.spans, mark) {
            rec.derive(&v, mark);
        }
        Ok(v)
    }

    // ---- expressions ----------------------------------------------------------------------

    /// Evaluates an expression.
    pub fn eval(&mut self, e: &'a Expr) -> Result<Value<'a>> {
        let v = self.eval_untracked(e)?;
        if let Some(rec) = &mut self.spans {
            rec.note(&v);
        }
        Ok(v)
    }

    /// [`eval`](Self::eval) without noting what it read.
    #[inline]
    fn eval_untracked(&mut self, e: &'a Expr) -> Result<Value<'a>> {
        // Leaves neither recurse nor fail: no stack check, no error location.
        match &e.kind {
            ExprKind::Const(c) => Ok(const_value(c)),
            ExprKind::Name(n, var) => Ok(self.lookup(n, *var)),
            // The commonest expressions of chat templates, `message['role']` and `loop.last`, read
            // in place.
            ExprKind::GetItem(..) | ExprKind::GetAttr(..) => {
                if let Some(v) = self.member_in_place(e) {
                    return Ok(v);
                }
                self.nested(|me| me.eval_inner(e)).map_err(|err| at(err, e.pos))
            }
            _ => self.nested(|me| me.eval_inner(e)).map_err(|err| at(err, e.pos)),
        }
    }

    fn eval_inner(&mut self, e: &'a Expr) -> Result<Value<'a>> {
        Ok(match &e.kind {
            ExprKind::Const(c) => const_value(c),
            ExprKind::Name(n, var) => self.lookup(n, *var),
            ExprKind::GetAttr(obj, member) => {
                let o = self.eval(obj)?;
                if member.data_key {
                    match &o {
                        Value::Json(Json::Object(m)) => {
                            if let Some(j) = crate::value::json_map_get(m, member) {
                                return Ok(Value::from_json(j));
                            }
                        }
                        // `loop.index0` and friends (named unlike its methods `cycle` and `changed`).
                        Value::Object(obj) => {
                            if let Object::Loop(l) = &**obj {
                                if let Some(v) = builtins::globals::loop_attribute(l, member) {
                                    return Ok(v);
                                }
                            }
                        }
                        _ => {}
                    }
                }
                builtins::getattr(&o, member)?
            }
            ExprKind::GetItem(obj, key) => {
                if let Some(v) = self.borrowed_item(obj, key) {
                    return Ok(v);
                }
                // `messages[::-1]`: a slice of the caller's list, without the whole list made a value.
                if let (ExprKind::Name(n, var), ExprKind::Slice(a, b, c)) = (&obj.kind, &key.kind) {
                    if let Some(items) = self.borrowed_list(n, *var) {
                        let (a, b, c) = (self.slice_bound(a)?, self.slice_bound(b)?, self.slice_bound(c)?);
                        return crate::value::ops::slice_json(items, a, b, c);
                    }
                }
                let o = self.eval(obj)?;
                // `obj['key']` on a JSON object that has the key (otherwise the general rules).
                if let (Value::Json(Json::Object(m)), ExprKind::Const(Const::Str(k))) = (&o, &key.kind) {
                    if let Some(j) = crate::value::json_map_get(m, k) {
                        return Ok(Value::from_json(j));
                    }
                }
                if let ExprKind::Slice(a, b, c) = &key.kind {
                    return self.eval_slice(o, a, b, c);
                }
                let k = self.eval(key)?;
                builtins::getitem(&o, &k)?
            }
            ExprKind::Slice(..) => return Err(err!(TemplateSyntaxError, "slice outside of a subscript")),
            ExprKind::List(_) | ExprKind::Tuple(_) | ExprKind::Dict(_) => self.eval_collection(e)?,
            ExprKind::Call(callee, args) => self.eval_call(callee, args)?,
            ExprKind::Test(v, name, args) => self.eval_test(v, name, args)?,
            ExprKind::Concat(parts) => self.eval_concat(parts)?,
            ExprKind::Cond(test, then, otherwise) => self.eval_cond(test, then, otherwise, e.pos.line)?,
            ExprKind::Filter(..) => self.eval_filter_chain(e, Value::Undefined(None))?,
            ExprKind::Unary(UnOp::Not, x) => Value::Bool(!self.eval_truthy(x)?),
            ExprKind::Unary(op, x) => self.eval(x)?.negate(*op == UnOp::Neg)?,
            ExprKind::Binary(op, a, b) => self.eval_binary(e, *op, a, b)?,
            ExprKind::And(a, b) => {
                let x = self.eval(a)?;
                if !x.truthy() {
                    x
                } else {
                    self.eval(b)?
                }
            }
            ExprKind::Or(a, b) => {
                let x = self.eval(a)?;
                if x.truthy() {
                    x
                } else {
                    self.eval(b)?
                }
            }
            ExprKind::Compare(first, rest) => {
                // `x == 'text'` / `x != 'text'`: a string is equal to the literal when its text
                // is, and nothing else is.
                if let [(
                    op @ (CmpOp::Eq | CmpOp::Ne),
                    Expr {
                        kind: ExprKind::Const(Const::Str(lit)),
                        ..
                    },
                )] = &rest[..]
                {
                    let equal = equals_text(&self.eval(first)?, lit);
                    return Ok(Value::Bool(equal == (*op == CmpOp::Eq)));
                }
                let mut left = self.eval(first)?;
                for (op, e) in rest {
                    let right = self.eval(e)?;
                    let ok = compare(*op, &left, &right)?;
                    if !ok {
                        return Ok(Value::Bool(false));
                    }
                    left = right;
                }
                Value::Bool(true)
            }
        })
    }

    #[inline(never)]
    fn eval_collection(&mut self, e: &'a Expr) -> Result<Value<'a>> {
        if let ExprKind::List(items) | ExprKind::Tuple(items) = &e.kind {
            crate::limits::charge_items(items.len())?;
        }
        if let ExprKind::Dict(items) = &e.kind {
            crate::limits::charge_items(items.len())?;
        }
        Ok(match &e.kind {
            ExprKind::List(items) => {
                let values = items.iter().map(|i| self.eval(i)).collect::<Result<Vec<_>>>()?;
                crate::value::check_nesting(&values)?;
                Value::list(values)
            }
            ExprKind::Tuple(items) => {
                let values = items.iter().map(|i| self.eval(i)).collect::<Result<Vec<_>>>()?;
                crate::value::check_nesting(&values)?;
                Value::Tuple(Rc::new(values))
            }
            ExprKind::Dict(items) => {
                let mut pairs = Vec::with_capacity(items.len());
                for (k, v) in items {
                    let key = self.eval(k)?;
                    crate::value::check_hashable(&key)?;
                    pairs.push((key, self.eval(v)?));
                }
                crate::value::check_nesting(pairs.iter().map(|(_, v)| v))?;
                crate::value::ops::dict_from(pairs)?
            }
            _ => return Err(err!(TemplateSyntaxError, "expected a list, tuple or dict")),
        })
    }

    #[inline(never)]
    fn eval_call(&mut self, callee: &'a Expr, args: &'a Args) -> Result<Value<'a>> {
        if let ExprKind::GetAttr(obj, name) = &callee.kind {
            let o = self.eval(obj)?;
            if o.is_undefined() {
                // `Undefined.name` raises before the arguments are evaluated, unless `name` is one
                // of its own attributes (an unsafe undefined, which raises when called).
                let f = builtins::getattr(&o, name)?;
                let a = self.eval_args(args)?;
                let out = self.call_value(&f, a)?;
                builtins::charge_result(&out)?;
                return Ok(out);
            }
            let a = self.eval_args(args)?;
            let out = self.call_attr(&o, name, a)?;
            builtins::charge_result(&out)?;
            return Ok(out);
        }
        // `namespace(...)`, `range(...)`: a global function called by its name, without a function
        // value made for it.
        if let ExprKind::Name(n, var) = &callee.kind {
            if let Some(global) = self.global_named(n, *var) {
                let a = self.eval_args(args)?;
                let out = builtins::call_global(&self.ctx.clock, global, a)?;
                builtins::charge_result(&out)?;
                return Ok(out);
            }
        }
        let f = self.eval(callee)?;
        let a = self.eval_args(args)?;
        let out = self.call_value(&f, a)?;
        builtins::charge_result(&out)?;
        Ok(out)
    }

    /// The global function a name reads as, when neither a template scope nor the context binds
    /// it (what evaluating the name would note as read is noted).
    fn global_named(&mut self, name: &'a str, var: VarRef) -> Option<&'static str> {
        if name == "self" || self.find_in_scopes(name, var).is_some() {
            return None;
        }
        let outer = var.outer as usize;
        let global = self.scopes.outer.get(outer).copied().flatten()?;
        match self.outer.get(outer) {
            Some(Some(Value::Undefined(None))) => Some(global),
            Some(Some(_)) => None,
            _ => match self.ctx.source(name) {
                Some(_) => None,
                None => {
                    if let Some(rec) = &mut self.spans {
                        rec.note_name(name);
                    }
                    if let Some(cached) = self.outer.get_mut(outer) {
                        *cached = Some(Value::Undefined(None));
                    }
                    Some(global)
                }
            },
        }
    }

    #[inline(never)]
    fn eval_concat(&mut self, parts: &'a [Expr]) -> Result<Value<'a>> {
        let mut s = String::new();
        for p in parts {
            self.eval(p)?.write_str(&mut s);
            crate::limits::check_value_size(s.len())?;
        }
        crate::limits::charge_copy(s.len())?;
        Ok(Value::string(s))
    }

    #[inline(never)]
    /// `then if test else otherwise` at template line `line`: without an `else`, a false test gives
    /// Jinja2's undefined that names the line.
    fn eval_cond(
        &mut self,
        test: &'a Expr,
        then: &'a Expr,
        otherwise: &'a Option<Box<Expr>>,
        line: u32,
    ) -> Result<Value<'a>> {
        Ok(if self.eval_truthy(test)? {
            self.eval(then)?
        } else {
            match otherwise {
                Some(o) => self.eval(o)?,
                None => Value::Undefined(Some(Rc::new(UndefInfo::Hint(
                    format!(
                        "the inline if-expression on line {line} evaluated to false and no else section was defined."
                    ),
                    crate::error::ErrorKind::UndefinedError,
                )))),
            }
        })
    }

    #[inline(never)]
    fn eval_slice(
        &mut self,
        o: Value<'a>,
        a: &'a Option<Box<Expr>>,
        b: &'a Option<Box<Expr>>,
        c: &'a Option<Box<Expr>>,
    ) -> Result<Value<'a>> {
        if o.is_undefined() {
            return Err(o.undefined_error());
        }
        let a = self.slice_bound(a)?;
        let b = self.slice_bound(b)?;
        let c = self.slice_bound(c)?;
        o.slice(a, b, c)
    }

    #[inline(never)]
    fn eval_test(&mut self, v: &'a Expr, name: &'a Named, args: &'a Args) -> Result<Value<'a>> {
        Ok(match () {
            // `name is defined` needs no value (and no undefined marker) built for a missing name.
            _ if matches!(&**name, "defined" | "undefined") && args.is_empty() => {
                let defined = match &v.kind {
                    ExprKind::Name(n, var) => self.find(n, *var).is_some_and(|x| !x.is_undefined()),
                    // A key of a JSON object: present or not, without an undefined marker.
                    ExprKind::GetAttr(obj, k) if k.data_key => match self.eval(obj)? {
                        Value::Json(Json::Object(m)) => crate::value::json_map_get(m, k).is_some(),
                        o => !builtins::getattr(&o, k).map_err(|err| at(err, v.pos))?.is_undefined(),
                    },
                    _ => !self.eval(v)?.is_undefined(),
                };
                Value::Bool(defined == (&**name == "defined"))
            }
            _ => {
                let x = self.eval(v)?;
                let a = self.eval_args(args)?;
                self.step()?;
                let Some(test) = name.index.and_then(|i| TESTS.get(i)) else {
                    return Err(err!(TemplateRuntimeError, "No test named '{}' found.", &**name));
                };
                // `x is string`: a test of the value alone, called without arguments, binds nothing.
                if args.is_empty() && test.sig.takes_only_hidden() {
                    return Ok(Value::Bool((test.run)(&x, Bound::default())?));
                }
                Value::Bool(builtins::call_test(test, &x, &a)?)
            }
        })
    }

    /// Whether `e` is true in a condition: Python's truthiness of its value, without building the
    /// values of `not`, `and` and `or` or an undefined marker for a missing JSON key.
    fn eval_truthy(&mut self, e: &'a Expr) -> Result<bool> {
        match &e.kind {
            ExprKind::Unary(UnOp::Not, x) => self.nested(|me| me.eval_truthy(x)).map(|t| !t),
            ExprKind::And(a, b) => self.nested(|me| Ok(me.eval_truthy(a)? && me.eval_truthy(b)?)),
            ExprKind::Or(a, b) => self.nested(|me| Ok(me.eval_truthy(a)? || me.eval_truthy(b)?)),
            ExprKind::GetItem(..) | ExprKind::GetAttr(..) => match self.json_member(e) {
                Some((m, key)) => match crate::value::json_map_get(m, key) {
                    Some(j) => Ok(Value::from_json(j).truthy()),
                    // A missing data key is undefined, so false; `obj['items']` is the method.
                    None if matches!(e.kind, ExprKind::GetAttr(..)) || !builtins::dispatch::is_dict_method(key) => {
                        Ok(false)
                    }
                    None => Ok(self.eval(e)?.truthy()),
                },
                None => self.member_truthy(e),
            },
            ExprKind::Compare(first, rest) => {
                let decided = match self.compare_in_place(first, rest) {
                    None if self.spans.is_none() => self.compare_scalars(first, rest),
                    decided => decided,
                };
                match decided {
                    Some(t) => Ok(t),
                    None => Ok(self.eval(e)?.truthy()),
                }
            }
            // A name's value, read where it is (without spans, which note it).
            ExprKind::Name(n, var) if self.spans.is_none() => Ok(match self.find_in_scopes(n, *var) {
                Some(v) => v.truthy(),
                None => self.with_outside(n, var.outer, |v| v.is_some_and(Value::truthy)),
            }),
            // A test gives a boolean, which evaluating it would note nothing of.
            ExprKind::Test(v, name, args) => self
                .nested(|me| me.eval_test(v, name, args))
                .map(|t| t.truthy())
                .map_err(|err| at(err, e.pos)),
            _ => Ok(self.eval(e)?.truthy()),
        }
    }

    /// Whether a member that is not a JSON key (`ns.flag`, `loop.first`) is true, read in place
    /// and noted as evaluating it would be.
    #[inline(never)]
    fn member_truthy(&mut self, e: &'a Expr) -> Result<bool> {
        match self.member_in_place(e) {
            Some(v) => {
                if let Some(rec) = &mut self.spans {
                    rec.note(&v);
                }
                Ok(v.truthy())
            }
            None => Ok(self.eval(e)?.truthy()),
        }
    }

    /// A comparison of one operator other than `in` decided without the general evaluator, as its
    /// value would decide it, when both operands are side-effect-free expressions with scalar
    /// values (see [`scalar`](Self::scalar)) and comparing them cannot fail:
    /// `(message['role'] == 'user') != (loop.index0 % 2 == 0)`. `None` otherwise, with nothing
    /// observable done (the caller evaluates the comparison, which gives its error). Only without
    /// spans (which note reads).
    #[inline(never)]
    fn compare_scalars(&mut self, first: &'a Expr, rest: &'a [(CmpOp, Expr)]) -> Option<bool> {
        let [(op, second)] = rest else {
            return None;
        };
        if matches!(op, CmpOp::In | CmpOp::NotIn) || !may_be_scalar(first) || !may_be_scalar(second) {
            return None;
        }
        let a = self.scalar(first)?;
        // `x == 'text'` / `x != 'text'`: a string is equal when its text is, nothing else is.
        if let (CmpOp::Eq | CmpOp::Ne, ExprKind::Const(Const::Str(lit))) = (op, &second.kind) {
            let equal = matches!(a, Scalar::Str(s) if s == &**lit);
            return Some(equal == (*op == CmpOp::Eq));
        }
        let b = self.scalar(second)?;
        let order = match (a, b) {
            (Scalar::Int(x), Scalar::Int(y)) => x.cmp(&y),
            (Scalar::Bool(x), Scalar::Bool(y)) => x.cmp(&y),
            (Scalar::Str(x), Scalar::Str(y)) => x.cmp(y),
            _ => return compare(*op, &a.value(), &b.value()).ok(),
        };
        Some(crate::value::ordering_holds(*op, order))
    }

    /// The value of a side-effect-free expression when it is a scalar and evaluating it cannot
    /// fail: a literal, a name, `name['key']` or `name.key` read in place, a comparison of such
    /// operands, or integer arithmetic on them that stays within 64 bits. `None` for anything
    /// else, with nothing observable done.
    #[inline(always)]
    fn scalar(&mut self, e: &'a Expr) -> Option<Scalar<'a>> {
        match &e.kind {
            ExprKind::Const(c) => Some(match c {
                Const::None => Scalar::None,
                Const::Bool(b) => Scalar::Bool(*b),
                Const::Int(i) => Scalar::Int(*i),
                Const::BigInt(_) => return None,
                Const::Float(f) => Scalar::Float(*f),
                Const::Str(s) => Scalar::Str(s),
            }),
            ExprKind::Name(n, var) => match self.find_in_scopes(n, *var) {
                Some(v) => Scalar::of(v),
                None => self.with_outside(n, var.outer, |v| v.and_then(Scalar::of)),
            },
            ExprKind::GetItem(..) | ExprKind::GetAttr(..) => Scalar::of(&self.member_in_place(e)?),
            ExprKind::Compare(first, rest) => self.nested(|me| me.nested_comparison(first, rest)),
            ExprKind::Binary(op, a, b) => self.nested(|me| me.int_operation(*op, a, b)),
            _ => None,
        }
    }

    /// `a op b`: on the integers themselves when it is integer arithmetic (see
    /// [`int_expr`](Self::int_expr)), else on the operands' values.
    #[inline(never)]
    fn eval_binary(&mut self, e: &'a Expr, op: BinOp, a: &'a Expr, b: &'a Expr) -> Result<Value<'a>> {
        if may_be_int(a) && may_be_int(b) {
            let mut counted = Counted::default();
            if let Some(i) = self.int_expr(e, &mut counted) {
                for pos in &counted.at[..counted.len] {
                    crate::limits::charge(crate::limits::CALL_STEPS).map_err(|err| at(err, *pos))?;
                }
                return Ok(Value::Int(i));
            }
        }
        let x = self.eval(a)?;
        let y = self.eval(b)?;
        x.binary(op, &y)
    }

    /// Integer arithmetic evaluated on the integers themselves, without a value made for each
    /// step (`(messages|length - 1) - loop.index0`): integer literals, names and members holding
    /// integers, `length` or `count` of a name holding a list, tuple or mapping (noted in
    /// `counted`, to be charged as the calls are), and `+ - * // %` on them within 64 bits.
    /// `None` for anything else, with nothing charged and nothing observable done.
    fn int_expr(&mut self, e: &'a Expr, counted: &mut Counted) -> Option<i64> {
        match &e.kind {
            ExprKind::Const(Const::Int(i)) => Some(*i),
            ExprKind::Name(..) | ExprKind::GetItem(..) | ExprKind::GetAttr(..) => match self.scalar(e)? {
                Scalar::Int(i) => Some(i),
                _ => None,
            },
            ExprKind::Filter(..) if counted.len < counted.at.len() => {
                let (n, var) = counted_name(e)?;
                let len = match self.borrowed_list(n, var) {
                    Some(items) => items.len(),
                    None => match self.find_in_scopes(n, var) {
                        Some(v) => container_len(v)?,
                        None => self.with_outside(n, var.outer, |v| v.and_then(container_len))?,
                    },
                };
                counted.at[counted.len] = e.pos;
                counted.len += 1;
                i64::try_from(len).ok()
            }
            ExprKind::Binary(op, a, b) => self.nested(|me| {
                let x = me.int_expr(a, counted)?;
                let y = me.int_expr(b, counted)?;
                int_arithmetic(*op, x, y)
            }),
            _ => None,
        }
    }

    /// A comparison operand of a comparison (see [`scalar`](Self::scalar)).
    #[inline(never)]
    fn nested_comparison(&mut self, first: &'a Expr, rest: &'a [(CmpOp, Expr)]) -> Option<Scalar<'a>> {
        self.compare_in_place(first, rest)
            .or_else(|| self.compare_scalars(first, rest))
            .map(Scalar::Bool)
    }

    /// Integer arithmetic as a comparison operand (see [`scalar`](Self::scalar)).
    #[inline(never)]
    fn int_operation(&mut self, op: BinOp, a: &'a Expr, b: &'a Expr) -> Option<Scalar<'a>> {
        match (self.scalar(a)?, self.scalar(b)?) {
            (Scalar::Int(x), Scalar::Int(y)) => int_arithmetic(op, x, y).map(Scalar::Int),
            _ => None,
        }
    }

    /// The commonest comparisons of chat templates decided on the context's JSON in place, as
    /// their values would decide them: `obj.key == 'text'` (or `!=`) where `obj` holds a JSON
    /// object that has the key, and `'key' in obj` (or `not in`) where `obj` holds a JSON object.
    /// `None` for any other comparison, with nothing read. With spans, notes what evaluating the
    /// comparison would: the operands' values (the literal `== 'text'` compares with is not
    /// evaluated).
    #[inline(always)]
    fn compare_in_place(&mut self, first: &'a Expr, rest: &'a [(CmpOp, Expr)]) -> Option<bool> {
        let [(op, second)] = rest else {
            return None;
        };
        match (op, &first.kind, &second.kind) {
            (CmpOp::Eq | CmpOp::Ne, _, ExprKind::Const(Const::Str(lit))) => {
                let (m, key) = self.json_member(first)?;
                let value = crate::value::json_map_get(m, key)?;
                if let Some(rec) = &mut self.spans {
                    rec.note(&Value::from_json(value));
                }
                let equal = matches!(value, Json::String(s) if *s == **lit);
                Some(equal == (*op == CmpOp::Eq))
            }
            (CmpOp::In | CmpOp::NotIn, ExprKind::Const(Const::Str(key)), ExprKind::Name(name, var)) => {
                let obj = self.find_json(name, *var)?;
                let Json::Object(m) = obj else {
                    return None;
                };
                if let Some(rec) = &mut self.spans {
                    rec.note(&Value::Str(key));
                    rec.note(&Value::Json(obj));
                }
                Some(crate::value::json_map_get(m, key).is_some() == (*op == CmpOp::In))
            }
            _ => None,
        }
    }

    /// Prints a print plan's operands when every one is a plain string; otherwise writes nothing and
    /// says so (the operands have no side effects, so the caller evaluates the expression again).
    /// An operand's error is the expression's error: every operand before it was a string, and
    /// joining strings cannot fail. With spans, it notes and records what printing the expression's
    /// pieces would: every operand's value, then a span for each.
    fn print_plain(&mut self, leaves: &'a [Expr]) -> Result<bool> {
        if self.spans.is_some() {
            return self.print_plain_tracked(leaves);
        }
        let start = self.out.len();
        for leaf in leaves {
            if !self.print_plain_leaf::<false>(leaf)? {
                self.out.truncate(start);
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// [`print_plain`](Self::print_plain) with spans.
    #[inline(never)]
    fn print_plain_tracked(&mut self, leaves: &'a [Expr]) -> Result<bool> {
        let start = self.out.len();
        let reads = self.spans.as_mut().map_or(0, SpanRecorder::begin_pieces);
        for leaf in leaves {
            if !self.print_plain_leaf::<true>(leaf)? {
                self.out.truncate(start);
                if let Some(rec) = &mut self.spans {
                    rec.forget_reads(reads);
                }
                return Ok(false);
            }
        }
        if let Some(rec) = &mut self.spans {
            rec.record_pieces();
        }
        Ok(true)
    }

    /// Prints one operand of a print plan when it is a plain string; with `TRACK`, notes what
    /// `eval` would and the piece printed.
    #[inline(always)]
    fn print_plain_leaf<const TRACK: bool>(&mut self, leaf: &'a Expr) -> Result<bool> {
        // Literals print themselves; `name['key']` and `name.key` on a JSON object read the string
        // in place.
        if let ExprKind::Const(Const::Str(s)) = &leaf.kind {
            self.print_piece::<TRACK>(s, true);
            return Ok(true);
        }
        if let Some((m, key)) = self.json_member(leaf) {
            return Ok(match crate::value::json_map_get(m, key) {
                Some(Json::String(s)) => {
                    self.print_piece::<TRACK>(s, true);
                    true
                }
                _ => false,
            });
        }
        let value = match &leaf.kind {
            // A string a template scope binds prints as itself.
            ExprKind::Name(name, var) => match self.find_in_scopes(name, *var) {
                Some(Value::Str(s)) => {
                    let s = *s;
                    self.print_piece::<TRACK>(s, true);
                    return Ok(true);
                }
                _ => self.eval(leaf),
            },
            ExprKind::Filter(Some(inner), filter, args) if !TRACK && args.is_empty() => {
                if let Some(s) = self.on_str_member(inner, filter) {
                    crate::limits::charge(crate::limits::CALL_STEPS).map_err(|err| at(err, leaf.pos))?;
                    self.out.push_str(s);
                    return Ok(true);
                }
                self.eval_filter_chain(leaf, Value::Undefined(None))
                    .map_err(|err| at(err, leaf.pos))
            }
            ExprKind::Filter(..) => {
                let v = self
                    .eval_filter_chain(leaf, Value::Undefined(None))
                    .map_err(|err| at(err, leaf.pos));
                if let (true, Some(rec), Ok(v)) = (TRACK, &mut self.spans, &v) {
                    rec.note(v);
                }
                v
            }
            _ => self.eval(leaf),
        };
        match value? {
            Value::Str(s) => self.print_piece::<TRACK>(s, false),
            Value::String(s) => {
                let start = self.out.len();
                self.out.push_str(&s);
                if let (true, Some(rec)) = (TRACK, &mut self.spans) {
                    let piece = rec.captured(&s).map_or(Piece::Computed, Piece::Captured);
                    rec.piece(start, self.out.len(), piece);
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `name['key'] | f` (or `name.key | f`) for a filter `f` that declares what it gives for a
    /// string without arguments (`trim`), when the JSON object `name` holds has a string at `key`:
    /// what the filter gives, without the filter's call (the caller charges it).
    #[inline(always)]
    fn on_str_member(&mut self, inner: &'a Expr, filter: &Named) -> Option<&'a str> {
        let on_str = filter.index.and_then(|i| FILTERS.get(i))?.on_str?;
        let (m, key) = self.json_member(inner)?;
        match crate::value::json_map_get(m, key)? {
            Json::String(s) => Some(on_str(s)),
            _ => None,
        }
    }

    /// Prints a borrowed string of a print plan; with `TRACK`, notes it as `eval` would (unless
    /// `eval` read it already) and notes the piece.
    #[inline(always)]
    fn print_piece<const TRACK: bool>(&mut self, s: &'a str, read_here: bool) {
        let start = self.out.len();
        self.out.push_str(s);
        if let (true, Some(rec)) = (TRACK, &mut self.spans) {
            if read_here {
                rec.note(&Value::Str(s));
            }
            rec.piece(start, self.out.len(), Piece::Borrowed(s.as_ptr() as usize));
        }
    }

    /// Evaluates an expression that is about to be printed. A string built with `+` or `~` gives
    /// its pieces (appended to `buf`), so printing needs no intermediate string and each piece keeps
    /// its origin; the printed text is the same as the concatenation's.
    fn eval_pieces(&mut self, e: &'a Expr, buf: &mut Vec<Value<'a>>) -> Result<Printed<'a>> {
        match &e.kind {
            ExprKind::Binary(BinOp::Add, a, b) => {
                let start = buf.len();
                let left = self.eval_pieces(a, buf)?;
                let mid = buf.len();
                let right = self.eval_pieces(b, buf)?;
                if let (Printed::Pieces, Printed::Pieces) = (&left, &right) {
                    if !buf[start..].iter().any(is_markup) {
                        return Ok(Printed::Pieces);
                    }
                }
                let y = match right {
                    Printed::Pieces => pieces_value(buf.drain(mid..)),
                    Printed::Value(v) => v,
                };
                let x = match left {
                    Printed::Pieces => pieces_value(buf.drain(start..)),
                    Printed::Value(v) => v,
                };
                x.binary(BinOp::Add, &y)
                    .map(Printed::Value)
                    .map_err(|err| at(err, e.pos))
            }
            ExprKind::Concat(parts) => {
                for p in parts {
                    let start = buf.len();
                    match self.eval_pieces(p, buf)? {
                        Printed::Pieces => {
                            for v in &mut buf[start..] {
                                if let Value::Safe(s) = v {
                                    *v = Value::String(s.clone());
                                }
                            }
                        }
                        Printed::Value(Value::Safe(s)) => buf.push(Value::String(s)),
                        Printed::Value(v) if v.is_str() => buf.push(v),
                        Printed::Value(v) => buf.push(Value::string(v.to_py_str())),
                    }
                }
                Ok(Printed::Pieces)
            }
            _ => {
                let v = self.eval(e)?;
                v.check_printable().map_err(|err| at(err, e.pos))?;
                Ok(if v.is_str() {
                    buf.push(v);
                    Printed::Pieces
                } else {
                    Printed::Value(v)
                })
            }
        }
    }

    fn slice_bound(&mut self, e: &'a Option<Box<Expr>>) -> Result<Option<i64>> {
        let Some(e) = e else { return Ok(None) };
        match self.eval(e)? {
            Value::None => Ok(None),
            Value::Int(i) => Ok(Some(i)),
            Value::Bool(b) => Ok(Some(b as i64)),
            Value::BigInt(b) => Ok(Some(crate::value::ops::clamped_index(&b))),
            _ => Err(err!(
                TypeError,
                "slice indices must be integers or None or have an __index__ method"
            )),
        }
    }

    /// Evaluates call arguments (`*args` and `**kwargs` expanded).
    #[inline]
    pub fn eval_args(&mut self, a: &'a Args) -> Result<CallArgs<'a>> {
        if a.is_empty() {
            return Ok(CallArgs::default());
        }
        self.eval_given_args(a)
    }

    /// [`eval_args`](Self::eval_args) for a call with arguments.
    #[inline(never)]
    fn eval_given_args(&mut self, a: &'a Args) -> Result<CallArgs<'a>> {
        let mut out = CallArgs::default();
        for e in &a.pos {
            out.pos.push(self.eval(e)?);
        }
        if let Some(star) = &a.star {
            let v = self.eval(star)?;
            out.pos.extend(v.iterate()?.iter().cloned());
        }
        for (k, e) in &a.kw {
            out.kw.push((k, self.eval(e)?));
        }
        if let Some(dstar) = &a.dstar {
            let v = self.eval(dstar)?;
            if !v.is_mapping() {
                return Err(err!(
                    TypeError,
                    "argument after ** must be a mapping, not {}",
                    v.type_name()
                ));
            }
            let mut pairs = Vec::new();
            v.for_each_pair(|k, v| pairs.push((k, v)));
            for (k, v) in pairs {
                match k {
                    Value::Str(s) => out.kw.push((s, v)),
                    _ => return Err(err!(TypeError, "keywords must be strings")),
                }
            }
        }
        Ok(out)
    }

    fn eval_filter_chain(&mut self, e: &'a Expr, input: Value<'a>) -> Result<Value<'a>> {
        let ExprKind::Filter(inner, _, _) = &e.kind else {
            return self.eval(e);
        };
        let v = match inner {
            Some(inner) if matches!(inner.kind, ExprKind::Filter(..)) => self.eval_filter_chain(inner, input)?,
            Some(inner) => {
                // `messages | length`: the caller's list counted in place.
                if let Some(items) = counted_name(e).and_then(|(n, var)| self.borrowed_list(n, var)) {
                    crate::limits::charge(crate::limits::CALL_STEPS).map_err(|err| at(err, e.pos))?;
                    return Ok(Value::Int(items.len() as i64));
                }
                self.eval(inner)?
            }
            None => input,
        };
        self.finish_filter(e, v)
    }

    /// Applies the filter of the filter expression `e` to `v`, the value of its input.
    #[inline(always)]
    fn finish_filter(&mut self, e: &'a Expr, v: Value<'a>) -> Result<Value<'a>> {
        let ExprKind::Filter(_, name, args) = &e.kind else {
            return Ok(v);
        };
        let filter = name.index.and_then(|i| FILTERS.get(i));
        // `text | trim`: the part of a borrowed string, charged as the call's result would be.
        if let (Some(on_str), Value::Str(s), true) = (filter.and_then(|f| f.on_str), &v, args.is_empty()) {
            crate::limits::charge(crate::limits::CALL_STEPS).map_err(|err| at(err, e.pos))?;
            return Ok(Value::Str(on_str(s)));
        }
        // `items | length`: a list's or mapping's length, charged as the call would be.
        if let (Some(true), true) = (filter.map(|f| f.counts), args.is_empty()) {
            if let Some(len) = container_len(&v) {
                crate::limits::charge(crate::limits::CALL_STEPS).map_err(|err| at(err, e.pos))?;
                return Ok(Value::Int(len as i64));
            }
        }
        let a = self.eval_args(args)?;
        let Some(filter) = filter else {
            return Err(at(
                err!(TemplateRuntimeError, "No filter named '{}' found.", &*name.name),
                e.pos,
            ));
        };
        let out = builtins::call_filter(filter, v, a).map_err(|err| at(err, e.pos))?;
        builtins::charge_result(&out).map_err(|err| at(err, e.pos))?;
        Ok(out)
    }

    // ---- calls ----------------------------------------------------------------------------

    /// `obj.name(args)`: a method call, or a call of whatever attribute `name` holds.
    #[inline]
    fn call_attr(&mut self, obj: &Value<'a>, name: &'a str, args: CallArgs<'a>) -> Result<Value<'a>> {
        if !name.starts_with('_') && !obj.is_undefined() {
            if let Some(m) = builtins::table::method(obj, name) {
                return builtins::dispatch::call(m, obj, args);
            }
        }
        let f = builtins::getattr(obj, name)?;
        self.call_value(&f, args)
    }

    /// Calls a callable value.
    pub fn call_value(&mut self, f: &Value<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
        match f {
            Value::Object(o) => match &**o {
                Object::Macro(m) => self.call_macro(m, args),
                Object::Function(name) => builtins::call_global(&self.ctx.clock, name, args),
                Object::Method(recv, name, _) => builtins::dispatch::call_method(recv, name, args),
                Object::Loop(l) => self.call_loop(l, args),
                Object::Joiner(sep, used) => builtins::globals::call_joiner(sep, used, &args),
                Object::Block(body) => {
                    args.none("block")?;
                    self.enter()?;
                    let restore = self.current;
                    let id = self.push_frame(0, BY_NAME);
                    let r = self.capture(|me| me.exec_block(body));
                    self.pop_frame(id, restore);
                    self.depth -= 1;
                    r
                }
                _ => Err(err!(TypeError, "'{}' object is not callable", f.type_name())),
            },
            Value::Undefined(_) => Err(f.undefined_error()),
            _ => Err(err!(TypeError, "'{}' object is not callable", f.type_name())),
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > self.ctx.limits.max_recursion {
            return Err(err!(RecursionError, "maximum recursion depth exceeded"));
        }
        Ok(())
    }

    /// `loop(iterable)`: Jinja2's `LoopContext.__call__`, its arguments bound as Python binds them.
    fn call_loop(&mut self, l: &LoopValue<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
        const CALL: &str = "LoopContext.__call__()";
        if let Some((k, _)) = args.kw.iter().find(|(k, _)| *k != "iterable") {
            return Err(err!(TypeError, "{CALL} got an unexpected keyword argument '{k}'"));
        }
        let iter = match (args.pos.as_slice(), args.kw.as_slice()) {
            ([_, ..], [_]) => {
                return Err(err!(TypeError, "{CALL} got multiple values for argument 'iterable'"));
            }
            ([v], []) | ([], [(_, v)]) => v.clone(),
            ([], _) => {
                return Err(err!(
                    TypeError,
                    "{CALL} missing 1 required positional argument: 'iterable'"
                ));
            }
            (many, _) => {
                let given = many.len() + 1;
                return Err(err!(
                    TypeError,
                    "{CALL} takes 2 positional arguments but {given} were given"
                ));
            }
        };
        let Some(f) = l.recursive else {
            return Err(err!(
                TypeError,
                "The loop must have the 'recursive' marker to be called recursively."
            ));
        };
        self.enter()?;
        let restore = self.current;
        self.current = l.scope;
        let depth0 = l.depth0 + 1;
        let r = self.capture(|me| me.exec_for(f, iter, depth0));
        self.current = restore;
        self.depth -= 1;
        r
    }

    /// Binds the macro parameter `i` in the macro's frame (parameters are its first slots).
    fn bind_param(&mut self, i: usize, v: Value<'a>) {
        if let Some(slot) = self.frames[self.current].slots.get_mut(i) {
            *slot = Some(v);
        }
    }

    /// Calls a macro as Jinja2's `Macro.__call__` does: positional arguments fill the parameters in
    /// order, keyword arguments the rest; `caller` goes to the implicit parameter of a body that
    /// calls it unless a `caller` parameter took it; what is left goes to `kwargs` and `varargs`
    /// when the body reads them, else is an error (keywords checked first).
    fn call_macro(&mut self, m: &MacroValue<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
        let def = m.def;
        let argc = def.params.len();
        let mut kw = args.kw;
        let take = |kw: &mut Vec<(&'a str, Value<'a>)>, name: &str| {
            kw.iter().position(|(k, _)| *k == name).map(|i| kw.remove(i).1)
        };
        let mut pos = args.pos.into_iter();
        let mut bound: Vec<Option<Value<'a>>> = pos.by_ref().take(argc).map(Some).collect();
        let found_caller = if bound.len() != argc {
            let mut found = false;
            for (name, _) in &def.params[bound.len()..] {
                found |= &**name == "caller";
                bound.push(take(&mut kw, name));
            }
            found
        } else {
            def.params.iter().any(|(n, _)| &**n == "caller")
        };
        let caller = (def.uses_caller && !found_caller).then(|| match take(&mut kw, "caller") {
            Some(v) if !matches!(v, Value::None) => v,
            _ => Value::Undefined(Some(Rc::new(UndefInfo::Hint(
                "No caller defined".to_string(),
                crate::error::ErrorKind::UndefinedError,
            )))),
        });
        if !def.uses_kwargs {
            if kw.iter().any(|(k, _)| *k == "caller") {
                return Err(err!(
                    TypeError,
                    "macro {} was invoked with two values for the special caller argument. This is most likely a bug.",
                    def.shown_name()
                ));
            }
            if let Some((k, _)) = kw.first() {
                return Err(err!(
                    TypeError,
                    "macro {} takes no keyword argument '{k}'",
                    def.shown_name()
                ));
            }
        }
        let varargs: Vec<Value<'a>> = pos.collect();
        if !varargs.is_empty() && !def.uses_varargs {
            return Err(err!(
                TypeError,
                "macro {} takes not more than {} argument(s)",
                def.shown_name(),
                argc
            ));
        }
        self.enter()?;
        let restore = self.current;
        let id = self.push_frame(m.scope, def.scope);
        let r = (|| -> Result<Value<'a>> {
            // Every given argument is bound before the defaults are evaluated, in order.
            for (i, v) in bound.into_iter().enumerate() {
                if let Some(v) = v {
                    self.bind_param(i, v);
                }
            }
            for (i, (name, default)) in def.params.iter().enumerate() {
                if matches!(self.frames[id].slots.get(i), Some(Some(_))) {
                    continue;
                }
                let v = match default {
                    Some(d) => self.eval(d)?,
                    None => Value::Undefined(Some(Rc::new(UndefInfo::Hint(
                        format!("parameter '{name}' was not provided"),
                        crate::error::ErrorKind::UndefinedError,
                    )))),
                };
                self.bind_param(i, v);
            }
            if def.uses_varargs {
                self.bind_by_name("varargs", Value::Tuple(Rc::new(varargs)));
            }
            if def.uses_kwargs {
                let extra = kw.into_iter().map(|(k, v)| (Value::Str(k), v)).collect();
                self.bind_by_name("kwargs", crate::value::ops::dict_from(extra)?);
            }
            if let Some(c) = caller {
                self.bind_by_name("caller", c);
            }
            self.capture(|me| me.exec_block(&def.body))
        })();
        self.pop_frame(id, restore);
        self.depth -= 1;
        r
    }
}

/// A value about to be printed: a string as the pieces it was concatenated from, or any value.
fn const_value(c: &Const) -> Value<'_> {
    match c {
        Const::None => Value::None,
        Const::Bool(b) => Value::Bool(*b),
        Const::Int(i) => Value::Int(*i),
        Const::BigInt(i) => Value::BigInt(Rc::new((**i).clone())),
        Const::Float(f) => Value::Float(*f),
        Const::Str(s) => Value::Str(s),
    }
}

/// A printed expression: string pieces (in the evaluator's piece buffer), or one value.
enum Printed<'a> {
    Pieces,
    Value(Value<'a>),
}

/// The string that pieces of a concatenation make (a single piece as it is).
fn pieces_value<'a>(mut parts: impl ExactSizeIterator<Item = Value<'a>>) -> Value<'a> {
    if parts.len() == 1 {
        return parts.next().unwrap_or(Value::Str(""));
    }
    let mut s = String::new();
    parts.for_each(|p| p.write_str(&mut s));
    Value::string(s)
}

fn is_markup(v: &Value) -> bool {
    matches!(v, Value::Safe(_))
}

/// Every `{% block %}` of a body, nested ones included, by name.
fn collect_blocks<'a>(body: &'a [Stmt], out: &mut Vec<(&'a str, &'a [Stmt])>) {
    for s in body {
        match &s.kind {
            StmtKind::Block(name, inner, _) => {
                out.push((name, inner));
                collect_blocks(inner, out);
            }
            StmtKind::If(branches, else_body) => {
                branches.iter().for_each(|(_, b)| collect_blocks(b, out));
                collect_blocks(else_body, out);
            }
            StmtKind::For(f) => {
                collect_blocks(&f.body, out);
                collect_blocks(&f.else_body, out);
            }
            StmtKind::SetBlock(_, _, b, _)
            | StmtKind::FilterBlock(_, b, _)
            | StmtKind::With(_, b, _)
            | StmtKind::Generation(b, _)
            | StmtKind::Autoescape(_, b, _) => collect_blocks(b, out),
            _ => {}
        }
    }
}

/// `obj.name` of an object (out of line: rarer than the reads of JSON keys and loop attributes
/// it is checked with).
#[inline(never)]
fn object_attribute<'a>(obj: &Value<'a>, name: &'a str) -> Result<Value<'a>> {
    builtins::getattr(obj, name)
}

/// Python's `v == lit` for a string literal: a string is equal when its text is, nothing else is.
#[inline]
fn equals_text<'a>(v: &Value<'a>, lit: &'a str) -> bool {
    match v {
        Value::Str(s) => *s == lit,
        Value::String(s) | Value::Safe(s) => **s == *lit,
        other => other.py_eq(&Value::Str(lit)),
    }
}

/// A scalar operand of a comparison (see [`Evaluator::scalar`]): `None`, a boolean, a number or
/// a borrowed string, held without reference counts.
#[derive(Clone, Copy)]
enum Scalar<'a> {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

impl<'a> Scalar<'a> {
    /// The scalar a value is, if it is one.
    #[inline]
    fn of(v: &Value<'a>) -> Option<Self> {
        Some(match v {
            Value::None => Scalar::None,
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Int(i) => Scalar::Int(*i),
            Value::Float(f) => Scalar::Float(*f),
            Value::Str(s) => Scalar::Str(s),
            _ => return None,
        })
    }

    fn value(self) -> Value<'a> {
        match self {
            Scalar::None => Value::None,
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Int(i) => Value::Int(i),
            Scalar::Float(f) => Value::Float(f),
            Scalar::Str(s) => Value::Str(s),
        }
    }
}

/// Python's `x op y` on two integers when it is an integer within 64 bits (`+`, `-`, `*`, `//`,
/// `%`); `None` otherwise (true division, powers, a zero divisor, overflow).
fn int_arithmetic(op: BinOp, x: i64, y: i64) -> Option<i64> {
    match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        BinOp::Mul => x.checked_mul(y),
        BinOp::Mod => crate::pystr::int_mod(x, y).ok(),
        BinOp::FloorDiv => crate::pystr::int_floordiv(x, y).ok().flatten(),
        BinOp::Div | BinOp::Pow => None,
    }
}

/// For `name | length` (or `count`) without arguments: the name and its reference.
fn counted_name(e: &Expr) -> Option<(&str, VarRef)> {
    let ExprKind::Filter(Some(inner), filter, args) = &e.kind else {
        return None;
    };
    let (ExprKind::Name(n, var), true) = (&inner.kind, args.is_empty()) else {
        return None;
    };
    filter.index.and_then(|i| FILTERS.get(i)).filter(|f| f.counts)?;
    Some((n, *var))
}

/// The `length` filters [`Evaluator::int_expr`] evaluated, where each is, to charge them as calls
/// once the whole expression is known to be integer arithmetic.
#[derive(Default)]
struct Counted {
    at: [Pos; 4],
    len: usize,
}

/// The number of items of a list, tuple or mapping, as `length` gives it.
fn container_len(v: &Value) -> Option<usize> {
    match v {
        Value::List(items) | Value::Tuple(items) => Some(items.len()),
        Value::Json(Json::Array(items)) => Some(items.len()),
        Value::Json(Json::Object(m)) => Some(m.len()),
        Value::Dict(d) => Some(d.len()),
        _ => None,
    }
}

/// Whether `e` is of a kind [`Evaluator::int_expr`] may evaluate (checked before anything is read).
fn may_be_int(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(c) => matches!(c, Const::Int(_)),
        ExprKind::Name(..) | ExprKind::Binary(..) => true,
        ExprKind::Filter(..) => counted_name(e).is_some(),
        _ => named_member(e).is_some(),
    }
}

/// Whether `e` is of a kind [`Evaluator::scalar`] may evaluate (checked before anything is read).
fn may_be_scalar(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Const(_) | ExprKind::Name(..) | ExprKind::Compare(..) | ExprKind::Binary(..)
    ) || named_member(e).is_some()
}

/// For `name['key']` or `name.key` (a data key): the name, its reference and the key.
#[inline(always)]
fn named_member(e: &Expr) -> Option<(&str, VarRef, &str)> {
    let (obj, key) = match &e.kind {
        ExprKind::GetItem(obj, key) => match &key.kind {
            ExprKind::Const(Const::Str(k)) => (obj, &**k),
            _ => return None,
        },
        ExprKind::GetAttr(obj, member) if member.data_key => (obj, &*member.name),
        _ => return None,
    };
    match &obj.kind {
        ExprKind::Name(name, var) => Some((name, *var, key)),
        _ => None,
    }
}

/// The value a loop target holds after `v` is bound to it: `v` for a name, the tuple of its unpacked
/// parts for names to unpack into.
fn target_value<'a>(target: &Target, v: &Value<'a>) -> Result<Value<'a>> {
    match target {
        Target::Tuple(names) => {
            let items = unpack(v, names.len())?;
            let parts = (names.iter().zip(items.iter()))
                .map(|(t, item)| target_value(t, item))
                .collect::<Result<Vec<_>>>()?;
            Ok(Value::Tuple(Rc::new(parts)))
        }
        _ => Ok(v.clone()),
    }
}

/// Python tuple unpacking of `v` into `n` values (a tuple or list gives its own items, uncopied).
fn unpack<'a>(v: &Value<'a>, n: usize) -> Result<Rc<Vec<Value<'a>>>> {
    let items = v
        .iterate()
        .map_err(|_| err!(TypeError, "cannot unpack non-iterable {} object", v.type_name()))?;
    if items.len() < n {
        return Err(err!(
            ValueError,
            "not enough values to unpack (expected {n}, got {})",
            items.len()
        ));
    }
    if items.len() > n {
        return Err(err!(ValueError, "too many values to unpack (expected {n})"));
    }
    Ok(items)
}

/// A `{% generation %}` block as transformers' tracker records it: the length of the text the
/// template had yielded when the block's body returned, and the length of the body's text.
#[derive(Clone, Copy)]
struct GenerationSpan {
    start: usize,
    len: GenerationLen,
}

/// How long a generation block's text is: its bytes where it was written in place (at `start`), or
/// its characters where Jinja2 buffered it (counted over the output from `start`, as Python
/// indexes the text).
#[derive(Clone, Copy)]
enum GenerationLen {
    Bytes(usize),
    Chars(usize),
}

/// The byte spans of `spans` over the finished `text`, into `out`. A span counted in characters
/// may reach past the text (the block's text was not written there, or not at all): each
/// character past the end counts one byte, so [`CodePoints::span`](crate::output::CodePoints::span) gives
/// transformers' indices and no token holds them.
fn generation_byte_spans(spans: &[GenerationSpan], text: &str, out: &mut Vec<ByteSpan>) {
    out.clear();
    out.extend(spans.iter().map(|s| {
        let end = match s.len {
            GenerationLen::Bytes(n) => s.start + n,
            GenerationLen::Chars(n) => {
                let rest = text.get(s.start..).unwrap_or_default();
                match rest.char_indices().nth(n) {
                    Some((i, _)) => s.start + i,
                    None => text.len() + (n - rest.chars().count()),
                }
            }
        };
        (s.start, end)
    }));
}
