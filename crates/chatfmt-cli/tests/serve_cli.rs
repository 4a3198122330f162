//! `chatfmt serve` answers what the other subcommands print for the same input, and SIGTERM stops it
//! with exit code 0 after the requests in flight.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)]

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_chatfmt");
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Starts `chatfmt serve` on a free port; returns it and its address.
fn start(models: &[&str]) -> (Child, String) {
    start_with(models, &[])
}

/// [`start`] with more options.
fn start_with(models: &[&str], options: &[&str]) -> (Child, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--port", "0", "--workers", "2"]).args(options);
    for m in models {
        cmd.args(["--model", m]);
    }
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line
        .split("http://")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    (child, address)
}

/// One HTTP/1.1 request; the status and the JSON body.
fn request(address: &str, path: &str, body: &Value) -> (u16, Value) {
    let mut stream = TcpStream::connect(address).unwrap();
    let body = body.to_string();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(body).unwrap())
}

fn cli(args: &[&str], messages: &Value) -> String {
    let dir = std::env::temp_dir().join(format!("chatfmt-serve-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("messages.json");
    std::fs::write(&file, messages.to_string()).unwrap();
    let out = Command::new(BIN)
        .args(args)
        .arg("--messages")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_server_answers_what_the_cli_prints() {
    let Some(qwen) = kits::kit_for_test("tokens/tokenizers/qwen3") else {
        return;
    };
    let qwen = qwen.display().to_string();
    let chatml = format!("{ROOT}/examples/chatml-model");
    let (mut child, address) = start(&[&format!("q={qwen}"), &format!("c={chatml}")]);
    let messages = json!([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Bye"}
    ]);
    // /v1/render is tokenize --json plus model and stop.
    let (status, served) = request(&address, "/v1/render", &json!({"model": "q", "messages": messages}));
    assert_eq!(status, 200, "{served}");
    let printed: Value = serde_json::from_str(&cli(&["tokenize", "--model", &qwen, "--json"], &messages)).unwrap();
    let mut rest = served.as_object().unwrap().clone();
    for key in ["model", "stop"] {
        assert!(rest.remove(key).is_some(), "{key}");
    }
    assert_eq!(Value::Object(rest), printed);
    // /tokenize (chat) gives tokenize's ids.
    let (_, ids) = request(&address, "/tokenize", &json!({"model": "q", "messages": messages}));
    let plain: Value = serde_json::from_str(&cli(
        &["tokenize", "--model", &qwen, "--add-generation-prompt"],
        &messages,
    ))
    .unwrap();
    assert_eq!(ids["tokens"], plain["input_ids"]);
    // /apply-template is render --add-generation-prompt.
    let (_, prompt) = request(
        &address,
        "/apply-template",
        &json!({"model": "c", "messages": messages}),
    );
    assert_eq!(
        prompt["prompt"],
        cli(&["render", "--model", &chatml, "--add-generation-prompt"], &messages)
    );
    let (_, text) = request(
        &address,
        "/v1/render",
        &json!({"model": "c", "messages": messages, "tokenize": false}),
    );
    let printed: Value = serde_json::from_str(&cli(&["render", "--model", &chatml, "--json"], &messages)).unwrap();
    let mut rest = text.as_object().unwrap().clone();
    rest.remove("model");
    rest.remove("stop");
    assert_eq!(Value::Object(rest), printed);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn the_render_and_tokenizer_routes_answer_what_the_cli_prints() {
    let Some(qwen) = kits::kit_for_test("tokens/tokenizers/qwen3") else {
        return;
    };
    let qwen = qwen.display().to_string();
    let (mut child, address) = start(&[&qwen]);
    let messages = json!([
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Bye"}
    ]);
    let printed: Value = serde_json::from_str(&cli(
        &["tokenize", "--model", &qwen, "--add-generation-prompt"],
        &messages,
    ))
    .unwrap();
    let ids = &printed["input_ids"];
    assert!(ids.as_array().is_some_and(|a| !a.is_empty()), "{printed}");
    // vLLM's chat render, SGLang's /v1/tokenize and TGI's /chat_tokenize give tokenize's ids.
    let (status, generate) = request(&address, "/v1/chat/completions/render", &json!({"messages": messages}));
    assert_eq!(status, 200, "{generate}");
    assert_eq!(&generate["token_ids"], ids);
    let (status, sglang) = request(&address, "/v1/tokenize", &json!({"messages": messages}));
    assert_eq!(status, 200, "{sglang}");
    assert_eq!(&sglang["tokens"], ids);
    let (status, tgi) = request(&address, "/chat_tokenize", &json!({"messages": messages}));
    assert_eq!(status, 200, "{tgi}");
    let tgi_ids: Vec<Value> = (tgi["tokenize_response"].as_array().unwrap().iter())
        .map(|t| t["id"].clone())
        .collect();
    assert_eq!(&Value::Array(tgi_ids), ids);
    // TGI's templated text is render --add-generation-prompt.
    assert_eq!(
        tgi["templated_text"],
        cli(&["render", "--model", &qwen, "--add-generation-prompt"], &messages)
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn sigterm_finishes_requests_in_flight_and_exits_0() {
    let chatml = format!("{ROOT}/examples/chatml-model");
    let (mut child, address) = start(&[&chatml]);
    // A request template that renders for about 200 ms, still running when SIGTERM arrives.
    let slow = "{% for i in range(99999) %}{% for j in range(99999) %}{{ '' }}{% endfor %}{% endfor %}";
    let body = json!({"messages": [{"role": "user", "content": "Hi"}], "chat_template": slow, "tokenize": false});
    let addr = address.clone();
    let in_flight = std::thread::spawn(move || request(&addr, "/v1/render", &body));
    std::thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let (status, answer) = in_flight.join().unwrap();
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["type"], "template_limit_exceeded");
    let code = child.wait().unwrap();
    assert_eq!(code.code(), Some(0));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(TcpStream::connect(&address).is_err(), "still accepting after SIGTERM");
}

#[test]
fn max_steps_sets_the_step_budget_of_the_models_templates() {
    let model = format!("{ROOT}/examples/chatml-model");
    let (mut child, address) = start_with(&[&model], &["--max-steps", "40"]);
    let turn = json!({"role": "user", "content": "Hi"});
    // The folder has no tokenizer: the route renders only.
    let render = |messages: Value| {
        request(
            &address,
            "/v1/render",
            &json!({"messages": messages, "tokenize": false}),
        )
    };
    let (status, body) = render(json!(vec![turn.clone(); 50]));
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["type"], "template_limit_exceeded");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_steps (40) steps (the server's --max-steps)"),
        "{body}"
    );
    let (status, body) = render(json!([turn]));
    assert_eq!(status, 200, "{body}");
    child.kill().unwrap();
    child.wait().unwrap();
    let refused = Command::new(BIN)
        .args(["serve", "--model", &model, "--max-steps", "0"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--max-steps"));
}
