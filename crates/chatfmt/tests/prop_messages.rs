//! Property test: arbitrary message JSON (roles, content as strings, lists of parts, null or other
//! values, tool-call shapes, extra keys), tools and options, applied with every real template of the hf
//! kit's corpus and the bundled example, never panics: each render returns text or an error.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "support/kits.rs"]
mod kits;

use chatfmt::{ApplyOptions, ChatTemplate};
use chatfmt_jinja::Clock;
use proptest::prelude::*;
use serde_json::{json, Map, Value as Json};
use std::path::{Path, PathBuf};

fn templates() -> Vec<(String, ChatTemplate)> {
    let mut out = Vec::new();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/chatml-model");
    out.push((
        "examples/chatml-model".to_string(),
        ChatTemplate::from_model_dir(&example).expect("the bundled example loads"),
    ));
    let Some(corpus) = kits::kit_for_test("hf/corpus") else {
        return out;
    };
    let Ok(entries) = std::fs::read_dir(&corpus) else {
        panic!("hf kit corpus {} is not readable", corpus.display());
    };
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    let mut special = Map::new();
    special.insert("bos_token".into(), json!("<s>"));
    special.insert("eos_token".into(), json!("</s>"));
    for f in files {
        let source = std::fs::read_to_string(&f).expect("corpus file readable");
        out.push((f.display().to_string(), ChatTemplate::new(&source, special.clone())));
    }
    out
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z ]{0,12}",
        Just("<|im_end|>\n{{ x }}{% if %}".to_string()),
        "\\PC{0,8}",
    ]
}

fn scalar() -> impl Strategy<Value = Json> {
    prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i32>().prop_map(Json::from),
        (-1e6f64..1e6).prop_map(Json::from),
        text().prop_map(Json::from),
    ]
}

fn part() -> impl Strategy<Value = Json> {
    prop_oneof![
        text().prop_map(|t| json!({"type": "text", "text": t})),
        Just(json!({"type": "image"})),
        Just(json!({"type": "image_url", "image_url": {"url": "http://x/y.png"}})),
        scalar().prop_map(|v| json!({"type": v})),
        scalar(),
    ]
}

fn content() -> impl Strategy<Value = Json> {
    prop_oneof![
        4 => text().prop_map(Json::from),
        2 => prop::collection::vec(part(), 0..3).prop_map(Json::from),
        1 => scalar(),
        1 => Just(json!({"text": "a dict"})),
    ]
}

fn arguments() -> impl Strategy<Value = Json> {
    prop_oneof![
        Just(json!({"location": "Paris", "n": 2})),
        Just(Json::from("{\"location\": \"Paris\"}")),
        Just(Json::from("not json")),
        scalar(),
    ]
}

fn tool_call() -> impl Strategy<Value = Json> {
    prop_oneof![
        (text(), arguments())
            .prop_map(|(n, a)| json!({"id": "call_1", "type": "function", "function": {"name": n, "arguments": a}})),
        (text(), arguments()).prop_map(|(n, a)| json!({"name": n, "arguments": a})),
        arguments().prop_map(|a| json!({"function": a})),
        scalar(),
    ]
}

fn message() -> impl Strategy<Value = Json> {
    let role = prop_oneof![
        Just(Json::from("user")),
        Just(Json::from("assistant")),
        Just(Json::from("system")),
        Just(Json::from("tool")),
        Just(Json::from("ipython")),
        Just(Json::from("developer")),
        scalar(),
    ];
    let tool_calls = prop::option::weighted(0.3, prop::collection::vec(tool_call(), 0..3));
    let extra = prop::collection::vec(
        (
            prop_oneof![
                Just("reasoning_content"),
                Just("thinking"),
                Just("name"),
                Just("tool_call_id"),
                Just("weird_key"),
            ],
            scalar(),
        ),
        0..2,
    );
    (role, prop::option::weighted(0.9, content()), tool_calls, extra).prop_map(|(role, content, calls, extra)| {
        let mut m = Map::new();
        m.insert("role".into(), role);
        if let Some(c) = content {
            m.insert("content".into(), c);
        }
        if let Some(calls) = calls {
            m.insert("tool_calls".into(), Json::from(calls));
        }
        for (k, v) in extra {
            m.insert(k.into(), v);
        }
        Json::Object(m)
    })
}

fn tools() -> impl Strategy<Value = Option<Json>> {
    prop::option::weighted(
        0.3,
        prop_oneof![
            Just(
                json!([{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}}])
            ),
            Just(json!([{"name": "f"}])),
            scalar(),
        ],
    )
}

proptest! {
    // Each case renders with every template (~240), so a few dozen cases are thousands of renders.
    #![proptest_config(ProptestConfig { cases: 160, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn arbitrary_messages_never_panic(
        messages in prop::collection::vec(message(), 0..6),
        tools in tools(),
        add_generation_prompt in any::<bool>(),
        continue_final in prop::option::weighted(0.15, Just("content".to_string())),
    ) {
        let templates = TEMPLATES.with(|t| t.clone());
        let opts = ApplyOptions {
            add_generation_prompt,
            continue_final_message: continue_final,
            tools,
            clock: Clock::Fixed("2025-07-10T12:00:00".to_string()),
            ..ApplyOptions::default()
        };
        for (name, t) in templates.iter() {
            // Either outcome is fine; a panic fails the property (and proptest shrinks the input).
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.apply(&messages, &opts).map(|r| r.text)));
            prop_assert!(outcome.is_ok(), "{} panicked on {}", name, Json::from(messages.clone()));
        }
    }
}

thread_local! {
    static TEMPLATES: std::rc::Rc<Vec<(String, ChatTemplate)>> = std::rc::Rc::new(templates());
}
