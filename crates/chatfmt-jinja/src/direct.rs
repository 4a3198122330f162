//! Direct renders: a template made of text, printed string concatenations, `for` loops over a
//! context list or a local one, `if` tests of context values (and of `loop.first` / `loop.last` /
//! `loop.index0`), `set` of a literal, a context value, `x | trim`, `list[n:]` or
//! `list | selectattr('k', 'equalto', 'v') | list` (charged, not held), `is defined`, `is none` and
//! `'key' in item` renders without the evaluator, reading the caller's JSON in place (ChatML,
//! Zephyr, Phi-3, Hermes, Tulu, OLMo, Gemma, Mistral v0.1 and v0.3, Yi, DeepSeek LLM, Llama 3.1,
//! Qwen2.5, ...).
//!
//! A direct plan is compiled from the syntax tree when every statement has that shape, or is made
//! only of text, prints, `if`, `for` and `set` of a name (or a namespace attribute) and can be left
//! to the evaluator: such a statement, and a test the plan cannot run, gives way when the run
//! reaches it (a template's tool branches, `raise_exception(...)`), so a plan serves the
//! conversations that do not take those branches. A template that gives way on every render (at
//! its top level, or directly in a top-level loop's body) has no plan.
//!
//! Running a plan writes what the evaluator would, charges the same steps and checks the output
//! limit after the same statements, so its text, step count and limit errors are the evaluator's.
//! Whenever a value is not what the plan expects (a printed value that is not a string, a missing
//! key, a list that is not a list) it gives up, and the caller renders with the evaluator from
//! scratch: the plan never raises a template error of its own. A plan that gives way on most
//! renders is tried only now and then (see [`Plan::worth_trying`]).
//!
//! A name a plan `set`s is a local of the plan, read as Jinja2 reads it: the value set last in the
//! frame, else the context's (a name not yet set, or set on a branch not taken, reads the context;
//! a name a loop's body sets reads the context again at the start of each iteration). A name is set
//! either outside loops or in loop bodies, never both (a loop-local shadowing an outer local takes
//! the evaluator), and a loop's body reads a name set outside loops only after its first `set` (before
//! it, Jinja2 reads it as undefined or as the context's, depending on the rest of the template).

use crate::ast::{BinOp, CmpOp, Const, Expr, ExprKind, Pos, Stmt, StmtKind, Target, UnOp};
use crate::builtins::dispatch::is_dict_method;
use crate::builtins::is_global;
use crate::builtins::table::FILTERS;
use crate::context::{Borrowed, Context};
use crate::error::{Error, Result};
use crate::limits::{charge, charge_values, output_exceeded, CALL_STEPS, VALUES_PER_STEP};
use crate::value::{json_map_get, Value};
use serde_json::Value as Json;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// How deep statements may nest in a plan (deeper templates take the evaluator, which grows its
/// stack as it needs).
const MAX_DEPTH: usize = 16;

/// How many context names a plan may read (each is looked up once per run).
const MAX_NAMES: usize = 12;

/// How many names a plan may `set` (at most 32: a bit each in [`Plan::loop_locals`]).
const MAX_LOCALS: usize = 8;

/// A compiled direct plan (see the module documentation).
#[derive(Debug)]
pub(crate) struct Plan {
    body: Vec<Op>,
    /// The context names the plan reads, in the order of their [`Read::Var`] index.
    names: Vec<Box<str>>,
    /// The context name each local reads while it is not set (a [`Read::Var`] index).
    locals: Vec<usize>,
    /// The locals a loop's body sets (a bit per local), unset at the start of each iteration.
    loop_locals: u32,
    /// Runs that completed, and runs that gave way to the evaluator.
    completed: AtomicU32,
    gave_way: AtomicU32,
    /// Renders left to the evaluator without trying the plan.
    skipped: AtomicU32,
}

#[derive(Debug)]
struct Op {
    kind: OpKind,
    pos: Pos,
}

#[derive(Debug)]
enum OpKind {
    Text(Box<str>),
    Print(Box<[Piece]>),
    /// A loop over a context list or a local one ([`Read::Var`] or [`Read::Local`]) whose body
    /// reads its item as [`Read::Item`].
    For(Read, Vec<Op>),
    If(Vec<(Test, Vec<Op>)>, Vec<Op>),
    /// `{% set name = ... %}` of local `usize`.
    Set(usize, Source),
    /// A statement the evaluator runs (`{{ raise_exception(...) }}` among them): the run gives way.
    GiveWay,
}

/// What a `set` stores.
#[derive(Debug)]
enum Source {
    /// A string, integer, boolean or `none` literal, held as the JSON value it reads as.
    Literal(Json),
    Read(Read),
    /// `x | f` of a string for a filter `f` without arguments that declares what it gives for a
    /// string (`trim`), at the filter's position (where its call is charged).
    Filtered(Read, fn(&str) -> &str, Pos),
    /// `list[start:]` of a list, `start` an integer literal.
    Slice(Read, i64),
    /// `list | selectattr('attr', 'equalto', 'text') | list` of a list of JSON objects, at the
    /// positions of the two filters (where their calls are charged). The plan charges what the
    /// evaluator charges and holds no value: a read of it gives way.
    SelectEq(Read, Box<str>, Box<str>, [Pos; 2]),
}

