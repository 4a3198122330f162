//! `chatfmt dataset` never destroys data: no output may be the input under another name, outputs
//! appear only when the run succeeds (an interrupted or failed run leaves nothing, and a previous
//! output byte for byte), inputs it cannot read as JSON Lines or Parquet are refused by name, and so
//! is an input with columns named like the output's new ones. Every input row is in the output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/chatml-model");
const ROW: &str = r#"{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]}"#;

fn chatfmt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chatfmt"))
        .args(args)
        .output()
        .expect("chatfmt runs")
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-dataset-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).expect("temp dir");
    dir
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The files of `dir` (names), sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `dataset` expecting exit code 2; returns stderr.
fn refused(args: &[&str]) -> String {
    let out = chatfmt(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    err
}

#[test]
fn outputs_that_are_the_input_by_another_name_are_refused_before_writing() {
    let dir = temp("identity");
    let input = dir.join("in.jsonl");
    let content = format!("{ROW}\n{ROW}\n");
    std::fs::write(&input, &content).expect("input");
    let input_arg = s(&input);
    // `dataset in.jsonl --model M --output OUTPUT [--rejects REJECTS]`, which must be refused.
    let refused_with = |output: &str, rejects: Option<&str>| {
        let mut args = vec!["dataset", &input_arg, "--model", MODEL, "--output", output];
        args.extend(rejects.map(|r| ["--rejects", r]).into_iter().flatten());
        refused(&args)
    };
    let err = refused_with(&format!("{}/sub/../in.jsonl", s(&dir)), None);
    assert!(err.contains("is the input file"), "{err}");
    let err = refused_with(&s(&dir.join("o.jsonl")), Some(&s(&input)));
    assert!(err.contains("the rejects file is the input file"), "{err}");
    let target = dir.join("precious.txt");
    std::fs::write(&target, "keep me").expect("target");
    std::os::unix::fs::symlink(&target, dir.join("link.jsonl")).expect("symlink");
    let err = refused_with(&s(&dir.join("link.jsonl")), None);
    assert!(err.contains("symbolic link"), "{err}");
    let err = refused_with(&s(&dir.join("sub")), None);
    assert!(err.contains("is a folder"), "{err}");
    let err = refused_with(&s(&dir.join("same")), Some(&s(&dir.join("sub/../same"))));
    assert!(err.contains("name the same file"), "{err}");
    assert_eq!(std::fs::read_to_string(&input).expect("input"), content);
    assert_eq!(std::fs::read_to_string(&target).expect("target"), "keep me");
    assert_eq!(files(&dir), ["in.jsonl", "link.jsonl", "precious.txt", "sub"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_failed_run_leaves_no_output_and_the_previous_one_intact() {
    let dir = temp("failed");
    let out = dir.join("out.parquet");
    // A folder as input: refused before any output exists.
    let err = refused(&["dataset", &s(&dir.join("sub")), "--model", MODEL, "--output", &s(&out)]);
    assert!(err.contains("is a folder"), "{err}");
    assert!(!out.exists());
    // A previous output survives a failed --strict run byte for byte.
    let input = dir.join("in.jsonl");
    std::fs::write(&input, format!("{ROW}\n")).expect("input");
    assert!(
        chatfmt(&["dataset", &s(&input), "--model", MODEL, "--output", &s(&out)])
            .status
            .success()
    );
    let previous = std::fs::read(&out).expect("output");
    std::fs::write(&input, format!("{ROW}\n{{\"messages\": null}}\n")).expect("input");
    let run = chatfmt(&[
        "dataset",
        &s(&input),
        "--model",
        MODEL,
        "--output",
        &s(&out),
        "--strict",
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(std::fs::read(&out).expect("output"), previous);
    assert_eq!(files(&dir), ["in.jsonl", "out.parquet", "sub"]);
    // Without --strict the bad row is in the output with its error, and one JSON line of the rejects
    // file: index, kind, error.
    let run = chatfmt(&["dataset", &s(&input), "--model", MODEL, "--output", &s(&out), "--json"]);
    assert_eq!(run.status.code(), Some(1));
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).expect("summary");
    assert_eq!(
        (summary["rows_out"].as_u64(), summary["rows_rejected"].as_u64()),
        (Some(1), Some(1))
    );
    let rejects = std::fs::read_to_string(dir.join("out.parquet.rejects.jsonl")).expect("rejects");
    assert_eq!(
        rejects,
        "{\"index\":1,\"kind\":\"InvalidInput\",\"error\":\"messages is null; expected a list of messages\"}\n"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn template_errors_state_their_class_once_and_name_the_template_file() {
    let dir = temp("classes");
    let input = dir.join("in.jsonl");
    std::fs::write(&input, format!("{ROW}\n")).expect("input");
    let template = dir.join("broken.jinja");
    std::fs::write(&template, "{{ messages[0].content }}\n{{ nothing.here }}").expect("template");
    let out = dir.join("out.jsonl");
    let run = chatfmt(&[
        "dataset",
        &s(&input),
        "--model",
        MODEL,
        "--template",
        &s(&template),
        "--output",
        &s(&out),
    ]);
    assert_eq!(run.status.code(), Some(1));
    let line = std::fs::read_to_string(dir.join("out.jsonl.rejects.jsonl")).expect("rejects");
    let reject: serde_json::Value = serde_json::from_str(&line).expect("json");
    assert_eq!(reject["kind"], "UndefinedError");
    let error = reject["error"].as_str().unwrap_or("");
    assert!(!error.contains("UndefinedError"), "{error}");
    assert!(error.contains(&format!("in {}, line 2", s(&template))), "{error}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_input_format_comes_from_the_first_bytes() {
    let dir = temp("formats");
    let out = s(&dir.join("out.jsonl"));
    let array = dir.join("array.jsonl");
    std::fs::write(&array, format!("[{ROW},\n{ROW}]\n")).expect("array");
    let err = refused(&["dataset", &s(&array), "--model", MODEL, "--output", &out]);
    assert!(err.contains("is a JSON array"), "{err}");
    let gz = dir.join("data.jsonl.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0]).expect("gzip");
    let err = refused(&["dataset", &s(&gz), "--model", MODEL, "--output", &out]);
    assert!(err.contains("gzip-compressed"), "{err}");
    let zst = dir.join("data.jsonl.zst");
    std::fs::write(&zst, [0x28, 0xb5, 0x2f, 0xfd, 0]).expect("zstd");
    let err = refused(&["dataset", &s(&zst), "--model", MODEL, "--output", &out]);
    assert!(err.contains("zstd-compressed"), "{err}");
    assert!(!dir.join("out.jsonl").exists());

    // A Parquet file is read as Parquet whatever its name; --input-format forces a format.
    let jsonl = dir.join("in.jsonl");
    std::fs::write(&jsonl, format!("\u{feff}{ROW}\n{ROW}\n")).expect("input");
    let parquet = dir.join("made.parquet");
    let run = chatfmt(&["dataset", &s(&jsonl), "--model", MODEL, "--output", &s(&parquet)]);
    assert!(
        run.status.success(),
        "a byte order mark is accepted: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let disguised = dir.join("disguised.jsonl");
    std::fs::copy(&parquet, &disguised).expect("copy");
    // Read as Parquet: its columns `text` and `error` are those the output would add.
    let err = refused(&[
        "dataset",
        &s(&disguised),
        "--model",
        MODEL,
        "--messages-field",
        "text",
        "--output",
        &out,
    ]);
    assert!(
        err.contains("the input already has the output columns [\"text\", \"error\"]; rename or drop them first"),
        "{err}"
    );
    assert!(!dir.join("out.jsonl").exists());
    let forced = chatfmt(&[
        "dataset",
        &s(&array),
        "--input-format",
        "jsonl",
        "--model",
        MODEL,
        "--output",
        &out,
        "--json",
    ]);
    let summary: serde_json::Value = serde_json::from_slice(&forced.stdout).expect("summary");
    assert_eq!(summary["rows_rejected"], 2);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_interrupted_run_leaves_no_output_and_no_temporary_file() {
    let dir = temp("sigint");
    let input = dir.join("big.jsonl");
    let mut rows = String::with_capacity(200_000 * (ROW.len() + 1));
    for _ in 0..200_000 {
        rows.push_str(ROW);
        rows.push('\n');
    }
    std::fs::write(&input, rows).expect("input");
    let out = dir.join("out.parquet");
    let mut child = Command::new(env!("CARGO_BIN_EXE_chatfmt"))
        .args([
            "dataset",
            &s(&input),
            "--model",
            MODEL,
            "--output",
            &s(&out),
            "--jobs",
            "1",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("chatfmt starts");
    let temp_file = dir.join(format!(".out.parquet.chatfmt-{}.tmp", child.id()));
    let started = Instant::now();
    while !temp_file.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no temporary output appeared"
        );
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the run ended before it could be interrupted"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill")
        .success());
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130));
    assert_eq!(files(&dir), ["big.jsonl", "sub"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn masks_write_assistant_and_message_spans_and_reject_empty_masks() {
    let dir = temp("masks");
    let input = dir.join("in.jsonl");
    let empty = r#"{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": ""}]}"#;
    std::fs::write(&input, format!("{ROW}\n{empty}\n")).expect("input");
    // ChatML that skips messages without content: the empty assistant message renders nothing.
    let template = dir.join("t.jinja");
    std::fs::write(
        &template,
        "{% for m in messages %}{% if m.content %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}\
         {% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    )
    .expect("template");
    let out = dir.join("out.jsonl");
    let args = ["dataset", &s(&input), "--template", &s(&template), "--output", &s(&out)];
    let run = chatfmt(
        &[
            &args[..],
            &["--masks", "provenance", "--stop-token", "<|im_end|>", "--message-spans"],
        ]
        .concat(),
    );
    assert_eq!(run.status.code(), Some(1), "{}", String::from_utf8_lossy(&run.stderr));
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .expect("output")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON row"))
        .collect();
    assert_eq!(rows.len(), 2, "every input row is in the output");
    let row = &rows[0];
    assert_eq!(
        row.as_object().and_then(|o| o.keys().next()).map(String::as_str),
        Some("messages")
    );
    assert!(rows[1]["error"]
        .as_str()
        .is_some_and(|e| e.starts_with("EmptyAssistantMask: ")));
    assert!(rows[1]["text"].is_null() && rows[1]["assistant_spans"].is_null());
    let text: Vec<char> = row["text"].as_str().expect("text").chars().collect();
    let slice = |p: &serde_json::Value| -> String {
        text[p[0].as_u64().expect("start") as usize..p[1].as_u64().expect("end") as usize]
            .iter()
            .collect()
    };
    assert_eq!(slice(&row["assistant_spans"][0]), "Hello!<|im_end|>");
    assert_eq!(row["assistant_spans"].as_array().map(Vec::len), Some(1));
    assert_eq!(slice(&row["message_spans"][0]["content"][0]), "Hi");
    assert_eq!(
        slice(&row["message_spans"][1]["turn"]),
        "<|im_start|>assistant\nHello!<|im_end|>\n"
    );
    let rejects = std::fs::read_to_string(dir.join("out.jsonl.rejects.jsonl")).expect("rejects");
    let reject: serde_json::Value = serde_json::from_str(rejects.trim()).expect("one reject");
    assert_eq!(
        (reject["index"].as_u64(), reject["kind"].as_str()),
        (Some(1), Some("EmptyAssistantMask"))
    );
    // Without mask flags (nor --tokenize) only the text is written, and nothing is checked.
    assert_eq!(chatfmt(&args).status.code(), Some(0));
    let plain = std::fs::read_to_string(&out).expect("output");
    assert!(
        !plain.contains("assistant_spans") && plain.contains("\"text\""),
        "{plain}"
    );
    // Tags on a template without generation blocks: refused, naming the way out.
    let err = refused(&[&args[..], &["--masks", "tags"]].concat());
    assert!(err.contains("--masks provenance"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// What transformers' `apply_chat_template(row["messages"], tools=row["tools"],
/// documents=row["documents"])` gets from a row: the documents column reaches the template, a column
/// given as a JSON string is parsed, and a message's keys (its role included) are the template's to
/// read.
#[test]
fn documents_json_strings_and_messages_without_a_role_reach_the_template() {
    let dir = temp("documents");
    let template = dir.join("t.jinja");
    std::fs::write(
        &template,
        "{% for d in documents %}[{{ d.title }}]{% endfor %}{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}",
    )
    .expect("template");
    let input = dir.join("in.jsonl");
    let rows = [
        r#"{"messages": [{"role": "user", "content": "Hi"}], "documents": [{"title": "A", "text": "a"}]}"#,
        r#"{"messages": "[{\"role\": \"user\", \"content\": \"Hi\"}]", "documents": "[{\"title\": \"B\", \"text\": \"b\"}]"}"#,
        r#"{"messages": [{"content": "no role"}], "documents": []}"#,
        r#"{"messages": "{\"role\": \"user\"}", "documents": []}"#,
    ];
    std::fs::write(&input, rows.join("\n") + "\n").expect("input");
    let output = dir.join("out.jsonl");
    let out = chatfmt(&[
        "dataset",
        &s(&input),
        "--template",
        &s(&template),
        "--output",
        &s(&output),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let written: Vec<serde_json::Value> = std::fs::read_to_string(&output)
        .expect("output")
        .lines()
        .map(|l| serde_json::from_str(l).expect("row"))
        .collect();
    let texts: Vec<Option<&str>> = written.iter().map(|r| r["text"].as_str()).collect();
    assert_eq!(
        texts[..3],
        [Some("[A]user:Hi;"), Some("[B]user:Hi;"), Some(":no role;")]
    );
    assert!(
        written[3]["error"]
            .as_str()
            .is_some_and(|e| e.contains("field `messages` is a JSON string of an object, not a list of messages")),
        "{:?}",
        written[3]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rows_over_the_step_budget_are_counted_and_point_at_max_steps() {
    let dir = temp("max-steps");
    let input = dir.join("in.jsonl");
    let turns = vec![r#"{"role": "user", "content": "Hi"}"#; 30].join(", ");
    std::fs::write(&input, format!("{{\"messages\": [{turns}]}}\n{ROW}\n")).expect("input");
    let (input, out) = (s(&input), s(&dir.join("out.jsonl")));
    let run = |budget: &str, json: bool| {
        let mut args = vec![
            "dataset",
            &input,
            "--model",
            MODEL,
            "--output",
            &out,
            "--max-steps",
            budget,
        ];
        args.extend(json.then_some("--json"));
        let _ = std::fs::remove_file(&out);
        let _ = std::fs::remove_file(dir.join("out.jsonl.rejects.jsonl"));
        chatfmt(&args)
    };
    let tight = run("20", true);
    assert_eq!(tight.status.code(), Some(1));
    let summary: serde_json::Value = serde_json::from_slice(&tight.stdout).expect("summary");
    assert_eq!(summary["rows_rejected"], 1);
    assert_eq!(summary["rejected_kinds"], serde_json::json!({"LimitExceeded": 1}));
    let err = String::from_utf8_lossy(&run("20", false).stderr).into_owned();
    assert!(
        err.contains("hint: 1 of the rejected rows passed a render limit") && err.contains("--max-steps N"),
        "{err}"
    );
    let roomy = run("100000", true);
    assert_eq!(roomy.status.code(), Some(0));
    let summary: serde_json::Value = serde_json::from_slice(&roomy.stdout).expect("summary");
    assert_eq!(
        (summary["rows_out"].as_u64(), summary["rejected_kinds"].clone()),
        (Some(2), serde_json::json!({}))
    );
    std::fs::remove_dir_all(&dir).ok();
}
