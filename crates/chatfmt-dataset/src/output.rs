//! Writing formatted rows (Parquet or JSON Lines) and rejected rows (JSON Lines). Workers encode
//! chunks of rows ([`Encoder`]); the writer appends them in input order ([`Sink`]).

use crate::safe_file::AtomicFile;
use crate::{Error, ErrorKind};
use arrow_array::builder::{ListBuilder, StringBuilder, StructBuilder, UInt32Builder, UInt64Builder, UInt8Builder};
use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, Fields, Schema};
use chatfmt::jinja::{ByteSpan, CodePoints};
use chatfmt::MessageSpan;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use serde_json::{json, Value as Json};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One formatted row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formatted {
    /// The input row's index.
    pub index: u64,
    pub text: String,
    /// `input_ids`, `attention_mask`, `assistant_masks` with `--tokenize`.
    pub tokens: Option<Tokens>,
    /// The byte spans of `text` a model is trained on (spans without a tokenizer); written as
    /// code points.
    pub assistant_spans: Option<Vec<ByteSpan>>,
    /// Each message's turn and content (when asked for); written as code points.
    pub message_spans: Option<Vec<MessageSpan>>,
}

/// The optional columns of an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Columns {
    /// `input_ids`, `attention_mask`, `assistant_masks`.
    pub tokens: bool,
    /// `assistant_spans`: a list of `[start, end]` code-point pairs.
    pub assistant_spans: bool,
    /// `message_spans`: a list of `{index, role, turn, content}`.
    pub message_spans: bool,
}

/// The tokenized form of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    pub input_ids: Vec<u32>,
    pub attention_mask: Vec<u8>,
    pub assistant_masks: Vec<u8>,
}

/// The output file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    #[default]
    Parquet,
    Jsonl,
}

/// A row that could not be formatted: one line of the rejects file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    /// The input row's index.
    pub index: u64,
    /// The kind of failure: the Python exception class for template errors (`UndefinedError`, ...),
    /// else `InvalidInput`, `LimitExceeded` or `TokenizationError`.
    pub kind: String,
    /// What went wrong, on one line.
    pub error: String,
}

impl Reject {
    /// A reject of row `index`.
    pub fn new(index: u64, kind: impl Into<String>, error: impl std::fmt::Display) -> Reject {
        let error = error.to_string();
        let error = if error.contains('\n') {
            error.split('\n').map(str::trim_end).collect::<Vec<_>>().join(" ")
        } else {
            error
        };
        Reject {
            index,
            kind: kind.into(),
            error,
        }
    }
}

/// Where encoded chunks go, in input order (on the writer thread). The file is written under a
/// temporary name until the run succeeds.
pub struct Sink {
    path: PathBuf,
    file: AtomicFile,
    writer: SinkWriter,
}

enum SinkWriter {
    Parquet(Box<SerializedFileWriter<File>>),
    Jsonl(BufWriter<File>),
}

/// Turns chunks of formatted rows into bytes ready to append; shared by the worker threads.
pub enum Encoder {
    Parquet {
        /// Column writers for each chunk's row group.
        factory: ArrowRowGroupWriterFactory,
        schema: Arc<Schema>,
        columns: Columns,
    },
    Jsonl,
}

/// A chunk's rows, encoded: one Parquet row group (its column chunks) or JSON Lines.
pub struct Encoded {
    rows: usize,
    data: EncodedData,
}

enum EncodedData {
    Parquet(Vec<ArrowColumnChunk>),
    Jsonl(Vec<u8>),
}

/// The Parquet leaf column of a list-of-integers output column (`input_ids` and the masks).
fn mask_column(name: &str) -> ColumnPath {
    ColumnPath::new(vec![name.to_string(), "list".to_string(), "item".to_string()])
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

/// A list of `[start, end]` pairs.
fn pairs_type() -> DataType {
    list_of(list_of(DataType::UInt64))
}

/// The fields of one `message_spans` entry.
fn message_span_fields() -> Fields {
    Fields::from(vec![
        Field::new("index", DataType::UInt64, false),
        Field::new("role", DataType::Utf8, true),
        Field::new("turn", list_of(DataType::UInt64), true),
        Field::new("content", pairs_type(), false),
    ])
}

fn properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        // Token ids barely repeat within a page: dictionary encoding only costs time. The 0/1 masks
        // stay PLAIN, which Snappy shrinks well (long runs): delta encoding makes the file ~6% smaller
        // but costs a fifth of the per-row instructions and ~10% of the run's time.
        .set_dictionary_enabled(false)
        // Token ids are near-random 17-bit numbers: Snappy barely shrinks them and costs as much CPU
        // as the rest of the writer; nor are min/max statistics of any use.
        .set_column_compression(mask_column("input_ids"), Compression::UNCOMPRESSED)
        .set_column_statistics_enabled(mask_column("input_ids"), EnabledStatistics::None)
        .set_column_statistics_enabled(mask_column("attention_mask"), EnabledStatistics::None)
        .set_column_statistics_enabled(mask_column("assistant_masks"), EnabledStatistics::None)
        .build()
}

