//! The models a server serves, loaded once at start: template, tokenizer (when the folder has
//! `tokenizer.json`), `max_model_len` and stop strings.

use crate::api::ApiError;
use crate::config::ModelSpec;
use crate::error::{Error, ErrorKind};
use axum::http::StatusCode;
use chatfmt::masks::stop_markers;
use chatfmt::{ModelSource, Resolved, TemplateRequest};
use chatfmt_tokenize::ChatTokenizer;
use serde_json::Value as Json;
use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// One loaded model.
pub struct Model {
    /// The served name.
    pub name: String,
    /// The source as given.
    pub source: String,
    pub resolved: Resolved,
    pub tokenizer: Option<ChatTokenizer>,
    pub max_model_len: Option<u64>,
    /// The strings that end the model's turn.
    pub stop: Vec<String>,
    /// When it was loaded (Unix seconds).
    pub created: u64,
}

/// `model_max_length` values at or above this mean "no limit" (transformers' huge sentinel).
const NO_LIMIT: u64 = 1_000_000_000_000;

impl Model {
    fn load(spec: &ModelSpec, max_model_len: Option<u64>) -> Result<Model, Error> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            Error::new(ErrorKind::Model, format!("--model {}: {what}: {e}", spec.source))
        };
        let request = TemplateRequest {
            model: Some(spec.source.clone()),
            ..TemplateRequest::default()
        };
        let resolved = request
            .resolve()
            .map_err(|e| fail("no chat template", &e).with_source(e))?;
        let dir = match &resolved.model {
            Some(ModelSource::Dir(d)) => Some(d.clone()),
            _ => None,
        };
        let tokenizer = match &dir {
            Some(d) if d.join("tokenizer.json").is_file() => Some(
                ChatTokenizer::from_model_dir(d).map_err(|e| fail("the tokenizer does not load", &e).with_source(e))?,
            ),
            _ => None,
        };
        let eos = resolved
            .template
            .special_tokens()
            .get("eos_token")
            .and_then(Json::as_str);
        let stop = stop_markers(dir.as_deref(), eos, &[]).map_err(|e| fail("stop strings", &e).with_source(e))?;
        let max_model_len = max_model_len.or_else(|| dir.as_deref().and_then(configured_length));
        let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Ok(Model {
            name: spec.name.clone(),
            source: spec.source.clone(),
            resolved,
            tokenizer,
            max_model_len,
            stop,
            created,
        })
    }

    /// The tokenizer, or a 400 saying the model has none.
    pub fn tokenizer(&self) -> Result<&ChatTokenizer, ApiError> {
        self.tokenizer.as_ref().ok_or_else(|| {
            ApiError::bad(
                format!(
                    "model '{}' has no tokenizer (its folder has no tokenizer.json): it can only render",
                    self.name
                ),
                Some("body.model"),
            )
        })
    }
}

/// `config.json`'s `max_position_embeddings`, else `tokenizer_config.json`'s `model_max_length` when
/// it is a real limit.
fn configured_length(dir: &Path) -> Option<u64> {
    let read = |name: &str| -> Option<Json> {
        let text = std::fs::read_to_string(dir.join(name)).ok()?;
        serde_json::from_str(&text).ok()
    };
    if let Some(n) = read("config.json").and_then(|c| c["max_position_embeddings"].as_u64()) {
        return Some(n);
    }
    let config = read("tokenizer_config.json")?;
    let n = config["model_max_length"].as_f64()?;
    (n >= 0.0 && n < NO_LIMIT as f64).then_some(n as u64)
}

/// Every served model, by name.
pub struct Models {
    list: Vec<Arc<Model>>,
}

impl Models {
    /// Loads every model; two with one name are an error.
    pub fn load(specs: &[ModelSpec], max_model_len: Option<u64>) -> Result<Models, Error> {
        if specs.is_empty() {
            return Err(Error::new(
                ErrorKind::Config,
                "no model to serve: give --model [NAME=]SOURCE",
            ));
        }
        let mut list: Vec<Arc<Model>> = Vec::with_capacity(specs.len());
        for spec in specs {
            if list.iter().any(|m| m.name == spec.name) {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!(
                        "two models are named '{}'; name them with --model NAME=SOURCE",
                        spec.name
                    ),
                ));
            }
            list.push(Arc::new(Model::load(spec, max_model_len)?));
        }
        Ok(Models { list })
    }

    pub fn all(&self) -> &[Arc<Model>] {
        &self.list
    }

    /// The model a request names, or the only one when it names none.
    pub fn get(&self, name: Option<&str>) -> Result<Arc<Model>, ApiError> {
        let names = || {
            self.list
                .iter()
                .map(|m| format!("'{}'", m.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match name {
            Some(n) => self.list.iter().find(|m| m.name == n).cloned().ok_or_else(|| ApiError {
                param: Some("body.model".to_string()),
                ..ApiError::new(
                    StatusCode::NOT_FOUND,
                    "model_not_found",
                    format!("The model '{n}' does not exist. Loaded models: {}", names()),
                )
            }),
            None if self.list.len() == 1 => Ok(self.list[0].clone()),
            None => Err(ApiError::bad(
                format!("several models are loaded; name one in \"model\": {}", names()),
                Some("body.model"),
            )),
        }
    }
}
