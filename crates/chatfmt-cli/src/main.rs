//! The `chatfmt` command-line tool.

mod conformance_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "chatfmt",
    version,
    about = "Render chat prompts exactly as the reference implementations do"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay a conformance kit and report how many cases match.
    #[command(subcommand)]
    Conformance(conformance_cmd::Kit),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Conformance(kit) => conformance_cmd::run(kit),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
