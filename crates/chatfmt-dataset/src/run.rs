//! The dataset run: read a window of rows, format it on all cores, write it in order (on a writer
//! thread, while the next window is formatted), account for every row.

use crate::conversation::Fields;
use crate::input::{Row, Source};
use crate::output::{Formatted, OutputFormat, Rejects, Sink, Tokens};
use crate::Error;
use chatfmt::jinja::Clock;
use chatfmt::{ApplyOptions, ChatTemplate};
use chatfmt_tokenize::chat::{tokenize_chats, ChatTokenizeOptions};
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::mpsc::sync_channel;
use std::time::Instant;

/// What to format and how.
#[derive(Debug, Clone)]
pub struct Config {
    pub input: PathBuf,
    /// Model folder: tokenizer.json, tokenizer_config.json and the chat template.
    pub model: PathBuf,
    /// A template file to use instead of the model's own.
    pub template: Option<PathBuf>,
    pub output: PathBuf,
    pub output_format: OutputFormat,
    /// Where rejected rows go (JSON Lines, created on the first reject).
    pub rejects: PathBuf,
    pub fields: Fields,
    /// Add `input_ids`, `attention_mask`, `assistant_masks`.
    pub tokenize: bool,
    /// Truncate to this many tokens.
    pub max_length: Option<usize>,
    pub add_generation_prompt: bool,
    /// Worker threads (0 = all cores).
    pub jobs: usize,
    /// The first reject ends the run with an error.
    pub strict: bool,
    /// Rows per window (memory is bounded by about two windows of rows).
    pub window: usize,
    /// Draw a progress bar (on stderr, when it is a terminal).
    pub progress: bool,
}

/// The figures of a finished run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub rows_in: u64,
    pub rows_out: u64,
    pub rows_rejected: u64,
    /// Tokens written (with `tokenize`).
    pub tokens: u64,
    pub seconds: f64,
    pub rows_per_second: f64,
    pub tokens_per_second: f64,
    /// The rejects file, when rows were rejected.
    pub rejects_file: Option<PathBuf>,
}

/// What the workers share.
struct Formatter {
    /// One compiled template, shared by every worker.
    template: ChatTemplate,
    fields: Fields,
    apply: ApplyOptions,
    /// With `--tokenize`.
    tokenize: Option<(ChatTokenizer, ChatTokenizeOptions)>,
}

impl Formatter {
    fn format(&self, row: Row) -> Result<Formatted, (u64, String)> {
        let index = row.index;
        let template = &self.template;
        let value = row.into_value().map_err(|e| (index, e))?;
        let conv = self.fields.conversation(&value).map_err(|e| (index, e))?;
        let mut apply = self.apply.clone();
        apply.tools = conv.tools;
        let Some((tokenizer, opts)) = &self.tokenize else {
            let r = template
                .apply(&conv.messages, &apply)
                .map_err(|e| (index, format!("rendering failed: {}: {e:#}", e.kind().python_name())))?;
            return Ok(Formatted {
                index,
                text: r.text,
                tokens: None,
            });
        };
        let chat = tokenize_chats(template, tokenizer, &[conv.messages.as_slice()], &apply, opts)
            .map_err(|e| (index, e.to_string()))?
            .pop()
            .ok_or((index, "no conversation was tokenized".to_string()))?;
        let e = chat.encoded;
        Ok(Formatted {
            index,
            text: chat.text,
            tokens: Some(Tokens {
                assistant_masks: e.assistant_masks.unwrap_or_else(|| vec![0; e.input_ids.len()]),
                input_ids: e.input_ids,
                attention_mask: e.attention_mask,
            }),
        })
    }
}

fn progress_bar(total: Option<u64>, enabled: bool) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let bar = match total {
        Some(n) => ProgressBar::new(n).with_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} rows {per_sec} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {pos} rows {per_sec}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar
}

/// Window results on their way to the writer.
type Window = Vec<Result<Formatted, (u64, String)>>;

