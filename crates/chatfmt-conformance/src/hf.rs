//! The Hugging Face chat-template kit: real templates × scenarios × options, rendered through
//! [`ChatTemplate::apply`] and compared to transformers' output byte for byte.

use crate::{read_json, read_jsonl, Error, KnownDifferences, Result};
use chatfmt::{ApplyOptions, ChatTemplate};
use chatfmt_jinja::{Clock, CodePoints};
use serde::Serialize;
use serde_json::{Map, Value as Json};
use std::collections::HashMap;
use std::path::Path;

/// One case that did not match.
#[derive(Debug, Clone, Serialize)]
pub struct HfFailure {
    pub template: String,
    pub scenario: String,
    pub options: Json,
    pub kind: String,
    pub expected: String,
    pub actual: String,
}

/// The summary of a run over the kit.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub cases: usize,
    pub matched: usize,
    pub documented: usize,
    pub output_mismatch: usize,
    pub span_mismatch: usize,
    pub wrong_error_class: usize,
    /// The right error class with another message.
    pub wrong_error_message: usize,
    pub unexpected_error: usize,
    pub missing_error: usize,
    pub failures: Vec<HfFailure>,
}

/// Restricts a run to one template and/or scenario.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub template: Option<String>,
    pub scenario: Option<String>,
}

/// The kit read into memory once, to run in parts (one template at a time, from several threads).
#[derive(Debug)]
pub struct Kit {
    /// Template id → source.
    sources: HashMap<String, String>,
    /// Named set id → (name, template id) pairs.
    sets: HashMap<String, Vec<(String, String)>>,
    scenarios: Json,
    frozen_now: String,
    goldens: Vec<Json>,
}

impl Kit {
    /// Reads the kit at `dir` (`index.json`, `corpus/`, `scenarios.json`, `goldens.jsonl`).
    pub fn load(dir: &Path) -> Result<Kit> {
        Self::load_with_sources(dir, &HashMap::new())
    }

    /// Reads the kit at `dir` with some templates' sources replaced (template id → source).
    fn load_with_sources(dir: &Path, replaced: &HashMap<String, String>) -> Result<Kit> {
        let index = read_json(&dir.join("index.json"))?;
        let scen = read_json(&dir.join("scenarios.json"))?;
        let mut sources = HashMap::new();
        for t in index["templates"].as_array().into_iter().flatten() {
            let (Some(id), Some(file)) = (t["id"].as_str(), t["file"].as_str()) else {
                continue;
            };
            let path = dir.join("corpus").join(file);
            let src = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, &e))?;
            sources.insert(id.to_string(), src);
        }
        let mut sets = HashMap::new();
        for s in index["named_template_sets"].as_array().into_iter().flatten() {
            let Some(id) = s["id"].as_str() else { continue };
            let names = s["templates"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                        .collect()
                })
                .unwrap_or_default();
            sets.insert(id.to_string(), names);
        }
        for (id, source) in replaced {
            if !sources.contains_key(id) {
                return Err(Error::malformed(format!(
                    "{}: no template '{id}' in index.json",
                    dir.display()
                )));
            }
            sources.insert(id.clone(), source.clone());
        }
        Ok(Kit {
            sources,
            sets,
            frozen_now: scen["frozen_now"].as_str().unwrap_or("2025-07-10T12:00:00").to_string(),
            scenarios: scen["scenarios"].clone(),
            goldens: read_jsonl(&dir.join("goldens.jsonl"))?,
        })
    }

    /// The template ids (and named set ids) the goldens use, in order of first use.
    pub fn template_ids(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.goldens
            .iter()
            .filter_map(|g| g["template"].as_str())
            .filter(|t| seen.insert(*t))
            .collect()
    }

    fn chat_template(&self, id: &str, special: Map<String, Json>) -> ChatTemplate {
        if let Some(names) = self.sets.get(id) {
            let pairs: Vec<(&str, &str)> = names
                .iter()
                .map(|(n, t)| (n.as_str(), self.sources.get(t).map(String::as_str).unwrap_or("")))
                .collect();
            return ChatTemplate::named(pairs, special);
        }
        ChatTemplate::new(self.sources.get(id).map(String::as_str).unwrap_or(""), special)
    }
}

