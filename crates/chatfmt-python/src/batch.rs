//! `format_batch`, the Arrow batch kernel: each row of the record batches becomes a conversation (read
//! as `chatfmt_dataset` reads Parquet rows: as a template sees a `datasets` row, `Json` feature
//! values decoded, other Arrow types as transformers rebuilds their Python objects; JSON strings
//! parsed), is rendered and encoded on a rayon pool with the GIL released, and comes back in one
//! record batch of new columns per input batch, in row order. A row that fails has its `error` set
//! and nulls elsewhere.

use crate::convert::to_object;
use crate::errors::{jinja_error_text, tokenize_error_text};
use crate::import;
use crate::model::{clock_of, mask_source, Model};
use arrow_array::RecordBatch;
use arrow_pyarrow::PyArrowType;
use arrow_schema::{ArrowError, DataType, Field, Schema};
use chatfmt::{ApplyOptions, ChatTemplate, MaskSource, SpanOptions};
use chatfmt_dataset::columns::{self, check_ids, Columns, Formatted, NewColumns, Outcome, Overflow, Tokens};
use chatfmt_dataset::input::{Payload, Row};
use chatfmt_dataset::{Fields, Format};
use chatfmt_tokenize::chat::{tokenize_chats, ChatTokenizeOptions};
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions};
use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const EMPTY: &str = "Cannot apply chat template to an empty conversation. Provide at least one message.";
const DOCUMENTS: &str = "Documents should be a list of dicts with 'title' and 'text' keys!";

/// An int32 overflow as the `OverflowError` a row fails with.
fn overflow(e: Overflow) -> String {
    format!("OverflowError: {e}")
}

/// What every row shares.
struct Kernel<'a> {
    template: &'a ChatTemplate,
    fields: Fields,
    documents: Option<String>,
    apply: ApplyOptions,
    /// Message spans without tokenizing: how to find them.
    text_spans: Option<SpanOptions>,
    /// With tokenizing: the tokenizer and the options of a row without tools, then with tools (the
    /// template, and so where its masks come from, may depend on it).
    tokenize: Option<(&'a ChatTokenizer, [Result<ChatTokenizeOptions, String>; 2])>,
}

/// The JSON value of `text`, a column's string (nested as deep as `chatfmt dataset` reads rows).
fn parse_json(column: &str, text: &str) -> Result<Json, String> {
    chatfmt::json_input::from_str(text).map_err(|e| {
        format!(
            "ValueError: column `{column}` is a string but not JSON: {}",
            chatfmt::json_input::with_place(&e)
        )
    })
}

impl Kernel<'_> {
    fn row(&self, batch: &Arc<RecordBatch>, row: usize) -> Outcome {
        let payload = Payload::Arrow {
            batch: batch.clone(),
            row,
        };
        let mut value = Row {
            index: row as u64,
            payload,
        }
        .into_value()
        .map_err(|e| format!("ValueError: {e}"))?;
        if let Json::Object(obj) = &mut value {
            for column in [&self.fields.messages, &self.fields.conversations] {
                if let Some(Json::String(s)) = obj.get(column.as_str()) {
                    let parsed = parse_json(column, s)?;
                    obj.insert(column.clone(), parsed);
                }
            }
        }
        let conv = self
            .fields
            .conversation(&value)
            .map_err(|e| format!("ValueError: {e}"))?;
        if conv.messages.is_empty() {
            return Err(format!("ValueError: {EMPTY}"));
        }
        let documents = match &self.documents {
            Some(column) => documents_of(column, value.get(column.as_str()))?,
            None => None,
        };
        let with_row;
        let apply = if conv.tools.is_none() && documents.is_none() {
            &self.apply
        } else {
            with_row = ApplyOptions {
                tools: conv.tools,
                documents,
                ..self.apply.clone()
            };
            &with_row
        };
        let Some((tokenizer, options)) = &self.tokenize else {
            if let Some(opts) = &self.text_spans {
                let found = self
                    .template
                    .apply_with_spans(&conv.messages, apply, opts)
                    .map_err(|e| jinja_error_text(&e))?;
                return Ok(Formatted {
                    message_spans: Some(columns::message_spans(&found, None).map_err(overflow)?),
                    text: found.rendered.text,
                    tokens: None,
                    assistant_spans: None,
                });
            }
            let r = self
                .template
                .apply(&conv.messages, apply)
                .map_err(|e| jinja_error_text(&e))?;
            return Ok(Formatted {
                text: r.text,
                tokens: None,
                assistant_spans: None,
                message_spans: None,
            });
        };
        let opts = options[usize::from(apply.tools.is_some())]
            .as_ref()
            .map_err(Clone::clone)?;
        let chat = tokenize_chats(self.template, tokenizer, &[conv.messages.as_slice()], apply, opts)
            .map_err(|e| tokenize_error_text(&e))?
            .pop()
            .ok_or_else(|| "ValueError: no conversation was tokenized".to_string())?;
        let spans = match (&chat.spans, opts.spans.as_ref().is_some_and(|s| s.message_spans)) {
            (Some(found), true) => {
                Some(columns::message_spans(found, Some(&chat.encoded.span_tokens)).map_err(overflow)?)
            }
            _ => None,
        };
        let e = chat.encoded;
        check_ids(&e.input_ids).map_err(overflow)?;
        Ok(Formatted {
            text: chat.text,
            tokens: Some(Tokens {
                input_ids: e.input_ids,
                attention_mask: e.attention_mask,
                assistant_masks: e.assistant_masks,
            }),
            assistant_spans: None,
            message_spans: spans,
        })
    }
}

