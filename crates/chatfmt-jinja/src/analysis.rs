//! Static analysis of a parsed template: what it uses (filters, tests, globals, variables, message
//! fields) and what will fail wherever it runs (unknown filters, tests or functions in any branch,
//! calls the sandbox refuses, tags that need a loader). It reads the syntax tree only; nothing renders.

use crate::ast::{Args, Expr, ExprKind, ForLoop, MacroDef, Pos, Stmt, StmtKind, Target};
use crate::builtins::table::FILTERS;
use std::collections::BTreeSet;

/// Names every template may read without defining them.
const IMPLICIT_NAMES: &[&str] = &["loop", "caller", "varargs", "kwargs", "self"];

/// A name found at a place in the template.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// The name (filter, test, function, method or attribute).
    pub name: String,
    /// 1-based line of the use.
    pub line: u32,
    /// 1-based column of the use.
    pub column: u32,
}

/// What `Template::analyze` found in a template, over every branch.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Filters used (known or not).
    pub filters: BTreeSet<String>,
    /// Tests used (known or not).
    pub tests: BTreeSet<String>,
    /// Global functions called (`range`, `namespace`, `raise_exception`, ...).
    pub globals_called: BTreeSet<String>,
    /// Variables read where the template has not assigned them yet (in template order, each
    /// `for`, `with` and macro body a scope of its own): what the caller must (or may) pass.
    pub free_variables: BTreeSet<String>,
    /// Attributes and constant keys read on variables holding messages (`message.content`,
    /// `message['tool_calls']`, `message.get('reasoning_content')`).
    pub message_fields: BTreeSet<String>,
    /// Filters the environment does not have: each fails when its expression runs.
    pub unknown_filters: Vec<Finding>,
    /// Tests the environment does not have.
    pub unknown_tests: Vec<Finding>,
    /// Names called as functions that are neither globals nor defined by the template.
    pub unknown_functions: Vec<Finding>,
    /// Calls the sandbox refuses: mutating methods (`.append`, `.pop`, `.update`, ...) and
    /// attributes starting with `_`.
    pub refused_calls: Vec<Finding>,
    /// Tags that need a template loader (`include`, `import`, `extends`, `from`), which fail when run.
    pub needs_loader: Vec<Finding>,
    /// Constant messages passed to `raise_exception(...)`.
    pub raise_messages: Vec<String>,
    /// Whether a `{% generation %}` block appears.
    pub uses_generation: bool,
}

impl Analysis {
    /// Whether the template calls `strftime_now` (its output depends on the date).
    pub fn uses_strftime_now(&self) -> bool {
        self.globals_called.contains("strftime_now")
    }

    /// Whether the template can raise its own errors with `raise_exception`.
    pub fn uses_raise_exception(&self) -> bool {
        self.globals_called.contains("raise_exception")
    }
}

/// Analyses a parsed body.
pub(crate) fn analyze(body: &[Stmt]) -> Analysis {
    let mut bound = BTreeSet::new();
    collect_bound(body, &mut bound);
    let message_vars = message_vars(body);
    // A macro may call one defined further down: by the time it runs, both exist.
    let mut macros = BTreeSet::new();
    collect_macro_names(body, &mut macros);
    let mut w = Walker {
        out: Analysis::default(),
        bound,
        message_vars,
        assigned: macros,
        free: BTreeSet::new(),
    };
    w.stmts(body);
    let mut out = w.out;
    out.free_variables = w
        .free
        .into_iter()
        .filter(|n| !IMPLICIT_NAMES.contains(&n.as_str()) && !is_global(n))
        .collect();
    out
}

fn is_global(name: &str) -> bool {
    crate::builtins::is_global(name)
}

fn finding(name: &str, pos: Pos) -> Finding {
    Finding {
        name: name.to_string(),
        line: pos.line,
        column: pos.col,
    }
}

