//! `chatfmt dataset`: formats a whole chat dataset (JSONL / Parquet) into text and, with
//! `--tokenize`, token ids and masks, after the input's columns (the schema of
//! `chatfmt.format_batch`); a bad row gets its `error` there and goes to a rejects file too. Outputs
//! appear only when the run succeeds, and never on top of the input.

use crate::mask_args::MaskArgs;
use crate::model_args::{ModelArgs, Plan};
use crate::progress::Bar;
use anyhow::{bail, Result};
use chatfmt::{ApplyOptions, MaskSource};
use chatfmt_dataset::{Config, Fields, Format, InputFormat, OutputFormat};
use clap::{Args, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How rows spell the conversation.
#[derive(Clone, Copy, ValueEnum)]
enum RowFormat {
    /// `messages` when present, else ShareGPT `conversations`.
    Auto,
    /// OpenAI-style `messages` (role/content).
    Messages,
    /// ShareGPT `conversations` (from/value).
    Sharegpt,
}

/// The input file's format.
#[derive(Clone, Copy, ValueEnum)]
enum FileFormat {
    /// JSON Lines: one JSON object a line.
    Jsonl,
    /// Apache Parquet.
    Parquet,
    /// An Arrow IPC file or stream (`datasets`' `save_to_disk` writes `data-*.arrow` streams).
    Arrow,
}

/// Options of `chatfmt dataset`.
#[derive(Args)]
pub struct DatasetArgs {
    /// The dataset: Parquet, Arrow IPC or JSON Lines (recognised from the first bytes).
    input: PathBuf,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    masks: MaskArgs,
    /// Also write `message_spans`: each message's index, role, turn and content spans (code points),
    /// and with --tokenize their token ranges.
    #[arg(long)]
    message_spans: bool,
    /// Also write `text` with --tokenize (without it, `text` is always written).
    #[arg(long)]
    text: bool,
    /// Output file: Parquet, or JSON Lines when it ends in `.jsonl` / `.json` (or with --output-format).
    /// An existing file there is replaced when the run succeeds; it may not be the input.
    #[arg(long)]
    output: PathBuf,
    /// Output format (default from the output file name).
    #[arg(long, value_parser = ["parquet", "jsonl"])]
    output_format: Option<String>,
    /// Read the input as this format instead of recognising it.
    #[arg(long, value_enum)]
    input_format: Option<FileFormat>,
    /// Rejected rows file, one JSON object a line: index, kind, error (default: OUTPUT.rejects.jsonl).
    #[arg(long)]
    rejects: Option<PathBuf>,
    /// Also write input_ids, attention_mask and assistant_masks (with the --model's tokenizer); without
    /// it, --masks writes assistant_spans.
    #[arg(long)]
    tokenize: bool,
    /// Keep only the first N tokens of each row.
    #[arg(long, value_name = "N", requires = "tokenize")]
    max_length: Option<usize>,
    /// Write ids without assistant_masks, as apply_chat_template without return_assistant_tokens_mask:
    /// no row is rejected for its masks (an assistant turn truncated away, or none found).
    #[arg(long, requires = "tokenize", conflicts_with_all = ["masks", "stop_tokens", "message_spans"])]
    no_masks: bool,
    /// Append the assistant header at the end of each conversation.
    #[arg(long)]
    add_generation_prompt: bool,
    /// Leave each conversation's final message open for the model to continue (optionally naming the
    /// field); with --tokenize, masks come from provenance (--masks provenance) or are left out (--no-masks).
    #[arg(long, num_args = 0..=1, default_missing_value = "content", conflicts_with = "add_generation_prompt")]
    continue_final_message: Option<String>,
    /// How rows spell the conversation.
    #[arg(long, value_enum, default_value = "auto")]
    format: RowFormat,
    /// Name of the messages column.
    #[arg(long, default_value = "messages")]
    messages_field: String,
    /// Name of the ShareGPT column.
    #[arg(long, default_value = "conversations")]
    conversations_field: String,
    /// Name of the tools column.
    #[arg(long, default_value = "tools")]
    tools_field: String,
    /// Name of the documents column (for RAG templates).
    #[arg(long, default_value = "documents")]
    documents_field: String,
    /// Worker threads (default: all cores).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Stop at the first row that cannot be formatted (nothing is written then).
    #[arg(long)]
    strict: bool,
    /// Rows per chunk: the unit of parallel work and a Parquet row group (bounds memory).
    #[arg(long, default_value_t = 256)]
    window: usize,
    /// Input bytes per chunk: a chunk ends sooner once its rows hold this many bytes (long
    /// conversations then make smaller chunks, not more memory).
    #[arg(long, default_value_t = 4 << 20)]
    window_bytes: usize,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `chatfmt dataset`; exit 0 when every row was formatted, 1 when some failed (they are in the
/// output with their `error`, and in the rejects file).
pub fn run(args: DatasetArgs) -> Result<ExitCode> {
    let output_format = match args.output_format.as_deref() {
        Some("jsonl") => OutputFormat::Jsonl,
        Some(_) => OutputFormat::Parquet,
        None => match args.output.extension().and_then(|e| e.to_str()) {
            Some("jsonl") | Some("json") => OutputFormat::Jsonl,
            _ => OutputFormat::Parquet,
        },
    };
    let rejects = args.rejects.clone().unwrap_or_else(|| {
        let mut name = args.output.clone().into_os_string();
        name.push(".rejects.jsonl");
        PathBuf::from(name)
    });
    let plan = args.model.plan()?;
    let tokenizer = match args.tokenize {
        true => args.model.tokenizer_model(&plan)?.tokenizer_dir().map(PathBuf::from),
        false => None,
    };
    let Plan::Jinja(resolved) = plan else {
        bail!(
            "dataset formats with Jinja chat templates; for a FastChat template export it first \
             (chatfmt templates export NAME > t.jinja) and pass --template t.jinja"
        );
    };
    // Rows with assistant messages but no assistant span are rejected rather than given an all-zero mask.
    let spans = if (args.tokenize && !args.no_masks) || args.message_spans || args.masks.given() {
        let opts = ApplyOptions {
            chat_template: args.model.template_name.clone(),
            kwargs: args.model.special_tokens(),
            ..ApplyOptions::default()
        };
        let spans = args.masks.span_options(&resolved, &opts, args.message_spans)?;
        // transformers refuses continue_final_message with return_assistant_tokens_mask.
        let tags = match spans.source {
            MaskSource::Tags => true,
            MaskSource::Auto => resolved.template.has_generation_blocks(&opts)?,
            MaskSource::Provenance => false,
        };
        if args.continue_final_message.is_some() && tags {
            bail!(
                "--continue-final-message is not compatible with masks from {{% generation %}} blocks; \
                 use --masks provenance, or --no-masks for ids only"
            );
        }
        Some(spans)
    } else {
        None
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    // SIGINT / SIGTERM stop the run: the temporary output files are removed and nothing is written.
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))?;
    let bar = std::io::stderr().is_terminal().then(|| Arc::new(Bar::new()));
    let config = Config {
        input: args.input,
        input_format: args.input_format.map(|f| match f {
            FileFormat::Jsonl => InputFormat::Jsonl,
            FileFormat::Parquet => InputFormat::Parquet,
            FileFormat::Arrow => InputFormat::ArrowIpc,
        }),
        template: Arc::new(resolved.template),
        tokenizer,
        text: args.text,
        variables: args.model.special_tokens(),
        template_name: args.model.template_name.clone(),
        output: args.output,
        output_format,
        rejects,
        fields: Fields {
            format: match args.format {
                RowFormat::Auto => Format::Auto,
                RowFormat::Messages => Format::Messages,
                RowFormat::Sharegpt => Format::ShareGpt,
            },
            messages: args.messages_field,
            conversations: args.conversations_field,
            tools: args.tools_field,
            documents: Some(args.documents_field),
        },
        max_length: args.max_length,
        spans,
        assistant_masks: !args.no_masks,
        add_generation_prompt: args.add_generation_prompt,
        continue_final_message: args.continue_final_message,
        jobs: args.jobs,
        strict: args.strict,
        window: args.window,
        window_bytes: args.window_bytes,
        progress: bar.map(|b| b as Arc<dyn chatfmt_dataset::Progress>),
        cancel: Some(cancel),
    };
    let s = chatfmt_dataset::run(&config)?;
    if args.json {
        crate::output::emit(&format!("{}\n", serde_json::to_string(&s)?));
    } else {
        eprintln!(
            "rows in {}, rows out {}, rows rejected {} (in the output with their error), tokens {}; {:.1} s, {:.0} rows/s, {:.0} tokens/s",
            s.rows_in, s.rows_out, s.rows_rejected, s.tokens, s.seconds, s.rows_per_second, s.tokens_per_second
        );
        if let Some(path) = &s.rejects_file {
            eprintln!("rejected rows (index, kind, error): {}", path.display());
        }
        if let Some(n) = s.rejected_kinds.get("LimitExceeded") {
            eprintln!(
                "hint: {n} of the rejected rows passed a render limit (LimitExceeded); those over the step budget render with --max-steps N"
            );
        }
    }
    Ok(if s.rows_rejected == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
