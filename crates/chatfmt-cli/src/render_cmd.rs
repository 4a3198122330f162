//! `chatfmt render`: prints exactly the prompt a model's chat template makes of a conversation.

use anyhow::{anyhow, bail, Context as _, Result};
use chatfmt::conversation::{self, Conversation};
use chatfmt::json_input::{self, Root};
use chatfmt::template::{gguf_special_tokens, is_gguf, is_repo_id, model_dir_special_tokens};
use chatfmt::{defaults, ApplyOptions, ChatTemplate, HubCache, LoadErrorKind};
use chatfmt_jinja::Clock;
use clap::Args;
use serde_json::{Map, Value as Json};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Options of `chatfmt render`.
#[derive(Args)]
pub struct RenderArgs {
    /// A model: a folder (tokenizer_config.json, chat_template.jinja, ...), a .gguf file, or a Hub repo
    /// id (org/name) found in the local Hugging Face cache.
    #[arg(long, conflicts_with = "template")]
    model: Option<String>,
    /// A template file (Jinja source).
    #[arg(long)]
    template: Option<PathBuf>,
    /// A built-in template (chatml, llama, blenderbot, gpt2; see `chatfmt templates list`). With
    /// --model it replaces the model's template and keeps the model's special tokens.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["template", "conv_template"])]
    default_template: Option<String>,
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
    /// A named template of the model (`default`, `tool_use`, `rag`, ...); a name the model does not
    /// have is an error that lists the names it has.
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

/// Renders with a FastChat conversation template: messages appended in order, a system message
/// sets the system message, the generation prompt appends the empty assistant turn.
fn render_fastchat(template: Conversation, messages: &[Json], add_generation_prompt: bool) -> Result<()> {
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

/// What `--model` names, opened.
enum Located {
    /// A model folder (given, or a snapshot of the Hugging Face cache) with its chat template.
    Loaded(ChatTemplate),
    /// A model folder without a chat template (nor a single GGUF file standing for it).
    NoTemplate(PathBuf),
    /// A GGUF file, or a folder holding exactly one and no Jinja template.
    Gguf(PathBuf),
    /// Nothing local: the message says where it looked.
    Absent(String),
}

/// Opens a model folder: its template, else the one GGUF file it holds.
fn open_dir(dir: &Path) -> Result<Located> {
    match ChatTemplate::from_model_dir(dir) {
        Ok(t) => Ok(Located::Loaded(t)),
        Err(e) if e.kind == LoadErrorKind::NoTemplate => Ok(match only_gguf(dir)? {
            Some(file) => Located::Gguf(file),
            None => Located::NoTemplate(dir.to_path_buf()),
        }),
        Err(e) => Err(e.into()),
    }
}

/// Finds `--model`: a local folder or GGUF file, else a repository in the local Hugging Face cache.
fn locate(model: &str) -> Result<Located> {
    let path = Path::new(model);
    if path.is_dir() {
        return open_dir(path);
    }
    if path.is_file() {
        if is_gguf(path) {
            return Ok(Located::Gguf(path.to_path_buf()));
        }
        bail!(
            "{model}: a file that is not a GGUF; --model takes a model folder, a .gguf file or a Hub repo id \
             (for a Jinja template file use --template FILE)"
        );
    }
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf")) {
        bail!("{model}: no such GGUF file");
    }
    if !is_repo_id(model) {
        return Ok(Located::Absent(format!(
            "{model}: no such file or folder (and not a Hub repo id to look up in the Hugging Face cache)"
        )));
    }
    match HubCache::from_env().snapshot(model) {
        Ok(dir) => open_dir(&dir),
        Err(e) if e.kind == LoadErrorKind::NotFound => {
            Ok(Located::Absent(format!("{model}: not a local folder or file; {e}")))
        }
        Err(e) => Err(e.into()),
    }
}

/// How a conversation is rendered.
enum Plan {
    Jinja(ChatTemplate),
    FastChat(Conversation),
}

/// The FastChat template model-path matching picks for `model`, announced on stderr; `None` when
/// only FastChat's catch-all adapter matches.
fn fastchat_by_name(model: &str, why: &str) -> Result<Option<Conversation>> {
    let found = conversation::match_model(model);
    if found.adapter == "BaseModelAdapter" {
        return Ok(None);
    }
    let template = conversation::get_conversation_template(model).map_err(|e| anyhow!("{e}"))?;
    eprintln!(
        "note: {why}; using FastChat template '{}' chosen by model-path matching",
        template.name
    );
    Ok(Some(template))
}

/// Chooses the template from `--conv-template`, `--model`, `--template` and `--default-template`.
fn plan(args: &RenderArgs) -> Result<Plan> {
    if let Some(name) = &args.conv_template {
        return Ok(Plan::FastChat(
            conversation::get_conv_template(name).map_err(|e| anyhow!("{e}"))?,
        ));
    }
    let builtin = args.default_template.as_deref().map(defaults::get).transpose()?;
    let Some(model) = &args.model else {
        return match (builtin, &args.template) {
            (Some(d), _) => Ok(Plan::Jinja(d.chat_template())),
            (None, Some(file)) => {
                let src = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
                Ok(Plan::Jinja(ChatTemplate::new(&src, Map::new())))
            }
            (None, None) => bail!(
                "nothing to render with: give --model MODEL, --template FILE, --default-template NAME or --conv-template NAME"
            ),
        };
    };
    match (locate(model)?, builtin) {
        (Located::Loaded(t), None) => Ok(Plan::Jinja(t)),
        (Located::Loaded(t), Some(d)) => Ok(Plan::Jinja(ChatTemplate::new(d.source, t.special_tokens().clone()))),
        (Located::NoTemplate(dir), Some(d)) => Ok(Plan::Jinja(ChatTemplate::new(
            d.source,
            model_dir_special_tokens(&dir)?,
        ))),
        (Located::Gguf(file), Some(d)) => Ok(Plan::Jinja(ChatTemplate::new(d.source, gguf_special_tokens(&file)?))),
        (Located::Gguf(file), None) => Ok(Plan::Jinja(ChatTemplate::from_gguf(&file)?)),
        (Located::Absent(why), Some(_)) => bail!("{why}"),
        (Located::NoTemplate(dir), None) => {
            let why = format!("{} has no Jinja chat template", dir.display());
            match fastchat_by_name(model, &why)? {
                Some(conv) => Ok(Plan::FastChat(conv)),
                None => {
                    let template = conversation::get_conversation_template(model).map_err(|e| anyhow!("{e}"))?;
                    eprintln!(
                        "note: {why}; using FastChat's fallback template '{}' (no adapter matches the name; \
                         --default-template NAME picks a built-in Jinja template instead)",
                        template.name
                    );
                    Ok(Plan::FastChat(template))
                }
            }
        }
        (Located::Absent(why), None) => match fastchat_by_name(model, &format!("{model} is not a local model"))? {
            Some(conv) => Ok(Plan::FastChat(conv)),
            None => bail!("{why}; no FastChat adapter matches the name either (see `chatfmt templates match`)"),
        },
    }
}

/// The GGUF file of a folder without a Jinja template (a GGUF repository of the Hub holds only those):
/// `None` when it has none, an error listing them when it has several.
fn only_gguf(dir: &Path) -> Result<Option<PathBuf>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("gguf")))
        .collect();
    found.sort();
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => {
            let names: Vec<String> = found
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            bail!(
                "{} has no Jinja chat template but several GGUF files ({}); pass one of them with --model FILE",
                dir.display(),
                names.join(", ")
            )
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

/// Runs `chatfmt render`.
pub fn run(args: RenderArgs) -> Result<()> {
    let template = match plan(&args)? {
        Plan::FastChat(conv) => {
            return render_fastchat(
                conv,
                &read_messages(&args.messages)?.messages,
                args.add_generation_prompt,
            )
        }
        Plan::Jinja(t) => t,
    };
    if let Some(name) = &args.template_name {
        check_template_name(&template, name, args.model.as_deref())?;
    }
    let Input {
        origin,
        mut messages,
        mut tools,
        mut documents,
    } = read_messages(&args.messages)?;
    if let Some(p) = &args.tools {
        tools = Some(read_json_file(p, Root::File("tools"))?);
    }
    if let Some(p) = &args.documents {
        documents = Some(read_json_file(p, Root::File("documents"))?);
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
        kwargs.insert(
            k.to_string(),
            json_input::parse(v, &format!("--var {k}"), Root::Value(k))?,
        );
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
