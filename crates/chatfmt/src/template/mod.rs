//! Hugging Face chat templates: selection among named templates and `apply`, reproducing
//! `transformers`' `apply_chat_template(tokenize=False)`.

mod apply;
mod gguf;
mod hub;
mod json_members;
mod load;
mod save;

pub use apply::ApplyOptions;
pub use gguf::{gguf_special_tokens, is_gguf};
pub use hub::{is_repo_id, HubCache};
pub use load::{model_dir_special_tokens, special_tokens, LoadError, LoadErrorKind};
pub use save::{save_template, SaveError, SaveErrorKind, SaveLayout, Saved};

use chatfmt_jinja::{Error, ErrorKind, Template};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;

/// A model's chat template(s) and the special tokens templates see as variables.
#[derive(Debug)]
pub struct ChatTemplate {
    templates: Templates,
    special_tokens: Map<String, Json>,
    /// The length of the last output, to size the next one's buffer.
    last_len: AtomicUsize,
}

#[derive(Debug)]
enum Templates {
    Single(Compiled),
    Named(BTreeMap<String, Compiled>),
}

/// A compiled template, or the error compiling it gave. transformers compiles at render time, after
/// its own argument checks, so a broken template fails only when it is applied.
type Compiled = Result<Template, Error>;

fn value_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::ValueError, msg)
}

impl ChatTemplate {
    /// One template from its source. A template that does not compile fails when applied.
    pub fn new(source: &str, special_tokens: Map<String, Json>) -> Self {
        ChatTemplate {
            templates: Templates::Single(Template::new("chat_template", source)),
            special_tokens,
            last_len: AtomicUsize::new(0),
        }
    }

    /// Several named templates (`default`, `tool_use`, `rag`, ...).
    pub fn named<'s>(named: impl IntoIterator<Item = (&'s str, &'s str)>, special_tokens: Map<String, Json>) -> Self {
        let mut map = BTreeMap::new();
        for (name, source) in named {
            map.insert(name.to_string(), Template::new(name, source));
        }
        ChatTemplate {
            templates: Templates::Named(map),
            special_tokens,
            last_len: AtomicUsize::new(0),
        }
    }

    /// The first compile error among the templates, if any.
    pub fn compile_error(&self) -> Option<&Error> {
        match &self.templates {
            Templates::Single(t) => t.as_ref().err(),
            Templates::Named(m) => m.values().find_map(|t| t.as_ref().err()),
        }
    }

    /// The special tokens passed to templates by name (`bos_token`, `eos_token`, ...).
    pub fn special_tokens(&self) -> &Map<String, Json> {
        &self.special_tokens
    }

    /// Each template with its name (`None` for a single unnamed template), or its compile error.
    pub fn templates(&self) -> Vec<(Option<&str>, Result<&Template, &Error>)> {
        match &self.templates {
            Templates::Single(t) => vec![(None, t.as_ref())],
            Templates::Named(m) => m.iter().map(|(k, t)| (Some(k.as_str()), t.as_ref())).collect(),
        }
    }

    /// The names of the templates (empty for a single unnamed template).
    pub fn names(&self) -> Vec<&str> {
        match &self.templates {
            Templates::Single(_) => Vec::new(),
            Templates::Named(m) => m.keys().map(String::as_str).collect(),
        }
    }

    /// Chooses the template as transformers' `get_chat_template` does. A requested name that is not
    /// a template name is template source, compiled on the spot (returned as owned).
    fn select(&self, requested: Option<&str>, has_tools: bool) -> Result<Selected<'_>, Error> {
        match (&self.templates, requested) {
            (Templates::Named(map), Some(name)) if map.contains_key(name) => Ok(Selected::Borrowed(&map[name])),
            (_, Some(source)) => Ok(Selected::Owned(Template::new("chat_template", source))),
            (Templates::Single(t), None) => Ok(Selected::Borrowed(t)),
            (Templates::Named(map), None) => {
                if has_tools {
                    if let Some(t) = map.get("tool_use") {
                        return Ok(Selected::Borrowed(t));
                    }
                }
                map.get("default").map(Selected::Borrowed).ok_or_else(|| {
                    let names: Vec<String> = map.keys().map(|k| format!("'{k}'")).collect();
                    value_error(format!(
                        "This model has multiple chat templates with no default specified! Please either pass a chat template or the name of the template you wish to use to the `chat_template` argument. Available template names are [{}].",
                        names.join(", ")
                    ))
                })
            }
        }
    }
}

enum Selected<'t> {
    Borrowed(&'t Compiled),
    Owned(Compiled),
}

impl Selected<'_> {
    fn get(&self) -> Result<&Template, Error> {
        match self {
            Selected::Borrowed(t) => t.as_ref().map_err(Clone::clone),
            Selected::Owned(t) => t.as_ref().map_err(Clone::clone),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ChatTemplate;

    /// Servers and dataset workers share one compiled template across threads.
    #[test]
    fn compiled_templates_are_shared_across_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<ChatTemplate>();
        shared::<chatfmt_jinja::Template>();
        let t = ChatTemplate::new("{{ messages[0]['content'] }}", Default::default());
        let msgs = [serde_json::json!({"role": "user", "content": "hi"})];
        std::thread::scope(|s| {
            let a = s.spawn(|| t.apply(&msgs, &Default::default()).map(|r| r.text));
            let b = s.spawn(|| t.apply(&msgs, &Default::default()).map(|r| r.text));
            assert_eq!(a.join().ok().and_then(Result::ok).as_deref(), Some("hi"));
            assert_eq!(b.join().ok().and_then(Result::ok).as_deref(), Some("hi"));
        });
    }
}
