//! Messages of a FastChat conversation: text, or text with images.
//!
//! A turn's content is `Option<Message>`: `None` is the turn to be generated (FastChat's `None`
//! placeholder). JSON form: `null`, a string, or `{"text", "images": [{"kind": "base64",
//! "filetype", "data"} | {"kind": "url", "url"}]}`.

use serde::{Deserialize, Serialize};

/// The content of one turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Message {
    /// Plain text.
    Text(String),
    /// Text with attached images (FastChat's `(text, [Image, ...])` tuple).
    WithImages {
        /// The text.
        text: String,
        /// The images, in order.
        images: Vec<Image>,
    },
}

impl Message {
    /// The text part.
    pub fn text(&self) -> &str {
        match self {
            Message::Text(text) | Message::WithImages { text, .. } => text,
        }
    }

    /// The images (empty for plain text).
    pub fn images(&self) -> &[Image] {
        match self {
            Message::Text(_) => &[],
            Message::WithImages { images, .. } => images,
        }
    }

    /// Python truthiness of the message, which decides between "filled" and "placeholder"
    /// rendering: empty text is falsy, a text-with-images tuple is always truthy.
    pub fn is_truthy(&self) -> bool {
        match self {
            Message::Text(text) => !text.is_empty(),
            Message::WithImages { .. } => true,
        }
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::Text(text.to_owned())
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message::Text(text)
    }
}

/// An image attached to a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Image {
    /// Inline image data.
    Base64 {
        /// The file type, e.g. `png`.
        filetype: String,
        /// The base64-encoded bytes.
        data: String,
    },
    /// An image given by URL.
    Url {
        /// The URL.
        url: String,
    },
}

impl Image {
    /// The URL for OpenAI's `image_url` (a `data:` URL for inline images).
    pub fn openai_url(&self) -> String {
        match self {
            Image::Base64 { filetype, data } => format!("data:image/{filetype};base64,{data}"),
            Image::Url { url } => url.clone(),
        }
    }

    /// The base64 data (empty for URL images), as FastChat's `get_images` lists it.
    pub fn base64_data(&self) -> &str {
        match self {
            Image::Base64 { data, .. } => data,
            Image::Url { .. } => "",
        }
    }
}
