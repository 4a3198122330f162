//! Which names a frame starts without: Jinja2's symbol analysis of one frame (its `idtracking`).
//!
//! Jinja2 gives each frame (the template, a loop body, a macro or call-block body, a captured,
//! filtered or generation block, a `with` body) a local variable for every name the frame
//! refers to at its own level, set when the frame is entered: to the context's value when the
//! first reference reads the name, to the enclosing frame's variable when an enclosing frame
//! refers to the name anywhere at its level, and otherwise, when the first reference stores
//! the name, to nothing. A name read in a nested frame before such a store is then undefined,
//! even when the context has it: `{% for m in x %}{{ y }}{% endfor %}{% set y = 1 %}` prints
//! nothing for `y`. [`Level::missing`] gives those names.

use crate::ast::*;

/// What one branch of an `if` added to a [`Level`]: references (with whether the frame starts
/// without the name) and stores.
type Added = (Vec<(Ident, bool)>, Vec<Ident>);

/// The names one frame refers to at its own level, in Jinja2's order of analysis.
#[derive(Default)]
pub(super) struct Level {
    /// Each name referred to, and whether the frame starts without it.
    refs: Vec<(Ident, bool)>,
    /// The names stored at this level (parameters included).
    stores: Vec<Ident>,
}

impl Level {
    /// The analysis of a frame with these parameters, expressions it evaluates first (a macro's
    /// defaults) and body, inside frames whose levels are `outer` (the enclosing ones, as Jinja2
    /// sees them).
    pub(super) fn of(params: &[Ident], first: &[&Expr], body: &[Stmt], outer: &[Level]) -> Level {
        let mut level = Level::default();
        params.iter().for_each(|p| level.param(p));
        first.iter().for_each(|e| level.expr(e, outer));
        level.stmts(body, outer);
        level
    }

    /// The names the frame starts without.
    pub(super) fn missing(&self) -> impl Iterator<Item = &Ident> {
        self.refs.iter().filter(|(_, missing)| *missing).map(|(n, _)| n)
    }

    /// Whether this frame refers to `name` at its level.
    fn refers_to(&self, name: &str) -> bool {
        self.refs.iter().any(|(n, _)| **n == *name)
    }

    fn set_ref(&mut self, name: &Ident, missing: bool) {
        match self.refs.iter_mut().find(|(n, _)| **n == **name) {
            Some(r) => r.1 = missing,
            None => self.refs.push((name.clone(), missing)),
        }
    }

    fn param(&mut self, name: &Ident) {
        self.add_store(name);
        self.set_ref(name, false);
    }

    fn add_store(&mut self, name: &Ident) {
        if !self.stores.iter().any(|n| **n == **name) {
            self.stores.push(name.clone());
        }
    }

    fn load(&mut self, name: &Ident, outer: &[Level]) {
        if !self.refers_to(name) && !outer.iter().any(|l| l.refers_to(name)) {
            self.set_ref(name, false);
        }
    }

    fn store(&mut self, name: &Ident, outer: &[Level]) {
        self.add_store(name);
        if !self.refers_to(name) {
            let aliased = outer.iter().any(|l| l.refers_to(name));
            self.set_ref(name, !aliased);
        }
    }

    fn target(&mut self, t: &Target, outer: &[Level]) {
        match t {
            Target::Name(n, _) => self.store(n, outer),
            Target::Tuple(items) => items.iter().for_each(|t| self.target(t, outer)),
            Target::Attr(ns, ..) => self.load(ns, outer),
        }
    }

    fn stmts(&mut self, body: &[Stmt], outer: &[Level]) {
        body.iter().for_each(|s| self.stmt(s, outer));
    }

    /// A statement as Jinja2's frame visitor sees it: nested frames contribute only what is
    /// evaluated in this one (a loop's iterable, a call block's call, a filter, `with` values,
    /// a captured block's target).
    fn stmt(&mut self, s: &Stmt, outer: &[Level]) {
        match &s.kind {
            StmtKind::Print(e, _) | StmtKind::NeedsLoader(e) => self.expr(e, outer),
            StmtKind::Set(t, e) => {
                self.expr(e, outer);
                self.target(t, outer);
            }
            StmtKind::SetBlock(t, ..) => self.target(t, outer),
            StmtKind::If(branches, else_body) => self.branches(branches, else_body, outer),
            StmtKind::For(f) => self.expr(&f.iter, outer),
            StmtKind::Macro(m) => self.store(&m.name, outer),
            StmtKind::CallBlock(call, _) => self.expr(call, outer),
            StmtKind::FilterBlock(f, ..) => self.expr(f, outer),
            StmtKind::With(assigns, ..) => assigns.iter().for_each(|(_, e)| self.expr(e, outer)),
            StmtKind::Text(_)
            | StmtKind::Autoescape(..)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Generation(..)
            | StmtKind::Block(..) => {}
        }
    }

