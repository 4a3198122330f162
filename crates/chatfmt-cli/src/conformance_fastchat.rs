//! `chatfmt conformance fastchat --kit DIR [--json]`: replays the FastChat kit.

use chatfmt::conversation::conformance::{run_kit, Failure, Report};
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
}

/// How many failures the human output shows.
const SHOWN: usize = 5;

pub fn run(args: Args) -> ExitCode {
    if !args.kit.join("goldens.jsonl").is_file() {
        eprintln!("error: no goldens.jsonl in {}", args.kit.display());
        return ExitCode::from(2);
    }
    let report = match run_kit(&args.kit) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if args.json {
        println!("{}", report.to_json());
    } else {
        print_human(&report);
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn print_human(report: &Report) {
    println!(
        "FastChat kit: {} cases, {} matched, {} documented, {} failed",
        report.cases,
        report.matched,
        report.documented,
        report.cases - report.matched - report.documented
    );
    if !report.extra_failures.is_empty() {
        println!(
            "uncounted outputs differing: {}",
            report.extra_failures.len()
        );
    }
    if !report.stale_documented.is_empty() {
        println!(
            "documented differences that now match (stale): {}",
            report.stale_documented.len()
        );
    }
    for failure in report
        .failures
        .iter()
        .chain(&report.extra_failures)
        .take(SHOWN)
    {
        print_failure(failure);
    }
}

fn print_failure(f: &Failure) {
    println!("\n--- {} [{}]", f.id, f.field);
    let text = |v: &serde_json::Value| v.get("ok").and_then(|s| s.as_str()).map(str::to_owned);
    match (text(&f.expected), text(&f.actual)) {
        (Some(expected), Some(actual)) => {
            let at = expected
                .char_indices()
                .zip(actual.chars())
                .find(|((_, a), b)| a != b)
                .map_or(expected.len().min(actual.len()), |((i, _), _)| i);
            let start = expected[..at]
                .char_indices()
                .rev()
                .nth(40)
                .map_or(0, |(i, _)| i);
            println!("first difference at byte {at}");
            println!("  expected: {:?}", &expected[start..]);
            println!("  actual:   {:?}", actual.get(start..).unwrap_or(&actual));
        }
        _ => {
            println!("  expected: {}", f.expected);
            println!("  actual:   {}", f.actual);
        }
    }
}
