//! The FastChat conformance runner: replays the kit's `goldens.jsonl` (template scenarios and
//! API edge cases) and `adapter_goldens.jsonl` (model-path matching) and compares.
//!
//! A template record matches when `prompt`, `openai_messages`, `stop_str`, `stop_token_ids`
//! and `final_state` equal the golden (an error golden is matched by an error of the same
//! Python class). The other outputs (`gradio_chatbot`, `dict`, `images`, vision forms) are
//! compared too but reported apart, as `extra_failures`. Differences chatfmt makes on purpose
//! are listed (field and record id) in the "FastChat" section of `KNOWN_DIFFERENCES.md`, which
//! is embedded here: a record whose only mismatches are listed counts as `documented`.

use super::adapter::{match_model_in, matching_adapters, ADAPTERS};
use super::error::{Error, ErrorKind, Result};
use super::message::Message;
use super::record::Conversation;
use super::registry::Registry;
use super::style::SeparatorStyle;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

const KNOWN_DIFFERENCES: &str = include_str!("../../../../KNOWN_DIFFERENCES.md");

/// Fields whose equality decides whether a template record matches.
const COUNTED_FIELDS: &[&str] = &[
    "prompt",
    "openai_messages",
    "stop_str",
    "stop_token_ids",
    "final_state",
];

/// One field of one record that differs from the golden.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The record id.
    pub id: String,
    /// The compared field.
    pub field: String,
    /// The golden value.
    pub expected: Value,
    /// chatfmt's value (`{"error": {"type", "message"}}` for errors).
    pub actual: Value,
}

/// The result of a kit run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Records checked (template scenarios, API edge cases and adapter records).
    pub cases: usize,
    /// Records that match the golden.
    pub matched: usize,
    /// Records whose every mismatch is a documented difference.
    pub documented: usize,
    /// Mismatches of counted fields that are not documented (each failing record's fields).
    pub failures: Vec<Failure>,
    /// Mismatches of the uncounted outputs that are not documented.
    pub extra_failures: Vec<Failure>,
    /// Documented (record, field) pairs that now match: the documentation is stale.
    pub stale_documented: Vec<(String, String)>,
}

impl Report {
    /// Whether every record matched or is documented.
    pub fn passed(&self) -> bool {
        self.matched + self.documented == self.cases
    }

    /// The report as JSON (`cases`, `matched`, `documented`, failures).
    pub fn to_json(&self) -> Value {
        let fail = |f: &Failure| json!({"id": f.id, "field": f.field, "expected": f.expected, "actual": f.actual});
        json!({
            "cases": self.cases,
            "matched": self.matched,
            "documented": self.documented,
            "failed": self.cases - self.matched - self.documented,
            "failures": self.failures.iter().map(fail).collect::<Vec<_>>(),
            "extra_failures": self.extra_failures.iter().map(fail).collect::<Vec<_>>(),
            "stale_documented": self.stale_documented.iter().map(|(id, f)| json!({"id": id, "field": f})).collect::<Vec<_>>(),
        })
    }
}

/// The documented (record id, field) pairs of the "FastChat" section of KNOWN_DIFFERENCES.md.
///
/// Format: inside `## FastChat`, a line `Field: `a`, `b`` sets the fields for the bullets
/// `- `record-id`` that follow it.
pub fn documented_differences() -> HashSet<(String, String)> {
    let mut out = HashSet::new();
    let mut in_section = false;
    let mut fields: Vec<String> = Vec::new();
    for line in KNOWN_DIFFERENCES.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            in_section = title.trim() == "FastChat";
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some(rest) = line
            .strip_prefix("Field: ")
            .or_else(|| line.strip_prefix("Fields: "))
        {
            fields = backticked(rest);
        } else if let Some(rest) = line.trim_start().strip_prefix("- `") {
            if let Some(id) = rest.split('`').next() {
                for field in &fields {
                    out.insert((id.to_owned(), field.clone()));
                }
            }
        } else if line.starts_with("### ") {
            fields.clear();
        }
    }
    out
}

