//! Compiled templates, render contexts and render results.

use crate::error::{Error, Result};
use crate::eval::Evaluator;
pub use crate::limits::Limits;
use crate::syntax::{ast::Stmt, lexer, parser};
use serde_json::{Map, Value as Json};

/// A template compiled once and rendered many times.
#[derive(Debug)]
pub struct Template {
    name: String,
    source: String,
    body: Vec<Stmt>,
}

/// Where `strftime_now()` takes the time from.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// The machine's local time (what transformers does).
    #[default]
    Local,
    /// A fixed naive local time, ISO-8601 (`2025-07-10T12:00:00`).
    Fixed(String),
}

/// A variable borrowed from the caller for one render.
#[derive(Debug, Clone, Copy)]
pub enum Borrowed<'v> {
    /// A JSON value.
    Json(&'v Json),
    /// A list given as a slice of JSON values (e.g. the caller's messages), seen as a JSON array.
    List(&'v [Json]),
}

/// Variables borrowed from the caller, so a render needs no copy of its input.
#[derive(Debug, Clone, Copy)]
pub enum Layer<'v> {
    /// One named variable.
    Var(&'v str, Borrowed<'v>),
    /// Every entry of the map is a variable.
    Map(&'v Map<String, Json>),
}

/// The variables a template is rendered with, plus the clock and limits.
#[derive(Debug, Clone, Default)]
pub struct Context<'v> {
    /// Template variables (top-level names).
    pub vars: Map<String, Json>,
    /// More variables, looked up after `vars`, layer by layer (the first layer with the name wins).
    pub layers: Vec<Layer<'v>>,
    /// The clock for `strftime_now`.
    pub clock: Clock,
    /// Resource limits.
    pub limits: Limits,
    /// Record where each span of the output came from ([`Rendered::spans`]).
    pub track_spans: bool,
}

impl Context<'_> {
    /// A context from a JSON object of variables.
    pub fn from_json(vars: Json) -> Result<Self> {
        match vars {
            Json::Object(vars) => Ok(Context {
                vars,
                ..Context::default()
            }),
            _ => Err(crate::error::err!(
                TypeError,
                "template variables must be a JSON object"
            )),
        }
    }
}

/// The result of a render: the text and the byte spans of `{% generation %}` blocks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    /// The rendered text.
    pub text: String,
    /// The byte span of each `{% generation %}` block in `text`.
    pub generation_spans: Vec<crate::output::ByteSpan>,
    /// Where each span of the text came from, when [`Context::track_spans`] is set.
    pub spans: Vec<crate::output::Span>,
    /// The evaluation steps the render used (what [`Limits::max_steps`] bounds).
    pub steps: u64,
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
        let body = parse_lazily(&normalized)
            .and_then(|body| {
                parser::check_names(&body, &crate::builtins::is_filter, &crate::builtins::is_test)?;
                Ok(body)
            })
            .map_err(|e| e.in_template(name, &normalized))?;
        Ok(Template {
            name: name.to_string(),
            source: normalized,
            body,
        })
    }

    /// The parsed body.
    pub(crate) fn body(&self) -> &[Stmt] {
        &self.body
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
        Evaluator::new(self, ctx, text)
            .run(&self.body, out)
            .map_err(|e| e.in_template(&self.name, &self.source))
    }
}
