//! Direct renders: a template made only of text, printed string concatenations, `for` loops over a
//! context list and `if` tests of context values (and of `loop.first` / `loop.last`) renders without
//! the evaluator, reading the caller's JSON in place. About one chat template in eight has this shape
//! (ChatML, Zephyr, Phi-3, Hermes, Tulu, OLMo, ...).
//!
//! A direct plan is compiled from the syntax tree when every statement has that shape. Running it
//! writes what the evaluator would, charges the same steps and checks the output limit after the
//! same statements, so its text, step count and limit errors are the evaluator's. Whenever a value
//! is not what the plan expects (a printed value that is not a string, a missing key, a list that
//! is not the caller's list) it gives up, and the caller renders with the evaluator from scratch:
//! the plan never raises a template error of its own.

use crate::ast::{CmpOp, Const, Expr, ExprKind, Pos, Stmt, StmtKind, Target, UnOp};
use crate::context::{Borrowed, Context};
use crate::error::{Error, Result};
use crate::limits::{charge, charge_values, output_exceeded};
use crate::value::{json_map_get, Value};
use serde_json::Value as Json;

/// How deep statements may nest in a plan (deeper templates take the evaluator, which grows its
/// stack as it needs).
const MAX_DEPTH: usize = 16;

/// How many context names a plan may read (each is looked up once per run).
const MAX_NAMES: usize = 8;

/// A compiled direct plan (see the module documentation).
#[derive(Debug)]
pub(crate) struct Plan {
    body: Vec<Op>,
    /// The context names the plan reads, in the order of their [`Read::Var`] index.
    names: Vec<Box<str>>,
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
    /// A loop over the context list `list` (a [`Read::Var`] index) whose body reads its item as
    /// [`Read::Item`].
    For(usize, Vec<Op>),
    If(Vec<(Test, Vec<Op>)>, Vec<Op>),
}

#[derive(Debug)]
enum Piece {
    Literal(Box<str>),
    Read(Read),
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
}

#[derive(Debug)]
enum Test {
    Truthy(Read),
    /// `read == literal` (or `!=` when the flag is set) where `read` gives a string.
    Equals(Read, Box<str>, bool),
    /// `loop.first`, `loop.last`.
    First,
    Last,
    Not(Box<Test>),
    And(Box<Test>, Box<Test>),
    Or(Box<Test>, Box<Test>),
}

/// Compiles `body` to a plan, if every statement has the shape of the module documentation.
pub(crate) fn compile(body: &[Stmt]) -> Option<Plan> {
    let mut c = Compiler {
        names: Vec::new(),
        item: None,
    };
    let body = c.block(body, 0)?;
    (c.names.len() <= MAX_NAMES).then_some(Plan { body, names: c.names })
}

struct Compiler<'t> {
    names: Vec<Box<str>>,
    /// The target name of the loop being compiled.
    item: Option<&'t str>,
}

impl<'t> Compiler<'t> {
    fn block(&mut self, body: &'t [Stmt], depth: usize) -> Option<Vec<Op>> {
        if depth > MAX_DEPTH {
            return None;
        }
        body.iter().map(|s| self.stmt(s, depth)).collect()
    }

    fn stmt(&mut self, s: &'t Stmt, depth: usize) -> Option<Op> {
        let kind = match &s.kind {
            StmtKind::Text(t) => OpKind::Text(t.clone()),
            StmtKind::Print(_, Some(leaves)) => {
                OpKind::Print(leaves.iter().map(|e| self.piece(e)).collect::<Option<_>>()?)
            }
            StmtKind::For(f) => {
                let Target::Name(target, _) = &f.target else {
                    return None;
                };
                let ExprKind::Name(list, _) = &f.iter.kind else {
                    return None;
                };
                // A body's `loop` is read only as `loop.first` or `loop.last` (any other read of the
                // name has no plan).
                if self.item.is_some() || f.recursive || f.cond.is_some() || !f.else_body.is_empty() {
                    return None;
                }
                let list = self.var(list)?;
                self.item = Some(target);
                let body = self.block(&f.body, depth + 1);
                self.item = None;
                OpKind::For(list, body?)
            }
            StmtKind::If(branches, else_body) => {
                let branches = branches
                    .iter()
                    .map(|(test, body)| Some((self.test(test)?, self.block(body, depth + 1)?)))
                    .collect::<Option<_>>()?;
                OpKind::If(branches, self.block(else_body, depth + 1)?)
            }
            _ => return None,
        };
        Some(Op { kind, pos: s.pos })
    }

