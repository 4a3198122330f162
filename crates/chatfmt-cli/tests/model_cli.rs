//! One model resolver for every command, no silent fallback: a `--model` that names nothing is an
//! error, FastChat templates are used only when asked for (by name or `--conv-template auto`) and
//! refuse options they cannot honour, and inputs are validated as transformers validates them;
//! `tokenize --prefix-ids` extends earlier ids to exactly the whole encoding.

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");

fn chatfmt(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatfmt"));
    cmd.args(args).env("HF_HUB_CACHE", "/nonexistent-hf-cache");
    cmd.output().expect("chatfmt runs")
}

fn model() -> String {
    format!("{EXAMPLES}/chatml-model")
}

fn conversation() -> String {
    format!("{EXAMPLES}/conversation.json")
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-model-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.display().to_string()
}

/// Runs a command that must exit 2 with nothing on stdout; returns stderr.
fn usage_error(args: &[&str]) -> String {
    let out = chatfmt(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        out.stdout.is_empty(),
        "{args:?} printed {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    err
}

#[test]
fn a_model_that_names_nothing_is_an_error_not_a_fastchat_fallback() {
    let conv = conversation();
    for name in ["./models/Llama-3.1-8B-Instruct", "qwen", "acme/absent"] {
        let err = usage_error(&["render", "--model", name, "--messages", &conv]);
        assert!(
            err.contains("--conv-template"),
            "{name}: says what to do instead: {err}"
        );
    }
    let dir = temp("no-template");
    write(&dir, "tokenizer_config.json", r#"{"eos_token": "</s>"}"#);
    let err = usage_error(&["render", "--model", &dir.display().to_string(), "--messages", &conv]);
    assert!(
        err.contains("no chat template found") && err.contains("--default-template"),
        "{err}"
    );
    let empty = temp("empty");
    usage_error(&["render", "--model", &empty.display().to_string(), "--messages", &conv]);
    for cmd in ["tokenize", "check"] {
        usage_error(&[cmd, "--model", "qwen", "--messages", &conv][..if cmd == "check" { 3 } else { 5 }]);
    }
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_dir_all(&empty).ok();
}

#[test]
fn fastchat_is_chosen_only_when_asked_and_named_on_stderr() {
    let conv = conversation();
    let out = chatfmt(&[
        "render",
        "--model",
        "./models/Llama-3.1-8B-Instruct",
        "--conv-template",
        "auto",
        "--messages",
        &conv,
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'meta-llama-3.1'"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        v["template"],
        serde_json::json!({"kind": "fastchat", "name": "meta-llama-3.1", "source": "builtin"})
    );
    assert!(v["text"]
        .as_str()
        .unwrap_or("")
        .contains("What is the capital of France?"));

    let tools = temp("tools");
    let tools_file = write(&tools, "tools.json", "[]");
    for extra in [
        &["--tools", tools_file.as_str()][..],
        &["--documents", tools_file.as_str()],
        &["--continue-final-message"],
        &["--var", "x=1"],
        &["--now", "2025-01-01T00:00:00"],
        &["--template-name", "default"],
    ] {
        let mut args = vec!["render", "--conv-template", "vicuna_v1.1", "--messages", &conv];
        args.extend_from_slice(extra);
        let err = usage_error(&args);
        assert!(err.contains(extra[0]), "{extra:?}: {err}");
    }
    std::fs::remove_dir_all(&tools).ok();
}

#[test]
fn render_json_names_the_template_and_its_file() {
    let out = chatfmt(&["render", "--model", &model(), "--messages", &conversation(), "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["template"]["kind"], "jinja");
    assert_eq!(v["template"]["name"], serde_json::Value::Null);
    assert_eq!(v["template"]["source"], format!("{}/tokenizer_config.json", model()));
    assert!(v["text"].as_str().unwrap_or("").starts_with("<|im_start|>system\n"));
    let out = chatfmt(&[
        "render",
        "--default-template",
        "chatml",
        "--messages",
        &conversation(),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        v["template"],
        serde_json::json!({"kind": "jinja", "name": "chatml", "source": "builtin"})
    );
}

#[test]
fn tools_and_documents_are_checked_as_transformers_checks_them() {
    let dir = temp("inputs");
    let model = model();
    let conv = conversation();
    for (flag, value, expected) in [
        (
            "--tools",
            "[\"not a schema\"]",
            "ValueError: Tools should either be a JSON schema",
        ),
        (
            "--tools",
            "{\"name\": \"f\"}",
            "ValueError: Tools should either be a JSON schema",
        ),
        ("--tools", "3", "TypeError: 'int' object is not iterable"),
        (
            "--documents",
            "[\"text\"]",
            "TypeError: Documents should be a list of dicts",
        ),
    ] {
        let file = write(&dir, "value.json", value);
        let err = usage_error(&["render", "--model", &model, "--messages", &conv, flag, &file]);
        assert!(err.contains(expected), "{flag} {value}: {err}");
    }
    // A byte order mark before the JSON is accepted.
    let text = std::fs::read_to_string(&conv).expect("conversation");
    let bom = write(&dir, "bom.json", &format!("\u{feff}{text}"));
    let out = chatfmt(&["render", "--model", &model, "--messages", &bom]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A template error states its class once and names the template file.
    let broken = write(&dir, "broken.jinja", "line one\n{{ nothing.here }}");
    let err = usage_error(&["render", "--template", &broken, "--messages", &conv]);
    assert_eq!(err.matches("UndefinedError").count(), 1, "{err}");
    assert!(err.contains(&format!("in {broken}, line 2")), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_command_takes_the_same_model_flags() {
    let dir = temp("flags");
    let template = write(
        &dir,
        "t.jinja",
        "{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}",
    );
    // check reads a GGUF's template, and a template file with a model's tokens.
    let out = chatfmt(&["check", &template, "--eos-token", "</s>"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = chatfmt(&["check", "--model", &model(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["path"], model());
    // dataset with a built-in template and a model's tokens.
    let input = write(
        &dir,
        "in.jsonl",
        "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}\n",
    );
    let output = dir.join("out.jsonl").display().to_string();
    let out = chatfmt(&[
        "dataset",
        &input,
        "--model",
        &model(),
        "--default-template",
        "gpt2",
        "--output",
        &output,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let row: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&output).expect("output")).expect("row");
    assert_eq!(row["text"], "Hi<|im_end|>");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = temp("pipe");
    let long = "x".repeat(100_000);
    let conv = write(
        &dir,
        "long.json",
        &serde_json::json!([{"role": "user", "content": long}]).to_string(),
    );
    let out = after_one_byte(chatfmt_command(&["render", "--model", &model(), "--messages", &conv]));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    // `check` over the hf kit's 237 templates writes far more than a pipe holds; it exits as it
    // would have (1: some templates have errors), without a panic.
    if kits::kit_for_test("hf").is_some() {
        let kits = kits::kits_base();
        let check = |args: &[&str]| {
            let mut c = chatfmt_command(args);
            c.env("CHATFMT_KITS", &kits);
            c
        };
        let full = check(&["check", "--hf-kit"]).output().expect("chatfmt runs");
        for args in [&["check", "--hf-kit"][..], &["check", "--hf-kit", "--json"]] {
            let out = after_one_byte(check(args));
            assert_eq!(out.status.code(), full.status.code(), "{args:?}");
            assert!(
                out.stderr.is_empty(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let help = chatfmt(&["--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("Exit codes: 0 success; 1 some records were rejected"),
        "{help}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// chatfmt with `args`.
fn chatfmt_command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_chatfmt"));
    c.args(args);
    c
}

/// Runs `command`, reads the first byte of its output and closes the pipe.
fn after_one_byte(mut command: Command) -> std::process::Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chatfmt starts");
    let mut first = [0u8; 1];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("one byte");
    // Dropping the read end closes the pipe.
    child.wait_with_output().expect("wait")
}

/// The tokens kit's Qwen3 tokenizer folder, when the kits are present (required under CI=true).
fn qwen3() -> Option<String> {
    kits::kit_for_test("tokens/tokenizers/qwen3").map(|d| d.display().to_string())
}

#[test]
fn tokenize_takes_the_tokenizer_from_the_model_and_the_template_from_the_flag() {
    let Some(model) = qwen3() else { return };
    let dir = temp("tokenize");
    let template = write(&dir, "t.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
    let out = chatfmt(&[
        "tokenize",
        "--model",
        &model,
        "--template",
        &template,
        "--messages",
        &conversation(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["template"]["source"], template);
    let plain = chatfmt(&["tokenize", "--model", &model, "--messages", &conversation(), "--json"]);
    let p: serde_json::Value = serde_json::from_slice(&plain.stdout).expect("json");
    assert_eq!(p["template"]["source"], format!("{model}/tokenizer_config.json"));
    assert!(v["input_ids"].as_array().map(Vec::len) < p["input_ids"].as_array().map(Vec::len));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn tokenize_extends_earlier_ids_to_the_whole_encoding() {
    let Some(model) = qwen3() else { return };
    let dir = temp("prefix-ids");
    let turns = r#"[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Say more."}]"#;
    let messages: Vec<serde_json::Value> = serde_json::from_str(turns).expect("json");
    let first = write(
        &dir,
        "first.json",
        &serde_json::to_string(&messages[..1]).expect("json"),
    );
    let all = write(&dir, "all.json", turns);
    let tokenize = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["tokenize", "--model", &model, "--json"];
        args.extend_from_slice(extra);
        let out = chatfmt(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let earlier = tokenize(&["--messages", &first, "--add-generation-prompt"]);
    let prev = write(&dir, "prev.json", &earlier.to_string());
    let whole = tokenize(&["--messages", &all]);
    let extended = tokenize(&["--messages", &all, "--prefix-ids", &prev]);
    assert_eq!(extended["input_ids"], whole["input_ids"]);
    assert!(extended["reused"].as_u64().unwrap_or(0) > 0, "{extended}");
    assert!(extended["reason"].is_null(), "{extended}");

    // Ids that are not the start of this prompt are not reused, and the output says why.
    let other = write(&dir, "other.json", "[1, 2, 3]");
    let fresh = tokenize(&["--messages", &all, "--prefix-ids", &other]);
    assert_eq!(fresh["input_ids"], whole["input_ids"]);
    assert_eq!(fresh["reused"], 0);
    assert!(
        fresh["reason"].as_str().is_some_and(|r| r.contains("do not spell")),
        "{fresh}"
    );

    let bad = write(&dir, "bad.json", r#"{"ids": [1]}"#);
    let err = usage_error(&["tokenize", "--model", &model, "--messages", &all, "--prefix-ids", &bad]);
    assert!(err.contains("input_ids"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The text of a `[start, end]` code-point pair of `text`.
fn char_slice(text: &str, pair: &serde_json::Value) -> String {
    let (s, e) = (
        pair[0].as_u64().expect("start") as usize,
        pair[1].as_u64().expect("end") as usize,
    );
    text.chars().skip(s).take(e - s).collect()
}

#[test]
fn fastchat_templates_give_spans_from_their_turns() {
    let dir = temp("fastchat-spans");
    let messages = write(
        &dir,
        "m.json",
        r#"[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"}]"#,
    );
    let args = ["render", "--conv-template", "vicuna_v1.1", "--messages", &messages];
    let out = chatfmt(&[&args[..], &["--json", "--masks", "provenance"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let text = v["text"].as_str().expect("text");
    assert_eq!(text, "Be brief. USER: Hi ASSISTANT: Hello!</s>");
    assert_eq!(v["masks"], "provenance");
    let spans: Vec<String> = (v["assistant_spans"].as_array().into_iter().flatten())
        .map(|p| char_slice(text, p))
        .collect();
    assert_eq!(spans, ["Hello!</s>"]);
    let m = &v["message_spans"];
    assert_eq!(char_slice(text, &m[1]["turn"]), "USER: Hi ");
    assert_eq!(char_slice(text, &m[2]["turn"]), "ASSISTANT: Hello!</s>");
    assert_eq!(char_slice(text, &m[0]["content"][0]), "Be brief.");
    assert_eq!(m[2]["role"], "assistant");
    // Tags and stop tokens mean nothing to a FastChat template.
    for extra in [&["--masks", "tags"][..], &["--stop-token", "</s>"][..]] {
        let err = usage_error(&[&args[..], extra].concat());
        assert!(err.contains("FastChat"), "{err}");
    }
    let Some(model) = qwen3() else { return };
    let out = chatfmt(&[
        "tokenize",
        "--model",
        &model,
        "--conv-template",
        "OpenHermes-2.5-Mistral-7B",
        "--messages",
        &messages,
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    // The spans are offsets into the rendered text, which the answer carries.
    let text = v["text"].as_str().expect("text");
    assert!(text.ends_with("<|im_start|>assistant\nHello!<|im_end|>\n"), "{text:?}");
    let masks: Vec<u64> = serde_json::from_value(v["assistant_masks"].clone()).expect("masks");
    let ids: Vec<u64> = serde_json::from_value(v["input_ids"].clone()).expect("ids");
    let turn = &v["message_spans"][2]["turn_tokens"];
    let (a, b) = (
        turn[0].as_u64().expect("start") as usize,
        turn[1].as_u64().expect("end") as usize,
    );
    assert_eq!(b, ids.len(), "the reply's turn ends the prompt");
    // The reply's tokens after its header are masked, and nothing before its turn.
    assert!(masks[..a].iter().all(|&m| m == 0) && masks[b - 1] == 1, "{masks:?}");
    assert_eq!(v["masks"], "provenance");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn tokenize_refuses_an_all_zero_mask_and_warns_when_truncation_makes_one() {
    let Some(model) = qwen3() else { return };
    let dir = temp("tokenize-empty-mask");
    let messages = write(
        &dir,
        "m.json",
        r#"[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]"#,
    );
    // A template that never prints assistant messages: no assistant span, exit 2.
    let user_only = write(
        &dir,
        "u.jinja",
        "{% for m in messages %}{% if m.role == 'user' %}{{ m.content }}{% endif %}{% endfor %}",
    );
    let base = ["tokenize", "--model", &model, "--messages", &messages];
    let err = usage_error(&[&base[..], &["--template", &user_only, "--json"]].concat());
    assert!(err.contains("assistant mask would be all zeros"), "{err}");
    // The template has no generation blocks, so provenance was used: it is not suggested again.
    assert!(
        err.contains("(provenance masks)") && !err.contains("try --masks provenance"),
        "{err}"
    );
    // --max-length cutting every assistant token: a warning, and the all-zero mask it made.
    let out = chatfmt(&[&base[..], &["--assistant-masks", "--max-length", "3"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: --max-length removed every assistant token"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["assistant_masks"], serde_json::json!([0, 0, 0]));
    std::fs::remove_dir_all(&dir).ok();
}

/// The step budget of a render: over it, exit 2 with a hint naming `--max-steps`, which raises it
/// (and which a FastChat template, rendered without one, refuses).
#[test]
fn max_steps_sets_the_step_budget() {
    let dir = temp("max-steps");
    let template = write(
        &dir,
        "pairs.jinja",
        "{% for m in messages %}{% for n in messages %}{% endfor %}{% endfor %}{{ messages | length }}",
    );
    let messages: Vec<String> = (0..50)
        .map(|_| r#"{"role": "user", "content": "x"}"#.to_string())
        .collect();
    let conv = write(&dir, "conv.json", &format!("[{}]", messages.join(",")));
    let err = usage_error(&[
        "render",
        "--template",
        &template,
        "--messages",
        &conv,
        "--max-steps",
        "1000",
    ]);
    assert!(err.contains("LimitExceeded") && err.contains("--max-steps N"), "{err}");
    for budget in [None, Some("10000")] {
        let mut args = vec!["render", "--template", &template, "--messages", &conv];
        args.extend(budget.iter().flat_map(|b| ["--max-steps", *b]));
        let out = chatfmt(&args);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "50", "{budget:?}");
    }
    let err = usage_error(&[
        "render",
        "--template",
        &template,
        "--messages",
        &conv,
        "--max-steps",
        "0",
    ]);
    assert!(err.contains("--max-steps"), "{err}");
    let err = usage_error(&[
        "render",
        "--conv-template",
        "vicuna_v1.1",
        "--messages",
        &conv,
        "--max-steps",
        "9",
    ]);
    assert!(err.contains("--max-steps cannot be used with a FastChat"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
