//! Parquet in, Parquet out, tokenized: the output holds every row in input order, its input columns
//! unchanged, then a good row's tokenizer's own ids and assistant masks; every bad row (no
//! conversation, a role the template refuses, a `messages` column of the wrong type) has its error
//! there and is in the rejects file with its index and reason. An input column named like a new
//! column stops the run before anything is written.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;
mod support;

use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, Int8Array, ListArray, RecordBatch, StringArray};
use chatfmt::TemplateRequest;
use chatfmt_dataset::{run, Config, OutputFormat};
use chatfmt_tokenize::ChatTokenizer;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use serde_json::Value as Json;
use std::path::Path;
use std::sync::Arc;
use support::{messages_column, temp_dir};

/// ChatML with the assistant turns in `{% generation %}`, refusing roles it does not know.
const TEMPLATE: &str = "{%- for m in messages %}\
{%- if m['role'] not in ['system', 'user', 'assistant'] %}{{ raise_exception('unknown role: ' + m['role']) }}{% endif %}\
{%- if m['role'] == 'assistant' %}{{- '<|im_start|>assistant\\n' }}{% generation %}{{- m['content'] + '<|im_end|>' }}{% endgeneration %}{{- '\\n' }}\
{%- else %}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{%- endif %}\
{%- endfor %}";

/// Writes an `id` column (10, 11, ...) and `column` as `messages`.
fn write_parquet(path: &Path, column: ArrayRef) {
    write_columns(path, vec![("messages", column)]);
}

/// Writes an `id` column (10, 11, ...) and `columns`.
fn write_columns(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let rows = columns[0].1.len() as i64;
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(10..10 + rows));
    let batch = RecordBatch::try_from_iter([("id", ids)].into_iter().chain(columns)).expect("batch");
    let schema = batch.schema();
    let mut writer = ArrowWriter::try_new(std::fs::File::create(path).expect("create"), schema, None).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
}

