//! `chatfmt templates set` run as a binary against folders transformers' `save_pretrained` wrote
//! (`tests/data/saved_templates/`, from `scripts/gen_saved_template_fixtures.py`).
//!
//! What "byte-equal to save_pretrained" means here: every file is compared byte for byte, including
//! tokenizer_config.json, which transformers rewrites whole (`json.dumps(indent=2, sort_keys=True,
//! ensure_ascii=False)` and a newline) while chatfmt edits only the `chat_template` member of the text.
//! The two agree because the input folders were written by the same `save_pretrained`, so their
//! configs are already in transformers' form; transformers 5's reference is the tokenizer that wrote
//! the input saved again, because after `from_pretrained` it also records the call's `is_local` and
//! `local_files_only` in the config (the script checks that this is the only difference). The configs
//! hold `model_max_length` 1000000000000000019884624838656 (a JSON round trip through `f64` would
//! write `1e30`), non-ASCII text and `\u` escapes.

use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/saved_templates");

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chatfmt"))
        .args(args)
        .output()
        .expect("chatfmt runs")
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Runs a command that must exit with 2 and returns its stderr.
fn fails(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-set-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Every file under `dir` (relative path -> bytes).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .expect("under root")
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A fresh copy of a case's input folder.
fn copy_input(case: &str, to: &str) -> PathBuf {
    let dir = temp(to);
    for (rel, bytes) in files(&Path::new(DATA).join(case).join("input")) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, bytes).expect("write");
    }
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

fn render(dir: &Path, messages: &Json, extra: &[&str]) -> String {
    let file = dir.with_extension("messages.json");
    std::fs::write(&file, messages.to_string()).expect("write messages");
    let mut args = vec!["render", "--model", path_str(dir), "--messages", path_str(&file)];
    args.extend_from_slice(extra);
    ok(&args)
}

