//! A template and a JSON context, split at the first NUL byte: rendering never panics, it renders or
//! returns an error. The clock is fixed so runs are repeatable.
#![no_main]

use chatfmt_jinja::{Clock, Context, Template};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (source, vars) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let source = String::from_utf8_lossy(source);
    let Ok(template) = Template::new("fuzz", &source) else {
        return;
    };
    let vars = match serde_json::from_slice::<serde_json::Value>(vars) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let ctx = Context {
        vars,
        clock: Clock::Fixed("2025-07-10T12:00:00".to_string()),
        ..Context::default()
    };
    match template.render(&ctx) {
        Ok(r) => assert!(r.generation_spans.iter().all(|&(s, e)| s <= e)),
        Err(e) => {
            let _ = format!("{e} {e:#}");
        }
    }
});
