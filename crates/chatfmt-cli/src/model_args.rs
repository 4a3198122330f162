//! The flags that choose a template, shared by `render`, `tokenize`, `dataset` and `check`, and the
//! one place they are resolved: Jinja templates through [`chatfmt::TemplateRequest`], FastChat
//! conversation templates by name or (with `--conv-template auto`) by FastChat's model-path matching.

use anyhow::{anyhow, bail, Result};
use chatfmt::jinja::Limits;
use chatfmt::{ApplyOptions, ChatTemplate, ErrorKind, ModelSource, Resolved, TemplateInfo, TemplateRequest};
use chatfmt_fastchat::{self as conversation, ChosenBy, Conversation};
use clap::Args;
use serde_json::{Map, Value as Json};
use std::path::PathBuf;

/// The template flags.
#[derive(Args, Default)]
pub struct ModelArgs {
    /// A model: a folder (tokenizer_config.json, chat_template.jinja, tokenizer.json, ...), a .gguf
    /// file, or a Hub repo id (org/name) found in the local Hugging Face cache. It supplies the
    /// template, the special tokens and (for tokenizing) the tokenizer.
    #[arg(long)]
    pub model: Option<String>,
    /// A Jinja template file; replaces the model's template (the model still supplies special tokens
    /// and the tokenizer).
    #[arg(long, conflicts_with_all = ["default_template", "conv_template"])]
    pub template: Option<PathBuf>,
    /// A built-in Jinja template (chatml, llama, blenderbot, gpt2; see `chatfmt templates list`);
    /// replaces the model's template.
    #[arg(long, value_name = "NAME", conflicts_with = "conv_template")]
    pub default_template: Option<String>,
    /// A FastChat conversation template by name (see `chatfmt templates list`), or `auto`: the one
    /// FastChat's model-path matching picks for the --model argument (as a path string; it need
    /// not exist).
    #[arg(long, value_name = "NAME|auto")]
    pub conv_template: Option<String>,
    /// A named template of the model (`default`, `tool_use`, `rag`, ...); a name the model does not
    /// have is an error listing the names it has.
    #[arg(long)]
    pub template_name: Option<String>,
    /// Replace the model's BOS token.
    #[arg(long)]
    pub bos_token: Option<String>,
    /// Replace the model's EOS token.
    #[arg(long)]
    pub eos_token: Option<String>,
    /// Evaluation steps one render may take (default 20,000,000): raise it for conversations of
    /// thousands of messages with templates that scan the conversation again for each message.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_steps: Option<u64>,
}

/// How a conversation is rendered.
pub enum Plan {
    /// A Jinja chat template.
    Jinja(Resolved),
    /// A FastChat conversation template.
    FastChat(Conversation),
}

impl ModelArgs {
    /// The `--bos-token` / `--eos-token` replacements.
    pub fn special_tokens(&self) -> Map<String, Json> {
        let mut out = Map::new();
        for (key, value) in [("bos_token", &self.bos_token), ("eos_token", &self.eos_token)] {
            if let Some(v) = value {
                out.insert(key.to_string(), Json::String(v.clone()));
            }
        }
        out
    }

    /// Resolves the flags to a template; the chosen FastChat template is named on stderr.
    pub fn plan(&self) -> Result<Plan> {
        if let Some(name) = &self.conv_template {
            return self.fastchat(name).map(Plan::FastChat);
        }
        if self.model.is_none() && self.template.is_none() && self.default_template.is_none() {
            bail!(
                "nothing to render with: give --model MODEL, --template FILE, --default-template NAME or \
                 --conv-template NAME"
            );
        }
        let request = TemplateRequest {
            model: self.model.clone(),
            template: self.template.clone(),
            default_template: self.default_template.clone(),
            special_tokens: self.special_tokens(),
        };
        let mut resolved = request.resolve().map_err(|e| match e.kind() {
            ErrorKind::NotFound if self.model.is_some() && self.template.is_none() => anyhow!(
                "{e:#}; pass an existing model folder or .gguf file, a repo id from the local Hugging Face cache, \
                 or choose the template with --template FILE, --default-template NAME or --conv-template NAME|auto"
            ),
            ErrorKind::NoTemplate => anyhow!(
                "{e:#}; choose the template with --template FILE, --default-template NAME or --conv-template NAME|auto"
            ),
            _ => anyhow!(e),
        })?;
        if let Some(name) = &self.template_name {
            check_template_name(&resolved.template, name, self.model.as_deref())?;
        }
        if let Some(max_steps) = self.max_steps {
            let limits = Limits {
                max_steps,
                ..Limits::default()
            };
            resolved.template = resolved.template.with_limits(limits);
        }
        Ok(Plan::Jinja(resolved))
    }

