//! The conversation arguments `render` and `tokenize` share: messages (from a file or stdin), tools,
//! documents, template variables and the options of transformers' `apply_chat_template`.

use anyhow::{anyhow, bail, Context as _, Result};
use chatfmt::json_input::{self, Root};
use chatfmt::ApplyOptions;
use chatfmt_jinja::Clock;
use clap::Args;
use serde_json::{Map, Value as Json};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The conversation to render and how (flattened into `render` and `tokenize`).
#[derive(Args)]
pub struct ConversationArgs {
    /// Messages: a JSON array, or an object with `messages` (and `tools`, `documents`); `-` for stdin.
    #[arg(long)]
    pub(crate) messages: String,
    /// Tool schemas (JSON array).
    #[arg(long)]
    tools: Option<PathBuf>,
    /// Documents (JSON array).
    #[arg(long)]
    documents: Option<PathBuf>,
    /// Append the header that starts the assistant's turn.
    #[arg(long)]
    pub(crate) add_generation_prompt: bool,
    /// Leave the final message open for the model to continue (optionally naming the field).
    #[arg(long, num_args = 0..=1, default_missing_value = "content")]
    continue_final_message: Option<String>,
    /// Parse tool-call `arguments` given as JSON strings into objects (as vLLM does).
    #[arg(long)]
    parse_tool_arguments: bool,
    /// An extra template variable, KEY=JSON (repeatable).
    #[arg(long = "var", value_name = "KEY=JSON")]
    vars: Vec<String>,
    /// The time `strftime_now` sees (naive local ISO-8601, e.g. 2025-07-10T12:00:00).
    #[arg(long)]
    now: Option<String>,
}

impl ConversationArgs {
    /// The first option a FastChat conversation template cannot honour, if any is given.
    pub(crate) fn fastchat_conflict(&self) -> Option<&'static str> {
        [
            ("--tools", self.tools.is_some()),
            ("--documents", self.documents.is_some()),
            ("--continue-final-message", self.continue_final_message.is_some()),
            ("--var", !self.vars.is_empty()),
            ("--now", self.now.is_some()),
        ]
        .into_iter()
        .find_map(|(name, given)| given.then_some(name))
    }

    /// Reads the messages, tools and documents and builds the options; `kwargs` are the template
    /// variables before `--var` (which wins over them), `template_name` the named template asked for.
    pub(crate) fn read(
        self,
        mut kwargs: Map<String, Json>,
        template_name: Option<String>,
    ) -> Result<(Vec<Json>, ApplyOptions)> {
        let Input {
            origin,
            mut messages,
            mut tools,
            mut documents,
        } = read_messages(&self.messages)?;
        if let Some(p) = &self.tools {
            tools = Some(read_json_file(p, Root::File("tools"))?);
        }
        if let Some(p) = &self.documents {
            documents = Some(read_json_file(p, Root::File("documents"))?);
        }
        if self.parse_tool_arguments {
            parse_tool_arguments(&mut messages, &origin)?;
        }
        for var in &self.vars {
            let (k, v) = var
                .split_once('=')
                .ok_or_else(|| anyhow!("--var {var}: expected KEY=JSON"))?;
            if let Some(instead) = argument_flag(k) {
                bail!(
                    "--var {k}: `{k}` is an argument of transformers' apply_chat_template, not a template \
                     variable, so the template would not see this value: use {instead}"
                );
            }
            kwargs.insert(
                k.to_string(),
                json_input::parse(v, &format!("--var {k}"), Root::Value(k))?,
            );
        }
        let clock = match &self.now {
            Some(iso) => Clock::fixed(iso).map_err(|e| {
                anyhow!(
                    "--now {iso:?}: {} (give a naive local time in ISO-8601, e.g. 2025-07-10T12:00:00)",
                    e.message()
                )
            })?,
            None => Clock::default(),
        };
        let opts = ApplyOptions {
            add_generation_prompt: self.add_generation_prompt,
            continue_final_message: self.continue_final_message,
            tools: tools.filter(|t| !t.is_null()),
            documents: documents.filter(|d| !d.is_null()),
            chat_template: template_name,
            kwargs,
            clock,
            track_spans: false,
            in_batch: false,
        };
        Ok((messages, opts))
    }
}