fn backticked(s: &str) -> Vec<String> {
    s.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// Runs the kit in `dir` (`goldens.jsonl`, and `adapter_goldens.jsonl` if present).
pub fn run_kit(dir: &Path) -> Result<Report> {
    let documented = documented_differences();
    let mut run = Run {
        registry: Registry::builtin(),
        report: Report::default(),
        documented,
        seen_documented: HashSet::new(),
    };
    for record in read_jsonl(&dir.join("goldens.jsonl"))? {
        run.check_golden(&record)?;
    }
    let adapters = dir.join("adapter_goldens.jsonl");
    if adapters.exists() {
        let records = read_jsonl(&adapters)?;
        let fixtures = FixtureDir::create(&records)?;
        for record in &records {
            run.check_adapter(record, fixtures.path())?;
        }
    }
    let mut stale: Vec<(String, String)> = run
        .documented
        .iter()
        .filter(|pair| !run.seen_documented.contains(*pair))
        .cloned()
        .collect();
    stale.sort();
    run.report.stale_documented = stale;
    Ok(run.report)
}

fn read_jsonl(path: &Path) -> Result<Vec<Value>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::InvalidInput,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line).map_err(|e| {
                Error::new(
                    ErrorKind::InvalidInput,
                    format!("{}:{}: invalid JSON: {e}", path.display(), n + 1),
                )
            })
        })
        .collect()
}

fn bad_record(id: &str, what: &str) -> Error {
    Error::new(ErrorKind::InvalidInput, format!("kit record {id}: {what}"))
}

/// A temporary folder holding the PEFT fixtures of the adapter records; removed on drop.
struct FixtureDir(PathBuf);

impl FixtureDir {
    fn create(records: &[Value]) -> Result<FixtureDir> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let root =
            std::env::temp_dir().join(format!("chatfmt-fastchat-kit-{}-{n}", std::process::id()));
        let io =
            |e: std::io::Error| Error::new(ErrorKind::InvalidInput, format!("fixture folder: {e}"));
        let dir = FixtureDir(root);
        std::fs::create_dir_all(&dir.0).map_err(io)?;
        for record in records {
            let Some(fixture) = record.get("fixture") else {
                continue;
            };
            let id = record["id"].as_str().unwrap_or("?");
            let sub = fixture["dir"]
                .as_str()
                .ok_or_else(|| bad_record(id, "fixture without dir"))?;
            if Path::new(sub).is_absolute() || sub.split('/').any(|c| c == "..") {
                return Err(bad_record(id, "fixture dir must be relative"));
            }
            let folder = dir.0.join(sub);
            std::fs::create_dir_all(&folder).map_err(io)?;
            if let Some(config) = fixture.get("adapter_config.json") {
                std::fs::write(folder.join("adapter_config.json"), config.to_string())
                    .map_err(io)?;
            }
        }
        Ok(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for FixtureDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn error_value(e: &Error) -> Value {
    json!({"error": {"type": e.kind().python_class().unwrap_or("chatfmt"), "kind": format!("{:?}", e.kind()), "message": e.message()}})
}

fn result_value(r: &Result<Value>) -> Value {
    match r {
        Ok(v) => json!({"ok": v}),
        Err(e) => error_value(e),
    }
}

/// Whether `ours` equals the golden `{"ok": v}` / `{"error": {"type"}}`.
fn result_matches(golden: &Value, ours: &Result<Value>) -> bool {
    match (golden.get("ok"), golden.get("error"), ours) {
        (Some(expected), _, Ok(actual)) => expected == actual,
        (_, Some(err), Err(e)) => {
            e.kind().python_class() == err.get("type").and_then(Value::as_str)
        }
        _ => false,
    }
}

fn parse_message(id: &str, v: &Value) -> Result<Option<Message>> {
    serde_json::from_value(v.clone()).map_err(|e| bad_record(id, &format!("bad message {v}: {e}")))
}

fn replay(id: &str, conv: &mut Conversation, ops: &[Value], skip_set_name: bool) -> Result<()> {
    for op in ops {
        match op["op"].as_str() {
            Some("set_system_message") => {
                let value = op["value"]
                    .as_str()
                    .ok_or_else(|| bad_record(id, "set_system_message without value"))?;
                conv.set_system_message(value);
            }
            Some("append_message") => {
                let role = op["role"]
                    .as_str()
                    .ok_or_else(|| bad_record(id, "append_message without role"))?;
                conv.append_message(role, parse_message(id, &op["message"])?);
            }
            Some("update_last_message") => {
                // An error here is part of the behaviour under test; later outputs show it.
                let _ = conv.update_last_message(parse_message(id, &op["message"])?);
            }
            Some("set_name") if skip_set_name => {}
            Some("set_name") => {
                conv.name = op["value"]
                    .as_str()
                    .ok_or_else(|| bad_record(id, "set_name without value"))?
                    .to_owned();
            }
            other => return Err(bad_record(id, &format!("unknown op {other:?}"))),
        }
    }
    Ok(())
}

struct Run {
    registry: Registry,
    report: Report,
    documented: HashSet<(String, String)>,
    seen_documented: HashSet<(String, String)>,
}

/// The comparisons of one record.
struct Checks<'a> {
    id: &'a str,
    counted: Vec<(String, Value, Value, bool)>,
    extra: Vec<(String, Value, Value, bool)>,
}

impl<'a> Checks<'a> {
    fn new(id: &'a str) -> Self {
        Checks {
            id,
            counted: Vec::new(),
            extra: Vec::new(),
        }
    }

