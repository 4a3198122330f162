//! Loading a model folder's chat template(s) and special tokens, with transformers' priority:
//! `chat_template.jinja` (plus `additional_chat_templates/*.jinja`), then `chat_template.json`,
//! then the `chat_template` key of `tokenizer_config.json`.

use super::ChatTemplate;
use serde_json::{Map, Value as Json};
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a model folder could not be loaded.
#[derive(Debug)]
pub struct LoadError {
    /// The file (or folder) concerned.
    pub path: PathBuf,
    /// What went wrong and what to do.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for LoadError {}

fn read_json(path: &Path) -> Result<Option<Json>, LoadError> {
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).map_err(|e| LoadError {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    serde_json::from_str(&text).map(Some).map_err(|e| LoadError {
        path: path.to_path_buf(),
        message: format!("malformed JSON at line {}, column {}: {e}", e.line(), e.column()),
    })
}

const SPECIAL_TOKEN_KEYS: [&str; 7] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

/// The special tokens of a `tokenizer_config.json`, as strings (`{"content": ...}` objects unwrapped).
pub fn special_tokens(config: &Json) -> Map<String, Json> {
    let content = |v: &Json| match v {
        Json::String(s) => Some(Json::String(s.clone())),
        Json::Object(o) => o.get("content").filter(|c| c.is_string()).cloned(),
        _ => None,
    };
    let mut out = Map::new();
    for key in SPECIAL_TOKEN_KEYS {
        if let Some(v) = config.get(key).and_then(content) {
            out.insert(key.to_string(), v);
        }
    }
    if let Some(extra) = config.get("additional_special_tokens").and_then(Json::as_array) {
        let list: Vec<Json> = extra.iter().filter_map(content).collect();
        if !list.is_empty() {
            out.insert("additional_special_tokens".to_string(), Json::Array(list));
        }
    }
    out
}

fn read_text(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|e| LoadError {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The named templates of a `chat_template` value: a string, or a list of `{name, template}`.
fn templates_of(value: &Json, path: &Path) -> Result<Vec<(String, String)>, LoadError> {
    match value {
        Json::String(s) => Ok(vec![(String::new(), s.clone())]),
        Json::Array(items) => items
            .iter()
            .map(|i| {
                match (
                    i.get("name").and_then(Json::as_str),
                    i.get("template").and_then(Json::as_str),
                ) {
                    (Some(n), Some(t)) => Ok((n.to_string(), t.to_string())),
                    _ => Err(LoadError {
                        path: path.to_path_buf(),
                        message: "chat_template list entries need string \"name\" and \"template\" fields".into(),
                    }),
                }
            })
            .collect(),
        _ => Err(LoadError {
            path: path.to_path_buf(),
            message: "chat_template must be a string or a list of {\"name\", \"template\"}".into(),
        }),
    }
}

impl ChatTemplate {
    /// Loads the chat template(s) and special tokens of a model folder.
    pub fn from_model_dir(dir: &Path) -> Result<ChatTemplate, LoadError> {
        let config_path = dir.join("tokenizer_config.json");
        let config = read_json(&config_path)?.unwrap_or(Json::Null);
        let special = special_tokens(&config);
        let mut named: Vec<(String, String)> = Vec::new();
        let jinja = dir.join("chat_template.jinja");
        let json = dir.join("chat_template.json");
        if jinja.exists() {
            named.push((String::new(), read_text(&jinja)?));
        } else if let Some(v) = read_json(&json)? {
            named = templates_of(v.get("chat_template").unwrap_or(&Json::Null), &json)?;
        } else if let Some(v) = config.get("chat_template") {
            named = templates_of(v, &config_path)?;
        }
        let extra_dir = dir.join("additional_chat_templates");
        if let Ok(entries) = std::fs::read_dir(&extra_dir) {
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jinja"))
                .collect();
            files.sort();
            for f in files {
                let name = f
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                named.push((name, read_text(&f)?));
            }
        }
        match named.as_slice() {
            [] => Err(LoadError {
                path: dir.to_path_buf(),
                message: "no chat template found; looked for chat_template.jinja, chat_template.json, \
                          additional_chat_templates/*.jinja and the chat_template key of tokenizer_config.json"
                    .into(),
            }),
            [(name, source)] if name.is_empty() => Ok(ChatTemplate::new(source, special)),
            _ => Ok(ChatTemplate::named(
                named
                    .iter()
                    .map(|(n, s)| (if n.is_empty() { "default" } else { n.as_str() }, s.as_str())),
                special,
            )),
        }
    }
}