/// A row's documents: a list of objects (or a JSON string of one), or none.
fn documents_of(column: &str, value: Option<&Json>) -> Result<Option<Json>, String> {
    let parsed;
    let value = match value {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::String(s)) => {
            parsed = parse_json(column, s)?;
            &parsed
        }
        Some(v) => v,
    };
    match value {
        Json::Array(docs) if docs.iter().all(Json::is_object) => Ok(Some(value.clone())),
        _ => Err(format!("TypeError: {DOCUMENTS}")),
    }
}

/// Whether `field` is an Arrow `arrow.json` extension column (datasets' `Json` feature).
fn is_json(field: &Field) -> bool {
    field.metadata().get("ARROW:extension:name").map(String::as_str) == Some("arrow.json")
}

/// Whether `field` is a column a conversation (or tools, documents) can be read from: lists of
/// structs, as datasets and Parquet store them, JSON strings, datasets' `Json` feature (the
/// `arrow.json` extension type, decoded as datasets decodes it), or lists of `Json` values.
fn readable(field: &Field) -> bool {
    if is_json(field) {
        return true;
    }
    match field.data_type() {
        DataType::List(f) | DataType::LargeList(f) | DataType::ListView(f) | DataType::LargeListView(f) => {
            is_json(f) || matches!(f.data_type(), DataType::Struct(_) | DataType::Null)
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => true,
        _ => false,
    }
}

/// Checks the columns the kernel reads; gives the indices of those present.
fn columns_read(schema: &Schema, fields: &Fields, documents: Option<&str>) -> PyResult<Vec<usize>> {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let has = |c: &str| names.contains(&c);
    let wanted = match fields.format {
        Format::Messages => Some(&fields.messages),
        Format::ShareGpt => Some(&fields.conversations),
        Format::Auto => (!has(&fields.messages) && !has(&fields.conversations)).then_some(&fields.messages),
    };
    if let Some(column) = wanted.filter(|c| !has(c)) {
        return Err(PyKeyError::new_err(format!(
            "the batch has no column `{column}` (columns: {names:?})"
        )));
    }
    if let Some(column) = documents.filter(|c| !has(c)) {
        return Err(PyKeyError::new_err(format!(
            "the batch has no documents column `{column}` (columns: {names:?})"
        )));
    }
    let read = [
        Some(fields.messages.as_str()),
        Some(fields.conversations.as_str()),
        Some(fields.tools.as_str()),
        documents,
    ];
    let mut indices = Vec::new();
    for (i, field) in schema.fields().iter().enumerate() {
        if !read.contains(&Some(field.name().as_str())) {
            continue;
        }
        if !readable(field) {
            return Err(PyTypeError::new_err(format!(
                "column `{}` is {}; expected a list of structs, JSON strings or datasets Json values",
                field.name(),
                field.data_type()
            )));
        }
        indices.push(i);
    }
    Ok(indices)
}

/// Rows formatted at a time: their intermediate vectors are freed (and their memory reused) before
/// the next rows start, so a batch holds its output columns and one chunk of rows.
const CHUNK_ROWS: usize = 512;

/// Formats every row of `batch` (rows of a chunk in parallel); its new columns.
fn format_rows(kernel: &Kernel<'_>, batch: &Arc<RecordBatch>, wanted: Columns) -> Result<RecordBatch, ArrowError> {
    let n = batch.num_rows();
    let mut out = NewColumns::new(wanted, n);
    for start in (0..n).step_by(CHUNK_ROWS) {
        let end = (start + CHUNK_ROWS).min(n);
        let rows: Vec<Outcome> = (start..end).into_par_iter().map(|i| kernel.row(batch, i)).collect();
        out.append(&rows)?;
    }
    out.finish()
}

/// The process that made [`POOLS`], and its worker pools by thread count (0: all cores).
type Pools = (u32, HashMap<usize, Arc<ThreadPool>>);

/// Worker pools of this process. A pool's threads do not survive `fork` (as datasets' `num_proc`
/// forks), so a forked child makes its own instead of waiting on threads it does not have.
static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

fn pool(threads: usize) -> PyResult<Arc<ThreadPool>> {
    let mut pools = POOLS
        .lock()
        .map_err(|_| PyRuntimeError::new_err("the worker pools are unusable after a panic"))?;
    let pid = std::process::id();
    if pools.as_ref().is_none_or(|(owner, _)| *owner != pid) {
        // The parent's pools: their threads are not in this process, so they are left alone.
        std::mem::forget(pools.replace((pid, HashMap::new())));
    }
    let Some((_, by_size)) = pools.as_mut() else {
        return Err(PyRuntimeError::new_err("no worker pool"));
    };
    if let Some(p) = by_size.get(&threads) {
        return Ok(p.clone());
    }
    let made = ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start worker threads: {e}")))?;
    let made = Arc::new(made);
    by_size.insert(threads, made.clone());
    Ok(made)
}

/// Renders (and encodes) every row of `batches`; one record batch of new columns per input batch.
#[pyfunction]
#[pyo3(signature = (model, batches, *, messages_column, tools_column, documents_column, format,
    add_generation_prompt, continue_final_message, chat_template, template_kwargs, tokenize, masks,
    max_length, return_text, message_spans, num_threads, now))]