    fn result(&mut self, field: &str, golden: &Value, ours: Result<Value>, counted: bool) {
        let ok = result_matches(golden, &ours);
        self.push(field, golden.clone(), result_value(&ours), ok, counted);
    }

    fn plain(&mut self, field: &str, golden: &Value, ours: Value, counted: bool) {
        let ok = golden == &ours;
        self.push(field, golden.clone(), ours, ok, counted);
    }

    fn push(&mut self, field: &str, expected: Value, actual: Value, ok: bool, counted: bool) {
        let entry = (field.to_owned(), expected, actual, ok);
        if counted {
            self.counted.push(entry);
        } else {
            self.extra.push(entry);
        }
    }
}

impl Run {
    fn finish(&mut self, checks: Checks) {
        let id = checks.id.to_owned();
        self.report.cases += 1;
        let mut failed = Vec::new();
        let mut any_documented = false;
        for (field, expected, actual, ok) in checks.counted {
            let key = (id.clone(), field.clone());
            if ok {
                continue;
            }
            if self.documented.contains(&key) {
                self.seen_documented.insert(key);
                any_documented = true;
            } else {
                failed.push(Failure {
                    id: id.clone(),
                    field,
                    expected,
                    actual,
                });
            }
        }
        for (field, expected, actual, ok) in checks.extra {
            let key = (id.clone(), field.clone());
            if ok {
                continue;
            }
            if self.documented.contains(&key) {
                self.seen_documented.insert(key);
            } else {
                self.report.extra_failures.push(Failure {
                    id: id.clone(),
                    field,
                    expected,
                    actual,
                });
            }
        }
        if !failed.is_empty() {
            self.report.failures.extend(failed);
        } else if any_documented {
            self.report.documented += 1;
        } else {
            self.report.matched += 1;
        }
    }

    fn check_golden(&mut self, record: &Value) -> Result<()> {
        let id = record["id"]
            .as_str()
            .ok_or_else(|| bad_record("?", "no id"))?
            .to_owned();
        match record["kind"].as_str() {
            Some("template_scenario") => self.check_scenario(&id, record),
            Some("api_edge") => self.check_api_edge(&id, record),
            other => Err(bad_record(&id, &format!("unknown kind {other:?}"))),
        }
    }

    fn template(&self, id: &str, record: &Value) -> Result<Conversation> {
        let name = record["template"]
            .as_str()
            .ok_or_else(|| bad_record(id, "no template"))?;
        self.registry.get(name)
    }

    fn check_scenario(&mut self, id: &str, record: &Value) -> Result<()> {
        let mut conv = self.template(id, record)?;
        let ops = record["ops"]
            .as_array()
            .ok_or_else(|| bad_record(id, "no ops"))?;
        replay(id, &mut conv, ops, false)?;
        let mut c = Checks::new(id);
        for field in COUNTED_FIELDS.iter().chain(&[
            "gradio_chatbot",
            "dict",
            "images",
            "openai_vision_messages",
            "system_message_vision",
        ]) {
            let golden = record
                .get(*field)
                .ok_or_else(|| bad_record(id, &format!("no {field}")))?;
            let counted = COUNTED_FIELDS.contains(field);
            match *field {
                "stop_str" => c.plain(field, golden, json!(conv.stop_str), counted),
                "stop_token_ids" => c.plain(field, golden, json!(conv.stop_token_ids), counted),
                "final_state" => c.plain(field, golden, conv.state(), counted),
                _ => c.result(field, golden, output(&conv, field), counted),
            }
        }
        self.finish(c);
        Ok(())
    }

