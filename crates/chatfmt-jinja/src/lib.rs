//! chatfmt-jinja: a Jinja2 template engine with CPython semantics, made for chat templates.
//!
//! It reproduces the environment `transformers` renders chat templates in: Jinja2 3.1 with
//! `trim_blocks`, `lstrip_blocks`, the immutable sandbox, loop controls and `{% generation %}`.
//!
//! ```
//! use chatfmt_jinja::{Template, Context};
//! let t = Template::new("demo", "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}").unwrap();
//! let ctx = Context::from_json(serde_json::json!({"messages": [{"role": "user", "content": "hi"}]})).unwrap();
//! assert_eq!(t.render(&ctx).unwrap().text, "user: hi\n");
//! ```

#![warn(missing_docs)]

pub mod analysis;
mod ast;
mod builtins;
pub mod causal;
mod context;
#[cfg(test)]
mod cpython_tests;
mod direct;
mod error;
mod eval;
mod limits;
mod output;
pub(crate) mod pystr;
mod syntax;
mod template;
mod value;

pub use builtins::doc::reference_markdown as builtins_reference;
pub use causal::{CausalLoop, LoopPrefix};
pub use context::{ByteSpan, Origin, Span};
pub use error::{Error, ErrorKind, Result};
pub use output::CodePoints;
pub use template::{Borrowed, Clock, Context, Layer, Limits, Rendered, Template};