pub(crate) fn target_names(t: &Target, out: &mut BTreeSet<String>) {
    match t {
        Target::Name(n, _) => {
            out.insert(n.to_string());
        }
        Target::Tuple(ts) => ts.iter().for_each(|t| target_names(t, out)),
        Target::Attr(..) => {}
    }
}

/// Every name the template binds anywhere (set, for, with, macro names and parameters).
fn collect_bound(body: &[Stmt], out: &mut BTreeSet<String>) {
    for s in body {
        match &s.kind {
            StmtKind::Set(t, _) | StmtKind::SetBlock(t, ..) => target_names(t, out),
            StmtKind::For(f) => target_names(&f.target, out),
            StmtKind::With(assigns, ..) => assigns.iter().for_each(|(t, _)| target_names(t, out)),
            StmtKind::Macro(m) => {
                out.insert(m.name.to_string());
                out.extend(m.params.iter().map(|(p, _)| p.to_string()));
            }
            StmtKind::CallBlock(_, m) => out.extend(m.params.iter().map(|(p, _)| p.to_string())),
            _ => {}
        }
        for child in children(s) {
            collect_bound(child, out);
        }
    }
}

/// The names of every macro the template defines.
fn collect_macro_names(body: &[Stmt], out: &mut BTreeSet<String>) {
    for s in body {
        if let StmtKind::Macro(m) = &s.kind {
            out.insert(m.name.to_string());
        }
        for child in children(s) {
            collect_macro_names(child, out);
        }
    }
}

/// The statement lists nested in a statement.
pub(crate) fn children(s: &Stmt) -> Vec<&[Stmt]> {
    match &s.kind {
        StmtKind::If(branches, else_body) => {
            let mut v: Vec<&[Stmt]> = branches.iter().map(|(_, b)| b.as_slice()).collect();
            v.push(else_body);
            v
        }
        StmtKind::For(f) => vec![&f.body, &f.else_body],
        StmtKind::SetBlock(_, _, b, _)
        | StmtKind::FilterBlock(_, b, _)
        | StmtKind::With(_, b, _)
        | StmtKind::Generation(b, _)
        | StmtKind::Block(_, b, _)
        | StmtKind::Autoescape(_, b, _) => vec![b],
        StmtKind::Macro(m) | StmtKind::CallBlock(_, m) => vec![&m.body],
        _ => Vec::new(),
    }
}

/// Whether an expression reads any of `names`.
fn mentions(e: &Expr, names: &BTreeSet<String>) -> bool {
    let mut found = false;
    visit_names(e, &mut |n| found |= names.contains(n));
    found
}

/// Calls `f` on every variable name `e` reads.
pub(crate) fn visit_names(e: &Expr, f: &mut dyn FnMut(&str)) {
    visit_exprs(e, &mut |x| {
        if let ExprKind::Name(n, _) = &x.kind {
            f(n)
        }
    })
}

/// Calls `f` on `e` and on every expression nested in it.
pub(crate) fn visit_exprs(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Name(..) | ExprKind::Const(_) => {}
        ExprKind::List(items) | ExprKind::Tuple(items) | ExprKind::Concat(items) => {
            items.iter().for_each(|i| visit_exprs(i, f))
        }
        ExprKind::Dict(items) => items.iter().for_each(|(k, v)| {
            visit_exprs(k, f);
            visit_exprs(v, f)
        }),
        ExprKind::GetAttr(o, _) | ExprKind::Unary(_, o) => visit_exprs(o, f),
        ExprKind::GetItem(a, b) | ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
            visit_exprs(a, f);
            visit_exprs(b, f)
        }
        ExprKind::Slice(a, b, c) => [a, b, c].into_iter().flatten().for_each(|x| visit_exprs(x, f)),
        ExprKind::Call(callee, args) => {
            visit_exprs(callee, f);
            visit_arg_exprs(args, f)
        }
        ExprKind::Filter(v, _, args) => {
            if let Some(v) = v {
                visit_exprs(v, f);
            }
            visit_arg_exprs(args, f)
        }
        ExprKind::Test(v, _, args) => {
            visit_exprs(v, f);
            visit_arg_exprs(args, f)
        }
        ExprKind::Compare(a, rest) => {
            visit_exprs(a, f);
            rest.iter().for_each(|(_, e)| visit_exprs(e, f))
        }
        ExprKind::Cond(a, b, c) => {
            visit_exprs(a, f);
            visit_exprs(b, f);
            if let Some(c) = c {
                visit_exprs(c, f)
            }
        }
    }
}

