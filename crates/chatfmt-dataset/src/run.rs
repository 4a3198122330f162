//! The dataset run: a reader thread reads chunks of rows ahead, the worker pool formats and encodes
//! each chunk (one Parquet row group) on its own, a writer thread appends them in input order and
//! accounts for every row. A fixed number of chunks is in flight at a time, which bounds memory.

use crate::columns::{self, check_ids, code_point_ranges, Columns, Formatted, Outcome, Overflow, Tokens};
use crate::conversation::Fields;
use crate::input::{Chunk, InputFormat, Payload, Source};
use crate::output::{Encoded, Encoder, InputRows, OutputFormat, Reject, Rejects, Sink};
use crate::safe_file::{check_outputs, AtomicFile};
use crate::{Error, ErrorKind};
use arrow_schema::SchemaRef;
use chatfmt::jinja::Clock;
use chatfmt::{ApplyOptions, ChatSpans, ChatTemplate, SpanOptions};
use chatfmt_tokenize::chat::{tokenize_chats, ChatTokenizeOptions};
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions};
use serde::Serialize;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::time::Instant;

/// What to format and how.
#[derive(Clone)]
pub struct Config {
    pub input: PathBuf,
    /// The input's format; `None` recognises it from the file's first bytes.
    pub input_format: Option<InputFormat>,
    /// The chat template, with the special tokens it sees.
    pub template: Arc<ChatTemplate>,
    /// A model folder whose tokenizer adds `input_ids`, `attention_mask`, `assistant_masks`; the
    /// template then sees the tokenizer's special tokens, as transformers passes them.
    pub tokenizer: Option<PathBuf>,
    /// Write `text` when tokenizing too (without a tokenizer it is always written).
    pub text: bool,
    /// More template variables (they win over the special tokens).
    pub variables: Map<String, Json>,
    /// The named template to use (`tool_use`, ...), as transformers' `chat_template` argument.
    pub template_name: Option<String>,
    pub output: PathBuf,
    pub output_format: OutputFormat,
    /// Where rejected rows go (JSON Lines, written only when rows are rejected).
    pub rejects: PathBuf,
    pub fields: Fields,
    /// Truncate to this many tokens.
    pub max_length: Option<usize>,
    /// Find assistant spans (and, when asked, message spans) by chatfmt's masks rule: with a tokenizer
    /// they make `assistant_masks`, without one the `assistant_spans` column; `message_spans` adds
    /// that column. A row with assistant messages but no assistant span is rejected
    /// (`EmptyAssistantMask`), as is one whose assistant tokens truncation removed all of
    /// (`AssistantTruncated`). `None`: `assistant_masks` from `{% generation %}` blocks, unchecked.
    pub spans: Option<SpanOptions>,
    /// With a tokenizer, write `assistant_masks` (from `spans`, else the template's generation
    /// blocks). `false`: ids only, as `apply_chat_template` without `return_assistant_tokens_mask`,
    /// and no row is rejected for its masks.
    pub assistant_masks: bool,
    pub add_generation_prompt: bool,
    /// Leave each conversation's final message open, naming its field (transformers'
    /// `continue_final_message`).
    pub continue_final_message: Option<String>,
    /// Worker threads (0 = all cores).
    pub jobs: usize,
    /// The first reject ends the run with an error.
    pub strict: bool,
    /// Rows per chunk: the unit of parallel work and a Parquet row group (memory holds a few chunks
    /// per worker).
    pub window: usize,
    /// Input bytes per chunk: a chunk also ends once its rows hold this many bytes (it has at least
    /// one row), so that memory does not grow with the length of the conversations.
    pub window_bytes: usize,
    /// Told how far the run is.
    pub progress: Option<Arc<dyn Progress>>,
    /// Set (e.g. by a signal handler) to stop the run; nothing is written then.
    pub cancel: Option<Arc<AtomicBool>>,
}

/// How much input there is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Total {
    /// Rows (Parquet records its row count).
    Rows(u64),
    /// Bytes of input (JSON Lines).
    Bytes(u64),
}

/// What a run reports as it goes; called from the thread that writes rows, in input order.
pub trait Progress: Send + Sync {
    /// The run starts; `total` is the input's size where it is known.
    fn start(&self, total: Option<Total>);
    /// `rows` more rows, `bytes` more input bytes (JSON Lines) are done.
    fn advance(&self, rows: u64, bytes: u64);
    /// The run ended (successfully or not).
    fn finish(&self);
}