    fn check_api_edge(&mut self, id: &str, record: &Value) -> Result<()> {
        let scenario = record["scenario"].as_str().unwrap_or_default();
        let mut c = Checks::new(id);
        let registry = &self.registry;
        match scenario {
            "unknown_template" => {
                let call = record["call"].as_str().unwrap_or_default();
                let name = call
                    .split('\'')
                    .nth(1)
                    .ok_or_else(|| bad_record(id, "cannot read the template name from call"))?;
                c.result(
                    "result",
                    &record["result"],
                    registry.get(name).map(|t| t.state()),
                    true,
                );
            }
            "update_last_on_empty" => {
                let mut conv = self.template(id, record)?;
                let r = conv
                    .update_last_message(Some(Message::from("x")))
                    .map(|()| Value::Null);
                c.result("result", &record["result"], r, true);
            }
            "duplicate_register" => {
                let conv = self.template(id, record)?;
                let mut local = registry.clone();
                let without = local.register(conv.clone(), false).map(|()| json!("ok"));
                let with = local.register(conv, true).map(|()| json!("ok"));
                c.result(
                    "register_without_override",
                    &record["register_without_override"],
                    without,
                    true,
                );
                c.result(
                    "register_with_override",
                    &record["register_with_override"],
                    with,
                    true,
                );
            }
            "system_template_escaped_braces"
            | "system_template_unknown_field"
            | "system_template_positional_field" => {
                let conv = constructed(id, &record["constructor"])?;
                c.result(
                    "prompt",
                    &record["prompt"],
                    conv.get_prompt().map(Value::from),
                    true,
                );
            }
            "copy_independence" => {
                let mut first = self.template(id, record)?;
                first.append_message("USER", Some(Message::from("mutated")));
                first.system_message.push_str(" (mutated)");
                let mut fresh = self.template(id, record)?;
                let (user, assistant) = match fresh.roles.as_slice() {
                    [u, a, ..] => (u.clone(), a.clone()),
                    _ => return Err(bad_record(id, "template needs two roles")),
                };
                fresh.append_message(user, Some(Message::from("Hello!")));
                fresh.append_message(assistant, None);
                c.result(
                    "fresh_prompt_after_mutating_other_copy",
                    &record["fresh_prompt_after_mutating_other_copy"],
                    fresh.get_prompt().map(Value::from),
                    true,
                );
                let stored = registry.get(record["template"].as_str().unwrap_or_default())?;
                c.plain(
                    "registry_messages_len",
                    &record["registry_messages_len"],
                    json!(stored.messages.len()),
                    true,
                );
            }
            "chatglm2_round_numbering_depends_on_name" => {
                let ops = record["ops"]
                    .as_array()
                    .ok_or_else(|| bad_record(id, "no ops"))?;
                for (field, skip) in [("prompt_renamed", false), ("prompt_original_name", true)] {
                    let mut conv = self.template(id, record)?;
                    replay(id, &mut conv, ops, skip)?;
                    c.result(
                        field,
                        &record[field],
                        conv.get_prompt().map(Value::from),
                        true,
                    );
                }
            }
            "none_assistant_in_middle" | "none_user_message" | "openai_vision_is_mistral" => {
                let mut conv = self.template(id, record)?;
                let ops = record["ops"]
                    .as_array()
                    .ok_or_else(|| bad_record(id, "no ops"))?;
                replay(id, &mut conv, ops, false)?;
                for field in [
                    "prompt",
                    "openai_messages",
                    "gradio_chatbot",
                    "openai_vision_messages_is_mistral",
                ] {
                    if let Some(golden) = record.get(field) {
                        c.result(field, golden, output(&conv, field), true);
                    }
                }
            }
            "stop_token_ids_aliasing" => {
                let mut first = self.template(id, record)?;
                c.plain(
                    "stop_token_ids_before",
                    &record["stop_token_ids_before"],
                    json!(first.stop_token_ids),
                    true,
                );
                if let Some(ids) = first.stop_token_ids.as_mut() {
                    ids.push(999);
                }
                let fresh = self.template(id, record)?;
                c.plain(
                    "fresh_copy_after_appending_999_to_other_copy",
                    &record["fresh_copy_after_appending_999_to_other_copy"],
                    json!(fresh.stop_token_ids),
                    true,
                );
                c.plain(
                    "registry_list_is_shared",
                    &record["registry_list_is_shared"],
                    json!(false),
                    true,
                );
            }
            "separator_style_int_values" => {
                let values: serde_json::Map<String, Value> = SeparatorStyle::ALL
                    .iter()
                    .map(|s| (s.name().to_owned(), json!(s.value())))
                    .collect();
                c.plain(
                    "style_values",
                    &record["style_values"],
                    Value::Object(values),
                    true,
                );
                let from_10 = SeparatorStyle::from_value(10)
                    .map(|s| json!(s.name()))
                    .ok_or_else(|| Error::new(ErrorKind::InvalidInput, "no style 10"));
                c.result("from_int_10", &record["from_int_10"], from_10, true);
            }
            "image_to_openai_format" => {
                // Round trip: an image read from the golden URL writes the same URL back.
                for field in ["bytes", "url"] {
                    let url = record[field]["ok"]
                        .as_str()
                        .ok_or_else(|| bad_record(id, "no url"))?;
                    let message = serde_json::from_value::<super::from_messages::ChatMessage>(json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}))
                        .map_err(|e| bad_record(id, &e.to_string()))?;
                    let conv = super::from_messages::conversation_from_openai_messages(
                        Conversation::new("image"),
                        &[message],
                        false,
                    )?;
                    let image = conv
                        .messages
                        .first()
                        .and_then(|(_, m)| m.as_ref())
                        .and_then(|m| m.images().first().cloned());
                    c.plain(
                        field,
                        &record[field],
                        json!({"ok": image.map(|i| i.openai_url())}),
                        true,
                    );
                }
            }
            other => {
                return Err(bad_record(
                    id,
                    &format!("unknown api_edge scenario {other:?}"),
                ))
            }
        }
        self.finish(c);
        Ok(())
    }

    fn check_adapter(&mut self, record: &Value, dir: &Path) -> Result<()> {
        let id = record["id"]
            .as_str()
            .ok_or_else(|| bad_record("?", "no id"))?
            .to_owned();
        let path = record["model_path"]
            .as_str()
            .ok_or_else(|| bad_record(&id, "no model_path"))?;
        let found = match_model_in(path, dir);
        let mut c = Checks::new(&id);
        c.plain("adapter", &record["adapter"], json!(found.adapter), true);
        match record.get("error") {
            Some(err) => c.result(
                "template",
                &json!({"error": err}),
                found.template.map(Value::from),
                true,
            ),
            None => c.result(
                "template",
                &json!({"ok": record["template"]}),
                found.template.map(Value::from),
                true,
            ),
        }
        let indices = |v: &Value| -> Value {
            json!(v
                .as_array()
                .map(|a| a.iter().map(|m| m["index"].clone()).collect::<Vec<_>>()))
        };
        let basename = record["basename"].as_str().unwrap_or_default();
        // The basename pass skips the catch-all adapter.
        let mut on_basename = matching_adapters(basename, dir);
        on_basename.retain(|&i| i + 1 < ADAPTERS.len());
        c.plain(
            "basename_matches",
            &indices(&record["basename_matches"]),
            json!(on_basename),
            false,
        );
        if !record["full_path_matches"].is_null() {
            c.plain(
                "full_path_matches",
                &indices(&record["full_path_matches"]),
                json!(matching_adapters(path, dir)),
                false,
            );
        }
        self.finish(c);
        Ok(())
    }
}

