//! The `chatfmt` command-line tool.

mod conformance_fastchat;
mod output;
mod templates_cmd;

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
    /// Conversation templates: list, show, match a model path, export as Jinja.
    #[command(subcommand)]
    Templates(templates_cmd::TemplatesCommand),
    /// Check chatfmt against a conformance kit.
    #[command(subcommand)]
    Conformance(ConformanceCommand),
}

#[derive(Subcommand)]
enum ConformanceCommand {
    /// Replay the FastChat conversation-template kit.
    Fastchat(conformance_fastchat::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Templates(cmd) => templates_cmd::run(cmd),
        Command::Conformance(ConformanceCommand::Fastchat(args)) => conformance_fastchat::run(args),
    }
}
