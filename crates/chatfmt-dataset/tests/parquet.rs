//! Parquet in, Parquet out, tokenized: the output holds every good row in input order with the
//! tokenizer's own ids and assistant masks, and every bad row (no conversation, a role the template
//! refuses, a `messages` column of the wrong type) is in the rejects file with its index and reason.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;

use arrow_array::builder::{ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{
    Array, ArrayRef, Int64Array, ListArray, RecordBatch, StringArray, UInt32Array, UInt64Array, UInt8Array,
};
use arrow_schema::{DataType, Field, Fields as ArrowFields, Schema};
use chatfmt::TemplateRequest;
use chatfmt_dataset::{run, Config, Fields, OutputFormat};
use chatfmt_tokenize::ChatTokenizer;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// ChatML with the assistant turns in `{% generation %}`, refusing roles it does not know.
const TEMPLATE: &str = "{%- for m in messages %}\
{%- if m['role'] not in ['system', 'user', 'assistant'] %}{{ raise_exception('unknown role: ' + m['role']) }}{% endif %}\
{%- if m['role'] == 'assistant' %}{{- '<|im_start|>assistant\\n' }}{% generation %}{{- m['content'] + '<|im_end|>' }}{% endgeneration %}{{- '\\n' }}\
{%- else %}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{%- endif %}\
{%- endfor %}";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-dataset-parquet-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write_parquet(path: &Path, column: ArrayRef) {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "messages",
        column.data_type().clone(),
        true,
    )]));
    let batch = RecordBatch::try_new(schema.clone(), vec![column]).expect("batch");
    let mut writer = ArrowWriter::try_new(std::fs::File::create(path).expect("create"), schema, None).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
}

/// A `messages` column: a list of role/content structs per row (`None`: a null row).
fn messages_column(rows: &[Option<&[(&str, &str)]>]) -> ArrayRef {
    let fields = ArrowFields::from(vec![
        Field::new("role", DataType::Utf8, true),
        Field::new("content", DataType::Utf8, true),
    ]);
    let mut list = ListBuilder::new(StructBuilder::from_fields(fields, 0));
    for row in rows {
        match row {
            None => list.append(false),
            Some(messages) => {
                for (role, content) in *messages {
                    let s = list.values();
                    s.field_builder::<StringBuilder>(0).expect("role").append_value(role);
                    s.field_builder::<StringBuilder>(1)
                        .expect("content")
                        .append_value(content);
                    s.append(true);
                }
                list.append(true);
            }
        }
    }
    Arc::new(list.finish())
}

fn config(input: &Path, model: &Path, dir: &Path) -> Config {
    Config {
        input: input.to_path_buf(),
        input_format: None,
        template: Arc::new(
            TemplateRequest {
                model: Some(model.display().to_string()),
                template: Some(dir.join("template.jinja")),
                ..Default::default()
            }
            .resolve()
            .expect("the template loads")
            .template,
        ),
        tokenizer: true.then(|| model.to_path_buf()),
        variables: Default::default(),
        template_name: None,
        output: dir.join("out.parquet"),
        output_format: OutputFormat::Parquet,
        rejects: dir.join("rejects.jsonl"),
        fields: Fields::default(),
        max_length: None,
        spans: None,
        add_generation_prompt: false,
        jobs: 2,
        strict: false,
        window: 2,
        progress: None,
        cancel: None,
    }
}

