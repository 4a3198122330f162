#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]
#[path = "../tests/support/kits.rs"]
mod kits;

use chatfmt::{ApplyOptions, ChatTemplate};
use chatfmt_jinja::Template;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use kits::read_jsonl;
use minijinja::value::{Kwargs, Serde};
use minijinja::{Environment, Error as MjError, ErrorKind as MjErrorKind, Value};
use serde_json::{json, Map, Value as Json};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const TEMPLATES: [(&str, &str); 5] = [
    ("chatml", "transformers--default-chatml"),
    ("llama3.1", "meta-llama--Llama-3.1-8B-Instruct"),
    ("mistral-v0.3", "mistralai--Mistral-7B-Instruct-v0.3"),
    ("qwen2.5", "Qwen--Qwen2.5-7B-Instruct"),
    ("gemma2", "google--gemma-2-2b-it"),
];

const SCENARIOS: [(&str, &str); 3] = [
    ("3turn", "multi_turn"),
    ("50turn", "long_50_turns"),
    ("tools", "tools_prompt"),
];

struct Case {
    name: String,
    template: String,
    source: String,
    special_tokens: Map<String, Json>,
    messages: Vec<Json>,
    tools: Option<Json>,
    golden: Option<String>,
}

fn hf_dir() -> PathBuf {
    kits::kits_base().join("hf")
}

fn load_cases() -> Vec<Case> {
    let dir = hf_dir();
    let scenarios: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scenarios.json")).expect("scenarios.json")).unwrap();
    let goldens = read_jsonl(&dir.join("goldens.jsonl")).expect("goldens.jsonl");
    let golden = |template: &str, scenario: &str| {
        goldens.iter().find(|g| {
            g["template"] == template && g["scenario"] == scenario && g["options"]["add_generation_prompt"] == true
        })
    };
    let mut cases = Vec::new();
    for (short, id) in TEMPLATES {
        let source = std::fs::read_to_string(dir.join("corpus").join(format!("{id}.jinja"))).expect("corpus template");
        let special_tokens = golden(id, "multi_turn").unwrap()["special_tokens"]
            .as_object()
            .unwrap()
            .clone();
        for (scenario_short, scenario) in SCENARIOS {
            let input = &scenarios["scenarios"][scenario];
            let mut messages = input["messages"].as_array().unwrap().clone();
            let expected = golden(id, scenario).unwrap();
            let golden = if expected["status"] == "ok" {
                Some(expected["output"].as_str().unwrap().to_string())
            } else if scenario == "long_50_turns" {
                messages.retain(|m| m["role"] != "system");
                None
            } else {
                continue;
            };
            cases.push(Case {
                name: format!("{short}/{scenario_short}"),
                template: id.to_string(),
                source: source.clone(),
                special_tokens: special_tokens.clone(),
                messages,
                tools: input.get("tools").cloned(),
                golden,
            });
        }
    }
    cases
}

fn options(case: &Case) -> ApplyOptions {
    ApplyOptions {
        add_generation_prompt: true,
        tools: case.tools.clone(),
        ..ApplyOptions::default()
    }
}

fn write_py_json(out: &mut String, value: &Json, indent: Option<usize>, depth: usize) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(width) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(width * depth));
        }
    };
    let item_sep = if indent.is_some() { "," } else { ", " };
    match value {
        Json::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, depth + 1);
                write_py_json(out, item, indent, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Json::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, depth + 1);
                write!(out, "{}: ", Json::String(k.clone())).unwrap();
                write_py_json(out, v, indent, depth + 1);
            }
            newline(out, depth);
            out.push('}');
        }
        other => write!(out, "{other}").unwrap(),
    }
}

fn tojson(value: &Value, kwargs: Kwargs) -> Result<Value, MjError> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    kwargs.assert_all_used()?;
    let json = serde_json::to_value(value)
        .map_err(|e| MjError::new(MjErrorKind::InvalidOperation, "cannot serialize to JSON").with_source(e))?;
    let mut out = String::new();
    write_py_json(&mut out, &json, indent, 0);
    Ok(Value::from_safe_string(out))
}

fn minijinja_env() -> Environment<'static> {
    let mut env = Environment::new();
    let mut syntax = minijinja::syntax::SyntaxConfig::builder();
    syntax.trim_blocks(true).lstrip_blocks(true);
    env.set_syntax(syntax.build().unwrap());
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_filter("tojson", tojson);
    env.add_function("raise_exception", |msg: String| -> Result<Value, MjError> {
        Err(MjError::new(MjErrorKind::InvalidOperation, msg))
    });
    env
}

fn minijinja_context(case: &Case) -> Value {
    let mut vars = case.special_tokens.clone();
    vars.insert("messages".to_string(), Json::Array(case.messages.clone()));
    vars.insert("tools".to_string(), case.tools.clone().unwrap_or(Json::Null));
    vars.insert("documents".to_string(), Json::Null);
    vars.insert("add_generation_prompt".to_string(), Json::Bool(true));
    Value::from(Serde(&vars))
}