fn output(conv: &Conversation, field: &str) -> Result<Value> {
    let to_value = |v: Vec<Value>| Value::Array(v);
    match field {
        "prompt" => conv.get_prompt().map(Value::from),
        "openai_messages" => conv.to_openai_api_messages().map(to_value),
        "openai_vision_messages" => conv.to_openai_vision_api_messages(false).map(to_value),
        "openai_vision_messages_is_mistral" => {
            conv.to_openai_vision_api_messages(true).map(to_value)
        }
        "gradio_chatbot" => conv.to_gradio_chatbot().map(|pairs| json!(pairs)),
        "dict" => conv.dict(),
        "images" => Ok(json!(conv.images())),
        "system_message_vision" => Ok(json!(conv.system_message_for(true))),
        other => Err(Error::new(
            ErrorKind::InvalidInput,
            format!("unknown output {other}"),
        )),
    }
}

/// A conversation built from an api_edge `constructor`, with one user turn `hi` and the
/// assistant placeholder (the call the kit describes).
fn constructed(id: &str, ctor: &Value) -> Result<Conversation> {
    let name = ctor["name"]
        .as_str()
        .ok_or_else(|| bad_record(id, "constructor without name"))?;
    let mut conv = Conversation::new(name);
    let text = |key: &str| ctor.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(t) = text("system_template") {
        conv.system_template = t;
    }
    if let Some(m) = text("system_message") {
        conv.system_message = m;
    }
    if let Some(roles) = ctor.get("roles") {
        conv.roles =
            serde_json::from_value(roles.clone()).map_err(|e| bad_record(id, &e.to_string()))?;
    }
    if let Some(style) = text("sep_style") {
        conv.sep_style = Some(style.parse().map_err(|e: String| bad_record(id, &e))?);
    }
    if let Some(sep) = text("sep") {
        conv.sep = Some(sep);
    }
    let (user, assistant) = match conv.roles.as_slice() {
        [u, a, ..] => (u.clone(), a.clone()),
        _ => return Err(bad_record(id, "constructor needs two roles")),
    };
    conv.append_message(user, Some(Message::from("hi")));
    conv.append_message(assistant, None);
    Ok(conv)
}