/// The figures of a finished run. Every input row is in the output: `rows_out` formatted, and
/// `rows_rejected` with their `error`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub rows_in: u64,
    pub rows_out: u64,
    pub rows_rejected: u64,
    /// Tokens written (with a tokenizer).
    pub tokens: u64,
    pub seconds: f64,
    pub rows_per_second: f64,
    pub tokens_per_second: f64,
    /// The rejects file, when rows were rejected.
    pub rejects_file: Option<PathBuf>,
    /// Rows rejected, by kind (see [`Reject::kind`]).
    pub rejected_kinds: BTreeMap<String, u64>,
}

/// What the workers share.
struct Formatter {
    /// The new columns (a JSON Lines row with a key of the same name is rejected).
    columns: Columns,
    /// One compiled template, shared by every worker.
    template: Arc<ChatTemplate>,
    fields: Fields,
    apply: ApplyOptions,
    /// With a tokenizer.
    tokenize: Option<(ChatTokenizer, ChatTokenizeOptions)>,
    /// Assistant and message spans (see [`Config::spans`]).
    spans: Option<SpanOptions>,
}

/// The kind of a reject for bad row content.
const INVALID_INPUT: &str = "InvalidInput";
/// The kind of a reject whose assistant messages got no assistant span (an all-zero mask).
const EMPTY_ASSISTANT_MASK: &str = "EmptyAssistantMask";
/// The kind of a reject whose every assistant token truncation removed.
const ASSISTANT_TRUNCATED: &str = "AssistantTruncated";

/// Refuses a row whose assistant messages got no assistant span.
fn check_spans(index: u64, spans: &ChatSpans, messages: &[Json]) -> Result<(), Reject> {
    if spans.assistant_mask_is_empty(messages) {
        return Err(Reject::new(
            index,
            EMPTY_ASSISTANT_MASK,
            format!(
                "the conversation has assistant messages but no assistant span was found ({} masks); \
                 the assistant mask would be all zeros",
                spans.source.name()
            ),
        ));
    }
    Ok(())
}

/// Refuses a row whose numbers the int32 columns cannot hold.
fn overflow(index: u64) -> impl Fn(Overflow) -> Reject {
    move |e| Reject::new(index, "OverflowError", e)
}

/// Why the input (`what`: the input file or a row) cannot keep its columns or keys named `clash`.
fn clash_message(what: &str, clash: &[&str]) -> String {
    format!("the {what} already has the output columns {clash:?}; rename or drop them first")
}

