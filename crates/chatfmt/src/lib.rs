//! chatfmt: turns conversations into the exact prompt text chat models were trained on.
//!
//! The chat layer over [`chatfmt_jinja`]: Hugging Face chat templates (`apply`, loading from model
//! folders), FastChat conversation templates ([`conversation`]), and the conformance runners.

pub mod check;
pub mod conformance;
pub mod conversation;
pub mod defaults;
pub mod json_input;
pub mod source;
pub mod template;

pub use source::{ModelSource, Resolved, TemplateInfo, TemplateRequest};
pub use template::{ApplyOptions, ChatTemplate, HubCache, LoadError, LoadErrorKind};

pub use chatfmt_jinja as jinja;
