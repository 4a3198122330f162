//! Compiled templates, render contexts and render results.

use crate::ast::{Scopes, Stmt};
pub use crate::context::{Borrowed, Clock, Context, Layer, Rendered};
use crate::error::{Error, Result};
use crate::eval::Evaluator;
pub use crate::limits::Limits;
use crate::syntax::{lexer, parser};

/// A template compiled once and rendered many times.
#[derive(Debug)]
pub struct Template {
    name: String,
    source: String,
    body: Vec<Stmt>,
    scopes: Scopes,
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
        Ok(Template {
            name: name.to_string(),
            source: normalized,
            body,
            scopes,
        })
    }

    /// Analyses the template's syntax tree over every branch (see [`crate::analysis::Analysis`]).
    pub fn analyze(&self) -> crate::analysis::Analysis {
        crate::analysis::analyze(&self.body)
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

    /// Renders into `out`, reusing its buffers (the text keeps its capacity from render to render).
    /// On error `out` holds no result.
    pub fn render_into(&self, ctx: &Context, out: &mut Rendered) -> Result<()> {
        out.generation_spans.clear();
        out.spans.clear();
        let mut text = std::mem::take(&mut out.text);
        text.clear();
        Evaluator::new(&self.body, &self.scopes, ctx, text)
            .run(&self.body, out)
            .map_err(|e| e.in_template(&self.name, &self.source))
    }
}
