//! `chatfmt render`: prints exactly the prompt a model's chat template makes of a conversation.

use anyhow::{anyhow, bail, Context as _, Result};
use chatfmt::{conversation, ApplyOptions, ChatTemplate};
use chatfmt_jinja::Clock;
use clap::Args;
use serde_json::{Map, Value as Json};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Options of `chatfmt render`.
#[derive(Args)]
pub struct RenderArgs {
    /// A model folder (tokenizer_config.json, chat_template.jinja, ...).
    #[arg(long, conflicts_with = "template")]
    model: Option<PathBuf>,
    /// A template file (Jinja source).
    #[arg(long)]
    template: Option<PathBuf>,
    /// A FastChat conversation template by name (see `chatfmt templates list`).
    #[arg(long, conflicts_with_all = ["model", "template"])]
    conv_template: Option<String>,
    /// Messages: a JSON array, or an object with `messages` (and `tools`, `documents`); `-` for stdin.
    #[arg(long)]
    messages: String,
    /// Tool schemas (JSON array).
    #[arg(long)]
    tools: Option<PathBuf>,
    /// Documents (JSON array).
    #[arg(long)]
    documents: Option<PathBuf>,
    /// Append the header that starts the assistant's turn.
    #[arg(long)]
    add_generation_prompt: bool,
    /// Leave the final message open for the model to continue (optionally naming the field).
    #[arg(long, num_args = 0..=1, default_missing_value = "content")]
    continue_final_message: Option<String>,
    /// Parse tool-call `arguments` given as JSON strings into objects (as vLLM does).
    #[arg(long)]
    parse_tool_arguments: bool,
    /// A named template of the model (`default`, `tool_use`, `rag`, ...).
    #[arg(long)]
    template_name: Option<String>,
    /// An extra template variable, KEY=JSON (repeatable).
    #[arg(long = "var", value_name = "KEY=JSON")]
    vars: Vec<String>,
    /// Override the BOS token.
    #[arg(long)]
    bos_token: Option<String>,
    /// Override the EOS token.
    #[arg(long)]
    eos_token: Option<String>,
    /// The time `strftime_now` sees (naive local ISO-8601, e.g. 2025-07-10T12:00:00).
    #[arg(long)]
    now: Option<String>,
}

fn read_input(name: &str) -> Result<String> {
    if name == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading messages from stdin")?;
        return Ok(s);
    }
    std::fs::read_to_string(name).with_context(|| format!("reading {name}"))
}

fn parse_json(text: &str, origin: &str) -> Result<Json> {
    serde_json::from_str(text).map_err(|e| {
        anyhow!(
            "{origin}: malformed JSON at line {}, column {}: {e}",
            e.line(),
            e.column()
        )
    })
}

fn read_json_file(path: &Path) -> Result<Json> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse_json(&text, &path.display().to_string())
}

/// Reads `--messages`: a JSON array of messages, or an object with `messages` (+ `tools`, `documents`).
fn read_messages(name: &str) -> Result<(Vec<Json>, Option<Json>, Option<Json>)> {
    let origin = if name == "-" { "<stdin>" } else { name };
    match parse_json(&read_input(name)?, origin)? {
        Json::Array(m) => Ok((m, None, None)),
        Json::Object(mut o) => match o.remove("messages") {
            Some(Json::Array(m)) => Ok((m, o.remove("tools"), o.remove("documents"))),
            _ => bail!("{origin}: expected a JSON array of messages or an object with a \"messages\" array"),
        },
        _ => bail!("{origin}: expected a JSON array of messages or an object with a \"messages\" array"),
    }
}

/// Turns tool-call `arguments` strings into objects, naming the message on failure.
fn parse_tool_arguments(messages: &mut [Json], origin: &str) -> Result<()> {
    for (i, m) in messages.iter_mut().enumerate() {
        let Some(calls) = m.get_mut("tool_calls").and_then(Json::as_array_mut) else {
            continue;
        };
        for (j, call) in calls.iter_mut().enumerate() {
            let Some(args) = call.get_mut("function").and_then(|f| f.get_mut("arguments")) else {
                continue;
            };
            if let Json::String(s) = args {
                let parsed = parse_json(
                    s,
                    &format!("{origin}: messages[{i}].tool_calls[{j}].function.arguments"),
                )?;
                *args = parsed;
            }
        }
    }
    Ok(())
}

