//! The FastChat conformance runner: replays the kit's `goldens.jsonl` (template scenarios and
//! API edge cases) and `adapter_goldens.jsonl` (model-path matching) and compares.
//!
//! A template record matches when `prompt`, `openai_messages`, `stop_str`, `stop_token_ids`
//! and `final_state` equal the golden (an error golden is matched by an error of the same
//! Python class). The other outputs (`gradio_chatbot`, `dict`, `images`, vision forms) are
//! compared too but reported apart, as `extra_failures`. Differences chatfmt makes on purpose
//! are recognised by rule (`known.rs`) and listed with their evidence in the "FastChat" section
//! of `KNOWN_DIFFERENCES.md`: a record whose only mismatches are such differences counts as
//! `documented`.

mod adapters;
mod api_edge;
pub mod export;
mod known;
mod scenario;

use known::classify;
pub use known::difference_codes;

use crate::KnownDifferences;
use adapters::FixtureDir;
use chatfmt_fastchat::{Conversation, Error, ErrorKind, Registry, Result};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Fields whose equality decides whether a template record matches.
const COUNTED_FIELDS: &[&str] = &["prompt", "openai_messages", "stop_str", "stop_token_ids", "final_state"];

/// One field of one record that differs from the golden.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The record id.
    pub id: String,
    /// The record's group (see [`Report::groups`]).
    pub group: String,
    /// The compared field.
    pub field: String,
    /// The golden value.
    pub expected: Value,
    /// chatfmt's value (`{"error": {"type", "message"}}` for errors).
    pub actual: Value,
}

/// The result of a kit run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Records checked (template scenarios, API edge cases and adapter records).
    pub cases: usize,
    /// Records checked per group: the template a scenario record renders, `api_edge` for the API
    /// edge cases, `adapters` for the model-path records.
    pub groups: BTreeMap<String, usize>,
    /// Records that match the golden.
    pub matched: usize,
    /// Records whose every mismatch is a documented difference.
    pub documented: usize,
    /// Mismatches of counted fields that are not documented (each failing record's fields).
    pub failures: Vec<Failure>,
    /// Mismatches of the uncounted outputs that are not documented.
    pub extra_failures: Vec<Failure>,
    /// (difference code, record id) pairs observed in this run.
    pub observed_documented: BTreeSet<(String, String)>,
    /// Evidence listed in KNOWN_DIFFERENCES.md but not observed: the list is stale.
    pub stale_documented: Vec<(String, String)>,
}

impl Report {
    /// Whether every record matched or is documented.
    pub fn passed(&self) -> bool {
        self.matched + self.documented == self.cases
    }

    /// The report as JSON (`cases`, `matched`, `documented`, failures).
    pub fn to_json(&self) -> Value {
        let fail = |f: &Failure| json!({"id": f.id, "field": f.field, "expected": f.expected, "actual": f.actual});
        json!({
            "cases": self.cases,
            "matched": self.matched,
            "documented": self.documented,
            "failed": self.cases - self.matched - self.documented,
            "failures": self.failures.iter().map(fail).collect::<Vec<_>>(),
            "extra_failures": self.extra_failures.iter().map(fail).collect::<Vec<_>>(),
            "documented_records": self.observed_documented.iter().map(|(code, id)| json!({"difference": code, "id": id})).collect::<Vec<_>>(),
            "stale_documented": self.stale_documented.iter().map(|(code, id)| json!({"difference": code, "id": id})).collect::<Vec<_>>(),
        })
    }
}

/// Runs the kit in `dir` (`goldens.jsonl`, and `adapter_goldens.jsonl` if present); `known` lists
/// the evidence of deliberate differences.
pub fn run_kit(dir: &Path, known: &KnownDifferences) -> Result<Report> {
    let mut run = Run {
        registry: Registry::builtin(),
        report: Report::default(),
    };
    for record in read_jsonl(&dir.join("goldens.jsonl"))? {
        if let Err(e) = run.check_golden(&record) {
            run.unreplayable(&record, &e);
        }
    }
    let adapters = dir.join("adapter_goldens.jsonl");
    if adapters.exists() {
        let records = read_jsonl(&adapters)?;
        let fixtures = FixtureDir::create(&records)?;
        for record in &records {
            if let Err(e) = run.check_adapter(record, fixtures.path()) {
                run.unreplayable(record, &e);
            }
        }
    }
    run.report.stale_documented = known
        .fastchat_evidence()
        .iter()
        .filter(|pair| !run.report.observed_documented.contains(*pair))
        .cloned()
        .collect();
    Ok(run.report)
}

fn read_jsonl(path: &Path) -> Result<Vec<Value>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::new(ErrorKind::InvalidInput, format!("cannot read {}: {e}", path.display())))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line).map_err(|e| {
                Error::new(
                    ErrorKind::InvalidInput,
                    format!("{}:{}: invalid JSON: {e}", path.display(), n + 1),
                )
            })
        })
        .collect()
}

