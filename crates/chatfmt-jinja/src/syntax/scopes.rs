//! Resolves every variable of a parsed template to slots (see [`Scopes`]): which scopes bind
//! which names, where each assignment stores, and where each reference looks.

use super::symbols::Level;
use crate::ast::*;
use std::collections::HashMap;
use std::sync::Arc;

/// Resolves `body` in place and returns its scopes.
pub(crate) fn resolve(body: &mut [Stmt]) -> Scopes {
    let mut r = Resolver::default();
    let mut layout = Vec::new();
    binds(body, &mut layout);
    let level = Level::of(&[], &[], body, &[]);
    r.scope(layout, level, |r| r.stmts(body));
    Scopes {
        layouts: r.layouts,
        names: r.names,
        outer: r.outer,
    }
}

fn add(layout: &mut Vec<Ident>, name: &Ident) {
    if !layout.iter().any(|n| **n == **name) {
        layout.push(name.clone());
    }
}

fn target_binds(t: &Target, layout: &mut Vec<Ident>) {
    match t {
        Target::Name(n, _) => add(layout, n),
        Target::Tuple(items) => items.iter().for_each(|t| target_binds(t, layout)),
        Target::Attr(..) => {}
    }
}

/// The names a body binds in the frame it runs in (not in the frames of nested loops, `with`,
/// captured, filtered, generation and autoescape blocks, and macros: Jinja2 gives each its own
/// frame).
fn binds(body: &[Stmt], layout: &mut Vec<Ident>) {
    for s in body {
        match &s.kind {
            StmtKind::Set(t, _) => target_binds(t, layout),
            StmtKind::SetBlock(t, ..) => target_binds(t, layout),
            StmtKind::Macro(m) => add(layout, &m.name),
            StmtKind::If(branches, else_body) => {
                branches.iter().for_each(|(_, b)| binds(b, layout));
                binds(else_body, layout);
            }
            StmtKind::Text(_)
            | StmtKind::Block(..)
            | StmtKind::Print(..)
            | StmtKind::CallBlock(..)
            | StmtKind::FilterBlock(..)
            | StmtKind::Generation(..)
            | StmtKind::Autoescape(..)
            | StmtKind::For(_)
            | StmtKind::With(..)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::NeedsLoader(_) => {}
        }
    }
}

#[derive(Default)]
struct Resolver {
    layouts: Vec<Box<[Ident]>>,
    names: Vec<NameRes>,
    outer: Vec<Option<&'static str>>,
    outer_index: HashMap<Ident, u32>,
    /// The enclosing scopes, innermost last.
    chain: Vec<u32>,
    /// Jinja2's analysis of the enclosing frames, innermost last (see [`Level`]).
    levels: Vec<Level>,
    /// By scope, the names its frames start without (see [`Level::missing`]).
    missing: Vec<Box<[Ident]>>,
    /// A loop scope whose condition is being resolved: Jinja2 evaluates a loop's condition in a
    /// frame of its own beside the body's, which does not start without the body's names.
    condition_of: Option<u32>,
    /// The innermost `{% block %}` scope around: Jinja2 analyses a block's frame on its own and
    /// reads what it does not bind from the context (with the enclosing frames' assigned
    /// values), so no frame outside it makes a name undefined.
    block: Option<u32>,
}

impl Resolver {
    /// Runs `f` inside a new scope with these slots and Jinja2's analysis of its frame, and
    /// returns the scope.
    fn scope(&mut self, layout: Vec<Ident>, level: Level, f: impl FnOnce(&mut Self)) -> u32 {
        let id = self.layouts.len() as u32;
        self.layouts.push(layout.into());
        self.missing.push(level.missing().cloned().collect());
        self.chain.push(id);
        self.levels.push(level);
        f(self);
        self.levels.pop();
        self.chain.pop();
        id
    }

    /// Jinja2's analysis of a frame opened here (see [`Level::of`]).
    fn level(&self, params: &[Ident], first: &[&Expr], body: &[Stmt]) -> Level {
        Level::of(params, first, body, &self.levels)
    }

    fn current(&self) -> u32 {
        self.chain.last().copied().unwrap_or(0)
    }

    fn slot_in(&self, scope: u32, name: &str) -> Option<u32> {
        self.layouts[scope as usize]
            .iter()
            .position(|n| **n == *name)
            .map(|i| i as u32)
    }

