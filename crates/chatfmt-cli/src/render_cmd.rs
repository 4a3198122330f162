//! `chatfmt render`: prints exactly the prompt a model's chat template makes of a conversation.

use crate::conversation_args::{read_messages, ConversationArgs};
use anyhow::{anyhow, bail, Context as _, Result};
use chatfmt::conversation::{self, Conversation};
use chatfmt::template::{gguf_special_tokens, is_gguf, is_repo_id, model_dir_special_tokens};
use chatfmt::{defaults, ChatTemplate, HubCache, LoadErrorKind};
use clap::Args;
use serde_json::{Map, Value as Json};
use std::io::Write;
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
    #[command(flatten)]
    conversation: ConversationArgs,
    /// Override the BOS token.
    #[arg(long)]
    bos_token: Option<String>,
    /// Override the EOS token.
    #[arg(long)]
    eos_token: Option<String>,
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
                &read_messages(&args.conversation.messages)?.messages,
                args.conversation.add_generation_prompt,
            )
        }
        Plan::Jinja(t) => t,
    };
    if let Some(name) = &args.conversation.template_name {
        check_template_name(&template, name, args.model.as_deref())?;
    }
    let mut overrides = Map::new();
    for (key, value) in [("bos_token", &args.bos_token), ("eos_token", &args.eos_token)] {
        if let Some(v) = value {
            overrides.insert(key.to_string(), Json::String(v.clone()));
        }
    }
    let (messages, opts) = args.conversation.read(overrides)?;
    let rendered = template.apply(&messages, &opts).map_err(|e| anyhow!("{e:#}"))?;
    let mut out = std::io::stdout().lock();
    out.write_all(rendered.text.as_bytes())?;
    out.flush()?;
    Ok(())
}
