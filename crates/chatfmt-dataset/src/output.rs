//! Writing formatted rows (Parquet or JSON Lines) and rejected rows (JSON Lines). Workers encode
//! chunks of rows ([`Encoder`]); the writer appends them in input order ([`Sink`]).

use crate::columns::{Columns, NewColumns, Outcome};
use crate::input::row_object;
use crate::safe_file::AtomicFile;
use crate::{Error, ErrorKind};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, FieldRef, Schema, SchemaRef, TimeUnit};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use serde_json::{json, Map, Value as Json};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The input's side of a chunk's output rows, written before the new columns.
pub enum InputRows {
    /// Parquet input: every column of the rows.
    Columns(RecordBatch),
    /// JSON Lines input to JSON Lines output: each row's object (`None` for a line that is not one).
    Objects(Vec<Option<Map<String, Json>>>),
    /// Nothing (JSON Lines input to Parquet output: there is no schema to keep).
    None,
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

    /// The row's `error` column: `"<kind>: <reason>"`.
    pub fn error_text(&self) -> String {
        format!("{}: {}", self.kind, self.error)
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
        schema: SchemaRef,
        columns: Columns,
    },
    Jsonl {
        columns: Columns,
    },
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

/// An input column as the Parquet output writes it: the Arrow types Parquet has no logical type
/// for take the type pyarrow writes them as (timestamps and times of day in seconds in
/// milliseconds, `date64` as `date32`), so that every reader reads dates and times and not bare
/// integers; other types, nested ones inside lists, structs, maps and dictionaries, stay.
fn parquet_field(field: &FieldRef) -> FieldRef {
    let data_type = parquet_type(field.data_type());
    match &data_type == field.data_type() {
        true => field.clone(),
        false => Arc::new(field.as_ref().clone().with_data_type(data_type)),
    }
}

/// The type [`parquet_field`] writes a column of type `t` as.
fn parquet_type(t: &DataType) -> DataType {
    match t {
        DataType::Timestamp(TimeUnit::Second, tz) => DataType::Timestamp(TimeUnit::Millisecond, tz.clone()),
        DataType::Time32(TimeUnit::Second) => DataType::Time32(TimeUnit::Millisecond),
        DataType::Date64 => DataType::Date32,
        DataType::List(item) => DataType::List(parquet_field(item)),
        DataType::LargeList(item) => DataType::LargeList(parquet_field(item)),
        DataType::FixedSizeList(item, n) => DataType::FixedSizeList(parquet_field(item), *n),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(parquet_field).collect()),
        DataType::Map(entries, sorted) => DataType::Map(parquet_field(entries), *sorted),
        DataType::Dictionary(key, value) => DataType::Dictionary(key.clone(), Box::new(parquet_type(value))),
        other => other.clone(),
    }
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
    /// Creates the output's temporary file, and the encoder of its chunks: the `input` columns
    /// (Parquet input), then the new `columns`.
    pub fn create(
        path: &Path,
        format: OutputFormat,
        columns: Columns,
        input: Option<&SchemaRef>,
    ) -> Result<(Sink, Encoder), Error> {
        let (guard, file) = AtomicFile::create(path)?;
        let (writer, encoder) = match format {
            OutputFormat::Jsonl => (
                SinkWriter::Jsonl(BufWriter::with_capacity(1 << 20, file)),
                Encoder::Jsonl { columns },
            ),
            OutputFormat::Parquet => {
                let new = columns.schema().map_err(encoding)?;
                let schema = match input {
                    Some(input) => Arc::new(Schema::new_with_metadata(
                        (input.fields().iter().map(parquet_field))
                            .chain(new.fields().iter().cloned())
                            .collect::<Vec<_>>(),
                        input.metadata().clone(),
                    )),
                    None => new,
                };
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
    /// Encodes a chunk of rows: every column of its row group, or its JSON lines; `input` holds
    /// the rows' input side.
    pub fn encode(&self, input: InputRows, rows: &[Outcome]) -> Result<Encoded, Error> {
        let new = |columns: Columns| {
            let mut new = NewColumns::new(columns, rows.len());
            new.append(rows).map_err(encoding)?;
            new.finish().map_err(encoding)
        };
        let data = match self {
            Encoder::Jsonl { columns } => EncodedData::Jsonl(json_lines(input, &new(*columns)?)?),
            Encoder::Parquet {
                factory,
                schema,
                columns,
            } => {
                let mut arrays: Vec<ArrayRef> = match input {
                    // Input columns of a type Parquet cannot tell take the type they are written as.
                    InputRows::Columns(batch) => (batch.columns().iter().zip(schema.fields()))
                        .map(|(array, field)| match array.data_type() == field.data_type() {
                            true => Ok(array.clone()),
                            false => arrow_cast::cast(array, field.data_type()).map_err(encoding),
                        })
                        .collect::<Result<_, _>>()?,
                    InputRows::Objects(_) | InputRows::None => Vec::new(),
                };
                arrays.extend(new(*columns)?.columns().iter().cloned());
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

/// One JSON object a row: its input side, then the `new` columns.
fn json_lines(input: InputRows, new: &RecordBatch) -> Result<Vec<u8>, Error> {
    let (input_columns, mut objects) = match input {
        InputRows::Columns(batch) => (Some(batch), Vec::new()),
        InputRows::Objects(objects) => (None, objects),
        InputRows::None => (None, Vec::new()),
    };
    let mut buf = Vec::new();
    for i in 0..new.num_rows() {
        let mut obj = match &input_columns {
            Some(batch) => match row_object(batch, i)? {
                Json::Object(obj) => obj,
                _ => Map::new(),
            },
            None => objects.get_mut(i).and_then(Option::take).unwrap_or_default(),
        };
        if let Json::Object(added) = row_object(new, i)? {
            obj.extend(added);
        }
        serde_json::to_writer(&mut buf, &obj).map_err(encoding)?;
        buf.push(b'\n');
    }
    Ok(buf)
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
