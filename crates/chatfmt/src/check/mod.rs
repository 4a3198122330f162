//! `chatfmt check`: what a chat template supports and what will go wrong with it, found by static
//! analysis of its syntax tree ([`chatfmt_jinja::Template::analyze`]) and by rendering probe
//! conversations through [`ChatTemplate::apply`]. Nothing here knows any template by name.

mod kit;
mod probes;

pub use kit::{check_hf_kit, markdown_table, KitCheck};

use crate::template::ChatTemplate;
use chatfmt_jinja::analysis::{Analysis, Finding};
use chatfmt_jinja::{Error, Template};
use serde::Serialize;

/// One problem, located in the template where that is known.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Diagnostic {
    /// A stable identifier (`syntax`, `unknown_filter`, `not_prefix_preserving`, ...).
    pub code: &'static str,
    /// What is wrong and what to do.
    pub message: String,
    /// 1-based template line, if known.
    pub line: Option<u32>,
    /// 1-based column, if known.
    pub column: Option<u32>,
}

impl Diagnostic {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            message: message.into(),
            line: None,
            column: None,
        }
    }

    fn at(code: &'static str, message: impl Into<String>, f: &Finding) -> Self {
        Diagnostic {
            code,
            message: message.into(),
            line: Some(f.line),
            column: Some(f.column),
        }
    }
}

/// How a template accepts tool-call arguments.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentsFormat {
    /// Tool calls are not rendered.
    None,
    /// Only as a JSON object.
    Object,
    /// Only as a JSON-encoded string.
    String,
    /// Either.
    Both,
}

/// What a template supports. Each flag is true only when a probe conversation rendered without
/// error and its probe text showed up in the prompt as data (not only inside a Python repr such as
/// `[{'type': 'text', ...}]` or a re-escaped JSON string).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Capabilities {
    /// A `system` message is rendered.
    pub system_role: bool,
    /// Tool schemas passed as `tools` are rendered.
    pub tools: bool,
    /// An assistant message's `tool_calls` are rendered.
    pub tool_calls: bool,
    /// `tool` role messages (tool results) are rendered.
    pub tool_results: bool,
    /// Two tool calls in one assistant message are both rendered.
    pub parallel_tool_calls: bool,
    /// Which tool-call argument forms render.
    pub tool_call_arguments: ArgumentsFormat,
    /// `content` as a list of `{"type": "text"}` parts is rendered.
    pub content_text_parts: bool,
    /// An `{"type": "image"}` part changes the prompt (a placeholder is rendered).
    pub content_image_parts: bool,
    /// An assistant message's reasoning (`reasoning_content`/`thinking`) is rendered in the final turn.
    pub reasoning: bool,
    /// Reasoning of earlier assistant turns is kept in the history.
    pub reasoning_in_history: bool,
    /// `documents` are rendered.
    pub documents: bool,
    /// The template marks assistant text with `{% generation %}` blocks.
    pub generation_tags: bool,
    /// `add_generation_prompt=True` appends a header after the conversation.
    pub add_generation_prompt: bool,
    /// The prompt depends on the date (`strftime_now`).
    pub date_dependent: bool,
    /// Variables the template reads beyond the conversation and special tokens (`enable_thinking`, ...).
    pub extra_variables: Vec<String>,
    /// Message fields the template reads (`content`, `tool_calls`, `reasoning_content`, ...).
    pub message_fields: Vec<String>,
}

/// Whether a template's prompts grow only by appending: the prompt for the first k messages of a
/// conversation should be a prefix of the prompt for k + 1, or cached prompts, incremental encoding
/// and multi-turn training data break.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PrefixReport {
    /// No probe conversation broke.
    pub prefix_stable: bool,
    /// The first break of each probe conversation that has one.
    pub breaks: Vec<PrefixBreak>,
}

/// Where one probe conversation's prompts stop growing by appending.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PrefixBreak {
    /// The probe conversation: `plain`, `system`, `reasoning` (reasoning in the history) or
    /// `tool_calls` (tool calls and results).
    pub probe: &'static str,
    /// How many messages the shorter prompt holds.
    pub messages: usize,
    /// The role of the message added to it.
    pub added_role: String,
    /// The code-point offset where the two prompts first differ.
    pub offset: usize,
    /// Up to 40 characters of the shorter prompt from there.
    pub expected: String,
    /// Up to 40 characters of the longer prompt from there.
    pub actual: String,
    /// What the difference looks like.
    pub cause: String,
}

