//! Template scenario records: replay the ops on a fresh template copy and compare outputs.

use super::{bad_record, Checks, Run, COUNTED_FIELDS};
use chatfmt_fastchat::Conversation;
use chatfmt_fastchat::Message;
use chatfmt_fastchat::{Error, ErrorKind, Result};
use serde_json::{json, Value};

fn parse_message(id: &str, v: &Value) -> Result<Option<Message>> {
    serde_json::from_value(v.clone()).map_err(|e| bad_record(id, &format!("bad message {v}: {e}")))
}

pub(super) fn replay(id: &str, conv: &mut Conversation, ops: &[Value], skip_set_name: bool) -> Result<()> {
    for op in ops {
        match op["op"].as_str() {
            Some("set_system_message") => {
                let value = op["value"]
                    .as_str()
                    .ok_or_else(|| bad_record(id, "set_system_message without value"))?;
                conv.set_system_message(value);
            }
            Some("append_message") => {
                let role = op["role"]
                    .as_str()
                    .ok_or_else(|| bad_record(id, "append_message without role"))?;
                conv.append_message(role, parse_message(id, &op["message"])?);
            }
            Some("update_last_message") => {
                // An error here is part of the behaviour under test; later outputs show it.
                let _ = conv.update_last_message(parse_message(id, &op["message"])?);
            }
            Some("set_name") if skip_set_name => {}
            Some("set_name") => {
                conv.name = op["value"]
                    .as_str()
                    .ok_or_else(|| bad_record(id, "set_name without value"))?
                    .to_owned();
            }
            other => return Err(bad_record(id, &format!("unknown op {other:?}"))),
        }
    }
    Ok(())
}

impl Run {
    pub(super) fn check_scenario(&mut self, id: &str, record: &Value) -> Result<()> {
        let mut conv = self.template(id, record)?;
        let ops = record["ops"].as_array().ok_or_else(|| bad_record(id, "no ops"))?;
        replay(id, &mut conv, ops, false)?;
        let mut c = Checks::new(id, record);
        for field in COUNTED_FIELDS.iter().chain(&[
            "gradio_chatbot",
            "dict",
            "images",
            "openai_vision_messages",
            "system_message_vision",
        ]) {
            let golden = record
                .get(*field)
                .ok_or_else(|| bad_record(id, &format!("no {field}")))?;
            let counted = COUNTED_FIELDS.contains(field);
            match *field {
                "stop_str" => c.plain(field, golden, json!(conv.stop_str), counted),
                "stop_token_ids" => c.plain(field, golden, json!(conv.stop_token_ids), counted),
                "final_state" => c.plain(field, golden, conv.state(), counted),
                _ => c.result(field, golden, output(&conv, field), counted),
            }
        }
        self.finish(c);
        Ok(())
    }
}

pub(super) fn output(conv: &Conversation, field: &str) -> Result<Value> {
    let to_value = |v: Vec<Value>| Value::Array(v);
    match field {
        "prompt" => conv.get_prompt().map(Value::from),
        "openai_messages" => conv.to_openai_api_messages().map(to_value),
        "openai_vision_messages" => conv.to_openai_vision_api_messages(false).map(to_value),
        "openai_vision_messages_is_mistral" => conv.to_openai_vision_api_messages(true).map(to_value),
        "gradio_chatbot" => conv.to_gradio_chatbot().map(|pairs| json!(pairs)),
        "dict" => conv.dict(),
        "images" => Ok(json!(conv.images())),
        "system_message_vision" => Ok(json!(conv.system_message_for(true))),
        other => Err(Error::new(ErrorKind::InvalidInput, format!("unknown output {other}"))),
    }
}
