//! The FastChat subcommands of the `chatfmt` binary.

use std::path::PathBuf;
use std::process::{Command, Output};

fn chatfmt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chatfmt"))
        .args(args)
        .output()
        .expect("chatfmt runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn list_shows_templates_with_style_and_stops() {
    let out = chatfmt(&["templates", "list"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert_eq!(
        text.lines().count(),
        107,
        "a header, 102 FastChat templates and 4 built-in Jinja ones"
    );
    assert!(text.starts_with("NAME "), "{text}");
    let yandex = text
        .lines()
        .find(|l| l.starts_with("yandexgpt "))
        .expect("yandexgpt listed");
    assert!(yandex.ends_with("(FastChat cannot render it)"), "{yandex}");
    let out = chatfmt(&["templates", "export", "yandexgpt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("FastChat itself cannot render 'yandexgpt'"));
    for name in ["chatml", "llama", "blenderbot", "gpt2", "vicuna_v1.1"] {
        let out = chatfmt(&["templates", "export", name]);
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout(&out).contains("{%"), "{name}");
    }
    let out = chatfmt(&["templates", "match", "lmsys/vicuna-7b-v1.5", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let keys: Vec<&str> = v
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(keys, ["template", "adapter", "adapter_index", "matched_on"]);
    assert_eq!(v["template"], "vicuna_v1.1");
    let qwen = text
        .lines()
        .find(|l| l.starts_with("qwen-7b-chat "))
        .expect("qwen listed");
    assert!(qwen.contains("CHATML") && qwen.contains("<|endoftext|>"), "{qwen}");
}

#[test]
fn show_unknown_template_suggests_names_and_exits_2() {
    let out = chatfmt(&["templates", "show", "llama2"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("llama-2"), "{err}");
}

#[test]
fn match_reports_adapter_and_template() {
    let out = chatfmt(&["templates", "match", "meta-llama/Llama-2-7b-chat-hf", "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(v["adapter"], "Llama2Adapter");
    assert_eq!(v["template"], "llama-2");
    assert_eq!(v["matched_on"], "basename");
}

#[test]
fn export_writes_jinja_and_explains_limits() {
    let out = chatfmt(&["templates", "export", "vicuna_v1.1", "--jinja"]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("{%- for t in ns.turns -%}"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("images"));
    let out = chatfmt(&["templates", "export", "yandexgpt", "--jinja"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn conformance_usage_errors_exit_2() {
    let out = chatfmt(&["conformance", "fastchat", "--kit", "/nonexistent/kit"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn conformance_json_counts_the_kit() {
    let kit = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/fastchat");
    let kit = std::env::var_os("CHATFMT_KITS").map_or(kit, |k| PathBuf::from(k).join("fastchat"));
    if !kit.join("goldens.jsonl").exists() {
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "FastChat kit missing in CI");
        eprintln!(
            "\n*** SKIPPED: FastChat conformance kit not found at {} ***\n",
            kit.display()
        );
        return;
    }
    let out = chatfmt(&[
        "conformance",
        "fastchat",
        "--kit",
        kit.to_str().expect("utf-8 path"),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(v["cases"], 1798);
    assert_eq!(
        v["matched"].as_u64().unwrap_or(0) + v["documented"].as_u64().unwrap_or(0),
        1798
    );
    assert_eq!(out.status.code(), Some(0));
}

/// A throwaway kit folder with `goldens.jsonl` holding `lines`.
fn tiny_kit(name: &str, lines: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("goldens.jsonl"), lines).expect("write kit");
    dir
}

#[test]
fn conformance_counts_unreplayable_records_as_failures() {
    let record = r#"{"id": "x/unknown", "kind": "template_scenario", "template": "no-such-template", "ops": []}"#;
    let dir = tiny_kit("unreplayable", record);
    let out = chatfmt(&[
        "conformance",
        "fastchat",
        "--kit",
        dir.to_str().expect("utf-8"),
        "--json",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!((v["cases"].as_u64(), v["matched"].as_u64()), (Some(1), Some(0)));
    assert_eq!(v["failures"][0]["actual"]["error"]["type"], "KeyError");
}

#[test]
fn conformance_malformed_kit_exits_2() {
    let dir = tiny_kit("malformed", "{not json\n");
    let out = chatfmt(&["conformance", "fastchat", "--kit", dir.to_str().expect("utf-8")]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
}