/// Renders with a FastChat conversation template: messages appended in order, a system message
/// sets the system message, the generation prompt appends the empty assistant turn.
fn render_fastchat(template: conversation::Conversation, messages: &[Json], add_generation_prompt: bool) -> Result<()> {
    let msgs: Vec<conversation::ChatMessage> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| serde_json::from_value(m.clone()).map_err(|e| anyhow!("messages[{i}]: {e}")))
        .collect::<Result<_>>()?;
    let conv = conversation::conversation_from_openai_messages(template, &msgs, add_generation_prompt)
        .map_err(|e| anyhow!("{e}"))?;
    let prompt = conv.get_prompt().map_err(|e| anyhow!("{e}"))?;
    let mut out = std::io::stdout().lock();
    out.write_all(prompt.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Whether `path` is a model folder with a Jinja chat template.
fn has_jinja_template(path: &Path) -> bool {
    path.is_dir() && ChatTemplate::from_model_dir(path).is_ok()
}

/// Runs `chatfmt render`.
pub fn run(args: RenderArgs) -> Result<()> {
    if let Some(name) = &args.conv_template {
        let template = conversation::get_conv_template(name).map_err(|e| anyhow!("{e}"))?;
        return render_fastchat(template, &read_messages(&args.messages)?.0, args.add_generation_prompt);
    }
    if let Some(model) = args.model.as_ref().filter(|m| !has_jinja_template(m)) {
        let path = model.to_string_lossy();
        let template = conversation::get_conversation_template(&path).map_err(|e| anyhow!("{e}"))?;
        eprintln!(
            "note: {} has no Jinja chat template; using FastChat template '{}' chosen by model-path matching",
            model.display(),
            template.name
        );
        return render_fastchat(template, &read_messages(&args.messages)?.0, args.add_generation_prompt);
    }
    let template = match (&args.model, &args.template) {
        (Some(dir), _) => ChatTemplate::from_model_dir(dir)?,
        (None, Some(file)) => {
            let src = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
            ChatTemplate::new(&src, Map::new())
        }
        (None, None) => bail!("give --model DIR or --template FILE"),
    };
    let origin = if args.messages == "-" {
        "<stdin>".to_string()
    } else {
        args.messages.clone()
    };
    let input = parse_json(&read_input(&args.messages)?, &origin)?;
    let (mut messages, mut tools, mut documents) = match input {
        Json::Array(m) => (m, None, None),
        Json::Object(mut o) => {
            let Some(Json::Array(m)) = o.remove("messages") else {
                bail!("{origin}: expected a JSON array of messages or an object with a \"messages\" array");
            };
            (m, o.remove("tools"), o.remove("documents"))
        }
        _ => bail!("{origin}: expected a JSON array of messages or an object with a \"messages\" array"),
    };
    if let Some((i, m)) = messages.iter().enumerate().find(|(_, m)| !m.is_object()) {
        bail!("{origin}: messages[{i}]: expected a message object such as {{\"role\": \"user\", \"content\": \"...\"}}, got {m}");
    }
    if let Some(p) = &args.tools {
        tools = Some(read_json_file(p)?);
    }
    if let Some(p) = &args.documents {
        documents = Some(read_json_file(p)?);
    }
    if args.parse_tool_arguments {
        parse_tool_arguments(&mut messages, &origin)?;
    }
    let mut kwargs = Map::new();
    for (key, value) in [("bos_token", &args.bos_token), ("eos_token", &args.eos_token)] {
        if let Some(v) = value {
            kwargs.insert(key.to_string(), Json::String(v.clone()));
        }
    }
    for var in &args.vars {
        let (k, v) = var
            .split_once('=')
            .ok_or_else(|| anyhow!("--var {var}: expected KEY=JSON"))?;
        kwargs.insert(k.to_string(), parse_json(v, &format!("--var {k}"))?);
    }
    let opts = ApplyOptions {
        add_generation_prompt: args.add_generation_prompt,
        continue_final_message: args.continue_final_message,
        tools: tools.filter(|t| !t.is_null()),
        documents: documents.filter(|d| !d.is_null()),
        chat_template: args.template_name,
        kwargs,
        clock: args.now.map(Clock::Fixed).unwrap_or_default(),
        track_spans: false,
    };
    let rendered = template.apply(&messages, &opts).map_err(|e| anyhow!("{e:#}"))?;
    let mut out = std::io::stdout().lock();
    out.write_all(rendered.text.as_bytes())?;
    out.flush()?;
    Ok(())
}