fn config(input: &Path, model: &Path, dir: &Path) -> Config {
    let template = TemplateRequest {
        model: Some(model.display().to_string()),
        template: Some(dir.join("template.jinja")),
        ..Default::default()
    }
    .resolve()
    .expect("the template loads")
    .template;
    Config {
        tokenizer: true.then(|| model.to_path_buf()),
        output: dir.join("out.parquet"),
        output_format: OutputFormat::Parquet,
        window: 2,
        window_bytes: 8 << 20,
        ..support::config(input, template, dir)
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
    let dir = temp_dir("parquet-mixed");
    std::fs::write(dir.join("template.jinja"), TEMPLATE).expect("write template");
    let good_1: &[(&str, &str)] = &[("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello!")];
    let bad_role: &[(&str, &str)] = &[("user", "Hi"), ("bot", "beep")];
    let good_2: &[(&str, &str)] = &[
        ("user", "Caf\u{e9} \u{6771}\u{4eac}?"),
        ("assistant", "Oui, \u{fc}ber gut."),
    ];
    let input = dir.join("in.parquet");
    let messages = messages_column(&[Some(good_1), None, Some(bad_role), Some(good_2), Some(good_1)]);
    write_parquet(&input, messages.clone());

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

    let batches = read_parquet(&cfg.output);
    let names: Vec<String> = batches[0].schema().fields().iter().map(|f| f.name().clone()).collect();
    let new = ["input_ids", "attention_mask", "assistant_masks", "text", "error"];
    assert_eq!(names, [&["id", "messages"][..], &new[..]].concat());
    let tokenizer = ChatTokenizer::from_model_dir(&model).expect("tokenizer");
    let all = arrow_select::concat::concat_batches(&batches[0].schema(), &batches).expect("one batch");
    // The input's columns, unchanged, and every row in input order.
    assert_eq!(all.num_rows(), 5);
    let ids = all.column_by_name("id").expect("id");
    assert_eq!(
        ids.as_any().downcast_ref::<Int64Array>().unwrap().values(),
        &[10, 11, 12, 13, 14]
    );
    assert_eq!(
        all.column_by_name("messages").expect("messages").to_data(),
        messages.to_data()
    );
    let text = all.column_by_name("text").expect("text");
    let text = text.as_any().downcast_ref::<StringArray>().expect("string text");
    let error = all.column_by_name("error").expect("error");
    let error = error.as_any().downcast_ref::<StringArray>().expect("string error");
    let mut formatted = Vec::new();
    for row in 0..all.num_rows() {
        if error.is_valid(row) {
            for column in new.iter().filter(|&&c| c != "error") {
                assert!(
                    all.column_by_name(column).unwrap().is_null(row),
                    "{column} of row {row}"
                );
            }
            continue;
        }
        formatted.push(row);
        let text = text.value(row);
        let ids = list_values::<Int32Array>(all.column_by_name("input_ids").expect("ids"), row);
        let ids: Vec<u32> = ids.values().iter().map(|&id| id as u32).collect();
        assert_eq!(ids, tokenizer.encode_ids(text).expect("encodes"));
        let attention = list_values::<Int8Array>(all.column_by_name("attention_mask").expect("attention"), row);
        assert!(attention.len() == ids.len() && attention.values().iter().all(|&m| m == 1));
        let masks = list_values::<Int8Array>(all.column_by_name("assistant_masks").expect("masks"), row);
        // The masked tokens spell exactly the assistant's turn.
        let masked: Vec<u32> = ids
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
    assert_eq!(formatted, vec![0, 3, 4]);
    assert_eq!(
        error.value(1),
        "InvalidInput: messages is null; expected a list of messages"
    );
    assert!(error.value(2).contains("unknown role: bot"), "{}", error.value(2));

    // JSON Lines output: each row's input columns as JSON, then the new keys.
    let cfg = Config {
        output: dir.join("out.jsonl"),
        output_format: OutputFormat::Jsonl,
        ..config(&input, &model, &dir)
    };
    run(&cfg).expect("run");
    let lines: Vec<Json> = std::fs::read_to_string(&cfg.output)
        .expect("output")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 5);
    let keys: Vec<&str> = lines[0].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, names);
    assert_eq!(lines[3]["id"], 13);
    assert_eq!(lines[3]["messages"][1]["content"], "Oui, \u{fc}ber gut.");
    assert_eq!(lines[3]["text"], text.value(3));
    assert_eq!(lines[1]["error"], error.value(1));

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
    assert_eq!(
        read_parquet(&cfg.output)
            .iter()
            .map(RecordBatch::num_rows)
            .sum::<usize>(),
        3
    );
    let reasons = rejects(&cfg.rejects);
    assert_eq!(reasons.iter().map(|r| r.0).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(
        reasons.iter().all(|r| r
            .1
            .contains("must be a list of messages (or a JSON string of one), got a number")),
        "{reasons:?}"
    );

    // An input column named like a new column: nothing is written.
    let clash = dir.join("clash.parquet");
    write_columns(
        &clash,
        vec![
            ("messages", messages_column(&[Some(good_1)])),
            ("text", Arc::new(StringArray::from(vec!["x"]))),
        ],
    );
    let cfg = Config {
        output: dir.join("clash-out.parquet"),
        ..config(&clash, &model, &dir)
    };
    let err = run(&cfg).expect_err("the input has a `text` column");
    assert_eq!(err.kind(), chatfmt_dataset::ErrorKind::Input);
    assert!(
        err.to_string()
            .contains("already has the output columns [\"text\"]; rename or drop them first"),
        "{err}"
    );
    assert!(!cfg.output.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// Without assistant masks (`apply_chat_template` without `return_assistant_tokens_mask`), a row
/// whose assistant turn truncation removes is kept with its ids, where the masks would reject it;
/// and the final message can be left open (`continue_final_message`).
#[test]
fn ids_without_masks_keep_the_rows_masks_would_reject() {
    let Some(kit) = kits::kit_for_test("tokens") else {
        return;
    };
    let model = kit.join("tokenizers/qwen3");
    let dir = temp_dir("parquet-no-masks");
    std::fs::write(dir.join("template.jinja"), TEMPLATE).expect("write template");
    let chat: &[(&str, &str)] = &[("user", "A question that takes a few tokens"), ("assistant", "Yes.")];
    let input = dir.join("in.parquet");
    write_parquet(&input, messages_column(&[Some(chat), Some(chat)]));
    // The masks of the CLI's `--tokenize`: the template's generation blocks, checked.
    let masked = Config {
        max_length: Some(5),
        spans: Some(chatfmt::SpanOptions {
            source: chatfmt::MaskSource::Tags,
            stop_markers: Vec::new(),
            message_spans: false,
            deadline: None,
        }),
        ..config(&input, &model, &dir)
    };
    let s = run(&masked).expect("run");
    assert_eq!((s.rows_out, s.rows_rejected), (0, 2));
    let ids_only = Config {
        assistant_masks: false,
        spans: None,
        ..masked
    };
    let s = run(&ids_only).expect("run");
    assert_eq!((s.rows_out, s.rows_rejected), (2, 0));
    let batches = read_parquet(&ids_only.output);
    let names: Vec<String> = batches[0].schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(
        names,
        ["id", "messages", "input_ids", "attention_mask", "text", "error"]
    );
    let text = batches[0].column_by_name("text").expect("text");
    let text = text
        .as_any()
        .downcast_ref::<StringArray>()
        .expect("string text")
        .value(0);
    let ids = list_values::<Int32Array>(batches[0].column_by_name("input_ids").expect("ids"), 0);
    let ids: Vec<u32> = ids.values().iter().map(|&id| id as u32).collect();
    let tokenizer = ChatTokenizer::from_model_dir(&model).expect("tokenizer");
    assert_eq!(ids, tokenizer.encode_ids(text).expect("encodes")[..5]);

    // transformers' continue_final_message: the final message left open.
    let open = Config {
        max_length: None,
        continue_final_message: Some("content".into()),
        ..ids_only
    };
    let s = run(&open).expect("run");
    assert_eq!((s.rows_out, s.rows_rejected), (2, 0));
    let batches = read_parquet(&open.output);
    let text = batches[0].column_by_name("text").expect("text");
    let text = text
        .as_any()
        .downcast_ref::<StringArray>()
        .expect("string text")
        .value(1);
    assert!(text.ends_with("<|im_start|>assistant\nYes."), "{text:?}");
    std::fs::remove_dir_all(&dir).ok();
}

fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).expect("output");
    ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("Parquet output")
        .build()
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("batches")
}
