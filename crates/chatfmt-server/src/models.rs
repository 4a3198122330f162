//! The models a server serves, loaded once at start: template, tokenizer (when the folder has
//! `tokenizer.json`), `max_model_len`, sampling defaults and stop strings.

use crate::api::ApiError;
use crate::config::ModelSpec;
use crate::error::{Error, ErrorKind};
use crate::sglang_tgi::content_format::ContentFormat;
use axum::http::StatusCode;
use chatfmt::jinja::Limits;
use chatfmt::masks::stop_markers;
use chatfmt::{ApplyOptions, ModelSource, Resolved, TemplateRequest};
use chatfmt_tokenize::ChatTokenizer;
use serde_json::{Map, Value as Json};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// One loaded model.
pub struct Model {
    /// The served name.
    pub name: String,
    /// The source as given.
    pub source: String,
    /// The model's template and the special tokens it sees. A folder without a chat template (a
    /// base model) gets ChatML with its special tokens, which only llama.cpp's `/apply-template`
    /// renders with unasked, as llama.cpp does (see [`Model::has_template`]).
    pub resolved: Resolved,
    /// Whether `resolved` is the model's own template. Without one, the other chat routes need a
    /// template in the request, and answer as their stack does when it is missing.
    pub has_template: bool,
    pub tokenizer: Option<ChatTokenizer>,
    /// The context length, as vLLM derives it (see [`derived_length`]).
    pub max_model_len: u64,
    /// `model_max_length` of `tokenizer_config.json` when it is an integer below 2^64 (SGLang's
    /// `max_model_len`), else `max_model_len`.
    pub tokenizer_max_length: u64,
    /// The sampling defaults of `generation_config.json` (vLLM's `get_diff_sampling_param`).
    pub generation_defaults: Map<String, Json>,
    /// The strings that end the model's turn.
    pub stop: Vec<String>,
    /// The tokens of `generation_config.json`'s `eos_token_id`, spelled (read once, not per request).
    pub eos_id_markers: Vec<String>,
    /// When it was loaded (Unix seconds).
    pub created: u64,
    /// Whether the template's special tokens are the tokenizer's (see [`Model::tokenizing_kwargs`]).
    template_has_tokenizer_specials: bool,
    /// SGLang's content format of each of its templates, found on first use.
    sglang_formats: OnceLock<Vec<(Option<String>, ContentFormat)>>,
    /// The template TGI's route renders with (none when it has named templates but no `default`),
    /// built on first use.
    pub tgi: OnceLock<Option<crate::sglang_tgi::tgi_template::Template>>,
}

/// The built-in template llama.cpp renders a model without a chat template with (its
/// `CHATML_TEMPLATE_SRC`, whose output this built-in template's equals).
const LLAMA_CPP_FALLBACK: &str = "chatml";

/// Whether a `--model` source is a folder (or a Hub repo's snapshot in the local cache), not a `.gguf` file.
fn is_folder(source: &str) -> bool {
    matches!(ModelSource::resolve(source), Ok(ModelSource::Dir(_)))
}

/// vLLM's context length when no config key gives one.
const DEFAULT_LENGTH: u64 = 2048;

/// The keys of `config.json` vLLM reads a context length from, in its order.
const LENGTH_KEYS: [&str; 8] = [
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
];

impl Model {
    fn load(spec: &ModelSpec, max_model_len: Option<u64>, max_steps: u64) -> Result<Model, Error> {
        // The cause follows as the error's source (printed after the message, once).
        let fail = |what: &str| Error::new(ErrorKind::Model, format!("--model {}: {what}", spec.source));
        let request = TemplateRequest {
            model: Some(spec.source.clone()),
            ..TemplateRequest::default()
        };
        let (resolved, has_template) = match request.resolve() {
            Ok(resolved) => (resolved, true),
            // A folder without a chat template is served as vLLM serves it.
            Err(e) if e.kind() == chatfmt::ErrorKind::NoTemplate && is_folder(&spec.source) => {
                let chatml = TemplateRequest {
                    default_template: Some(LLAMA_CPP_FALLBACK.to_string()),
                    ..request
                };
                let resolved = chatml
                    .resolve()
                    .map_err(|e| fail("the folder does not load").with_source(e))?;
                (resolved, false)
            }
            Err(e) => return Err(fail("the template does not load").with_source(e)),
        };
        let limits = Limits {
            max_steps,
            ..Limits::default()
        };
        let resolved = Resolved {
            template: resolved.template.with_limits(limits),
            ..resolved
        };
        let dir = match &resolved.model {
            Some(ModelSource::Dir(d)) => Some(d.clone()),
            _ => None,
        };
        let tokenizer = match &dir {
            Some(d) if d.join("tokenizer.json").is_file() => {
                Some(ChatTokenizer::from_model_dir(d).map_err(|e| fail("the tokenizer does not load").with_source(e))?)
            }
            _ => None,
        };
        if !has_template && tokenizer.is_none() {
            return Err(fail(
                "the folder has neither a chat template nor tokenizer.json, so no route could answer for it",
            ));
        }
        let eos = resolved
            .template
            .special_tokens()
            .get("eos_token")
            .and_then(Json::as_str);
        let eos_id_markers =
            stop_markers(dir.as_deref(), None, &[]).map_err(|e| fail("stop strings").with_source(e))?;
        let stop = stop_markers(None, eos, &eos_id_markers).map_err(|e| fail("stop strings").with_source(e))?;
        let max_model_len = max_model_len.unwrap_or_else(|| derived_length(dir.as_deref()));
        let tokenizer_max_length = dir
            .as_deref()
            .and_then(|d| read_json(d, "tokenizer_config.json"))
            .and_then(|c| c["model_max_length"].as_u64())
            .unwrap_or(max_model_len);
        let generation_defaults = dir.as_deref().map(generation_defaults).unwrap_or_default();
        let created = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let template_has_tokenizer_specials =
            (tokenizer.as_ref()).is_some_and(|t| t.special_tokens() == resolved.template.special_tokens());
        Ok(Model {
            name: spec.name.clone(),
            source: spec.source.clone(),
            resolved,
            has_template,
            tokenizer,
            max_model_len,
            tokenizer_max_length,
            generation_defaults,
            stop,
            eos_id_markers,
            created,
            template_has_tokenizer_specials,
            sglang_formats: OnceLock::new(),
            tgi: OnceLock::new(),
        })
    }

