//! Assistant spans, assistant masks and message spans of whole datasets, in JSON Lines and Parquet,
//! for templates with and without `{% generation %}` blocks; a row whose assistant messages get no
//! span is rejected (`EmptyAssistantMask`), never written with an all-zero mask, and so is a row
//! whose every assistant token `max_length` removes (`AssistantTruncated`): it is in the output with
//! that `error` and nulls. Parquet and JSON Lines outputs hold the same values.
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

use arrow_array::RecordBatch;
use chatfmt::{ChatTemplate, MaskSource, SpanOptions};
use chatfmt_dataset::{run, Config, OutputFormat};
use chatfmt_tokenize::ChatTokenizer;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{json, Map, Value as Json};
use std::path::{Path, PathBuf};

/// ChatML that prints only messages with content: an empty assistant message renders nothing.
const PLAIN: &str = "{%- for m in messages %}{%- if m.content %}\
{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}{%- endfor %}\
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/// The same with the assistant's reply and end marker in `{% generation %}`.
const TAGGED: &str = "{%- for m in messages %}{%- if m.content %}\
{%- if m.role == 'assistant' %}{{- '<|im_start|>assistant\\n' }}{% generation %}{{- m.content + '<|im_end|>' }}{% endgeneration %}{{- '\\n' }}\
{%- else %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endif %}{%- endif %}{%- endfor %}\
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/// A two-turn row, a row whose assistant message renders nothing, a row without assistant messages.
const INPUT: &str = r#"{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"}, {"role": "assistant", "content": "Ciao."}]}
{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": ""}]}
{"messages": [{"role": "user", "content": "Only a question"}]}
"#;

fn temp_dir(name: &str) -> PathBuf {
    support::temp_dir(&format!("masks-{name}"))
}

fn spans(source: MaskSource) -> SpanOptions {
    SpanOptions {
        source,
        stop_markers: vec!["<|im_end|>".to_string()],
        message_spans: true,
        deadline: None,
    }
}

fn config(dir: &Path, template: &str, format: OutputFormat, spans: SpanOptions) -> Config {
    let input = dir.join("in.jsonl");
    std::fs::write(&input, INPUT).expect("input");
    let name = match format {
        OutputFormat::Jsonl => "out.jsonl",
        OutputFormat::Parquet => "out.parquet",
    };
    Config {
        text: false,
        output: dir.join(name),
        output_format: format,
        spans: Some(spans),
        window: 2,
        window_bytes: 8 << 20,
        ..support::config(&input, ChatTemplate::new(template, Map::new()), dir)
    }
}

/// The rejects file as (index, kind) pairs.
fn rejects(path: &Path) -> Vec<(u64, String)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let r: Json = serde_json::from_str(l).expect("JSON line");
            assert_eq!(r.as_object().map(|o| o.len()), Some(3), "{r}");
            (r["index"].as_u64().unwrap(), r["kind"].as_str().unwrap().to_string())
        })
        .collect()
}

/// The output rows as JSON Lines would hold them, whatever the format: Parquet's rows are read back
/// as JSON with explicit nulls.
fn output_rows(cfg: &Config) -> Vec<Json> {
    let text = match cfg.output_format {
        OutputFormat::Jsonl => std::fs::read_to_string(&cfg.output).expect("output"),
        OutputFormat::Parquet => {
            let file = std::fs::File::open(&cfg.output).expect("output");
            let batches: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)
                .expect("Parquet output")
                .build()
                .expect("reader")
                .collect::<Result<_, _>>()
                .expect("batches");
            let mut buf = Vec::new();
            let mut writer = arrow_json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow_json::writer::LineDelimited>(&mut buf);
            for b in &batches {
                writer.write(b).expect("JSON");
            }
            writer.finish().expect("JSON");
            String::from_utf8(buf).expect("UTF-8")
        }
    };
    text.lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// The text of each `[start, end]` code-point pair of `spans` in `text`.
fn slices(text: &str, spans: &Json) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    spans
        .as_array()
        .expect("pairs")
        .iter()
        .map(|p| {
            let (s, e) = (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize);
            chars[s..e].iter().collect()
        })
        .collect()
}

#[test]
fn spans_are_written_for_templates_with_and_without_generation_blocks() {
    for (name, template) in [("plain", PLAIN), ("tagged", TAGGED)] {
        for format in [OutputFormat::Jsonl, OutputFormat::Parquet] {
            let case = format!("{name} {format:?}");
            let dir = temp_dir(&format!("{name}-{format:?}"));
            let cfg = config(&dir, template, format, spans(MaskSource::Auto));
            let s = run(&cfg).expect("run");
            assert_eq!((s.rows_in, s.rows_out, s.rows_rejected), (3, 2, 1), "{case}");
            assert_eq!(rejects(&cfg.rejects), [(1, "EmptyAssistantMask".to_string())], "{case}");
            let rows = output_rows(&cfg);
            assert_eq!(rows.len(), 3, "{case}: every row is in the output");
            let keys: Vec<&str> = rows[0].as_object().unwrap().keys().map(String::as_str).collect();
            let new = ["text", "message_spans", "assistant_spans", "error"];
            match format {
                OutputFormat::Jsonl => assert_eq!(keys[0], "messages", "{case}"),
                OutputFormat::Parquet => assert_eq!(keys, new, "{case}: JSON Lines input has no columns to keep"),
            }
            assert_eq!(keys[keys.len() - 4..], new, "{case}");
            let text = rows[0]["text"].as_str().unwrap();
            assert_eq!(
                slices(text, &rows[0]["assistant_spans"]),
                ["Hello!<|im_end|>", "Ciao.<|im_end|>"],
                "{case}"
            );
            let m = &rows[0]["message_spans"];
            assert_eq!(m.as_array().map(Vec::len), Some(4), "{case}");
            assert_eq!(m[1]["role"], "assistant", "{case}");
            assert_eq!(
                slices(text, &json!([m[1]["turn"]])),
                ["<|im_start|>assistant\nHello!<|im_end|>\n"],
                "{case}"
            );
            assert_eq!(slices(text, &m[2]["content"]), ["Bye"], "{case}");
            // The rejected row has its error and nulls.
            assert!(
                rows[1]["error"].as_str().unwrap().starts_with("EmptyAssistantMask: "),
                "{case}"
            );
            assert!(
                rows[1]["text"].is_null() && rows[1]["assistant_spans"].is_null(),
                "{case}"
            );
            // A row without assistant messages has no span and is no reject.
            assert_eq!(
                (&rows[2]["error"], &rows[2]["assistant_spans"]),
                (&Json::Null, &json!([]))
            );
            std::fs::remove_dir_all(&dir).ok();
        }
    }
}