    /// Where a reference to `name` here is found: the enclosing scopes that bind it, innermost
    /// first, up to the first whose frames start without it (past which the name is undefined,
    /// whatever the context holds), else the context.
    fn reference(&mut self, name: &Ident) -> VarRef {
        let mut scopes: Vec<ScopeSlot> = self
            .chain
            .iter()
            .rev()
            .enumerate()
            .filter_map(|(up, &scope)| {
                self.slot_in(scope, name).map(|slot| ScopeSlot {
                    up: up as u32,
                    scope,
                    slot,
                })
            })
            .collect();
        // How many frames up the innermost block's frame is (scopes past it are outside it).
        let block_up = (self.block)
            .and_then(|b| self.chain.iter().rev().position(|&s| s == b))
            .unwrap_or(usize::MAX);
        let cut = (scopes.iter()).take_while(|s| s.up as usize <= block_up).position(|s| {
            Some(s.scope) != self.condition_of && self.missing[s.scope as usize].iter().any(|n| **n == **name)
        });
        let outer = match cut {
            Some(at) => {
                scopes.truncate(at + 1);
                VarRef::UNBOUND_OUTSIDE
            }
            None => {
                let next = self.outer.len() as u32;
                let outer = *self.outer_index.entry(name.clone()).or_insert(next);
                if outer == next {
                    self.outer.push(crate::builtins::table::global(name).map(|g| g.name));
                }
                outer
            }
        };
        let mut var = VarRef {
            res: self.names.len() as u32,
            outer,
            more: !scopes.is_empty(),
            ..VarRef::default()
        };
        if let Some(first) = scopes.first() {
            if let (Ok(slot), Ok(up)) = (u16::try_from(first.slot), u8::try_from(first.up)) {
                var.scope = first.scope;
                var.slot = slot;
                var.up = up;
                var.more = scopes.len() > 1;
            }
        }
        self.names.push(NameRes { scopes: scopes.into() });
        var
    }

    fn target(&mut self, t: &mut Target) {
        let scope = self.current();
        match t {
            Target::Name(n, bind) => {
                *bind = Bind {
                    scope,
                    slot: self.slot_in(scope, n).unwrap_or(0),
                };
            }
            Target::Tuple(items) => items.iter_mut().for_each(|t| self.target(t)),
            Target::Attr(ns, res, _) => *res = self.reference(ns),
        }
    }

    fn stmts(&mut self, body: &mut [Stmt]) {
        body.iter_mut().for_each(|s| self.stmt(s));
    }

    fn stmt(&mut self, s: &mut Stmt) {
        match &mut s.kind {
            StmtKind::Text(_) | StmtKind::Break | StmtKind::Continue => {}
            StmtKind::Print(e, leaves) => {
                self.expr(e);
                leaves.iter_mut().flat_map(|l| l.iter_mut()).for_each(|e| self.expr(e));
            }
            StmtKind::NeedsLoader(e) => self.expr(e),
            StmtKind::Set(t, e) => {
                self.expr(e);
                self.target(t);
            }
            // The body and the filter run in the block's frame, as in Jinja2.
            StmtKind::SetBlock(t, filter, body, scope) => {
                *scope = self.block_scope(body, |r| {
                    if let Some(f) = filter {
                        r.expr(f);
                    }
                });
                self.target(t);
            }
            StmtKind::If(branches, else_body) => {
                for (test, body) in branches {
                    self.expr(test);
                    self.stmts(body);
                }
                self.stmts(else_body);
            }
            StmtKind::For(f) => self.for_loop(f),
            StmtKind::Macro(m) => self.macro_def(m),
            StmtKind::CallBlock(call, m) => {
                self.expr(call);
                self.macro_def(m);
            }
            StmtKind::FilterBlock(f, body, scope) => *scope = self.block_scope(body, |r| r.expr(f)),
            // `{% autoescape %}` is a scope in Jinja2, its setting evaluated in it.
            StmtKind::Autoescape(e, body, scope) => {
                let mut layout = Vec::new();
                binds(body, &mut layout);
                let level = self.level(&[], &[&*e], body);
                *scope = self.scope(layout, level, |r| {
                    r.expr(e);
                    r.stmts(body);
                });
            }
            StmtKind::With(assigns, body, scope) => {
                assigns.iter_mut().for_each(|(_, e)| self.expr(e));
                let mut layout = Vec::new();
                assigns.iter().for_each(|(t, _)| target_binds(t, &mut layout));
                let level = self.level(&layout, &[], body);
                binds(body, &mut layout);
                *scope = self.scope(layout, level, |r| {
                    assigns.iter_mut().for_each(|(t, _)| r.target(t));
                    r.stmts(body);
                });
            }
            StmtKind::Generation(body, scope) => *scope = self.block_scope(body, |_| {}),
            StmtKind::Block(_, body, block) => {
                let mut layout = Vec::new();
                binds(body, &mut layout);
                // An unscoped block sees only the template's own frame around it; Jinja2 analyses
                // a block's frame on its own.
                let around = if block.scoped {
                    None
                } else {
                    Some(std::mem::replace(&mut self.chain, vec![0]))
                };
                let levels = std::mem::take(&mut self.levels);
                let level = self.level(&[], &[], body);
                let outside = self.block.replace(self.layouts.len() as u32);
                block.scope = self.scope(layout, level, |r| r.stmts(body));
                self.block = outside;
                self.levels = levels;
                if let Some(chain) = around {
                    self.chain = chain;
                }
            }
        }
    }

