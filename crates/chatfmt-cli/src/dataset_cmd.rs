//! `chatfmt dataset`: formats a whole chat dataset (JSONL / Parquet) into text and, with
//! `--tokenize`, token ids and masks; bad rows go to a rejects file.

use anyhow::{anyhow, bail, Result};
use chatfmt_dataset::{Config, Fields, Format, OutputFormat};
use clap::{Args, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// How rows spell the conversation.
#[derive(Clone, Copy, ValueEnum)]
enum InputFormat {
    /// `messages` when present, else ShareGPT `conversations`.
    Auto,
    /// OpenAI-style `messages` (role/content).
    Messages,
    /// ShareGPT `conversations` (from/value).
    Sharegpt,
}

/// Options of `chatfmt dataset`.
#[derive(Args)]
pub struct DatasetArgs {
    /// The dataset: `.parquet`, else JSON Lines.
    input: PathBuf,
    /// The model folder (tokenizer.json, tokenizer_config.json, chat template).
    #[arg(long)]
    model: PathBuf,
    /// Output file: Parquet, or JSON Lines when it ends in `.jsonl` / `.json` (or with --output-format).
    #[arg(long)]
    output: PathBuf,
    /// Output format (default from the output file name).
    #[arg(long, value_parser = ["parquet", "jsonl"])]
    output_format: Option<String>,
    /// Rejected rows file (default: OUTPUT.rejects.jsonl).
    #[arg(long)]
    rejects: Option<PathBuf>,
    /// A template file (Jinja source) instead of the model's own.
    #[arg(long)]
    template: Option<PathBuf>,
    /// Also write input_ids, attention_mask and assistant_masks.
    #[arg(long)]
    tokenize: bool,
    /// Keep only the first N tokens of each row.
    #[arg(long, value_name = "N", requires = "tokenize")]
    max_length: Option<usize>,
    /// Append the assistant header at the end of each conversation.
    #[arg(long)]
    add_generation_prompt: bool,
    #[arg(long, value_enum, default_value = "auto")]
    format: InputFormat,
    /// Name of the messages column.
    #[arg(long, default_value = "messages")]
    messages_field: String,
    /// Name of the ShareGPT column.
    #[arg(long, default_value = "conversations")]
    conversations_field: String,
    /// Name of the tools column.
    #[arg(long, default_value = "tools")]
    tools_field: String,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Stop at the first row that cannot be formatted.
    #[arg(long)]
    strict: bool,
    /// Rows per chunk: the unit of parallel work and a Parquet row group (bounds memory).
    #[arg(long, default_value_t = 256)]
    window: usize,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `chatfmt dataset`; exit 0 when every row was formatted, 1 when some were rejected.
pub fn run(args: DatasetArgs) -> Result<ExitCode> {
    let output_format = match args.output_format.as_deref() {
        Some("jsonl") => OutputFormat::Jsonl,
        Some(_) => OutputFormat::Parquet,
        None => match args.output.extension().and_then(|e| e.to_str()) {
            Some("jsonl") | Some("json") => OutputFormat::Jsonl,
            _ => OutputFormat::Parquet,
        },
    };
    if args.output == args.input {
        bail!("--output is the input file {}", args.input.display());
    }
    let rejects = args.rejects.clone().unwrap_or_else(|| {
        let mut name = args.output.clone().into_os_string();
        name.push(".rejects.jsonl");
        PathBuf::from(name)
    });
    let config = Config {
        input: args.input,
        model: args.model,
        template: args.template,
        output: args.output,
        output_format,
        rejects,
        fields: Fields {
            format: match args.format {
                InputFormat::Auto => Format::Auto,
                InputFormat::Messages => Format::Messages,
                InputFormat::Sharegpt => Format::ShareGpt,
            },
            messages: args.messages_field,
            conversations: args.conversations_field,
            tools: args.tools_field,
        },
        tokenize: args.tokenize,
        max_length: args.max_length,
        add_generation_prompt: args.add_generation_prompt,
        jobs: args.jobs,
        strict: args.strict,
        window: args.window,
        progress: std::io::stderr().is_terminal(),
    };
    let s = chatfmt_dataset::run(&config).map_err(|e| anyhow!(e))?;
    if args.json {
        println!("{}", serde_json::to_string(&s)?);
    } else {
        eprintln!(
            "rows in {}, rows out {}, rows rejected {}, tokens {}; {:.1} s, {:.0} rows/s, {:.0} tokens/s",
            s.rows_in, s.rows_out, s.rows_rejected, s.tokens, s.seconds, s.rows_per_second, s.tokens_per_second
        );
        if let Some(path) = &s.rejects_file {
            eprintln!("rejected rows (index and reason): {}", path.display());
        }
    }
    Ok(if s.rows_rejected == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