/// The group of a kit record (see [`Report::groups`]).
fn record_group(record: &Value) -> String {
    match record["kind"].as_str() {
        Some("template_scenario") => record["template"].as_str().unwrap_or("?").to_owned(),
        Some("api_edge") => "api_edge".to_owned(),
        _ => "adapters".to_owned(),
    }
}

fn bad_record(id: &str, what: &str) -> Error {
    Error::new(ErrorKind::InvalidInput, format!("kit record {id}: {what}"))
}

fn error_value(e: &Error) -> Value {
    json!({"error": {"type": e.kind().python_class().unwrap_or("chatfmt"), "kind": format!("{:?}", e.kind()), "message": e.message()}})
}

fn result_value(r: &Result<Value>) -> Value {
    match r {
        Ok(v) => json!({"ok": v}),
        Err(e) => error_value(e),
    }
}

/// Whether `ours` equals the golden `{"ok": v}` / `{"error": {"type"}}`.
fn result_matches(golden: &Value, ours: &Result<Value>) -> bool {
    match (golden.get("ok"), golden.get("error"), ours) {
        (Some(expected), _, Ok(actual)) => expected == actual,
        (_, Some(err), Err(e)) => e.kind().python_class() == err.get("type").and_then(Value::as_str),
        _ => false,
    }
}

struct Run {
    registry: Registry,
    report: Report,
}

/// The comparisons of one record.
struct Checks<'a> {
    id: &'a str,
    group: String,
    counted: Vec<(String, Value, Value, bool)>,
    extra: Vec<(String, Value, Value, bool)>,
}

impl<'a> Checks<'a> {
    fn new(id: &'a str, record: &Value) -> Self {
        Checks {
            id,
            group: record_group(record),
            counted: Vec::new(),
            extra: Vec::new(),
        }
    }

    fn result(&mut self, field: &str, golden: &Value, ours: Result<Value>, counted: bool) {
        let ok = result_matches(golden, &ours);
        self.push(field, golden.clone(), result_value(&ours), ok, counted);
    }

    fn plain(&mut self, field: &str, golden: &Value, ours: Value, counted: bool) {
        let ok = golden == &ours;
        self.push(field, golden.clone(), ours, ok, counted);
    }

    fn push(&mut self, field: &str, expected: Value, actual: Value, ok: bool, counted: bool) {
        let entry = (field.to_owned(), expected, actual, ok);
        if counted {
            self.counted.push(entry);
        } else {
            self.extra.push(entry);
        }
    }
}

impl Run {
    /// Counts a record chatfmt cannot replay (unknown op, kind or template) as a failure.
    fn unreplayable(&mut self, record: &Value, error: &Error) {
        self.report.cases += 1;
        let group = record_group(record);
        *self.report.groups.entry(group.clone()).or_default() += 1;
        self.report.failures.push(Failure {
            id: record["id"].as_str().unwrap_or("?").to_owned(),
            group,
            field: "record".to_owned(),
            expected: json!("a record chatfmt can replay"),
            actual: error_value(error),
        });
    }

    fn finish(&mut self, checks: Checks) {
        let id = checks.id.to_owned();
        self.report.cases += 1;
        *self.report.groups.entry(checks.group.clone()).or_default() += 1;
        let mut failed = Vec::new();
        let mut any_documented = false;
        for (counted, (field, expected, actual, ok)) in checks
            .counted
            .into_iter()
            .map(|c| (true, c))
            .chain(checks.extra.into_iter().map(|c| (false, c)))
        {
            if ok {
                continue;
            }
            if let Some(code) = classify(&field, &expected, &actual) {
                self.report.observed_documented.insert((code.to_owned(), id.clone()));
                any_documented |= counted;
                continue;
            }
            let failure = Failure {
                id: id.clone(),
                group: checks.group.clone(),
                field,
                expected,
                actual,
            };
            if counted {
                failed.push(failure);
            } else {
                self.report.extra_failures.push(failure);
            }
        }
        if !failed.is_empty() {
            self.report.failures.extend(failed);
        } else if any_documented {
            self.report.documented += 1;
        } else {
            self.report.matched += 1;
        }
    }

    fn check_golden(&mut self, record: &Value) -> Result<()> {
        let id = record["id"]
            .as_str()
            .ok_or_else(|| bad_record("?", "no id"))?
            .to_owned();
        match record["kind"].as_str() {
            Some("template_scenario") => self.check_scenario(&id, record),
            Some("api_edge") => self.check_api_edge(&id, record),
            other => Err(bad_record(&id, &format!("unknown kind {other:?}"))),
        }
    }

    fn template(&self, id: &str, record: &Value) -> Result<Conversation> {
        let name = record["template"]
            .as_str()
            .ok_or_else(|| bad_record(id, "no template"))?;
        self.registry.get(name)
    }
}