#[test]
fn each_layout_writes_what_save_pretrained_writes_and_renders_with_it() {
    let mut cases: Vec<String> = std::fs::read_dir(DATA)
        .expect("fixtures")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("case.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    cases.sort();
    assert_eq!(cases.len(), 5, "{cases:?}");
    for case in cases {
        let record: Json =
            serde_json::from_slice(&std::fs::read(Path::new(DATA).join(&case).join("case.json")).expect("case"))
                .expect("case.json");
        let dir = copy_input(&case, &case);
        let args: Vec<String> = record["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(|a| a.as_str().expect("string"))
            .map(|a| match a.strip_prefix("templates/") {
                Some(_) => format!("{DATA}/{a}"),
                None => a.to_string(),
            })
            .collect();
        let mut command = vec!["templates", "set", path_str(&dir)];
        command.extend(args.iter().map(String::as_str));
        ok(&command);
        let expected = files(&Path::new(DATA).join(&case).join("expected"));
        let got = files(&dir);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "{case}: files"
        );
        for (rel, bytes) in &expected {
            assert!(
                got[rel] == *bytes,
                "{case}: {rel} differs from transformers {}:\n--- chatfmt\n{}\n--- transformers\n{}",
                record["transformers"],
                text(&got[rel]),
                text(bytes)
            );
        }
        let prompt = render(&dir, &record["messages"], &[]);
        assert_eq!(
            prompt,
            record["prompt"].as_str().expect("prompt"),
            "{case}: render --model"
        );
    }
}

#[test]
fn a_template_that_does_not_compile_exits_2_naming_line_and_column_and_changes_nothing() {
    let dir = copy_input("legacy-moved", "bad-template");
    let bad = dir.with_extension("bad.jinja");
    std::fs::write(&bad, "hello\n{% for x in %}{% endfor %}").expect("write");
    let before = files(&dir);
    for layout in [&[][..], &["--legacy"][..]] {
        let mut args = vec!["templates", "set", path_str(&dir), "--template", path_str(&bad)];
        args.extend_from_slice(layout);
        let stderr = fails(&args);
        assert!(
            stderr.contains(&format!("{}: line 2, column 13: ", bad.display())),
            "{stderr}"
        );
        assert!(stderr.contains("TemplateSyntaxError"), "{stderr}");
        assert_eq!(files(&dir), before, "the folder changed");
    }
}

#[test]
fn usage_and_input_errors_exit_2_and_change_nothing() {
    let missing = temp("missing").join("no-such-model");
    let stderr = fails(&["templates", "set", path_str(&missing), "--default-template", "chatml"]);
    assert!(stderr.contains("no such model folder"), "{stderr}");
    assert!(!missing.exists());

    let dir = copy_input("default-single", "bad-input");
    let before = files(&dir);
    let dir_arg = path_str(&dir);
    for (args, says) in [
        (
            vec!["--default-template", "chatml", "--name", "../escape"],
            "cannot be a template name",
        ),
        (
            vec!["--default-template", "chatml", "--name", ".hidden"],
            "cannot be a template name",
        ),
        (vec!["--default-template", "nope"], "no built-in template named 'nope'"),
        (vec!["--conv-template", "no-such-conversation"], "no-such-conversation"),
        (
            vec!["--default-template", "chatml", "--template", "x.jinja"],
            "cannot be used with",
        ),
        (vec!["--template", "/no/such/file.jinja"], "cannot read the template"),
        (vec![], "required"),
    ] {
        let mut command = vec!["templates", "set", dir_arg];
        command.extend(args.iter().copied());
        let stderr = fails(&command);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(files(&dir), before, "{args:?} changed the folder");
    }

    std::fs::write(dir.join("tokenizer_config.json"), "{\"a\": 1,}").expect("write");
    let before = files(&dir);
    let stderr = fails(&["templates", "set", dir_arg, "--default-template", "chatml"]);
    assert!(
        stderr.contains("tokenizer_config.json: malformed JSON at line 1, column 9"),
        "{stderr}"
    );
    assert_eq!(files(&dir), before);

    let processor = copy_input("legacy-replace", "processor-template");
    std::fs::write(processor.join("chat_template.json"), "{\"chat_template\": \"x\"}").expect("write");
    let before = files(&processor);
    let stderr = fails(&[
        "templates",
        "set",
        path_str(&processor),
        "--default-template",
        "chatml",
        "--legacy",
    ]);
    assert!(
        stderr.contains("chat_template.json: this file's template takes priority"),
        "{stderr}"
    );
    assert_eq!(files(&processor), before);
}

#[test]
fn named_templates_are_kept_and_moved_between_layouts() {
    let dir = copy_input("legacy-moved", "moves");
    let original_config = std::fs::read(dir.join("tokenizer_config.json")).expect("config");
    let dir_arg = path_str(&dir);
    let new = format!("{DATA}/templates/new.jinja");
    // Jinja files into the legacy config and back: the config returns to its bytes.
    ok(&["templates", "set", dir_arg, "--default-template", "chatml", "--legacy"]);
    let moved = files(&dir);
    assert_eq!(moved.keys().collect::<Vec<_>>(), ["tokenizer_config.json"]);
    let config: Json = serde_json::from_slice(&moved["tokenizer_config.json"]).expect("json");
    let names: Vec<&str> = config["chat_template"]
        .as_array()
        .expect("list")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["default", "rag"]);
    ok(&["templates", "set", dir_arg, "--template", &new, "--name", "tool_use"]);
    let back = files(&dir);
    assert_eq!(
        back.keys().collect::<Vec<_>>(),
        [
            "additional_chat_templates/rag.jinja",
            "additional_chat_templates/tool_use.jinja",
            "chat_template.jinja",
            "tokenizer_config.json"
        ]
    );
    assert_eq!(back["tokenizer_config.json"], original_config);
    let chatml = ok(&["templates", "show", "chatml"]);
    let chatml: Json = serde_json::from_str(&chatml).expect("show json");
    assert_eq!(
        text(&back["chat_template.jinja"]),
        chatml["source"].as_str().expect("source")
    );
    assert_eq!(
        back["additional_chat_templates/tool_use.jinja"],
        std::fs::read(&new).expect("new")
    );

    // Replacing one named template touches only its file.
    ok(&[
        "templates",
        "set",
        dir_arg,
        "--default-template",
        "gpt2",
        "--name",
        "rag",
    ]);
    let replaced = files(&dir);
    for (rel, bytes) in &back {
        if rel != "additional_chat_templates/rag.jinja" {
            assert_eq!(&replaced[rel], bytes, "{rel}");
        }
    }
    let messages = serde_json::json!([{"role": "user", "content": "hi"}]);
    assert_eq!(render(&dir, &messages, &[]), "<|im_start|>user\nhi<|im_end|>\n");
    assert_eq!(
        render(&dir, &messages, &["--template-name", "rag"]),
        "hi<｜end▁of▁turn｜>"
    );
}

#[test]
fn a_fastchat_template_is_saved_as_its_exported_jinja() {
    let dir = copy_input("default-single", "fastchat");
    ok(&["templates", "set", path_str(&dir), "--conv-template", "vicuna_v1.1"]);
    let exported = ok(&["templates", "export", "vicuna_v1.1", "--jinja"]);
    let saved = std::fs::read_to_string(dir.join("chat_template.jinja")).expect("saved");
    assert_eq!(saved, exported);
    let exported_file = dir.with_extension("vicuna.jinja");
    std::fs::write(&exported_file, &exported).expect("write");
    let messages = serde_json::json!([{"role": "user", "content": "hi"}]);
    let messages_file = dir.with_extension("messages.json");
    std::fs::write(&messages_file, messages.to_string()).expect("write messages");
    let expected = ok(&[
        "render",
        "--template",
        path_str(&exported_file),
        "--messages",
        path_str(&messages_file),
    ]);
    assert_eq!(render(&dir, &messages, &[]), expected);
    assert!(expected.contains("USER: hi"), "{expected}");
}
