//! Model-path matching: which FastChat model adapter claims a model path, and which
//! conversation template that adapter picks.
//!
//! FastChat tries its adapters in registration order, first on the last component of the
//! normalised path (skipping the catch-all base adapter), then on the full path; the chosen
//! adapter picks the template from the full path. The rules (`rules.rs`) restate FastChat's
//! `model_adapter.py` (reference commit 0e6d3e4) adapter by adapter; order decides overlaps.

mod rules;

pub use rules::{Adapter, ADAPTERS, ANTHROPIC_MODELS, OPENAI_MODELS};

use super::error::{Error, ErrorKind, Result};
use super::record::Conversation;
use super::registry::get_conv_template;
use rules::{has, Choice, Pick, PEFT_INDEX};
use std::path::Path;

/// Which part of the model path an adapter matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchedOn {
    /// The last component of the normalised path.
    Basename,
    /// The whole path, as given.
    FullPath,
}

/// The outcome of matching a model path.
#[derive(Debug, Clone)]
pub struct AdapterMatch {
    /// FastChat's class name of the chosen adapter.
    pub adapter: &'static str,
    /// Its position in the adapter registry.
    pub index: usize,
    /// Whether it matched the basename or the full path.
    pub matched_on: MatchedOn,
    /// The chosen template's name, or why none could be chosen (PEFT configuration errors).
    pub template: Result<String>,
    /// A warning FastChat prints for this choice, if any.
    pub warning: Option<&'static str>,
}

/// Matches `model_path` as FastChat does, resolving relative paths (for PEFT folders) against
/// the current directory.
pub fn match_model(model_path: &str) -> AdapterMatch {
    match_model_in(model_path, Path::new("."))
}

/// Matches `model_path` as FastChat does, resolving relative paths against `dir`.
pub fn match_model_in(model_path: &str, dir: &Path) -> AdapterMatch {
    let (index, matched_on) = find_adapter(model_path, dir);
    let (template, warning) = match choose_template(index, model_path, dir, 0) {
        Ok((name, warning)) => (Ok(name.to_owned()), warning),
        Err(e) => (Err(e), None),
    };
    AdapterMatch {
        adapter: ADAPTERS[index].class,
        index,
        matched_on,
        template,
        warning,
    }
}

/// The conversation template FastChat uses for `model_path` (a fresh copy).
pub fn get_conversation_template(model_path: &str) -> Result<Conversation> {
    let found = match_model(model_path);
    get_conv_template(&found.template?)
}

/// The indices of every adapter whose rule accepts `candidate` (for diagnostics and tests).
pub fn matching_adapters(candidate: &str, dir: &Path) -> Vec<usize> {
    (0..ADAPTERS.len())
        .filter(|&i| adapter_matches(i, candidate, dir))
        .collect()
}

fn adapter_matches(index: usize, candidate: &str, dir: &Path) -> bool {
    if index == PEFT_INDEX {
        return dir.join(candidate).join("adapter_config.json").exists() || has(candidate, "peft");
    }
    (ADAPTERS[index].matches)(candidate)
}

fn find_adapter(model_path: &str, dir: &Path) -> (usize, MatchedOn) {
    let base = basename(&normpath(model_path)).to_owned();
    let last = ADAPTERS.len() - 1;
    if let Some(i) = (0..last).find(|&i| adapter_matches(i, &base, dir)) {
        return (i, MatchedOn::Basename);
    }
    let i = (0..ADAPTERS.len())
        .find(|&i| adapter_matches(i, model_path, dir))
        .unwrap_or(last);
    (i, MatchedOn::FullPath)
}

const MAX_PEFT_DEPTH: usize = 8;

fn choose_template(
    index: usize,
    model_path: &str,
    dir: &Path,
    depth: usize,
) -> Result<(&'static str, Option<&'static str>)> {
    match &ADAPTERS[index].choice {
        Choice::Fixed(name) => Ok((name, None)),
        Choice::Rule(rule) => {
            let Pick(name, warning) = rule(model_path);
            Ok((name, warning))
        }
        Choice::Peft => {
            let base = peft_base_model(model_path, dir)?;
            if base.contains("peft") {
                return Err(Error::new(
                    ErrorKind::PeftBaseModel,
                    format!("PeftModelAdapter cannot load a base model with 'peft' in the name: {base}"),
                ));
            }
            if depth >= MAX_PEFT_DEPTH {
                return Err(Error::new(
                    ErrorKind::PeftConfig,
                    format!("PEFT adapters nest more than {MAX_PEFT_DEPTH} levels deep at {model_path:?}"),
                ));
            }
            let (base_index, _) = find_adapter(&base, dir);
            choose_template(base_index, &base, dir, depth + 1)
        }
    }
}

fn peft_base_model(model_path: &str, dir: &Path) -> Result<String> {
    let missing = || {
        Error::new(
            ErrorKind::PeftConfig,
            format!("Can't find 'adapter_config.json' at '{model_path}'"),
        )
    };
    let file = dir.join(model_path).join("adapter_config.json");
    let text = std::fs::read_to_string(&file).map_err(|_| missing())?;
    let config: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::new(ErrorKind::PeftConfig, format!("{}: invalid JSON: {e}", file.display())))?;
    config
        .get("base_model_name_or_path")
        .and_then(|v| v.as_str())
        .map(str::to_owned)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::PeftConfig,
                format!("{}: no string base_model_name_or_path", file.display()),
            )
        })
}

/// POSIX `os.path.normpath`.
fn normpath(path: &str) -> String {
    if path.is_empty() {
        return ".".to_owned();
    }
    let leading = path.len() - path.trim_start_matches('/').len();
    let prefix = match leading {
        0 => "",
        2 => "//",
        _ => "/",
    };
    let mut parts: Vec<&str> = Vec::new();
    for comp in path.split('/') {
        match comp {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if !prefix.is_empty() => {}
            other => parts.push(other),
        }
    }
    let joined = prefix.to_owned() + &parts.join("/");
    if joined.is_empty() {
        ".".to_owned()
    } else {
        joined
    }
}

/// POSIX `os.path.basename`.
fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normpath_like_posix() {
        assert_eq!(normpath("lmsys/vicuna-7b-v1.5//"), "lmsys/vicuna-7b-v1.5");
        assert_eq!(normpath("./local/x"), "local/x");
        assert_eq!(normpath(""), ".");
        assert_eq!(normpath("/a/../../b"), "/b");
        assert_eq!(normpath("a/../../b"), "../b");
    }

    #[test]
    fn registry_has_101_adapters_ending_with_the_catch_all() {
        assert_eq!(ADAPTERS.len(), 101);
        assert_eq!(ADAPTERS[100].class, "BaseModelAdapter");
    }
}
