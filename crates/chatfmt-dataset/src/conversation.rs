//! A dataset row as a conversation: OpenAI-style `messages` (role/content, optional `tool_calls`,
//! `reasoning_content`, a `tools` column) or ShareGPT `conversations` (`from`/`value`).

use crate::{Error, ErrorKind};
use serde_json::{Map, Value as Json};

/// How rows spell their conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// `messages` if the row has it, else ShareGPT `conversations`.
    #[default]
    Auto,
    Messages,
    ShareGpt,
}

/// Column (field) names.
#[derive(Debug, Clone)]
pub struct Fields {
    pub format: Format,
    /// The messages column (default `messages`).
    pub messages: String,
    /// The ShareGPT column (default `conversations`).
    pub conversations: String,
    /// The tool schemas column (default `tools`); a JSON string is parsed.
    pub tools: String,
    /// The documents column (default `documents`, for RAG templates; `None`: none is read); a JSON
    /// string is parsed.
    pub documents: Option<String>,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            format: Format::Auto,
            messages: "messages".into(),
            conversations: "conversations".into(),
            tools: "tools".into(),
            documents: Some("documents".into()),
        }
    }
}

/// The conversation of one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub messages: Vec<Json>,
    pub tools: Option<Json>,
    pub documents: Option<Json>,
}

fn type_name(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

/// A row that is not a conversation.
fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidRow, message)
}

/// ShareGPT speaker → chat role.
fn sharegpt_role(from: &str) -> Option<&'static str> {
    match from {
        "human" | "user" => Some("user"),
        "gpt" | "assistant" => Some("assistant"),
        "system" => Some("system"),
        "tool" => Some("tool"),
        _ => None,
    }
}

/// A column holding a list (of messages, tool schemas, documents), or a JSON string of one; `None`
/// when the row lacks it or holds null.
fn list_field(obj: &Map<String, Json>, field: &str, what: &str) -> Result<Option<Vec<Json>>, Error> {
    match obj.get(field) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => match chatfmt::json_input::from_str(s) {
            Ok(Json::Array(list)) => Ok(Some(list)),
            Ok(v) => Err(invalid(format!(
                "field `{field}` is a JSON string of {}, not a list of {what}",
                type_name(&v)
            ))),
            Err(e) => Err(invalid(format!(
                "field `{field}` is a string but not JSON: {}",
                chatfmt::json_input::with_place(&e)
            ))),
        },
        Some(Json::Array(list)) => Ok(Some(list.clone())),
        Some(v) => Err(invalid(format!(
            "field `{field}` must be a list of {what} (or a JSON string of one), got {}",
            type_name(v)
        ))),
    }
}

impl Fields {
    /// The conversation of `row`, or why the row has none.
    pub fn conversation(&self, row: &Json) -> Result<Conversation, Error> {
        let Json::Object(obj) = row else {
            return Err(invalid(format!("a row must be a JSON object, got {}", type_name(row))));
        };
        let use_messages = match self.format {
            Format::Messages => true,
            Format::ShareGpt => false,
            Format::Auto => {
                obj.get(&self.messages).is_some_and(|v| !v.is_null()) || !obj.contains_key(&self.conversations)
            }
        };
        let messages = if use_messages {
            self.messages_of(obj)?
        } else {
            self.sharegpt_of(obj)?
        };
        let tools = list_field(obj, &self.tools, "tool schemas")?.map(Json::Array);
        let documents = match &self.documents {
            Some(field) => list_field(obj, field, "documents")?.map(Json::Array),
            None => None,
        };
        Ok(Conversation {
            messages,
            tools,
            documents,
        })
    }

    fn messages_of(&self, obj: &Map<String, Json>) -> Result<Vec<Json>, Error> {
        let field = &self.messages;
        let list = match list_field(obj, field, "messages")? {
            Some(list) => list,
            None if obj.contains_key(field) => {
                return Err(invalid(format!("{field} is null; expected a list of messages")))
            }
            None => return Err(invalid(format!("missing field `{field}` (the conversation)"))),
        };
        // Only objects: what a message holds (its role included) is the template's to read, as
        // transformers leaves it.
        if let Some((i, m)) = list.iter().enumerate().find(|(_, m)| !m.is_object()) {
            return Err(invalid(format!(
                "{field}[{i}] must be an object with role and content, got {}",
                type_name(m)
            )));
        }
        Ok(list)
    }

    fn sharegpt_of(&self, obj: &Map<String, Json>) -> Result<Vec<Json>, Error> {
        let field = &self.conversations;
        let list = match obj.get(field) {
            None => {
                return Err(invalid(format!(
                    "missing field `{field}` (or `{}`): no conversation",
                    self.messages
                )))
            }
            Some(Json::Null) => return Err(invalid(format!("{field} is null; expected a list of turns"))),
            Some(Json::Array(list)) => list,
            Some(v) => {
                return Err(invalid(format!(
                    "field `{field}` must be a list of turns, got {}",
                    type_name(v)
                )))
            }
        };
        let mut out = Vec::with_capacity(list.len());
        for (i, turn) in list.iter().enumerate() {
            let (Some(from), Some(value)) = (turn.get("from"), turn.get("value")) else {
                return Err(invalid(format!("{field}[{i}] needs `from` and `value`")));
            };
            let from = from
                .as_str()
                .ok_or_else(|| invalid(format!("{field}[{i}].from must be a string, got {}", type_name(from))))?;
            let role = sharegpt_role(from).ok_or_else(|| {
                invalid(format!(
                    "{field}[{i}].from = {from:?}: unknown ShareGPT role (expected human, gpt, system or tool)"
                ))
            })?;
            let mut m = Map::new();
            m.insert("role".into(), Json::String(role.into()));
            m.insert("content".into(), value.clone());
            out.push(Json::Object(m));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sharegpt_roles_are_mapped() {
        let row = json!({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]});
        let c = Fields::default().conversation(&row).unwrap();
        assert_eq!(
            c.messages,
            vec![
                json!({"role": "user", "content": "hi"}),
                json!({"role": "assistant", "content": "yo"})
            ]
        );
    }

    #[test]
    fn bad_rows_say_why() {
        let f = Fields::default();
        let err = |row: Json| f.conversation(&row).unwrap_err().to_string();
        assert!(
            err(json!({"messages": 42})).contains("must be a list of messages (or a JSON string of one), got a number")
        );
        assert!(err(json!({"conversations": [{"from": "bot", "value": "x"}]})).contains("unknown ShareGPT role"));
        assert!(err(json!({"text": "x"})).contains("missing field `messages`"));
        assert!(err(json!({"messages": [], "tools": "{"})).contains("not JSON"));
        assert_eq!(
            err(json!({"messages": null})),
            "messages is null; expected a list of messages"
        );
    }

    #[test]
    fn tools_given_as_a_json_string_are_parsed() {
        let row = json!({"messages": [{"role": "user", "content": "x"}], "tools": "[{\"name\": \"f\"}]"});
        assert_eq!(
            Fields::default().conversation(&row).unwrap().tools,
            Some(json!([{"name": "f"}]))
        );
    }
}