    /// `if` / `elif` / `else` as Jinja2 parses it (the `elif`s one list of `if`s without `else`)
    /// and merges its branches: a name a branch stores first is read as before the `if`, so the
    /// frame does not start without it.
    fn branches(&mut self, branches: &[(Expr, Vec<Stmt>)], else_body: &[Stmt], outer: &[Level]) {
        if let Some(((test, body), elifs)) = branches.split_first() {
            self.if_stmt(test, body, elifs, else_body, outer);
        }
    }

    fn if_stmt(
        &mut self,
        test: &Expr,
        body: &[Stmt],
        elifs: &[(Expr, Vec<Stmt>)],
        else_body: &[Stmt],
        outer: &[Level],
    ) {
        self.expr(test, outer);
        // Each branch starts from what the frame knew before the `if`: it runs here and gives
        // back what it added (a branch only adds references and stores).
        let first = self.branch(outer, |me, outer| me.stmts(body, outer));
        let middle = self.branch(outer, |me, outer| {
            for (test, body) in elifs {
                me.if_stmt(test, body, &[], &[], outer);
            }
        });
        let last = self.branch(outer, |me, outer| me.stmts(else_body, outer));
        let stored: Vec<Ident> = [&first, &middle, &last]
            .iter()
            .flat_map(|(_, stores)| stores.iter())
            .cloned()
            .collect();
        for (refs, stores) in [first, middle, last] {
            for (name, missing) in refs {
                self.set_ref(&name, missing);
            }
            stores.iter().for_each(|n| self.add_store(n));
        }
        stored.iter().for_each(|n| self.set_ref(n, false));
    }

    /// Runs `f` as one branch of an `if` and takes back the references and stores it added.
    fn branch(&mut self, outer: &[Level], f: impl FnOnce(&mut Self, &[Level])) -> Added {
        let (refs, stores) = (self.refs.len(), self.stores.len());
        f(self, outer);
        (self.refs.split_off(refs), self.stores.split_off(stores))
    }

    fn args(&mut self, a: &Args, outer: &[Level]) {
        a.pos.iter().for_each(|e| self.expr(e, outer));
        a.kw.iter().for_each(|(_, e)| self.expr(e, outer));
        for e in [&a.star, &a.dstar].into_iter().flatten() {
            self.expr(e, outer);
        }
    }

    fn expr(&mut self, e: &Expr, outer: &[Level]) {
        match &e.kind {
            ExprKind::Const(_) => {}
            ExprKind::Name(n, _) => self.load(n, outer),
            ExprKind::List(items) | ExprKind::Tuple(items) | ExprKind::Concat(items) => {
                items.iter().for_each(|i| self.expr(i, outer))
            }
            ExprKind::Dict(items) => items.iter().for_each(|(k, v)| {
                self.expr(k, outer);
                self.expr(v, outer);
            }),
            ExprKind::GetAttr(o, _) | ExprKind::Unary(_, o) => self.expr(o, outer),
            ExprKind::GetItem(a, b) | ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                self.expr(a, outer);
                self.expr(b, outer);
            }
            ExprKind::Slice(a, b, c) => [a, b, c].into_iter().flatten().for_each(|x| self.expr(x, outer)),
            ExprKind::Call(callee, args) => {
                self.expr(callee, outer);
                self.args(args, outer);
            }
            ExprKind::Filter(inner, _, args) => {
                if let Some(inner) = inner {
                    self.expr(inner, outer);
                }
                self.args(args, outer);
            }
            ExprKind::Test(x, _, args) => {
                self.expr(x, outer);
                self.args(args, outer);
            }
            ExprKind::Compare(first, rest) => {
                self.expr(first, outer);
                rest.iter().for_each(|(_, e)| self.expr(e, outer));
            }
            ExprKind::Cond(test, then, otherwise) => {
                self.expr(test, outer);
                self.expr(then, outer);
                if let Some(o) = otherwise {
                    self.expr(o, outer);
                }
            }
        }
    }
}
