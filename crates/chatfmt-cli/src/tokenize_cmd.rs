//! `chatfmt tokenize`: the token ids (and assistant masks) a model's tokenizer makes of a rendered
//! conversation, as transformers' `apply_chat_template(tokenize=True, return_dict=True)`.

use crate::conversation_args::{read_json_file, read_messages, ConversationArgs};
use crate::mask_args::MaskArgs;
use crate::model_args::{ModelArgs, Plan};
use crate::render_cmd::{check_fastchat_masks, check_fastchat_options, fastchat_spans, render_fastchat};
use anyhow::{anyhow, bail, Result};
use chatfmt::json_input::Root;
use chatfmt::ApplyOptions;
use chatfmt::{ChatSpans, MaskSource};
use chatfmt_tokenize::chat::{message_spans, message_token_spans, tokenize_chats, ChatTokenizeOptions};
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions, Encoded, Text};
use clap::Args;
use serde_json::{json, Value as Json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options of `chatfmt tokenize`.
#[derive(Args)]
pub struct TokenizeArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    conversation: ConversationArgs,
    #[command(flatten)]
    masks: MaskArgs,
    /// Also print `assistant_masks` (1 for tokens of assistant spans; see --masks).
    #[arg(long)]
    assistant_masks: bool,
    /// Keep only the first N tokens (transformers' `truncation=True, max_length=N`).
    #[arg(long, value_name = "N")]
    max_length: Option<usize>,
    /// Print one token per line (index, id, mask, text) instead of JSON.
    #[arg(long, conflicts_with = "json")]
    show: bool,
    /// Print one JSON object: `input_ids`, `attention_mask`, `assistant_masks`, `template`, `masks`,
    /// `assistant_spans` and `message_spans` (with `turn_tokens` and `content_tokens`).
    #[arg(long)]
    json: bool,
    /// The ids of an earlier, shorter prompt of this conversation (a JSON array, or an earlier
    /// `--json` output): reuse them where encoding the whole prompt gives the same ids, and add
    /// `reused`, `reencoded_from` and `reason` to the output.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["assistant_masks", "show", "max_length", "masks"])]
    prefix_ids: Option<PathBuf>,
}

/// Runs `chatfmt tokenize`.
pub fn run(args: TokenizeArgs) -> Result<()> {
    let plan = args.model.plan()?;
    let model = args.model.tokenizer_model(&plan)?;
    let dir = model.tokenizer_dir().ok_or_else(|| anyhow!("no tokenizer folder"))?;
    let tokenizer = ChatTokenizer::from_model_dir(dir)?;
    if let Some(path) = args.prefix_ids.clone() {
        return extend(args, &plan, &tokenizer, &path);
    }
    let masks = args.assistant_masks || args.show || args.json;
    let encode = EncodeOptions {
        truncation: args.max_length.is_some(),
        max_length: args.max_length,
        assistant_masks: masks,
        ..EncodeOptions::default()
    };
    let (enc, info) = match &plan {
        Plan::FastChat(conv) => {
            check_fastchat_options(&args.conversation)?;
            check_fastchat_masks(&args.masks)?;
            let input = read_messages(&args.conversation.messages)?;
            let spans = fastchat_spans(conv.clone(), &input.messages, args.conversation.add_generation_prompt)?;
            let wanted = if args.json {
                message_token_spans(&spans)
            } else {
                Vec::new()
            };
            let text = [Text {
                text: &spans.rendered.text,
                generation_spans: &spans.assistant_spans,
                token_spans: &wanted,
            }];
            let enc = tokenizer.encode_batch(&text, &encode)?.pop();
            if masks {
                check_masks(&spans, &input.messages, enc.as_ref())?;
            }
            (enc.map(|e| (e, Some(spans))), plan.info(&ApplyOptions::default()))
        }
        Plan::Jinja(resolved) => {
            // Templates see the tokenizer's special tokens, as transformers passes them; the
            // --bos-token / --eos-token replacements and then --var win over them.
            let mut kwargs = tokenizer.special_tokens().clone();
            kwargs.extend(args.model.special_tokens());
            let (messages, apply) = args.conversation.read(kwargs, args.model.template_name.clone())?;
            let spans = if masks || args.masks.masks.is_some() {
                Some(args.masks.span_options(resolved, &apply, args.json)?)
            } else {
                None
            };
            let opts = ChatTokenizeOptions {
                encode,
                sanitize_control_tokens: None,
                spans,
            };
            let chat = tokenize_chats(&resolved.template, &tokenizer, &[&messages], &apply, &opts)?.pop();
            if let Some(spans) = chat.as_ref().and_then(|c| c.spans.as_ref()) {
                check_masks(spans, &messages, chat.as_ref().map(|c| &c.encoded))?;
            }
            (chat.map(|c| (c.encoded, c.spans)), plan.info(&apply))
        }
    };
    let (enc, spans): (Encoded, Option<ChatSpans>) = enc.ok_or_else(|| anyhow!("no conversation was tokenized"))?;
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
    if args.assistant_masks || (args.json && enc.assistant_masks.is_some()) {
        result["assistant_masks"] = json!(enc.assistant_masks);
    }
    if args.json {
        result["template"] = json!(info);
        if let Some(spans) = &spans {
            // The spans are offsets into the rendered text: it is part of the answer.
            result["text"] = json!(spans.rendered.text);
            for (key, value) in spans.to_json() {
                result[key] = value;
            }
            let text = chatfmt::jinja::CodePoints::new(&spans.rendered.text);
            result["message_spans"] = json!(message_spans(spans, &enc, &text));
        }
    }
    crate::output::emit(&format!("{result}\n"));
    Ok(())
}

