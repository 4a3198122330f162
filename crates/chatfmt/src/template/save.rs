//! Saving a chat template into a model folder as transformers' `save_pretrained` does.
//!
//! transformers 5 writes the main template to `chat_template.jinja` and the other named templates to
//! `additional_chat_templates/NAME.jinja` (UTF-8, exactly the source: no newline added), and drops a
//! `chat_template` key from `tokenizer_config.json`. The legacy layout (transformers 4 with
//! `save_jinja_files=False`) stores them in `tokenizer_config.json` instead: a string, or a list of
//! `{"name", "template"}` when there are named templates. The folder's other templates are kept and
//! moved into the layout written. `tokenizer_config.json` is edited as text, so every other byte of it
//! stays; each file is replaced atomically.

use super::json_members::{remove_member, set_member};
use super::load::templates_of;
use crate::json_input::{parse, Root};
use crate::{Error, ErrorKind};
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::{Path, PathBuf};

const CONFIG: &str = "tokenizer_config.json";
const MAIN: &str = "chat_template.jinja";
const EXTRA_DIR: &str = "additional_chat_templates";
const KEY: &str = "chat_template";

/// Where [`save_template`] stores the templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveLayout {
    /// transformers 5: `chat_template.jinja` and `additional_chat_templates/NAME.jinja`.
    Jinja,
    /// transformers 4's legacy form: the `chat_template` key of `tokenizer_config.json`.
    Legacy,
}

/// The files a save wrote and removed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Saved {
    /// Files written (created or replaced).
    pub written: Vec<PathBuf>,
    /// Template files removed because their templates moved into `tokenizer_config.json`.
    pub removed: Vec<PathBuf>,
}

/// A folder's templates as transformers holds them: one string, or named ones in order.
enum Held {
    Single(String),
    Named(Vec<(String, String)>),
}

/// Saves `source` as the template `name` (`"default"` is the main one) of the model folder `dir`.
///
/// The template must compile; the folder's other templates are kept. Errors before anything is
/// written leave the folder unchanged: every error but one of kind [`ErrorKind::Io`].
///
/// ```
/// use chatfmt::template::{save_template, SaveLayout};
/// use chatfmt::ChatTemplate;
///
/// let dir = std::env::temp_dir().join(format!("chatfmt-save-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// save_template(&dir, "default", "{{ messages[0]['content'] }}", SaveLayout::Jinja)?;
/// assert!(dir.join("chat_template.jinja").is_file());
/// let template = ChatTemplate::from_model_dir(&dir)?;
/// assert!(template.names().is_empty());
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_template(dir: &Path, name: &str, source: &str, layout: SaveLayout) -> Result<Saved, Error> {
    if !dir.is_dir() {
        return Err(Error::new(
            ErrorKind::NotFound,
            "no such model folder; create it or name an existing one",
        )
        .in_file(dir));
    }
    check_name(dir, name)?;
    if let Err(e) = chatfmt_jinja::Template::new(name, source) {
        let mut err = Error::new(ErrorKind::Template, "the template does not compile").in_file(dir);
        if let Some(line) = e.line() {
            err = err.at(line as usize, e.column().unwrap_or(0) as usize);
        }
        return Err(err.caused_by(e));
    }
    let config_path = dir.join(CONFIG);
    let config = read_config(&config_path)?;
    let (files, held) = read_templates(dir, &config_path, config.as_ref().map(|c| &c.1))?;
    let held = with_template(held, name, source);
    match layout {
        SaveLayout::Jinja => save_jinja(dir, &config_path, config.map(|c| c.0), held),
        SaveLayout::Legacy => save_legacy(dir, &config_path, config.map(|c| c.0), held, files),
    }
}

/// Refuses names that are not plain file names (transformers refuses path traversal).
fn check_name(dir: &Path, name: &str) -> Result<(), Error> {
    let bad = name.is_empty() || name.starts_with('.') || name.chars().any(|c| c == '/' || c == '\\' || c.is_control());
    if bad {
        return Err(Error::new(
            ErrorKind::InvalidName,
            format!("{name:?} cannot be a template name: use a plain file name (letters, digits, `_`, `-`)"),
        )
        .in_file(dir));
    }
    Ok(())
}