#[derive(Debug)]
enum Piece {
    Literal(Box<str>),
    Read(Read),
    /// `x['key'] | f` for a filter `f` without arguments that declares what it gives for a string
    /// (`trim`), at the filter's position (where its call is charged).
    Filtered(Read, fn(&str) -> &str, Pos),
}

/// A value read from the context or the loop's item, optionally a key of it.
#[derive(Debug)]
enum Read {
    /// A context variable, by its index in [`Plan::names`].
    Var(usize),
    /// The current loop item.
    Item,
    /// A key of a context variable holding an object.
    VarKey(usize, Box<str>),
    /// A key of the current loop item.
    ItemKey(Box<str>),
    /// An item of a context list by its index (negative from the end), optionally a key of it.
    VarIndex(usize, i64, Option<Box<str>>),
    /// A local of the plan (by its index): its value, else its context name's.
    Local(usize),
    /// An item of a local list by its index (negative from the end), optionally a key of it.
    LocalIndex(usize, i64, Option<Box<str>>),
}

/// An integer: `loop.index0`, `loop.index`, a literal, or `%` of one by a positive literal.
#[derive(Debug)]
enum Int {
    Index0,
    Index,
    Literal(i64),
    Mod(Box<Int>, i64),
}

#[derive(Debug)]
enum Test {
    Truthy(Read),
    /// The truth of a key of a JSON object, false when the object lacks it.
    KeyTruthy(Read),
    /// `read == literal` (or `!=` when the flag is set) where `read` gives a string.
    Equals(Read, Box<str>, bool),
    /// `loop.first`, `loop.last`.
    First,
    Last,
    /// `a == b` (or `!=` when the flag is set) of two integers.
    IntEquals(Int, Int, bool),
    /// `(a) == (b)` (or `!=`) of two comparisons, which are booleans.
    SameTruth(Box<Test>, Box<Test>, bool),
    /// `x is defined` (`is undefined` when the flag is set).
    Defined(Read, bool),
    /// `x is none`, at the test's position (where its call is charged).
    IsNone(Read, Pos),
    /// `'key' in x` (`not in` when the flag is set) of a JSON object `x`.
    HasKey(Read, Box<str>, bool),
    /// A test the evaluator runs: the run gives way.
    GiveWay,
    Not(Box<Test>),
    And(Box<Test>, Box<Test>),
    Or(Box<Test>, Box<Test>),
}

/// Compiles `body` to a plan, if every statement has the shape of the module documentation.
pub(crate) fn compile(body: &[Stmt]) -> Option<Plan> {
    let mut locals = Vec::new();
    collect_locals(body, false, &mut locals)?;
    let mut c = Compiler {
        names: Vec::new(),
        item: None,
        locals,
        set_outside_loops: 0,
        doomed: false,
    };
    // A plan that gives way at its top level, or in every iteration of a top-level loop, gives way
    // on every render: it has no use.
    let body = c.block(body, 0, true)?;
    let (locals, loop_locals) = c.fallbacks()?;
    (c.names.len() <= MAX_NAMES).then_some(Plan {
        body,
        names: c.names,
        locals,
        loop_locals,
        completed: AtomicU32::new(0),
        gave_way: AtomicU32::new(0),
        skipped: AtomicU32::new(0),
    })
}

/// The names `body` sets, each with whether a loop's body sets it; `None` when a name is set both
/// outside loops and in a loop's body, or is a loop's target, `loop` or `self`, when there are
/// more than [`MAX_LOCALS`], or when a statement binds names otherwise (`set a, b = ...`, a loop's
/// `else` block).
fn collect_locals<'t>(body: &'t [Stmt], in_loop: bool, out: &mut Vec<(&'t str, bool)>) -> Option<()> {
    for s in body {
        match &s.kind {
            StmtKind::Set(Target::Name(name, _), _) => {
                if matches!(&**name, "loop" | "self") {
                    return None;
                }
                match out.iter().find(|(n, _)| *n == &**name) {
                    Some((_, frame)) if *frame != in_loop => return None,
                    Some(_) => {}
                    None if out.len() < MAX_LOCALS => out.push((name, in_loop)),
                    None => return None,
                }
            }
            StmtKind::Set(Target::Tuple(_), _) => return None,
            StmtKind::For(f) if !f.else_body.is_empty() => return None,
            StmtKind::For(f) => collect_locals(&f.body, true, out)?,
            StmtKind::If(branches, else_body) => {
                for (_, b) in branches {
                    collect_locals(b, in_loop, out)?;
                }
                collect_locals(else_body, in_loop, out)?;
            }
            _ => {}
        }
    }
    Some(())
}