impl Sink {
    /// Creates the output's temporary file, and the encoder of its chunks.
    pub fn create(path: &Path, format: OutputFormat, columns: Columns) -> Result<(Sink, Encoder), Error> {
        let (guard, file) = AtomicFile::create(path)?;
        let (writer, encoder) = match format {
            OutputFormat::Jsonl => (
                SinkWriter::Jsonl(BufWriter::with_capacity(1 << 20, file)),
                Encoder::Jsonl,
            ),
            OutputFormat::Parquet => {
                let mut fields = vec![
                    Field::new("index", DataType::UInt64, false),
                    Field::new("text", DataType::Utf8, false),
                ];
                if columns.tokens {
                    fields.push(Field::new("input_ids", list_of(DataType::UInt32), false));
                    fields.push(Field::new("attention_mask", list_of(DataType::UInt8), false));
                    fields.push(Field::new("assistant_masks", list_of(DataType::UInt8), false));
                }
                if columns.assistant_spans {
                    fields.push(Field::new("assistant_spans", pairs_type(), false));
                }
                if columns.message_spans {
                    let entry = DataType::Struct(message_span_fields());
                    fields.push(Field::new("message_spans", list_of(entry), false));
                }
                let schema = Arc::new(Schema::new(fields));
                // The Arrow writer sets up the file (schema, its Arrow form in the metadata); row groups
                // are then encoded column by column on the workers and only appended here.
                let (writer, factory) = ArrowWriter::try_new(file, schema.clone(), Some(properties()))
                    .and_then(ArrowWriter::into_serialized_writer)
                    .map_err(|e| Error::file(ErrorKind::Output, path, format!("cannot write Parquet: {e}")))?;
                (
                    SinkWriter::Parquet(Box::new(writer)),
                    Encoder::Parquet {
                        factory,
                        schema,
                        columns,
                    },
                )
            }
        };
        Ok((
            Sink {
                path: path.to_path_buf(),
                file: guard,
                writer,
            },
            encoder,
        ))
    }

    /// Appends an encoded chunk.
    pub fn append(&mut self, chunk: Encoded) -> Result<(), Error> {
        let path = &self.path;
        let fail = |e: &dyn std::fmt::Display| Error::file(ErrorKind::Output, path, format!("write failed: {e}"));
        match (&mut self.writer, chunk.data) {
            (SinkWriter::Jsonl(writer), EncodedData::Jsonl(bytes)) => writer.write_all(&bytes).map_err(|e| fail(&e)),
            (SinkWriter::Parquet(writer), EncodedData::Parquet(columns)) => {
                if chunk.rows == 0 {
                    return Ok(());
                }
                let mut group = writer.next_row_group().map_err(|e| fail(&e))?;
                for column in columns {
                    column.append_to_row_group(&mut group).map_err(|e| fail(&e))?;
                }
                group.close().map(|_| ()).map_err(|e| fail(&e))
            }
            _ => Err(fail(&"a chunk was encoded for the other output format")),
        }
    }

    /// Flushes and closes the file; it is still under its temporary name until committed.
    pub fn finish(self) -> Result<AtomicFile, Error> {
        let path = &self.path;
        let fail = |e: &dyn std::fmt::Display| Error::file(ErrorKind::Output, path, format!("write failed: {e}"));
        match self.writer {
            SinkWriter::Jsonl(mut writer) => writer.flush().map_err(|e| fail(&e))?,
            SinkWriter::Parquet(writer) => writer.close().map(|_| ()).map_err(|e| fail(&e))?,
        }
        Ok(self.file)
    }
}