impl Formatter {
    fn format(&self, index: u64, value: &Json) -> Result<Formatted, Reject> {
        let template = &self.template;
        let conv = self
            .fields
            .conversation(value)
            .map_err(|e| Reject::new(index, INVALID_INPUT, e))?;
        // The shared options, copied only for a row that has tools or documents of its own.
        let own;
        let apply = match (conv.tools, conv.documents) {
            (None, None) => &self.apply,
            (tools, documents) => {
                own = ApplyOptions {
                    tools,
                    documents,
                    ..self.apply.clone()
                };
                &own
            }
        };
        let template_error = |e: chatfmt::jinja::Error| Reject::new(index, e.kind().python_name(), e.located_message());
        let Some((tokenizer, opts)) = &self.tokenize else {
            let Some(span_opts) = &self.spans else {
                let r = template.apply(&conv.messages, apply).map_err(template_error)?;
                return Ok(Formatted {
                    text: r.text,
                    tokens: None,
                    assistant_spans: None,
                    message_spans: None,
                });
            };
            let s = template
                .apply_with_spans(&conv.messages, apply, span_opts)
                .map_err(template_error)?;
            check_spans(index, &s, &conv.messages)?;
            let message_spans = match span_opts.message_spans {
                true => Some(columns::message_spans(&s, None).map_err(overflow(index))?),
                false => None,
            };
            return Ok(Formatted {
                assistant_spans: Some(
                    code_point_ranges(&s.rendered.text, &s.assistant_spans).map_err(overflow(index))?,
                ),
                text: s.rendered.text,
                tokens: None,
                message_spans,
            });
        };
        let chat = tokenize_chats(template, tokenizer, &[conv.messages.as_slice()], apply, opts)
            .map_err(|e| {
                // The class is the reject's kind: the reason says what failed and where.
                let reason = match e.stage() {
                    Some(stage) => format!("{stage} failed: {}", e.message()),
                    None => e.with_causes(),
                };
                Reject::new(index, e.python_class().unwrap_or(INVALID_INPUT), reason)
            })?
            .pop()
            .ok_or_else(|| Reject::new(index, INVALID_INPUT, "no conversation was tokenized"))?;
        let e = chat.encoded;
        check_ids(&e.input_ids).map_err(overflow(index))?;
        let masks = self.columns.masks;
        let assistant_masks = e.assistant_masks.unwrap_or_else(|| vec![0; e.input_ids.len()]);
        let mut message_spans = None;
        if let Some(spans) = chat.spans {
            // Judged on the tokens: an empty span inside a token marks it, as transformers' rule does.
            let unmasked = masks && !assistant_masks.contains(&1);
            if unmasked {
                check_spans(index, &spans, &conv.messages)?;
            }
            if unmasked && spans.assistant_spans.iter().any(|&(s, e)| s < e) {
                let (kind, why) = match opts.encode.max_length {
                    Some(n) if opts.encode.truncation => (
                        ASSISTANT_TRUNCATED,
                        format!("max_length {n} removes every assistant token"),
                    ),
                    _ => (EMPTY_ASSISTANT_MASK, "the assistant spans hold no token".to_string()),
                };
                return Err(Reject::new(
                    index,
                    kind,
                    format!("{why}; the assistant mask would be all zeros"),
                ));
            }
            if self.columns.message_spans {
                message_spans = Some(columns::message_spans(&spans, Some(&e.span_tokens)).map_err(overflow(index))?);
            }
        }
        Ok(Formatted {
            text: chat.text,
            tokens: Some(Tokens {
                assistant_masks: masks.then_some(assistant_masks),
                input_ids: e.input_ids,
                attention_mask: e.attention_mask,
            }),
            assistant_spans: None,
            message_spans,
        })
    }
}

/// A chunk of rows after formatting: its encoded rows and its rejects (index and reason), in order.
struct Done {
    seq: u64,
    encoded: Result<Encoded, Error>,
    rejects: Vec<Reject>,
    rows_in: u64,
    /// Input bytes of the chunk's rows (JSON Lines).
    bytes: u64,
    tokens: u64,
}

impl Formatter {
    /// Formats a JSON Lines row, refusing one with keys named like the new columns.
    fn format_line(&self, index: u64, value: &Json) -> Result<Formatted, Reject> {
        if let Json::Object(obj) = value {
            let names = self.columns.names();
            let clash: Vec<&str> = names.into_iter().filter(|n| obj.contains_key(*n)).collect();
            if !clash.is_empty() {
                return Err(Reject::new(index, INVALID_INPUT, clash_message("row", &clash)));
            }
        }
        self.format(index, value)
    }

    /// Formats and encodes one chunk (on a worker); `objects` keeps JSON Lines rows for the output.
    fn chunk(&self, encoder: &Encoder, seq: u64, chunk: Chunk, objects: bool) -> Done {
        let rows_in = chunk.rows.len() as u64;
        let mut bytes = 0;
        let mut outcomes: Vec<Outcome> = Vec::with_capacity(chunk.rows.len());
        let mut kept = Vec::new();
        let mut rejects = Vec::new();
        for row in chunk.rows {
            let index = row.index;
            let line = match &row.payload {
                Payload::Line { bytes: b, .. } => {
                    bytes += b.len() as u64;
                    true
                }
                Payload::Arrow { .. } => false,
            };
            let value = row.into_value().map_err(|e| Reject::new(index, INVALID_INPUT, e));
            let formatted = match &value {
                Ok(value) if line => self.format_line(index, value),
                Ok(value) => self.format(index, value),
                Err(reject) => Err(reject.clone()),
            };
            if line && objects {
                kept.push(match value {
                    Ok(Json::Object(obj)) => Some(obj),
                    _ => None,
                });
            }
            outcomes.push(formatted.map_err(|reject| {
                let text = reject.error_text();
                rejects.push(reject);
                text
            }));
        }
        let input = match chunk.columns {
            Some(columns) => InputRows::Columns(columns),
            None if objects => InputRows::Objects(kept),
            None => InputRows::None,
        };
        Done {
            seq,
            tokens: (outcomes.iter().flatten())
                .map(|f| f.tokens.as_ref().map_or(0, |t| t.input_ids.len() as u64))
                .sum(),
            encoded: encoder.encode(input, &outcomes),
            rejects,
            rows_in,
            bytes,
        }
    }
}

