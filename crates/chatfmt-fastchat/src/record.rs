//! The `Conversation` record (FastChat's dataclass) and its API, except the prompt itself
//! (see `prompt.rs`).

use super::error::{Error, ErrorKind, Result};
use super::message::Message;
use super::style::SeparatorStyle;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// One turn: the role string as stored, and the content (`None`: the turn to be generated).
pub type Turn = (String, Option<Message>);

/// Stop strings: none, one, or a list (FastChat's `stop_str: Union[str, List[str]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StopStr {
    /// A single stop string.
    One(String),
    /// Several stop strings.
    Many(Vec<String>),
}

impl StopStr {
    /// The stop strings as a list.
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            StopStr::One(s) => vec![s.clone()],
            StopStr::Many(v) => v.clone(),
        }
    }
}

/// A FastChat conversation: a template's settings plus the messages appended so far.
///
/// Get one from the registry (an independent copy each time) and fill it:
///
/// ```
/// use chatfmt_fastchat::{get_conv_template, Message};
///
/// let mut conv = get_conv_template("vicuna_v1.1").unwrap();
/// let (user, assistant) = (conv.roles[0].clone(), conv.roles[1].clone());
/// conv.append_message(user, Some(Message::from("Hello!")));
/// conv.append_message(assistant, None);
/// assert!(conv.get_prompt().unwrap().ends_with("USER: Hello! ASSISTANT:"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// The template's name (CHATGLM numbering depends on it).
    pub name: String,
    /// The system prompt template; `{system_message}` is replaced by Python `str.format` rules.
    pub system_template: String,
    /// The system message.
    pub system_message: String,
    /// The system message used for vision models, when non-empty.
    pub system_message_vision: String,
    /// The role names: user, assistant (and possibly more, unused by the prompt).
    pub roles: Vec<String>,
    /// All messages, including preset few-shot ones.
    pub messages: Vec<Turn>,
    /// How many leading messages are preset few-shot examples.
    pub offset: usize,
    /// The separator style; `None` cannot render a prompt.
    pub sep_style: Option<SeparatorStyle>,
    /// The first separator.
    pub sep: Option<String>,
    /// The second separator (styles that alternate separators).
    pub sep2: Option<String>,
    /// Stop strings.
    pub stop_str: Option<StopStr>,
    /// Stop token ids.
    pub stop_token_ids: Option<Vec<u32>>,
    /// The largest image size the model takes, in megabytes.
    pub max_image_size_mb: Option<serde_json::Number>,
}

impl Conversation {
    /// A conversation named `name` with FastChat's field defaults.
    pub fn new(name: impl Into<String>) -> Self {
        Conversation {
            name: name.into(),
            system_template: "{system_message}".to_owned(),
            system_message: String::new(),
            system_message_vision: String::new(),
            roles: vec!["USER".to_owned(), "ASSISTANT".to_owned()],
            messages: Vec::new(),
            offset: 0,
            sep_style: Some(SeparatorStyle::ADD_COLON_SINGLE),
            sep: Some("\n".to_owned()),
            sep2: None,
            stop_str: None,
            stop_token_ids: None,
            max_image_size_mb: None,
        }
    }

    /// Appends a turn with the exact role string `role`.
    pub fn append_message(&mut self, role: impl Into<String>, message: Option<Message>) {
        self.messages.push((role.into(), message));
    }

    /// Replaces the content of the last turn (used to fill the generated answer).
    pub fn update_last_message(&mut self, message: Option<Message>) -> Result<()> {
        match self.messages.last_mut() {
            Some(last) => {
                last.1 = message;
                Ok(())
            }
            None => Err(Error::new(
                ErrorKind::NoMessages,
                "update_last_message: the conversation has no messages",
            )),
        }
    }

    /// Sets the system message.
    pub fn set_system_message(&mut self, system_message: impl Into<String>) {
        self.system_message = system_message.into();
    }

    /// The system message; for vision the vision one when it is non-empty.
    pub fn system_message_for(&self, is_vision: bool) -> &str {
        if is_vision && !self.system_message_vision.is_empty() {
            &self.system_message_vision
        } else {
            &self.system_message
        }
    }

    /// The non-preset messages (FastChat's `messages[offset:]`).
    pub fn conversation_turns(&self) -> &[Turn] {
        self.messages.get(self.offset..).unwrap_or(&[])
    }

    /// OpenAI chat messages (text form): the system message if non-empty, then user and
    /// assistant turns by position; an assistant `None` is dropped, a user `None` is kept as
    /// `null` content. Messages with images have no text form: use
    /// [`Conversation::to_openai_vision_api_messages`].
    pub fn to_openai_api_messages(&self) -> Result<Vec<Value>> {
        let mut out = self.openai_system();
        for (i, (_, msg)) in self.conversation_turns().iter().enumerate() {
            let content = match msg {
                Some(Message::WithImages { .. }) => return Err(images_error("OpenAI text messages")),
                Some(Message::Text(text)) => Some(text),
                None => None,
            };
            if i.is_multiple_of(2) {
                out.push(json!({"role": "user", "content": content}));
            } else if let Some(text) = content {
                out.push(json!({"role": "assistant", "content": text}));
            }
        }
        Ok(out)
    }