/// Whether the evaluator may run `s` after the plan ran what came before it: it is made only of
/// text, prints, `if`, `for` (without `else`), `break`, `continue` and `set` of a name or a
/// namespace attribute, so it binds no name that [`collect_locals`] does not see.
fn can_give_way(s: &Stmt, depth: usize) -> bool {
    let all = |body: &[Stmt]| depth < MAX_DEPTH && body.iter().all(|s| can_give_way(s, depth + 1));
    match &s.kind {
        StmtKind::Text(_) | StmtKind::Print(..) | StmtKind::Break | StmtKind::Continue => true,
        StmtKind::Set(Target::Name(..) | Target::Attr(..), _) => true,
        StmtKind::For(f) => f.else_body.is_empty() && all(&f.body),
        StmtKind::If(branches, else_body) => branches.iter().all(|(_, b)| all(b)) && all(else_body),
        _ => false,
    }
}

struct Compiler<'t> {
    names: Vec<Box<str>>,
    /// The target name of the loop being compiled.
    item: Option<&'t str>,
    /// The names the plan sets, each with whether a loop's body sets it.
    locals: Vec<(&'t str, bool)>,
    /// The locals set outside loops whose first `set` comes before the statement being compiled
    /// (a bit per local).
    set_outside_loops: u32,
    /// Whether the template has no plan (found while compiling a statement within it).
    doomed: bool,
}

impl<'t> Compiler<'t> {
    /// The ops of `body`; with `strict`, a statement that would give way leaves the template
    /// without a plan.
    fn block(&mut self, body: &'t [Stmt], depth: usize, strict: bool) -> Option<Vec<Op>> {
        if depth > MAX_DEPTH {
            self.doomed = true;
            return None;
        }
        body.iter().map(|s| self.stmt(s, depth, strict)).collect()
    }

    /// A statement's op: its own, else [`OpKind::GiveWay`] when the evaluator may run it.
    fn stmt(&mut self, s: &'t Stmt, depth: usize, strict: bool) -> Option<Op> {
        let kind = match self.op(s, depth) {
            Some(kind) => kind,
            None if !self.doomed && !strict && can_give_way(s, depth) => OpKind::GiveWay,
            None => {
                self.doomed = true;
                return None;
            }
        };
        Some(Op { kind, pos: s.pos })
    }

    fn op(&mut self, s: &'t Stmt, depth: usize) -> Option<OpKind> {
        Some(match &s.kind {
            StmtKind::Text(t) => OpKind::Text(t.clone()),
            StmtKind::Print(_, Some(leaves)) => {
                OpKind::Print(leaves.iter().map(|e| self.piece(e)).collect::<Option<_>>()?)
            }
            StmtKind::For(f) => {
                let Target::Name(target, _) = &f.target else {
                    return None;
                };
                // A body's `loop` is read only as `loop.first`, `loop.last` or `loop.index0` /
                // `loop.index` in integer comparisons (any other read of the name has no plan).
                if self.item.is_some() || f.recursive || f.cond.is_some() || !f.else_body.is_empty() {
                    return None;
                }
                if self.local(target).is_some() {
                    return None;
                }
                let list = match &f.iter.kind {
                    ExprKind::Name(..) => self.read(&f.iter)?,
                    _ => return None,
                };
                self.item = Some(target);
                // A top-level loop that gives way in every iteration gives way on most renders.
                let body = self.block(&f.body, depth + 1, depth == 0);
                self.item = None;
                OpKind::For(list, body?)
            }
            StmtKind::If(branches, else_body) => {
                let branches = branches
                    .iter()
                    .map(|(test, body)| Some((self.test(test), self.block(body, depth + 1, false)?)))
                    .collect::<Option<_>>()?;
                OpKind::If(branches, self.block(else_body, depth + 1, false)?)
            }
            StmtKind::Set(Target::Name(name, _), value) => {
                let source = match &value.kind {
                    ExprKind::Const(Const::Str(lit)) => Source::Literal(Json::String(lit.to_string())),
                    ExprKind::Const(Const::Int(i)) => Source::Literal(Json::from(*i)),
                    ExprKind::Const(Const::Bool(b)) => Source::Literal(Json::Bool(*b)),
                    ExprKind::Const(Const::None) => Source::Literal(Json::Null),
                    ExprKind::Filter(Some(inner), filter, args) if &***filter == "list" && args.is_empty() => {
                        self.select_eq(inner, value.pos)?
                    }
                    // `x | trim`, charged as the evaluator's shortcut for a string charges it.
                    ExprKind::Filter(Some(inner), filter, args) if args.is_empty() => {
                        let on_str = filter.index.and_then(|i| FILTERS.get(i))?.on_str?;
                        Source::Filtered(self.read(inner)?, on_str, value.pos)
                    }
                    ExprKind::GetItem(list, key) => match &key.kind {
                        ExprKind::Slice(Some(start), None, None) => {
                            Source::Slice(self.read(list)?, int_literal(start)?)
                        }
                        _ => Source::Read(self.read(value)?),
                    },
                    _ => Source::Read(self.read(value)?),
                };
                // `collect_locals` found every name set, with its frame.
                let i = self.local(name)?;
                if self.item.is_none() {
                    self.set_outside_loops |= 1 << i;
                }
                OpKind::Set(i, source)
            }
            _ => return None,
        })
    }