/// What the writer thread leaves: rows out, rows rejected, tokens, and the finished files (under
/// their temporary names) to move into place.
struct Written {
    rows_out: u64,
    rows_rejected: u64,
    rejected_kinds: BTreeMap<String, u64>,
    tokens: u64,
    output: AtomicFile,
    rejects: Option<AtomicFile>,
}

/// What the writer thread needs besides the finished chunks.
struct Writer {
    permits: Receiver<()>,
    sink: Sink,
    rejects: Rejects,
    strict: bool,
    progress: Option<Arc<dyn Progress>>,
    cancel: Option<Arc<AtomicBool>>,
}

fn cancelled(flag: &Option<Arc<AtomicBool>>) -> bool {
    flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
}

fn cancel_error() -> Error {
    Error::new(ErrorKind::Cancelled, "cancelled; no output was written")
}

/// The writer thread: takes finished chunks in any order and writes them in input order; every
/// chunk written frees one of the `permits` that bound the chunks in flight.
fn write_in_order(done: Receiver<Done>, w: Writer) -> Result<Written, Error> {
    let Writer {
        permits,
        mut sink,
        mut rejects,
        strict,
        progress,
        cancel,
    } = w;
    let (mut out, mut rejected, mut tokens) = (0u64, 0u64, 0u64);
    let mut kinds = BTreeMap::new();
    let mut waiting = BTreeMap::new();
    let mut next = 0u64;
    for d in done {
        if cancelled(&cancel) {
            return Err(cancel_error());
        }
        waiting.insert(d.seq, d);
        while let Some(d) = waiting.remove(&next) {
            for reject in &d.rejects {
                if strict {
                    return Err(Error::new(
                        ErrorKind::Rejected,
                        format!(
                            "row {}: {}: {} (strict: stopped at the first reject; nothing was written)",
                            reject.index, reject.kind, reject.error
                        ),
                    ));
                }
                rejects.write(reject)?;
                *kinds.entry(reject.kind.clone()).or_insert(0) += 1;
            }
            let encoded = d.encoded?;
            rejected += d.rejects.len() as u64;
            out += d.rows_in - d.rejects.len() as u64;
            tokens += d.tokens;
            sink.append(encoded)?;
            if let Some(p) = &progress {
                p.advance(d.rows_in, d.bytes);
            }
            next += 1;
            // Each dispatched chunk took a permit first, so one is there to take back.
            let _ = permits.recv();
        }
    }
    Ok(Written {
        rows_out: out,
        rows_rejected: rejected,
        rejected_kinds: kinds,
        tokens,
        output: sink.finish()?,
        rejects: rejects.finish()?,
    })
}

/// The reader thread: sends chunks of `n` rows or `bytes` bytes (read ahead of the workers) until
/// the input ends, with an empty chunk, or a read fails. A panic of the Arrow or Parquet reader on
/// a corrupt file is such a failure.
fn read_chunks(mut source: Source, path: &Path, (n, bytes): (usize, usize), chunks: SyncSender<Result<Chunk, Error>>) {
    loop {
        let chunk =
            chatfmt::guard::quietly(|| source.next_chunk(n, bytes)).unwrap_or_else(|why| Err(unreadable(path, &why)));
        let last = !matches!(&chunk, Ok(c) if !c.rows.is_empty());
        if chunks.send(chunk).is_err() || last {
            return;
        }
    }
}

/// The error for an input whose reader stopped with a panic (`why`) on it.
fn unreadable(path: &Path, why: &str) -> Error {
    Error::file(
        ErrorKind::Input,
        path,
        format!(
            "cannot be read: the Arrow/Parquet reader stopped on it ({why}); the file may be corrupt or \
             truncated, or use a feature chatfmt cannot read: write it again with pyarrow or datasets"
        ),
    )
}