/// Probes the prefix stability of the template `chat` uses for `opts` (its `chat_template` name,
/// or the default).
pub fn prefix_stability(chat: &ChatTemplate, opts: &crate::ApplyOptions) -> Result<PrefixReport, Error> {
    let (name, _) = chat.selected(opts)?;
    let source_text;
    let template = match (name, &opts.chat_template) {
        // A requested name that is not a template name is template source.
        (None, Some(source)) => {
            source_text = Template::new("chat_template", source)?;
            &source_text
        }
        _ => match chat.templates().into_iter().find(|(n, _)| *n == name) {
            Some((_, compiled)) => compiled.map_err(Clone::clone)?,
            None => {
                return Err(Error::new(
                    chatfmt_jinja::ErrorKind::ValueError,
                    "the model has no chat template",
                ))
            }
        },
    };
    let analysis = template.analyze();
    let mut setup = Vec::new();
    let breaks = probes::Prober::new(chat, name, &analysis, &mut setup).prefix_breaks();
    Ok(PrefixReport {
        prefix_stable: breaks.is_empty(),
        breaks,
    })
}

/// The result of checking one template.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The template's name (`None` for a single unnamed template).
    pub name: Option<String>,
    /// Problems that make the template fail wherever they are reached.
    pub errors: Vec<Diagnostic>,
    /// Hazards: the template works but the prompt may not be what a caller expects.
    pub warnings: Vec<Diagnostic>,
    /// What the template supports (`None` when it does not compile).
    pub capabilities: Option<Capabilities>,
}

/// Checks every template of `chat` (one report per named template).
pub fn check(chat: &ChatTemplate) -> Vec<Report> {
    chat.templates()
        .into_iter()
        .map(|(name, compiled)| match compiled {
            Err(e) => Report {
                name: name.map(str::to_string),
                errors: vec![compile_diagnostic(e)],
                warnings: Vec::new(),
                capabilities: None,
            },
            Ok(t) => check_template(chat, name, t),
        })
        .collect()
}

fn compile_diagnostic(e: &Error) -> Diagnostic {
    Diagnostic {
        code: "syntax",
        message: format!("{e:#}"),
        line: e.line(),
        column: e.column(),
    }
}

fn check_template(chat: &ChatTemplate, name: Option<&str>, template: &Template) -> Report {
    let analysis = template.analyze();
    let mut errors = Vec::new();
    if template.source().trim().is_empty() {
        errors.push(Diagnostic::new(
            "empty_template",
            "the template is empty: every conversation renders as an empty prompt; give the model's chat template",
        ));
    } else if !analysis.free_variables.contains("messages") {
        errors.push(Diagnostic::new(
            "ignores_messages",
            "the template never reads `messages`: every conversation renders the same prompt; loop over `messages` to render the conversation",
        ));
    }
    errors.extend(static_errors(&analysis));
    let mut warnings = Vec::new();
    let probe = probes::Prober::new(chat, name, &analysis, &mut warnings);
    let capabilities = probe.run(&analysis, template.source(), &mut warnings);
    Report {
        name: name.map(str::to_string),
        errors,
        warnings,
        capabilities: Some(capabilities),
    }
}

/// Errors found without rendering: they fail whenever the branch holding them runs.
fn static_errors(a: &Analysis) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for f in &a.unknown_filters {
        out.push(Diagnostic::at(
            "unknown_filter",
            format!("no filter named '{}': the branch using it fails when it runs", f.name),
            f,
        ));
    }
    for f in &a.unknown_tests {
        out.push(Diagnostic::at(
            "unknown_test",
            format!("no test named '{}': the branch using it fails when it runs", f.name),
            f,
        ));
    }
    for f in &a.unknown_functions {
        out.push(Diagnostic::at(
            "unknown_function",
            format!(
                "'{}' is called but is neither a global function nor defined by the template (UndefinedError when it runs)",
                f.name
            ),
            f,
        ));
    }
    for f in &a.refused_calls {
        let why = if f.name.starts_with('_') {
            "attributes starting with '_' are unsafe"
        } else {
            "the sandbox is immutable: mutating methods are unsafe; build a new value with `set` or a namespace instead"
        };
        out.push(Diagnostic::at(
            "sandbox_refused",
            format!("'.{}' is refused by the sandbox (SecurityError): {why}", f.name),
            f,
        ));
    }
    for f in &a.needs_loader {
        out.push(Diagnostic::at(
            "needs_loader",
            "include/import/extends need a template loader, which chat templates do not have",
            f,
        ));
    }
    out
}
