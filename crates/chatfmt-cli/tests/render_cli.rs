//! `chatfmt render` run as a binary: model folders, GGUF files, the Hugging Face cache, built-in
//! templates, and the errors for bad input (exit code 2, a message naming the place).

#[path = "../../chatfmt/tests/support/gguf_writer.rs"]
mod gguf_writer;

use gguf_writer::{chat_model, gguf, V};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
const EXAMPLE_PROMPT: &str = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n\
What is the capital of France?<|im_end|>\n<|im_start|>assistant\n";

fn run(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatfmt"));
    cmd.args(args);
    for var in ["HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("chatfmt runs")
}

fn ok(args: &[&str], env: &[(&str, &Path)]) -> String {
    let out = run(args, env);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Runs a command that must fail with exit code 2 and returns its stderr.
fn fails(args: &[&str], env: &[(&str, &Path)]) -> String {
    let out = run(args, env);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "{args:?} printed {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-render-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path.to_string_lossy().into_owned()
}

fn example(name: &str) -> String {
    format!("{EXAMPLES}/{name}")
}

#[test]
fn renders_the_bundled_example_model() {
    let text = ok(
        &[
            "render",
            "--model",
            &example("chatml-model"),
            "--messages",
            &example("conversation.json"),
            "--add-generation-prompt",
        ],
        &[],
    );
    assert_eq!(text, EXAMPLE_PROMPT);
}

/// `--now` is checked when the arguments are read, whether or not the template reads the clock.
#[test]
fn a_malformed_now_is_a_usage_error_naming_the_flag() {
    let args = |now: &'static str| {
        let (model, conv) = (example("chatml-model"), example("conversation.json"));
        [
            "render".to_string(),
            "--model".into(),
            model,
            "--messages".into(),
            conv,
            "--now".into(),
            now.into(),
        ]
    };
    for now in ["yesterday", "2025-13-01T00:00:00", ""] {
        let a = args(now);
        let err = fails(&a.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
        let why = err.contains("Invalid isoformat string") || err.contains("month must be in 1..12");
        assert!(err.contains(&format!("--now {now:?}")) && why, "{err}");
    }
    let a = args("2025-07-10T12:00:00");
    ok(&a.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
}

/// `%s` is the epoch of the clock's fields read in the machine's time zone, as glibc's `mktime` reads
/// them for Python's `strftime`: the values are CPython 3.11's under the same `TZ` (POSIX rules, so no
/// zone database is needed).
#[test]
fn epoch_seconds_read_the_clock_in_the_local_zone() {
    let dir = temp("epoch");
    let template = write(&dir, "t.jinja", "{{ strftime_now('%s') }}|{{ strftime_now('%H %z') }}");
    let messages = write(&dir, "m.json", r#"[{"role": "user", "content": "hi"}]"#);
    let cases = [
        ("UTC0", "2025-07-10T12:00:00", "1752148800|12 "),
        ("EST5EDT,M3.2.0,M11.1.0", "2025-07-10T12:00:00", "1752163200|12 "),
        ("EST5EDT,M3.2.0,M11.1.0", "2025-01-10T12:00:00", "1736528400|12 "),
        ("<+0530>-5:30", "0001-01-01T00:00:00", "-62135616600|00 "),
    ];
    for (tz, now, want) in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatfmt"));
        cmd.args(["render", "--template", &template, "--messages", &messages, "--now", now]);
        let out = cmd.env("TZ", tz).output().expect("chatfmt runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "TZ={tz} --now {now}");
    }
}

/// A `--var` naming one of `apply_chat_template`'s own arguments would never reach the template
/// (transformers binds such a keyword to the argument): a usage error naming the flag to use.
#[test]
fn a_var_naming_an_argument_of_apply_chat_template_is_refused() {
    let (model, conv) = (example("chatml-model"), example("conversation.json"));
    let args = |var: &str| {
        [
            "render".to_string(),
            "--model".into(),
            model.clone(),
            "--messages".into(),
            conv.clone(),
            "--var".into(),
            var.into(),
        ]
    };
    for (var, use_instead) in [
        ("tools=[]", "--tools FILE"),
        ("add_generation_prompt=true", "--add-generation-prompt"),
        ("messages=[]", "--messages FILE"),
        ("max_length=3", "chatfmt tokenize --help"),
    ] {
        let a = args(var);
        let err = fails(&a.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
        let name = var.split('=').next().unwrap_or_default();
        assert!(
            err.contains(&format!("--var {name}:")) && err.contains(use_instead),
            "{err}"
        );
    }
    let a = args("system_message=\"hi\"");
    ok(&a.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
}

#[test]
fn renders_a_gguf_and_checks_template_names() {
    let dir = temp("gguf");
    let single = write(&dir, "tiny.gguf", gguf(3, &chat_model(CHATML, vec![])));
    let conv = example("conversation.json");
    let text = ok(
        &[
            "render",
            "--model",
            &single,
            "--messages",
            &conv,
            "--add-generation-prompt",
        ],
        &[],
    );
    assert_eq!(text, EXAMPLE_PROMPT);

    let extra = vec![("tokenizer.chat_template.tool_use", V::Str("tools:{{ eos_token }}"))];
    let named = write(
        &dir,
        "named.gguf",
        gguf(2, &chat_model("default:{{ bos_token }}", extra)),
    );
    assert_eq!(
        ok(&["render", "--model", &named, "--messages", &conv], &[]),
        "default:<s>"
    );
    let text = ok(
        &[
            "render",
            "--model",
            &named,
            "--messages",
            &conv,
            "--template-name",
            "tool_use",
        ],
        &[],
    );
    assert_eq!(text, "tools:<|im_end|>");
    let err = fails(
        &[
            "render",
            "--model",
            &named,
            "--messages",
            &conv,
            "--template-name",
            "rag",
        ],
        &[],
    );
    assert!(
        err.contains("has no template named 'rag'; available: default, tool_use"),
        "{err}"
    );

    // A folder holding one GGUF file (a GGUF repository) renders with it; several must be chosen from.
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).expect("repo dir");
    write(&repo, "tiny.Q4_K_M.gguf", gguf(3, &chat_model(CHATML, vec![])));
    write(&repo, "README.md", "# tiny");
    let repo_arg = repo.to_string_lossy().into_owned();
    let text = ok(
        &[
            "render",
            "--model",
            &repo_arg,
            "--messages",
            &conv,
            "--add-generation-prompt",
        ],
        &[],
    );
    assert_eq!(text, EXAMPLE_PROMPT);
    let text = ok(
        &[
            "render",
            "--model",
            &repo_arg,
            "--default-template",
            "gpt2",
            "--messages",
            &conv,
        ],
        &[],
    );
    assert_eq!(
        text,
        "You are a helpful assistant.<|im_end|>What is the capital of France?<|im_end|>"
    );
    write(&repo, "tiny.Q8_0.gguf", gguf(3, &chat_model(CHATML, vec![])));
    let err = fails(&["render", "--model", &repo_arg, "--messages", &conv], &[]);
    assert!(
        err.contains("several GGUF files (tiny.Q4_K_M.gguf, tiny.Q8_0.gguf)"),
        "{err}"
    );

    // check reads the GGUF's template, not the binary as Jinja.
    let out = run(&["check", &single, "--json"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["templates"][0]["capabilities"]["system_role"], true);

    let full = gguf(3, &chat_model(CHATML, vec![]));
    let cut = write(&dir, "cut.gguf", &full[..100]);
    let err = fails(&["render", "--model", &cut, "--messages", &conv], &[]);
    assert!(
        err.contains("cut.gguf: malformed GGUF at byte offset") && err.contains("truncated"),
        "{err}"
    );
    let err = fails(
        &[
            "render",
            "--model",
            &dir.join("missing.gguf").to_string_lossy(),
            "--messages",
            &conv,
        ],
        &[],
    );
    assert!(err.contains("missing.gguf: no such GGUF file"), "{err}");
}

/// A cache with `models--acme--tiny-chat` whose `refs/main` names a snapshot linking to a blob.
fn cache_with_tiny_chat(root: &Path) {
    let repo = root.join("models--acme--tiny-chat");
    std::fs::create_dir_all(repo.join("refs")).expect("refs");
    std::fs::create_dir_all(repo.join("blobs")).expect("blobs");
    std::fs::create_dir_all(repo.join("snapshots/0123abcd")).expect("snapshot");
    std::fs::write(repo.join("refs/main"), "0123abcd").expect("refs/main");
    let config = serde_json::json!({"eos_token": "<|im_end|>", "chat_template": CHATML}).to_string();
    std::fs::write(repo.join("blobs/5eed"), config).expect("blob");
    let link = repo.join("snapshots/0123abcd/tokenizer_config.json");
    #[cfg(unix)]
    std::os::unix::fs::symlink("../../blobs/5eed", link).expect("symlink");
    #[cfg(not(unix))]
    std::fs::copy(repo.join("blobs/5eed"), link).expect("copy");
}

#[test]
fn resolves_a_repo_id_from_the_hugging_face_cache() {
    let root = temp("cache");
    let hub = root.join("hub");
    cache_with_tiny_chat(&hub);
    let conv = example("conversation.json");
    let args = [
        "render",
        "--model",
        "acme/tiny-chat",
        "--messages",
        &conv,
        "--add-generation-prompt",
    ];
    assert_eq!(ok(&args, &[("HF_HUB_CACHE", &hub)]), EXAMPLE_PROMPT);
    assert_eq!(ok(&args, &[("HF_HOME", &root)]), EXAMPLE_PROMPT);
    let err = fails(
        &["render", "--model", "acme/absent-model", "--messages", &conv],
        &[("HF_HUB_CACHE", &hub)],
    );
    assert!(
        err.contains("'acme/absent-model' is not in the local Hugging Face cache"),
        "{err}"
    );
    assert!(
        err.contains(&hub.join("models--acme--absent-model").display().to_string()),
        "{err}"
    );
}

#[test]
fn built_in_default_templates() {
    let conv = example("conversation.json");
    let text = ok(&["render", "--default-template", "gpt2", "--messages", &conv], &[]);
    assert_eq!(
        text,
        "You are a helpful assistant.<|endoftext|>What is the capital of France?<|endoftext|>"
    );
    // With a model, the built-in template replaces the model's and the model's tokens are kept.
    let model = example("chatml-model");
    let text = ok(
        &[
            "render",
            "--model",
            &model,
            "--default-template",
            "gpt2",
            "--messages",
            &conv,
        ],
        &[],
    );
    assert_eq!(
        text,
        "You are a helpful assistant.<|im_end|>What is the capital of France?<|im_end|>"
    );
    // A GGUF without a template: the built-in one renders with the file's special tokens.
    let dir = temp("defaults");
    let kv: Vec<_> = chat_model("", vec![])
        .into_iter()
        .filter(|(k, _)| *k != "tokenizer.chat_template")
        .collect();
    let bare = write(&dir, "bare.gguf", gguf(3, &kv));
    let err = fails(&["render", "--model", &bare, "--messages", &conv], &[]);
    assert!(err.contains("this GGUF has no chat template"), "{err}");
    let text = ok(
        &[
            "render",
            "--model",
            &bare,
            "--default-template",
            "llama",
            "--messages",
            &conv,
        ],
        &[],
    );
    assert_eq!(
        text,
        "<s>[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\nWhat is the capital of France? [/INST]"
    );
    let err = fails(&["render", "--default-template", "chatml3", "--messages", &conv], &[]);
    assert!(
        err.contains("no built-in template named 'chatml3'; available: chatml, llama, blenderbot, gpt2"),
        "{err}"
    );

    let list = ok(&["templates", "list"], &[]);
    let jinja: Vec<&str> = list
        .lines()
        .filter(|l| l.contains(" jinja "))
        .map(|l| l.split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(jinja, ["chatml", "llama", "blenderbot", "gpt2"]);
    let shown: serde_json::Value = serde_json::from_str(&ok(&["templates", "show", "chatml"], &[])).expect("json");
    assert_eq!(shown["kind"], "jinja");
    assert!(shown["source"]
        .as_str()
        .unwrap_or("")
        .starts_with("{% for message in messages %}"));
}

#[test]
fn malformed_input_names_the_file_and_json_path() {
    let dir = temp("errors");
    let model = example("chatml-model");
    let bad = write(
        &dir,
        "bad.json",
        "[\n  {\"role\": \"user\", \"content\": \"a\"},\n  {\"role\": \"user\", \"content\": nul}\n]",
    );
    let err = fails(&["render", "--model", &model, "--messages", &bad], &[]);
    assert!(
        err.contains("bad.json: malformed JSON at line 3, column") && err.contains(" in messages[1].content: "),
        "{err}"
    );

    let broken_model = dir.join("broken-model");
    std::fs::create_dir_all(&broken_model).expect("model dir");
    write(&broken_model, "tokenizer_config.json", "{\"chat_template\": \"x\",}");
    let err = fails(
        &["render", "--model", &broken_model.to_string_lossy(), "--messages", &bad],
        &[],
    );
    assert!(
        err.contains("tokenizer_config.json: malformed JSON at line 1, column"),
        "{err}"
    );

    let shape = write(&dir, "shape.json", r#"{"conversation": []}"#);
    let err = fails(&["render", "--model", &model, "--messages", &shape], &[]);
    assert!(err.contains("shape.json: the object has no \"messages\" key"), "{err}");
    let scalar = write(&dir, "scalar.json", "\"hello\"");
    let err = fails(&["render", "--model", &model, "--messages", &scalar], &[]);
    assert!(err.contains("scalar.json: the top level is a string"), "{err}");

    let conv = example("conversation.json");
    let tools = write(
        &dir,
        "tools.json",
        r#"[{"type": "function", "function": {"name": "f",}}]"#,
    );
    let err = fails(
        &["render", "--model", &model, "--messages", &conv, "--tools", &tools],
        &[],
    );
    assert!(
        err.contains("tools.json: malformed JSON") && err.contains(" in tools[0].function: "),
        "{err}"
    );

    let err = fails(
        &[
            "render",
            "--model",
            &model,
            "--messages",
            &dir.join("nope.json").to_string_lossy(),
        ],
        &[],
    );
    assert!(err.contains("reading ") && err.contains("nope.json"), "{err}");
    let err = fails(
        &[
            "render",
            "--model",
            &model,
            "--messages",
            &conv,
            "--template-name",
            "default",
        ],
        &[],
    );
    assert!(err.contains("has a single unnamed chat template"), "{err}");
    let err = fails(&["render", "--messages", &conv], &[]);
    assert!(
        err.contains("give --model MODEL, --template FILE, --default-template NAME"),
        "{err}"
    );
    let err = fails(&["render", "--model", &conv, "--messages", &conv], &[]);
    assert!(err.contains("a file that is not a GGUF"), "{err}");
}

#[test]
fn odd_message_shapes_reach_the_template_as_transformers_passes_them() {
    let dir = temp("shapes");
    let template = write(&dir, "t.jinja", "{{ messages[0].content }}|{{ messages[1] }}");
    let msgs = write(
        &dir,
        "m.json",
        r#"[{"role": "user", "content": [{"type": "text", "text": "hi"}], "n": null}, {"role": "assistant", "content": 3}]"#,
    );
    let text = ok(&["render", "--template", &template, "--messages", &msgs], &[]);
    assert_eq!(
        text,
        "[{'type': 'text', 'text': 'hi'}]|{'role': 'assistant', 'content': 3}"
    );
    // A message that is not an object is refused (transformers raises a TypeError); the CLI names its JSON path.
    let not_object = write(&dir, "n.json", r#"[{"role": "user", "content": "a"}, "b"]"#);
    let err = fails(&["render", "--template", &template, "--messages", &not_object], &[]);
    assert!(err.contains("n.json: messages[1]: expected a message object"), "{err}");
    // Content of a type the template cannot add to a string fails inside the template, as in Jinja2.
    let model = example("chatml-model");
    let number = write(&dir, "num.json", r#"[{"role": "user", "content": 3}]"#);
    let err = fails(&["render", "--model", &model, "--messages", &number], &[]);
    assert!(
        err.contains("TypeError") || err.contains("can only concatenate"),
        "{err}"
    );
}

/// `render --json` gives assistant spans and message spans for a template without generation tags.
#[test]
fn render_json_gives_provenance_spans() {
    let dir = std::env::temp_dir().join(format!("chatfmt-render-spans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let messages = dir.join("m.json");
    std::fs::write(
        &messages,
        r#"[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]"#,
    )
    .expect("write");
    let template = dir.join("t.jinja");
    std::fs::write(&template, CHATML).expect("write");
    let args = ["render", "--template", template.to_str().expect("utf-8"), "--messages"];
    let m = messages.to_str().expect("utf-8");
    let out: serde_json::Value = serde_json::from_str(&ok(
        &[&args[..], &[m, "--json", "--stop-token", "<|im_end|>"]].concat(),
        &[],
    ))
    .expect("JSON");
    let text: Vec<char> = out["text"].as_str().expect("text").chars().collect();
    let slice = |r: &serde_json::Value| -> String {
        text[r[0].as_u64().expect("start") as usize..r[1].as_u64().expect("end") as usize]
            .iter()
            .collect()
    };
    assert_eq!(out["masks"], "provenance");
    let spans: Vec<String> = out["assistant_spans"]
        .as_array()
        .expect("spans")
        .iter()
        .map(slice)
        .collect();
    assert_eq!(spans, ["Yo<|im_end|>"]);
    assert_eq!(
        slice(&out["message_spans"][1]["turn"]),
        "<|im_start|>assistant\nYo<|im_end|>\n"
    );
    assert_eq!(slice(&out["message_spans"][0]["content"][0]), "Hi");
    assert_eq!(out["message_spans"][1]["role"], "assistant");
    // Tags were asked for, but the template has none: the error names the way out.
    let err = fails(&[&args[..], &[m, "--masks", "tags"]].concat(), &[]);
    assert!(err.contains("--masks provenance"), "{err}");
    // A template that never prints assistant messages would give an all-zero mask: refused.
    std::fs::write(
        &template,
        "{% for m in messages %}{% if m.role == 'user' %}{{ m.content }}{% endif %}{% endfor %}",
    )
    .expect("write");
    let empty: serde_json::Value = serde_json::from_str(&ok(&[&args[..], &[m, "--json"]].concat(), &[])).expect("JSON");
    assert_eq!(empty["assistant_spans"], serde_json::json!([]));
    assert_eq!(empty["message_spans"][1]["turn"], serde_json::Value::Null);
    std::fs::remove_dir_all(&dir).ok();
}
