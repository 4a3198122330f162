//! Compiled templates, render contexts and render results.

use crate::ast::{Scopes, Stmt};
use crate::causal::{CausalLoop, LoopPrefix};
pub use crate::context::{Borrowed, Clock, Context, Layer, Rendered};
use crate::error::{Error, Result};
use crate::eval::Evaluator;
pub use crate::limits::Limits;
use crate::output::SpanSizes;
use crate::syntax::{lexer, parser};
use std::sync::OnceLock;

/// A template compiled once and rendered many times.
#[derive(Debug)]
pub struct Template {
    name: String,
    source: String,
    body: Vec<Stmt>,
    scopes: Scopes,
    /// Whether a `{% generation %}` block appears.
    generation: bool,
    /// The first variable [`render_pair`](Template::render_pair) was asked to fork on, with its
    /// fork point.
    fork: OnceLock<(Box<str>, Option<usize>)>,
    /// The first list and flag variables [`causal_loop`](Template::causal_loop) was asked about,
    /// with its answer.
    causal: OnceLock<(Box<str>, Box<str>, Option<CausalLoop>)>,
    /// The span buffer sizes of the last render with spans.
    span_sizes: SpanSizes,
}

/// Lexes and parses as Jinja2 does, lexing while parsing: when the source has a lexing error, a
/// parse error in the tokens before it is the one raised.
fn parse_lazily(source: &str) -> Result<Vec<Stmt>> {
    let (tokens, lex_error) = lexer::tokenize_lazily(source);
    let Some(lex_error) = lex_error else {
        return parser::parse(tokens);
    };
    let before = |e: &Error| (e.line(), e.column()) < (lex_error.line(), lex_error.column());
    match parser::parse(tokens) {
        Err(e) if before(&e) => Err(e),
        _ => Err(lex_error),
    }
}

impl Template {
    /// Parses `source` (named `name` in errors) into a template ready to render.
    pub fn new(name: &str, source: &str) -> Result<Template> {
        let normalized = lexer::normalize_source(source);
        let mut body = parse_lazily(&normalized)
            .and_then(|body| {
                parser::check_names(&body)?;
                Ok(body)
            })
            .map_err(|e| e.in_template(name, &normalized))?;
        let scopes = crate::syntax::scopes::resolve(&mut body);
        let generation = crate::analysis::has_generation(&body);
        Ok(Template {
            name: name.to_string(),
            source: normalized,
            body,
            scopes,
            generation,
            fork: OnceLock::new(),
            causal: OnceLock::new(),
            span_sizes: SpanSizes::default(),
        })
    }

    /// Analyses the template's syntax tree over every branch (see [`crate::analysis::Analysis`]).
    pub fn analyze(&self) -> crate::analysis::Analysis {
        crate::analysis::analyze(&self.body)
    }

    /// Whether a `{% generation %}` block appears (as [`analyze`](Self::analyze)'s `uses_generation`,
    /// known since compilation).
    pub fn has_generation_blocks(&self) -> bool {
        self.generation
    }

    /// The template's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The source after newline normalisation.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the template text mentions `needle` (e.g. a message field).
    pub fn mentions(&self, needle: &str) -> bool {
        self.source.contains(needle)
    }

    /// Renders with the given context.
    pub fn render(&self, ctx: &Context) -> Result<Rendered> {
        let mut out = Rendered::default();
        self.render_into(ctx, &mut out)?;
        Ok(out)
    }

    /// Where [`render_pair`](Self::render_pair) forks on `var`: the index of the top-level statement
    /// from which it renders twice (what comes before runs once), or `None` when it renders both
    /// whole.
    pub fn fork_point(&self, var: &str) -> Option<usize> {
        match self
            .fork
            .get_or_init(|| (var.into(), crate::analysis::fork_point(&self.body, var)))
        {
            (name, fork) if **name == *var => *fork,
            _ => crate::analysis::fork_point(&self.body, var),
        }
    }

    /// The template's causal loop over the list variable `list` (see [`crate::causal`]), telling
    /// whether it reads the variable `flag` only after it; `None` when the template is not causal
    /// in `list`.
    pub fn causal_loop(&self, list: &str, flag: &str) -> Option<CausalLoop> {
        match self.causal.get_or_init(|| {
            (
                list.into(),
                flag.into(),
                crate::causal::causal_loop(&self.body, list, flag),
            )
        }) {
            (l, f, found) if **l == *list && **f == *flag => *found,
            _ => crate::causal::causal_loop(&self.body, list, flag),
        }
    }

