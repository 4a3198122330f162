//! Reading rows, streamed in chunks: JSON Lines (one object a line) or Parquet (each row as a JSON
//! object of the conversation's columns, as a template sees a `datasets` row, and every column kept
//! for the output).

use crate::{row_json, Error, ErrorKind};
use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use arrow_schema::SchemaRef;
use arrow_select::concat::concat_batches;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value as Json;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
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

/// Rows read at a time, and for Parquet all their columns (the rows' payloads hold only those the
/// conversation is read from).
#[derive(Debug)]
pub struct Chunk {
    pub rows: Vec<Row>,
    /// Parquet: every input column of the rows.
    pub columns: Option<RecordBatch>,
}

/// Row `row` of `batch` as a JSON object of its columns, as `arrow_json` writes them (for the JSON
/// Lines output, which keeps every input value).
pub(crate) fn row_object(batch: &RecordBatch, row: usize) -> Result<Json, Error> {
    match row_json::row(batch, row) {
        Some(value) => Ok(value),
        None => batch_to_json(&batch.slice(row, 1))?
            .pop()
            .ok_or_else(|| Error::new(ErrorKind::InvalidRow, "the Parquet row decoded to nothing")),
    }
}

impl Row {
    /// The row as a JSON value, or why it is not one.
    pub fn into_value(self) -> Result<Json, Error> {
        let invalid = |message: String| Error::new(ErrorKind::InvalidRow, message);
        match self.payload {
            // As a chat template would see the row from `datasets` (see `row_json`).
            Payload::Arrow { batch, row } => row_json::template_row(&batch, row).map_err(|e| invalid(e.to_string())),
            Payload::Line { line, bytes } => match std::str::from_utf8(without_bom(line, &bytes)) {
                Err(e) => Err(invalid(format!("line {line}: not UTF-8: {e}"))),
                Ok(text) => chatfmt::json_input::from_str(text).map_err(|e| {
                    let column = e.column().unwrap_or(0);
                    match e.kind() {
                        chatfmt::ErrorKind::TooDeep => invalid(format!(
                            "line {line}, column {column}: {}, the most a row may have",
                            e.message()
                        )),
                        _ => invalid(format!(
                            "line {line}: malformed JSON at column {column}: {}",
                            e.message()
                        )),
                    }
                }),
            },
        }
    }
}

/// A line's bytes without the UTF-8 byte order mark that may open the file's first line.
fn without_bom(line: u64, bytes: &[u8]) -> &[u8] {
    match line {
        1 => bytes.strip_prefix(b"\xef\xbb\xbf".as_slice()).unwrap_or(bytes),
        _ => bytes,
    }
}

/// The record batch a columnar source is handing out.
pub struct Pending {
    /// All the file's columns.
    batch: RecordBatch,
    /// The columns a conversation is read from.
    projected: Arc<RecordBatch>,
    /// The next row to hand out.
    row: usize,
    /// The batch's memory per row: what a row counts against a chunk's bytes.
    row_bytes: usize,
}

/// A streaming row reader.
pub enum Source {
    Jsonl {
        path: PathBuf,
        reader: BufReader<File>,
        line: u64,
        next_index: u64,
    },
    /// Columnar batches: a Parquet file, or an Arrow IPC file or stream.
    Columnar {
        path: PathBuf,
        reader: Batches,
        /// The file's columns.
        schema: SchemaRef,
        /// The columns a conversation is read from.
        read: Vec<usize>,
        /// The batch being handed out (all its columns, and those read), and its next row.
        pending: Option<Pending>,
        next_index: u64,
        /// The number of rows, when the file records it (Parquet).
        total: Option<u64>,
    },
}

/// The record batches of a columnar file.
type Batches = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>> + Send>;

/// How the input file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// One JSON object a line.
    Jsonl,
    /// An Apache Parquet file.
    Parquet,
    /// An Arrow IPC file or stream (what `datasets`' `save_to_disk` writes).
    ArrowIpc,
}