    /// `list | selectattr('attr', 'equalto', 'text')` (the test also named `eq` or `==`), the
    /// input of a `list` filter at `list_pos`.
    fn select_eq(&mut self, e: &'t Expr, list_pos: Pos) -> Option<Source> {
        let ExprKind::Filter(Some(list), filter, args) = &e.kind else {
            return None;
        };
        let literal = |e: &Expr| match &e.kind {
            ExprKind::Const(Const::Str(s)) => Some(s.clone()),
            _ => None,
        };
        let [attr, test, text] = &args.pos[..] else {
            return None;
        };
        let plain = args.kw.is_empty() && args.star.is_none() && args.dstar.is_none();
        let eq = matches!(literal(test).as_deref(), Some("equalto" | "eq" | "=="));
        if &***filter != "selectattr" || !plain || !eq || !matches!(list.kind, ExprKind::Name(..)) {
            return None;
        }
        let read = self.read(list)?;
        Some(Source::SelectEq(
            read,
            literal(attr)?,
            literal(text)?,
            [e.pos, list_pos],
        ))
    }

    /// For each local, the index of its context name (read while it is not set), and the locals a
    /// loop's body sets.
    fn fallbacks(&mut self) -> Option<(Vec<usize>, u32)> {
        let mut fallbacks = Vec::with_capacity(self.locals.len());
        let mut in_loops = 0;
        for i in 0..self.locals.len() {
            let (name, in_loop) = self.locals[i];
            fallbacks.push(self.context_name(name)?);
            if in_loop {
                in_loops |= 1 << i;
            }
        }
        Some((fallbacks, in_loops))
    }

    fn local(&self, name: &str) -> Option<usize> {
        self.locals.iter().position(|(n, _)| *n == name)
    }

    fn piece(&mut self, e: &'t Expr) -> Option<Piece> {
        match &e.kind {
            ExprKind::Const(Const::Str(s)) => Some(Piece::Literal(s.clone())),
            // The evaluator's shortcut for a filter of a key read in place (see `on_str_member`).
            ExprKind::Filter(Some(inner), filter, args) if args.is_empty() => {
                let on_str = filter.index.and_then(|i| FILTERS.get(i))?.on_str?;
                let read = self.read(inner)?;
                matches!(read, Read::ItemKey(_) | Read::VarKey(..)).then_some(Piece::Filtered(read, on_str, e.pos))
            }
            _ => self.read(e).map(Piece::Read),
        }
    }

    /// A name, `name['key']` / `name.key` (a data key), or `name[i]` and a key of it, read from
    /// the context, the loop item or a local.
    fn read(&mut self, e: &'t Expr) -> Option<Read> {
        let (obj, key) = match &e.kind {
            ExprKind::Name(..) => (e, None),
            ExprKind::GetItem(obj, key) => match &key.kind {
                ExprKind::Const(Const::Str(k)) => (&**obj, Some(k.clone())),
                _ => return self.indexed(obj, key, None),
            },
            ExprKind::GetAttr(obj, member) if member.data_key => (&**obj, Some(member.name.clone())),
            _ => return None,
        };
        let ExprKind::Name(name, _) = &obj.kind else {
            return match &obj.kind {
                ExprKind::GetItem(list, index) => self.indexed(list, index, key),
                _ => None,
            };
        };
        if let Some(i) = self.local(name) {
            // A local is read whole. A loop's body that reads a name set outside loops only later
            // reads it as Jinja2's frames decide (undefined, or the context's value), so it has no
            // plan.
            let later = !self.locals[i].1 && self.item.is_some() && self.set_outside_loops & (1 << i) == 0;
            return (key.is_none() && !later).then_some(Read::Local(i));
        }
        Some(match (self.item == Some(&**name), key) {
            (true, None) => Read::Item,
            (true, Some(key)) => Read::ItemKey(key),
            (false, None) => Read::Var(self.var(name)?),
            (false, Some(key)) => Read::VarKey(self.var(name)?, key),
        })
    }

    /// `list[i]` (and a key of it) for a context name or a local `list` and an integer literal `i`.
    fn indexed(&mut self, list: &'t Expr, index: &'t Expr, key: Option<Box<str>>) -> Option<Read> {
        if !matches!(list.kind, ExprKind::Name(..)) {
            return None;
        }
        let i = int_literal(index)?;
        match self.read(list)? {
            Read::Var(v) => Some(Read::VarIndex(v, i, key)),
            Read::Local(l) => Some(Read::LocalIndex(l, i, key)),
            _ => None,
        }
    }

    /// The index of a context name; `loop` and `self` name what Jinja2 makes, not the context,
    /// and a local is read as a local.
    fn var(&mut self, name: &str) -> Option<usize> {
        if self.local(name).is_some() {
            return None;
        }
        self.context_name(name)
    }

    /// The index of `name` among the context names the plan reads.
    fn context_name(&mut self, name: &str) -> Option<usize> {
        if name == "loop" || name == "self" {
            return None;
        }
        Some(match self.names.iter().position(|n| **n == *name) {
            Some(i) => i,
            None => {
                self.names.push(name.into());
                self.names.len() - 1
            }
        })
    }

    /// Whether `read` reads a name that is a global function's (defined, and true, though the
    /// context lacks it).
    fn names_global(&self, read: &Read) -> bool {
        match read {
            Read::Var(i) => is_global(&self.names[*i]),
            Read::Local(i) => is_global(self.locals[*i].0),
            _ => false,
        }
    }