pub(crate) fn read_input(name: &str) -> Result<String> {
    if name == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading messages from stdin")?;
        return Ok(s);
    }
    std::fs::read_to_string(name).with_context(|| format!("reading {name}"))
}

pub(crate) fn read_json_file(path: &Path, root: Root) -> Result<Json> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(json_input::parse(&text, &path.display().to_string(), root)?)
}

/// The conversation of `--messages`.
pub(crate) struct Input {
    /// Where it was read from (a file name or `<stdin>`), for error messages.
    pub(crate) origin: String,
    pub(crate) messages: Vec<Json>,
    pub(crate) tools: Option<Json>,
    pub(crate) documents: Option<Json>,
}

fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// Reads `--messages`: a JSON array of messages, or an object with `messages` (+ `tools`,
/// `documents`). Only the JSON syntax and this top-level shape are checked here; the messages
/// themselves go to the template as they are, as transformers passes them (each must be an object,
/// as transformers requires).
pub(crate) fn read_messages(name: &str) -> Result<Input> {
    let input = read_conversation(name)?;
    if let Some((i, m)) = input.messages.iter().enumerate().find(|(_, m)| !m.is_object()) {
        bail!(
            "{}: messages[{i}]: expected a message object such as {{\"role\": \"user\", \"content\": \"...\"}}, got {m}",
            input.origin
        );
    }
    Ok(input)
}

fn read_conversation(name: &str) -> Result<Input> {
    let origin = if name == "-" { "<stdin>" } else { name }.to_string();
    let expected = "expected a JSON array of messages or an object with a \"messages\" array";
    match json_input::parse(&read_input(name)?, &origin, Root::File("messages"))? {
        Json::Array(messages) => Ok(Input {
            origin,
            messages,
            tools: None,
            documents: None,
        }),
        Json::Object(mut o) => match o.remove("messages") {
            Some(Json::Array(messages)) => Ok(Input {
                origin,
                messages,
                tools: o.remove("tools"),
                documents: o.remove("documents"),
            }),
            Some(other) => bail!("{origin}: \"messages\" is {}; {expected}", json_kind(&other)),
            None => bail!("{origin}: the object has no \"messages\" key; {expected}"),
        },
        other => bail!("{origin}: the top level is {}; {expected}", json_kind(&other)),
    }
}

/// What to use instead of `--var NAME=...` when `NAME` is one of the arguments of transformers'
/// `apply_chat_template` (which binds a keyword of that name to the argument, never passing it to
/// the template as a variable), or `None` for a template variable.
fn argument_flag(name: &str) -> Option<&'static str> {
    Some(match name {
        "messages" | "conversation" => "--messages FILE",
        "tools" => "--tools FILE",
        "documents" => "--documents FILE",
        "add_generation_prompt" => "--add-generation-prompt",
        "continue_final_message" => "--continue-final-message [FIELD]",
        "chat_template" => "--template FILE or --template-name NAME",
        "tokenize"
        | "return_dict"
        | "padding"
        | "truncation"
        | "max_length"
        | "return_tensors"
        | "return_assistant_tokens_mask"
        | "tokenizer_kwargs"
        | "sanitize_control_tokens" => "the options of `chatfmt tokenize` (see chatfmt tokenize --help)",
        _ => return None,
    })
}

/// Turns tool-call `arguments` strings into objects, naming the message on failure.
pub(crate) fn parse_tool_arguments(messages: &mut [Json], origin: &str) -> Result<()> {
    for (i, m) in messages.iter_mut().enumerate() {
        let Some(calls) = m.get_mut("tool_calls").and_then(Json::as_array_mut) else {
            continue;
        };
        for (j, call) in calls.iter_mut().enumerate() {
            let Some(args) = call.get_mut("function").and_then(|f| f.get_mut("arguments")) else {
                continue;
            };
            if let Json::String(s) = args {
                let place = format!("{origin}: messages[{i}].tool_calls[{j}].function.arguments (a JSON string)");
                *args = json_input::parse(s, &place, Root::Value("arguments"))?;
            }
        }
    }
    Ok(())
}
