//! FastChat conversation templates, reproduced exactly.
//!
//! - [`Conversation`]: the record and its API (`append_message`, `get_prompt`, OpenAI and
//!   gradio conversions, ...), with every separator style ([`SeparatorStyle`]).
//! - [`Registry`] / [`get_conv_template`]: FastChat's 102 templates, embedded as data.
//! - [`match_model`] / [`get_conversation_template`]: FastChat's model-path matching.
//! - [`jinja_export`]: writes a Hugging Face chat template equivalent to a FastChat template.

#![warn(missing_docs)]

mod adapter;
mod choice;
mod error;
mod format;
mod from_messages;
pub mod jinja_export;
mod message;
mod prompt;
mod pystr;
mod record;
mod registry;
mod style;

pub use adapter::{
    get_conversation_template, match_model, match_model_in, matching_adapters, Adapter, AdapterMatch, MatchedOn,
    ADAPTERS, ANTHROPIC_MODELS, OPENAI_MODELS,
};
pub use choice::{choose_conv_template, ChosenBy, ChosenTemplate, AUTO};
pub use error::{Error, ErrorKind, Result};
pub use from_messages::{
    conversation_from_openai_messages, openai_messages_prompt, ChatContent, ChatMessage, ContentPart, ImageUrl,
    MessagesPrompt,
};
pub use message::{Image, Message};
pub use prompt::{PromptSegment, SegmentedPrompt, IMAGE_PLACEHOLDER};
pub use record::{Conversation, StopStr, Turn};
pub use registry::{get_conv_template, register_conv_template, registry_snapshot, Registry};
pub use style::SeparatorStyle;
