//! Hugging Face chat templates: selection among named templates and `apply`, reproducing
//! `transformers`' `apply_chat_template(tokenize=False)`.

mod apply;
mod gguf;
mod hub;
mod json_members;
mod load;
mod save;

/// transformers' `ValueError` message when `apply_chat_template` has neither the tokenizer's
/// template nor one passed in (`get_chat_template`).
pub const NO_TEMPLATE_MESSAGE: &str = "Cannot use chat template functions because tokenizer.chat_template is not set \
     and no template argument was passed! For information about writing templates and setting the \
     tokenizer.chat_template attribute, please see the documentation at \
     https://huggingface.co/docs/transformers/main/en/chat_templating";

pub use apply::ApplyOptions;
pub use gguf::{gguf_special_tokens, is_gguf};
pub use hub::{is_repo_id, HubCache};
pub use load::{folder_special_tokens, model_dir_special_tokens};
pub(crate) use load::{read_json as read_json_file, SPECIAL_TOKEN_KEYS};
pub use save::{save_template, SaveLayout, Saved};

use chatfmt_jinja::{Error, ErrorKind, Limits, Template};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// A model's chat template(s) and the special tokens templates see as variables.
#[derive(Debug)]
pub struct ChatTemplate {
    templates: Templates,
    special_tokens: Map<String, Json>,
    /// The limits every render runs under.
    limits: Limits,
    /// The length of the last output, to size the next one's buffer.
    last_len: AtomicUsize,
    /// Which prefix renders of the mask rule need provenance.
    pub(crate) prefix_hint: PrefixHint,
    /// Whether the mask rule derives prefix renders from one render where the template allows it
    /// (see [`ChatTemplate::with_derived_prefixes`]).
    pub(crate) derive_prefixes: bool,
}

#[derive(Debug)]
enum Templates {
    Single(Box<Entry>),
    Named(BTreeMap<String, Entry>),
}

/// One template and where it came from.
#[derive(Debug)]
struct Entry {
    /// The file it was read from (or another description of its origin); errors name it.
    origin: String,
    source: String,
    compiled: Compiled,
}

impl Entry {
    fn new(origin: &str, source: &str) -> Entry {
        Entry {
            origin: origin.to_string(),
            source: source.to_string(),
            compiled: Template::new(origin, source),
        }
    }
}

/// A compiled template, or the error compiling it gave. transformers compiles at render time, after
/// its own argument checks, so a broken template fails only when it is applied.
type Compiled = Result<Template, Error>;

/// The origin of a template given as source text, with no file.
const SOURCE_TEXT: &str = "chat_template";

fn value_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::ValueError, msg)
}

impl ChatTemplate {
    /// One template from its source. A template that does not compile fails when applied.
    pub fn new(source: &str, special_tokens: Map<String, Json>) -> Self {
        Self::from_origin(SOURCE_TEXT, source, special_tokens)
    }

    /// One template from its source, read from `origin` (a file path: errors name it).
    pub fn from_origin(origin: &str, source: &str, special_tokens: Map<String, Json>) -> Self {
        ChatTemplate {
            templates: Templates::Single(Box::new(Entry::new(origin, source))),
            special_tokens,
            limits: Limits::default(),
            last_len: AtomicUsize::new(0),
            prefix_hint: Default::default(),
            derive_prefixes: true,
        }
    }

