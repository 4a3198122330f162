//! `chatfmt tokenize`: the token ids (and assistant masks) a model's tokenizer makes of a rendered
//! conversation, as transformers' `apply_chat_template(tokenize=True, return_dict=True)`.

use crate::conversation_args::ConversationArgs;
use anyhow::{anyhow, Context as _, Result};
use chatfmt::ChatTemplate;
use chatfmt_tokenize::chat::{tokenize_chats, ChatTokenizeOptions};
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions};
use clap::Args;
use serde_json::json;
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
    #[command(flatten)]
    conversation: ConversationArgs,
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
    // Templates see the tokenizer's special tokens, as transformers passes them; --var wins.
    let (messages, apply) = args.conversation.read(tokenizer.special_tokens().clone())?;
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
