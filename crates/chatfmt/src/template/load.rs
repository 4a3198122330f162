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

/// The special tokens transformers 5 passes to templates (`special_tokens_map`), as strings: the seven
/// named ones, then the model-specific ones (`image_token` and any other `*_token` key whose value is a
/// string or an `AddedToken`, and the entries of an `extra_special_tokens` object). A config without
/// `added_tokens_decoder` is a legacy one: the folder's `special_tokens_map.json` (`legacy_map`) is
/// merged over it first, as `from_pretrained` does, where a config's own string wins over the map's for
/// a model-specific token and the map's wins for a named one.
fn special_tokens(config: &Json, legacy_map: Option<&Json>) -> Map<String, Json> {
    let empty = Map::new();
    let mut init = config.as_object().unwrap_or(&empty).clone();
    let named = |k: &str| SPECIAL_TOKEN_KEYS.contains(&k);
    if init.contains_key("additional_special_tokens")
        && !init
            .get("extra_special_tokens")
            .is_some_and(crate::json_input::py_truthy)
    {
        if let Some(v) = init.shift_remove("additional_special_tokens") {
            init.insert("extra_special_tokens".into(), v);
        }
    }
    // Model-specific tokens given as strings, and an `extra_special_tokens` object, are taken first.
    let mut explicit = Map::new();
    let strings: Vec<String> = (init.iter())
        .filter(|(k, v)| !named(k) && k.ends_with("_token") && v.is_string())
        .map(|(k, _)| k.clone())
        .collect();
    for k in strings {
        if let Some(v) = init.shift_remove(&k) {
            explicit.insert(k, v);
        }
    }
    let take_extra = |init: &mut Map<String, Json>, explicit: &mut Map<String, Json>| {
        if let Some(Json::Object(extra)) = init.get("extra_special_tokens").cloned() {
            init.shift_remove("extra_special_tokens");
            explicit.extend(extra);
        }
    };
    take_extra(&mut init, &mut explicit);
    if let (false, Some(Json::Object(map))) = (init.contains_key("added_tokens_decoder"), legacy_map) {
        for (k, v) in map {
            let v = match v {
                // An object becomes an AddedToken, whatever its `__type`.
                Json::Object(o) if k != "extra_special_tokens" => match o.get("content") {
                    Some(Json::String(c)) => Json::String(c.clone()),
                    _ => continue,
                },
                other => other.clone(),
            };
            init.insert(k.clone(), v);
        }
        take_extra(&mut init, &mut explicit);
    }
    // The value a token attribute takes: a string, or an object saved as an AddedToken.
    let token = |v: &Json| match v {
        Json::String(s) => Some(s.clone()),
        Json::Object(o) if o.get("__type").and_then(Json::as_str) == Some("AddedToken") => {
            o.get("content").and_then(Json::as_str).map(str::to_string)
        }
        _ => None,
    };
    let mut out = Map::new();
    for key in SPECIAL_TOKEN_KEYS {
        // A named token given as a plain object is read by its `content` too.
        let content = init
            .get(key)
            .and_then(|v| token(v).or_else(|| v.get("content")?.as_str().map(str::to_string)));
        if let Some(c) = content {
            out.insert(key.to_string(), Json::String(c));
        }
    }
    let auto = (init.iter()).filter(|(k, _)| !named(k) && k.ends_with("_token"));
    let mut model_specific: Map<String, Json> = auto
        .filter_map(|(k, v)| token(v).map(|c| (k.clone(), Json::String(c))))
        .collect();
    for (k, v) in explicit {
        if let Some(c) = token(&v) {
            model_specific.insert(k, Json::String(c));
        }
    }
    for (k, v) in model_specific {
        out.entry(k).or_insert(v);
    }
    out
}

/// The special tokens transformers 5 passes to the templates of a model folder whose
/// `tokenizer_config.json` is `config`, with the folder's `special_tokens_map.json` when the config is
/// a legacy one (see `special_tokens`).
pub fn folder_special_tokens(dir: &Path, config: &Json) -> Result<Map<String, Json>, Error> {
    let map = match config.get("added_tokens_decoder") {
        Some(_) => None,
        None => read_json(&dir.join("special_tokens_map.json"))?,
    };
    Ok(special_tokens(config, map.as_ref()))
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
    folder_special_tokens(dir, &read_config(dir)?.1)
}

impl ChatTemplate {
    /// Loads the chat template(s) and special tokens of a model folder.
    pub fn from_model_dir(dir: &Path) -> Result<ChatTemplate, Error> {
        let (config_path, config) = read_config(dir)?;
        let special = folder_special_tokens(dir, &config)?;
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
