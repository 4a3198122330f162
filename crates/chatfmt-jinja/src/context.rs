//! What a render reads (the variables, the clock, the limits) and what it produces.

use crate::error::Result;
use crate::limits::Limits;
use serde_json::{Map, Value as Json};

/// Where `strftime_now()` takes the time from.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// The machine's local time (what transformers does).
    #[default]
    Local,
    /// A fixed naive local time, ISO-8601 (`2025-07-10T12:00:00`).
    Fixed(String),
}

impl Clock {
    /// A fixed clock at `iso`, checked as `strftime_now` will read it (Python's
    /// `datetime.fromisoformat`): a `ValueError` such as `Invalid isoformat string: '...'`.
    pub fn fixed(iso: &str) -> Result<Clock> {
        crate::pystr::DateTimeFields::from_iso(iso).map_err(crate::error::py_err)?;
        Ok(Clock::Fixed(iso.to_string()))
    }
}

/// Names come from the template's syntax tree, so equal names are usually the same slice.
#[inline]
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.as_ptr() == b.as_ptr() || crate::value::short_eq(a.as_bytes(), b.as_bytes()))
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
    /// Borrowed, so a context built for each render allocates nothing for them.
    pub layers: &'v [Layer<'v>],
    /// The clock for `strftime_now`.
    pub clock: Clock,
    /// Resource limits.
    pub limits: Limits,
    /// Record where each span of the output came from ([`Rendered::spans`]).
    pub track_spans: bool,
}

impl<'v> Context<'v> {
    /// Where the context holds a top-level variable: `vars`, then the borrowed layers (the first
    /// layer with the name wins).
    pub(crate) fn source<'s>(&'s self, name: &str) -> Option<Borrowed<'s>>
    where
        'v: 's,
    {
        if !self.vars.is_empty() {
            if let Some(v) = self.vars.get(name) {
                return Some(Borrowed::Json(v));
            }
        }
        for layer in self.layers {
            match layer {
                Layer::Var(n, v) if same_name(n, name) => return Some(*v),
                Layer::Var(..) => {}
                Layer::Map(m) => {
                    if let Some(v) = crate::value::json_map_get(m, name) {
                        return Some(Borrowed::Json(v));
                    }
                }
            }
        }
        None
    }

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
    pub generation_spans: Vec<ByteSpan>,
    /// Where each span of the text came from, when [`Context::track_spans`] is set.
    pub spans: Vec<Span>,
    /// The evaluation steps the render used (what [`Limits::max_steps`] bounds).
    pub steps: u64,
}

/// Where a span of output came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Template text or a string literal of the template.
    Template,
    /// A string of the render context, printed unchanged or as a sub-string (e.g. after `trim`):
    /// its JSON path, such as `messages[2].content` or `messages[0].content[1].text`.
    Input(String),
    /// Text the template computed (numbers, `tojson`, concatenations, macro output, ...), with the
    /// JSON paths of the context values read since the previous span was written (sorted, each once):
    /// the text of `{{ tool_call.arguments | tojson }}` names `messages[1].tool_calls[0].arguments`,
    /// and so does `{{ args }}` after `{% set args = tool_call.arguments | tojson %}`.
    Computed(Vec<String>),
}

/// A half-open range `(start, end)` of byte offsets into a rendered UTF-8 text, both on character
/// boundaries: the one unit of spans inside the libraries. Outputs that promise Python string
/// indices convert with `CodePoints::span`.
pub type ByteSpan = (usize, usize);

/// A span of the rendered text, in byte offsets (see [`ByteSpan`]), and its origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset just past the last character.
    pub end: usize,
    /// Where the text of the span came from.
    pub origin: Origin,
}
