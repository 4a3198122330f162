//! Built-in chat templates: the class defaults transformers gave tokenizers without a chat template
//! (`default_chat_template`, removed after 4.42). transformers 5 has no fallback, so these are only
//! used when asked for by name. The sources in `templates/*.jinja` are generated from transformers
//! 4.42.4 by `scripts/gen_default_templates.py` (the Llama one with `use_default_system_prompt=False`,
//! that class's default).
//!
//! ```
//! use chatfmt::{defaults, ApplyOptions};
//! use serde_json::json;
//!
//! let template = defaults::get("chatml")?.chat_template();
//! let messages = vec![json!({"role": "user", "content": "Hi"})];
//! let prompt = template.apply(&messages, &ApplyOptions::default())?;
//! assert_eq!(prompt.text, "<|im_start|>user\nHi<|im_end|>\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::{ChatTemplate, Error, ErrorKind};
use serde_json::{Map, Value as Json};

/// A built-in chat template and the special tokens its tokenizer class defaults to.
#[derive(Debug)]
pub struct DefaultTemplate {
    /// The name it is selected by.
    pub name: &'static str,
    /// Where it comes from.
    pub description: &'static str,
    /// The Jinja source.
    pub source: &'static str,
    /// The tokenizer class's default special tokens (name, token).
    pub special_tokens: &'static [(&'static str, &'static str)],
}

impl DefaultTemplate {
    /// The template with its class's special tokens.
    pub fn chat_template(&self) -> ChatTemplate {
        ChatTemplate::from_origin(
            &format!("builtin template {}", self.name),
            self.source,
            self.special_token_map(),
        )
    }

    /// The class's default special tokens as template variables.
    pub fn special_token_map(&self) -> Map<String, Json> {
        self.special_tokens
            .iter()
            .map(|(k, v)| (k.to_string(), Json::String(v.to_string())))
            .collect()
    }
}

const DEFAULTS: [DefaultTemplate; 4] = [
    DefaultTemplate {
        name: "chatml",
        description: "ChatML, the PreTrainedTokenizerBase default (transformers' documented example template)",
        source: include_str!("../templates/chatml.jinja"),
        special_tokens: &[],
    },
    DefaultTemplate {
        name: "llama",
        description: "LlamaTokenizer default: [INST] turns, <<SYS>> system block, roles must alternate",
        source: include_str!("../templates/llama.jinja"),
        special_tokens: &[("bos_token", "<s>"), ("eos_token", "</s>"), ("unk_token", "<unk>")],
    },
    DefaultTemplate {
        name: "blenderbot",
        description: "BlenderbotTokenizer (and BlenderbotSmall) default: turns joined by spaces, then EOS",
        source: include_str!("../templates/blenderbot.jinja"),
        special_tokens: &[
            ("bos_token", "<s>"),
            ("eos_token", "</s>"),
            ("unk_token", "<unk>"),
            ("sep_token", "</s>"),
            ("pad_token", "<pad>"),
            ("cls_token", "<s>"),
            ("mask_token", "<mask>"),
        ],
    },
    DefaultTemplate {
        name: "gpt2",
        description: "GPT2Tokenizer (also Bloom, GPT-NeoX, Whisper) default: each message's content, then EOS",
        source: include_str!("../templates/gpt2.jinja"),
        special_tokens: &[
            ("bos_token", "<|endoftext|>"),
            ("eos_token", "<|endoftext|>"),
            ("unk_token", "<|endoftext|>"),
        ],
    },
];

/// All built-in templates, in a fixed order.
pub fn all() -> &'static [DefaultTemplate] {
    &DEFAULTS
}

/// The built-in template called `name`; an unknown name is [`ErrorKind::NotFound`], listing the names.
pub fn get(name: &str) -> Result<&'static DefaultTemplate, Error> {
    DEFAULTS.iter().find(|d| d.name == name).ok_or_else(|| {
        let names: Vec<&str> = DEFAULTS.iter().map(|d| d.name).collect();
        Error::new(
            ErrorKind::NotFound,
            format!("no built-in template named '{name}'; available: {}", names.join(", ")),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_sources_compile() {
        for (i, d) in DEFAULTS.iter().enumerate() {
            assert!(DEFAULTS[..i].iter().all(|e| e.name != d.name), "{} twice", d.name);
            assert!(
                d.chat_template().compile_error().is_none(),
                "{} does not compile",
                d.name
            );
            assert!(!d.source.ends_with('\n'), "{} gained a trailing newline", d.name);
        }
    }

    #[test]
    fn unknown_name_lists_the_names() {
        let e = get("chatml2").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(
            e.to_string(),
            "no built-in template named 'chatml2'; available: chatml, llama, blenderbot, gpt2"
        );
    }
}