impl Encoder {
    /// Encodes a chunk of rows: every column of its row group, or its JSON lines.
    pub fn encode(&self, rows: &[Formatted]) -> Result<Encoded, Error> {
        let data = match self {
            Encoder::Jsonl => EncodedData::Jsonl(json_lines(rows)?),
            Encoder::Parquet {
                factory,
                schema,
                columns,
            } => {
                let arrays = arrays(rows, *columns)?;
                let mut writers = factory.create_column_writers(0).map_err(encoding)?.into_iter();
                let mut chunks = Vec::with_capacity(arrays.len());
                for (field, array) in schema.fields().iter().zip(&arrays) {
                    for leaf in compute_leaves(field, array).map_err(encoding)? {
                        let mut writer = writers
                            .next()
                            .ok_or_else(|| encoding("more leaf columns than column writers"))?;
                        writer.write(&leaf).map_err(encoding)?;
                        chunks.push(writer.close().map_err(encoding)?);
                    }
                }
                EncodedData::Parquet(chunks)
            }
        };
        Ok(Encoded { rows: rows.len(), data })
    }
}

/// A chunk of rows that could not be encoded.
fn encoding(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Output, format!("cannot encode rows: {e}"))
}

fn json_lines(rows: &[Formatted]) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::new();
    for r in rows {
        let mut obj = json!({"index": r.index, "text": r.text});
        if let Some(t) = &r.tokens {
            obj["input_ids"] = json!(t.input_ids);
            obj["attention_mask"] = json!(t.attention_mask);
            obj["assistant_masks"] = json!(t.assistant_masks);
        }
        if r.assistant_spans.is_some() || r.message_spans.is_some() {
            let text = CodePoints::new(&r.text);
            if let Some(spans) = &r.assistant_spans {
                obj["assistant_spans"] = json!(spans.iter().map(|&span| text.span(span)).collect::<Vec<_>>());
            }
            if let Some(messages) = &r.message_spans {
                obj["message_spans"] = Json::Array(messages.iter().map(|m| m.to_json(&text)).collect());
            }
        }
        serde_json::to_writer(&mut buf, &obj).map_err(encoding)?;
        buf.push(b'\n');
    }
    Ok(buf)
}

/// The output columns of `rows`, each allocated once at its final size.
fn arrays(rows: &[Formatted], columns: Columns) -> Result<Vec<ArrayRef>, Error> {
    let text_bytes = rows.iter().map(|r| r.text.len()).sum();
    let mut index = UInt64Builder::with_capacity(rows.len());
    let mut text = StringBuilder::with_capacity(rows.len(), text_bytes);
    for r in rows {
        index.append_value(r.index);
        text.append_value(&r.text);
    }
    let mut arrays: Vec<ArrayRef> = vec![Arc::new(index.finish()), Arc::new(text.finish())];
    if columns.tokens {
        let tokens: Vec<&Tokens> = rows
            .iter()
            .map(|r| r.tokens.as_ref().ok_or_else(|| encoding("a row was not tokenized")))
            .collect::<Result<_, _>>()?;
        let n = tokens.iter().map(|t| t.input_ids.len()).sum();
        let mut ids = ListBuilder::with_capacity(UInt32Builder::with_capacity(n), rows.len());
        let mut attention = ListBuilder::with_capacity(UInt8Builder::with_capacity(n), rows.len());
        let mut assistant = ListBuilder::with_capacity(UInt8Builder::with_capacity(n), rows.len());
        for t in tokens {
            ids.values().append_slice(&t.input_ids);
            ids.append(true);
            attention.values().append_slice(&t.attention_mask);
            attention.append(true);
            assistant.values().append_slice(&t.assistant_masks);
            assistant.append(true);
        }
        arrays.push(Arc::new(ids.finish()));
        arrays.push(Arc::new(attention.finish()));
        arrays.push(Arc::new(assistant.finish()));
    }
    // Spans are written as code points.
    let texts: Vec<CodePoints> = if columns.assistant_spans || columns.message_spans {
        rows.iter().map(|r| CodePoints::new(&r.text)).collect()
    } else {
        Vec::new()
    };
    if columns.assistant_spans {
        let mut spans = ListBuilder::new(ListBuilder::new(UInt64Builder::new()));
        for (r, text) in rows.iter().zip(&texts) {
            let row = r
                .assistant_spans
                .as_deref()
                .ok_or_else(|| encoding("a row has no assistant spans"))?;
            append_pairs(&mut spans, text, row);
        }
        arrays.push(Arc::new(spans.finish()));
    }
    if columns.message_spans {
        let entry = StructBuilder::new(
            message_span_fields(),
            vec![
                Box::new(UInt64Builder::new()),
                Box::new(StringBuilder::new()),
                Box::new(ListBuilder::new(UInt64Builder::new())),
                Box::new(ListBuilder::new(ListBuilder::new(UInt64Builder::new()))),
            ],
        );
        let mut list = ListBuilder::new(entry);
        for (r, text) in rows.iter().zip(&texts) {
            let messages = r
                .message_spans
                .as_deref()
                .ok_or_else(|| encoding("a row has no message spans"))?;
            for m in messages {
                append_message(list.values(), text, m)?;
            }
            list.append(true);
        }
        arrays.push(Arc::new(list.finish()));
    }
    Ok(arrays)
}