    /// Several named templates (`default`, `tool_use`, `rag`, ...).
    pub fn named<'s>(named: impl IntoIterator<Item = (&'s str, &'s str)>, special_tokens: Map<String, Json>) -> Self {
        Self::named_from_origins(named.into_iter().map(|(n, s)| (n, n, s)), special_tokens)
    }

    /// Several named templates, each with its origin: `(name, origin, source)`.
    pub fn named_from_origins<'s>(
        named: impl IntoIterator<Item = (&'s str, &'s str, &'s str)>,
        special_tokens: Map<String, Json>,
    ) -> Self {
        let map = named
            .into_iter()
            .map(|(name, origin, source)| (name.to_string(), Entry::new(origin, source)))
            .collect();
        ChatTemplate {
            templates: Templates::Named(map),
            special_tokens,
            limits: Limits::default(),
            last_len: AtomicUsize::new(0),
            prefix_hint: Default::default(),
            derive_prefixes: true,
        }
    }

    /// The same templates with other special tokens (a model's template rendered with another
    /// model's tokens, or with overrides).
    pub fn with_special_tokens(mut self, special_tokens: Map<String, Json>) -> Self {
        self.special_tokens = special_tokens;
        self
    }

    /// The same templates rendered under other limits (a template from an untrusted source).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The first compile error among the templates, if any.
    pub fn compile_error(&self) -> Option<&Error> {
        match &self.templates {
            Templates::Single(t) => t.compiled.as_ref().err(),
            Templates::Named(m) => m.values().find_map(|t| t.compiled.as_ref().err()),
        }
    }

    /// The template `apply` uses with these options: its name (`None` for a single unnamed
    /// template, or source passed as `chat_template`) and its origin.
    pub fn selected(&self, opts: &ApplyOptions) -> Result<(Option<&str>, &str), Error> {
        let requested = opts.chat_template.as_deref();
        match (&self.templates, requested) {
            (Templates::Named(map), Some(name)) if map.contains_key(name) => match map.get_key_value(name) {
                Some((k, e)) => Ok((Some(k.as_str()), e.origin.as_str())),
                None => Ok((None, SOURCE_TEXT)),
            },
            (_, Some(_)) => Ok((None, SOURCE_TEXT)),
            (Templates::Single(t), None) => Ok((None, &t.origin)),
            (Templates::Named(map), None) => {
                let name = self.default_name(map, opts.tools.is_some())?;
                Ok((Some(name), map.get(name).map_or(SOURCE_TEXT, |e| e.origin.as_str())))
            }
        }
    }

    /// The special tokens passed to templates by name (`bos_token`, `eos_token`, ...).
    pub fn special_tokens(&self) -> &Map<String, Json> {
        &self.special_tokens
    }

    /// Each template with its name (`None` for a single unnamed template), or its compile error.
    pub fn templates(&self) -> Vec<(Option<&str>, Result<&Template, &Error>)> {
        match &self.templates {
            Templates::Single(t) => vec![(None, t.compiled.as_ref())],
            Templates::Named(m) => m.iter().map(|(k, t)| (Some(k.as_str()), t.compiled.as_ref())).collect(),
        }
    }

    /// Each template's source with its name (`None` for a single unnamed template), whether or not
    /// it compiles.
    pub fn sources(&self) -> Vec<(Option<&str>, &str)> {
        match &self.templates {
            Templates::Single(t) => vec![(None, t.source.as_str())],
            Templates::Named(m) => m.iter().map(|(k, t)| (Some(k.as_str()), t.source.as_str())).collect(),
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
    pub(crate) fn select(&self, requested: Option<&str>, has_tools: bool) -> Result<Selected<'_>, Error> {
        match (&self.templates, requested) {
            (Templates::Named(map), Some(name)) if map.contains_key(name) => {
                Ok(Selected::Borrowed(&map[name].compiled))
            }
            (_, Some(source)) => Ok(Selected::Owned(Box::new(Template::new(SOURCE_TEXT, source)))),
            (Templates::Single(t), None) => Ok(Selected::Borrowed(&t.compiled)),
            (Templates::Named(map), None) => {
                let name = self.default_name(map, has_tools)?;
                Ok(Selected::Borrowed(&map[name].compiled))
            }
        }
    }

    /// The template transformers picks among named ones when none is requested: `tool_use` when
    /// tools are given and it exists, else `default`.
    fn default_name<'m>(&self, map: &'m BTreeMap<String, Entry>, has_tools: bool) -> Result<&'m str, Error> {
        if has_tools {
            if let Some((k, _)) = map.get_key_value("tool_use") {
                return Ok(k);
            }
        }
        map.get_key_value("default").map(|(k, _)| k.as_str()).ok_or_else(|| {
            let names: Vec<String> = map.keys().map(|k| format!("'{k}'")).collect();
            value_error(format!(
                "This model has multiple chat templates with no default specified! Please either pass a chat template or the name of the template you wish to use to the `chat_template` argument. Available template names are [{}].",
                names.join(", ")
            ))
        })
    }
}

/// The template a render uses: one of the entries, or one compiled from source for this call
/// (boxed, so selecting an entry moves a pointer's worth).
pub(crate) enum Selected<'t> {
    Borrowed(&'t Compiled),
    Owned(Box<Compiled>),
}

impl Selected<'_> {
    pub(crate) fn get(&self) -> Result<&Template, Error> {
        match self {
            Selected::Borrowed(t) => t.as_ref().map_err(Clone::clone),
            Selected::Owned(t) => (**t).as_ref().map_err(Clone::clone),
        }
    }
}

/// Which kinds of prefix render the mask rule (`crate::masks`) last needed with provenance, by the role of the prefix's
/// last message (assistant or other): a prefix of such a kind is rendered with provenance at once,
/// not plain and then again. Either way the text and the result are the same; only the work differs.
#[derive(Debug, Default)]
pub(crate) struct PrefixHint(AtomicU8);

impl PrefixHint {
    fn bit(assistant: bool) -> u8 {
        if assistant {
            1
        } else {
            2
        }
    }

    /// Whether a prefix ending with an assistant message (or another) is expected to need provenance.
    pub(crate) fn expects(&self, assistant: bool) -> bool {
        self.0.load(Ordering::Relaxed) & Self::bit(assistant) != 0
    }

    /// Remembers whether a prefix ending with an assistant message (or another) needed provenance.
    pub(crate) fn learn(&self, assistant: bool, needed: bool) {
        let bit = Self::bit(assistant);
        if needed != self.expects(assistant) {
            if needed {
                self.0.fetch_or(bit, Ordering::Relaxed);
            } else {
                self.0.fetch_and(!bit, Ordering::Relaxed);
            }
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