#[test]
fn tokenized_rows_reject_empty_and_truncated_assistant_masks() {
    let Some(kit) = kits::kit_for_test("tokens") else {
        return;
    };
    let model = kit.join("tokenizers/qwen3");
    let tokenizer = ChatTokenizer::from_model_dir(&model).expect("tokenizer");
    for format in [OutputFormat::Jsonl, OutputFormat::Parquet] {
        let dir = temp_dir(&format!("tokens-{format:?}"));
        let mut cfg = config(&dir, PLAIN, format, spans(MaskSource::Provenance));
        cfg.tokenizer = Some(model.clone());
        cfg.text = true;
        // Long enough for the short rows' prompts, too short for the first row's first reply.
        let long = "a long question with many words in it to use up the tokens ".repeat(4);
        std::fs::write(
            &cfg.input,
            format!(
                "{INPUT}{}\n",
                json!({"messages": [{"role": "user", "content": long}, {"role": "assistant", "content": "Sure."}]})
            ),
        )
        .expect("input");
        cfg.max_length = Some(20);
        let s = run(&cfg).expect("run");
        assert_eq!((s.rows_in, s.rows_out, s.rows_rejected), (4, 2, 2), "{format:?}");
        assert_eq!(
            rejects(&cfg.rejects),
            [
                (1, "EmptyAssistantMask".to_string()),
                (3, "AssistantTruncated".to_string())
            ],
            "{format:?}"
        );
        let rows = output_rows(&cfg);
        let ids: Vec<u32> = serde_json::from_value(rows[0]["input_ids"].clone()).unwrap();
        let masks: Vec<u8> = serde_json::from_value(rows[0]["assistant_masks"].clone()).unwrap();
        let masked: Vec<u32> = ids
            .iter()
            .zip(&masks)
            .filter(|(_, &m)| m == 1)
            .map(|(&id, _)| id)
            .collect();
        assert_eq!(ids.len(), 20);
        assert!(
            tokenizer.decode(&masked).unwrap().starts_with("Hello!<|im_end|>"),
            "{format:?}: {masks:?}"
        );
        let m = &rows[0]["message_spans"];
        assert_eq!(slices(rows[0]["text"].as_str().unwrap(), &m[1]["content"]), ["Hello!"]);
        // Token ranges too: the reply's tokens decode to it.
        let range = &m[1]["content_tokens"][0];
        let (s, e) = (range[0].as_u64().unwrap() as usize, range[1].as_u64().unwrap() as usize);
        assert_eq!(tokenizer.decode(&ids[s..e]).unwrap(), "Hello!", "{format:?}");
        for (i, kind) in [(1, "EmptyAssistantMask"), (3, "AssistantTruncated")] {
            assert!(rows[i]["input_ids"].is_null(), "{format:?}");
            assert!(rows[i]["error"].as_str().unwrap().starts_with(kind), "{format:?}");
        }
        assert!(
            rows[2]["assistant_masks"].as_array().unwrap().iter().all(|m| m == 0),
            "{format:?}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// An empty generation block inside a token: transformers' rule looks up the character before its
/// end, in the same token, and marks from there (to the end when that is token 0), so the row's mask
/// is not all zeros and the row is kept, as it is there.
#[test]
fn an_empty_generation_block_inside_a_token_marks_it() {
    let Some(kit) = kits::kit_for_test("tokens") else {
        return;
    };
    let dir = temp_dir("empty-in-token");
    let template = "{% for m in messages %}{% if m.role == 'assistant' %}{{ m.content[:3] }}{% generation %}\
        {% endgeneration %}{{ m.content[3:] }}{% else %}{{ m.content }} {% endif %}{% endfor %}";
    let mut cfg = config(&dir, template, OutputFormat::Jsonl, spans(MaskSource::Tags));
    cfg.tokenizer = Some(kit.join("tokenizers/qwen3"));
    std::fs::write(
        &cfg.input,
        json!({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "hello"}]}).to_string()
            + "\n",
    )
    .expect("input");
    let s = run(&cfg).expect("run");
    assert_eq!((s.rows_out, s.rows_rejected), (1, 0));
    let rows = output_rows(&cfg);
    // transformers 5.23.0 gives [13048, 23811] ("Hi ", "hello") and the mask [0, 1].
    assert_eq!(rows[0]["input_ids"], json!([13048, 23811]));
    assert_eq!(rows[0]["assistant_masks"], json!([0, 1]));
    std::fs::remove_dir_all(&dir).ok();
}