/// The options of a kit record as [`ApplyOptions`].
fn apply_options(opts: &Json, scenario: &Json, frozen_now: &str) -> ApplyOptions {
    let cfm = match &opts["continue_final_message"] {
        Json::Bool(true) => Some("content".to_string()),
        Json::String(s) => Some(s.clone()),
        _ => None,
    };
    ApplyOptions {
        add_generation_prompt: opts["add_generation_prompt"].as_bool().unwrap_or(false),
        continue_final_message: cfm,
        tools: scenario.get("tools").cloned(),
        documents: scenario.get("documents").cloned(),
        chat_template: opts["chat_template"].as_str().map(str::to_string),
        kwargs: opts["kwargs"].as_object().cloned().unwrap_or_default(),
        clock: Clock::Fixed(frozen_now.to_string()),
        track_spans: false,
        in_batch: false,
    }
}

/// Runs the kit at `dir`.
pub fn run(dir: &Path, filter: &Filter, known: &KnownDifferences) -> Result<Report> {
    Ok(Kit::load(dir)?.run(filter, known))
}

/// Runs the kit at `dir` with some templates' sources replaced (template id → source), to check
/// chatfmt's own copy of a template (the built-in defaults) against the kit's reference outputs.
pub fn run_with_sources(
    dir: &Path,
    filter: &Filter,
    known: &KnownDifferences,
    sources: &HashMap<String, String>,
) -> Result<Report> {
    Ok(Kit::load_with_sources(dir, sources)?.run(filter, known))
}

impl Kit {
    /// Replays the cases the filter selects.
    pub fn run(&self, filter: &Filter, known: &KnownDifferences) -> Report {
        let mut report = Report::default();
        for g in &self.goldens {
            let template = g["template"].as_str().unwrap_or("");
            let scenario_id = g["scenario"].as_str().unwrap_or("");
            if filter.template.as_deref().is_some_and(|t| t != template)
                || filter.scenario.as_deref().is_some_and(|s| s != scenario_id)
            {
                continue;
            }
            report.cases += 1;
            let scenario = &self.scenarios[scenario_id];
            let messages = scenario["messages"].as_array().cloned().unwrap_or_default();
            let special = g["special_tokens"].as_object().cloned().unwrap_or_default();
            let opts = apply_options(&g["options"], scenario, &self.frozen_now);
            let result = self.chat_template(template, special).apply(&messages, &opts);
            let (kind, expected, actual) = match (g["status"].as_str(), result) {
                (Some("ok"), Ok(r)) => {
                    let want = g["output"].as_str().unwrap_or("");
                    if r.text != want {
                        ("output_mismatch", want.to_string(), r.text)
                    } else if let Some(spans) = g["generation_spans"].as_array() {
                        let want: Vec<(usize, usize)> = spans
                            .iter()
                            .filter_map(|s| Some((s[0].as_u64()? as usize, s[1].as_u64()? as usize)))
                            .collect();
                        // The kit records Python string indices.
                        let text = CodePoints::new(&r.text);
                        let got: Vec<(usize, usize)> = r.generation_spans.iter().map(|&s| text.span(s)).collect();
                        if want == got {
                            ("", String::new(), String::new())
                        } else {
                            ("span_mismatch", format!("{want:?}"), format!("{got:?}"))
                        }
                    } else {
                        ("", String::new(), String::new())
                    }
                }
                (Some("ok"), Err(e)) => (
                    "unexpected_error",
                    g["output"].as_str().unwrap_or("").to_string(),
                    format!("{e:#}"),
                ),
                (_, Ok(r)) => ("missing_error", error_text(g), r.text),
                (_, Err(e)) => {
                    if g["error"]["name"].as_str() != Some(e.kind().python_name()) {
                        ("wrong_error_class", error_text(g), format!("{e:#}"))
                    } else if g["error"]["message"].as_str().is_some_and(|m| m != e.message()) {
                        ("wrong_error_message", error_text(g), format!("{e:#}"))
                    } else {
                        ("", String::new(), String::new())
                    }
                }
            };
            if kind.is_empty() {
                report.matched += 1;
                continue;
            }
            let id = format!("{template}/{scenario_id}/{}", g["options"]);
            if known.contains(&id) {
                report.documented += 1;
                continue;
            }
            match kind {
                "output_mismatch" => report.output_mismatch += 1,
                "span_mismatch" => report.span_mismatch += 1,
                "wrong_error_class" => report.wrong_error_class += 1,
                "wrong_error_message" => report.wrong_error_message += 1,
                "unexpected_error" => report.unexpected_error += 1,
                _ => report.missing_error += 1,
            }
            report.failures.push(HfFailure {
                template: template.to_string(),
                scenario: scenario_id.to_string(),
                options: g["options"].clone(),
                kind: kind.to_string(),
                expected,
                actual,
            });
        }
        report
    }
}

fn error_text(g: &Json) -> String {
    format!(
        "{}: {}",
        g["error"]["name"].as_str().unwrap_or("?"),
        g["error"]["message"].as_str().unwrap_or("")
    )
}
