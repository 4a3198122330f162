//! Arrow IPC in (a file, and the stream `datasets`' `save_to_disk` writes), recognised from its first
//! bytes and read as Parquet is: the same rows, in batches of any size, give the same output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use chatfmt::ChatTemplate;
use chatfmt_dataset::{run, Config};
use std::path::Path;
use std::sync::Arc;

/// Five rows of an `id` and a `messages` column (list of role/content structs).
fn batch() -> RecordBatch {
    let rows: Vec<[(&str, String); 2]> = (0..5)
        .map(|i| [("user", format!("question {i}")), ("assistant", format!("answer {i}"))])
        .collect();
    let rows: Vec<Option<&[(&str, String)]>> = rows.iter().map(|r| Some(&r[..])).collect();
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..5));
    RecordBatch::try_from_iter([("id", ids), ("messages", support::messages_column(&rows))]).expect("batch")
}

/// Writes `data` as an uncompressed Parquet file.
fn write_parquet(path: &Path, data: &RecordBatch) {
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(path).unwrap(), data.schema(), None).unwrap();
    writer.write(data).unwrap();
    writer.close().unwrap();
}

/// Formats `input` with `template` into `dir/out.parquet` and gives a reader of the output.
fn to_parquet(
    input: &Path,
    template: &str,
    dir: &Path,
) -> parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder<std::fs::File> {
    let config = Config {
        output: dir.join("out.parquet"),
        output_format: chatfmt_dataset::OutputFormat::Parquet,
        ..support::config(input, ChatTemplate::new(template, Default::default()), dir)
    };
    run(&config).expect("the run succeeds");
    let file = std::fs::File::open(&config.output).unwrap();
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap()
}

/// Formats `input` into JSON Lines and gives the output.
fn formatted(input: &Path, dir: &Path) -> String {
    let template = ChatTemplate::new(
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}",
        Default::default(),
    );
    let config = Config {
        strict: true,
        ..support::config(input, template, dir)
    };
    let summary = run(&config).expect("the run succeeds");
    assert_eq!((summary.rows_in, summary.rows_rejected), (5, 0));
    std::fs::read_to_string(&config.output).expect("output")
}

#[test]
fn arrow_ipc_files_and_streams_read_as_parquet_does() {
    let dir = support::temp_dir("ipc");
    let data = batch();
    // Two batches (2 and 3 rows), against chunks of 3 rows.
    let parts = [data.slice(0, 2), data.slice(2, 3)];

    let parquet = dir.join("in.parquet");
    write_parquet(&parquet, &data);

    let file = dir.join("in.arrow");
    let mut writer =
        arrow_ipc::writer::FileWriter::try_new(std::fs::File::create(&file).unwrap(), &data.schema()).unwrap();
    parts.iter().for_each(|b| writer.write(b).unwrap());
    writer.finish().unwrap();

    // The stream format, as `datasets` saves (named `.arrow` too).
    let stream = dir.join("data-00000-of-00001.arrow");
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(std::fs::File::create(&stream).unwrap(), &data.schema()).unwrap();
    parts.iter().for_each(|b| writer.write(b).unwrap());
    writer.finish().unwrap();

    let want = formatted(&parquet, &dir);
    assert!(want.starts_with(
        r#"{"id":0,"messages":[{"role":"user","content":"question 0"},{"role":"assistant","content":"answer 0"}],"text":"<user>question 0<assistant>answer 0","error":null}"#
    ), "{want}");
    assert_eq!(want.lines().count(), 5);
    assert_eq!(formatted(&file, &dir), want);
    assert_eq!(formatted(&stream, &dir), want);
    std::fs::remove_dir_all(&dir).ok();
}

/// Sets the length of the last buffer of the stream's last record batch past its message's body,
/// which the Arrow reader panics on when it slices the body.
fn corrupt_last_batch(bytes: &mut [u8]) {
    let (mut at, mut field) = (0, None);
    while at + 8 <= bytes.len() {
        let len = i32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        if len == 0 {
            break;
        }
        let meta = &bytes[at + 8..at + 8 + len];
        let message = arrow_ipc::root_as_message(meta).unwrap();
        if let Some(buffers) = message.header_as_record_batch().and_then(|b| b.buffers()) {
            // A buffer is two little-endian i64s, offset then length.
            let vector_at = buffers.bytes().as_ptr() as usize - meta.as_ptr() as usize;
            field = Some(at + 8 + vector_at + (buffers.len() - 1) * 16 + 8);
        }
        at += 8 + len + message.bodyLength() as usize;
    }
    let field = field.expect("a record batch");
    bytes[field..field + 8].copy_from_slice(&(1i64 << 20).to_le_bytes());
}

