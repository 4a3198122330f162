//! The evaluator's side of causal loops (see the `causal` module): one render of the whole list that
//! notes where each iteration of the loop began, then the statements after the loop run again
//! from each note.

use super::{Evaluator, TopState};
use crate::ast::{ForLoop, Stmt, StmtKind};
use crate::context::{Context, Rendered};
use crate::error::Result;
use crate::limits::BudgetScope;
use crate::value::{Dict, Object};
use std::rc::Rc;

/// A render of a prefix `list[:i]` of the list a causal loop iterates, as
/// `Template::render_prefixes` derives it.
#[derive(Debug)]
pub struct LoopPrefix {
    /// How many bytes of the whole render the loop had written when its iteration `i` began: the
    /// render of the prefix starts with them.
    pub len: usize,
    /// What the render of the prefix writes after those bytes, or the error it raises, when it
    /// was asked for.
    pub tail: Option<Result<String>>,
    /// The same for the render of the prefix with the other context, when it was asked for and the
    /// template reads the variable the contexts differ in only after the loop.
    pub alt_tail: Option<Result<String>>,
}

/// Where one iteration of the loop began.
#[derive(Clone, Copy)]
struct Mark {
    /// Bytes written.
    out: usize,
    /// Generation spans closed.
    generation: usize,
    /// Steps used.
    used: u64,
    /// Entries of [`Marks::undo`].
    undo: usize,
}

/// What a render that derives prefixes keeps while it runs.
pub(super) struct Marks<'a> {
    /// The loop whose iterations are marked.
    for_loop: &'a ForLoop,
    /// The render's budget (held here so that marks can read the steps used).
    budget: BudgetScope,
    marks: Vec<Mark>,
    /// Namespaces with their contents before the first write to them since `since` (an index of
    /// this list): restoring entries from the last down gives the namespaces back as they were
    /// when an entry count was noted.
    undo: Vec<(Rc<Object<'a>>, Dict<'a>)>,
    since: usize,
}

impl<'a> Marks<'a> {
    /// Restores every namespace to its contents when the log had `len` entries.
    fn undo_to(&mut self, len: usize) {
        while self.undo.len() > len {
            if let Some((ns, saved)) = self.undo.pop() {
                if let Object::Namespace(d) = &*ns {
                    *d.borrow_mut() = saved;
                }
            }
        }
        self.since = len;
    }
}

impl<'a> Evaluator<'a> {
    /// Notes the start of an iteration of `f` when prefixes are derived from its iterations.
    pub(super) fn mark_iteration(&mut self, f: &ForLoop) {
        let (out, generation) = (self.out.len(), self.generation_spans.len());
        if let Some(m) = self.marks.as_deref_mut().filter(|m| std::ptr::eq(m.for_loop, f)) {
            m.since = m.undo.len();
            m.marks.push(Mark {
                out,
                generation,
                used: m.budget.used(),
                undo: m.since,
            });
        }
    }

    /// Notes the contents of the namespace `ns` before a write to it, when this render derives
    /// prefixes and it is the first write to it since the last mark.
    pub(super) fn note_namespace_write(&mut self, ns: &Rc<Object<'a>>) {
        let Some(m) = self.marks.as_deref_mut() else { return };
        if let Object::Namespace(d) = &**ns {
            if !m.undo[m.since..].iter().any(|(seen, _)| Rc::ptr_eq(seen, ns)) {
                m.undo.push((ns.clone(), d.borrow().clone()));
            }
        }
    }

    /// Renders the template into `result`, with spans when this evaluator tracks them (the
    /// top-level statement `at` being the causal loop of the `causal` module), then gives, for
    /// each iteration `i` of that loop, what the render of the list's prefix `[:i]` writes after
    /// the bytes written before the iteration: with this evaluator's context where `wanted(i).0`,
    /// and with `alt` where `wanted(i).1` and `alt` is given. Each runs under the budget the
    /// render of the prefix has, or less (the whole list's iteration may have cost more steps).
    pub(crate) fn run_prefixes(
        mut self,
        at: usize,
        alt: Option<&'a Context<'a>>,
        wanted: &dyn Fn(usize) -> (bool, bool),
        result: &mut Rendered,
    ) -> Result<Vec<LoopPrefix>> {
        let body = self.body;
        let (head, rest) = body.split_at(at);
        let Some((
            looped @ Stmt {
                kind: StmtKind::For(f), ..
            },
            tail,
        )) = rest.split_first()
        else {
            return self.run(body, result).map(|()| Vec::new());
        };
        let budget = BudgetScope::start(&self.ctx.limits);
        self.exec_block(head)?;
        let before_loop = self.top_state();
        self.marks = Some(Box::new(Marks {
            for_loop: f,
            budget,
            marks: Vec::new(),
            undo: Vec::new(),
            since: 0,
        }));
        self.exec(looped)?;
        self.exec_block(tail)?;
        let Some(marks) = self.marks.as_deref_mut() else {
            return Ok(Vec::new());
        };
        result.steps = marks.budget.used();
        result.text.clone_from(&self.out);
        super::generation_byte_spans(&self.generation_spans, &self.out, &mut result.generation_spans);
        let plain = self.ctx;
        // The whole render's spans; the prefixes' are not recorded.
        if let Some(rec) = self.spans.take() {
            self.span_sizes.remember(&rec);
            rec.resolve(plain, &mut result.spans);
        }
        let all = std::mem::take(&mut marks.marks);
        let mut prefixes: Vec<LoopPrefix> = Vec::with_capacity(all.len());
        // The context values the other context's runs read, kept while one context runs.
        let mut other_outer = Default::default();
        for (i, mark) in all.into_iter().enumerate().rev() {
            let mut run = |me: &mut Self, ctx: &'a Context<'a>| {
                if let Some(m) = me.marks.as_deref_mut() {
                    m.undo_to(mark.undo);
                    m.budget.rewind(mark.used);
                }
                if !std::ptr::eq(me.ctx, ctx) {
                    me.ctx = ctx;
                    std::mem::swap(&mut me.outer, &mut other_outer);
                }
                me.return_to(TopState {
                    out: mark.out,
                    generation: mark.generation,
                    ..before_loop.clone()
                });
                me.exec_block(tail).map(|_| me.out[mark.out..].to_string())
            };
            let (with_plain, with_alt) = wanted(i);
            let tail_text = with_plain.then(|| run(&mut self, plain));
            let alt_tail = alt.filter(|_| with_alt).map(|alt| run(&mut self, alt));
            prefixes.push(LoopPrefix {
                len: mark.out,
                tail: tail_text,
                alt_tail,
            });
        }
        prefixes.reverse();
        Ok(prefixes)
    }
}
