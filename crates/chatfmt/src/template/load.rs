//! Loading a model folder's chat template(s) and special tokens, with transformers' priority:
//! the template files `chat_template.jinja` and `additional_chat_templates/*.jinja` (when any
//! exists, nothing else is read), then `chat_template.json`, then the `chat_template` key of
//! `tokenizer_config.json`.

use super::ChatTemplate;
use crate::json_input::Root;
use crate::{Error, ErrorKind};
use serde_json::{Map, Value as Json};
use std::path::{Path, PathBuf};

/// A JSON file, or `None` when it does not exist.
pub(crate) fn read_json(path: &Path) -> Result<Option<Json>, Error> {
    if !path.exists() {
        return Ok(None);
    }
    let text = read_text(path)?;
    crate::json_input::parse(&text, "", Root::File(""))
        .map(Some)
        .map_err(|e| e.in_file(path).advise("fix the file or download it again"))
}

/// The special tokens transformers passes to a template by name.
pub(crate) const SPECIAL_TOKEN_KEYS: [&str; 7] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

/// The special tokens of a `tokenizer_config.json` that transformers 5 passes to templates: the seven
/// named ones (not `additional_special_tokens`), as strings (`{"content": ...}` objects unwrapped).
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
    out
}

fn read_text(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| Error::read(path, "read the file", e))
}

/// The named templates of a `chat_template` value: a string, or a list of `{name, template}`.
pub(super) fn templates_of(value: &Json, path: &Path) -> Result<Vec<(String, String)>, Error> {
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
                    _ => Err(Error::new(
                        ErrorKind::Malformed,
                        "chat_template list entries need string \"name\" and \"template\" fields",
                    )
                    .in_file(path)),
                }
            })
            .collect(),
        _ => Err(Error::new(
            ErrorKind::Malformed,
            "chat_template must be a string or a list of {\"name\", \"template\"}",
        )
        .in_file(path)),
    }
}

/// The `tokenizer_config.json` of a model folder (`null` when it has none), and its path.
fn read_config(dir: &Path) -> Result<(PathBuf, Json), Error> {
    if !dir.is_dir() {
        return Err(Error::new(ErrorKind::NotFound, "no such model folder").in_file(dir));
    }
    let config_path = dir.join("tokenizer_config.json");
    let config = read_json(&config_path)?.unwrap_or(Json::Null);
    Ok((config_path, config))
}

/// The special tokens of a model folder's `tokenizer_config.json`, whether or not it has a chat
/// template (for rendering it with another template).
pub fn model_dir_special_tokens(dir: &Path) -> Result<Map<String, Json>, Error> {
    Ok(special_tokens(&read_config(dir)?.1))
}

impl ChatTemplate {
    /// Loads the chat template(s) and special tokens of a model folder.
    pub fn from_model_dir(dir: &Path) -> Result<ChatTemplate, Error> {
        let (config_path, config) = read_config(dir)?;
        let special = special_tokens(&config);
        // (name, origin, source); an empty name is the single unnamed template.
        let mut named: Vec<(String, String, String)> = Vec::new();
        let jinja = dir.join("chat_template.jinja");
        let json = dir.join("chat_template.json");
        let with_origin = |list: Vec<(String, String)>, path: &Path| -> Vec<(String, String, String)> {
            list.into_iter()
                .map(|(n, s)| (n, path.display().to_string(), s))
                .collect()
        };
        // Template files take priority: when any exists, the other sources are not read.
        if jinja.exists() {
            named.push((String::new(), jinja.display().to_string(), read_text(&jinja)?));
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
                named.push((name, f.display().to_string(), read_text(&f)?));
            }
        }
        if named.is_empty() {
            if let Some(v) = read_json(&json)? {
                named = with_origin(
                    templates_of(v.get("chat_template").unwrap_or(&Json::Null), &json)?,
                    &json,
                );
            } else if let Some(v) = config.get("chat_template") {
                named = with_origin(templates_of(v, &config_path)?, &config_path);
            }
        }
        match named.as_slice() {
            [] => Err(Error::new(
                ErrorKind::NoTemplate,
                "no chat template found; looked for chat_template.jinja, chat_template.json, \
                 additional_chat_templates/*.jinja and the chat_template key of tokenizer_config.json",
            )
            .in_file(dir)),
            [(name, origin, source)] if name.is_empty() => Ok(ChatTemplate::from_origin(origin, source, special)),
            _ => Ok(ChatTemplate::named_from_origins(
                named.iter().map(|(n, o, s)| {
                    (
                        if n.is_empty() { "default" } else { n.as_str() },
                        o.as_str(),
                        s.as_str(),
                    )
                }),
                special,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Template files win over the config's key even when only named ones exist, as in transformers 5.
    #[test]
    fn template_files_hide_the_config_key() {
        let dir = std::env::temp_dir().join(format!("chatfmt-load-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("additional_chat_templates")).unwrap();
        std::fs::write(dir.join("tokenizer_config.json"), r#"{"chat_template": "config"}"#).unwrap();
        std::fs::write(dir.join("additional_chat_templates/tool_use.jinja"), "tools").unwrap();
        let t = ChatTemplate::from_model_dir(&dir).unwrap();
        assert_eq!(t.names(), ["tool_use"]);
        let msgs = [serde_json::json!({"role": "user", "content": "hi"})];
        let e = t.apply(&msgs, &Default::default()).unwrap_err();
        assert!(e.message().contains("multiple chat templates with no default"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
