//! vLLM's `SamplingParams` as its render endpoints return them: the request's sampling fields over
//! the model's `generation_config.json` defaults and vLLM's, normalized as `SamplingParams`'
//! `__post_init__` does, checked as `_verify_args` does, and serialized as msgspec's
//! `omit_defaults` writes them. A field is left out when its value is the very object of its
//! default: small integers and booleans equal to the default, and `top_p`, `top_k`, `min_p` reset
//! by greedy sampling; floats taken from a request or from the request models' default table are
//! other objects, so they are always written, as are the lists `__post_init__` makes.

use crate::api::ApiError;
use crate::body::{self, Fields};
use serde_json::{json, Map, Value as Json};

/// Temperatures below this are greedy.
const SAMPLING_EPS: f64 = 1e-5;
/// Positive temperatures are raised to at least this.
const MIN_TEMPERATURE: f64 = 1e-2;
/// `VLLM_MAX_N_SEQUENCES`' default.
const MAX_N: i64 = 16384;
/// `sys.maxsize`, the platform's output limit.
const PLATFORM_MAX_TOKENS: i64 = i64::MAX;

/// Which request model the fields come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ChatCompletionRequest`.
    Chat,
    /// `CompletionRequest`.
    Completion,
}

/// The sampling fields of a chat or completion request.
#[derive(Debug)]
pub struct Sampling {
    kind: Kind,
    n: Option<i64>,
    floats: [(&'static str, Option<f64>); 6],
    top_k: Option<i64>,
    seed: Option<i64>,
    stop: Vec<String>,
    /// `list[int]`: any integer; vLLM checks the range in its engine only.
    stop_token_ids: Vec<i64>,
    bad_words: Vec<String>,
    ignore_eos: bool,
    /// `max_completion_tokens`, else `max_tokens`; `None` when neither is given (a completion's
    /// default of 16 is filled in).
    pub max_tokens: Option<i64>,
    min_tokens: i64,
    logprobs: Option<i64>,
    prompt_logprobs: Option<i64>,
    echo: bool,
    skip_special_tokens: Option<bool>,
    spaces_between_special_tokens: bool,
    include_stop_str_in_output: bool,
    logit_bias: Option<Map<String, Json>>,
    /// As `stop_token_ids`.
    allowed_token_ids: Option<Vec<i64>>,
    /// Whether the answer streams.
    pub stream: bool,
}

/// The float fields, in `SamplingParams`' order, with vLLM's request defaults.
const FLOATS: [(&str, f64); 6] = [
    ("presence_penalty", 0.0),
    ("frequency_penalty", 0.0),
    ("repetition_penalty", 1.0),
    ("temperature", 1.0),
    ("top_p", 1.0),
    ("min_p", 0.0),
];

fn invalid(message: String, param: Option<&str>) -> ApiError {
    ApiError::bad(message, param)
}

impl Sampling {
    /// Takes the sampling fields out of a request.
    pub fn read(f: &mut Fields, kind: Kind) -> Result<Sampling, ApiError> {
        let mut floats = FLOATS.map(|(name, _)| (name, None));
        for (name, value) in &mut floats {
            *value = f.opt_f64(name)?;
        }
        let max_tokens = match kind {
            Kind::Chat => {
                let max_tokens = f.opt_i64("max_tokens")?;
                f.opt_i64("max_completion_tokens")?.or(max_tokens)
            }
            // `null` is the default too (vLLM's `normalize_null_max_tokens`).
            Kind::Completion => Some(f.opt_i64("max_tokens")?.unwrap_or(16)),
        };
        let (logprobs, echo) = match kind {
            Kind::Chat => {
                let wanted = f.opt_bool("logprobs")?.unwrap_or(false);
                let top = f.opt_i64("top_logprobs")?.unwrap_or(0);
                let echo = f.bool("echo", false, false)?;
                (wanted.then_some(top), echo)
            }
            Kind::Completion => {
                let logprobs = f.opt_i64("logprobs")?;
                (logprobs, f.opt_bool("echo")?.unwrap_or(false))
            }
        };
        let mut prompt_logprobs = f.opt_i64("prompt_logprobs")?;
        if prompt_logprobs.is_none() && echo {
            prompt_logprobs = match kind {
                Kind::Chat => Some(logprobs.unwrap_or(0)),
                Kind::Completion => logprobs,
            };
        }
        let n = match kind {
            Kind::Chat => f.opt_i64("n")?,
            Kind::Completion => Some(f.i64("n", 1)?),
        };
        if f.0.get("bad_words").is_some_and(Json::is_null) {
            return Err(body::wrong("bad_words", "a valid list"));
        }
        let sampling = Sampling {
            kind,
            n,
            floats,
            top_k: f.opt_i64("top_k")?,
            seed: f.opt_i64("seed")?,
            stop: f.opt_strs("stop", true)?.unwrap_or_default(),
            stop_token_ids: f.opt_ints("stop_token_ids")?.unwrap_or_default(),
            bad_words: f.opt_strs("bad_words", false)?.unwrap_or_default(),
            ignore_eos: f.bool("ignore_eos", false, false)?,
            max_tokens,
            min_tokens: f.i64("min_tokens", 0)?,
            logprobs,
            prompt_logprobs,
            echo,
            skip_special_tokens: f.opt_bool("skip_special_tokens")?,
            spaces_between_special_tokens: f.bool("spaces_between_special_tokens", true, false)?,
            include_stop_str_in_output: f.bool("include_stop_str_in_output", false, false)?,
            logit_bias: f.opt_object("logit_bias")?,
            allowed_token_ids: f.opt_ints("allowed_token_ids")?,
            stream: f.opt_bool("stream")?.unwrap_or(false),
        };
        Ok(sampling)
    }

    /// vLLM's `get_max_tokens`: the room left in the context, the request's limit (else the
    /// model's default) and the platform's, whichever is least.
    pub fn max_tokens(
        &self,
        max_model_len: u64,
        input_length: usize,
        defaults: &Map<String, Json>,
    ) -> Result<i64, ApiError> {
        let input = input_length as u64;
        if max_model_len < input {
            return Err(invalid(
                format!("Input length ({input}) exceeds model's maximum context length ({max_model_len})."),
                None,
            ));
        }
        let room = i64::try_from(max_model_len - input).unwrap_or(i64::MAX);
        let fallback = self
            .max_tokens
            .or_else(|| defaults.get("max_tokens").and_then(body::as_int));
        Ok([Some(room), fallback, Some(PLATFORM_MAX_TOKENS)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(room))
    }

    /// The serialized `SamplingParams` for `max_tokens` (from [`Sampling::max_tokens`]) over the
    /// model's `defaults`.
    pub fn params(&self, max_tokens: i64, defaults: &Map<String, Json>) -> Result<Map<String, Json>, ApiError> {
        let mut floats = [0.0; 6];
        for (i, ((name, given), (_, fallback))) in self.floats.iter().zip(FLOATS).enumerate() {
            floats[i] = match given {
                Some(v) => *v,
                None => defaults.get(*name).and_then(Json::as_f64).unwrap_or(fallback),
            };
        }
        let [presence, frequency, repetition, mut temperature, top_p, min_p] = floats;
        let mut top_k = self
            .top_k
            .or_else(|| defaults.get("top_k").and_then(body::as_int))
            .unwrap_or(0);
        let skip_special_tokens = self
            .skip_special_tokens
            .or_else(|| defaults.get("skip_special_tokens").and_then(Json::as_bool))
            .unwrap_or(true);
        let n = self.n.unwrap_or(1);
        let max_tokens = if self.kind == Kind::Completion && self.echo && self.max_tokens == Some(0) {
            1
        } else {
            max_tokens
        };
        // __post_init__
        if 0.0 < temperature && temperature < MIN_TEMPERATURE {
            temperature = MIN_TEMPERATURE;
        }
        let seed = self.seed.filter(|s| *s != -1);
        let stop_token_ids = dedup(&self.stop_token_ids);
        let bad_words = dedup(&self.bad_words);
        let logit_bias = self.logit_bias.as_ref().map(logit_bias).transpose()?;
        self.verify(
            n,
            [presence, frequency, repetition, temperature, top_p, min_p],
            top_k,
            max_tokens,
        )?;
        let greedy = temperature < SAMPLING_EPS;
        if greedy {
            top_k = 0;
        }
        let buffer = if self.stop.is_empty() || self.include_stop_str_in_output {
            0
        } else {
            self.stop
                .iter()
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
                .saturating_sub(1)
        };
        let mut out = Map::new();
        let mut put = |key: &str, value: Json| {
            out.insert(key.to_string(), value);
        };
        if n != 1 {
            put("n", json!(n));
        }
        put("presence_penalty", json!(presence));
        put("frequency_penalty", json!(frequency));
        put("repetition_penalty", json!(repetition));
        put("temperature", json!(temperature));
        if !greedy {
            put("top_p", json!(top_p));
        }
        if top_k != 0 {
            put("top_k", json!(top_k));
        }
        if !greedy {
            put("min_p", json!(min_p));
        }
        if let Some(seed) = seed {
            put("seed", json!(seed));
        }
        put("stop", json!(self.stop));
        put("stop_token_ids", json!(stop_token_ids));
        if self.ignore_eos {
            put("ignore_eos", json!(true));
        }
        if max_tokens != 16 {
            put("max_tokens", json!(max_tokens));
        }
        if self.min_tokens != 0 {
            put("min_tokens", json!(self.min_tokens));
        }
        if let Some(l) = self.logprobs {
            put("logprobs", json!(l));
        }
        if let Some(l) = self.prompt_logprobs {
            put("prompt_logprobs", json!(l));
        }
        if !skip_special_tokens {
            put("skip_special_tokens", json!(false));
        }
        if !self.spaces_between_special_tokens {
            put("spaces_between_special_tokens", json!(false));
        }
        if self.include_stop_str_in_output {
            put("include_stop_str_in_output", json!(true));
        }
        // RequestOutputKind: DELTA when streaming, else FINAL_ONLY.
        put("output_kind", json!(if self.stream { 1 } else { 2 }));
        put("skip_clone", json!(true));
        if buffer != 0 {
            put("output_text_buffer_length", json!(buffer));
        }
        if let Some(bias) = logit_bias {
            put("logit_bias", Json::Object(bias));
        }
        if let Some(ids) = &self.allowed_token_ids {
            put("allowed_token_ids", json!(ids));
        }
        put("bad_words", json!(bad_words));
        put("skip_reading_prefix_cache", json!(self.prompt_logprobs.is_some()));
        Ok(out)
    }

    /// `SamplingParams._verify_args`, in its order and with its messages.
    fn verify(&self, n: i64, floats: [f64; 6], top_k: i64, max_tokens: i64) -> Result<(), ApiError> {
        let [presence, frequency, repetition, temperature, top_p, min_p] = floats;
        if n < 1 {
            return Err(invalid(format!("n must be at least 1, got {n}."), None));
        }
        if n > MAX_N {
            return Err(invalid(
                format!("n must be at most {MAX_N}, got {n}. Increase VLLM_MAX_N_SEQUENCES to allow larger values."),
                None,
            ));
        }
        if !(-2.0..=2.0).contains(&presence) {
            return Err(invalid(
                format!("presence_penalty must be in [-2, 2], got {}.", py_float(presence)),
                None,
            ));
        }
        if !(-2.0..=2.0).contains(&frequency) {
            return Err(invalid(
                format!("frequency_penalty must be in [-2, 2], got {}.", py_float(frequency)),
                None,
            ));
        }
        if !repetition.is_finite() {
            return Err(invalid(
                format!(
                    "repetition_penalty must be a finite number, got {}.",
                    py_float(repetition)
                ),
                None,
            ));
        }
        if repetition <= 0.0 {
            return Err(invalid(
                format!(
                    "repetition_penalty must be greater than zero, got {}.",
                    py_float(repetition)
                ),
                None,
            ));
        }
        let t = py_float(temperature);
        if temperature < 0.0 {
            return Err(invalid(
                format!("temperature must be non-negative, got {t}."),
                Some("temperature"),
            ));
        }
        if temperature > 2.0 {
            return Err(invalid(
                format!("temperature must be in [0, 2], got {t}."),
                Some("temperature"),
            ));
        }
        if !(top_p > 0.0 && top_p <= 1.0) {
            return Err(invalid(
                format!("top_p must be in (0, 1], got {}.", py_float(top_p)),
                Some("top_p"),
            ));
        }
        if top_k < -1 {
            return Err(invalid(
                format!("top_k must be 0 (disable), or at least 1, got {top_k}."),
                None,
            ));
        }
        if !(0.0..=1.0).contains(&min_p) {
            return Err(invalid(
                format!("min_p must be in [0, 1], got {}.", py_float(min_p)),
                None,
            ));
        }
        if max_tokens < 1 {
            return Err(invalid(
                format!("max_tokens must be at least 1, got {max_tokens}."),
                Some("max_tokens"),
            ));
        }
        if self.min_tokens < 0 {
            return Err(invalid(
                format!(
                    "min_tokens must be greater than or equal to 0, got {}.",
                    self.min_tokens
                ),
                None,
            ));
        }
        if self.min_tokens > max_tokens {
            return Err(invalid(
                format!(
                    "min_tokens must be less than or equal to max_tokens={max_tokens}, got {}.",
                    self.min_tokens
                ),
                None,
            ));
        }
        for (name, value) in [("logprobs", self.logprobs), ("prompt_logprobs", self.prompt_logprobs)] {
            if let Some(v) = value.filter(|v| *v != -1 && *v < 0) {
                return Err(invalid(
                    format!("{name} must be non-negative or -1, got {v}."),
                    Some(name),
                ));
            }
        }
        if self.stop.iter().any(String::is_empty) {
            return Err(invalid("stop cannot contain an empty string.".to_string(), None));
        }
        if self.bad_words.iter().any(String::is_empty) {
            return Err(invalid(
                format!(
                    "bad_words cannot contain an empty string. Got bad_words=[{}]",
                    self.bad_words.iter().map(|w| py_repr(w)).collect::<Vec<_>>().join(", ")
                ),
                None,
            ));
        }
        Ok(())
    }
}

/// The items in first-seen order without repeats (`list(dict.fromkeys(...))`).
fn dedup<T: PartialEq + Clone>(items: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(item) {
            out.push(item.clone());
        }
    }
    out
}

/// `logit_bias` with integer keys (written back as their decimal strings) and biases clamped to
/// [-100, 100].
fn logit_bias(bias: &Map<String, Json>) -> Result<Map<String, Json>, ApiError> {
    let mut out = Map::new();
    let mut invalid_keys = Vec::new();
    for (key, value) in bias {
        let v = body::lax_f64(value).map_err(|m| body::invalid(&format!("logit_bias.{key}"), m))?;
        match key.trim().parse::<i64>() {
            Ok(id) => {
                out.insert(id.to_string(), json!(v.clamp(-100.0, 100.0)));
            }
            Err(_) => invalid_keys.push(py_repr(key)),
        }
    }
    if !invalid_keys.is_empty() {
        return Err(invalid(
            format!(
                "logit_bias contains key(s) that cannot be converted to integer token IDs: [{}]",
                invalid_keys.join(", ")
            ),
            Some("logit_bias"),
        ));
    }
    Ok(out)
}

/// A float as Python's `str` writes it (`1.0`, `0.5`, `inf`).
fn py_float(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v.is_nan() {
        return "nan".into();
    }
    let s = json!(v).to_string();
    if s.contains(['.', 'e']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// A string as Python's `repr` writes a plain one.
fn py_repr(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(request: Json, kind: Kind, max_tokens: i64) -> Result<Json, ApiError> {
        let Json::Object(map) = request else { unreachable!() };
        let mut f = Fields(map, true);
        let s = Sampling::read(&mut f, kind)?;
        s.params(max_tokens, &Map::new()).map(Json::Object)
    }

    /// Reference values: `SamplingParams.from_optional(...)` of vLLM 0.33.0 serialized by its
    /// `PydanticMsgspecMixin` (msgspec 0.22, `omit_defaults`), for a chat request.
    #[test]
    fn sampling_params_serialize_as_vllm_does() {
        let cases = [
            (
                json!({}),
                40950,
                json!({"presence_penalty": 0.0, "frequency_penalty": 0.0, "repetition_penalty": 1.0, "temperature": 1.0, "top_p": 1.0, "min_p": 0.0, "stop": [], "stop_token_ids": [], "max_tokens": 40950, "output_kind": 2, "skip_clone": true, "bad_words": [], "skip_reading_prefix_cache": false}),
            ),
            (
                json!({"temperature": 0.0, "top_p": 0.5, "stream": true, "stop": "x", "seed": 3, "logprobs": true, "top_logprobs": 2, "logit_bias": {"5": 200}}),
                100,
                json!({"presence_penalty": 0.0, "frequency_penalty": 0.0, "repetition_penalty": 1.0, "temperature": 0.0, "seed": 3, "stop": ["x"], "stop_token_ids": [], "max_tokens": 100, "logprobs": 2, "output_kind": 1, "skip_clone": true, "logit_bias": {"5": 100.0}, "bad_words": [], "skip_reading_prefix_cache": false}),
            ),
            (
                json!({"temperature": 0.7, "top_k": 20, "top_p": 0.8, "max_tokens": 16, "stop": ["a", "bb"], "stop_token_ids": [1, 1, 2], "n": 2, "bad_words": ["q"]}),
                16,
                json!({"n": 2, "presence_penalty": 0.0, "frequency_penalty": 0.0, "repetition_penalty": 1.0, "temperature": 0.7, "top_p": 0.8, "top_k": 20, "min_p": 0.0, "stop": ["a", "bb"], "stop_token_ids": [1, 2], "output_kind": 2, "skip_clone": true, "output_text_buffer_length": 1, "bad_words": ["q"], "skip_reading_prefix_cache": false}),
            ),
        ];
        for (request, max_tokens, want) in cases {
            let got = params(request.clone(), Kind::Chat, max_tokens).map_err(|e| e.message);
            assert_eq!(got, Ok(want.clone()), "{request}");
            // The same keys in the same order.
            let keys = |v: &Json| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
            assert_eq!(got.ok().as_ref().and_then(keys), keys(&want));
        }
    }

    #[test]
    fn out_of_range_values_are_refused_with_vllms_messages() {
        let e = params(json!({"temperature": 3}), Kind::Chat, 10)
            .err()
            .map(|e| e.message);
        assert_eq!(e.as_deref(), Some("temperature must be in [0, 2], got 3.0."));
        let e = params(json!({"top_p": 0}), Kind::Chat, 10).err().map(|e| e.param);
        assert_eq!(e, Some(Some("top_p".to_string())));
        let e = params(json!({"logit_bias": {"x": 1}}), Kind::Chat, 10)
            .err()
            .map(|e| e.message);
        assert_eq!(
            e.as_deref(),
            Some("logit_bias contains key(s) that cannot be converted to integer token IDs: ['x']")
        );
        assert!(params(json!({"max_tokens": 0, "echo": true}), Kind::Completion, 0).is_ok());
    }
}
