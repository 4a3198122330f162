//! Causal loops: when the renders of every prefix of a list follow from one render of the whole.
//!
//! A template is *causal* in a list variable `list` when its only mention of `list` is as the bare
//! iterable of a top-level `{% for %}` (not inside an `if`, block, macro, call or filter) whose
//! iterations cannot tell how many items follow:
//!
//! - the loop has no filter (`if ...`), no `else`, is not `recursive` and its body has no
//!   `{% break %}` of its own;
//! - its body (macros defined in it included; nested loops' bodies, which have a `loop` of their
//!   own, excluded) reads `loop` only as `loop.index`, `index0`, `first`, `previtem`, `cycle`,
//!   `changed`, `depth` or `depth0`, never `length`, `last`, `revindex(0)`, `nextitem`, nor `loop`
//!   itself (its `repr` shows the length);
//! - the template reads neither `cycler` nor `joiner` (objects changed across iterations outside
//!   namespaces), nor `self` (blocks rendered again), and has no tag that needs a loader.
//!
//! Then the statements before the loop run the same for every prefix, iterations `0..i` of the
//! whole render do what the render of `list[:i]` does (a `set` in a loop body stays in it), and
//! that render ends with the statements after the loop, run from the template's scope as the loop
//! found it (the loop variable is gone) and with every namespace as iteration `i` found it:
//! namespaces are the only values a render changes. When the template also reads a second
//! variable `flag` only after the loop (nowhere before it, in it, or in any macro), a context that
//! differs from the first in `flag` alone gives its prefix renders the same way.

use crate::analysis::{children, own_exprs, target_names, visit_exprs, visit_stmts};
use crate::ast::{ExprKind, Stmt, StmtKind, Target};
pub use crate::eval::causal::LoopPrefix;
use std::collections::BTreeSet;

/// What `loop` may be read for in a causal loop's body: nothing that depends on later items.
const CAUSAL_LOOP_ATTRIBUTES: &[&str] = &[
    "index", "index0", "first", "previtem", "cycle", "changed", "depth", "depth0",
];

/// Globals whose use makes no template causal (see the module's doc).
const EXCLUDED_NAMES: &[&str] = &["cycler", "joiner", "self"];

/// A template's causal loop over a list (see the module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CausalLoop {
    /// The loop's index among the template's top-level statements.
    pub(crate) statement: usize,
    /// Whether the second variable asked about is read only after the loop, so that prefix renders
    /// with another value of it follow from the same render.
    pub flag_only_after: bool,
}

/// How many times the template names `name`: as a variable read or assigned (namespace attribute
/// targets name their namespace), a macro or a parameter.
fn occurrences(body: &[Stmt], name: &str) -> usize {
    let mut count = 0;
    let bound = |t: &Target, count: &mut usize| {
        let mut names = BTreeSet::new();
        target_names(t, &mut names);
        *count += usize::from(names.contains(name)) + usize::from(names_namespace(t, name));
    };
    visit_stmts(body, &mut |s| {
        match &s.kind {
            StmtKind::Set(t, _) | StmtKind::SetBlock(t, ..) => bound(t, &mut count),
            StmtKind::For(f) => bound(&f.target, &mut count),
            StmtKind::With(assigns, ..) => assigns.iter().for_each(|(t, _)| bound(t, &mut count)),
            StmtKind::Macro(m) | StmtKind::CallBlock(_, m) => {
                count += usize::from(&*m.name == name);
                count += m.params.iter().filter(|(p, _)| &**p == name).count();
            }
            _ => {}
        }
        for e in own_exprs(s) {
            visit_exprs(e, &mut |x| {
                if matches!(&x.kind, ExprKind::Name(n, _) if &**n == name) {
                    count += 1;
                }
            });
        }
    });
    count
}

/// Whether an assignment target sets an attribute of the namespace `name` (`name.x`).
fn names_namespace(t: &Target, name: &str) -> bool {
    match t {
        Target::Name(..) => false,
        Target::Tuple(ts) => ts.iter().any(|t| names_namespace(t, name)),
        Target::Attr(ns, ..) => &**ns == name,
    }
}

/// Whether statements of a loop's body read that loop's `loop` only for causal attributes and
/// have no `{% break %}` of that loop.
fn causal_body(body: &[Stmt]) -> bool {
    body.iter().all(|s| {
        let reads_ok = own_exprs(s).into_iter().all(|e| {
            let (mut reads, mut causal) = (0, 0);
            visit_exprs(e, &mut |x| match &x.kind {
                ExprKind::Name(n, _) if &**n == "loop" => reads += 1,
                ExprKind::GetAttr(obj, attr)
                    if matches!(&obj.kind, ExprKind::Name(n, _) if &**n == "loop")
                        && CAUSAL_LOOP_ATTRIBUTES.contains(&&**attr) =>
                {
                    causal += 1
                }
                _ => {}
            });
            reads == causal
        });
        let nested_ok = match &s.kind {
            StmtKind::Break => false,
            // A nested loop's body has its own `loop` and `break`; its `else` has the outer ones.
            StmtKind::For(f) => causal_body(&f.else_body),
            _ => children(s).into_iter().all(causal_body),
        };
        reads_ok && nested_ok
    })
}

/// The template's causal loop over `list`, and whether it reads `flag` only after it (see the
/// module's doc); `None` when the template is not causal in `list`.
pub(crate) fn causal_loop(body: &[Stmt], list: &str, flag: &str) -> Option<CausalLoop> {
    if occurrences(body, list) != 1 {
        return None;
    }
    let statement = body.iter().position(|s| match &s.kind {
        StmtKind::For(f) => matches!(&f.iter.kind, ExprKind::Name(n, _) if &**n == list),
        _ => false,
    })?;
    let StmtKind::For(f) = &body[statement].kind else {
        return None;
    };
    if f.cond.is_some() || !f.else_body.is_empty() || f.recursive || !causal_body(&f.body) {
        return None;
    }
    let mut excluded = false;
    visit_stmts(body, &mut |s| {
        excluded |= matches!(s.kind, StmtKind::NeedsLoader(_));
        for e in own_exprs(s) {
            visit_exprs(e, &mut |x| {
                excluded |= matches!(&x.kind, ExprKind::Name(n, _) if EXCLUDED_NAMES.contains(&&**n));
            });
        }
    });
    if excluded {
        return None;
    }
    let mut in_macros = 0;
    visit_stmts(body, &mut |s| {
        if let StmtKind::Macro(_) | StmtKind::CallBlock(..) = &s.kind {
            in_macros += occurrences(std::slice::from_ref(s), flag);
        }
    });
    Some(CausalLoop {
        statement,
        flag_only_after: in_macros == 0 && occurrences(&body[..=statement], flag) == 0,
    })
}
