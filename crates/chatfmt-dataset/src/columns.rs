//! The new columns a formatted row gets after the input's: `input_ids` `list<int32>`, `attention_mask`
//! and `assistant_masks` `list<int8>`, `text`, `message_spans`, `assistant_spans` and `error`. One
//! builder makes them for `chatfmt dataset` and `chatfmt.format_batch`, so both write one schema.
//! A failed row has its `error` set and nulls elsewhere.

use arrow_array::builder::{ArrayBuilder, Int32Builder, ListBuilder, StringBuilder};
use arrow_array::types::{Int32Type, Int8Type};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, ListArray, PrimitiveArray, RecordBatch, StructArray};
use arrow_buffer::{NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, Field, SchemaRef};
use chatfmt::jinja::{ByteSpan, CodePoints};
use chatfmt::ChatSpans;
use std::sync::Arc;

/// Which new columns are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Columns {
    /// `input_ids` and `attention_mask`.
    pub tokenize: bool,
    /// `assistant_masks` (when tokenizing).
    pub masks: bool,
    /// `text`.
    pub text: bool,
    /// `message_spans`: each message's `index`, `role`, `turn` and `content` as code-point ranges,
    /// and when tokenizing `turn_tokens` and `content_tokens`.
    pub message_spans: bool,
    /// `assistant_spans`: `[start, end]` code-point ranges of the text a model is trained on.
    pub assistant_spans: bool,
}

impl Columns {
    /// The names of the new columns, in their order.
    pub fn names(self) -> Vec<&'static str> {
        let named = [
            (self.tokenize, "input_ids"),
            (self.tokenize, "attention_mask"),
            (self.tokenize && self.masks, "assistant_masks"),
            (self.text, "text"),
            (self.message_spans, "message_spans"),
            (self.assistant_spans, "assistant_spans"),
            (true, "error"),
        ];
        named.into_iter().filter(|(on, _)| *on).map(|(_, name)| name).collect()
    }

    /// The schema of the new columns.
    pub fn schema(self) -> Result<SchemaRef, ArrowError> {
        Ok(NewColumns::new(self, 0).finish()?.schema())
    }
}

/// A row's tokens: ids (each below 2^31, see [`check_ids`]), attention mask and assistant mask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    pub input_ids: Vec<u32>,
    pub attention_mask: Vec<u8>,
    pub assistant_masks: Option<Vec<u8>>,
}

/// One formatted row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formatted {
    pub text: String,
    /// When tokenizing.
    pub tokens: Option<Tokens>,
    /// Code-point ranges of `text` a model is trained on (when asked, without tokenizing).
    pub assistant_spans: Option<Vec<[i32; 2]>>,
    /// Where each message is (when asked).
    pub message_spans: Option<Vec<Span>>,
}

/// Where one message is: its turn and content as code-point ranges of the text (Python string
/// indices) and, when tokenizing, as token ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub index: i32,
    pub role: Option<String>,
    /// `None` when nothing was rendered for the message.
    pub turn: Option<[i32; 2]>,
    pub content: Vec<[i32; 2]>,
    pub turn_tokens: Option<[i32; 2]>,
    pub content_tokens: Vec<[i32; 2]>,
}

/// A number the int32 columns cannot hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0} does not fit in int32")]
pub struct Overflow(pub String);

fn int32(n: usize) -> Result<i32, Overflow> {
    i32::try_from(n).map_err(|_| Overflow(n.to_string()))
}

fn range32((s, e): (usize, usize)) -> Result<[i32; 2], Overflow> {
    Ok([int32(s)?, int32(e)?])
}

/// Refuses token ids the int32 `input_ids` cannot hold.
pub fn check_ids(ids: &[u32]) -> Result<(), Overflow> {
    match ids.iter().find(|&&id| i32::try_from(id).is_err()) {
        Some(id) => Err(Overflow(format!("token id {id}"))),
        None => Ok(()),
    }
}

/// Byte spans of `text` as code-point ranges.
pub fn code_point_ranges(text: &str, spans: &[ByteSpan]) -> Result<Vec<[i32; 2]>, Overflow> {
    let text = CodePoints::new(text);
    spans.iter().map(|&s| range32(text.span(s))).collect()
}