/// Recognises the format from the file's first bytes: Parquet's `PAR1` magic, Arrow IPC's (a file's
/// `ARROW1`, a stream's continuation marker), else JSON Lines.
/// Formats that would otherwise read as garbage (compressed files, a single JSON array) are refused
/// with what to do instead.
fn sniff(path: &Path, file: &mut File) -> Result<InputFormat, Error> {
    let mut head = [0u8; 512];
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::file(ErrorKind::Input, path, format!("cannot read: {e}"))),
        }
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|e| Error::file(ErrorKind::Input, path, format!("cannot read: {e}")))?;
    let head = &head[..n];
    let refuse = |what: &str, todo: &str| {
        Err(Error::file(
            ErrorKind::Input,
            path,
            format!("the input is {what}, not JSON Lines or Parquet; {todo}"),
        ))
    };
    if head.starts_with(b"PAR1") {
        return Ok(InputFormat::Parquet);
    }
    if head.starts_with(b"ARROW1") || head.starts_with(&[0xff, 0xff, 0xff, 0xff]) {
        return Ok(InputFormat::ArrowIpc);
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return refuse(
            "gzip-compressed",
            "decompress it first (gzip -dk FILE) and pass the result",
        );
    }
    if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return refuse(
            "zstd-compressed",
            "decompress it first (zstd -d FILE) and pass the result",
        );
    }
    let text = head.strip_prefix(b"\xef\xbb\xbf".as_slice()).unwrap_or(head);
    if text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return refuse(
            "a JSON array",
            "write one JSON object per line (jq -c '.[]' FILE > FILE.jsonl), or force JSON Lines with --input-format jsonl",
        );
    }
    Ok(InputFormat::Jsonl)
}

/// The batches of an Arrow IPC file (random-access format) or stream, and their schema.
fn ipc_batches(path: &Path, mut file: File) -> Result<(Batches, SchemaRef, Option<u64>), Error> {
    let fail = |e: ArrowError| Error::file(ErrorKind::Input, path, format!("not a readable Arrow IPC file: {e}"));
    let mut magic = [0u8; 6];
    let is_file = file.read_exact(&mut magic).is_ok() && &magic == b"ARROW1";
    file.seek(SeekFrom::Start(0))
        .map_err(|e| Error::file(ErrorKind::Input, path, format!("cannot read: {e}")))?;
    if is_file {
        let reader = arrow_ipc::reader::FileReader::try_new(file, None).map_err(fail)?;
        let schema = reader.schema();
        return Ok((Box::new(reader), schema, None));
    }
    let reader =
        arrow_ipc::reader::StreamReader::try_new(BufReader::with_capacity(1 << 20, file), None).map_err(fail)?;
    let schema = reader.schema();
    Ok((Box::new(reader), schema, None))
}

impl Source {
    /// Opens `path`, in `format` or (when `None`) the format its first bytes show. Parquet is read
    /// at most `batch_rows` rows at a time, and fewer when that many would hold more than
    /// `batch_bytes` uncompressed bytes by the file's row-group sizes; rows are turned into JSON
    /// from the `columns` that exist only.
    pub fn open(
        path: &Path,
        format: Option<InputFormat>,
        columns: &[&str],
        (batch_rows, batch_bytes): (usize, usize),
    ) -> Result<Source, Error> {
        if path.is_dir() {
            return Err(Error::file(
                ErrorKind::Input,
                path,
                "is a folder; the input is one JSON Lines, Parquet or Arrow IPC file (for a dataset saved with save_to_disk, its data-*.arrow file)",
            ));
        }
        let mut file =
            File::open(path).map_err(|e| Error::file(ErrorKind::Input, path, format!("cannot open: {e}")))?;
        let format = match format {
            Some(f) => f,
            None => sniff(path, &mut file)?,
        };
        if format == InputFormat::Jsonl {
            return Ok(Source::Jsonl {
                path: path.to_path_buf(),
                reader: BufReader::with_capacity(1 << 20, file),
                line: 0,
                next_index: 0,
            });
        }
        let cannot_read = |e: &dyn std::fmt::Display| Error::file(ErrorKind::Input, path, format!("cannot read: {e}"));
        let (reader, schema, total): (Batches, SchemaRef, Option<u64>) = match format {
            InputFormat::ArrowIpc => ipc_batches(path, file)?,
            _ => {
                let builder = ParquetRecordBatchReaderBuilder::try_new(file)
                    .map_err(|e| Error::file(ErrorKind::Input, path, format!("not a readable Parquet file: {e}")))?;
                let total = builder.metadata().file_metadata().num_rows().max(0) as u64;
                let bytes: i64 = builder
                    .metadata()
                    .row_groups()
                    .iter()
                    .map(|g| g.total_byte_size())
                    .sum();
                let row_bytes = (bytes.max(0) as u64 / total.max(1)).max(1);
                let rows = usize::try_from(batch_bytes as u64 / row_bytes).unwrap_or(usize::MAX);
                let schema = builder.schema().clone();
                let reader = builder
                    .with_batch_size(rows.clamp(1, batch_rows.max(1)))
                    .build()
                    .map_err(|e| cannot_read(&e))?;
                (Box::new(reader), schema, Some(total))
            }
        };
        let fields = schema.fields();
        let read: Vec<usize> = fields
            .iter()
            .enumerate()
            .filter(|(_, f)| columns.contains(&f.name().as_str()))
            .map(|(i, _)| i)
            .collect();
        if read.is_empty() {
            let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
            return Err(Error::file(
                ErrorKind::Input,
                path,
                format!(
                    "none of the columns {columns:?} is in the file (columns: {names:?}); name them with --messages-field / --conversations-field"
                ),
            ));
        }
        Ok(Source::Columnar {
            path: path.to_path_buf(),
            reader,
            schema,
            read,
            pending: None,
            next_index: 0,
            total,
        })
    }

