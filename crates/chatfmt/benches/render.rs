#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]
mod cases;

use cases::{chatml_builder, hf_dir, load_cases, minijinja_context, minijinja_env, options};
use chatfmt::ChatTemplate;
use chatfmt_jinja::Template;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde_json::{json, Map, Value as Json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