/// The message spans of `spans`; with `tokens` (the encoding's `span_tokens`), their token ranges
/// too, dropping ranges truncation emptied.
pub fn message_spans(spans: &ChatSpans, tokens: Option<&[Option<(usize, usize)>]>) -> Result<Vec<Span>, Overflow> {
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

/// A row's outcome: formatted, or `"Class: message"` of its failure.
pub type Outcome = Result<Formatted, String>;

fn push_range(b: &mut ListBuilder<Int32Builder>, r: Option<[i32; 2]>) {
    match r {
        Some(r) => b.append_value(r.map(Some)),
        None => b.append_null(),
    }
}

/// Appends a list of ranges, or null.
fn push_ranges(b: &mut ListBuilder<ListBuilder<Int32Builder>>, rs: Option<&[[i32; 2]]>) {
    for r in rs.unwrap_or_default() {
        b.values().append_value(r.map(Some));
    }
    b.append(rs.is_some());
}

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
            push_ranges(&mut self.content, Some(&m.content));
            push_range(&mut self.turn_tokens, m.turn_tokens);
            push_ranges(&mut self.content_tokens, Some(&m.content_tokens));
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

/// A `list<T>` column built from each row's values in one pass, into buffers sized up front.
struct ListColumn<T: ArrowPrimitiveType> {
    offsets: Vec<i32>,
    values: Vec<T::Native>,
    nulls: NullBufferBuilder,
}

impl<T: ArrowPrimitiveType> ListColumn<T> {
    fn with_capacity(rows: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        ListColumn {
            offsets,
            values: Vec::new(),
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

/// Token ids, below 2^31 (see [`check_ids`]), as int32.
fn id32(id: u32) -> i32 {
    id as i32
}

/// A 0/1 mask value as int8.
fn flag(v: u8) -> i8 {
    i8::from(v != 0)
}

/// A row's tokens, when it formatted and was tokenized.
fn tokens(row: &Outcome) -> Option<&Tokens> {
    row.as_ref().ok().and_then(|f| f.tokens.as_ref())
}

/// The new columns of a batch of rows, appended to a chunk of rows at a time.
pub struct NewColumns {
    wanted: Columns,
    rows: usize,
    ids: ListColumn<Int32Type>,
    attention: ListColumn<Int8Type>,
    assistant: ListColumn<Int8Type>,
    texts: StringBuilder,
    assistant_spans: ListBuilder<ListBuilder<Int32Builder>>,
    message_spans: SpanColumn,
    errors: StringBuilder,
}

impl NewColumns {
    /// The columns `wanted` of a batch of `rows` rows.
    pub fn new(wanted: Columns, rows: usize) -> Self {
        NewColumns {
            wanted,
            rows,
            ids: ListColumn::with_capacity(rows),
            attention: ListColumn::with_capacity(rows),
            assistant: ListColumn::with_capacity(rows),
            texts: StringBuilder::with_capacity(if wanted.text { rows } else { 0 }, 0),
            assistant_spans: ListBuilder::new(ListBuilder::new(Int32Builder::new())),
            message_spans: SpanColumn::new(),
            errors: StringBuilder::new(),
        }
    }

    /// Appends the next rows. The token columns are first sized for the whole batch from the
    /// tokens per row so far, so they are rarely moved as they grow.
    pub fn append(&mut self, rows: &[Outcome]) -> Result<(), ArrowError> {
        let Columns {
            tokenize, masks, text, ..
        } = self.wanted;
        if tokenize {
            let tokens: usize = rows.iter().filter_map(tokens).map(|t| t.input_ids.len()).sum();
            let done = self.errors.len() + rows.len();
            let expected = (self.ids.values.len() + tokens) * self.rows.max(done) / done.max(1);
            self.ids.expect(expected);
            self.attention.expect(expected);
            if masks {
                self.assistant.expect(expected);
            }
        }
        for row in rows {
            let ok = row.as_ref().ok();
            self.message_spans.push(ok.and_then(|f| f.message_spans.as_deref()))?;
            push_ranges(&mut self.assistant_spans, ok.and_then(|f| f.assistant_spans.as_deref()));
            let t = tokens(row);
            self.ids.push(t.map(|t| t.input_ids.as_slice()), id32)?;
            self.attention.push(t.map(|t| t.attention_mask.as_slice()), flag)?;
            self.assistant
                .push(t.and_then(|t| t.assistant_masks.as_deref()), flag)?;
            if text {
                self.texts.append_option(ok.map(|f| f.text.as_str()));
            }
            self.errors.append_option(row.as_ref().err());
        }
        Ok(())
    }

    /// The finished columns, in their order.
    pub fn finish(mut self) -> Result<RecordBatch, ArrowError> {
        let Columns {
            tokenize,
            masks,
            text,
            message_spans,
            assistant_spans,
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
        if message_spans {
            columns.push(("message_spans", self.message_spans.finish(tokenize)?));
        }
        if assistant_spans {
            columns.push(("assistant_spans", Arc::new(self.assistant_spans.finish())));
        }
        columns.push(("error", Arc::new(self.errors.finish())));
        // Every new column is nullable (a failed row is null there), whatever rows a batch holds.
        RecordBatch::try_from_iter_with_nullable(columns.into_iter().map(|(name, a)| (name, a, true)))
    }
}