    /// The FastChat template named `name`, or picked by model-path matching for `auto`.
    fn fastchat(&self, name: &str) -> Result<Conversation> {
        if let Some(option) = self.fastchat_conflict() {
            bail!("{option} cannot be used with a FastChat conversation template (--conv-template)");
        }
        let chosen = conversation::choose_conv_template(name, self.model.as_deref()).map_err(|e| match e.kind() {
            conversation::ErrorKind::NoModelPath => {
                anyhow!("--conv-template auto matches the --model argument; give --model MODEL_PATH")
            }
            _ => anyhow!("{e}"),
        })?;
        let conv = chosen.conversation;
        match (chosen.chosen_by, &self.model) {
            (ChosenBy::ModelPath { adapter }, Some(model)) => eprintln!(
                "note: using FastChat template '{}' (model-path matching chose adapter {adapter} for '{model}')",
                conv.name
            ),
            _ => eprintln!("note: using FastChat template '{}'", conv.name),
        }
        Ok(conv)
    }

    /// A template flag a FastChat template cannot honour, if one is given.
    fn fastchat_conflict(&self) -> Option<&'static str> {
        if self.template_name.is_some() {
            Some("--template-name")
        } else if self.bos_token.is_some() {
            Some("--bos-token")
        } else if self.eos_token.is_some() {
            Some("--eos-token")
        } else if self.max_steps.is_some() {
            Some("--max-steps")
        } else {
            None
        }
    }

    /// The model `tokenize` and `dataset --tokenize` take the tokenizer from.
    pub fn tokenizer_model(&self, plan: &Plan) -> Result<ModelSource> {
        let model = match plan {
            Plan::Jinja(r) => r.model.clone(),
            Plan::FastChat(_) => self.model.as_deref().map(ModelSource::resolve).transpose()?,
        };
        match model {
            Some(m @ ModelSource::Dir(_)) => Ok(m),
            Some(ModelSource::Gguf(p)) => bail!(
                "{}: tokenizing needs a model folder with tokenizer.json; a GGUF file's tokenizer is not supported",
                p.display()
            ),
            None => bail!("tokenizing needs --model MODEL_DIR (a folder with tokenizer.json)"),
        }
    }
}

impl Plan {
    /// Where the template came from (the `template` object of `--json` output).
    pub fn info(&self, opts: &ApplyOptions) -> TemplateInfo {
        match self {
            Plan::Jinja(r) => r.info(opts),
            Plan::FastChat(conv) => TemplateInfo {
                kind: "fastchat",
                name: Some(conv.name.clone()),
                source: "builtin".to_string(),
            },
        }
    }
}

/// Checks `--template-name` against the names the template has.
fn check_template_name(template: &ChatTemplate, name: &str, model: Option<&str>) -> Result<()> {
    let names = template.names();
    if names.contains(&name) {
        return Ok(());
    }
    let what = model.unwrap_or("the template");
    if names.is_empty() {
        bail!(
            "--template-name {name}: {what} has a single unnamed chat template; --template-name selects among \
             the named templates of models that have several (default, tool_use, rag, ...)"
        );
    }
    bail!(
        "--template-name {name}: {what} has no template named '{name}'; available: {}",
        names.join(", ")
    )
}