fn visit_arg_exprs(a: &Args, f: &mut dyn FnMut(&Expr)) {
    for e in a.pos.iter().chain(a.kw.iter().map(|(_, e)| e)) {
        visit_exprs(e, f);
    }
    for e in [&a.star, &a.dstar].into_iter().flatten() {
        visit_exprs(e, f);
    }
}

/// The expressions a statement evaluates itself (not those of the statements nested in it).
pub(crate) fn own_exprs(s: &Stmt) -> Vec<&Expr> {
    fn defaults(m: &MacroDef) -> impl Iterator<Item = &Expr> {
        m.params.iter().filter_map(|(_, d)| d.as_ref())
    }
    match &s.kind {
        StmtKind::Text(_) | StmtKind::Break | StmtKind::Continue | StmtKind::Generation(..) | StmtKind::Block(..) => {
            Vec::new()
        }
        StmtKind::Print(e, _)
        | StmtKind::Set(_, e)
        | StmtKind::NeedsLoader(e)
        | StmtKind::FilterBlock(e, ..)
        | StmtKind::Autoescape(e, ..) => vec![e],
        StmtKind::If(branches, _) => branches.iter().map(|(c, _)| c).collect(),
        StmtKind::For(f) => std::iter::once(&f.iter).chain(f.cond.as_ref()).collect(),
        StmtKind::SetBlock(_, filter, ..) => filter.iter().collect(),
        StmtKind::Macro(m) => defaults(m).collect(),
        StmtKind::CallBlock(call, m) => std::iter::once(call).chain(defaults(m)).collect(),
        StmtKind::With(assigns, ..) => assigns.iter().map(|(_, e)| e).collect(),
    }
}

/// Calls `f` on every statement of `body`, nested ones included.
pub(crate) fn visit_stmts<'s>(body: &'s [Stmt], f: &mut dyn FnMut(&'s Stmt)) {
    for s in body {
        f(s);
        for child in children(s) {
            visit_stmts(child, f);
        }
    }
}

/// Whether a `{% generation %}` block appears anywhere (macro bodies included).
pub(crate) fn has_generation(body: &[Stmt]) -> bool {
    let mut found = false;
    visit_stmts(body, &mut |s| found |= matches!(s.kind, StmtKind::Generation(..)));
    found
}

/// Globals and implicit names whose call changes no object made before it.
const FORK_SAFE_CALLS: &[&str] = &[
    "range",
    "raise_exception",
    "strftime_now",
    "namespace",
    "dict",
    "lipsum",
    "cycler",
    "joiner",
    "caller",
    "loop",
];

