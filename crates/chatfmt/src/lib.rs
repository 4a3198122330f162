//! chatfmt: turns conversations into the exact prompt text chat models were trained on.
//!
//! The chat layer over [`chatfmt_jinja`]: Hugging Face chat templates (`apply` with every option of
//! transformers' `apply_chat_template`), model sources (folders, GGUF files, the Hub cache, built-in
//! templates), saving templates into model folders, and `check`.

pub mod check;
pub mod defaults;
mod error;
pub mod guard;
pub mod json_input;
pub mod masks;
pub mod source;
pub mod template;

pub use error::{Error, ErrorKind};
pub use masks::{ChatSpans, MaskSource, MessageSpan, SpanOptions};
pub use source::{ModelSource, Resolved, TemplateInfo, TemplateRequest};
pub use template::{ApplyOptions, ChatTemplate, HubCache};

pub use chatfmt_jinja as jinja;
