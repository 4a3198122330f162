//! The dataset run: a reader thread reads chunks of rows ahead, the worker pool formats and encodes
//! each chunk (one Parquet row group) on its own, a writer thread appends them in input order and
//! accounts for every row. A fixed number of chunks is in flight at a time, which bounds memory.

use crate::conversation::Fields;
use crate::input::{Row, Source};
use crate::output::{Encoded, Encoder, Formatted, OutputFormat, Rejects, Sink, Tokens};
use crate::Error;
use chatfmt::jinja::Clock;
use chatfmt::{ApplyOptions, ChatTemplate};
use chatfmt_tokenize::chat::{tokenize_chats, ChatTokenizeOptions};
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
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
    /// Rows per chunk: the unit of parallel work and a Parquet row group (memory holds a few chunks
    /// per worker).
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
        // The shared options, copied only for a row that has tools of its own.
        let with_tools;
        let apply = match conv.tools {
            None => &self.apply,
            Some(tools) => {
                with_tools = ApplyOptions {
                    tools: Some(tools),
                    ..self.apply.clone()
                };
                &with_tools
            }
        };
        let Some((tokenizer, opts)) = &self.tokenize else {
            let r = template
                .apply(&conv.messages, apply)
                .map_err(|e| (index, format!("rendering failed: {}: {e:#}", e.kind().python_name())))?;
            return Ok(Formatted {
                index,
                text: r.text,
                tokens: None,
            });
        };
        let chat = tokenize_chats(template, tokenizer, &[conv.messages.as_slice()], apply, opts)
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

/// A chunk of rows after formatting: its encoded rows and its rejects (index and reason), in order.
struct Done {
    seq: u64,
    encoded: Result<Encoded, String>,
    rejects: Vec<(u64, String)>,
    rows_in: u64,
    tokens: u64,
}

impl Formatter {
    /// Formats and encodes one chunk (on a worker).
    fn chunk(&self, encoder: &Encoder, seq: u64, rows: Vec<Row>) -> Done {
        let rows_in = rows.len() as u64;
        let mut formatted = Vec::with_capacity(rows.len());
        let mut rejects = Vec::new();
        for row in rows {
            match self.format(row) {
                Ok(f) => formatted.push(f),
                Err(reject) => rejects.push(reject),
            }
        }
        Done {
            seq,
            tokens: formatted
                .iter()
                .map(|f| f.tokens.as_ref().map_or(0, |t| t.input_ids.len() as u64))
                .sum(),
            encoded: encoder.encode(&formatted),
            rejects,
            rows_in,
        }
    }
}

/// Rows out, rows rejected, tokens.
type Written = (u64, u64, u64);

/// The writer thread: takes finished chunks in any order and writes them in input order; every
/// chunk written frees one of the `permits` that bound the chunks in flight.
fn write_in_order(
    done: Receiver<Done>,
    permits: Receiver<()>,
    mut sink: Sink,
    mut rejects: Rejects,
    strict: bool,
    bar: ProgressBar,
) -> Result<Written, Error> {
    let (mut out, mut rejected, mut tokens) = (0u64, 0u64, 0u64);
    let mut waiting = BTreeMap::new();
    let mut next = 0u64;
    for d in done {
        waiting.insert(d.seq, d);
        while let Some(d) = waiting.remove(&next) {
            for (index, error) in &d.rejects {
                if strict {
                    return Err(Error {
                        message: format!("row {index}: {error} (--strict stops at the first reject)"),
                    });
                }
                rejects.write(*index, error)?;
            }
            let encoded = d.encoded.map_err(|e| Error {
                message: format!("cannot encode the rows from {}: {e}", out + rejected),
            })?;
            rejected += d.rejects.len() as u64;
            out += d.rows_in - d.rejects.len() as u64;
            tokens += d.tokens;
            sink.append(encoded)?;
            bar.inc(d.rows_in);
            next += 1;
            // Each dispatched chunk took a permit first, so one is there to take back.
            let _ = permits.recv();
        }
    }
    sink.finish()?;
    rejects.finish()?;
    Ok((out, rejected, tokens))
}

