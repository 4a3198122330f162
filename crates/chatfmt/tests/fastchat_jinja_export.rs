//! The Jinja export of FastChat templates renders FastChat's prompt on every applicable kit
//! scenario, for every exportable template.
//!
//! The renderer is Python's Jinja2 (one `python3` process, JSON lines over a pipe) until
//! chatfmt's own engine lands: then implement `JinjaRenderer` with `chatfmt_jinja` and use it
//! here instead (see `PythonJinja` below). A missing kit or a missing Jinja2 is a loud skip.

use chatfmt::conversation::export_check::{check_export, JinjaRenderer};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

const RENDER_SERVER: &str = r#"
import json, sys
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment
def raise_exception(message):
    raise TemplateError(message)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
env.globals["raise_exception"] = raise_exception
cache = {}
for line in sys.stdin:
    req = json.loads(line)
    try:
        t = cache.get(req["source"]) or cache.setdefault(req["source"], env.from_string(req["source"]))
        out = {"ok": t.render(messages=req["messages"], add_generation_prompt=req["add_generation_prompt"])}
    except Exception as e:
        out = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out), flush=True)
"#;

/// Python's Jinja2 3.x in transformers' environment, behind the `JinjaRenderer` hook.
struct PythonJinja {
    io: Mutex<(ChildStdin, BufReader<ChildStdout>)>,
    child: Child,
}

impl PythonJinja {
    fn start() -> Option<PythonJinja> {
        let ok = Command::new("python3")
            .args(["-c", "import jinja2"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return None;
        }
        let mut child = Command::new("python3")
            .args(["-c", RENDER_SERVER])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = BufReader::new(child.stdout.take()?);
        Some(PythonJinja {
            io: Mutex::new((stdin, stdout)),
            child,
        })
    }
}

impl JinjaRenderer for PythonJinja {
    fn render(&self, source: &str, messages: &Value, add_generation_prompt: bool) -> Result<String, String> {
        let mut io = self.io.lock().map_err(|e| e.to_string())?;
        let request = json!({"source": source, "messages": messages, "add_generation_prompt": add_generation_prompt});
        writeln!(io.0, "{request}").map_err(|e| e.to_string())?;
        let mut line = String::new();
        io.1.read_line(&mut line).map_err(|e| e.to_string())?;
        let reply: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
        match reply.get("ok").and_then(Value::as_str) {
            Some(text) => Ok(text.to_owned()),
            None => Err(reply["error"].as_str().unwrap_or("no reply").to_owned()),
        }
    }
}

impl Drop for PythonJinja {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn kit_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("CHATFMT_KITS") {
        Some(kits) => PathBuf::from(kits).join("fastchat"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/fastchat"),
    };
    if dir.join("goldens.jsonl").exists() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "FastChat kit not found at {} (CI=true: a missing kit is a failure)",
            dir.display()
        );
    }
    eprintln!(
        "\n*** SKIPPED: FastChat conformance kit not found at {} ***\n",
        dir.display()
    );
    None
}

#[test]
fn exported_templates_render_fastchat_prompts() {
    let Some(dir) = kit_dir() else { return };
    let Some(renderer) = PythonJinja::start() else {
        eprintln!("\n*** SKIPPED: python3 with jinja2 not available to render exported templates ***\n");
        return;
    };
    let report = check_export(&dir, &renderer, None).expect("kit readable");
    let not_exported: Vec<&str> = report.not_exported.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        not_exported,
        ["yandexgpt"],
        "only the style-less template cannot export"
    );
    assert_eq!(report.exported.len(), 101);
    assert!(report.checked >= 1300, "checked {} scenarios", report.checked);
    let shown: Vec<String> = report
        .mismatches
        .iter()
        .take(5)
        .map(|m| format!("{}\n  expected: {:?}\n  actual:   {:?}", m.id, m.expected, m.actual))
        .collect();
    assert!(
        report.mismatches.is_empty(),
        "{} mismatches:\n{}",
        report.mismatches.len(),
        shown.join("\n")
    );
}
