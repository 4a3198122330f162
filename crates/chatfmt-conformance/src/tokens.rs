//! The tokens kit (`../shared/conformance/tokens`): real tokenizers × templates × scenarios, rendered
//! and tokenized through [`tokenize_chats`] and compared to transformers' text, ids and masks.

use crate::{read_json, read_jsonl, Error, Failure, KnownDifferences, Result};
use chatfmt::jinja::Clock;
use chatfmt::{ApplyOptions, ChatTemplate};
use chatfmt_tokenize::chat::{tokenize_chats, ChatTokenizeOptions, TokenizedChat};
use chatfmt_tokenize::Text;
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions, Padding, Side, Stage};
use serde::Serialize;
use serde_json::{json, Map, Value as Json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The summary of a run over the kit.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub cases: usize,
    pub matched: usize,
    pub documented: usize,
    pub failures: Vec<Failure>,
}

fn field<'j>(obj: &'j Json, key: &str, origin: &str) -> Result<&'j str> {
    obj[key]
        .as_str()
        .ok_or_else(|| Error::malformed(format!("{origin}: missing string field {key:?}")))
}

struct Pairing {
    template_file: String,
    generation_tags: bool,
}

/// The kit read into memory once, to run in parts (one pairing at a time, from several threads);
/// each tokenizer is loaded the first time a case needs it.
pub struct Kit {
    dir: PathBuf,
    tokenizer_dirs: HashMap<String, PathBuf>,
    pairings: HashMap<(String, String), Pairing>,
    scenarios: Map<String, Json>,
    frozen_now: String,
    goldens: Vec<Json>,
    /// Tokenizers by (name, overrides), one slot for each the goldens use.
    loaded: HashMap<(String, String), OnceLock<Result<ChatTokenizer>>>,
}

impl Kit {
    /// Reads the kit at `dir` (`index.json`, its scenarios, `goldens.jsonl`; paths of `index.json`
    /// resolved relative to `dir`).
    pub fn load(dir: &Path) -> Result<Kit> {
        let index_path = dir.join("index.json");
        let index = read_json(&index_path)?;
        let origin = index_path.display().to_string();
        let scen_path = dir.join(field(&index, "scenarios_file", &origin)?);
        let scen = read_json(&scen_path)?;
        let mut scenarios = scen["scenarios"].as_object().cloned().unwrap_or_default();
        if let Some(extra) = index["extra_scenarios_file"].as_str() {
            let extra = read_json(&dir.join(extra))?;
            scenarios.extend(extra["scenarios"].as_object().cloned().unwrap_or_default());
        }
        let frozen_now = field(&scen, "frozen_now", &scen_path.display().to_string())?.to_string();
        let mut tokenizer_dirs = HashMap::new();
        for t in index["tokenizers"].as_array().into_iter().flatten() {
            tokenizer_dirs.insert(
                field(t, "name", &origin)?.to_string(),
                dir.join(field(t, "dir", &origin)?),
            );
        }
        let mut pairings = HashMap::new();
        for p in index["pairings"].as_array().into_iter().flatten() {
            pairings.insert(
                (
                    field(p, "tokenizer", &origin)?.to_string(),
                    field(p, "template", &origin)?.to_string(),
                ),
                Pairing {
                    template_file: field(p, "template_file", &origin)?.to_string(),
                    generation_tags: p["generation_tags"].as_bool().unwrap_or(false),
                },
            );
        }
        let goldens = read_jsonl(&dir.join("goldens.jsonl"))?;
        let loaded = goldens
            .iter()
            .filter_map(|g| {
                Some((
                    g["tokenizer"].as_str()?.to_string(),
                    g["options"]["tokenizer_overrides"].to_string(),
                ))
            })
            .map(|key| (key, OnceLock::new()))
            .collect();
        Ok(Kit {
            dir: dir.to_path_buf(),
            tokenizer_dirs,
            pairings,
            scenarios,
            frozen_now,
            goldens,
            loaded,
        })
    }

    /// The (tokenizer, template) pairings the goldens use, in order of first use.
    pub fn pairings(&self) -> Vec<(&str, &str)> {
        let mut seen = std::collections::HashSet::new();
        self.goldens
            .iter()
            .filter_map(|g| Some((g["tokenizer"].as_str()?, g["template"].as_str()?)))
            .filter(|p| seen.insert(*p))
            .collect()
    }

