//! Building a conversation from OpenAI-shaped chat messages, as FastChat's OpenAI-compatible
//! server does: a system message sets the system message, user and assistant messages are
//! appended with the template's roles, and the generation prompt is the empty assistant turn.
//!
//! ```
//! use chatfmt_fastchat::{conversation_from_openai_messages, get_conv_template, ChatMessage};
//!
//! let messages: Vec<ChatMessage> = serde_json::from_str(
//!     r#"[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]"#,
//! ).unwrap();
//! let zephyr = get_conv_template("zephyr").unwrap();
//! let conv = conversation_from_openai_messages(zephyr, &messages, true).unwrap();
//! assert_eq!(conv.get_prompt().unwrap(), "<|system|>\nBe brief.</s>\n<|user|>\nHi</s>\n<|assistant|>\n");
//! ```

use super::error::{Error, ErrorKind, Result};
use super::message::{Image, Message};
use super::prompt::PromptSegment;
use super::record::Conversation;
use serde::Deserialize;

/// One OpenAI-shaped chat message: `{"role", "content"}`, where content is a string, `null`,
/// or a list of `{"type": "text", "text"}` / `{"type": "image_url", "image_url": {"url"}}` parts.
#[derive(Debug, Clone, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The content.
    #[serde(default)]
    pub content: Option<ChatContent>,
}

/// The content of a [`ChatMessage`].
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ChatContent {
    /// Plain text.
    Text(String),
    /// Content parts.
    Parts(Vec<ContentPart>),
}

/// One part of a multi-part content.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, by URL or `data:` URL.
    ImageUrl {
        /// `{"url": ...}` or the bare URL string.
        image_url: ImageUrl,
    },
    /// Any other part (audio, a file, ...), which FastChat's server leaves out.
    #[serde(other)]
    Other,
}

/// The `image_url` of a content part.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ImageUrl {
    /// `{"url": ...}`.
    Object {
        /// The URL.
        url: String,
    },
    /// A bare URL string.
    Bare(String),
}

impl ImageUrl {
    fn to_image(&self) -> Image {
        let url = match self {
            ImageUrl::Object { url } | ImageUrl::Bare(url) => url,
        };
        match url
            .strip_prefix("data:image/")
            .and_then(|rest| rest.split_once(";base64,"))
        {
            Some((filetype, data)) => Image::Base64 {
                filetype: filetype.to_owned(),
                data: data.to_owned(),
            },
            None => Image::Url { url: url.clone() },
        }
    }
}

/// A user message for `content`. A content list becomes FastChat's `(text, images)` pair, whatever
/// parts it holds: one `<image>\n` per image, then the text parts joined by newlines. Only the
/// styles that show images render such a pair; the others refuse it as FastChat fails on it.
fn user_message(content: &Option<ChatContent>) -> Option<Message> {
    match content.as_ref()? {
        ChatContent::Text(text) => Some(Message::Text(text.clone())),
        ChatContent::Parts(parts) => {
            let mut texts = Vec::new();
            let mut images = Vec::new();
            for part in parts {
                match part {
                    ContentPart::Text { text } => texts.push(text.as_str()),
                    ContentPart::ImageUrl { image_url } => images.push(image_url.to_image()),
                    ContentPart::Other => {}
                }
            }
            let text = "<image>\n".repeat(images.len()) + &texts.join("\n");
            Some(Message::WithImages { text, images })
        }
    }
}

/// The text of a system or assistant message, which FastChat's server passes on as it is sent: a
/// content list would reach `get_prompt` as a Python list, which it fails on or prints as its
/// `repr`, so one is refused (an empty assistant list, which Python reads as false, is the empty
/// turn as `None` is).
fn plain_text(n: usize, role: &str, content: &Option<ChatContent>) -> Result<Option<String>> {
    match content {
        None => Ok(None),
        Some(ChatContent::Text(text)) => Ok(Some(text.clone())),
        Some(ChatContent::Parts(parts)) if parts.is_empty() && role == "assistant" => Ok(None),
        Some(ChatContent::Parts(_)) => Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "message {n}: a {role} message's content is a list of parts, which FastChat's server passes to \
                 get_prompt as a Python list (it fails on it or prints its repr); send the content as a string"
            ),
        )),
    }
}

/// Fills `template` (a fresh copy from the registry) with `messages`; with
/// `add_generation_prompt` the empty assistant turn to be generated is appended.
pub fn conversation_from_openai_messages(
    mut template: Conversation,
    messages: &[ChatMessage],
    add_generation_prompt: bool,
) -> Result<Conversation> {
    let role = |conv: &Conversation, i: usize| {
        conv.roles.get(i).cloned().ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidInput,
                format!("template {:?} has fewer than two roles", conv.name),
            )
        })
    };
    for (n, message) in messages.iter().enumerate() {
        match message.role.as_str() {
            "system" => {
                let text = plain_text(n, "system", &message.content)?.unwrap_or_default();
                template.set_system_message(text);
            }
            "user" => {
                let r = role(&template, 0)?;
                template.append_message(r, user_message(&message.content));
            }
            "assistant" => {
                let r = role(&template, 1)?;
                let text = plain_text(n, "assistant", &message.content)?;
                template.append_message(r, text.map(Message::Text));
            }
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!("message {n}: unknown role {other:?} (expected system, user or assistant)"),
                ))
            }
        }
    }
    if add_generation_prompt {
        let r = role(&template, 1)?;
        template.append_message(r, None);
    }
    Ok(template)
}

/// The prompt of a conversation of OpenAI-style messages with the place of each message in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessagesPrompt {
    /// Exactly the prompt of [`conversation_from_openai_messages`]' `get_prompt`.
    pub text: String,
    /// One entry per input message: its turn and content ([`PromptSegment`]; for the system message
    /// the system prompt), `None` when nothing of it was printed (an earlier system message the last
    /// one replaced, a turn the style leaves out).
    pub messages: Vec<Option<PromptSegment>>,
}

/// [`conversation_from_openai_messages`] and its prompt, with the place of each input message.
pub fn openai_messages_prompt(
    template: Conversation,
    messages: &[ChatMessage],
    add_generation_prompt: bool,
) -> Result<MessagesPrompt> {
    let conv = conversation_from_openai_messages(template, messages, add_generation_prompt)?;
    let prompt = conv.get_prompt_with_segments()?;
    let last_system = messages.iter().rposition(|m| m.role == "system");
    let mut turns = prompt.turns.into_iter();
    let placed = (messages.iter().enumerate())
        .map(|(i, m)| match m.role.as_str() {
            "system" => prompt.system.filter(|_| Some(i) == last_system),
            _ => turns.next().flatten(),
        })
        .collect();
    Ok(MessagesPrompt {
        text: prompt.text,
        messages: placed,
    })
}