fn chatml_builder(out: &mut String, messages: &[Json]) {
    out.clear();
    for m in messages {
        out.push_str("<|im_start|>");
        out.push_str(m["role"].as_str().unwrap_or_default());
        out.push('\n');
        out.push_str(m["content"].as_str().unwrap_or_default());
        out.push_str("<|im_end|>\n");
    }
    out.push_str("<|im_start|>assistant\n");
}

fn report_path(file: &str) -> Option<PathBuf> {
    std::env::var_os("CHATFMT_BENCH_OUT").map(|dir| PathBuf::from(dir).join(file))
}

fn render(c: &mut Criterion) {
    let cases = load_cases();
    let env = minijinja_env();
    let mut outputs = Map::new();
    for case in &cases {
        let template = ChatTemplate::new(&case.source, case.special_tokens.clone());
        let opts = options(case);
        let text = template.apply(&case.messages, &opts).expect("chatfmt render").text;
        if let Some(golden) = &case.golden {
            assert_eq!(&text, golden, "chatfmt differs from the golden on {}", case.name);
        }
        let mj = env
            .template_from_str(&case.source)
            .and_then(|t| t.render(minijinja_context(case)));
        let mj_text = match &mj {
            Ok(s) => Json::String(s.clone()),
            Err(e) => json!({ "error": e.to_string() }),
        };
        outputs.insert(
            case.name.clone(),
            json!({ "template": case.template, "messages": case.messages, "tools": case.tools,
                    "special_tokens": case.special_tokens, "golden": case.golden, "chatfmt": text, "minijinja": mj_text }),
        );
        // The output buffer is reused across iterations, as the builder's is.
        let mut out = chatfmt::jinja::Rendered::default();
        c.bench_function(&format!("chatfmt/{}", case.name), |b| {
            b.iter(|| {
                template
                    .apply_into(black_box(&case.messages), black_box(&opts), &mut out)
                    .unwrap();
                out.text.len()
            })
        });
        if mj.as_deref().ok() == Some(text.as_str()) {
            let compiled = env.template_from_str(&case.source).unwrap();
            c.bench_function(&format!("minijinja/{}", case.name), |b| {
                b.iter(|| compiled.render(minijinja_context(black_box(case))).unwrap())
            });
        } else {
            eprintln!("minijinja output differs on {}: not timed", case.name);
        }
        if case.name == "chatml/3turn" {
            let mut out = String::new();
            chatml_builder(&mut out, &case.messages);
            assert_eq!(&out, &text);
            c.bench_function("builder/chatml/3turn", |b| {
                b.iter(|| {
                    chatml_builder(&mut out, black_box(&case.messages));
                    out.len()
                })
            });
        }
    }
    if let Some(path) = report_path("outputs.json") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string_pretty(&outputs).unwrap()).unwrap();
    }
}

fn corpus() -> Vec<(String, String)> {
    let mut files: Vec<_> = std::fs::read_dir(hf_dir().join("corpus"))
        .expect("corpus dir")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

fn median_compile_time(name: &str, source: &str) -> Duration {
    let mut runs = 1u32;
    loop {
        let start = Instant::now();
        for _ in 0..runs {
            let _ = black_box(Template::new(name, black_box(source)));
        }
        if start.elapsed() > Duration::from_millis(2) {
            break;
        }
        runs *= 2;
    }
    let mut samples: Vec<Duration> = (0..11)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..runs {
                let _ = black_box(Template::new(name, black_box(source)));
            }
            start.elapsed() / runs
        })
        .collect();
    samples.sort();
    samples[samples.len() / 2]
}

fn compile(c: &mut Criterion) {
    let corpus = corpus();
    let mut times: Vec<(Duration, &str)> = corpus
        .iter()
        .map(|(n, s)| (median_compile_time(n, s), n.as_str()))
        .collect();
    times.sort();
    let median = times[times.len() / 2];
    let max = times[times.len() - 1];
    println!(
        "compile: {} templates, median {:.1} µs ({}), max {:.1} µs ({})",
        times.len(),
        median.0.as_secs_f64() * 1e6,
        median.1,
        max.0.as_secs_f64() * 1e6,
        max.1
    );
    if let Some(path) = report_path("compile.json") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let per: Map<String, Json> = times
            .iter()
            .map(|(d, n)| (n.to_string(), json!(d.as_secs_f64() * 1e6)))
            .collect();
        std::fs::write(path, serde_json::to_string_pretty(&per).unwrap()).unwrap();
    }
    c.bench_function("compile/whole_corpus", |b| {
        b.iter(|| {
            for (name, source) in &corpus {
                let _ = black_box(Template::new(name, black_box(source)));
            }
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(2));
    targets = render, compile
}
criterion_main!(benches);
