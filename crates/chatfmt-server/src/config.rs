//! What a server serves and how: models, address, limits, workers.

use crate::error::{Error, ErrorKind};
use chatfmt::jinja::Limits;
use std::time::Duration;

/// One `--model [NAME=]SOURCE`: the name requests use and any source `chatfmt render --model`
/// accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    /// The served name.
    pub name: String,
    /// A model folder, `.gguf` file or Hub repo id of the local cache.
    pub source: String,
}

impl ModelSpec {
    /// `NAME=SOURCE`, or `SOURCE` alone, served under the argument exactly as given (vLLM's
    /// `--served-model-name` default).
    pub fn parse(arg: &str) -> ModelSpec {
        match arg.split_once('=') {
            Some((name, source)) if !name.is_empty() && !source.is_empty() => ModelSpec {
                name: name.to_string(),
                source: source.to_string(),
            },
            _ => ModelSpec {
                name: arg.to_string(),
                source: arg.to_string(),
            },
        }
    }
}

/// The server's configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The models, loaded at start.
    pub models: Vec<ModelSpec>,
    /// Overrides every model's `max_model_len`.
    pub max_model_len: Option<u64>,
    /// Requests to `/v1/...` need `Authorization: Bearer KEY` (as vLLM's `--api-key`).
    pub api_key: Option<String>,
    /// Threads that render and tokenize.
    pub workers: usize,
    /// Requests waiting for a worker before new ones are refused with 503.
    pub queue: usize,
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// The limits a template sent with a request renders under.
    pub request_limits: Limits,
    /// The evaluation steps one render of a loaded model's template may take.
    pub max_steps: u64,
    /// Compiled request templates kept.
    pub template_cache: usize,
    /// How long requests in flight may take to finish after a shutdown signal.
    pub shutdown_timeout: Duration,
    /// How long `/v1/render` may spend finding message spans: the rule renders every prefix of the
    /// conversation (unless the template is causal in it), so a long one could otherwise hold a worker
    /// for hours.
    pub spans_timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            models: Vec::new(),
            max_model_len: None,
            api_key: None,
            workers: std::thread::available_parallelism().map_or(1, usize::from),
            queue: 1024,
            max_body_bytes: 16 << 20,
            request_limits: default_request_limits(),
            max_steps: Limits::default().max_steps,
            template_cache: 256,
            shutdown_timeout: Duration::from_secs(10),
            spans_timeout: Duration::from_secs(10),
        }
    }
}

/// 200k steps, 1 MiB of output, 250 ms.
fn default_request_limits() -> Limits {
    Limits {
        max_steps: 200_000,
        max_output_bytes: 1 << 20,
        max_duration: Some(Duration::from_millis(250)),
        ..Limits::default()
    }
}

/// Parses `--request-template-limits`: comma-separated `steps=N`, `output=BYTES`, `ms=N`, each
/// replacing its default.
pub fn parse_request_limits(spec: &str) -> Result<Limits, Error> {
    let mut limits = default_request_limits();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || {
            Error::new(
                ErrorKind::Config,
                format!("--request-template-limits: '{part}': expected steps=N, output=BYTES or ms=N"),
            )
        };
        let (key, value) = part.split_once('=').ok_or_else(bad)?;
        let n: u64 = value.trim().parse().map_err(|_| bad())?;
        match key.trim() {
            "steps" => limits.max_steps = n,
            "output" => limits.max_output_bytes = usize::try_from(n).map_err(|_| bad())?,
            "ms" => limits.max_duration = Some(Duration::from_millis(n)),
            _ => return Err(bad()),
        }
    }
    Ok(limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_argument_names_itself_unless_it_says_otherwise() {
        assert_eq!(ModelSpec::parse("m=examples/x").name, "m");
        assert_eq!(ModelSpec::parse("examples/x").name, "examples/x");
        assert_eq!(ModelSpec::parse("=x").source, "=x");
    }

    #[test]
    fn request_limits_replace_only_what_they_name() {
        let l = parse_request_limits("steps=5,ms=7").unwrap_or_default();
        assert_eq!(l.max_steps, 5);
        assert_eq!(l.max_duration, Some(Duration::from_millis(7)));
        assert_eq!(l.max_output_bytes, 1 << 20);
        assert!(parse_request_limits("steps=x").is_err());
        assert!(parse_request_limits("depth=1").is_err());
    }
}
