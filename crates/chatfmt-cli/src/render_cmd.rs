//! `chatfmt render`: prints exactly the prompt a model's chat template makes of a conversation.

use crate::conversation_args::{read_messages, ConversationArgs};
use crate::mask_args::{MaskArgs, MaskMode};
use crate::model_args::{ModelArgs, Plan};
use crate::output::emit;
use anyhow::{anyhow, bail, Result};
use chatfmt::jinja::Rendered;
use chatfmt::{ChatSpans, MaskSource, MessageSpan};
use chatfmt_fastchat::{self as conversation, Conversation};
use clap::Args;
use serde_json::{json, Value as Json};

/// Options of `chatfmt render`.
#[derive(Args)]
pub struct RenderArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    conversation: ConversationArgs,
    #[command(flatten)]
    masks: MaskArgs,
    /// Print one JSON object: `text`, `template` (`kind`, `name`, `source`), `masks`,
    /// `assistant_spans` and `message_spans`.
    #[arg(long)]
    json: bool,
}

/// Renders with a FastChat conversation template: messages appended in order, a system message
/// sets the system message, the generation prompt appends the empty assistant turn.
pub(crate) fn render_fastchat(
    template: Conversation,
    messages: &[Json],
    add_generation_prompt: bool,
) -> Result<String> {
    let msgs: Vec<conversation::ChatMessage> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| serde_json::from_value(m.clone()).map_err(|e| anyhow!("messages[{i}]: {e}")))
        .collect::<Result<_>>()?;
    let conv = conversation::conversation_from_openai_messages(template, &msgs, add_generation_prompt)
        .map_err(|e| anyhow!("{e}"))?;
    conv.get_prompt().map_err(|e| anyhow!("{e}"))
}

/// Renders with a FastChat conversation template as [`render_fastchat`] does, with the spans of
/// `render --json`: each message's turn is its role prefix, text and separator in the prompt, its
/// content the text; an assistant span runs from the text to the end of the turn.
pub(crate) fn fastchat_spans(
    template: Conversation,
    messages: &[Json],
    add_generation_prompt: bool,
) -> Result<ChatSpans> {
    let msgs: Vec<conversation::ChatMessage> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| serde_json::from_value(m.clone()).map_err(|e| anyhow!("messages[{i}]: {e}")))
        .collect::<Result<_>>()?;
    let prompt =
        conversation::openai_messages_prompt(template, &msgs, add_generation_prompt).map_err(|e| anyhow!("{e}"))?;
    let mut assistant_spans = Vec::new();
    let mut spans = Vec::with_capacity(msgs.len());
    for (index, (m, seg)) in msgs.iter().zip(&prompt.messages).enumerate() {
        let content = seg.and_then(|s| s.content);
        if let (Some(seg), Some(c), "assistant") = (seg, content, m.role.as_str()) {
            assistant_spans.push((c.0, seg.turn.1));
        }
        spans.push(MessageSpan {
            index,
            role: Some(m.role.clone()),
            turn: seg.map(|s| s.turn).filter(|(s, e)| s < e),
            content: content.into_iter().collect(),
        });
    }
    Ok(ChatSpans {
        rendered: Rendered {
            text: prompt.text,
            ..Rendered::default()
        },
        source: MaskSource::Provenance,
        assistant_spans,
        messages: spans,
    })
}

/// Refuses mask flags a FastChat template cannot honour: it has no generation blocks, and its turns
/// end with its separators.
pub(crate) fn check_fastchat_masks(masks: &MaskArgs) -> Result<()> {
    if masks.masks == Some(MaskMode::Tags) {
        bail!("--masks tags: a FastChat template has no {{% generation %}} blocks; use --masks provenance");
    }
    if !masks.stop_tokens.is_empty() {
        bail!(
            "--stop-token cannot be used with a FastChat template (--conv-template): its turns end with its separators"
        );
    }
    Ok(())
}

/// Refuses conversation options a FastChat template cannot honour.
pub(crate) fn check_fastchat_options(conversation: &ConversationArgs) -> Result<()> {
    if let Some(option) = conversation.fastchat_conflict() {
        bail!("{option} cannot be used with a FastChat conversation template (--conv-template); use a Jinja template");
    }
    Ok(())
}

/// Runs `chatfmt render`.
pub fn run(args: RenderArgs) -> Result<()> {
    let plan = args.model.plan()?;
    let mut spans = Json::Null;
    let (text, info) = match &plan {
        Plan::FastChat(conv) => {
            check_fastchat_options(&args.conversation)?;
            check_fastchat_masks(&args.masks)?;
            let input = read_messages(&args.conversation.messages)?;
            for (key, value) in [("tools", &input.tools), ("documents", &input.documents)] {
                if value.as_ref().is_some_and(|v| !v.is_null()) {
                    bail!(
                        "{}: \"{key}\" cannot be used with a FastChat conversation template (--conv-template)",
                        input.origin
                    );
                }
            }
            let agp = args.conversation.add_generation_prompt;
            let text = if args.json {
                let out = fastchat_spans(conv.clone(), &input.messages, agp)?;
                spans = Json::Object(out.to_json());
                out.rendered.text
            } else {
                render_fastchat(conv.clone(), &input.messages, agp)?
            };
            (text, plan.info(&Default::default()))
        }
        Plan::Jinja(resolved) => {
            let (messages, opts) = args
                .conversation
                .read(Default::default(), args.model.template_name.clone())?;
            if args.masks.masks.is_some() && !args.json {
                args.masks.span_options(resolved, &opts, false)?;
            }
            if args.json {
                let span_opts = args.masks.span_options(resolved, &opts, true)?;
                let out = resolved
                    .template
                    .apply_with_spans(&messages, &opts, &span_opts)
                    .map_err(|e| anyhow!("{e:#}"))?;
                spans = Json::Object(out.to_json());
                (out.rendered.text, plan.info(&opts))
            } else {
                let rendered = resolved
                    .template
                    .apply(&messages, &opts)
                    .map_err(|e| anyhow!("{e:#}"))?;
                (rendered.text, plan.info(&opts))
            }
        }
    };
    if args.json {
        let mut out = json!({"text": text, "template": info});
        if let (Json::Object(o), Json::Object(extra)) = (&mut out, spans) {
            o.extend(extra);
        }
        emit(&format!("{out}\n"));
    } else {
        emit(&text);
    }
    Ok(())
}
