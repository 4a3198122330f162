//! The Jinja semantics kit: `probes.jsonl`, small templates with their exact output or error class.

use crate::{read_jsonl, Failure, KnownDifferences, Result};
use chatfmt_jinja::{Clock, Context, Template};
use serde::Serialize;
use serde_json::Value as Json;
use std::path::Path;

/// Tags whose probes are counted apart as optional.
const OPTIONAL_TAGS: [&str; 4] = ["bigint", "python_repr", "surrogate", "jinja_quirk"];

/// The summary of a run over the probes.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub cases: usize,
    pub matched: usize,
    pub documented: usize,
    pub optional_cases: usize,
    pub optional_matched: usize,
    pub failures: Vec<Failure>,
}

/// The outcome of one probe.
fn run_probe(p: &Json, frozen_now: &str) -> Result<(), Failure> {
    let id = p["id"].as_str().unwrap_or("?").to_string();
    let src = p["template"].as_str().unwrap_or("");
    let result = Template::new("<template>", src).and_then(|t| {
        let mut ctx = Context::from_json(p["context"].clone())?;
        ctx.clock = Clock::Fixed(frozen_now.to_string());
        t.render(&ctx)
    });
    let fail = |kind: &str, expected: String, actual: String| Failure {
        id: id.clone(),
        kind: kind.into(),
        expected,
        actual,
    };
    match (p["status"].as_str(), result) {
        (Some("ok"), Ok(r)) => {
            let want = p["output"].as_str().unwrap_or("");
            if r.text == want {
                Ok(())
            } else {
                Err(fail("output_mismatch", want.to_string(), r.text))
            }
        }
        (Some("ok"), Err(e)) => Err(fail(
            "unexpected_error",
            p["output"].as_str().unwrap_or("").to_string(),
            format!("{e}"),
        )),
        (_, Ok(r)) => Err(fail("missing_error", error_text(p), r.text)),
        (_, Err(e)) => {
            if p["error"]["name"].as_str() == Some(e.kind().python_name()) {
                Ok(())
            } else {
                Err(fail("wrong_error_class", error_text(p), format!("{e}")))
            }
        }
    }
}

fn error_text(p: &Json) -> String {
    format!(
        "{}: {}",
        p["error"]["name"].as_str().unwrap_or("?"),
        p["error"]["message"].as_str().unwrap_or("")
    )
}

/// The probes read into memory once, to run in parts (one group at a time, from several threads).
#[derive(Debug)]
pub struct Probes {
    probes: Vec<Json>,
    frozen_now: String,
}

impl Probes {
    /// Reads `probes.jsonl` (and the frozen clock of `groups.json`) of the kit at `dir`.
    pub fn load(dir: &Path) -> Result<Probes> {
        let probes = read_jsonl(&dir.join("probes.jsonl"))?;
        let groups: Json = std::fs::read_to_string(dir.join("groups.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Json::Null);
        let frozen_now = groups["frozen_now"]
            .as_str()
            .unwrap_or("2025-07-10T12:00:00")
            .to_string();
        Ok(Probes { probes, frozen_now })
    }

    /// The probe groups (`print`, `filters`, ...), in order of first use.
    pub fn groups(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.probes
            .iter()
            .filter_map(|p| p["group"].as_str())
            .filter(|g| seen.insert(*g))
            .collect()
    }

    /// Runs the probes of `group`, or every probe.
    pub fn run(&self, group: Option<&str>, known: &KnownDifferences) -> Report {
        let mut report = Report::default();
        for p in &self.probes {
            if group.is_some_and(|g| p["group"].as_str() != Some(g)) {
                continue;
            }
            let optional = p["tags"]
                .as_array()
                .is_some_and(|tags| tags.iter().any(|t| OPTIONAL_TAGS.contains(&t.as_str().unwrap_or(""))));
            let id = p["id"].as_str().unwrap_or("?");
            let outcome = run_probe(p, &self.frozen_now);
            if optional {
                report.optional_cases += 1;
                report.optional_matched += outcome.is_ok() as usize;
                continue;
            }
            report.cases += 1;
            match outcome {
                Ok(()) => report.matched += 1,
                Err(_) if known.contains(id) => report.documented += 1,
                Err(f) => report.failures.push(f),
            }
        }
        report
    }
}

/// Runs every probe of the kit at `dir`.
pub fn run(dir: &Path, known: &KnownDifferences) -> Result<Report> {
    Ok(Probes::load(dir)?.run(None, known))
}
