//! Times built-ins over 100,000 items next to Jinja2 in the same run, with the steps each render
//! is charged. `cargo bench -p chatfmt-jinja --bench cost`; `CHATFMT_PYTHON` names a Python with
//! jinja2 installed (default `python3`; without jinja2 only chatfmt is timed).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_jinja::{Context, Template};
use std::process::Command;
use std::time::{Duration, Instant};

/// The 100k-item cases, shared with `tests/cost.rs`.
#[path = "../tests/support/cost_cases.rs"]
mod cost_cases;

/// Times one render of each template in Jinja2's immutable sandbox (the best of three, or one run
/// when it takes over a second), in seconds.
const JINJA2: &str = r#"
import json, sys, time
from jinja2.sandbox import ImmutableSandboxedEnvironment
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
out = []
for src in json.load(sys.stdin):
    t = env.from_string(src)
    best = None
    for _ in range(3):
        start = time.perf_counter()
        try:
            t.render()
        except Exception:
            pass
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
        if took > 1:
            break
    out.append(best)
print(json.dumps(out))
"#;

fn jinja2_times(sources: &[&str]) -> Option<Vec<f64>> {
    let python = std::env::var("CHATFMT_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let mut child = Command::new(python)
        .args(["-c", JINJA2])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    serde_json::to_writer(child.stdin.take()?, sources).ok()?;
    let out = child.wait_with_output().ok()?;
    serde_json::from_slice(&out.stdout).ok()
}

/// The best of three renders: its time, its steps and how it ended.
fn ours(src: &str) -> (Duration, u64, Result<String, String>) {
    let t = Template::new("cost", src).unwrap();
    let ctx = Context::default();
    let mut best = (Duration::MAX, 0, Ok(String::new()));
    for _ in 0..3 {
        let start = Instant::now();
        let r = t.render(&ctx);
        let took = start.elapsed();
        let (steps, result) = match r {
            Ok(r) => (r.steps, Ok(r.text)),
            Err(e) => (0, Err(e.message().to_string())),
        };
        if took < best.0 {
            best = (took, steps, result);
        }
    }
    best
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks cases by name.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let cases: Vec<_> = cost_cases::CASES
        .iter()
        .filter(|c| filter.as_deref().is_none_or(|f| c.name.contains(f)))
        .collect();
    let sources: Vec<&str> = cases.iter().map(|c| c.source).collect();
    let jinja2 = jinja2_times(&sources);
    if jinja2.is_none() {
        eprintln!("jinja2 not found (set CHATFMT_PYTHON): timing chatfmt only");
    }
    println!(
        "{:<28} {:>10} {:>10} {:>10}  result",
        "case", "steps", "chatfmt s", "jinja2 s"
    );
    for (i, case) in cases.iter().enumerate() {
        let (took, steps, result) = ours(case.source);
        let j = jinja2.as_ref().map_or("-".to_string(), |t| format!("{:.4}", t[i]));
        // What the tests expect of the case, checked here too.
        let expected = match (&case.end, &result) {
            (cost_cases::End::Text(want), Ok(text)) => text.starts_with(want) && steps <= case.max_steps,
            (cost_cases::End::Limit(limit), Err(msg)) => msg.contains(limit),
            _ => false,
        };
        let result = match result {
            Ok(text) => format!("{text:.20}"),
            Err(msg) => format!("{msg:.60}"),
        };
        let result = if expected {
            result
        } else {
            format!("UNEXPECTED {result}")
        };
        println!(
            "{:<28} {:>10} {:>10.4} {:>10}  {}",
            case.name,
            steps,
            took.as_secs_f64(),
            j,
            result
        );
    }
}