/// `tokenizer_config.json`'s text and value, if the folder has one.
fn read_config(path: &Path) -> Result<Option<(String, Json)>, Error> {
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the file", e))?;
    let value = parse(&text, "", Root::File("")).map_err(|e| e.in_file(path).advise("fix the file first"))?;
    if !value.is_object() {
        return Err(Error::new(
            ErrorKind::Malformed,
            "the file must hold a JSON object; fix the file first",
        )
        .in_file(path));
    }
    Ok(Some((text, value)))
}

/// The folder's templates as transformers 5 loads them: the Jinja files if there are any (the main
/// one first, the others by name), else the config's `chat_template`. Also the Jinja files read.
fn read_templates(
    dir: &Path,
    config_path: &Path,
    config: Option<&Json>,
) -> Result<(Vec<PathBuf>, Option<Held>), Error> {
    let read = |path: &Path| std::fs::read_to_string(path).map_err(|e| Error::io(path, "read the file", e));
    let mut files = Vec::new();
    let mut named = Vec::new();
    let main = dir.join(MAIN);
    if main.is_file() {
        named.push(("default".to_string(), read(&main)?));
        files.push(main);
    }
    let extra = dir.join(EXTRA_DIR);
    if extra.is_dir() {
        let entries = std::fs::read_dir(&extra).map_err(|e| Error::io(&extra, "list the folder", e))?;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jinja"))
            .collect();
        paths.sort();
        for path in paths {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            named.push((name, read(&path)?));
            files.push(path);
        }
    }
    let held = match named.as_slice() {
        [] => match config.and_then(|c| c.get(KEY)) {
            None | Some(Json::Null) => None,
            Some(Json::String(s)) => Some(Held::Single(s.clone())),
            Some(value) => Some(Held::Named(templates_of(value, config_path)?)),
        },
        [(name, _)] if name == "default" => named.pop().map(|(_, s)| Held::Single(s)),
        _ => Some(Held::Named(named)),
    };
    Ok((files, held))
}

/// The templates after setting `name`, as assigning them to a loaded tokenizer would leave them.
fn with_template(held: Option<Held>, name: &str, source: &str) -> Held {
    let mut named = match held {
        Some(Held::Named(named)) => named,
        _ if name == "default" => return Held::Single(source.to_string()),
        Some(Held::Single(main)) => vec![("default".to_string(), main)],
        None => Vec::new(),
    };
    match named.iter_mut().find(|(n, _)| n == name) {
        Some(entry) => entry.1 = source.to_string(),
        None => named.push((name.to_string(), source.to_string())),
    }
    Held::Named(named)
}

fn save_jinja(dir: &Path, config_path: &Path, config: Option<String>, held: Held) -> Result<Saved, Error> {
    let named = match held {
        Held::Single(source) => vec![("default".to_string(), source)],
        Held::Named(named) => named,
    };
    let mut saved = Saved::default();
    for (name, source) in &named {
        let path = if name == "default" {
            dir.join(MAIN)
        } else {
            let extra = dir.join(EXTRA_DIR);
            std::fs::create_dir_all(&extra).map_err(|e| Error::io(&extra, "create the folder", e))?;
            extra.join(format!("{name}.jinja"))
        };
        if std::fs::read(&path).ok().as_deref() != Some(source.as_bytes()) {
            write_atomic(&path, source.as_bytes())?;
            saved.written.push(path);
        }
    }
    if let Some(text) = config {
        let edited = remove_member(&text, KEY).ok_or_else(|| not_an_object(config_path))?;
        if edited != text {
            write_atomic(config_path, edited.as_bytes())?;
            saved.written.push(config_path.to_path_buf());
        }
    }
    Ok(saved)
}

