//! `format_batch`, the Arrow batch kernel: each row of the record batches becomes a conversation (read
//! as `chatfmt_dataset` reads Parquet rows, JSON strings parsed), is rendered and encoded on a rayon
//! pool with the GIL released, and comes back in one record batch of new columns per input batch, in
//! row order. A row that fails has its `error` set and nulls elsewhere.

use crate::convert::to_object;
use crate::errors::{jinja_error_text, load_error, tokenize_error_text};
use crate::import;
use crate::model::{clock_of, Model};
use arrow_array::builder::{ArrayBuilder, Int32Builder, ListBuilder, StringBuilder};
use arrow_array::types::{Int32Type, Int8Type};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, ListArray, PrimitiveArray, RecordBatch, StructArray};
use arrow_buffer::{NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_pyarrow::PyArrowType;
use arrow_schema::{ArrowError, DataType, Field, Schema};
use chatfmt::jinja::CodePoints;
use chatfmt::masks::stop_markers;
use chatfmt::{ApplyOptions, ChatSpans, ChatTemplate, MaskSource, SpanOptions};
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

/// A row's ids (each below 2^31), attention mask and (when asked) assistant mask.
type Tokens = (Vec<u32>, Vec<u8>, Option<Vec<u8>>);

/// One formatted row: its text, when tokenizing its tokens, and when asked its message spans.
struct Formatted {
    text: String,
    tokens: Option<Tokens>,
    spans: Option<Vec<Span>>,
}

/// Where one message is: its turn and content as code-point ranges of the text (Python string
/// indices) and, when tokenizing, as token ranges (the CLI's `message_spans`).
struct Span {
    index: i32,
    role: Option<String>,
    turn: Option<[i32; 2]>,
    content: Vec<[i32; 2]>,
    turn_tokens: Option<[i32; 2]>,
    content_tokens: Vec<[i32; 2]>,
}

fn int32(n: usize) -> Result<i32, String> {
    i32::try_from(n).map_err(|_| format!("OverflowError: {n} does not fit in int32"))
}

fn range32((s, e): (usize, usize)) -> Result<[i32; 2], String> {
    Ok([int32(s)?, int32(e)?])
}

/// The message spans of `spans`; with `tokens` (the encoding's `span_tokens`), their token ranges
/// too, dropping ranges truncation emptied.
fn spans_of(spans: &ChatSpans, tokens: Option<&[Option<(usize, usize)>]>) -> Result<Vec<Span>, String> {
    let mut tokens = tokens.map(|t| t.iter());
    let mut next = || tokens.as_mut().and_then(|t| t.next().copied().flatten());
    let text = CodePoints::new(&spans.rendered.text);
    let mut out = Vec::with_capacity(spans.messages.len());
    for m in &spans.messages {
        let turn_tokens = next().filter(|_| m.turn.is_some());
        let content_tokens: Vec<(usize, usize)> = m.content.iter().filter_map(|_| next()).collect();
        out.push(Span {
            index: int32(m.index)?,
            role: m.role.clone(),
            turn: m.turn.map(|t| range32(text.span(t))).transpose()?,
            content: (m.content.iter())
                .map(|&c| range32(text.span(c)))
                .collect::<Result<_, _>>()?,
            turn_tokens: turn_tokens.map(range32).transpose()?,
            content_tokens: content_tokens.into_iter().map(range32).collect::<Result<_, _>>()?,
        });
    }
    Ok(out)
}

/// A row's outcome; a failure is `Class: message` of the exception the per-conversation call raises.
type Outcome = Result<Formatted, String>;

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

/// The JSON value of `text`, a column's string.
fn parse_json(column: &str, text: &str) -> Result<Json, String> {
    serde_json::from_str(text).map_err(|e| format!("ValueError: column `{column}` is a string but not JSON: {e}"))
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
                    spans: Some(spans_of(&found, None)?),
                    text: found.rendered.text,
                    tokens: None,
                });
            }
            let r = self
                .template
                .apply(&conv.messages, apply)
                .map_err(|e| jinja_error_text(&e))?;
            return Ok(Formatted {
                text: r.text,
                tokens: None,
                spans: None,
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
            (Some(found), true) => Some(spans_of(found, Some(&chat.encoded.span_tokens))?),
            _ => None,
        };
        let e = chat.encoded;
        if let Some(id) = e.input_ids.iter().find(|&&id| i32::try_from(id).is_err()) {
            return Err(format!("OverflowError: token id {id} does not fit in int32"));
        }
        Ok(Formatted {
            text: chat.text,
            tokens: Some((e.input_ids, e.attention_mask, e.assistant_masks)),
            spans,
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

/// Whether `t` is a column type a conversation (or tools, documents) can be read from: lists of
/// structs, as datasets and Parquet store them, or JSON strings.
fn readable(t: &DataType) -> bool {
    match t {
        DataType::List(f) | DataType::LargeList(f) | DataType::ListView(f) | DataType::LargeListView(f) => {
            matches!(f.data_type(), DataType::Struct(_) | DataType::Null)
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
        if !readable(field.data_type()) {
            return Err(PyTypeError::new_err(format!(
                "column `{}` is {}; expected a list of structs or JSON strings",
                field.name(),
                field.data_type()
            )));
        }
        indices.push(i);
    }
    Ok(indices)
}

/// The new columns of one batch's rows.
/// The `message_spans` column: list<struct<index, role, turn, content[, turn_tokens, content_tokens]>>,
/// ranges as [start, end].
struct SpanColumn {
    offsets: Vec<i32>,
    valid: Vec<bool>,
    index: Int32Builder,
    role: StringBuilder,
    turn: ListBuilder<Int32Builder>,
    content: ListBuilder<ListBuilder<Int32Builder>>,
    turn_tokens: ListBuilder<Int32Builder>,
    content_tokens: ListBuilder<ListBuilder<Int32Builder>>,
}

fn push_range(b: &mut ListBuilder<Int32Builder>, r: Option<[i32; 2]>) {
    match r {
        Some(r) => b.append_value(r.map(Some)),
        None => b.append_null(),
    }
}

fn push_ranges(b: &mut ListBuilder<ListBuilder<Int32Builder>>, rs: &[[i32; 2]]) {
    for r in rs {
        b.values().append_value(r.map(Some));
    }
    b.append(true);
}

impl SpanColumn {
    fn new() -> SpanColumn {
        SpanColumn {
            offsets: vec![0],
            valid: Vec::new(),
            index: Int32Builder::new(),
            role: StringBuilder::new(),
            turn: ListBuilder::new(Int32Builder::new()),
            content: ListBuilder::new(ListBuilder::new(Int32Builder::new())),
            turn_tokens: ListBuilder::new(Int32Builder::new()),
            content_tokens: ListBuilder::new(ListBuilder::new(Int32Builder::new())),
        }
    }

    fn push(&mut self, spans: Option<&[Span]>) -> Result<(), ArrowError> {
        for m in spans.unwrap_or_default() {
            self.index.append_value(m.index);
            self.role.append_option(m.role.as_deref());
            push_range(&mut self.turn, m.turn);
            push_ranges(&mut self.content, &m.content);
            push_range(&mut self.turn_tokens, m.turn_tokens);
            push_ranges(&mut self.content_tokens, &m.content_tokens);
        }
        let len = i32::try_from(self.index.len())
            .map_err(|_| ArrowError::ComputeError("too many message spans in one batch".to_string()))?;
        self.offsets.push(len);
        self.valid.push(spans.is_some());
        Ok(())
    }

    fn finish(mut self, tokens: bool) -> Result<ArrayRef, ArrowError> {
        let mut columns: Vec<(&str, ArrayRef)> = vec![
            ("index", Arc::new(self.index.finish())),
            ("role", Arc::new(self.role.finish())),
            ("turn", Arc::new(self.turn.finish())),
            ("content", Arc::new(self.content.finish())),
        ];
        if tokens {
            columns.push(("turn_tokens", Arc::new(self.turn_tokens.finish())));
            columns.push(("content_tokens", Arc::new(self.content_tokens.finish())));
        }
        let fields: Vec<Field> = (columns.iter())
            .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
            .collect();
        let arrays = columns.into_iter().map(|(_, a)| a).collect();
        let entries = StructArray::try_new(fields.into(), arrays, None)?;
        let item = Arc::new(Field::new("item", entries.data_type().clone(), true));
        let list = ListArray::try_new(
            item,
            OffsetBuffer::new(self.offsets.into()),
            Arc::new(entries),
            Some(NullBuffer::from(self.valid)),
        )?;
        Ok(Arc::new(list))
    }
}

/// Which columns a call makes.
#[derive(Clone, Copy)]
struct Columns {
    tokenize: bool,
    masks: bool,
    text: bool,
    spans: bool,
}

/// A `list<T>` column built from each row's values in one pass, into buffers sized up front.
struct ListColumn<T: ArrowPrimitiveType> {
    offsets: Vec<i32>,
    values: Vec<T::Native>,
    nulls: NullBufferBuilder,
}

impl<T: ArrowPrimitiveType> ListColumn<T> {
    fn with_capacity(rows: usize, values: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        ListColumn {
            offsets,
            values: Vec::with_capacity(values),
            nulls: NullBufferBuilder::new(rows),
        }
    }

    /// Appends a row: its values converted by `to`, or null.
    fn push<S: Copy>(&mut self, row: Option<&[S]>, to: impl Fn(S) -> T::Native) -> Result<(), ArrowError> {
        if let Some(row) = row {
            self.values.extend(row.iter().map(|&v| to(v)));
        }
        let end = i32::try_from(self.values.len()).map_err(|_| {
            ArrowError::ComputeError("a batch holds more than 2^31 - 1 list values; pass smaller batches".into())
        })?;
        self.offsets.push(end);
        self.nulls.append(row.is_some());
        Ok(())
    }

    /// Makes room for `total` values in all.
    fn expect(&mut self, total: usize) {
        if total > self.values.capacity() {
            // A little over the estimate, so that a batch near it is not moved at its end.
            self.values.reserve_exact(total + total / 16 - self.values.len());
        }
    }

    fn finish(mut self) -> Result<ArrayRef, ArrowError> {
        let values = PrimitiveArray::<T>::new(ScalarBuffer::from(self.values), None);
        let field = Arc::new(Field::new_list_field(T::DATA_TYPE, true));
        Ok(Arc::new(ListArray::try_new(
            field,
            OffsetBuffer::new(ScalarBuffer::from(self.offsets)),
            Arc::new(values),
            self.nulls.finish(),
        )?))
    }
}

/// Token ids, below 2^31 (checked per row), as int32.
fn id32(id: u32) -> i32 {
    id as i32
}

/// A row's tokens, when it formatted and was tokenized.
fn tokens(row: &Outcome) -> Option<&Tokens> {
    row.as_ref().ok().and_then(|f| f.tokens.as_ref())
}

/// A 0/1 mask value as int8.
fn flag(v: u8) -> i8 {
    i8::from(v != 0)
}

/// Rows formatted at a time: their intermediate vectors are freed (and their memory reused) before
/// the next rows start, so a batch holds its output columns and one chunk of rows.
const CHUNK_ROWS: usize = 512;

/// The new columns of one batch, appended to chunk by chunk.
struct Output {
    wanted: Columns,
    rows: usize,
    ids: ListColumn<Int32Type>,
    attention: ListColumn<Int8Type>,
    assistant: ListColumn<Int8Type>,
    texts: StringBuilder,
    errors: StringBuilder,
    message_spans: SpanColumn,
}

impl Output {
    fn new(wanted: Columns, rows: usize) -> Self {
        Output {
            wanted,
            rows,
            ids: ListColumn::with_capacity(rows, 0),
            attention: ListColumn::with_capacity(rows, 0),
            assistant: ListColumn::with_capacity(rows, 0),
            texts: StringBuilder::with_capacity(if wanted.text { rows } else { 0 }, 0),
            errors: StringBuilder::new(),
            message_spans: SpanColumn::new(),
        }
    }

    /// Appends the next rows. The token columns are first sized for the whole batch from the
    /// tokens per row so far, so they are rarely moved as they grow.
    fn append(&mut self, rows: Vec<Outcome>) -> Result<(), ArrowError> {
        let Columns {
            tokenize, masks, text, ..
        } = self.wanted;
        if tokenize {
            let tokens: usize = rows.iter().filter_map(tokens).map(|(ids, _, _)| ids.len()).sum();
            let done = self.errors.len() + rows.len();
            let expected = (self.ids.values.len() + tokens) * self.rows.max(done) / done.max(1);
            self.ids.expect(expected);
            self.attention.expect(expected);
            if masks {
                self.assistant.expect(expected);
            }
        }
        for row in &rows {
            self.message_spans
                .push(row.as_ref().ok().and_then(|f| f.spans.as_deref()))?;
            let t = tokens(row);
            self.ids.push(t.map(|(i, _, _)| i.as_slice()), id32)?;
            self.attention.push(t.map(|(_, a, _)| a.as_slice()), flag)?;
            self.assistant.push(t.and_then(|(_, _, m)| m.as_deref()), flag)?;
            match row {
                Ok(f) => {
                    if text {
                        self.texts.append_value(&f.text);
                    }
                    self.errors.append_null();
                }
                Err(e) => {
                    if text {
                        self.texts.append_null();
                    }
                    self.errors.append_value(e);
                }
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<RecordBatch, ArrowError> {
        let Columns {
            tokenize,
            masks,
            text,
            spans,
        } = self.wanted;
        let mut columns: Vec<(&str, ArrayRef)> = Vec::new();
        if tokenize {
            columns.push(("input_ids", self.ids.finish()?));
            columns.push(("attention_mask", self.attention.finish()?));
            if masks {
                columns.push(("assistant_masks", self.assistant.finish()?));
            }
        }
        if text {
            columns.push(("text", Arc::new(self.texts.finish())));
        }
        if spans {
            columns.push(("message_spans", self.message_spans.finish(tokenize)?));
        }
        columns.push(("error", Arc::new(self.errors.finish())));
        RecordBatch::try_from_iter(columns)
    }
}

/// Formats every row of `batch` (rows of a chunk in parallel); its new columns.
fn format_rows(kernel: &Kernel<'_>, batch: &Arc<RecordBatch>, wanted: Columns) -> Result<RecordBatch, ArrowError> {
    let n = batch.num_rows();
    let mut out = Output::new(wanted, n);
    for start in (0..n).step_by(CHUNK_ROWS) {
        let end = (start + CHUNK_ROWS).min(n);
        out.append((start..end).into_par_iter().map(|i| kernel.row(batch, i)).collect())?;
    }
    out.finish()
}

/// Where assistant masks come from: `auto` (the template's `{% generation %}` blocks when it has
/// them, else provenance), `tags`, `provenance`, or none.
/// A template that cannot be selected fails the rows that would use it.
fn mask_source(
    template: &ChatTemplate,
    apply: &ApplyOptions,
    masks: Option<&str>,
) -> PyResult<Result<Option<MaskSource>, String>> {
    let tagged = match template.has_generation_blocks(apply) {
        Ok(tagged) => tagged,
        Err(e) => return Ok(Err(jinja_error_text(&e))),
    };
    Ok(Ok(match masks {
        None => None,
        Some("provenance") => Some(MaskSource::Provenance),
        Some("tags") if !tagged => {
            return Err(PyValueError::new_err(
                "masks='tags' needs {% generation %} blocks in the template; use masks='provenance'",
            ))
        }
        _ if tagged => Some(MaskSource::Tags),
        _ => Some(MaskSource::Provenance),
    }))
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
                let dir = model.source_path().filter(|p| p.is_dir());
                let eos = model.special().get("eos_token").and_then(Json::as_str);
                Some(SpanOptions {
                    source: MaskSource::Provenance,
                    stop_markers: stop_markers(dir, eos, &[]).map_err(|e| load_error(&e))?,
                    message_spans,
                })
            }
            Some(MaskSource::Tags) | None if message_spans => Some(SpanOptions {
                source: MaskSource::Tags,
                stop_markers: Vec::new(),
                message_spans,
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
        spans: message_spans,
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