/// Formats the dataset of `config`. Nothing is written unless the whole run succeeds: the output
/// and rejects files are moved into place at the end, and no output may be the input.
pub fn run(config: &Config) -> Result<Summary, Error> {
    let started = Instant::now();
    let mut columns = vec![
        config.fields.messages.as_str(),
        config.fields.conversations.as_str(),
        config.fields.tools.as_str(),
    ];
    columns.extend(config.fields.documents.as_deref());
    let window = (config.window.max(1), config.window_bytes.max(1));
    let source = chatfmt::guard::quietly(|| Source::open(&config.input, config.input_format, &columns, window))
        .unwrap_or_else(|why| Err(unreadable(&config.input, &why)))?;
    let tokenize = config.tokenizer.is_some();
    let wanted = Columns {
        tokenize,
        masks: tokenize && config.assistant_masks,
        text: config.text || !tokenize,
        message_spans: config.spans.as_ref().is_some_and(|s| s.message_spans),
        assistant_spans: !tokenize && config.spans.is_some(),
    };
    let input_schema = source.schema().cloned();
    if let Some(schema) = &input_schema {
        // Rows become objects keyed by column name, so one of two same-named columns would be lost
        // (datasets refuses such files too).
        let mut seen = std::collections::BTreeSet::new();
        let twice: Vec<&str> = (schema.fields().iter().map(|f| f.name().as_str()))
            .filter(|n| !seen.insert(*n))
            .collect();
        if !twice.is_empty() {
            return Err(Error::file(
                ErrorKind::Input,
                &config.input,
                format!(
                    "has more than one column named {}; rename them so that every column has its own name",
                    twice.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let clash: Vec<&str> = (wanted.names().into_iter())
            .filter(|n| schema.column_with_name(n).is_some())
            .collect();
        if !clash.is_empty() {
            return Err(Error::file(
                ErrorKind::Input,
                &config.input,
                clash_message("input", &clash),
            ));
        }
    }
    check_outputs(
        &config.input,
        &[("the output", &config.output), ("the rejects file", &config.rejects)],
    )?;
    let total = match source.total_rows() {
        Some(rows) => Some(Total::Rows(rows)),
        None => std::fs::metadata(&config.input).ok().map(|m| Total::Bytes(m.len())),
    };
    if let Some(p) = &config.progress {
        p.start(total);
    }
    let (chunk_tx, chunk_rx) = sync_channel(1);
    let result = std::thread::scope(|scope| {
        // Reading starts at once, while the tokenizer loads.
        scope.spawn(move || read_chunks(source, &config.input, window, chunk_tx));
        format_chunks(config, wanted, input_schema.as_ref(), chunk_rx, started)
    });
    if let Some(p) = &config.progress {
        p.finish();
    }
    result
}

/// Everything after opening the input: load, format on the pool, write.
fn format_chunks(
    config: &Config,
    columns: Columns,
    input_schema: Option<&SchemaRef>,
    chunks: Receiver<Result<Chunk, Error>>,
    started: Instant,
) -> Result<Summary, Error> {
    let tokenizer = match &config.tokenizer {
        Some(dir) => Some(ChatTokenizer::from_model_dir(dir).map_err(|e| {
            Error::new(ErrorKind::Model, "cannot load the tokenizer")
                .at(dir)
                .caused_by(e)
        })?),
        None => None,
    };
    // With a tokenizer, templates see its special tokens, as transformers passes them.
    let mut kwargs = tokenizer
        .as_ref()
        .map(|t| t.special_tokens().clone())
        .unwrap_or_default();
    kwargs.extend(config.variables.clone());
    let apply = ApplyOptions {
        add_generation_prompt: config.add_generation_prompt,
        continue_final_message: config.continue_final_message.clone(),
        chat_template: config.template_name.clone(),
        kwargs,
        clock: Clock::default(),
        ..ApplyOptions::default()
    };
    let opts = ChatTokenizeOptions {
        encode: EncodeOptions {
            truncation: config.max_length.is_some(),
            max_length: config.max_length,
            assistant_masks: config.assistant_masks,
            ..EncodeOptions::default()
        },
        sanitize_control_tokens: None,
        spans: config.spans.clone(),
    };
    let formatter = Formatter {
        columns,
        template: config.template.clone(),
        fields: config.fields.clone(),
        apply,
        tokenize: tokenizer.map(|t| (t, opts)),
        spans: config.spans.clone(),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.jobs)
        .build()
        .map_err(|e| Error::new(ErrorKind::Output, "cannot start worker threads").caused_by(e))?;
    // The Parquet library panics on a column type it cannot write (a union).
    let (sink, encoder) =
        chatfmt::guard::quietly(|| Sink::create(&config.output, config.output_format, columns, input_schema))
            .unwrap_or_else(|why| {
                Err(Error::file(
                    ErrorKind::Output,
                    &config.output,
                    format!(
                        "cannot hold the input's columns: the Parquet library stopped on their schema ({why}); \
                         drop or convert the column it cannot write"
                    ),
                ))
            })?;
    // JSON Lines rows are kept for a JSON Lines output.
    let objects = config.output_format == OutputFormat::Jsonl;
    // Chunks between reading and writing: one per worker and two more, so that workers keep busy
    // while the writer waits for the oldest; this bounds memory.
    let (permit_tx, permit_rx) = sync_channel::<()>(pool.current_num_threads() + 2);
    let (done_tx, done_rx) = channel::<Done>();
    let writer = Writer {
        permits: permit_rx,
        sink,
        rejects: Rejects::new(&config.rejects),
        strict: config.strict,
        progress: config.progress.clone(),
        cancel: config.cancel.clone(),
    };

    let (rows_in, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || write_in_order(done_rx, writer));
        let (formatter, encoder) = (&formatter, &encoder);
        let mut rows_in = 0u64;
        let read = pool.in_place_scope(|s| {
            for (seq, chunk) in (0u64..).zip(chunks) {
                if cancelled(&config.cancel) {
                    return Err(cancel_error());
                }
                let chunk = chunk?;
                if chunk.rows.is_empty() {
                    return Ok(());
                }
                if permit_tx.send(()).is_err() {
                    // The writer stopped (its error is reported below).
                    return Ok(());
                }
                rows_in += chunk.rows.len() as u64;
                let done = done_tx.clone();
                s.spawn(move |_| {
                    let rows_in = chunk.rows.len() as u64;
                    let first = chunk.rows.first().map_or(0, |r| r.index);
                    let formatted = chatfmt::guard::quietly(|| formatter.chunk(encoder, seq, chunk, objects));
                    // A panic of the Arrow or Parquet library on these rows (a column type it
                    // cannot encode) stops the run.
                    let formatted = formatted.unwrap_or_else(|why| Done {
                        seq,
                        encoded: Err(Error::new(
                            ErrorKind::Output,
                            format!(
                                "rows {first} to {}: the Arrow/Parquet library stopped on them ({why}); \
                                 nothing was written",
                                first + rows_in - 1
                            ),
                        )),
                        rejects: Vec::new(),
                        rows_in,
                        bytes: 0,
                        tokens: 0,
                    });
                    // A closed channel means the writer stopped; its error is reported.
                    let _ = done.send(formatted);
                });
            }
            // The reader stopped without the end of the input (which it always sends).
            Err(Error::file(
                ErrorKind::Input,
                &config.input,
                "the reader stopped before the end of the input; nothing was written",
            ))
        });
        drop(done_tx);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(Error::new(ErrorKind::Output, "the writer thread panicked")));
        // A failed read or a cancel wins over what the writer made of the rows it got.
        read.and_then(|()| written.map(|w| (rows_in, w)))
    })?;
    if rows_in != written.rows_out + written.rows_rejected {
        return Err(Error::new(
            ErrorKind::Output,
            format!(
                "{rows_in} rows read but {} written and {} rejected",
                written.rows_out, written.rows_rejected
            ),
        ));
    }
    if cancelled(&config.cancel) {
        return Err(cancel_error());
    }
    written.output.commit()?;
    if let Some(rejects) = written.rejects {
        rejects.commit()?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let rows_rejected = written.rows_rejected;
    Ok(Summary {
        rows_in,
        rows_out: written.rows_out,
        rows_rejected,
        tokens: written.tokens,
        seconds,
        rows_per_second: rows_in as f64 / seconds.max(1e-9),
        tokens_per_second: written.tokens as f64 / seconds.max(1e-9),
        rejects_file: (rows_rejected > 0).then(|| config.rejects.clone()),
        rejected_kinds: written.rejected_kinds,
    })
}
