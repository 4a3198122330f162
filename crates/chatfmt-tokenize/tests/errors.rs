//! Every failure is a `chatfmt_tokenize::Error` that says its kind, the file it concerns, the Python
//! class transformers raises for it and its cause.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chatfmt::{ApplyOptions, ChatTemplate};
use chatfmt_tokenize::chat::{tokenize_chats, ChatTokenizeOptions};
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions, Error, ErrorKind, Padding, Stage};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

/// A BPE tokenizer over a few characters, with an unknown token.
const TOKENIZER: &str = r#"{"version":"1.0","added_tokens":[{"id":0,"content":"<unk>","single_word":false,"lstrip":false,
    "rstrip":false,"normalized":false,"special":true}],
    "normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,
    "model":{"type":"BPE","unk_token":"<unk>","vocab":{"<unk>":0,"h":1,"i":2,"!":3},"merges":[]}}"#;

/// A fresh folder holding `files`.
fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-tokenize-errors-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

fn load_error(name: &str, files: &[(&str, &str)]) -> (Error, PathBuf) {
    let dir = folder(name, files);
    let loaded = ChatTokenizer::from_model_dir(&dir);
    std::fs::remove_dir_all(&dir).ok();
    match loaded {
        Ok(_) => panic!("{name}: the tokenizer loaded"),
        Err(e) => (e, dir),
    }
}

/// One line, naming the file.
fn assert_line(e: &Error, file: &Path) {
    let line = e.to_string();
    assert!(!line.contains('\n'), "{line}");
    assert!(line.starts_with(&format!("{}: ", file.display())), "{line}");
}

