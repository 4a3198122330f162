//! Reading rows, streamed in chunks: JSON Lines (one object a line) or Parquet (each row as a JSON
//! object of the projected columns).

use crate::{row_json, Error};
use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use serde_json::Value as Json;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One input row: its index (0-based, in input order) and its content.
#[derive(Debug)]
pub struct Row {
    pub index: u64,
    pub payload: Payload,
}

/// A row's content as read; JSON Lines rows are parsed later, in parallel.
#[derive(Debug)]
pub enum Payload {
    /// A JSON Lines line (1-based line number) not yet parsed.
    Line { line: u64, bytes: Vec<u8> },
    /// Row `row` of a Parquet record batch, turned into JSON later, in parallel.
    Arrow { batch: Arc<RecordBatch>, row: usize },
}

impl Row {
    /// The row as a JSON value, or why it is not one.
    pub fn into_value(self) -> Result<Json, String> {
        match self.payload {
            Payload::Arrow { batch, row } => match row_json::row(&batch, row) {
                Some(value) => Ok(value),
                None => batch_to_json(&batch.slice(row, 1))?
                    .pop()
                    .ok_or_else(|| "the Parquet row decoded to nothing".to_string()),
            },
            Payload::Line { line, bytes } => match std::str::from_utf8(&bytes) {
                Err(e) => Err(format!("line {line}: not UTF-8: {e}")),
                Ok(text) => serde_json::from_str::<Json>(text)
                    .map_err(|e| format!("line {line}: malformed JSON at column {}: {e}", e.column())),
            },
        }
    }
}

/// A streaming row reader.
pub enum Source {
    Jsonl {
        path: PathBuf,
        reader: BufReader<File>,
        line: u64,
        next_index: u64,
    },
    Parquet {
        path: PathBuf,
        reader: ParquetRecordBatchReader,
        /// The batch being handed out and the next row of it.
        pending: Option<(Arc<RecordBatch>, usize)>,
        next_index: u64,
        total: u64,
    },
}

fn is_parquet(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

impl Source {
    /// Opens `path` (`.parquet` is Parquet, anything else JSON Lines). For Parquet only the `columns`
    /// that exist are read, `batch_rows` rows at a time.
    pub fn open(path: &Path, columns: &[&str], batch_rows: usize) -> Result<Source, Error> {
        let file = File::open(path).map_err(|e| Error::file(path, format!("cannot open: {e}")))?;
        if !is_parquet(path) {
            return Ok(Source::Jsonl {
                path: path.to_path_buf(),
                reader: BufReader::with_capacity(1 << 20, file),
                line: 0,
                next_index: 0,
            });
        }
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| Error::file(path, format!("not a readable Parquet file: {e}")))?;
        let total = builder.metadata().file_metadata().num_rows().max(0) as u64;
        let schema = builder.parquet_schema();
        let fields = builder.schema().fields();
        let roots: Vec<usize> = fields
            .iter()
            .enumerate()
            .filter(|(_, f)| columns.contains(&f.name().as_str()))
            .map(|(i, _)| i)
            .collect();
        if roots.is_empty() {
            let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
            return Err(Error::file(
                path,
                format!(
                    "none of the columns {columns:?} is in the file (columns: {names:?}); name them with --messages-field / --conversations-field"
                ),
            ));
        }
        let mask = ProjectionMask::roots(schema, roots);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(batch_rows.max(1))
            .build()
            .map_err(|e| Error::file(path, format!("cannot read: {e}")))?;
        Ok(Source::Parquet {
            path: path.to_path_buf(),
            reader,
            pending: None,
            next_index: 0,
            total,
        })
    }

    /// The number of rows, when the format records it.
    pub fn total_rows(&self) -> Option<u64> {
        match self {
            Source::Jsonl { .. } => None,
            Source::Parquet { total, .. } => Some(*total),
        }
    }

    /// Reads up to `n` rows; an empty result is the end of the input.
    pub fn next_chunk(&mut self, n: usize) -> Result<Vec<Row>, Error> {
        let mut out = Vec::with_capacity(n);
        match self {
            Source::Jsonl {
                path,
                reader,
                line,
                next_index,
            } => {
                while out.len() < n {
                    let mut buf = Vec::new();
                    let read = reader
                        .read_until(b'\n', &mut buf)
                        .map_err(|e| Error::file(path, format!("read error after line {line}: {e}")))?;
                    if read == 0 {
                        break;
                    }
                    *line += 1;
                    if buf.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    out.push(Row {
                        index: *next_index,
                        payload: Payload::Line {
                            line: *line,
                            bytes: buf,
                        },
                    });
                    *next_index += 1;
                }
            }
            Source::Parquet {
                path,
                reader,
                pending,
                next_index,
                ..
            } => {
                while out.len() < n {
                    if let Some((batch, row)) = pending {
                        if *row < batch.num_rows() {
                            out.push(Row {
                                index: *next_index,
                                payload: Payload::Arrow {
                                    batch: batch.clone(),
                                    row: *row,
                                },
                            });
                            *row += 1;
                            *next_index += 1;
                            continue;
                        }
                    }
                    match reader.next() {
                        None => break,
                        Some(batch) => {
                            let batch = batch.map_err(|e| {
                                Error::file(path, format!("cannot decode rows from {}: {e}", *next_index))
                            })?;
                            *pending = Some((Arc::new(batch), 0));
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The rows of a record batch as JSON objects (nulls kept as `null`).
pub(crate) fn batch_to_json(batch: &RecordBatch) -> Result<Vec<Json>, String> {
    let mut buf = Vec::new();
    {
        let mut writer = arrow_json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, arrow_json::writer::LineDelimited>(&mut buf);
        writer.write(batch).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
    }
    let mut rows = Vec::with_capacity(batch.num_rows());
    for line in buf.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        rows.push(serde_json::from_slice(line).map_err(|e| e.to_string())?);
    }
    if rows.len() != batch.num_rows() {
        return Err(format!("{} rows decoded, {} expected", rows.len(), batch.num_rows()));
    }
    Ok(rows)
}
