//! API edge records: each says what was called and what came back.

use super::scenario::{output, replay};
use super::{bad_record, Checks, Run};
use chatfmt_fastchat::Conversation;
use chatfmt_fastchat::Message;
use chatfmt_fastchat::SeparatorStyle;
use chatfmt_fastchat::{conversation_from_openai_messages, ChatMessage};
use chatfmt_fastchat::{Error, ErrorKind, Result};
use serde_json::{json, Value};

impl Run {
    pub(super) fn check_api_edge(&mut self, id: &str, record: &Value) -> Result<()> {
        let scenario = record["scenario"].as_str().unwrap_or_default();
        let mut c = Checks::new(id, record);
        let registry = &self.registry;
        match scenario {
            "unknown_template" => {
                let call = record["call"].as_str().unwrap_or_default();
                let name = call
                    .split('\'')
                    .nth(1)
                    .ok_or_else(|| bad_record(id, "cannot read the template name from call"))?;
                c.result("result", &record["result"], registry.get(name).map(|t| t.state()), true);
            }
            "update_last_on_empty" => {
                let mut conv = self.template(id, record)?;
                let r = conv.update_last_message(Some(Message::from("x"))).map(|()| Value::Null);
                c.result("result", &record["result"], r, true);
            }
            "duplicate_register" => {
                let conv = self.template(id, record)?;
                let mut local = registry.clone();
                let without = local.register(conv.clone(), false).map(|()| json!("ok"));
                let with = local.register(conv, true).map(|()| json!("ok"));
                c.result(
                    "register_without_override",
                    &record["register_without_override"],
                    without,
                    true,
                );
                c.result("register_with_override", &record["register_with_override"], with, true);
            }
            "system_template_escaped_braces" | "system_template_unknown_field" | "system_template_positional_field" => {
                let conv = constructed(id, &record["constructor"])?;
                c.result("prompt", &record["prompt"], conv.get_prompt().map(Value::from), true);
            }
            "copy_independence" => {
                let mut first = self.template(id, record)?;
                first.append_message("USER", Some(Message::from("mutated")));
                first.system_message.push_str(" (mutated)");
                let mut fresh = self.template(id, record)?;
                let (user, assistant) = match fresh.roles.as_slice() {
                    [u, a, ..] => (u.clone(), a.clone()),
                    _ => return Err(bad_record(id, "template needs two roles")),
                };
                fresh.append_message(user, Some(Message::from("Hello!")));
                fresh.append_message(assistant, None);
                c.result(
                    "fresh_prompt_after_mutating_other_copy",
                    &record["fresh_prompt_after_mutating_other_copy"],
                    fresh.get_prompt().map(Value::from),
                    true,
                );
                let stored = registry.get(record["template"].as_str().unwrap_or_default())?;
                c.plain(
                    "registry_messages_len",
                    &record["registry_messages_len"],
                    json!(stored.messages.len()),
                    true,
                );
            }
            "chatglm2_round_numbering_depends_on_name" => {
                let ops = record["ops"].as_array().ok_or_else(|| bad_record(id, "no ops"))?;
                for (field, skip) in [("prompt_renamed", false), ("prompt_original_name", true)] {
                    let mut conv = self.template(id, record)?;
                    replay(id, &mut conv, ops, skip)?;
                    c.result(field, &record[field], conv.get_prompt().map(Value::from), true);
                }
            }
            "none_assistant_in_middle" | "none_user_message" | "openai_vision_is_mistral" => {
                let mut conv = self.template(id, record)?;
                let ops = record["ops"].as_array().ok_or_else(|| bad_record(id, "no ops"))?;
                replay(id, &mut conv, ops, false)?;
                for field in [
                    "prompt",
                    "openai_messages",
                    "gradio_chatbot",
                    "openai_vision_messages_is_mistral",
                ] {
                    if let Some(golden) = record.get(field) {
                        c.result(field, golden, output(&conv, field), true);
                    }
                }
            }
            "stop_token_ids_aliasing" => {
                let mut first = self.template(id, record)?;
                c.plain(
                    "stop_token_ids_before",
                    &record["stop_token_ids_before"],
                    json!(first.stop_token_ids),
                    true,
                );
                if let Some(ids) = first.stop_token_ids.as_mut() {
                    ids.push(999);
                }
                let fresh = self.template(id, record)?;
                c.plain(
                    "fresh_copy_after_appending_999_to_other_copy",
                    &record["fresh_copy_after_appending_999_to_other_copy"],
                    json!(fresh.stop_token_ids),
                    true,
                );
                c.plain(
                    "registry_list_is_shared",
                    &record["registry_list_is_shared"],
                    json!(false),
                    true,
                );
            }
            "separator_style_int_values" => {
                let values: serde_json::Map<String, Value> = SeparatorStyle::ALL
                    .iter()
                    .map(|s| (s.name().to_owned(), json!(s.value())))
                    .collect();
                c.plain("style_values", &record["style_values"], Value::Object(values), true);
                let from_10 = SeparatorStyle::from_value(10)
                    .map(|s| json!(s.name()))
                    .ok_or_else(|| Error::new(ErrorKind::InvalidInput, "no style 10"));
                c.result("from_int_10", &record["from_int_10"], from_10, true);
            }
            "image_to_openai_format" => {
                // Round trip: an image read from the golden URL writes the same URL back.
                for field in ["bytes", "url"] {
                    let url = record[field]["ok"].as_str().ok_or_else(|| bad_record(id, "no url"))?;
                    let message = serde_json::from_value::<ChatMessage>(
                        json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}),
                    )
                    .map_err(|e| bad_record(id, &e.to_string()))?;
                    let conv = conversation_from_openai_messages(Conversation::new("image"), &[message], false)?;
                    let image = conv
                        .messages
                        .first()
                        .and_then(|(_, m)| m.as_ref())
                        .and_then(|m| m.images().first().cloned());
                    c.plain(
                        field,
                        &record[field],
                        json!({"ok": image.map(|i| i.openai_url())}),
                        true,
                    );
                }
            }
            other => return Err(bad_record(id, &format!("unknown api_edge scenario {other:?}"))),
        }
        self.finish(c);
        Ok(())
    }
}

/// A conversation built from an api_edge `constructor`, with one user turn `hi` and the
/// assistant placeholder (the call the kit describes).
fn constructed(id: &str, ctor: &Value) -> Result<Conversation> {
    let name = ctor["name"]
        .as_str()
        .ok_or_else(|| bad_record(id, "constructor without name"))?;
    let mut conv = Conversation::new(name);
    let text = |key: &str| ctor.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(t) = text("system_template") {
        conv.system_template = t;
    }
    if let Some(m) = text("system_message") {
        conv.system_message = m;
    }
    if let Some(roles) = ctor.get("roles") {
        conv.roles = serde_json::from_value(roles.clone()).map_err(|e| bad_record(id, &e.to_string()))?;
    }
    if let Some(style) = text("sep_style") {
        conv.sep_style = Some(style.parse().map_err(|e: String| bad_record(id, &e))?);
    }
    if let Some(sep) = text("sep") {
        conv.sep = Some(sep);
    }
    let (user, assistant) = match conv.roles.as_slice() {
        [u, a, ..] => (u.clone(), a.clone()),
        _ => return Err(bad_record(id, "constructor needs two roles")),
    };
    conv.append_message(user, Some(Message::from("hi")));
    conv.append_message(assistant, None);
    Ok(conv)
}
