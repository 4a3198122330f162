//! Model sources: what a user names to choose a chat template — a model folder, a GGUF file, a Hub
//! repo id in the local Hugging Face cache, a template file or a built-in template — resolved to the
//! template, the special tokens it sees and the folder of its tokenizer. Every command resolves them
//! here, so `render`, `tokenize`, `dataset` and `check` agree on what a name means. A name that
//! resolves to nothing is an error saying what was looked for where; there is no fallback.

use crate::defaults::{self, DefaultTemplate};
use crate::template::{gguf_special_tokens, is_gguf, is_repo_id, model_dir_special_tokens};
use crate::{ApplyOptions, ChatTemplate, Error, ErrorKind, HubCache};
use serde::Serialize;
use serde_json::{Map, Value as Json};
use std::path::{Path, PathBuf};

/// A model: a folder (given, or a snapshot of the local Hugging Face cache) or a GGUF file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// A model folder: `tokenizer_config.json`, `chat_template.jinja`, `tokenizer.json`, ...
    Dir(PathBuf),
    /// A GGUF file: template and special tokens from its metadata.
    Gguf(PathBuf),
}

impl ModelSource {
    /// Resolves a model name: an existing folder (one holding no Jinja template but exactly one
    /// `.gguf` file stands for that file), a `.gguf` file, or a Hub repo id (`org/name`) found in the
    /// local Hugging Face cache of the environment. Nothing is downloaded.
    pub fn resolve(model: &str) -> Result<ModelSource, Error> {
        Self::resolve_in(model, &HubCache::from_env())
    }

    /// [`resolve`](Self::resolve) with an explicit Hugging Face cache.
    pub fn resolve_in(model: &str, cache: &HubCache) -> Result<ModelSource, Error> {
        let path = Path::new(model);
        if path.is_dir() {
            return Self::of_dir(path);
        }
        if path.is_file() {
            if is_gguf(path) {
                return Ok(ModelSource::Gguf(path.to_path_buf()));
            }
            return Err(Error::new(
                ErrorKind::Malformed,
                "a file that is not a GGUF; a model is a folder, a .gguf file or a Hub repo id (for a Jinja \
                 template file use --template FILE)",
            )
            .in_file(path));
        }
        if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf")) {
            return Err(Error::new(ErrorKind::NotFound, "no such GGUF file").in_file(path));
        }
        if !is_repo_id(model) {
            return Err(Error::new(
                ErrorKind::NotFound,
                "no such model folder or GGUF file (nor a Hub repo id org/name to look up in the local Hugging \
                 Face cache)",
            )
            .in_file(path));
        }
        Self::of_dir(&cache.snapshot(model)?)
    }

    /// A folder, or the one GGUF file of a folder that holds no Jinja template.
    fn of_dir(dir: &Path) -> Result<ModelSource, Error> {
        let folder = ModelSource::Dir(dir.to_path_buf());
        let ggufs = gguf_files(dir)?;
        // Only a folder that holds GGUF files is loaded here, to see whether it has a template too.
        if ggufs.is_empty() {
            return Ok(folder);
        }
        match ChatTemplate::from_model_dir(dir) {
            Err(e) if e.kind() == ErrorKind::NoTemplate => only_gguf(dir, ggufs),
            _ => Ok(folder),
        }
    }

    /// The folder or file.
    pub fn path(&self) -> &Path {
        match self {
            ModelSource::Dir(p) | ModelSource::Gguf(p) => p,
        }
    }

    /// The folder that holds the model's tokenizer (`tokenizer.json`), when it is a folder.
    pub fn tokenizer_dir(&self) -> Option<&Path> {
        match self {
            ModelSource::Dir(p) => Some(p),
            ModelSource::Gguf(_) => None,
        }
    }

    /// The model's own chat template(s), with its special tokens.
    pub fn chat_template(&self) -> Result<ChatTemplate, Error> {
        match self {
            ModelSource::Dir(p) => ChatTemplate::from_model_dir(p),
            ModelSource::Gguf(p) => ChatTemplate::from_gguf(p),
        }
    }

    /// The model's special tokens (for rendering it with another template).
    pub fn special_tokens(&self) -> Result<Map<String, Json>, Error> {
        match self {
            ModelSource::Dir(p) => model_dir_special_tokens(p),
            ModelSource::Gguf(p) => gguf_special_tokens(p),
        }
    }
}

/// The `.gguf` files of a folder, sorted.
fn gguf_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, "list the folder", e))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("gguf")))
        .collect();
    found.sort();
    Ok(found)
}

/// The one GGUF file of a folder without a Jinja template (a GGUF repository of the Hub holds only
/// those); several are an error listing them.
fn only_gguf(dir: &Path, mut found: Vec<PathBuf>) -> Result<ModelSource, Error> {
    if found.len() == 1 {
        if let Some(file) = found.pop() {
            return Ok(ModelSource::Gguf(file));
        }
    }
    let names: Vec<String> = found
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    Err(Error::new(
        ErrorKind::Malformed,
        format!(
            "no Jinja chat template but several GGUF files ({}); name one of them as the model",
            names.join(", ")
        ),
    )
    .in_file(dir))
}

