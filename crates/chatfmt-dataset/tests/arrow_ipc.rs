//! Arrow IPC in (a file, and the stream `datasets`' `save_to_disk` writes), recognised from its first
//! bytes and read as Parquet is: the same rows, in batches of any size, give the same output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use arrow_array::builder::{ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Fields as ArrowFields};
use chatfmt::ChatTemplate;
use chatfmt_dataset::{run, Config, Fields, OutputFormat};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-dataset-ipc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Five rows of an `id` and a `messages` column (list of role/content structs).
fn batch() -> RecordBatch {
    let fields = ArrowFields::from(vec![
        Field::new("role", DataType::Utf8, true),
        Field::new("content", DataType::Utf8, true),
    ]);
    let mut list = ListBuilder::new(StructBuilder::from_fields(fields, 0));
    for i in 0..5 {
        for (role, content) in [("user", format!("question {i}")), ("assistant", format!("answer {i}"))] {
            let s = list.values();
            s.field_builder::<StringBuilder>(0).expect("role").append_value(role);
            s.field_builder::<StringBuilder>(1)
                .expect("content")
                .append_value(&content);
            s.append(true);
        }
        list.append(true);
    }
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..5));
    let messages: ArrayRef = Arc::new(list.finish());
    RecordBatch::try_from_iter([("id", ids), ("messages", messages)]).expect("batch")
}

/// Formats `input` into JSON Lines and gives the output.
fn formatted(input: &Path, dir: &Path) -> String {
    let output = dir.join("out.jsonl");
    let config = Config {
        input: input.to_path_buf(),
        input_format: None,
        template: Arc::new(ChatTemplate::new(
            "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}",
            Default::default(),
        )),
        tokenizer: None,
        text: true,
        variables: Default::default(),
        template_name: None,
        output: output.clone(),
        output_format: OutputFormat::Jsonl,
        rejects: dir.join("rejects.jsonl"),
        fields: Fields::default(),
        max_length: None,
        spans: None,
        assistant_masks: true,
        add_generation_prompt: false,
        continue_final_message: None,
        jobs: 2,
        strict: true,
        window: 3,
        progress: None,
        cancel: None,
    };
    let summary = run(&config).expect("the run succeeds");
    assert_eq!((summary.rows_in, summary.rows_rejected), (5, 0));
    std::fs::read_to_string(&output).expect("output")
}

#[test]
fn arrow_ipc_files_and_streams_read_as_parquet_does() {
    let dir = temp_dir();
    let data = batch();
    // Two batches (2 and 3 rows), against chunks of 3 rows.
    let parts = [data.slice(0, 2), data.slice(2, 3)];

    let parquet = dir.join("in.parquet");
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&parquet).unwrap(), data.schema(), None).unwrap();
    writer.write(&data).unwrap();
    writer.close().unwrap();

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