    /// `loop.<attr>` inside a loop.
    fn loop_attr<'e>(&self, e: &'e Expr) -> Option<&'e str> {
        match &e.kind {
            ExprKind::GetAttr(obj, member)
                if self.item.is_some() && matches!(&obj.kind, ExprKind::Name(n, _) if &**n == "loop") =>
            {
                Some(&member.name)
            }
            _ => None,
        }
    }

    fn int(&self, e: &Expr) -> Option<Int> {
        match &e.kind {
            ExprKind::Const(Const::Int(i)) => Some(Int::Literal(*i)),
            ExprKind::Binary(BinOp::Mod, a, b) => match &b.kind {
                ExprKind::Const(Const::Int(m)) if *m > 0 => Some(Int::Mod(Box::new(self.int(a)?), *m)),
                _ => None,
            },
            _ => match self.loop_attr(e)? {
                "index0" => Some(Int::Index0),
                "index" => Some(Int::Index),
                _ => None,
            },
        }
    }

    /// A test's plan; [`Test::GiveWay`] for one the evaluator runs.
    fn test(&mut self, e: &'t Expr) -> Test {
        self.try_test(e).unwrap_or(Test::GiveWay)
    }

    fn try_test(&mut self, e: &'t Expr) -> Option<Test> {
        Some(match &e.kind {
            ExprKind::Unary(UnOp::Not, inner) => Test::Not(Box::new(self.test(inner))),
            ExprKind::And(a, b) => Test::And(Box::new(self.test(a)), Box::new(self.test(b))),
            ExprKind::Or(a, b) => Test::Or(Box::new(self.test(a)), Box::new(self.test(b))),
            // `x is defined` of a name or a key of the loop item (no call of the test, no step).
            ExprKind::Test(x, name, args) if matches!(&***name, "defined" | "undefined") && args.is_empty() => {
                // A global function is defined though the context lacks it.
                let read = self.read(x)?;
                if !matches!(read, Read::Var(_) | Read::Local(_) | Read::ItemKey(_)) || self.names_global(&read) {
                    return None;
                }
                Test::Defined(read, &***name == "undefined")
            }
            // `x is none`: the test's call is charged, at the test.
            ExprKind::Test(x, name, args) if &***name == "none" && args.is_empty() => {
                Test::IsNone(self.read(x)?, e.pos)
            }
            ExprKind::GetAttr(..) => match self.loop_attr(e) {
                Some("first") => Test::First,
                Some("last") => Test::Last,
                Some(_) => return None,
                None => key_truthy(self.read(e)?),
            },
            // `m['items']` without the key is the dict's method, which is true.
            ExprKind::GetItem(_, key) => match &key.kind {
                ExprKind::Const(Const::Str(k)) if is_dict_method(k) => Test::Truthy(self.read(e)?),
                _ => key_truthy(self.read(e)?),
            },
            // `'key' in item`, read in place as the evaluator reads it.
            ExprKind::Compare(first, rest) if matches!(&rest[..], [(CmpOp::In | CmpOp::NotIn, _)]) => {
                let [(op, second)] = &rest[..] else {
                    return None;
                };
                let ExprKind::Const(Const::Str(key)) = &first.kind else {
                    return None;
                };
                if !matches!(second.kind, ExprKind::Name(..)) {
                    return None;
                }
                Test::HasKey(self.read(second)?, key.clone(), *op == CmpOp::NotIn)
            }
            ExprKind::Compare(first, rest) => {
                let [(op @ (CmpOp::Eq | CmpOp::Ne), second)] = &rest[..] else {
                    return None;
                };
                let negated = *op == CmpOp::Ne;
                match (&first.kind, &second.kind) {
                    (_, ExprKind::Const(Const::Str(lit))) => Test::Equals(self.read(first)?, lit.clone(), negated),
                    (ExprKind::Compare(..), ExprKind::Compare(..)) => Test::SameTruth(
                        Box::new(self.try_test(first)?),
                        Box::new(self.try_test(second)?),
                        negated,
                    ),
                    _ => Test::IntEquals(self.int(first)?, self.int(second)?, negated),
                }
            }
            _ => {
                // An absent name reads as false, unless it names a global function.
                let read = self.read(e)?;
                (!self.names_global(&read)).then_some(Test::Truthy(read))?
            }
        })
    }
}

/// The truth of `read`; for a key of an object, false when the object lacks the key (an undefined
/// value), as the evaluator reads it in place.
fn key_truthy(read: Read) -> Test {
    match read {
        Read::ItemKey(_) | Read::VarKey(..) => Test::KeyTruthy(read),
        read => Test::Truthy(read),
    }
}

/// An integer literal, negative or not.
fn int_literal(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Const(Const::Int(i)) => Some(*i),
        ExprKind::Unary(UnOp::Neg, inner) => match &inner.kind {
            ExprKind::Const(Const::Int(i)) => i.checked_neg(),
            _ => None,
        },
        _ => None,
    }
}

/// Why a run stopped early.
pub(crate) enum Stop {
    /// A value was not what the plan expects: the evaluator renders instead.
    GiveUp,
    /// A limit was exceeded, with the error the evaluator gives.
    Limit(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Limit(e)
    }
}

