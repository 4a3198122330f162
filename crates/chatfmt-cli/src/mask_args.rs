//! The flags that choose where assistant masks come from, shared by `render`, `tokenize` and
//! `dataset`, and the JSON shape of message spans.

use anyhow::{bail, Result};
use chatfmt::masks::stop_markers;
use chatfmt::{ApplyOptions, MaskSource, ModelSource, Resolved, SpanOptions};
use clap::{Args, ValueEnum};
use serde_json::Value as Json;

/// `--masks`: where assistant masks come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum MaskMode {
    /// The template's `{% generation %}` blocks.
    Tags,
    /// The rendered text's provenance and prefix renders (any template).
    Provenance,
    /// The template's generation blocks when it has them, else provenance.
    #[default]
    Auto,
}

/// The mask flags.
#[derive(Args, Default)]
pub struct MaskArgs {
    /// Where assistant masks come from: `tags` ({% generation %} blocks), `provenance` (any template,
    /// from what each message rendered) or `auto` (tags when the template has them, else provenance).
    #[arg(long, value_enum, value_name = "MODE", num_args = 0..=1, default_missing_value = "auto")]
    pub masks: Option<MaskMode>,
    /// A string that ends the model's turn (repeatable), besides the eos token and the eos ids of the
    /// model's generation_config.json.
    #[arg(long = "stop-token", value_name = "TOKEN")]
    pub stop_tokens: Vec<String>,
}

impl MaskArgs {
    /// Whether `--masks` or `--stop-token` was given.
    pub fn given(&self) -> bool {
        self.masks.is_some() || !self.stop_tokens.is_empty()
    }

    /// The span options for a Jinja template: the mask source of `--masks` (`tags` on a template
    /// without generation blocks is an error) and the stop markers of the model.
    pub fn span_options(&self, resolved: &Resolved, opts: &ApplyOptions, message_spans: bool) -> Result<SpanOptions> {
        let tagged = resolved.template.has_generation_blocks(opts)?;
        let source = match self.masks.unwrap_or_default() {
            MaskMode::Tags if !tagged => bail!(
                "--masks tags: the template has no {{% generation %}} blocks; use --masks provenance \
                 (or --masks auto) to find assistant spans without them"
            ),
            MaskMode::Tags => MaskSource::Tags,
            MaskMode::Provenance => MaskSource::Provenance,
            // Resolved per render: a conversation with tools may select another named template.
            MaskMode::Auto => MaskSource::Auto,
        };
        let dir = match &resolved.model {
            Some(ModelSource::Dir(d)) => Some(d.as_path()),
            _ => None,
        };
        let eos = opts
            .kwargs
            .get("eos_token")
            .or_else(|| resolved.template.special_tokens().get("eos_token"))
            .and_then(Json::as_str);
        Ok(SpanOptions {
            source,
            stop_markers: stop_markers(dir, eos, &self.stop_tokens)?,
            message_spans,
            deadline: None,
        })
    }
}