/// Appends one row's spans as `[start, end]` code-point pairs.
fn append_pairs(list: &mut ListBuilder<ListBuilder<UInt64Builder>>, text: &CodePoints, spans: &[ByteSpan]) {
    for &span in spans {
        let (s, e) = text.span(span);
        list.values().values().append_slice(&[s as u64, e as u64]);
        list.values().append(true);
    }
    list.append(true);
}

/// Appends one `message_spans` entry, its spans in code points.
fn append_message(entry: &mut StructBuilder, text: &CodePoints, m: &MessageSpan) -> Result<(), Error> {
    let missing = || encoding("message_spans: unexpected column layout");
    entry
        .field_builder::<UInt64Builder>(0)
        .ok_or_else(missing)?
        .append_value(m.index as u64);
    entry
        .field_builder::<StringBuilder>(1)
        .ok_or_else(missing)?
        .append_option(m.role.as_deref());
    let turn = entry
        .field_builder::<ListBuilder<UInt64Builder>>(2)
        .ok_or_else(missing)?;
    match m.turn.map(|span| text.span(span)) {
        Some((s, e)) => {
            turn.values().append_slice(&[s as u64, e as u64]);
            turn.append(true);
        }
        None => turn.append(false),
    }
    let content = entry
        .field_builder::<ListBuilder<ListBuilder<UInt64Builder>>>(3)
        .ok_or_else(missing)?;
    append_pairs(content, text, &m.content);
    entry.append(true);
    Ok(())
}

/// The rejects file: one JSON object per rejected row (`index`, `kind`, `error`). It is created
/// (under a temporary name) on the first reject; with no rejects, a stale file at its path from an
/// earlier run is replaced by an empty one, and none is created otherwise.
pub struct Rejects {
    path: PathBuf,
    file: Option<(AtomicFile, BufWriter<File>)>,
}

impl Rejects {
    /// Rejects that will go to `path`.
    pub fn new(path: &Path) -> Rejects {
        Rejects {
            path: path.to_path_buf(),
            file: None,
        }
    }

    /// The path rejects go to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn open(&mut self) -> Result<&mut BufWriter<File>, Error> {
        if self.file.is_none() {
            let (guard, file) = AtomicFile::create(&self.path)?;
            self.file = Some((guard, BufWriter::new(file)));
        }
        match &mut self.file {
            Some((_, w)) => Ok(w),
            None => Err(Error::file(
                ErrorKind::Output,
                &self.path,
                "the rejects file is not open",
            )),
        }
    }

    /// Records a rejected row.
    pub fn write(&mut self, reject: &Reject) -> Result<(), Error> {
        let line = json!({"index": reject.index, "kind": reject.kind, "error": reject.error}).to_string();
        let path = self.path.clone();
        writeln!(self.open()?, "{line}")
            .map_err(|e| Error::file(ErrorKind::Output, &path, format!("write failed: {e}")))
    }

    /// Flushes the file; what is to be committed (none when there were no rejects and no stale file).
    pub fn finish(mut self) -> Result<Option<AtomicFile>, Error> {
        if self.file.is_none() && std::fs::symlink_metadata(&self.path).is_ok() {
            self.open()?;
        }
        match self.file {
            Some((guard, mut w)) => {
                w.flush()
                    .map_err(|e| Error::file(ErrorKind::Output, &self.path, format!("write failed: {e}")))?;
                Ok(Some(guard))
            }
            None => Ok(None),
        }
    }
}