/// Where a render can fork on the variable `var`: the first top-level statement that mentions
/// `var` (or `self`, through which a block may read it), when running the statements from there
/// again, from the top-level scope the statements before it left, gives what a whole render with
/// another value of `var` gives. That holds unless the template needs a loader, or something run
/// from there on (those statements, or any macro or call block) changes an object made before:
/// a namespace attribute, a cycler or a joiner. `None` when it does not hold.
pub(crate) fn fork_point(body: &[Stmt], var: &str) -> Option<usize> {
    let names_var = |s: &Stmt| {
        let mut found = false;
        visit_stmts(std::slice::from_ref(s), &mut |s| {
            if let StmtKind::Set(t, _) | StmtKind::SetBlock(t, ..) = &s.kind {
                let mut targets = BTreeSet::new();
                target_names(t, &mut targets);
                found |= targets.contains(var);
            }
            for e in own_exprs(s) {
                visit_names(e, &mut |n| found |= n == var || n == "self");
            }
        });
        found
    };
    let fork = body.iter().position(names_var).unwrap_or(body.len());
    let mut macros = BTreeSet::new();
    collect_macro_names(body, &mut macros);
    let mut assigned = BTreeSet::new();
    collect_assigned(body, &mut assigned);
    let mut forkable = true;
    let mut check = |s: &Stmt| {
        match &s.kind {
            StmtKind::NeedsLoader(_) => forkable = false,
            StmtKind::Set(t, _) | StmtKind::SetBlock(t, ..) if sets_attribute(t) => forkable = false,
            _ => {}
        }
        for e in own_exprs(s) {
            visit_exprs(e, &mut |x| {
                let ExprKind::Call(callee, _) = &x.kind else { return };
                forkable &= match &callee.kind {
                    ExprKind::Name(n, _) => {
                        !assigned.contains(&**n) && (macros.contains(&**n) || FORK_SAFE_CALLS.contains(&&**n))
                    }
                    ExprKind::GetAttr(_, method) => !matches!(&**method, "next" | "reset"),
                    _ => false,
                };
            });
        }
    };
    visit_stmts(&body[fork..], &mut check);
    visit_stmts(body, &mut |s| match &s.kind {
        StmtKind::Macro(m) | StmtKind::CallBlock(_, m) => visit_stmts(&m.body, &mut check),
        StmtKind::NeedsLoader(_) => check(s),
        _ => {}
    });
    forkable.then_some(fork)
}

/// Whether an assignment target sets an attribute (`ns.x`).
fn sets_attribute(t: &Target) -> bool {
    match t {
        Target::Name(..) => false,
        Target::Tuple(ts) => ts.iter().any(sets_attribute),
        Target::Attr(..) => true,
    }
}

/// Every name the template assigns with `set`, `for` or `with`, or binds as a macro parameter.
fn collect_assigned(body: &[Stmt], out: &mut BTreeSet<String>) {
    visit_stmts(body, &mut |s| match &s.kind {
        StmtKind::Set(t, _) | StmtKind::SetBlock(t, ..) => target_names(t, out),
        StmtKind::For(f) => target_names(&f.target, out),
        StmtKind::With(assigns, ..) => assigns.iter().for_each(|(t, _)| target_names(t, out)),
        StmtKind::Macro(m) | StmtKind::CallBlock(_, m) => out.extend(m.params.iter().map(|(p, _)| p.to_string())),
        _ => {}
    });
}

/// The variables that hold messages or lists of them: `messages`, and (to a fixpoint) every name
/// assigned from or looping over an expression that reads one of those.
fn message_vars(body: &[Stmt]) -> BTreeSet<String> {
    let mut vars: BTreeSet<String> = ["messages".to_string()].into();
    loop {
        let before = vars.len();
        grow_message_vars(body, &mut vars);
        if vars.len() == before {
            return vars;
        }
    }
}

fn grow_message_vars(body: &[Stmt], vars: &mut BTreeSet<String>) {
    for s in body {
        let mut add = BTreeSet::new();
        match &s.kind {
            StmtKind::Set(t, e) if mentions(e, vars) && !is_scalar_expr(e) => target_names(t, &mut add),
            StmtKind::For(f) if mentions(&f.iter, vars) && !is_scalar_expr(&f.iter) => {
                target_names(&f.target, &mut add)
            }
            StmtKind::With(assigns, ..) => {
                for (t, e) in assigns {
                    if mentions(e, vars) && !is_scalar_expr(e) {
                        target_names(t, &mut add);
                    }
                }
            }
            _ => {}
        }
        vars.extend(add);
        for child in children(s) {
            grow_message_vars(child, vars);
        }
    }
}