#[allow(clippy::too_many_arguments)] // the keyword arguments of `chatfmt.format_batch`
pub fn format_batch(
    py: Python<'_>,
    model: PyRef<'_, Model>,
    batches: Vec<Bound<'_, PyAny>>,
    messages_column: String,
    tools_column: String,
    documents_column: Option<String>,
    format: &str,
    add_generation_prompt: bool,
    continue_final_message: Option<String>,
    chat_template: Option<String>,
    template_kwargs: &Bound<'_, PyDict>,
    tokenize: bool,
    masks: Option<&str>,
    max_length: Option<usize>,
    return_text: bool,
    message_spans: bool,
    num_threads: Option<usize>,
    now: Option<String>,
) -> PyResult<Vec<PyArrowType<RecordBatch>>> {
    let format = match format {
        "auto" => Format::Auto,
        "messages" => Format::Messages,
        "sharegpt" => Format::ShareGpt,
        other => {
            return Err(PyValueError::new_err(format!(
                "format must be 'auto', 'messages' or 'sharegpt', not {other:?}"
            )))
        }
    };
    let fields = Fields {
        format,
        messages: messages_column,
        tools: tools_column,
        // The kernel reads its documents column itself (`documents_column`).
        documents: None,
        ..Fields::default()
    };
    let mut read = Vec::new();
    for batch in &batches {
        let columns = |schema: &Schema| columns_read(schema, &fields, documents_column.as_deref());
        read.push(Arc::new(import::batch(batch, columns)?));
    }
    let continues = continue_final_message.is_some();
    let mut apply = ApplyOptions {
        add_generation_prompt,
        continue_final_message,
        chat_template,
        kwargs: to_object(template_kwargs.as_any())?,
        clock: clock_of(now),
        ..ApplyOptions::default()
    };
    let mut scratch = None;
    let template = model.template_for(&mut apply, &mut scratch)?;
    let tokenizer = if tokenize { Some(model.tokenizer()?) } else { None };
    let options = |has_tools: bool| -> PyResult<Result<ChatTokenizeOptions, String>> {
        let apply = ApplyOptions {
            tools: has_tools.then(|| Json::Array(Vec::new())),
            ..apply.clone()
        };
        let source = match mask_source(template, &apply, masks)? {
            Ok(source) => source,
            Err(e) => return Ok(Err(e)),
        };
        if continues && source == Some(MaskSource::Tags) {
            return Err(PyValueError::new_err(
                "continue_final_message is not compatible with masks from {% generation %} blocks; use masks='provenance' or masks=False",
            ));
        }
        let spans = match source {
            Some(MaskSource::Provenance) => {
                let eos = model.special().get("eos_token").and_then(Json::as_str);
                Some(model.span_options(MaskSource::Provenance, eos, message_spans)?)
            }
            Some(MaskSource::Tags) | None if message_spans => Some(SpanOptions {
                source: MaskSource::Tags,
                stop_markers: Vec::new(),
                message_spans,
                deadline: None,
            }),
            _ => None,
        };
        Ok(Ok(ChatTokenizeOptions {
            encode: EncodeOptions {
                add_special_tokens: false,
                truncation: max_length.is_some(),
                max_length,
                assistant_masks: source.is_some(),
                ..EncodeOptions::default()
            },
            sanitize_control_tokens: None,
            spans,
        }))
    };
    let kernel = Kernel {
        template,
        fields,
        documents: documents_column,
        text_spans: message_spans.then(|| SpanOptions {
            source: MaskSource::Tags,
            stop_markers: Vec::new(),
            message_spans,
            deadline: None,
        }),
        tokenize: match tokenizer {
            Some(t) => Some((t, [options(false)?, options(true)?])),
            None => None,
        },
        apply,
    };
    let pool = pool(num_threads.unwrap_or(0))?;
    let wanted = Columns {
        tokenize,
        masks: tokenize && masks.is_some(),
        text: return_text || !tokenize,
        message_spans,
        assistant_spans: false,
    };
    let out = py
        .detach(|| {
            pool.install(|| {
                read.par_iter()
                    .map(|b| format_rows(&kernel, b, wanted))
                    .collect::<Result<Vec<_>, _>>()
            })
        })
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(out.into_iter().map(PyArrowType).collect())
}