fn save_legacy(
    dir: &Path,
    config_path: &Path,
    config: Option<String>,
    held: Held,
    files: Vec<PathBuf>,
) -> Result<Saved, Error> {
    let processor = dir.join("chat_template.json");
    if processor.exists() {
        return Err(Error::new(
            ErrorKind::Conflict,
            "this file's template takes priority over tokenizer_config.json; remove it or save without the legacy layout",
        )
        .in_file(&processor));
    }
    let value = match held {
        Held::Single(source) => Json::String(source),
        Held::Named(named) => Json::Array(
            named
                .into_iter()
                .map(|(name, template)| json!({"name": name, "template": template}))
                .collect(),
        ),
    };
    let text = config.unwrap_or_else(|| "{}\n".to_string());
    let edited = set_member(&text, KEY, &value).ok_or_else(|| not_an_object(config_path))?;
    write_atomic(config_path, edited.as_bytes())?;
    let mut saved = Saved {
        written: vec![config_path.to_path_buf()],
        removed: Vec::new(),
    };
    for file in files {
        std::fs::remove_file(&file).map_err(|e| Error::io(&file, "remove the file", e))?;
        saved.removed.push(file);
    }
    // The folder goes only if it is now empty.
    let _ = std::fs::remove_dir(dir.join(EXTRA_DIR));
    Ok(saved)
}

fn not_an_object(path: &Path) -> Error {
    Error::new(
        ErrorKind::Malformed,
        "the file must hold one JSON object; fix the file first",
    )
    .in_file(path)
}

/// Writes `bytes` to a new file next to `path`, then renames it over `path`.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let folder = path.parent().unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = folder.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| Error::io(&temp, "create a temporary file", e))?;
    // A replaced file keeps its permissions.
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = file.set_permissions(meta.permissions());
    }
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        Error::io(path, "write the file", e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_have_a_kind_and_leave_the_folder_alone() {
        let dir = std::env::temp_dir().join(format!("chatfmt-save-kinds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let e = save_template(&dir, "default", "{{ x }\n{% for %}", SaveLayout::Jinja).expect_err("refused");
        assert_eq!((e.kind(), e.path()), (ErrorKind::Template, Some(dir.as_path())));
        let engine = e.template_error().expect("the engine's error is the source");
        assert_eq!(engine.kind().python_name(), "TemplateSyntaxError");
        assert_eq!(e.line(), engine.line().map(|l| l as usize));
        let e = save_template(&dir, "../up", "x", SaveLayout::Jinja).expect_err("refused");
        assert_eq!(e.kind(), ErrorKind::InvalidName);
        std::fs::write(dir.join(CONFIG), "{\"a\": [1 2]}").expect("write");
        let e = save_template(&dir, "default", "x", SaveLayout::Legacy).expect_err("refused");
        assert_eq!(
            (e.kind(), e.line(), e.json_path()),
            (ErrorKind::Malformed, Some(1), Some("a[0]"))
        );
        std::fs::write(dir.join("chat_template.json"), "{}").expect("write");
        std::fs::write(dir.join(CONFIG), "{}").expect("write");
        let e = save_template(&dir, "default", "x", SaveLayout::Legacy).expect_err("refused");
        assert_eq!(e.kind(), ErrorKind::Conflict);
        let names: Vec<_> = std::fs::read_dir(&dir).expect("list").filter_map(|e| e.ok()).collect();
        assert_eq!(names.len(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_config_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("chatfmt-save-perms-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let config = dir.join(CONFIG);
        std::fs::write(
            &config,
            "{\n  \"chat_template\": \"x\",\n  \"eos_token\": \"</s>\"\n}\n",
        )
        .expect("write");
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        let saved = save_template(&dir, "default", "y", SaveLayout::Jinja).expect("saved");
        assert_eq!(saved.written, [dir.join(MAIN), config.clone()]);
        let mode = std::fs::metadata(&config).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        assert_eq!(
            std::fs::read_to_string(&config).expect("read"),
            "{\n  \"eos_token\": \"</s>\"\n}\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