/// Expressions whose result is not a message or a list of messages even when they read messages
/// (`messages|length`, `x == y`, `message.content`, `namespace(...)`, method calls).
fn is_scalar_expr(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Filter(_, name, _) => !name.index.and_then(|i| FILTERS.get(i)).is_some_and(|f| f.keeps_items),
        ExprKind::GetItem(_, key) => matches!(&key.kind, ExprKind::Const(crate::ast::Const::Str(_))),
        // `message.content if message.content is string else ''` is a field, not a message.
        ExprKind::Cond(_, value, other) => {
            is_scalar_expr(value)
                && match other {
                    Some(o) => is_scalar_expr(o),
                    None => true,
                }
        }
        ExprKind::GetAttr(..)
        | ExprKind::Call(..)
        | ExprKind::Test(..)
        | ExprKind::Compare(..)
        | ExprKind::Unary(..)
        | ExprKind::Binary(..)
        | ExprKind::Concat(_)
        | ExprKind::Const(_) => true,
        _ => false,
    }
}

struct Walker {
    out: Analysis,
    bound: BTreeSet<String>,
    message_vars: BTreeSet<String>,
    /// Names assigned so far in the current scope, in template order.
    assigned: BTreeSet<String>,
    /// Names read before any assignment in scope.
    free: BTreeSet<String>,
}

