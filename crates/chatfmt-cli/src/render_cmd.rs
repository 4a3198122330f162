//! `chatfmt render`: prints exactly the prompt a model's chat template makes of a conversation.

use crate::conversation_args::{read_messages, ConversationArgs};
use crate::mask_args::{pairs, MaskArgs};
use crate::model_args::{ModelArgs, Plan};
use crate::output::emit;
use anyhow::{anyhow, bail, Result};
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
    /// Print one JSON object: `text`, `template` (`kind`, `name`, `source`) and, for a Jinja template,
    /// `masks`, `assistant_spans` and `message_spans`.
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
            if args.masks.masks.is_some() || !args.masks.stop_tokens.is_empty() {
                bail!("--masks and --stop-token need a Jinja template; a FastChat template (--conv-template) has no spans");
            }
            let input = read_messages(&args.conversation.messages)?;
            for (key, value) in [("tools", &input.tools), ("documents", &input.documents)] {
                if value.as_ref().is_some_and(|v| !v.is_null()) {
                    bail!(
                        "{}: \"{key}\" cannot be used with a FastChat conversation template (--conv-template)",
                        input.origin
                    );
                }
            }
            let text = render_fastchat(conv.clone(), &input.messages, args.conversation.add_generation_prompt)?;
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
                spans = json!({
                    "masks": out.source.name(),
                    "assistant_spans": pairs(&out.assistant_spans),
                    "message_spans": out.messages.iter().map(chatfmt::MessageSpan::to_json).collect::<Vec<_>>(),
                });
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