#[test]
fn loading_failures_name_the_file_and_keep_their_cause() {
    let (e, dir) = load_error("missing", &[]);
    assert_eq!(e.kind(), ErrorKind::Io);
    assert_eq!(e.path(), Some(dir.join("tokenizer.json").as_path()));
    assert_line(&e, &dir.join("tokenizer.json"));
    assert!(e.to_string().contains("a tokenizer folder needs tokenizer.json"), "{e}");
    let io = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .expect("the I/O error is the source");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert!(e.with_causes().ends_with(&format!(": {io}")), "{}", e.with_causes());
    assert_eq!((e.python_class(), e.stage()), (None, None));
    // A slow tokenizer's files alone: named, with the way to convert them.
    let (e, dir) = load_error("slow", &[("tokenizer.model", "")]);
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_line(&e, &dir.join("tokenizer.json"));
    assert!(
        e.to_string().contains("only a slow tokenizer's tokenizer.model") && e.to_string().contains("save_pretrained"),
        "{e}"
    );

    let (e, dir) = load_error(
        "config",
        &[("tokenizer.json", TOKENIZER), ("tokenizer_config.json", "{\"a\": 1,}")],
    );
    assert_eq!(e.kind(), ErrorKind::Malformed);
    assert_eq!(e.path(), Some(dir.join("tokenizer_config.json").as_path()));
    assert_line(&e, &dir.join("tokenizer_config.json"));
    assert!(e.message().starts_with("malformed JSON at line 1, column 9"), "{e}");

    let (e, dir) = load_error(
        "side",
        &[
            ("tokenizer.json", TOKENIZER),
            ("tokenizer_config.json", r#"{"padding_side": "up"}"#),
        ],
    );
    assert_eq!(e.kind(), ErrorKind::Malformed);
    assert_eq!(e.path(), Some(dir.join("tokenizer_config.json").as_path()));
    assert_eq!(e.message(), r#"padding_side must be "left" or "right", not "up""#);

    let bad_added = TOKENIZER.replace(r#""id":0,"content":"<unk>""#, r#""id":"0","content":"<unk>""#);
    let (e, dir) = load_error("added", &[("tokenizer.json", &bad_added)]);
    assert_eq!(e.kind(), ErrorKind::Malformed);
    assert_line(&e, &dir.join("tokenizer.json"));
    assert_eq!(e.message(), "added_tokens[0] needs a string content and an integer id");

    let (e, dir) = load_error(
        "decoder",
        &[
            ("tokenizer.json", TOKENIZER),
            ("tokenizer_config.json", r#"{"added_tokens_decoder": {"5": "x"}}"#),
        ],
    );
    assert_eq!(e.kind(), ErrorKind::Malformed);
    assert_line(&e, &dir.join("tokenizer_config.json"));
    assert!(
        e.message()
            .starts_with(r#"added_tokens_decoder["5"] needs an integer key"#),
        "{e}"
    );

    // Files that are not tokenizers: a JSON string (a Keras tokenizer's `to_json`), a pickle.
    let keras = serde_json::to_string(&format!(
        "{{\"class_name\": \"Tokenizer\", \"config\": {}}}",
        "x".repeat(5000)
    ))
    .unwrap();
    let (e, _) = load_error("keras", &[("tokenizer.json", &keras)]);
    assert_eq!(e.kind(), ErrorKind::Malformed);
    assert_eq!(
        e.message(),
        "not a Hugging Face tokenizer.json: the file is not a JSON object"
    );
    std::fs::create_dir_all(folder("pickle", &[])).unwrap();
    let dir = folder("pickle", &[]);
    std::fs::write(dir.join("tokenizer.json"), b"\x80\x04\x95pickle").unwrap();
    let e = ChatTokenizer::from_model_dir(&dir).err().expect("refused");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        e.message(),
        "the file is not UTF-8 text, as a tokenizer's JSON files are"
    );
    // A mistake inside the model, in a pretty-printed file: its line and column in the file, as
    // Python's json reports them.
    let pretty = serde_json::to_string_pretty(&serde_json::from_str::<Json>(TOKENIZER).unwrap())
        .unwrap()
        .replace(r#""unk_token": "<unk>","#, r#""unk_token": "<unk>", "dropout": [1,"#);
    let (e, _) = load_error("pretty", &[("tokenizer.json", &pretty)]);
    let line = 1 + pretty[..pretty.find("\"dropout\"").unwrap()].matches('\n').count();
    assert!(
        e.message()
            .starts_with(&format!("malformed JSON at line {}, column ", line + 1)),
        "{e}"
    );

    let unknown = TOKENIZER.replace(r#""normalizer":null"#, r#""normalizer":{"type":"NoSuchNormalizer"}"#);
    let (e, dir) = load_error("unsupported", &[("tokenizer.json", &unknown)]);
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_line(&e, &dir.join("tokenizer.json"));
    assert!(
        std::error::Error::source(&e).is_some(),
        "{e}: the pipeline's error is the source"
    );
    assert!(e.with_causes().len() > e.to_string().len());
}

/// Tokenizes one conversation with `template`.
fn chat(template: &str, messages: Json, apply: &ApplyOptions, encode: EncodeOptions) -> Result<(), Error> {
    let dir = folder("chat", &[("tokenizer.json", TOKENIZER)]);
    let tokenizer = ChatTokenizer::from_model_dir(&dir).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let template = ChatTemplate::new(template, tokenizer.special_tokens().clone());
    let messages = messages.as_array().unwrap().clone();
    let opts = ChatTokenizeOptions {
        encode,
        sanitize_control_tokens: None,
        spans: None,
    };
    tokenize_chats(&template, &tokenizer, &[&messages], apply, &opts).map(|_| ())
}

const CONTENT: &str = "{% for m in messages %}{{ m.content }}{% endfor %}";

#[test]
fn chat_failures_have_a_stage_and_the_python_class() {
    let hi = json!([{"role": "user", "content": "hi"}]);

    let e = chat(
        "hi\n{{ nothing.here }}",
        hi.clone(),
        &ApplyOptions::default(),
        EncodeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Render);
    assert_eq!(
        (e.stage(), e.python_class()),
        (Some(Stage::Render), Some("UndefinedError"))
    );
    let engine = e.template_error().expect("the engine's error");
    assert_eq!(engine.line(), Some(2));
    assert!(engine.column().is_some());
    assert_eq!(e.message(), engine.located_message());
    assert_eq!(e.to_string(), "rendering failed");
    assert_eq!(e.with_causes(), format!("rendering failed: {engine}"));
    assert!(e.path().is_none());

    let both = ApplyOptions {
        add_generation_prompt: true,
        continue_final_message: Some("content".into()),
        ..ApplyOptions::default()
    };
    let e = chat(CONTENT, hi.clone(), &both, EncodeOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Options);
    assert_eq!((e.stage(), e.python_class()), (Some(Stage::Render), Some("ValueError")));
    assert!(
        e.to_string()
            .starts_with("rendering failed: ValueError: continue_final_message and add_generation_prompt"),
        "{e}"
    );

    let pad = EncodeOptions {
        padding: Padding::Longest,
        ..EncodeOptions::default()
    };
    let e = chat(CONTENT, hi.clone(), &ApplyOptions::default(), pad).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Padding);
    assert_eq!(
        (e.stage(), e.python_class()),
        (Some(Stage::Tokenize), Some("ValueError"))
    );
    assert!(
        e.to_string()
            .starts_with("tokenizing failed: ValueError: Asking to pad"),
        "{e}"
    );

    // "?" is not in the vocabulary: its `<unk>` token spells other bytes than the text's, so its
    // offsets come from the tokenizers 0.23 release, as transformers' do.
    let masks = EncodeOptions {
        assistant_masks: true,
        ..EncodeOptions::default()
    };
    chat(
        CONTENT,
        json!([{"role": "user", "content": "hi?"}]),
        &ApplyOptions::default(),
        masks.clone(),
    )
    .unwrap();

    // An empty generation block at the start of the text: transformers looks up the character
    // before its end, at -1.
    let e = chat(
        "{% generation %}{% endgeneration %}{{ messages[0].content }}",
        hi.clone(),
        &ApplyOptions::default(),
        masks.clone(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Mask);
    assert_eq!(
        (e.stage(), e.python_class()),
        (Some(Stage::Tokenize), Some("OverflowError"))
    );
    assert_eq!(
        e.to_string(),
        "tokenizing failed: OverflowError: can't convert negative int to unsigned"
    );
    // Anywhere else an empty block marks nothing.
    chat(
        "{{ messages[0].content }}{% generation %}{% endgeneration %}",
        hi,
        &ApplyOptions::default(),
        masks,
    )
    .unwrap();
}