    /// Renders with `ctx` into `out`, as [`render_into`](Self::render_into) does (spans included
    /// when `ctx` tracks them), and when the template is causal in the list variable `list` (see
    /// [`causal_loop`](Self::causal_loop)), gives for each `i` below the list's length what the
    /// render of `ctx` with `list[:i]` gives (the first [`LoopPrefix::len`] bytes of `out.text`,
    /// then [`LoopPrefix::tail`]) where `wanted(i).0`, and with `alt` where `wanted(i).1`, when
    /// `alt` differs from `ctx` only in the variable `flag` and the template reads `flag` only
    /// after the loop. A prefix
    /// render's limits are those of `ctx`; one that fails with
    /// [`LimitExceeded`](crate::error::ErrorKind::LimitExceeded) may not have exceeded them when
    /// rendered on its own. `None` (with nothing rendered) when the template is not causal in
    /// `list`. The prefixes' spans and generation spans are not given.
    pub fn render_prefixes(
        &self,
        ctx: &Context,
        alt: Option<&Context>,
        names: (&str, &str),
        wanted: &dyn Fn(usize) -> (bool, bool),
        out: &mut Rendered,
    ) -> Result<Option<Vec<LoopPrefix>>> {
        let (list, flag) = names;
        let Some(found) = self.causal_loop(list, flag) else {
            return Ok(None);
        };
        let alt = alt.filter(|_| found.flag_only_after);
        let in_template = |e: crate::error::Error| e.in_template(&self.name, &self.source);
        let text = Self::reuse(out);
        let mut prefixes = Evaluator::new(&self.body, &self.scopes, &self.span_sizes, ctx, ctx.track_spans, text)
            .run_prefixes(found.statement, alt, wanted, out)
            .map_err(in_template)?;
        for p in &mut prefixes {
            p.tail = p.tail.take().map(|t| t.map_err(in_template));
            p.alt_tail = p.alt_tail.take().map(|t| t.map_err(in_template));
        }
        Ok(Some(prefixes))
    }

    /// Renders with `ctx` into `out` and with `alt` into `alt_out`, where `alt` is `ctx` with another
    /// value of the variable `var`: what runs before the template first mentions `var` runs once,
    /// when the template allows it (see `analysis::fork_point`), else both render whole. Gives the
    /// first render's result and, when it succeeded, the second's: each exactly what
    /// [`render_into`](Self::render_into) gives. Spans are not tracked.
    pub fn render_pair(
        &self,
        ctx: &Context,
        alt: &Context,
        var: &str,
        out: &mut Rendered,
        alt_out: &mut Rendered,
    ) -> Result<Result<()>> {
        let fork = self.fork_point(var);
        let Some(fork) = fork.filter(|_| !ctx.track_spans && !alt.track_spans) else {
            self.render_into(ctx, out)?;
            return Ok(self.render_into(alt, alt_out));
        };
        alt_out.generation_spans.clear();
        alt_out.spans.clear();
        let in_template = |e: crate::error::Error| e.in_template(&self.name, &self.source);
        let text = Self::reuse(out);
        Evaluator::new(&self.body, &self.scopes, &self.span_sizes, ctx, false, text)
            .run_forked(fork, alt, out, alt_out)
            .map(|alt_result| alt_result.map_err(in_template))
            .map_err(in_template)
    }

    /// Renders into `out`, reusing its buffers (the text keeps its capacity from render to render).
    /// On error `out` holds no result.
    pub fn render_into(&self, ctx: &Context, out: &mut Rendered) -> Result<()> {
        let text = Self::reuse(out);
        Evaluator::new(&self.body, &self.scopes, &self.span_sizes, ctx, ctx.track_spans, text)
            .run(&self.body, out)
            .map_err(|e| e.in_template(&self.name, &self.source))
    }

    /// Renders into `out` as [`render_into`](Self::render_into) does, with spans tracked whatever
    /// `ctx` says, but gives only the spans whose origin names a context path `names` accepts (its
    /// input path, or one of the paths of computed text; see [`Origin`](crate::context::Origin)), in output
    /// order, instead of resolving every span's origin: `out.spans` stays empty. What a caller asks
    /// that needs to know where one value's text went and nothing else.
    pub fn render_named_spans(
        &self,
        ctx: &Context,
        out: &mut Rendered,
        names: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<crate::context::ByteSpan>> {
        let text = Self::reuse(out);
        Evaluator::new(&self.body, &self.scopes, &self.span_sizes, ctx, true, text)
            .run_named(&self.body, out, names)
            .map_err(|e| e.in_template(&self.name, &self.source))
    }

    /// Empties `out` for a render and gives its text buffer.
    fn reuse(out: &mut Rendered) -> String {
        out.generation_spans.clear();
        out.spans.clear();
        let mut text = std::mem::take(&mut out.text);
        text.clear();
        text
    }
}
