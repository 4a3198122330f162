//! The `chatfmt` command-line tool.

mod check_cmd;
mod conformance_cmd;
mod conformance_fastchat;
mod conversation_args;
mod dataset_cmd;
mod exit;
mod known_differences;
mod mask_args;
mod model_args;
mod output;
mod progress;
mod render_cmd;
mod serve_cmd;
mod templates_cmd;
mod templates_set;
mod tokenize_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc: faster for the many small allocations of rendering, and it keeps a long multi-threaded
/// `chatfmt dataset` run from growing through allocator fragmentation.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "chatfmt",
    version,
    about = "Render chat prompts exactly as the reference implementations do",
    after_help = "Exit codes: 0 success; 1 some records were rejected, or `check` found errors; \
                  2 usage or input error; 130 interrupted. A closed output pipe ends quietly with 0."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render a conversation with a model's chat template and print the prompt.
    Render(Box<render_cmd::RenderArgs>),
    /// Render a conversation and print its token ids (and assistant masks) as transformers does.
    Tokenize(Box<tokenize_cmd::TokenizeArgs>),
    /// Format a whole dataset (JSONL / Parquet): text, and with --tokenize ids and masks.
    Dataset(Box<dataset_cmd::DatasetArgs>),
    /// Conversation templates: list, show, match a model path, export as Jinja; save into a model folder.
    #[command(subcommand)]
    Templates(templates_cmd::TemplatesCommand),
    /// Replay a conformance kit and report how many cases match.
    #[command(subcommand)]
    Conformance(conformance_cmd::Kit),
    /// Check a chat template: errors, capabilities and warnings (exit 1 on errors).
    Check(check_cmd::CheckArgs),
    /// Serve rendering and tokenizing over HTTP (vLLM's and llama.cpp's routes, and /v1/render).
    Serve(Box<serve_cmd::ServeArgs>),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Conformance(kit) => conformance_cmd::run(kit),
        Command::Templates(cmd) => Ok(templates_cmd::run(cmd)),
        Command::Check(args) => check_cmd::run(args),
        Command::Render(args) => render_cmd::run(*args).map(|()| ExitCode::SUCCESS),
        Command::Dataset(args) => dataset_cmd::run(*args),
        Command::Tokenize(args) => tokenize_cmd::run(*args).map(|()| ExitCode::SUCCESS),
        Command::Serve(args) => serve_cmd::run(*args).map(|()| ExitCode::SUCCESS),
    };
    result.unwrap_or_else(|e| exit::fail(&e))
}