    /// The template source of a `template_file` (`path` or `path#json_key`).
    fn template_source(&self, file: &str) -> Result<String> {
        match file.split_once('#') {
            Some((path, key)) => {
                let config = read_json(&self.dir.join(path))?;
                config[key]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| Error::malformed(format!("{path}: no string {key:?}")))
            }
            None => {
                let path = self.dir.join(file);
                std::fs::read_to_string(&path).map_err(|e| Error::io(&path, &e))
            }
        }
    }

    fn tokenizer(&self, name: &str, overrides: &Json) -> Result<&ChatTokenizer> {
        let slot = self
            .loaded
            .get(&(name.to_string(), overrides.to_string()))
            .ok_or_else(|| Error::malformed(format!("tokenizer {name:?} could not be loaded")))?;
        let loaded = slot.get_or_init(|| {
            let dir = self
                .tokenizer_dirs
                .get(name)
                .ok_or_else(|| Error::malformed(format!("tokenizer {name:?} is not in index.json")))?;
            let mut tok = ChatTokenizer::from_model_dir(dir).map_err(|e| Error::malformed(e.with_causes()))?;
            for (k, v) in overrides.as_object().into_iter().flatten() {
                tok.set_special_token(k, v.as_str().map(str::to_string));
            }
            Ok(tok)
        });
        loaded.as_ref().map_err(Clone::clone)
    }
}

/// What one case produced, in the shape of a golden record.
fn outcome(result: &Result<Vec<TokenizedChat>, chatfmt_tokenize::Error>, batched: bool, masks: bool) -> Json {
    match result {
        Err(e) => json!({
            "status": "raised",
            "stage": if e.stage() == Some(Stage::Render) { "render" } else { "tokenize" },
            "error": e.python_class(),
        }),
        Ok(chats) => {
            let pick = |f: &dyn Fn(&TokenizedChat) -> Json| -> Json {
                let all: Vec<Json> = chats.iter().map(f).collect();
                if batched {
                    Json::Array(all)
                } else {
                    all.into_iter().next().unwrap_or(Json::Null)
                }
            };
            let mut out = json!({
                "status": "ok",
                "text": pick(&|c| json!(c.text)),
                "input_ids": pick(&|c| json!(c.encoded.input_ids)),
                "attention_mask": pick(&|c| json!(c.encoded.attention_mask)),
            });
            if masks {
                out["assistant_masks"] = pick(&|c| json!(c.encoded.assistant_masks));
            }
            out
        }
    }
}

/// The same fields of the golden record.
fn expected(g: &Json) -> Json {
    if g["status"] == "raised" {
        return json!({"status": "raised", "stage": g["stage"], "error": g["error"]["name"]});
    }
    let mut out = json!({
        "status": "ok",
        "text": g["text"],
        "input_ids": g["input_ids"],
        "attention_mask": g["attention_mask"],
    });
    if g.get("assistant_masks").is_some() {
        out["assistant_masks"] = g["assistant_masks"].clone();
    }
    out
}

/// The [`ApplyOptions`] and tokenizer options of a record.
fn options(
    opts: &Json,
    first_scenario: &Json,
    frozen_now: &str,
    masks: bool,
    batched: bool,
) -> Result<(ApplyOptions, EncodeOptions)> {
    let cfm = match &opts["continue_final_message"] {
        Json::Bool(true) => Some("content".to_string()),
        Json::String(s) => Some(s.clone()),
        _ => None,
    };
    let apply = ApplyOptions {
        add_generation_prompt: opts["add_generation_prompt"].as_bool().unwrap_or(false),
        continue_final_message: cfm,
        tools: first_scenario.get("tools").cloned(),
        documents: first_scenario.get("documents").cloned(),
        chat_template: None,
        kwargs: opts["kwargs"].as_object().cloned().unwrap_or_default(),
        clock: Clock::Fixed(frozen_now.to_string()),
        track_spans: false,
        in_batch: batched,
    };
    let padding = match &opts["padding"] {
        Json::Null | Json::Bool(false) => Padding::None,
        Json::Bool(true) => Padding::Longest,
        Json::String(s) if s == "longest" => Padding::Longest,
        Json::String(s) if s == "max_length" => Padding::MaxLength,
        other => return Err(Error::malformed(format!("unsupported padding {other}"))),
    };
    let mut padding_side = None;
    for (k, v) in opts["tokenizer_kwargs"].as_object().into_iter().flatten() {
        match (k.as_str(), v.as_str().and_then(Side::parse)) {
            ("padding_side", Some(side)) => padding_side = Some(side),
            _ => return Err(Error::malformed(format!("unsupported tokenizer_kwargs {k}={v}"))),
        }
    }
    let encode = EncodeOptions {
        add_special_tokens: false,
        truncation: opts["truncation"].as_bool().unwrap_or(false),
        max_length: opts["max_length"].as_u64().map(|n| n as usize),
        padding,
        padding_side,
        assistant_masks: masks,
        ..EncodeOptions::default()
    };
    Ok((apply, encode))
}

/// Runs the kit at `dir` (paths of `index.json` resolved relative to it).
pub fn run(dir: &Path, known: &KnownDifferences) -> Result<Report> {
    Kit::load(dir)?.run(None, known)
}

