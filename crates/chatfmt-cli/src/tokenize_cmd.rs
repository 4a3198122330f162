//! `chatfmt tokenize`: the token ids (and assistant masks) a model's tokenizer makes of a rendered
//! conversation, as transformers' `apply_chat_template(tokenize=True, return_dict=True)`.

use crate::render_cmd::{parse_tool_arguments, read_json_file, read_messages};
use anyhow::{anyhow, Context as _, Result};
use chatfmt::json_input::{self, Root};
use chatfmt::{ApplyOptions, ChatTemplate};
use chatfmt_jinja::Clock;
use chatfmt_tokenize::chat::{tokenize_chats, ChatTokenizeOptions};
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions};
use clap::Args;
use serde_json::{json, Map, Value as Json};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Options of `chatfmt tokenize`.
#[derive(Args)]
pub struct TokenizeArgs {
    /// A model folder with tokenizer.json and tokenizer_config.json (and the chat template).
    #[arg(long)]
    model: PathBuf,
    /// A template file (Jinja source) instead of the model's own template.
    #[arg(long)]
    template: Option<PathBuf>,
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
    /// The time `strftime_now` sees (naive local ISO-8601, e.g. 2025-07-10T12:00:00).
    #[arg(long)]
    now: Option<String>,
    /// Also print `assistant_masks` (1 for tokens inside `{% generation %}` blocks).
    #[arg(long)]
    assistant_masks: bool,
    /// Keep only the first N tokens (transformers' `truncation=True, max_length=N`).
    #[arg(long, value_name = "N")]
    max_length: Option<usize>,
    /// Print one token per line (index, id, mask, text) instead of JSON.
    #[arg(long)]
    show: bool,
}

/// Runs `chatfmt tokenize`.
pub fn run(args: TokenizeArgs) -> Result<()> {
    let tokenizer = ChatTokenizer::from_model_dir(&args.model)?;
    let template = match &args.template {
        Some(file) => {
            let src = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
            ChatTemplate::new(&src, tokenizer.special_tokens().clone())
        }
        None => ChatTemplate::from_model_dir(&args.model)?,
    };
    let input = read_messages(&args.messages)?;
    let (origin, mut messages, mut tools, mut documents) = (input.origin, input.messages, input.tools, input.documents);
    if let Some(p) = &args.tools {
        tools = Some(read_json_file(p, Root::File("tools"))?);
    }
    if let Some(p) = &args.documents {
        documents = Some(read_json_file(p, Root::File("documents"))?);
    }
    if args.parse_tool_arguments {
        parse_tool_arguments(&mut messages, &origin)?;
    }
    // Templates see the tokenizer's special tokens, as transformers passes them; --var wins.
    let mut kwargs: Map<String, Json> = tokenizer.special_tokens().clone();
    for var in &args.vars {
        let (k, v) = var
            .split_once('=')
            .ok_or_else(|| anyhow!("--var {var}: expected KEY=JSON"))?;
        kwargs.insert(
            k.to_string(),
            json_input::parse(v, &format!("--var {k}"), Root::Value(k))?,
        );
    }
    let apply = ApplyOptions {
        add_generation_prompt: args.add_generation_prompt,
        continue_final_message: args.continue_final_message,
        tools: tools.filter(|t| !t.is_null()),
        documents: documents.filter(|d| !d.is_null()),
        chat_template: args.template_name,
        kwargs,
        clock: args.now.map(Clock::Fixed).unwrap_or_default(),
        track_spans: false,
    };
    let opts = ChatTokenizeOptions {
        encode: EncodeOptions {
            truncation: args.max_length.is_some(),
            max_length: args.max_length,
            assistant_masks: args.assistant_masks || args.show,
            ..EncodeOptions::default()
        },
        sanitize_control_tokens: None,
    };
    let chat = tokenize_chats(&template, &tokenizer, &[&messages], &apply, &opts)?
        .pop()
        .ok_or_else(|| anyhow!("no conversation was tokenized"))?;
    let enc = chat.encoded;
    if args.show {
        let masks = enc.assistant_masks.unwrap_or_default();
        let mut out = String::new();
        for (i, id) in enc.input_ids.iter().enumerate() {
            let mark = if masks.get(i) == Some(&1) { "A" } else { "." };
            let text = tokenizer.decode(&[*id])?;
            let _ = writeln!(out, "{i:>6} {id:>8} {mark} {text:?}");
        }
        let _ = writeln!(out, "# {} tokens; A = assistant_masks 1", enc.input_ids.len());
        crate::output::emit(&out);
        return Ok(());
    }
    let mut result = json!({"input_ids": enc.input_ids, "attention_mask": enc.attention_mask});
    if args.assistant_masks {
        result["assistant_masks"] = json!(enc.assistant_masks);
    }
    crate::output::emit(&format!("{result}\n"));
    Ok(())
}