/// Formats the dataset of `config`.
pub fn run(config: &Config) -> Result<Summary, Error> {
    let started = Instant::now();
    // Without --tokenize the model folder needs no tokenizer.json; the template then sees the
    // special tokens of tokenizer_config.json, as `chatfmt render` does.
    let tokenizer = if config.tokenize {
        Some(ChatTokenizer::from_model_dir(&config.model).map_err(|e| Error { message: e.to_string() })?)
    } else {
        None
    };
    let special = tokenizer
        .as_ref()
        .map(|t| t.special_tokens().clone())
        .unwrap_or_default();
    // Fail before reading any row when the template cannot be loaded at all.
    let template = match &config.template {
        Some(file) => {
            let src = std::fs::read_to_string(file).map_err(|e| Error::file(file, format!("cannot read: {e}")))?;
            ChatTemplate::new(&src, special.clone())
        }
        None => ChatTemplate::from_model_dir(&config.model).map_err(|e| Error { message: e.to_string() })?,
    };
    let apply = ApplyOptions {
        add_generation_prompt: config.add_generation_prompt,
        // With a tokenizer, templates see its special tokens, as transformers passes them.
        kwargs: special,
        clock: Clock::default(),
        ..ApplyOptions::default()
    };
    let opts = ChatTokenizeOptions {
        encode: EncodeOptions {
            truncation: config.max_length.is_some(),
            max_length: config.max_length,
            assistant_masks: true,
            ..EncodeOptions::default()
        },
        sanitize_control_tokens: None,
    };
    let formatter = Formatter {
        template,
        fields: config.fields.clone(),
        apply,
        tokenize: tokenizer.map(|t| (t, opts)),
    };
    let columns = [
        config.fields.messages.as_str(),
        config.fields.conversations.as_str(),
        config.fields.tools.as_str(),
    ];
    let mut source = Source::open(&config.input, &columns)?;
    let window = config.window.max(1);
    let mut sink = Sink::create(&config.output, config.output_format, config.tokenize, window)?;
    if config.rejects.exists() {
        std::fs::remove_file(&config.rejects)
            .map_err(|e| Error::file(&config.rejects, format!("cannot remove the old rejects file: {e}")))?;
    }
    let mut rejects = Rejects::new(&config.rejects);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.jobs)
        .build()
        .map_err(|e| Error {
            message: format!("cannot start worker threads: {e}"),
        })?;
    let bar = progress_bar(source.total_rows(), config.progress);
    let strict = config.strict;

    let (tx, rx) = sync_channel::<Window>(1);
    let (rows_in, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || -> Result<(u64, u64, u64), Error> {
            let (mut out, mut rejected, mut tokens) = (0u64, 0u64, 0u64);
            for results in rx {
                let mut ok = Vec::with_capacity(results.len());
                for r in results {
                    match r {
                        Ok(f) => {
                            tokens += f.tokens.as_ref().map_or(0, |t| t.input_ids.len() as u64);
                            ok.push(f);
                        }
                        Err((index, error)) => {
                            if strict {
                                return Err(Error {
                                    message: format!("row {index}: {error} (--strict stops at the first reject)"),
                                });
                            }
                            rejects.write(index, &error)?;
                            rejected += 1;
                        }
                    }
                }
                out += ok.len() as u64;
                sink.write(&ok)?;
            }
            sink.finish()?;
            rejects.finish()?;
            Ok((out, rejected, tokens))
        });
        let mut rows_in = 0u64;
        let read: Result<(), Error> = loop {
            let rows = match source.next_chunk(window) {
                Ok(rows) => rows,
                Err(e) => break Err(e),
            };
            if rows.is_empty() {
                break Ok(());
            }
            rows_in += rows.len() as u64;
            let results: Window = pool.install(|| {
                rows.into_par_iter()
                    .with_min_len(32)
                    .map(|r| formatter.format(r))
                    .collect()
            });
            let n = results.len() as u64;
            if tx.send(results).is_err() {
                // The writer stopped (its error is reported below).
                break Ok(());
            }
            bar.inc(n);
        };
        drop(tx);
        bar.finish_and_clear();
        let written = writer.join().unwrap_or_else(|_| {
            Err(Error {
                message: "the writer thread panicked".into(),
            })
        });
        read.map(|()| (rows_in, written))
    })?;
    let (rows_out, rows_rejected, tokens) = written?;
    let seconds = started.elapsed().as_secs_f64();
    Ok(Summary {
        rows_in,
        rows_out,
        rows_rejected,
        tokens,
        seconds,
        rows_per_second: rows_in as f64 / seconds.max(1e-9),
        tokens_per_second: tokens as f64 / seconds.max(1e-9),
        rejects_file: (rows_rejected > 0).then(|| config.rejects.clone()),
    })
}
