//! Timing bursts on request, for the paired timings of `scripts/bench_compare.py`.
//!
//! The machine's speed drifts within seconds, so a ratio of two timings taken one after the other
//! (criterion's 3 s per case and side) moves with the drift. Here the driver asks for short bursts
//! of each side in turn, round after round, and takes the median of the rounds' ratios: both sides
//! of a ratio run within a fraction of a second of each other.
//!
//! Protocol, one line each way: `CASE SIDE MILLIS` on standard input (`SIDE` is `chatfmt`,
//! `minijinja` or `builder`, `CASE` a name such as `mistral-v0.3/3turn`), answered on standard output
//! with the mean microseconds a render took over a burst of at least `MILLIS` milliseconds. The
//! first line out is `ready` once every case is loaded and checked against its golden.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]
mod cases;

use cases::{chatml_builder, load_cases, minijinja_context, minijinja_env, options, Case};
use chatfmt::ChatTemplate;
use std::hint::black_box;
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

/// Runs `render` in batches until `burst` has passed; the mean time of one call, in µs. Batches
/// grow to about a millisecond, so that reading the clock costs nothing that counts.
fn burst_us(burst: Duration, mut render: impl FnMut() -> usize) -> f64 {
    let start = Instant::now();
    let (mut calls, mut batch) = (0u64, 1u64);
    loop {
        let batch_start = Instant::now();
        for _ in 0..batch {
            black_box(render());
        }
        calls += batch;
        let elapsed = start.elapsed();
        if elapsed >= burst {
            return elapsed.as_secs_f64() * 1e6 / calls as f64;
        }
        if batch_start.elapsed() < Duration::from_millis(1) {
            batch *= 2;
        }
    }
}

fn main() {
    let cases = load_cases();
    let env = minijinja_env();
    let templates: Vec<ChatTemplate> = cases
        .iter()
        .map(|case| {
            let template = ChatTemplate::new(&case.source, case.special_tokens.clone());
            let text = template
                .apply(&case.messages, &options(case))
                .expect("chatfmt render")
                .text;
            if let Some(golden) = &case.golden {
                assert_eq!(&text, golden, "chatfmt differs from the golden on {}", case.name);
            }
            template
        })
        .collect();
    let find = |name: &str| -> Option<(&Case, &ChatTemplate)> {
        let i = cases.iter().position(|c| c.name == name)?;
        Some((&cases[i], &templates[i]))
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "ready").unwrap();
    out.flush().unwrap();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, side, millis] = fields[..] else {
            panic!("expected `CASE SIDE MILLIS`, got {line:?}");
        };
        let (case, template) = find(name).unwrap_or_else(|| panic!("no case {name}"));
        let burst = Duration::from_millis(millis.parse().expect("MILLIS"));
        let us = match side {
            "chatfmt" => {
                let opts = options(case);
                let mut rendered = chatfmt::jinja::Rendered::default();
                burst_us(burst, || {
                    template
                        .apply_into(black_box(&case.messages), black_box(&opts), &mut rendered)
                        .unwrap();
                    rendered.text.len()
                })
            }
            "minijinja" => {
                let compiled = env.template_from_str(&case.source).unwrap();
                burst_us(burst, || {
                    compiled.render(minijinja_context(black_box(case))).unwrap().len()
                })
            }
            "builder" => {
                let mut text = String::new();
                burst_us(burst, || {
                    chatml_builder(&mut text, black_box(&case.messages));
                    text.len()
                })
            }
            _ => panic!("unknown side {side}"),
        };
        writeln!(out, "{us}").unwrap();
        out.flush().unwrap();
    }
}