impl Kit {
    /// Replays the cases of one (tokenizer, template) pairing, or every case.
    pub fn run(&self, pairing: Option<(&str, &str)>, known: &KnownDifferences) -> Result<Report> {
        let mut report = Report::default();
        let mut sources: HashMap<String, String> = HashMap::new();
        for (line, g) in self.goldens.iter().enumerate() {
            let origin = format!("goldens.jsonl:{}", line + 1);
            let tok_name = field(g, "tokenizer", &origin)?;
            let template_id = field(g, "template", &origin)?;
            if pairing.is_some_and(|p| p != (tok_name, template_id)) {
                continue;
            }
            report.cases += 1;
            let opts = &g["options"];
            let id = format!("{tok_name}/{template_id}/{}/{opts}", g["scenario"]);
            let pairing = self
                .pairings
                .get(&(tok_name.to_string(), template_id.to_string()))
                .ok_or_else(|| {
                    Error::malformed(format!("{origin}: no pairing {tok_name} x {template_id} in index.json"))
                })?;
            let generation_tags = pairing.generation_tags;
            let file = pairing.template_file.clone();
            if !sources.contains_key(&file) {
                sources.insert(file.clone(), self.template_source(&file)?);
            }
            let source = &sources[&file];
            let (scenario_ids, batched): (Vec<&str>, bool) = match &g["scenario"] {
                Json::String(s) => (vec![s.as_str()], false),
                Json::Array(a) => (a.iter().filter_map(Json::as_str).collect(), true),
                other => return Err(Error::malformed(format!("{origin}: bad scenario {other}"))),
            };
            let mut conversations = Vec::new();
            for s in &scenario_ids {
                let scen = self
                    .scenarios
                    .get(*s)
                    .ok_or_else(|| Error::malformed(format!("{origin}: unknown scenario {s:?}")))?;
                conversations.push(scen["messages"].as_array().cloned().unwrap_or_default());
            }
            let first = self.scenarios.get(scenario_ids[0]).cloned().unwrap_or(Json::Null);
            let sanitize = opts["sanitize_control_tokens"].as_bool().unwrap_or(false);
            let naive = opts["encode"].as_str() == Some("tokenizer(text)");
            let masks = generation_tags && opts["continue_final_message"].is_null() && !sanitize && !naive;
            let (apply, encode) = options(opts, &first, &self.frozen_now, masks, batched)?;
            let tokenizer = self.tokenizer(tok_name, &opts["tokenizer_overrides"])?;
            let template = ChatTemplate::new(source, tokenizer.special_tokens().clone());
            let convs: Vec<&[Json]> = conversations.iter().map(Vec::as_slice).collect();
            let chat_opts = ChatTokenizeOptions {
                encode: encode.clone(),
                sanitize_control_tokens: sanitize.then(|| source.clone()),
                spans: None,
            };
            let result = if naive {
                naive_path(&template, tokenizer, &convs, &apply, &encode)
            } else {
                tokenize_chats(&template, tokenizer, &convs, &apply, &chat_opts)
            };
            let want = expected(g);
            let got = outcome(&result, batched, want.get("assistant_masks").is_some() || masks);
            let special_ok = Json::Object(tokenizer.special_tokens().clone()) == g["special_tokens"];
            let kind = if !special_ok {
                "special_tokens_mismatch"
            } else if got == want {
                report.matched += 1;
                continue;
            } else if want["status"] != got["status"] {
                "status_mismatch"
            } else {
                [
                    "error",
                    "stage",
                    "text",
                    "input_ids",
                    "attention_mask",
                    "assistant_masks",
                ]
                .into_iter()
                .find(|k| got.get(*k) != want.get(*k))
                .unwrap_or("mismatch")
            };
            if known.contains(&id) {
                report.documented += 1;
                continue;
            }
            let (expected, actual) = if kind == "special_tokens_mismatch" {
                (
                    g["special_tokens"].to_string(),
                    Json::Object(tokenizer.special_tokens().clone()).to_string(),
                )
            } else {
                let detail = match &result {
                    Err(e) => format!(" ({})", e.with_causes()),
                    Ok(_) => String::new(),
                };
                (
                    want.get(kind).unwrap_or(&want).to_string(),
                    format!("{}{detail}", got.get(kind).unwrap_or(&got)),
                )
            };
            report.failures.push(Failure {
                id,
                kind: kind.to_string(),
                expected,
                actual,
            });
        }
        Ok(report)
    }
}

/// The naive `tokenizer(apply_chat_template(..., tokenize=False))` path: special tokens added.
fn naive_path(
    template: &ChatTemplate,
    tokenizer: &ChatTokenizer,
    convs: &[&[Json]],
    apply: &ApplyOptions,
    encode: &EncodeOptions,
) -> Result<Vec<TokenizedChat>, chatfmt_tokenize::Error> {
    let mut chats = Vec::new();
    for conv in convs {
        let rendered = template.apply(conv, apply)?;
        let opts = EncodeOptions {
            add_special_tokens: true,
            ..encode.clone()
        };
        let text = Text {
            text: &rendered.text,
            generation_spans: &[],
            token_spans: &[],
        };
        let encoded = tokenizer.encode_batch(&[text], &opts)?.pop().unwrap_or_default();
        chats.push(TokenizedChat {
            text: rendered.text,
            generation_spans: rendered.generation_spans,
            encoded,
            spans: None,
        });
    }
    Ok(chats)
}
