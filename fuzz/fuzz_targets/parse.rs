//! Arbitrary bytes as template source: compiling never panics, it parses or returns an error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    if let Err(e) = chatfmt_jinja::Template::new("fuzz", &source) {
        // Formatting the diagnostic (with its code frame) must not panic either.
        let _ = format!("{e} {e:#}");
    }
});