    /// A scope for a block body that binds only what the body binds (a captured, filtered or
    /// generation block), resolving the body and then `after` in it.
    fn block_scope(&mut self, body: &mut [Stmt], after: impl FnOnce(&mut Self)) -> u32 {
        let mut layout = Vec::new();
        binds(body, &mut layout);
        let level = self.level(&[], &[], body);
        self.scope(layout, level, |r| {
            r.stmts(body);
            after(r);
        })
    }

    fn for_loop(&mut self, f: &mut ForLoop) {
        self.expr(&mut f.iter);
        let mut layout = Vec::new();
        target_binds(&f.target, &mut layout);
        if f.uses_loop {
            add(&mut layout, &Ident::from("loop"));
        }
        let rebound = layout.len();
        let level = self.level(&layout, &[], &f.body);
        binds(&f.body, &mut layout);
        f.rebinds_all = layout.len() == rebound && !(f.uses_loop && f.cond.is_some());
        let loop_slot = layout.iter().position(|n| &**n == "loop").unwrap_or(0) as u32;
        f.loop_slot = loop_slot;
        f.scope = self.scope(layout, level, |r| {
            r.target(&mut f.target);
            if let Some(c) = &mut f.cond {
                r.condition_of = r.chain.last().copied();
                r.expr(c);
                r.condition_of = None;
            }
            r.stmts(&mut f.body);
        });
        // The `else` body runs in a frame of its own inside the loop's enclosing one.
        let mut layout = Vec::new();
        binds(&f.else_body, &mut layout);
        let level = self.level(&[], &[], &f.else_body);
        f.else_scope = self.scope(layout, level, |r| r.stmts(&mut f.else_body));
    }

    fn macro_def(&mut self, m: &mut Arc<MacroDef>) {
        let m = Arc::make_mut(m);
        let mut layout: Vec<Ident> = m.params.iter().map(|(n, _)| n.clone()).collect();
        for (used, name) in [
            (m.uses_varargs, "varargs"),
            (m.uses_kwargs, "kwargs"),
            (m.uses_caller, "caller"),
        ] {
            if used {
                add(&mut layout, &Ident::from(name));
            }
        }
        let defaults: Vec<&Expr> = m.params.iter().filter_map(|(_, d)| d.as_ref()).collect();
        let level = self.level(&layout, &defaults, &m.body);
        binds(&m.body, &mut layout);
        m.scope = self.scope(layout, level, |r| {
            m.params
                .iter_mut()
                .filter_map(|(_, d)| d.as_mut())
                .for_each(|d| r.expr(d));
            r.stmts(&mut m.body);
        });
    }

    fn args(&mut self, a: &mut Args) {
        a.pos.iter_mut().for_each(|e| self.expr(e));
        a.kw.iter_mut().for_each(|(_, e)| self.expr(e));
        for e in [&mut a.star, &mut a.dstar].into_iter().flatten() {
            self.expr(e);
        }
    }

    fn expr(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Const(_) => {}
            ExprKind::Name(n, res) => *res = self.reference(n),
            ExprKind::List(items) | ExprKind::Tuple(items) | ExprKind::Concat(items) => {
                items.iter_mut().for_each(|i| self.expr(i))
            }
            ExprKind::Dict(items) => items.iter_mut().for_each(|(k, v)| {
                self.expr(k);
                self.expr(v);
            }),
            ExprKind::GetAttr(o, _) | ExprKind::Unary(_, o) => self.expr(o),
            ExprKind::GetItem(a, b) | ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Slice(a, b, c) => {
                for x in [a, b, c].into_iter().flatten() {
                    self.expr(x);
                }
            }
            ExprKind::Call(callee, args) => {
                self.expr(callee);
                self.args(args);
            }
            ExprKind::Filter(inner, _, args) => {
                if let Some(inner) = inner {
                    self.expr(inner);
                }
                self.args(args);
            }
            ExprKind::Test(x, _, args) => {
                self.expr(x);
                self.args(args);
            }
            ExprKind::Compare(first, rest) => {
                self.expr(first);
                rest.iter_mut().for_each(|(_, e)| self.expr(e));
            }
            ExprKind::Cond(test, then, otherwise) => {
                self.expr(test);
                self.expr(then);
                if let Some(o) = otherwise {
                    self.expr(o);
                }
            }
        }
    }
}