    /// The number of rows, when the format records it.
    pub fn total_rows(&self) -> Option<u64> {
        match self {
            Source::Jsonl { .. } => None,
            Source::Columnar { total, .. } => *total,
        }
    }

    /// The file's columns (Parquet).
    pub fn schema(&self) -> Option<&SchemaRef> {
        match self {
            Source::Jsonl { .. } => None,
            Source::Columnar { schema, .. } => Some(schema),
        }
    }

    /// Reads up to `n` rows, ending the chunk sooner once its rows hold `bytes` bytes (a line's
    /// length, or a batch's memory per row); no rows is the end of the input.
    pub fn next_chunk(&mut self, n: usize, bytes: usize) -> Result<Chunk, Error> {
        let mut out = Vec::with_capacity(n.min(1024));
        let mut held = 0usize;
        match self {
            Source::Jsonl {
                path,
                reader,
                line,
                next_index,
            } => {
                while out.len() < n && held < bytes {
                    let mut buf = Vec::new();
                    let read = reader.read_until(b'\n', &mut buf).map_err(|e| {
                        Error::file(ErrorKind::Input, path, format!("read error after line {line}: {e}"))
                    })?;
                    if read == 0 {
                        break;
                    }
                    *line += 1;
                    if without_bom(*line, &buf).iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    held += buf.len();
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
            Source::Columnar {
                path,
                reader,
                schema,
                read,
                pending,
                next_index,
                ..
            } => {
                // The chunk's rows as slices of the batches they come from.
                let mut slices = Vec::new();
                while out.len() < n && held < bytes {
                    if let Some(p) = pending {
                        let within = (bytes - held).div_ceil(p.row_bytes);
                        let take = (n - out.len()).min(p.batch.num_rows() - p.row).min(within);
                        if take > 0 {
                            for r in p.row..p.row + take {
                                out.push(Row {
                                    index: *next_index,
                                    payload: Payload::Arrow {
                                        batch: p.projected.clone(),
                                        row: r,
                                    },
                                });
                                *next_index += 1;
                            }
                            slices.push(p.batch.slice(p.row, take));
                            p.row += take;
                            held = held.saturating_add(take * p.row_bytes);
                            continue;
                        }
                    }
                    match reader.next() {
                        None => break,
                        Some(batch) => {
                            let batch = batch.map_err(|e| {
                                Error::file(
                                    ErrorKind::Input,
                                    path,
                                    format!("cannot decode rows from {}: {e}", *next_index),
                                )
                            })?;
                            let projected = batch.project(read).map_err(|e| {
                                Error::file(ErrorKind::Input, path, format!("cannot read the columns: {e}"))
                            })?;
                            let row_bytes = (batch.get_array_memory_size() / batch.num_rows().max(1)).max(1);
                            *pending = Some(Pending {
                                batch,
                                projected: Arc::new(projected),
                                row: 0,
                                row_bytes,
                            });
                        }
                    }
                }
                let columns = match slices.len() {
                    1 => slices.pop(),
                    _ => Some(
                        concat_batches(schema, &slices)
                            .map_err(|e| Error::file(ErrorKind::Input, path, format!("cannot gather rows: {e}")))?,
                    ),
                };
                return Ok(Chunk { rows: out, columns });
            }
        }
        Ok(Chunk {
            rows: out,
            columns: None,
        })
    }
}

/// The rows of a record batch as JSON objects (nulls kept as `null`).
pub(crate) fn batch_to_json(batch: &RecordBatch) -> Result<Vec<Json>, Error> {
    let undecodable = |e: &dyn std::fmt::Display| {
        Error::new(
            ErrorKind::InvalidRow,
            format!(
                "the row's columns cannot be written as JSON ({e}); write Parquet (--output-format parquet) or \
                 drop the column"
            ),
        )
    };
    let mut buf = Vec::new();
    {
        let mut writer = arrow_json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, arrow_json::writer::LineDelimited>(&mut buf);
        writer.write(batch).map_err(|e| undecodable(&e))?;
        writer.finish().map_err(|e| undecodable(&e))?;
    }
    let mut rows = Vec::with_capacity(batch.num_rows());
    for line in buf.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        rows.push(serde_json::from_slice(line).map_err(|e| undecodable(&e))?);
    }
    if rows.len() != batch.num_rows() {
        let n = format!("{} rows decoded, {} expected", rows.len(), batch.num_rows());
        return Err(undecodable(&n));
    }
    Ok(rows)
}