fn rejects(path: &Path) -> Vec<(u64, String)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let r: Json = serde_json::from_str(l).expect("JSON line");
            (
                r["index"].as_u64().unwrap_or(u64::MAX),
                r["error"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn list_values<T: Array + Clone + 'static>(column: &ArrayRef, row: usize) -> T {
    let list = column.as_any().downcast_ref::<ListArray>().expect("a list column");
    list.value(row)
        .as_any()
        .downcast_ref::<T>()
        .expect("list item type")
        .clone()
}

#[test]
fn parquet_rows_are_tokenized_in_order_and_bad_rows_rejected() {
    let Some(kit) = kits::kit_for_test("tokens") else {
        return;
    };
    let model = kit.join("tokenizers/qwen3");
    let dir = temp_dir("mixed");
    std::fs::write(dir.join("template.jinja"), TEMPLATE).expect("write template");
    let good_1: &[(&str, &str)] = &[("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello!")];
    let bad_role: &[(&str, &str)] = &[("user", "Hi"), ("bot", "beep")];
    let good_2: &[(&str, &str)] = &[
        ("user", "Caf\u{e9} \u{6771}\u{4eac}?"),
        ("assistant", "Oui, \u{fc}ber gut."),
    ];
    let input = dir.join("in.parquet");
    write_parquet(
        &input,
        messages_column(&[Some(good_1), None, Some(bad_role), Some(good_2), Some(good_1)]),
    );

    let cfg = config(&input, &model, &dir);
    let s = run(&cfg).expect("run");
    assert_eq!((s.rows_in, s.rows_out, s.rows_rejected), (5, 3, 2));
    let reasons = rejects(&cfg.rejects);
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].0 == 1 && reasons[0].1 == "messages is null; expected a list of messages",
        "{reasons:?}"
    );
    assert!(
        reasons[1].0 == 2 && reasons[1].1.contains("unknown role: bot"),
        "{reasons:?}"
    );

    let file = std::fs::File::open(&cfg.output).expect("output");
    let batches: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("Parquet output")
        .build()
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("batches");
    let tokenizer = ChatTokenizer::from_model_dir(&model).expect("tokenizer");
    let mut indexes = Vec::new();
    for b in &batches {
        let index = b.column_by_name("index").expect("index");
        let index = index.as_any().downcast_ref::<UInt64Array>().expect("u64 index");
        let text = b.column_by_name("text").expect("text");
        let text = text.as_any().downcast_ref::<StringArray>().expect("string text");
        for row in 0..b.num_rows() {
            indexes.push(index.value(row));
            let text = text.value(row);
            let ids = list_values::<UInt32Array>(b.column_by_name("input_ids").expect("ids"), row);
            assert_eq!(ids.values().to_vec(), tokenizer.encode_ids(text).expect("encodes"));
            let attention = list_values::<UInt8Array>(b.column_by_name("attention_mask").expect("attention"), row);
            assert!(attention.len() == ids.len() && attention.values().iter().all(|&m| m == 1));
            let masks = list_values::<UInt8Array>(b.column_by_name("assistant_masks").expect("masks"), row);
            // The masked tokens spell exactly the assistant's turn.
            let masked: Vec<u32> = ids
                .values()
                .iter()
                .zip(masks.values())
                .filter(|(_, &m)| m == 1)
                .map(|(&id, _)| id)
                .collect();
            let reply = if text.contains("Hello!") {
                "Hello!<|im_end|>"
            } else {
                "Oui, \u{fc}ber gut.<|im_end|>"
            };
            assert_eq!(tokenizer.decode(&masked).expect("decodes"), reply, "{text:?}");
        }
    }
    assert_eq!(indexes, vec![0, 3, 4]);

    // A `messages` column of the wrong type: every row is a reject, none is lost.
    let wrong = dir.join("wrong.parquet");
    write_parquet(&wrong, Arc::new(Int64Array::from(vec![1, 2, 3])));
    let cfg = Config {
        output: dir.join("wrong-out.parquet"),
        rejects: dir.join("wrong-rejects.jsonl"),
        ..config(&wrong, &model, &dir)
    };
    let s = run(&cfg).expect("run");
    assert_eq!((s.rows_in, s.rows_out, s.rows_rejected), (3, 0, 3));
    let reasons = rejects(&cfg.rejects);
    assert_eq!(reasons.iter().map(|r| r.0).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(
        reasons
            .iter()
            .all(|r| r.1.contains("must be a list of messages, got a number")),
        "{reasons:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