impl Walker {
    fn stmts(&mut self, body: &[Stmt]) {
        body.iter().for_each(|s| self.stmt(s));
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Text(_) | StmtKind::Break | StmtKind::Continue => {}
            StmtKind::Print(e, _) => self.expr(e),
            StmtKind::Set(t, e) => {
                self.expr(e);
                self.assign(t)
            }
            StmtKind::NeedsLoader(e) => {
                self.out.needs_loader.push(finding("include/import/extends", s.pos));
                self.expr(e)
            }
            StmtKind::If(branches, else_body) => {
                for (t, b) in branches {
                    self.expr(t);
                    self.stmts(b);
                }
                self.stmts(else_body)
            }
            StmtKind::For(f) => self.for_loop(f),
            StmtKind::SetBlock(t, filter, body, _) => {
                self.stmts(body);
                if let Some(f) = filter {
                    self.expr(f);
                }
                self.assign(t)
            }
            StmtKind::Macro(m) => self.macro_def(m),
            StmtKind::CallBlock(call, m) => {
                self.expr(call);
                self.macro_def(m)
            }
            StmtKind::FilterBlock(f, body, _) => {
                self.expr(f);
                self.stmts(body)
            }
            StmtKind::Autoescape(e, body, _) => {
                self.expr(e);
                self.stmts(body)
            }
            StmtKind::With(assigns, body, _) => {
                assigns.iter().for_each(|(_, e)| self.expr(e));
                let outer = self.assigned.clone();
                assigns.iter().for_each(|(t, _)| self.assign(t));
                self.stmts(body);
                self.assigned = outer
            }
            StmtKind::Generation(body, _) => {
                self.out.uses_generation = true;
                self.stmts(body)
            }
            StmtKind::Block(_, body, _) => self.stmts(body),
        }
    }

    /// Records the names a `set` (or loop) target binds in the current scope.
    fn assign(&mut self, t: &Target) {
        target_names(t, &mut self.assigned)
    }

    fn for_loop(&mut self, f: &ForLoop) {
        self.expr(&f.iter);
        let outer = self.assigned.clone();
        self.assign(&f.target);
        if let Some(c) = &f.cond {
            self.expr(c);
        }
        self.stmts(&f.body);
        self.assigned = outer;
        self.stmts(&f.else_body)
    }

    fn macro_def(&mut self, m: &MacroDef) {
        m.params
            .iter()
            .filter_map(|(_, d)| d.as_ref())
            .for_each(|d| self.expr(d));
        let outer = self.assigned.clone();
        self.assigned.extend(m.params.iter().map(|(p, _)| p.to_string()));
        self.stmts(&m.body);
        self.assigned = outer
    }

    fn args(&mut self, a: &Args) {
        for e in a.pos.iter().chain(a.kw.iter().map(|(_, e)| e)) {
            self.expr(e);
        }
        for e in [&a.star, &a.dstar].into_iter().flatten() {
            self.expr(e);
        }
    }

    fn is_message(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Name(n, _) if self.message_vars.contains(&**n))
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Const(_) => {}
            ExprKind::Name(n, _) => {
                if !self.assigned.contains(&**n) {
                    self.free.insert(n.to_string());
                }
            }
            ExprKind::List(items) | ExprKind::Tuple(items) | ExprKind::Concat(items) => {
                items.iter().for_each(|i| self.expr(i))
            }
            ExprKind::Dict(items) => items.iter().for_each(|(k, v)| {
                self.expr(k);
                self.expr(v)
            }),
            ExprKind::GetAttr(o, attr) => {
                if self.is_message(o) {
                    self.out.message_fields.insert(attr.to_string());
                }
                if attr.starts_with('_') {
                    self.out.refused_calls.push(finding(attr, e.pos));
                }
                self.expr(o)
            }
            ExprKind::GetItem(o, key) => {
                if let (true, ExprKind::Const(crate::ast::Const::Str(k))) = (self.is_message(o), &key.kind) {
                    self.out.message_fields.insert(k.to_string());
                }
                self.expr(o);
                self.expr(key)
            }
            ExprKind::Unary(_, o) => self.expr(o),
            ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                self.expr(a);
                self.expr(b)
            }
            ExprKind::Slice(a, b, c) => [a, b, c].into_iter().flatten().for_each(|x| self.expr(x)),
            ExprKind::Call(callee, args) => {
                self.call(callee, args, e.pos);
                match &callee.kind {
                    // A method called on a message (`message.get(...)`, `.items()`) is not a field.
                    ExprKind::GetAttr(o, attr) if self.is_message(o) => {
                        if attr.starts_with('_') {
                            self.out.refused_calls.push(finding(attr, callee.pos));
                        }
                        self.expr(o)
                    }
                    _ => self.expr(callee),
                }
                self.args(args)
            }
            ExprKind::Filter(v, name, args) => {
                self.out.filters.insert(name.to_string());
                if !crate::builtins::is_filter(name) {
                    self.out.unknown_filters.push(finding(name, e.pos));
                }
                if let Some(v) = v {
                    self.expr(v);
                }
                self.args(args)
            }
            ExprKind::Test(v, name, args) => {
                self.out.tests.insert(name.to_string());
                if !crate::builtins::is_test(name) {
                    self.out.unknown_tests.push(finding(name, e.pos));
                }
                self.expr(v);
                self.args(args)
            }
            ExprKind::Compare(a, rest) => {
                self.expr(a);
                rest.iter().for_each(|(_, e)| self.expr(e))
            }
            ExprKind::Cond(a, b, c) => {
                self.expr(a);
                self.expr(b);
                if let Some(c) = c {
                    self.expr(c)
                }
            }
        }
    }

    fn call(&mut self, callee: &Expr, args: &Args, pos: Pos) {
        match &callee.kind {
            ExprKind::Name(n, _) if is_global(n) && !self.bound.contains(&**n) => {
                self.out.globals_called.insert(n.to_string());
                if &**n == "raise_exception" {
                    if let Some(ExprKind::Const(crate::ast::Const::Str(msg))) = args.pos.first().map(|a| &a.kind) {
                        self.out.raise_messages.push(msg.to_string());
                    }
                }
            }
            ExprKind::Name(n, _) if !self.bound.contains(&**n) && !IMPLICIT_NAMES.contains(&&**n) => {
                self.out.unknown_functions.push(finding(n, pos));
            }
            ExprKind::GetAttr(o, method) => {
                if crate::builtins::dispatch::is_mutator_name(method) {
                    self.out.refused_calls.push(finding(method, pos));
                }
                if &**method == "get" && self.is_message(o) {
                    if let Some(ExprKind::Const(crate::ast::Const::Str(k))) = args.pos.first().map(|a| &a.kind) {
                        self.out.message_fields.insert(k.to_string());
                    }
                }
            }
            _ => {}
        }
    }
}