    /// SGLang's content format of the template `opts` select.
    pub fn sglang_content_format(&self, opts: &ApplyOptions) -> ContentFormat {
        let template = &self.resolved.template;
        let formats = self.sglang_formats.get_or_init(|| {
            let compiled = template.templates();
            (template.sources().into_iter())
                .map(|(name, source)| {
                    let compiles = compiled.iter().any(|(n, t)| *n == name && t.is_ok());
                    (name.map(str::to_string), ContentFormat::of(source, compiles))
                })
                .collect()
        });
        let selected = template.selected(opts).ok().and_then(|(name, _)| name);
        (formats.iter())
            .find(|(name, _)| name.as_deref() == selected)
            .map_or(ContentFormat::String, |(_, f)| *f)
    }

    /// The template variables of a request that tokenizes: the tokenizer's special tokens (as
    /// transformers passes them), then the request's `kwargs`. The model's template (and every
    /// request template compiled for it) holds the folder's special tokens below the variables, so
    /// when they are the tokenizer's, nothing is copied.
    pub fn tokenizing_kwargs(&self, kwargs: Map<String, Json>) -> Result<Map<String, Json>, ApiError> {
        let special = self.tokenizer()?.special_tokens();
        if self.template_has_tokenizer_specials {
            return Ok(kwargs);
        }
        let mut all = special.clone();
        all.extend(kwargs);
        Ok(all)
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

fn read_json(dir: &Path, name: &str) -> Option<Json> {
    let text = std::fs::read_to_string(dir.join(name)).ok()?;
    serde_json::from_str(&text).ok()
}

/// vLLM's `max_model_len`: the smallest of `config.json`'s length keys and `tokenizer_config.json`'s
/// `model_max_length`, else 2048.
fn derived_length(dir: Option<&Path>) -> u64 {
    let Some(dir) = dir else { return DEFAULT_LENGTH };
    let config = read_json(dir, "config.json").unwrap_or(Json::Null);
    let from_config = LENGTH_KEYS.iter().filter_map(|k| config[*k].as_f64()).reduce(f64::min);
    let from_tokenizer = read_json(dir, "tokenizer_config.json").and_then(|c| c["model_max_length"].as_f64());
    match [from_config, from_tokenizer].into_iter().flatten().reduce(f64::min) {
        Some(n) if n.is_finite() && n >= 0.0 && n < u64::MAX as f64 => n as u64,
        _ => DEFAULT_LENGTH,
    }
}

/// The sampling fields of `generation_config.json` that vLLM uses as defaults (`max_new_tokens` as
/// `max_tokens`).
fn generation_defaults(dir: &Path) -> Map<String, Json> {
    let Some(Json::Object(config)) = read_json(dir, "generation_config.json") else {
        return Map::new();
    };
    let mut out = Map::new();
    for (key, name) in [
        ("repetition_penalty", "repetition_penalty"),
        ("presence_penalty", "presence_penalty"),
        ("frequency_penalty", "frequency_penalty"),
        ("temperature", "temperature"),
        ("top_k", "top_k"),
        ("top_p", "top_p"),
        ("min_p", "min_p"),
        ("max_new_tokens", "max_tokens"),
        ("skip_special_tokens", "skip_special_tokens"),
    ] {
        if let Some(v) = config.get(key).filter(|v| !v.is_null()) {
            out.insert(name.to_string(), v.clone());
        }
    }
    out
}

/// Every served model, by name.
pub struct Models {
    list: Vec<Arc<Model>>,
}

impl Models {
    /// Loads every model, whose templates render under `max_steps` steps; two with one name are an
    /// error.
    pub fn load(specs: &[ModelSpec], max_model_len: Option<u64>, max_steps: u64) -> Result<Models, Error> {
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
            list.push(Arc::new(Model::load(spec, max_model_len, max_steps)?));
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

    /// The model of a route whose stack serves one model and never looks `model` up (SGLang's,
    /// TGI's): with one loaded, whatever the request names; with several, as [`Models::get`].
    pub fn lenient(&self, name: Option<&str>) -> Result<Arc<Model>, ApiError> {
        match self.list.as_slice() {
            [only] => Ok(Arc::clone(only)),
            _ => self.get(name),
        }
    }
}