/// Which Jinja template to render with, and whose special tokens it sees.
#[derive(Debug, Clone, Default)]
pub struct TemplateRequest {
    /// A model (see [`ModelSource::resolve`]): its template, unless one of the others replaces it,
    /// and its special tokens.
    pub model: Option<String>,
    /// A template file, replacing the model's template.
    pub template: Option<PathBuf>,
    /// A built-in template by name ([`defaults`]), replacing the model's template.
    pub default_template: Option<String>,
    /// Special tokens that replace the model's (`bos_token`, `eos_token`, ...).
    pub special_tokens: Map<String, Json>,
}

/// Where the template being used came from (`render --json`'s `template` object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TemplateInfo {
    /// `jinja` or `fastchat`.
    pub kind: &'static str,
    /// The named template used (`default`, `tool_use`, ...), the built-in template's name, or none.
    pub name: Option<String>,
    /// The file the template was read from, or `builtin`.
    pub source: String,
}

/// A resolved [`TemplateRequest`].
#[derive(Debug)]
pub struct Resolved {
    /// The template, with the special tokens it sees.
    pub template: ChatTemplate,
    /// The model, when one was named (its tokenizer, for tokenizing).
    pub model: Option<ModelSource>,
    /// The built-in template, when one was chosen.
    pub builtin: Option<&'static DefaultTemplate>,
}

impl TemplateRequest {
    /// Loads the template: a template file or built-in template wins over the model's own
    /// template; the model (when named) supplies the special tokens, and the request's replace them.
    pub fn resolve(&self) -> Result<Resolved, Error> {
        let model = self.model.as_deref().map(ModelSource::resolve).transpose()?;
        let builtin = self.default_template.as_deref().map(defaults::get).transpose()?;
        let file = match &self.template {
            Some(path) => Some((
                path,
                std::fs::read_to_string(path).map_err(|e| Error::read(path, "read the template", e))?,
            )),
            None => None,
        };
        let own_special = match (&model, builtin) {
            (Some(m), _) if file.is_some() || builtin.is_some() => m.special_tokens()?,
            (None, Some(b)) => b.special_token_map(),
            _ => Map::new(),
        };
        let template = match (file, builtin, &model) {
            (Some((path, source)), _, _) => {
                ChatTemplate::from_origin(&path.display().to_string(), &source, own_special)
            }
            (None, Some(b), _) => b.chat_template().with_special_tokens(own_special),
            (None, None, Some(m)) => m.chat_template()?,
            (None, None, None) => {
                return Err(Error::new(
                    ErrorKind::Usage,
                    "no template named: give a model, a template file or a built-in template",
                ))
            }
        };
        let template = if self.special_tokens.is_empty() {
            template
        } else {
            let mut special = template.special_tokens().clone();
            special.extend(self.special_tokens.clone());
            template.with_special_tokens(special)
        };
        Ok(Resolved {
            template,
            model,
            builtin,
        })
    }
}

impl Resolved {
    /// Which template `apply` uses with `opts`, and where it came from.
    pub fn info(&self, opts: &ApplyOptions) -> TemplateInfo {
        if let Some(b) = self.builtin.filter(|_| opts.chat_template.is_none()) {
            return TemplateInfo {
                kind: "jinja",
                name: Some(b.name.to_string()),
                source: "builtin".to_string(),
            };
        }
        let (name, origin) = self.template.selected(opts).unwrap_or((None, ""));
        TemplateInfo {
            kind: "jinja",
            name: name.map(str::to_string),
            source: origin.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/chatml-model")
    }

    #[test]
    fn a_name_that_is_nothing_is_an_error_not_a_fallback() {
        let cache = HubCache::new(std::env::temp_dir().join("chatfmt-no-such-cache"));
        for name in [
            "./models/Llama-3.1-8B-Instruct",
            "qwen",
            "nope.gguf",
            "org/absent-model",
        ] {
            let e = ModelSource::resolve_in(name, &cache).expect_err(name);
            assert_eq!(e.kind(), ErrorKind::NotFound, "{name}: {e}");
        }
    }

    #[test]
    fn a_template_file_replaces_the_model_template_and_keeps_its_tokens() {
        let dir = std::env::temp_dir().join(format!("chatfmt-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.jinja");
        std::fs::write(&file, "{{ eos_token }}{{ messages[0].content }}").unwrap();
        let req = TemplateRequest {
            model: Some(example().display().to_string()),
            template: Some(file.clone()),
            ..Default::default()
        };
        let r = req.resolve().unwrap();
        let msgs = [serde_json::json!({"role": "user", "content": "hi"})];
        assert_eq!(
            r.template.apply(&msgs, &Default::default()).unwrap().text,
            "<|im_end|>hi"
        );
        assert_eq!(r.info(&Default::default()).source, file.display().to_string());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