/// A stream whose last batch is corrupt fails the run, naming the input: the Arrow library's panic
/// on it is a read error, not the end of the input, and the output already there stays as it was.
#[test]
fn a_corrupt_batch_fails_the_run_and_keeps_the_previous_output() {
    let dir = support::temp_dir("ipc-corrupt");
    let data = batch();
    let mut bytes = Vec::new();
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut bytes, &data.schema()).unwrap();
    (0..5).for_each(|i| writer.write(&data.slice(i, 1)).unwrap());
    writer.finish().unwrap();
    drop(writer);
    corrupt_last_batch(&mut bytes);
    let input = dir.join("in.arrow");
    std::fs::write(&input, &bytes).unwrap();
    let template = ChatTemplate::new("{% for m in messages %}{{ m.content }}{% endfor %}", Default::default());
    let config = Config {
        window: 1,
        ..support::config(&input, template, &dir)
    };
    std::fs::write(&config.output, "the previous output\n").unwrap();
    let err = run(&config).expect_err("a corrupt batch fails the run");
    assert_eq!(err.kind(), chatfmt_dataset::ErrorKind::Input, "{err}");
    assert!(err.to_string().contains("in.arrow: cannot be read"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&config.output).unwrap(),
        "the previous output\n"
    );
}

/// Compressed inputs read as uncompressed ones: Parquet with each codec pyarrow and polars write
/// (zstd is polars' default), and Arrow IPC with LZ4 and zstd buffers (feather's default).
#[test]
fn compressed_inputs_read_as_uncompressed_ones() {
    use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
    let dir = support::temp_dir("compressed");
    let data = batch();
    let plain = dir.join("plain.parquet");
    write_parquet(&plain, &data);
    let want = formatted(&plain, &dir);
    let codecs = [
        ("zstd", Compression::ZSTD(ZstdLevel::default())),
        ("lz4", Compression::LZ4_RAW),
        ("gzip", Compression::GZIP(GzipLevel::default())),
        ("brotli", Compression::BROTLI(BrotliLevel::default())),
    ];
    for (name, codec) in codecs {
        let path = dir.join(format!("{name}.parquet"));
        let props = parquet::file::properties::WriterProperties::builder()
            .set_compression(codec)
            .build();
        let mut writer =
            parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), data.schema(), Some(props))
                .unwrap();
        writer.write(&data).unwrap();
        writer.close().unwrap();
        assert_eq!(formatted(&path, &dir), want, "Parquet with {name}");
    }
    for (name, codec) in [
        ("lz4", arrow_ipc::CompressionType::LZ4_FRAME),
        ("zstd", arrow_ipc::CompressionType::ZSTD),
    ] {
        let path = dir.join(format!("{name}.arrow"));
        let options = arrow_ipc::writer::IpcWriteOptions::default()
            .try_with_compression(Some(codec))
            .unwrap();
        let mut writer = arrow_ipc::writer::FileWriter::try_new_with_options(
            std::fs::File::create(&path).unwrap(),
            &data.schema(),
            options,
        )
        .unwrap();
        writer.write(&data).unwrap();
        writer.finish().unwrap();
        assert_eq!(formatted(&path, &dir), want, "Arrow IPC with {name}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A kept column of timestamps in a named time zone (what pandas, polars and DuckDB write for
/// zone-aware times) is written to JSON Lines at its offset there.
#[test]
fn named_time_zones_write_to_json_lines() {
    let dir = support::temp_dir("named-zone");
    let data = batch();
    // 2024-01-02T03:04:05Z and six months later.
    let times =
        arrow_array::TimestampMicrosecondArray::from(vec![1_704_164_645_000_000i64; 5]).with_timezone("Europe/Paris");
    let summer =
        arrow_array::TimestampMicrosecondArray::from(vec![1_719_889_445_000_000i64; 5]).with_timezone("Europe/Paris");
    let data = RecordBatch::try_from_iter([
        ("messages", data.column(1).clone()),
        ("created", Arc::new(times) as ArrayRef),
        ("updated", Arc::new(summer) as ArrayRef),
    ])
    .unwrap();
    let input = dir.join("in.parquet");
    write_parquet(&input, &data);
    let out = formatted(&input, &dir);
    assert!(
        out.contains(r#""created":"2024-01-02T04:04:05+01:00","updated":"2024-07-02T05:04:05+02:00""#),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Kept columns of the Arrow types Parquet has no logical type for are written as pyarrow writes
/// them (seconds as milliseconds, `date64` as `date32`), inside structs too, so that every reader
/// reads dates and times rather than bare integers; the values stay.
#[test]
fn dates_and_times_stay_dates_and_times_in_parquet() {
    use arrow_array::{Date64Array, StructArray, Time32SecondArray, TimestampSecondArray};
    use arrow_schema::{DataType, TimeUnit};
    use parquet::basic::{LogicalType, TimeUnit as Unit};
    let dir = support::temp_dir("temporal");
    let data = batch();
    let seconds = TimestampSecondArray::from(vec![1_714_979_289i64; 5]).with_timezone("UTC");
    let day = Date64Array::from(vec![1_714_953_600_000i64; 5]);
    let nested = StructArray::from(vec![(
        Arc::new(arrow_schema::Field::new("at", DataType::Time32(TimeUnit::Second), true)),
        Arc::new(Time32SecondArray::from(vec![3_723; 5])) as ArrayRef,
    )]);
    let data = RecordBatch::try_from_iter([
        ("messages", data.column(1).clone()),
        ("created", Arc::new(seconds) as ArrayRef),
        ("day", Arc::new(day) as ArrayRef),
        ("meta", Arc::new(nested) as ArrayRef),
    ])
    .unwrap();
    let input = dir.join("in.parquet");
    write_parquet(&input, &data);
    let reader = to_parquet(&input, "{% for m in messages %}{{ m.content }}{% endfor %}", &dir);
    let logical: Vec<Option<LogicalType>> = (reader.parquet_schema().columns().iter())
        .filter(|c| ["created", "day", "meta.at"].contains(&c.path().string().as_str()))
        .map(|c| c.logical_type_ref().cloned())
        .collect();
    assert_eq!(
        logical,
        [
            Some(LogicalType::timestamp(true, Unit::MILLIS)),
            Some(LogicalType::Date),
            Some(LogicalType::time(false, Unit::MILLIS)),
        ]
    );
    let out = reader.build().unwrap().next().unwrap().unwrap();
    for (name, want) in [
        ("created", &data.columns()[1]),
        ("day", &data.columns()[2]),
        ("meta", &data.columns()[3]),
    ] {
        let got = out.column_by_name(name).unwrap();
        let back = arrow_cast::cast(got, want.data_type()).unwrap();
        assert_eq!(&back, want, "{name}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Two columns of one name (pyarrow writes them, datasets refuses them) stop the run before anything
/// is written: rows are objects keyed by column name, where one of them would be lost.
#[test]
fn same_named_columns_are_refused() {
    let dir = support::temp_dir("same-names");
    let data = batch();
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(5..10));
    let schema = arrow_schema::Schema::new(vec![
        data.schema().field(0).clone(),
        data.schema().field(1).clone(),
        arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
    ]);
    let data = RecordBatch::try_new(
        Arc::new(schema),
        vec![data.column(0).clone(), data.column(1).clone(), ids],
    )
    .unwrap();
    let input = dir.join("in.parquet");
    write_parquet(&input, &data);
    let template = ChatTemplate::new("{% for m in messages %}{{ m.content }}{% endfor %}", Default::default());
    let config = support::config(&input, template, &dir);
    let err = run(&config).expect_err("same-named columns are refused");
    assert!(err.to_string().contains("has more than one column named `id`"), "{err}");
    assert!(!config.output.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// A string column of the Parquet JSON type in a file with no Arrow schema (DuckDB's JSON columns,
/// pyarrow's with `store_schema=False`) is JSON to the template, as datasets decodes it, and stays
/// of the JSON type in the output.
#[test]
fn json_typed_parquet_columns_are_decoded_and_kept() {
    use arrow_array::{ListArray, StringArray, StructArray};
    use arrow_schema::{DataType, Field};
    let dir = support::temp_dir("json-type");
    let json = std::collections::HashMap::from([
        ("ARROW:extension:name".to_string(), "arrow.json".to_string()),
        ("ARROW:extension:metadata".to_string(), String::new()),
    ]);
    let fields = vec![
        Arc::new(Field::new("role", DataType::Utf8, true)),
        Arc::new(Field::new("meta", DataType::Utf8, true).with_metadata(json)),
    ];
    let message = StructArray::new(
        fields.clone().into(),
        vec![
            Arc::new(StringArray::from(vec!["user"])) as ArrayRef,
            Arc::new(StringArray::from(vec![r#"{"lang": "en"}"#])),
        ],
        None,
    );
    let item = Arc::new(Field::new("item", DataType::Struct(fields.into()), true));
    let messages = ListArray::new(
        item,
        arrow_buffer::OffsetBuffer::from_lengths([1]),
        Arc::new(message),
        None,
    );
    let data = RecordBatch::try_from_iter([("messages", Arc::new(messages) as ArrayRef)]).unwrap();
    let input = dir.join("in.parquet");
    let options = parquet::arrow::arrow_writer::ArrowWriterOptions::new().with_skip_arrow_metadata(true);
    let mut writer = parquet::arrow::ArrowWriter::try_new_with_options(
        std::fs::File::create(&input).unwrap(),
        data.schema(),
        options,
    )
    .unwrap();
    writer.write(&data).unwrap();
    writer.close().unwrap();
    let template = "{% for m in messages %}{{ m.meta.lang }} {{ m.meta is mapping }}{% endfor %}";
    let reader = to_parquet(&input, template, &dir);
    let meta = (reader.parquet_schema().columns().iter())
        .find(|c| c.path().string().ends_with(".meta"))
        .and_then(|c| c.logical_type_ref().cloned());
    assert_eq!(meta, Some(parquet::basic::LogicalType::Json));
    let out = reader.build().unwrap().next().unwrap().unwrap();
    let text = out.column_by_name("text").unwrap();
    assert_eq!(text.as_any().downcast_ref::<StringArray>().unwrap().value(0), "en True");
    std::fs::remove_dir_all(&dir).ok();
}
