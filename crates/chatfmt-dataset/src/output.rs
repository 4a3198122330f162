//! Writing formatted rows (Parquet or JSON Lines) and rejected rows (JSON Lines).

use crate::Error;
use arrow_array::builder::{ListBuilder, StringBuilder, UInt32Builder, UInt64Builder, UInt8Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use serde_json::json;
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

/// Where formatted rows go.
pub enum Sink {
    Parquet {
        path: PathBuf,
        writer: Box<ArrowWriter<File>>,
        schema: Arc<Schema>,
        tokenize: bool,
    },
    Jsonl {
        path: PathBuf,
        writer: BufWriter<File>,
    },
}

/// The Parquet leaf column of a list-of-integers output column (`input_ids` and the masks).
fn mask_column(name: &str) -> ColumnPath {
    ColumnPath::new(vec![name.to_string(), "list".to_string(), "item".to_string()])
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

impl Sink {
    /// Creates the output file.
    pub fn create(path: &Path, format: OutputFormat, tokenize: bool, rows_per_group: usize) -> Result<Sink, Error> {
        let file = File::create(path).map_err(|e| Error::file(path, format!("cannot create: {e}")))?;
        match format {
            OutputFormat::Jsonl => Ok(Sink::Jsonl {
                path: path.to_path_buf(),
                writer: BufWriter::with_capacity(1 << 20, file),
            }),
            OutputFormat::Parquet => {
                let mut fields = vec![
                    Field::new("index", DataType::UInt64, false),
                    Field::new("text", DataType::Utf8, false),
                ];
                if tokenize {
                    fields.push(Field::new("input_ids", list_of(DataType::UInt32), false));
                    fields.push(Field::new("attention_mask", list_of(DataType::UInt8), false));
                    fields.push(Field::new("assistant_masks", list_of(DataType::UInt8), false));
                }
                let schema = Arc::new(Schema::new(fields));
                let props = WriterProperties::builder()
                    .set_compression(Compression::SNAPPY)
                    // Token ids barely repeat within a page: dictionary encoding only costs time. The
                    // 0/1 masks are long runs, which delta encoding stores in a few bits without
                    // hashing every value as a dictionary would.
                    .set_dictionary_enabled(false)
                    .set_column_encoding(mask_column("attention_mask"), Encoding::DELTA_BINARY_PACKED)
                    .set_column_encoding(mask_column("assistant_masks"), Encoding::DELTA_BINARY_PACKED)
                    // Token ids are near-random 17-bit numbers: Snappy barely shrinks them and costs
                    // as much CPU as the rest of the writer; nor are min/max statistics of any use.
                    .set_column_compression(mask_column("input_ids"), Compression::UNCOMPRESSED)
                    .set_column_statistics_enabled(mask_column("input_ids"), EnabledStatistics::None)
                    .set_column_statistics_enabled(mask_column("attention_mask"), EnabledStatistics::None)
                    .set_column_statistics_enabled(mask_column("assistant_masks"), EnabledStatistics::None)
                    .set_max_row_group_row_count(Some(rows_per_group.max(1)))
                    .build();
                let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
                    .map(Box::new)
                    .map_err(|e| Error::file(path, format!("cannot write Parquet: {e}")))?;
                Ok(Sink::Parquet {
                    path: path.to_path_buf(),
                    writer,
                    schema,
                    tokenize,
                })
            }
        }
    }

    /// Appends rows.
    pub fn write(&mut self, rows: &[Formatted]) -> Result<(), Error> {
        match self {
            Sink::Jsonl { path, writer } => {
                for r in rows {
                    let mut obj = json!({"index": r.index, "text": r.text});
                    if let Some(t) = &r.tokens {
                        obj["input_ids"] = json!(t.input_ids);
                        obj["attention_mask"] = json!(t.attention_mask);
                        obj["assistant_masks"] = json!(t.assistant_masks);
                    }
                    serde_json::to_writer(&mut *writer, &obj)
                        .map_err(|e| e.to_string())
                        .and_then(|()| writer.write_all(b"\n").map_err(|e| e.to_string()))
                        .map_err(|e| Error::file(path, format!("write failed: {e}")))?;
                }
                Ok(())
            }
            Sink::Parquet {
                path,
                writer,
                schema,
                tokenize,
            } => {
                if rows.is_empty() {
                    return Ok(());
                }
                let batch = to_batch(rows, schema.clone(), *tokenize)
                    .map_err(|e| Error::file(path, format!("cannot build rows: {e}")))?;
                writer
                    .write(&batch)
                    .map_err(|e| Error::file(path, format!("write failed: {e}")))
            }
        }
    }

    /// Flushes and closes the file.
    pub fn finish(self) -> Result<(), Error> {
        match self {
            Sink::Jsonl { path, mut writer } => writer
                .flush()
                .map_err(|e| Error::file(&path, format!("write failed: {e}"))),
            Sink::Parquet { path, writer, .. } => writer
                .close()
                .map(|_| ())
                .map_err(|e| Error::file(&path, format!("write failed: {e}"))),
        }
    }
}

fn to_batch(rows: &[Formatted], schema: Arc<Schema>, tokenize: bool) -> Result<RecordBatch, String> {
    let mut index = UInt64Builder::with_capacity(rows.len());
    let mut text = StringBuilder::new();
    for r in rows {
        index.append_value(r.index);
        text.append_value(&r.text);
    }
    let mut columns: Vec<ArrayRef> = vec![Arc::new(index.finish()), Arc::new(text.finish())];
    if tokenize {
        let mut ids = ListBuilder::new(UInt32Builder::new());
        let mut attention = ListBuilder::new(UInt8Builder::new());
        let mut assistant = ListBuilder::new(UInt8Builder::new());
        for r in rows {
            let t = r.tokens.as_ref().ok_or("a row was not tokenized")?;
            ids.values().append_slice(&t.input_ids);
            ids.append(true);
            attention.values().append_slice(&t.attention_mask);
            attention.append(true);
            assistant.values().append_slice(&t.assistant_masks);
            assistant.append(true);
        }
        columns.push(Arc::new(ids.finish()));
        columns.push(Arc::new(attention.finish()));
        columns.push(Arc::new(assistant.finish()));
    }
    RecordBatch::try_new(schema, columns).map_err(|e| e.to_string())
}

/// The rejects file: one JSON object per rejected row (`index`, `error`).
pub struct Rejects {
    path: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl Rejects {
    /// The file is created on the first reject.
    pub fn new(path: &Path) -> Rejects {
        Rejects {
            path: path.to_path_buf(),
            writer: None,
        }
    }

    /// The path rejects go to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a rejected row.
    pub fn write(&mut self, index: u64, error: &str) -> Result<(), Error> {
        if self.writer.is_none() {
            let file = File::create(&self.path).map_err(|e| Error::file(&self.path, format!("cannot create: {e}")))?;
            self.writer = Some(BufWriter::new(file));
        }
        let line = json!({"index": index, "error": error}).to_string();
        match self.writer.as_mut() {
            Some(w) => writeln!(w, "{line}").map_err(|e| Error::file(&self.path, format!("write failed: {e}"))),
            None => Ok(()),
        }
    }

    /// Flushes the file (if any reject was written).
    pub fn finish(self) -> Result<(), Error> {
        match self.writer {
            Some(mut w) => w
                .flush()
                .map_err(|e| Error::file(&self.path, format!("write failed: {e}"))),
            None => Ok(()),
        }
    }
}