    fn piece(&mut self, e: &'t Expr) -> Option<Piece> {
        match &e.kind {
            ExprKind::Const(Const::Str(s)) => Some(Piece::Literal(s.clone())),
            _ => self.read(e).map(Piece::Read),
        }
    }

    /// A name, or `name['key']` / `name.key` (a data key), read from the context or the loop item.
    fn read(&mut self, e: &'t Expr) -> Option<Read> {
        let (obj, key) = match &e.kind {
            ExprKind::Name(..) => (e, None),
            ExprKind::GetItem(obj, key) => match &key.kind {
                ExprKind::Const(Const::Str(k)) => (&**obj, Some(k.clone())),
                _ => return None,
            },
            ExprKind::GetAttr(obj, member) if member.data_key => (&**obj, Some(member.name.clone())),
            _ => return None,
        };
        let ExprKind::Name(name, _) = &obj.kind else {
            return None;
        };
        Some(match (self.item == Some(&**name), key) {
            (true, None) => Read::Item,
            (true, Some(key)) => Read::ItemKey(key),
            (false, None) => Read::Var(self.var(name)?),
            (false, Some(key)) => Read::VarKey(self.var(name)?, key),
        })
    }

    /// The index of a context name; `loop` and `self` name what Jinja2 makes, not the context.
    fn var(&mut self, name: &str) -> Option<usize> {
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

    fn test(&mut self, e: &'t Expr) -> Option<Test> {
        Some(match &e.kind {
            ExprKind::Unary(UnOp::Not, inner) => Test::Not(Box::new(self.test(inner)?)),
            ExprKind::And(a, b) => Test::And(Box::new(self.test(a)?), Box::new(self.test(b)?)),
            ExprKind::Or(a, b) => Test::Or(Box::new(self.test(a)?), Box::new(self.test(b)?)),
            ExprKind::GetAttr(obj, member)
                if self.item.is_some() && matches!(&obj.kind, ExprKind::Name(n, _) if &**n == "loop") =>
            {
                match &*member.name {
                    "first" => Test::First,
                    "last" => Test::Last,
                    _ => return None,
                }
            }
            ExprKind::Compare(first, rest) => match &rest[..] {
                [(
                    op @ (CmpOp::Eq | CmpOp::Ne),
                    Expr {
                        kind: ExprKind::Const(Const::Str(lit)),
                        ..
                    },
                )] => Test::Equals(self.read(first)?, lit.clone(), *op == CmpOp::Ne),
                _ => return None,
            },
            _ => Test::Truthy(self.read(e)?),
        })
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

/// One run of a plan over a context.
struct Run<'p, 'c> {
    plan: &'p Plan,
    ctx: &'c Context<'c>,
    /// The context's value of each of the plan's names, once read (`Some(None)`: absent).
    vars: [Option<Option<Borrowed<'c>>>; MAX_NAMES],
    item: Option<&'c Json>,
    /// The current loop item's index and the loop's length.
    at: (usize, usize),
    out: &'p mut String,
}

impl Plan {
    /// Runs the plan over `ctx`, appending to `out`; the steps charged are the evaluator's. The
    /// caller holds the budget scope.
    pub(crate) fn run<'c>(&self, ctx: &'c Context<'c>, out: &mut String) -> std::result::Result<(), Stop> {
        let mut run = Run {
            plan: self,
            ctx,
            vars: [None; MAX_NAMES],
            item: None,
            at: (0, 0),
            out,
        };
        run.block(&self.body)
    }
}

/// Charges one step as the evaluator's `exec` does, with its error at `pos`.
fn step(pos: Pos) -> Result<()> {
    charge(1).map_err(|e| e.at(pos.line, pos.col))
}

impl<'c> Run<'_, 'c> {
    fn block(&mut self, body: &[Op]) -> std::result::Result<(), Stop> {
        body.iter().try_for_each(|op| self.op(op))
    }

    fn op(&mut self, op: &Op) -> std::result::Result<(), Stop> {
        step(op.pos)?;
        match &op.kind {
            OpKind::Text(t) => self.out.push_str(t),
            OpKind::Print(pieces) => {
                let start = self.out.len();
                for piece in pieces.iter() {
                    let s = match piece {
                        Piece::Literal(s) => &**s,
                        Piece::Read(r) => match self.read(r) {
                            Some(Json::String(s)) => s.as_str(),
                            _ => {
                                self.out.truncate(start);
                                return Err(Stop::GiveUp);
                            }
                        },
                    };
                    self.out.push_str(s);
                }
            }
            OpKind::For(list, body) => {
                let items = match self.var(*list) {
                    // The evaluator iterates the caller's list in place, and a JSON array as a list
                    // value it charges for.
                    Some(Borrowed::List(items)) => items,
                    Some(Borrowed::Json(Json::Array(items))) => {
                        charge_values(items.len()).map_err(|e| e.at(op.pos.line, op.pos.col))?;
                        items
                    }
                    _ => return Err(Stop::GiveUp),
                };
                for (i, item) in items.iter().enumerate() {
                    (self.item, self.at) = (Some(item), (i, items.len()));
                    step(op.pos)?;
                    self.block(body)?;
                }
                self.item = None;
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
        }
        let max = self.ctx.limits.max_output_bytes;
        if self.out.len() > max {
            return Err(Stop::Limit(output_exceeded(max).at(op.pos.line, op.pos.col)));
        }
        Ok(())
    }

    fn var(&mut self, i: usize) -> Option<Borrowed<'c>> {
        *self.vars[i].get_or_insert_with(|| self.ctx.source(&self.plan.names[i]))
    }

    /// What `r` reads, when it reads a JSON value (not a list given in place, not a missing key).
    fn read(&mut self, r: &Read) -> Option<&'c Json> {
        let object = |v: Option<&'c Json>, key: &str| match v? {
            Json::Object(m) => json_map_get(m, key),
            _ => None,
        };
        match r {
            Read::Var(i) => match self.var(*i)? {
                Borrowed::Json(j) => Some(j),
                Borrowed::List(_) => None,
            },
            Read::Item => self.item,
            Read::VarKey(i, key) => match self.var(*i)? {
                Borrowed::Json(j) => object(Some(j), key),
                Borrowed::List(_) => None,
            },
            Read::ItemKey(key) => object(self.item, key),
        }
    }

    fn test(&mut self, t: &Test) -> std::result::Result<bool, Stop> {
        Ok(match t {
            // The caller's list is a list value, true when it has items.
            Test::Truthy(Read::Var(i)) if matches!(self.var(*i), Some(Borrowed::List(_))) => {
                matches!(self.var(*i), Some(Borrowed::List(items)) if !items.is_empty())
            }
            Test::Truthy(r) => Value::from_json(self.read(r).ok_or(Stop::GiveUp)?).truthy(),
            Test::Equals(r, lit, negated) => match self.read(r) {
                Some(Json::String(s)) => (**s == **lit) != *negated,
                _ => return Err(Stop::GiveUp),
            },
            Test::First => self.at.0 == 0,
            Test::Last => self.at.0 + 1 == self.at.1,
            Test::Not(t) => !self.test(t)?,
            Test::And(a, b) => self.test(a)? && self.test(b)?,
            Test::Or(a, b) => self.test(a)? || self.test(b)?,
        })
    }
}
