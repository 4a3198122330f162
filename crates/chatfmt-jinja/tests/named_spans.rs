//! `Template::render_named_spans`: the text of a render with spans and the spans whose origin names
//! an accepted path, exactly those a render with resolved spans gives.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chatfmt_jinja::{Context, Origin, Rendered, Span, Template};
use serde_json::json;

fn names(origin: &Origin, accept: &dyn Fn(&str) -> bool) -> bool {
    match origin {
        Origin::Input(path) => accept(path),
        Origin::Computed(paths) => paths.iter().any(|p| accept(p)),
        Origin::Template => false,
    }
}

#[test]
fn named_spans_are_the_resolved_spans_that_name_an_accepted_path() {
    let sources = [
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim }}{{ m.tool_calls | default([]) | tojson }}{% endfor %}",
        "{% set ns = namespace(last='') %}{% for m in messages %}{% set ns.last = m.content %}{% endfor %}\
         {{ '[' + ns.last + ']' }}{{ messages | length }}{{ bos_token ~ messages[0]['content'][1:] }}",
        "{% macro say(m) %}{{ m.content }}{% endmacro %}{% for m in messages[::-1] %}{{ say(m) }}|{% endfor %}",
    ];
    let ctx = Context {
        track_spans: true,
        ..Context::from_json(json!({
            "messages": [
                {"role": "user", "content": " Hi "},
                {"role": "assistant", "content": "Yo", "tool_calls": [{"name": "f"}]},
            ],
            "bos_token": "<s>",
        }))
        .unwrap()
    };
    let accepts: [&dyn Fn(&str) -> bool; 4] = [
        &|p| p.starts_with("messages[0]"),
        &|p| p.starts_with("messages[1]"),
        &|p| p == "bos_token",
        &|_| false,
    ];
    let mut named = 0;
    for source in sources {
        let t = Template::new("named.jinja", source).unwrap();
        let full = t.render(&ctx).unwrap();
        for accept in accepts {
            let mut out = Rendered::default();
            let spans = t.render_named_spans(&ctx, &mut out, accept).unwrap();
            let expected: Vec<(usize, usize)> = (full.spans.iter())
                .filter(|s: &&Span| names(&s.origin, accept))
                .map(|s| (s.start, s.end))
                .collect();
            assert_eq!(out.text, full.text, "{source}");
            assert!(out.spans.is_empty(), "{source}");
            assert_eq!(spans, expected, "{source}");
            named += spans.len();
        }
    }
    assert!(named > 5, "the templates print text of the accepted values");
}

#[test]
fn a_path_named_by_several_spans_is_in_each() {
    let t = Template::new("twice.jinja", "{{ m.content }}|{{ m.content | upper }}|{{ m.content }}").unwrap();
    let ctx = Context {
        track_spans: true,
        ..Context::from_json(json!({"m": {"content": "hi"}})).unwrap()
    };
    let r = t.render(&ctx).unwrap();
    let origins: Vec<&Origin> = (r.spans.iter())
        .filter(|s| s.origin != Origin::Template)
        .map(|s| &s.origin)
        .collect();
    let input = Origin::Input("m.content".to_string());
    let computed = Origin::Computed(vec!["m.content".to_string()]);
    assert_eq!(origins, [&input, &computed, &input]);
}

/// Text a macro or a `{% set %}` block captured keeps the spans of its pieces when it is printed as
/// it is, alone or as an operand of a concatenation: the spans are those of the same template with
/// the captured text written in place.
#[test]
fn captured_text_keeps_the_spans_of_its_pieces() {
    let pairs = [
        (
            "{% macro am(c) %}{{ 'A: ' + c + '!' }}{% endmacro %}{{ am(m.content) }}",
            "{{ 'A: ' + m.content + '!' }}",
        ),
        (
            "{% macro am(c) %}A: {{ c }}{% endmacro %}{{ am(m.content) }}",
            "A: {{ m.content }}",
        ),
        (
            "{% macro vt(c) %}{% if c is string %}{{ c }}{% endif %}{% endmacro %}{{ '<u>' + vt(m.content) }}",
            "{{ '<u>' + m.content }}",
        ),
        (
            "{% macro inner(c) %}[{{ c }}]{% endmacro %}{% macro outer(c) %}A: {{ inner(c) }}{% endmacro %}\
             {{ outer(m.content) }}",
            "A: [{{ m.content }}]",
        ),
        (
            "{% macro wrap() %}<w>{{ caller() }}</w>{% endmacro %}{% call wrap() %}{{ m.content }}{% endcall %}",
            "<w>{{ m.content }}</w>",
        ),
        (
            "{% set c %}<b>{{ m.content }}{% endset %}{{ c }}|{{ c }}",
            "<b>{{ m.content }}|<b>{{ m.content }}",
        ),
    ];
    let ctx = Context {
        track_spans: true,
        ..Context::from_json(json!({"m": {"role": "user", "content": "Hi"}})).unwrap()
    };
    let spans = |source: &str| {
        let r = Template::new("captured.jinja", source).unwrap().render(&ctx).unwrap();
        let spans: Vec<(&str, &Origin)> = (r.spans.iter()).map(|s| (&r.text[s.start..s.end], &s.origin)).collect();
        format!("{spans:?}")
    };
    for (captured, inline) in pairs {
        assert_eq!(spans(captured), spans(inline), "{captured}");
        assert!(spans(captured).contains("Input(\"m.content\")"), "{captured}");
    }
}

/// What a statement that writes nothing reads (a condition on the value just printed, a `{% set %}`
/// that reads it again) is not part of the next text: each message's computed text names its own
/// content alone.
#[test]
fn reads_of_a_statement_that_writes_nothing_are_not_charged_to_the_next_text() {
    let sources = [
        "{% for m in messages %}{{ m.content | upper }}{% if m.content | length > 0 %}{% endif %}{% endfor %}",
        "{% for m in messages %}{% set c = m.content ~ '' %}{{ c }}{% if c %}{% endif %}{% endfor %}",
        "{% for m in messages %}{% set c = m.content ~ '' %}{{ c }}{% set full = c | trim | length > 0 %}\
         {% endfor %}",
    ];
    let ctx = Context {
        track_spans: true,
        ..Context::from_json(json!({"messages": [{"content": "Hi"}, {"content": "Yo"}, {"content": "Bye"}]})).unwrap()
    };
    for source in sources {
        let r = Template::new("unread.jinja", source).unwrap().render(&ctx).unwrap();
        let origins: Vec<&Origin> = r.spans.iter().map(|s| &s.origin).collect();
        let content = |i: usize| format!("messages[{i}].content");
        for (i, origin) in origins.iter().enumerate() {
            let Origin::Computed(paths) = origin else {
                panic!("{source}: {origins:?}")
            };
            assert!(paths.contains(&content(i)), "{source}: {origins:?}");
            assert!(
                !paths.iter().any(|p| p.ends_with(".content") && *p != content(i)),
                "{source}: {origins:?}"
            );
        }
        assert_eq!(origins.len(), 3, "{source}");
    }
}