/// The reader thread: sends chunks of `n` rows (read ahead of the workers) until the input ends.
fn read_chunks(mut source: Source, n: usize, chunks: SyncSender<Result<Vec<Row>, Error>>) {
    loop {
        let chunk = source.next_chunk(n);
        let last = !matches!(&chunk, Ok(rows) if !rows.is_empty());
        if chunks.send(chunk).is_err() || last {
            return;
        }
    }
}

/// Formats the dataset of `config`.
pub fn run(config: &Config) -> Result<Summary, Error> {
    let started = Instant::now();
    let columns = [
        config.fields.messages.as_str(),
        config.fields.conversations.as_str(),
        config.fields.tools.as_str(),
    ];
    let chunk_rows = config.window.max(1);
    let source = Source::open(&config.input, &columns, chunk_rows)?;
    let total_rows = source.total_rows();
    let (chunk_tx, chunk_rx) = sync_channel(1);
    std::thread::scope(|scope| {
        // Reading starts at once, while the tokenizer loads.
        scope.spawn(move || read_chunks(source, chunk_rows, chunk_tx));
        format_chunks(config, chunk_rx, total_rows, started)
    })
}

/// Everything after opening the input: load, format on the pool, write.
fn format_chunks(
    config: &Config,
    chunks: Receiver<Result<Vec<Row>, Error>>,
    total_rows: Option<u64>,
    started: Instant,
) -> Result<Summary, Error> {
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
    // Fail before formatting any row when the template cannot be loaded at all.
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
    let (sink, encoder) = Sink::create(&config.output, config.output_format, config.tokenize)?;
    if config.rejects.exists() {
        std::fs::remove_file(&config.rejects)
            .map_err(|e| Error::file(&config.rejects, format!("cannot remove the old rejects file: {e}")))?;
    }
    let rejects = Rejects::new(&config.rejects);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.jobs)
        .build()
        .map_err(|e| Error {
            message: format!("cannot start worker threads: {e}"),
        })?;
    let bar = progress_bar(total_rows, config.progress);
    let writer_bar = bar.clone();
    let strict = config.strict;
    // Chunks between reading and writing: one per worker and two more, so that workers keep busy
    // while the writer waits for the oldest; this bounds memory.
    let (permit_tx, permit_rx) = sync_channel::<()>(pool.current_num_threads() + 2);
    let (done_tx, done_rx) = channel::<Done>();

    let (rows_in, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || write_in_order(done_rx, permit_rx, sink, rejects, strict, writer_bar));
        let (formatter, encoder) = (&formatter, &encoder);
        let mut rows_in = 0u64;
        let read = pool.in_place_scope(|s| {
            for (seq, rows) in (0u64..).zip(chunks) {
                let rows = rows?;
                if rows.is_empty() {
                    break;
                }
                if permit_tx.send(()).is_err() {
                    // The writer stopped (its error is reported below).
                    break;
                }
                rows_in += rows.len() as u64;
                let done = done_tx.clone();
                s.spawn(move |_| {
                    // A closed channel means the writer stopped; its error is reported.
                    let _ = done.send(formatter.chunk(encoder, seq, rows));
                });
            }
            Ok(())
        });
        drop(done_tx);
        let written = writer.join().unwrap_or_else(|_| {
            Err(Error {
                message: "the writer thread panicked".into(),
            })
        });
        bar.finish_and_clear();
        read.map(|()| (rows_in, written))
    })?;
    let (rows_out, rows_rejected, tokens) = written?;
    if rows_in != rows_out + rows_rejected {
        return Err(Error {
            message: format!("{rows_in} rows read but {rows_out} written and {rows_rejected} rejected"),
        });
    }
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
