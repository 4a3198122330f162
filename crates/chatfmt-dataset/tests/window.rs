//! Chunks end at `window` rows or `window_bytes` bytes of input, whichever comes first: long
//! conversations make smaller chunks (so memory does not grow with their length), a row larger than
//! the budget is a chunk of its own, and the output is the same whatever the chunking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use arrow_array::{Array, RecordBatch, StringArray};
use chatfmt::ChatTemplate;
use chatfmt_dataset::{run, Config, OutputFormat};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use serde_json::json;
use std::path::Path;
use support::{messages_column, temp_dir};

const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";

/// 40 conversations; every seventh holds ~120 KB of text (more than the budget of the runs that
/// split), the others a few dozen bytes.
fn conversations() -> Vec<Vec<(&'static str, String)>> {
    (0..40)
        .map(|i| {
            let size = if i % 7 == 3 { 24_000 } else { 2 };
            vec![
                ("user", format!("question {i}: {}", "word ".repeat(size))),
                ("assistant", format!("answer {i}")),
            ]
        })
        .collect()
}

/// The conversations as one record batch with a `messages` column.
fn conversations_batch() -> RecordBatch {
    let rows = conversations();
    let refs: Vec<Vec<(&str, &str)>> = rows
        .iter()
        .map(|c| c.iter().map(|(r, t)| (*r, t.as_str())).collect())
        .collect();
    let column = messages_column(&refs.iter().map(|c| Some(c.as_slice())).collect::<Vec<_>>());
    RecordBatch::try_from_iter([("messages", column)]).expect("batch")
}

/// A Parquet output run of `input` in chunks of at most 10 rows and `window_bytes` bytes.
fn config(input: &Path, dir: &Path, name: &str, window_bytes: usize) -> Config {
    Config {
        output: dir.join(format!("{name}.parquet")),
        rejects: dir.join(format!("{name}.rejects.jsonl")),
        output_format: OutputFormat::Parquet,
        window: 10,
        window_bytes,
        ..support::config(input, ChatTemplate::new(CHATML, Default::default()), dir)
    }
}

/// The output's row-group sizes and its `text` column.
fn read_output(path: &Path) -> (Vec<i64>, Vec<String>) {
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).expect("output")).expect("Parquet");
    let groups = builder.metadata().row_groups().iter().map(|g| g.num_rows()).collect();
    let batches: Vec<RecordBatch> = builder
        .build()
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("batches");
    let mut texts = Vec::new();
    for batch in &batches {
        let column = batch.column_by_name("text").expect("text column");
        let text = column.as_any().downcast_ref::<StringArray>().expect("strings");
        texts.extend((0..text.len()).map(|i| text.value(i).to_string()));
    }
    (groups, texts)
}

/// Runs `input` with a budget too large to matter and with a 100 KB one: every row group of the
/// first is 10 rows, the second's are smaller, and both write the same rows in the same order.
/// With `exact` sizes (JSON Lines: a row counts its line's length; columnar input counts the
/// average row of a batch), a large row ends its chunk.
fn check_chunking(input: &Path, dir: &Path, exact: bool) {
    let whole = run(&config(input, dir, "whole", 1 << 30)).expect("whole run");
    let split = run(&config(input, dir, "split", 100_000)).expect("split run");
    assert_eq!((whole.rows_out, split.rows_out), (40, 40));
    let (whole_groups, whole_text) = read_output(&dir.join("whole.parquet"));
    let (split_groups, split_text) = read_output(&dir.join("split.parquet"));
    assert_eq!(whole_groups, vec![10; 4]);
    assert!(split_groups.len() > 4, "row groups {split_groups:?}");
    assert_eq!(split_groups.iter().sum::<i64>(), 40);
    assert_eq!(whole_text.len(), 40);
    assert_eq!(whole_text, split_text);
    if exact {
        // Row 3 (large) ends its chunk.
        assert_eq!(split_groups[0], 4, "row groups {split_groups:?}");
    }
}

#[test]
fn jsonl_chunks_end_at_the_byte_budget() {
    let dir = temp_dir("window-jsonl");
    let input = dir.join("in.jsonl");
    let lines: Vec<String> = conversations()
        .iter()
        .map(|c| {
            let messages: Vec<_> = c.iter().map(|(r, t)| json!({"role": r, "content": t})).collect();
            json!({ "messages": messages }).to_string()
        })
        .collect();
    std::fs::write(&input, lines.join("\n") + "\n").expect("input");
    check_chunking(&input, &dir, true);

    // A row larger than the budget is a chunk of its own.
    let one = run(&config(&input, &dir, "tiny", 1)).expect("run with a one-byte budget");
    assert_eq!(one.rows_out, 40);
    let (groups, _) = read_output(&dir.join("tiny.parquet"));
    assert_eq!(groups, vec![1; 40]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn parquet_chunks_end_at_the_byte_budget() {
    let dir = temp_dir("window-parquet");
    let input = dir.join("in.parquet");
    let batch = conversations_batch();
    // One row group (the writer's default holds far more rows).
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(&input).expect("create"), batch.schema(), None).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    check_chunking(&input, &dir, false);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_budget_also_bounds_arrow_batches() {
    let dir = temp_dir("window-arrow");
    let input = dir.join("in.arrow");
    let batch = conversations_batch();
    let file = std::fs::File::create(&input).expect("create");
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(file, &batch.schema()).expect("writer");
    writer.write(&batch).expect("write");
    writer.finish().expect("finish");
    check_chunking(&input, &dir, false);
    std::fs::remove_dir_all(&dir).ok();
}
