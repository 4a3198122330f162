//! `chatfmt conformance fastchat --kit DIR [--json]`: replays the FastChat kit.

use crate::output::emit;
use chatfmt_conformance::fastchat::{run_kit, Failure, Report};
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `conformance fastchat`.
#[derive(ClapArgs)]
pub struct Args {
    /// The kit folder (holding goldens.jsonl and adapter_goldens.jsonl).
    #[arg(long)]
    kit: PathBuf,
    /// Print one JSON object instead of the summary.
    #[arg(long)]
    json: bool,
    /// The documented differences (default: KNOWN_DIFFERENCES.md in the current folder).
    #[arg(long, value_name = "FILE")]
    known_differences: Option<PathBuf>,
}

/// How many failures the human output shows.
const SHOWN: usize = 5;

pub fn run(args: Args) -> ExitCode {
    if !args.kit.join("goldens.jsonl").is_file() {
        eprintln!("error: no goldens.jsonl in {}", args.kit.display());
        return ExitCode::from(2);
    }
    let known = match crate::known_differences::known_differences(args.known_differences.as_deref()) {
        Ok(known) => known,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    };
    let report = match run_kit(&args.kit, &known) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if args.json {
        emit(&format!("{}\n", report.to_json()));
    } else {
        emit(&human(&report));
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn human(report: &Report) -> String {
    let mut out = format!(
        "FastChat kit: {} cases, {} matched, {} documented, {} failed\n",
        report.cases,
        report.matched,
        report.documented,
        report.cases - report.matched - report.documented
    );
    if !report.observed_documented.is_empty() {
        let mut per_code = std::collections::BTreeMap::<&str, usize>::new();
        for (code, _) in &report.observed_documented {
            *per_code.entry(code).or_default() += 1;
        }
        let parts: Vec<String> = per_code.iter().map(|(c, n)| format!("{c} x{n}")).collect();
        out += &format!("documented differences (KNOWN_DIFFERENCES.md): {}\n", parts.join(", "));
    }
    if !report.extra_failures.is_empty() {
        out += &format!("uncounted outputs differing: {}\n", report.extra_failures.len());
    }
    if !report.stale_documented.is_empty() {
        out += &format!(
            "documented differences that now match (stale): {}\n",
            report.stale_documented.len()
        );
    }
    for failure in report.failures.iter().chain(&report.extra_failures).take(SHOWN) {
        out += &diff(failure);
    }
    out
}

/// A failure with, for prompts, the text around the first differing character.
fn diff(f: &Failure) -> String {
    let mut out = format!("\n--- {} [{}]\n", f.id, f.field);
    let text = |v: &serde_json::Value| v.get("ok").and_then(|s| s.as_str()).map(str::to_owned);
    match (text(&f.expected), text(&f.actual)) {
        (Some(expected), Some(actual)) => {
            let (at, start) = chatfmt_conformance::first_difference(&expected, &actual);
            out += &format!("first difference at byte {at}\n");
            out += &format!("  expected: {:?}\n", &expected[start..]);
            out += &format!("  actual:   {:?}\n", actual.get(start..).unwrap_or(&actual));
        }
        _ => {
            out += &format!("  expected: {}\n", f.expected);
            out += &format!("  actual:   {}\n", f.actual);
        }
    }
    out
}
