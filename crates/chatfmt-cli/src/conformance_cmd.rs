//! `chatfmt conformance KIT`: replays a conformance kit and prints a summary or JSON.

use crate::known_differences::known_differences;
use anyhow::Result;
use chatfmt_conformance::{self as conformance, Failure};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// The kits.
#[derive(Subcommand)]
pub enum Kit {
    /// The Jinja semantics probes (`probes.jsonl`).
    Jinja(KitArgs),
    /// The FastChat conversation-template kit (`goldens.jsonl`, `adapter_goldens.jsonl`).
    Fastchat(crate::conformance_fastchat::Args),
    /// The Hugging Face chat-template kit (`index.json`, `corpus/`, `scenarios.json`, `goldens.jsonl`).
    Hf {
        #[command(flatten)]
        args: KitArgs,
        /// Only this template id.
        #[arg(long)]
        template: Option<String>,
        /// Only this scenario id.
        #[arg(long)]
        scenario: Option<String>,
    },
    /// The tokens kit (`index.json`, `goldens.jsonl`, real tokenizers): ids and masks.
    Tokens(KitArgs),
}

/// Options shared by the kit runners.
#[derive(Args)]
pub struct KitArgs {
    /// The kit folder.
    #[arg(long)]
    kit: PathBuf,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    json: bool,
    /// How many failures to show in the summary.
    #[arg(long, default_value_t = 10)]
    show: usize,
    /// The documented differences (default: KNOWN_DIFFERENCES.md in the current folder).
    #[arg(long, value_name = "FILE")]
    known_differences: Option<PathBuf>,
}

fn print_failures(failures: &[Failure], show: usize) {
    for f in failures.iter().take(show) {
        println!("--- {} [{}]", f.id, f.kind);
        println!("expected: {:?}", f.expected);
        println!("actual:   {:?}", f.actual);
    }
}

/// Runs the chosen kit; exit 0 only when every case matched or is documented.
pub fn run(kit: Kit) -> Result<ExitCode> {
    match kit {
        Kit::Fastchat(args) => Ok(crate::conformance_fastchat::run(args)),
        Kit::Jinja(args) => {
            let known = known_differences(args.known_differences.as_deref())?;
            let r = conformance::jinja::run(&args.kit, &known)?;
            if args.json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                print_failures(&r.failures, args.show);
                println!(
                    "jinja kit: {} / {} matched, {} documented, {} failed; optional {} / {}",
                    r.matched,
                    r.cases,
                    r.documented,
                    r.failures.len(),
                    r.optional_matched,
                    r.optional_cases
                );
            }
            Ok(exit_code(r.matched + r.documented == r.cases))
        }
        Kit::Hf {
            args,
            template,
            scenario,
        } => {
            let known = known_differences(args.known_differences.as_deref())?;
            let filter = conformance::hf::Filter { template, scenario };
            let r = conformance::hf::run(&args.kit, &filter, &known)?;
            if args.json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                for f in r.failures.iter().take(args.show) {
                    println!("--- {} / {} {} [{}]", f.template, f.scenario, f.options, f.kind);
                    println!("expected: {:?}", f.expected);
                    println!("actual:   {:?}", f.actual);
                }
                println!(
                    "hf kit: {} / {} matched, {} documented; output_mismatch {}, span_mismatch {}, wrong_error_class {}, wrong_error_message {}, unexpected_error {}, missing_error {}",
                    r.matched, r.cases, r.documented, r.output_mismatch, r.span_mismatch, r.wrong_error_class, r.wrong_error_message, r.unexpected_error, r.missing_error
                );
            }
            Ok(exit_code(r.matched + r.documented == r.cases))
        }
        Kit::Tokens(args) => {
            let known = known_differences(args.known_differences.as_deref())?;
            let r = conformance::tokens::run(&args.kit, &known)?;
            if args.json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                print_failures(&r.failures, args.show);
                println!(
                    "tokens kit: {} / {} matched, {} documented, {} failed",
                    r.matched,
                    r.cases,
                    r.documented,
                    r.failures.len()
                );
            }
            Ok(exit_code(r.matched + r.documented == r.cases))
        }
    }
}

fn exit_code(all_matched: bool) -> ExitCode {
    if all_matched {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
