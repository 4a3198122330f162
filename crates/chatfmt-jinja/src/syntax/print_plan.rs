//! Print plans: a printed `+` / `~` chain of side-effect-free operands (literals, names, items,
//! attributes, pure filters), flattened at compile time so rendering can write each operand straight
//! to the output when all of them are plain strings — the common shape of chat templates
//! (`'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>'`).

use crate::ast::{Args, BinOp, Const, Expr, ExprKind};
use crate::builtins::table::FILTERS;

/// The operands of `e` in print order, when `e` is a concatenation (or a single operand) whose
/// operands can be evaluated again without changing anything. Adjacent string literals are one
/// operand: printing them is writing their text.
pub fn leaves(e: &Expr) -> Option<Box<[Expr]>> {
    let mut out: Vec<Expr> = Vec::new();
    if !collect(e, &mut out) {
        return None;
    }
    out.dedup_by(|next, kept| match (&next.kind, &mut kept.kind) {
        (ExprKind::Const(Const::Str(b)), ExprKind::Const(Const::Str(a))) => {
            *a = format!("{a}{b}").into_boxed_str();
            true
        }
        _ => false,
    });
    Some(out.into_boxed_slice())
}

fn collect(e: &Expr, out: &mut Vec<Expr>) -> bool {
    match &e.kind {
        ExprKind::Binary(BinOp::Add, a, b) => collect(a, out) && collect(b, out),
        ExprKind::Concat(parts) => parts.iter().all(|p| collect(p, out)),
        _ if pure(e) => {
            out.push(e.clone());
            true
        }
        _ => false,
    }
}

/// Whether evaluating `e` twice gives the same value and does nothing else.
fn pure(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Name(..) => true,
        ExprKind::GetAttr(obj, _) => pure(obj),
        ExprKind::GetItem(obj, key) => pure(obj) && matches!(key.kind, ExprKind::Const(_)),
        ExprKind::Filter(Some(inner), name, args) => {
            name.index.and_then(|i| FILTERS.get(i)).is_some_and(|f| f.pure) && pure(inner) && pure_args(args)
        }
        _ => false,
    }
}

fn pure_args(a: &Args) -> bool {
    a.star.is_none() && a.dstar.is_none() && a.pos.iter().all(pure) && a.kw.iter().all(|(_, e)| pure(e))
}