/// A value a run holds: JSON of the context or the plan, part of a string, or a list value (the
/// caller's list read in place, or a slice of a list), which the evaluator iterates without a charge.
#[derive(Clone, Copy)]
enum Val<'p> {
    Json(&'p Json),
    Str(&'p str),
    List(&'p [Json]),
    /// A value the evaluator would hold and the plan does not (see [`Source::SelectEq`]).
    Opaque,
}

impl<'p> Val<'p> {
    #[inline]
    fn as_str(self) -> Option<&'p str> {
        match self {
            Val::Json(Json::String(s)) => Some(s),
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The items of a list or a JSON array.
    #[inline]
    fn items(self) -> Option<&'p [Json]> {
        match self {
            Val::List(items) => Some(items),
            Val::Json(Json::Array(items)) => Some(items),
            _ => None,
        }
    }

    #[inline]
    /// Python's truth of the value, when the plan holds it.
    fn truthy(self) -> Option<bool> {
        match self {
            Val::Json(j) => Some(Value::from_json(j).truthy()),
            Val::Str(s) => Some(!s.is_empty()),
            Val::List(items) => Some(!items.is_empty()),
            Val::Opaque => None,
        }
    }
}

impl<'c> From<Borrowed<'c>> for Val<'c> {
    fn from(b: Borrowed<'c>) -> Self {
        match b {
            Borrowed::Json(j) => Val::Json(j),
            Borrowed::List(items) => Val::List(items),
        }
    }
}

/// One run of a plan over a context. What it reads lives as long as the plan or the context,
/// whichever ends first (`'p`).
struct Run<'p, 'c: 'p> {
    plan: &'p Plan,
    ctx: &'c Context<'c>,
    /// The context's value of each of the plan's names, once read (`Some(None)`: absent).
    vars: [Option<Option<Borrowed<'c>>>; MAX_NAMES],
    /// The value of each local, once set.
    locals: [Option<Val<'p>>; MAX_LOCALS],
    item: Option<&'p Json>,
    /// The current loop item's index and the loop's length.
    at: (usize, usize),
    out: &'p mut String,
}

/// How many renders in a row a plan that gives way on most renders leaves to the evaluator
/// before it tries again.
const RETRY_EVERY: u32 = 64;

impl Plan {
    /// Whether to run the plan for the next render: unless it gave way on more than 4 renders in 5
    /// of at least 16, and then on every [`RETRY_EVERY`]-th render (a template's conversations
    /// may change). Either way the render is the same.
    pub(crate) fn worth_trying(&self) -> bool {
        let (done, gave_way) = (self.completed.load(Relaxed), self.gave_way.load(Relaxed));
        gave_way < 16
            || gave_way <= done.saturating_mul(4)
            || self.skipped.fetch_add(1, Relaxed).is_multiple_of(RETRY_EVERY)
    }

    /// Runs the plan over `ctx`, appending to `out`; the steps charged are the evaluator's. The
    /// caller holds the budget scope.
    pub(crate) fn run<'c>(&self, ctx: &'c Context<'c>, out: &mut String) -> std::result::Result<(), Stop> {
        let mut run = Run {
            plan: self,
            ctx,
            vars: [None; MAX_NAMES],
            locals: [None; MAX_LOCALS],
            item: None,
            at: (0, 0),
            out,
        };
        let result = run.block(&self.body);
        let counter = match result {
            Err(Stop::GiveUp) => &self.gave_way,
            _ => &self.completed,
        };
        // Counts saturate well below the point where `4 * done` would.
        if counter.load(Relaxed) < u32::MAX / 8 {
            counter.fetch_add(1, Relaxed);
        }
        result
    }
}

/// Charges one step as the evaluator's `exec` does, with its error at `pos`.
fn step(pos: Pos) -> Result<()> {
    charge(1).map_err(|e| e.at(pos.line, pos.col))
}

impl<'p, 'c: 'p> Run<'p, 'c> {
    fn block(&mut self, body: &'p [Op]) -> std::result::Result<(), Stop> {
        body.iter().try_for_each(|op| self.op(op))
    }

    fn op(&mut self, op: &'p Op) -> std::result::Result<(), Stop> {
        step(op.pos)?;
        match &op.kind {
            OpKind::Text(t) => self.out.push_str(t),
            OpKind::Print(pieces) => {
                let start = self.out.len();
                for piece in pieces.iter() {
                    let s = match piece {
                        Piece::Literal(s) => &**s,
                        Piece::Read(r) | Piece::Filtered(r, ..) => match self.string(r) {
                            Some(s) => s,
                            None => {
                                self.out.truncate(start);
                                return Err(Stop::GiveUp);
                            }
                        },
                    };
                    if let Piece::Filtered(_, filter, pos) = piece {
                        charge(CALL_STEPS).map_err(|e| e.at(pos.line, pos.col))?;
                        self.out.push_str(filter(s));
                    } else {
                        self.out.push_str(s);
                    }
                }
            }
            OpKind::For(list, body) => {
                let items = match self.read(list) {
                    // The evaluator iterates the caller's list in place, or a list value as it is,
                    // and a JSON array as a list value it charges for.
                    Some(Val::List(items)) => items,
                    Some(Val::Json(Json::Array(items))) => {
                        charge_values(items.len()).map_err(|e| e.at(op.pos.line, op.pos.col))?;
                        items
                    }
                    _ => return Err(Stop::GiveUp),
                };
                for (i, item) in items.iter().enumerate() {
                    (self.item, self.at) = (Some(item), (i, items.len()));
                    // What the body set in the last iteration is gone: Jinja2 reads the name from
                    // the context again.
                    self.unset_loop_locals();
                    step(op.pos)?;
                    self.block(body)?;
                }
                self.item = None;
                self.unset_loop_locals();
            }
            OpKind::If(branches, else_body) => {
                let mut taken = else_body;
                for (test, body) in branches {
                    if self.test(test)? {
                        taken = body;
                        break;
                    }
                }
                self.block(taken)?;
            }
            OpKind::Set(local, source) => {
                let value = match source {
                    Source::Literal(s) => Val::Json(s),
                    Source::Read(r) => self.read(r).ok_or(Stop::GiveUp)?,
                    Source::Filtered(r, filter, pos) => {
                        let s = self.string(r).ok_or(Stop::GiveUp)?;
                        charge(CALL_STEPS).map_err(|e| e.at(pos.line, pos.col))?;
                        Val::Str(filter(s))
                    }
                    Source::SelectEq(r, attr, text, [select, list]) => self.select_eq(r, attr, text, select, list)?,
                    Source::Slice(r, start) => {
                        let items = self.read(r).and_then(Val::items).ok_or(Stop::GiveUp)?;
                        // Python's clamping of a slice's start.
                        let len = i64::try_from(items.len()).map_err(|_| Stop::GiveUp)?;
                        let from = if *start < 0 {
                            (len + start).max(0)
                        } else {
                            (*start).min(len)
                        };
                        Val::List(&items[usize::try_from(from).map_err(|_| Stop::GiveUp)?..])
                    }
                };
                self.locals[*local] = Some(value);
            }
            OpKind::GiveWay => return Err(Stop::GiveUp),
        }
        let max = self.ctx.limits.max_output_bytes;
        if self.out.len() > max {
            return Err(Stop::Limit(output_exceeded(max).at(op.pos.line, op.pos.col)));
        }
        Ok(())
    }

    fn unset_loop_locals(&mut self) {
        let mut bits = self.plan.loop_locals;
        while bits != 0 {
            self.locals[bits.trailing_zeros() as usize] = None;
            bits &= bits - 1;
        }
    }

    /// Charges what the evaluator charges for `list | selectattr(attr, 'equalto', text) | list`:
    /// the items, the call, a step per 8 items selected, the call.
    fn select_eq(
        &mut self,
        r: &Read,
        attr: &str,
        text: &str,
        at: &Pos,
        list_at: &Pos,
    ) -> std::result::Result<Val<'p>, Stop> {
        let items = self.read(r).and_then(Val::items).ok_or(Stop::GiveUp)?;
        let charge_at = |n: u64, pos: &Pos| charge(n).map_err(|e| Stop::Limit(e.at(pos.line, pos.col)));
        // A falsy input selects nothing, without a look at its items.
        if !items.is_empty() {
            charge_at(items.len() as u64, at)?;
        }
        let mut selected = 0;
        for item in items {
            let Json::Object(m) = item else {
                return Err(Stop::GiveUp);
            };
            selected += usize::from(matches!(json_map_get(m, attr), Some(Json::String(s)) if s == text));
        }
        charge_at(CALL_STEPS, at)?;
        charge_at((selected / VALUES_PER_STEP) as u64, list_at)?;
        charge_at(CALL_STEPS, list_at)?;
        Ok(Val::Opaque)
    }

    /// Whether a local has a value: one the plan set, else the context's value of its name.
    fn local_defined(&mut self, i: usize) -> bool {
        self.locals[i].is_some() || self.var(self.plan.locals[i]).is_some()
    }

    #[inline]
    fn var(&mut self, i: usize) -> Option<Borrowed<'c>> {
        *self.vars[i].get_or_insert_with(|| self.ctx.source(&self.plan.names[i]))
    }

    /// A context name's value when it is JSON (not the caller's list given in place).
    #[inline]
    fn json_var(&mut self, i: usize) -> Option<&'c Json> {
        match self.var(i)? {
            Borrowed::Json(j) => Some(j),
            Borrowed::List(_) => None,
        }
    }

    /// A local's value: the value set last, else its context name's.
    #[inline]
    fn local(&mut self, i: usize) -> Option<Val<'p>> {
        match self.locals[i] {
            Some(v) => Some(v),
            None => self.var(self.plan.locals[i]).map(Val::from),
        }
    }

    /// What `r` reads, when it has a value (not a missing key or index).
    #[inline]
    fn read(&mut self, r: &Read) -> Option<Val<'p>> {
        match r {
            Read::Var(i) => self.var(*i).map(Val::from),
            Read::Local(i) => self.local(*i),
            _ => self.json(r).map(Val::Json),
        }
    }

    /// The string `r` reads, if it reads one.
    #[inline]
    fn string(&mut self, r: &Read) -> Option<&'p str> {
        let j = match r {
            // The commonest read, `message['content']`, first.
            Read::ItemKey(key) => match self.item? {
                Json::Object(m) => json_map_get(m, key)?,
                _ => return None,
            },
            Read::Var(_) | Read::Local(_) => return self.read(r)?.as_str(),
            _ => self.json(r)?,
        };
        match j {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// What a read of an item, a key or an index reads (`None` for other reads).
    #[inline]
    fn json(&mut self, r: &Read) -> Option<&'p Json> {
        let object = |v: Option<&'p Json>, key: &str| match v? {
            Json::Object(m) => json_map_get(m, key),
            _ => None,
        };
        let indexed = |items: &'p [Json], index: i64, key: &Option<Box<str>>| {
            let at = if index < 0 {
                items.len().checked_sub(usize::try_from(index.unsigned_abs()).ok()?)?
            } else {
                usize::try_from(index).ok()?
            };
            let item = items.get(at)?;
            match key {
                Some(key) => object(Some(item), key),
                None => Some(item),
            }
        };
        match r {
            Read::Item => self.item,
            Read::ItemKey(key) => object(self.item, key),
            Read::VarKey(i, key) => object(Some(self.json_var(*i)?), key),
            Read::VarIndex(i, index, key) => indexed(Val::from(self.var(*i)?).items()?, *index, key),
            Read::LocalIndex(i, index, key) => indexed(self.local(*i)?.items()?, *index, key),
            Read::Var(_) | Read::Local(_) => None,
        }
    }

    /// The value of an integer of a test, as Python computes it.
    fn int(&self, n: &Int) -> Option<i64> {
        match n {
            Int::Index0 => i64::try_from(self.at.0).ok(),
            Int::Index => i64::try_from(self.at.0 + 1).ok(),
            Int::Literal(i) => Some(*i),
            // A positive divisor: Python's remainder has its sign, as `rem_euclid`'s does.
            Int::Mod(a, m) => Some(self.int(a)?.rem_euclid(*m)),
        }
    }

    fn test(&mut self, t: &Test) -> std::result::Result<bool, Stop> {
        Ok(match t {
            // A name no one binds is undefined, so false (a global function's name has no plan).
            Test::Truthy(r @ (Read::Var(_) | Read::Local(_))) => match self.read(r) {
                Some(v) => v.truthy().ok_or(Stop::GiveUp)?,
                None => false,
            },
            Test::Truthy(r) => self.read(r).and_then(Val::truthy).ok_or(Stop::GiveUp)?,
            Test::KeyTruthy(r) => match self.json(r) {
                Some(j) => Value::from_json(j).truthy(),
                None if self.holds_object(r) => false,
                None => return Err(Stop::GiveUp),
            },
            Test::Equals(r, lit, negated) => match self.string(r) {
                Some(s) => (s == &**lit) != *negated,
                _ => return Err(Stop::GiveUp),
            },
            Test::First => self.at.0 == 0,
            Test::Last => self.at.0 + 1 == self.at.1,
            Test::IntEquals(a, b, negated) => {
                let (a, b) = (self.int(a).ok_or(Stop::GiveUp)?, self.int(b).ok_or(Stop::GiveUp)?);
                (a == b) != *negated
            }
            Test::SameTruth(a, b, negated) => (self.test(a)? == self.test(b)?) != *negated,
            Test::Defined(r, negated) => {
                let defined = match r {
                    Read::Var(i) => self.var(*i).is_some(),
                    Read::Local(i) => self.local_defined(*i),
                    Read::ItemKey(key) => match self.item {
                        Some(Json::Object(m)) => json_map_get(m, key).is_some(),
                        _ => return Err(Stop::GiveUp),
                    },
                    _ => return Err(Stop::GiveUp),
                };
                defined != *negated
            }
            Test::IsNone(r, pos) => {
                // An undefined value is not none; what a missing key of a non-object gives is
                // the evaluator's to say.
                let none = match r {
                    Read::ItemKey(_) | Read::VarKey(..) if !self.holds_object(r) => return Err(Stop::GiveUp),
                    _ => matches!(self.read(r), Some(Val::Json(Json::Null))),
                };
                charge(1).map_err(|e| e.at(pos.line, pos.col))?;
                none
            }
            Test::HasKey(r, key, negated) => match self.read(r) {
                Some(Val::Json(Json::Object(m))) => json_map_get(m, key).is_some() != *negated,
                _ => return Err(Stop::GiveUp),
            },
            Test::GiveWay => return Err(Stop::GiveUp),
            Test::Not(t) => !self.test(t)?,
            Test::And(a, b) => self.test(a)? && self.test(b)?,
            Test::Or(a, b) => self.test(a)? || self.test(b)?,
        })
    }

    /// Whether the object a key read reads from is a JSON object.
    fn holds_object(&mut self, r: &Read) -> bool {
        match r {
            Read::ItemKey(_) => matches!(self.item, Some(Json::Object(_))),
            Read::VarKey(i, _) => matches!(self.json_var(*i), Some(Json::Object(_))),
            _ => true,
        }
    }
}