/// `--prefix-ids`: the ids of the whole prompt, reusing the earlier ids where that is exact.
fn extend(args: TokenizeArgs, plan: &Plan, tokenizer: &ChatTokenizer, path: &Path) -> Result<()> {
    let previous = read_ids(path)?;
    let (text, info) = match plan {
        Plan::FastChat(conv) => {
            check_fastchat_options(&args.conversation)?;
            let input = read_messages(&args.conversation.messages)?;
            let text = render_fastchat(conv.clone(), &input.messages, args.conversation.add_generation_prompt)?;
            (text, plan.info(&ApplyOptions::default()))
        }
        Plan::Jinja(resolved) => {
            let mut kwargs = tokenizer.special_tokens().clone();
            kwargs.extend(args.model.special_tokens());
            let (messages, apply) = args.conversation.read(kwargs, args.model.template_name.clone())?;
            let text = resolved.template.apply(&messages, &apply)?.text;
            (text, plan.info(&apply))
        }
    };
    let extended = tokenizer.extend_encoding(&previous, &text)?;
    let mut result = json!({
        "input_ids": extended.ids,
        "attention_mask": vec![1u8; extended.ids.len()],
        "reused": extended.reused,
        "reencoded_from": extended.reencoded_from,
        "reason": extended.reason,
    });
    if args.json {
        result["template"] = json!(info);
    }
    crate::output::emit(&format!("{result}\n"));
    Ok(())
}

/// The ids of a `--prefix-ids` file: a JSON array of ids, or an object with `input_ids`.
fn read_ids(path: &Path) -> Result<Vec<u32>> {
    let value = read_json_file(path, Root::File("prefix-ids"))?;
    let ids = match &value {
        Json::Object(obj) => obj.get("input_ids").unwrap_or(&Json::Null),
        other => other,
    };
    let bad = || {
        anyhow!(
            "{}: expected a JSON array of token ids, or an object with \"input_ids\" (the output of `chatfmt \
             tokenize --json`)",
            path.display()
        )
    };
    ids.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|id| id.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(bad))
        .collect()
}

/// Refuses a conversation whose assistant messages got no span (a silent all-zero mask), and warns
/// when only truncation removed every assistant token.
fn check_masks(spans: &ChatSpans, messages: &[serde_json::Value], encoded: Option<&Encoded>) -> Result<()> {
    if spans.assistant_mask_is_empty(messages) {
        let hint = match spans.source {
            MaskSource::Tags => "try --masks provenance, or --stop-token TOKEN",
            _ => "check that the template prints the assistant messages, or name their end with --stop-token TOKEN",
        };
        bail!(
            "the conversation has assistant messages but no assistant span was found ({} masks): the \
             assistant mask would be all zeros; {hint}",
            spans.source.name()
        );
    }
    let masked = encoded.and_then(|e| e.assistant_masks.as_ref()).map(|m| m.contains(&1));
    if !spans.assistant_spans.is_empty() && masked == Some(false) {
        eprintln!("warning: --max-length removed every assistant token; the assistant mask is all zeros");
    }
    Ok(())
}