    /// OpenAI chat messages (vision form): user turns with images become a content list of one
    /// text part and one `image_url` part per image (`{"url": ...}`, or the bare URL string when
    /// `is_mistral`).
    pub fn to_openai_vision_api_messages(&self, is_mistral: bool) -> Result<Vec<Value>> {
        let mut out = self.openai_system();
        for (i, (_, msg)) in self.conversation_turns().iter().enumerate() {
            if i.is_multiple_of(2) {
                let content = match msg {
                    None => Value::Null,
                    Some(Message::Text(text)) => Value::from(text.as_str()),
                    Some(Message::WithImages { text, images }) => {
                        let mut parts = vec![json!({"type": "text", "text": text})];
                        for image in images {
                            let url = image.openai_url();
                            parts.push(if is_mistral {
                                json!({"type": "image_url", "image_url": url})
                            } else {
                                json!({"type": "image_url", "image_url": {"url": url}})
                            });
                        }
                        Value::Array(parts)
                    }
                };
                out.push(json!({"role": "user", "content": content}));
            } else {
                match msg {
                    None => {}
                    Some(Message::Text(text)) => out.push(json!({"role": "assistant", "content": text})),
                    Some(Message::WithImages { .. }) => {
                        return Err(images_error("assistant turns of OpenAI vision messages"))
                    }
                }
            }
        }
        Ok(out)
    }

    fn openai_system(&self) -> Vec<Value> {
        if self.system_message.is_empty() {
            Vec::new()
        } else {
            vec![json!({"role": "system", "content": self.system_message})]
        }
    }

    /// Gradio chatbot pairs `[user, assistant]` of the non-preset turns. A user turn with images
    /// shows its first image as an `<img>` tag before the text (with `<image>\n` removed and
    /// the text stripped).
    pub fn to_gradio_chatbot(&self) -> Result<Vec<[Option<String>; 2]>> {
        let mut out: Vec<[Option<String>; 2]> = Vec::new();
        for (i, (_, msg)) in self.conversation_turns().iter().enumerate() {
            let shown = match msg {
                None => None,
                Some(Message::Text(text)) => Some(text.clone()),
                Some(Message::WithImages { .. }) if !i.is_multiple_of(2) => {
                    return Err(images_error("gradio assistant turns"))
                }
                Some(Message::WithImages { text, images }) => {
                    let tag = match images.first() {
                        Some(image) => {
                            format!("<img src=\"{}\" alt=\"user upload image\" />", image.openai_url())
                        }
                        None => return Err(images_error("gradio turns with an empty image list")),
                    };
                    let text = text.replace("<image>\n", "");
                    Some(tag + super::pystr::py_strip(&text))
                }
            };
            if i.is_multiple_of(2) {
                out.push([shown, None]);
            } else if let Some(pair) = out.last_mut() {
                pair[1] = shown;
            }
        }
        Ok(out)
    }

    /// FastChat's `dict()`: template name, system message, roles, all messages, offset.
    /// Image hashes (md5 of decoded pixels in FastChat) are not computed: conversations with
    /// images are an error here.
    pub fn dict(&self) -> Result<Value> {
        if self.has_images() {
            return Err(images_error("dict()"));
        }
        Ok(json!({
            "template_name": self.name,
            "system_message": self.system_message,
            "roles": self.roles,
            "messages": self.messages,
            "offset": self.offset,
        }))
    }

    /// The base64 data of every image in user turns (empty strings for URL images).
    pub fn images(&self) -> Vec<String> {
        self.conversation_turns()
            .iter()
            .step_by(2)
            .filter_map(|(_, msg)| msg.as_ref())
            .flat_map(|msg| msg.images().iter().map(|img| img.base64_data().to_owned()))
            .collect()
    }

    /// Whether any message has images.
    pub fn has_images(&self) -> bool {
        self.messages
            .iter()
            .any(|(_, m)| matches!(m, Some(Message::WithImages { .. })))
    }

    /// The record's state as the conformance kit shows it: name, system message, roles,
    /// offset, messages.
    pub fn state(&self) -> Value {
        json!({
            "name": self.name,
            "system_message": self.system_message,
            "roles": self.roles,
            "offset": self.offset,
            "messages": self.messages,
        })
    }
}

fn images_error(what: &str) -> Error {
    Error::new(
        ErrorKind::ImagesInTextOnlyOutput,
        format!("{what} cannot represent messages with images (FastChat would put a Python object there)"),
    )
}
