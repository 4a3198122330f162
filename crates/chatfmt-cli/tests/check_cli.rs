//! `chatfmt check` and the input diagnostics of `chatfmt render`, through the binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn chatfmt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chatfmt"))
        .args(args)
        .output()
        .expect("chatfmt runs")
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-check-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("temp file written");
    path
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/chatml-model")
}

#[test]
fn check_reports_capabilities_as_json_and_exits_0() {
    let out = chatfmt(&["check", example().to_str().expect("utf-8 path"), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let t = &report["templates"][0];
    assert_eq!(t["errors"], serde_json::json!([]));
    assert_eq!(t["capabilities"]["system_role"], true);
    assert_eq!(t["capabilities"]["add_generation_prompt"], true);
}

#[test]
fn check_finds_errors_in_branches_never_taken_and_exits_1() {
    let tpl = temp_file(
        "broken.jinja",
        "{% for m in messages %}{% if m.role == 'tool' %}{{ m.content | from_json }}{% set _ = m.tool_calls.append(1) %}{% endif %}{{ m.content }}{% endfor %}",
    );
    let out = chatfmt(&["check", tpl.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("error[unknown_filter] (line 1, column 64): no filter named 'from_json'"),
        "{text}"
    );
    assert!(text.contains("error[sandbox_refused]"), "{text}");
    assert!(text.contains("'.append' is refused by the sandbox"), "{text}");
}

#[test]
fn check_reports_syntax_errors_with_a_code_frame() {
    let tpl = temp_file("syntax.jinja", "{% for m in messages %}\n{{ m.content }\n{% endfor %}");
    let out = chatfmt(&["check", tpl.to_str().expect("utf-8 path"), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let err = &report["templates"][0]["errors"][0];
    assert_eq!(err["code"], "syntax");
    assert_eq!(err["line"], 2);
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("\n2 | {{ m.content }")),
        "{err}"
    );
}

#[test]
fn render_names_the_json_path_of_a_malformed_message() {
    let messages = temp_file("bad_messages.json", r#"[{"role": "user", "content": "hi"}, 7]"#);
    let out = chatfmt(&[
        "render",
        "--model",
        example().to_str().expect("utf-8 path"),
        "--messages",
        messages.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad_messages.json: messages[1]: expected a message object"),
        "{err}"
    );
}

#[test]
fn an_empty_template_or_one_that_never_reads_messages_is_an_error() {
    for (name, source, code) in [
        ("empty.jinja", " \n", "empty_template"),
        (
            "fixed.jinja",
            "{{ bos_token }}Hello{% if add_generation_prompt %} there{% endif %}",
            "ignores_messages",
        ),
    ] {
        let tpl = temp_file(name, source);
        let out = chatfmt(&["check", tpl.to_str().expect("utf-8 path"), "--json"]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
        assert_eq!(report["templates"][0]["errors"][0]["code"], code, "{name}: {report}");
    }
}

#[test]
fn a_template_needing_an_eos_token_is_probed_with_a_placeholder_and_exits_0() {
    let tpl = temp_file(
        "eos.jinja",
        "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] + eos_token }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}",
    );
    let out = chatfmt(&["check", tpl.to_str().expect("utf-8 path"), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let t = &report["templates"][0];
    assert_eq!(t["capabilities"]["system_role"], true, "{t}");
    assert_eq!(t["capabilities"]["add_generation_prompt"], true, "{t}");
    assert!(
        t["warnings"]
            .as_array()
            .is_some_and(|w| w.iter().any(|w| w["code"] == "placeholder_special_tokens")),
        "{t}"
    );
}

#[test]
fn check_prefix_reports_where_prompts_stop_growing_by_appending() {
    let out = chatfmt(&["check", "--prefix", "--json", example().to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report, serde_json::json!({"prefix_stable": true, "breaks": []}));

    // Reasoning is printed for the final assistant turn only, as reasoning templates do.
    let tpl = temp_file(
        "drops_reasoning.jinja",
        "{% for m in messages %}<|{{ m.role }}|>{% if m.reasoning_content and loop.last %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}\n{% endfor %}",
    );
    let out = chatfmt(&["check", "--prefix", "--json", tpl.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["prefix_stable"], false);
    let breaks = report["breaks"].as_array().expect("breaks");
    assert_eq!(breaks.len(), 1, "{report}");
    let b = &breaks[0];
    assert_eq!(b["probe"], "reasoning");
    assert_eq!(b["messages"], 2);
    assert_eq!(b["added_role"], "user");
    assert_eq!(b["offset"], "<|user|>USER_PROBE_TEXT\n<|assistant|>".chars().count());
    assert_eq!(b["expected"], "<think>REASONING_PROBE_TEXT</think>ASSIS");
    assert_eq!(b["actual"], "ASSISTANT_PROBE_TEXT\n<|user|>SECOND_USER");
    assert_eq!(
        b["cause"],
        "the reasoning of an earlier assistant turn is dropped from the history"
    );

    let out = chatfmt(&["check", "--prefix", tpl.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("not prefix-stable"));
}

#[test]
fn a_fastchat_template_is_refused_with_how_to_export_it() {
    let model = example();
    let model = model.to_str().expect("utf-8 path");
    for args in [
        &["check", "--conv-template", "vicuna_v1.1"][..],
        &["check", "--model", model, "--conv-template", "vicuna_v1.1"],
    ] {
        let out = chatfmt(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("--conv-template names a FastChat template") && err.contains("templates export NAME --jinja"),
            "{args:?}: {err}"
        );
    }
}
