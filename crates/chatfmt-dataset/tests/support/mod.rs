//! What the dataset tests share: a scratch folder, a run's configuration with the library's usual
//! settings, and a `messages` column of role/content structs.
#![allow(dead_code)] // each test file uses a different subset

use arrow_array::builder::{ListBuilder, StringBuilder, StructBuilder};
use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, Fields as ArrowFields};
use chatfmt::ChatTemplate;
use chatfmt_dataset::{Config, Fields, OutputFormat};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An empty scratch folder of this test process, named `name`.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-dataset-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A run of `template` over `input` into `dir/out.jsonl` (rejects in `dir/rejects.jsonl`): no
/// tokenizer, `text` written, default fields, two jobs, chunks of three rows, rejects kept. Tests
/// change what they exercise with struct update syntax.
pub fn config(input: &Path, template: ChatTemplate, dir: &Path) -> Config {
    Config {
        input: input.to_path_buf(),
        input_format: None,
        template: Arc::new(template),
        tokenizer: None,
        text: true,
        variables: Default::default(),
        template_name: None,
        output: dir.join("out.jsonl"),
        output_format: OutputFormat::Jsonl,
        rejects: dir.join("rejects.jsonl"),
        fields: Fields::default(),
        max_length: None,
        spans: None,
        assistant_masks: true,
        add_generation_prompt: false,
        continue_final_message: None,
        jobs: 2,
        strict: false,
        window: 3,
        window_bytes: 8 << 20,
        progress: None,
        cancel: None,
    }
}

/// A `messages` column: a list of role/content structs per row (`None`: a null row).
pub fn messages_column<S: AsRef<str>>(rows: &[Option<&[(&str, S)]>]) -> ArrayRef {
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
                        .append_value(content.as_ref());
                    s.append(true);
                }
                list.append(true);
            }
        }
    }
    Arc::new(list.finish())
}
