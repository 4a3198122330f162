//! Causal loops (`chatfmt_jinja::causal`): which templates are causal in a list, and the prefix
//! renders `Template::render_prefixes` derives against the renders of the prefixes themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use chatfmt_jinja::{CausalLoop, Context, Rendered, Template};
use serde_json::json;

fn causal(source: &str) -> Option<CausalLoop> {
    let t = Template::new("t", source).expect("compiles");
    t.causal_loop("messages", "add_generation_prompt")
}

const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
                      {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

#[test]
fn a_top_level_loop_read_nowhere_else_is_causal_and_the_flag_after_it_too() {
    assert_eq!(causal(CHATML).map(|c| c.flag_only_after), Some(true));
    let before = format!("{{% if add_generation_prompt %}}x{{% endif %}}{CHATML}");
    assert_eq!(causal(&before).map(|c| c.flag_only_after), Some(false));
    let inside = "{% for m in messages %}{{ add_generation_prompt }}{% endfor %}";
    assert_eq!(causal(inside).map(|c| c.flag_only_after), Some(false));
    let in_macro =
        "{% macro m() %}{{ add_generation_prompt }}{% endmacro %}{% for x in messages %}{% endfor %}{{ m() }}";
    assert_eq!(causal(in_macro).map(|c| c.flag_only_after), Some(false));
    let set_after = "{% for x in messages %}{% endfor %}{% set add_generation_prompt = 1 %}";
    assert_eq!(causal(set_after).map(|c| c.flag_only_after), Some(true));
    // Statements before the loop and namespaces are fine.
    let ns = "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}";
    assert!(causal(ns).is_some());
}

#[test]
fn the_list_must_be_named_once_as_a_top_level_loop_iterable() {
    for source in [
        "{{ messages[0].content }}{% for m in messages %}{% endfor %}",
        "{% for m in messages %}{% endfor %}{{ messages | length }}",
        "{% if true %}{% for m in messages %}{% endfor %}{% endif %}",
        "{% filter upper %}{% for m in messages %}{% endfor %}{% endfilter %}",
        "{% set x %}{% for m in messages %}{% endfor %}{% endset %}",
        "{% macro f() %}{% for m in messages %}{% endfor %}{% endmacro %}{{ f() }}",
        "{% for m in messages | reverse %}{% endfor %}",
        "{% for messages in messages %}{% endfor %}",
        "{% set messages = [] %}{% for m in messages %}{% endfor %}",
        "{% for m in messages %}{% endfor %}{% set messages.x = 1 %}",
        "{% for m in other %}{% endfor %}",
    ] {
        assert_eq!(causal(source), None, "{source}");
    }
    // An attribute or key of that name is no mention of the variable.
    assert!(causal("{% for m in messages %}{{ m.messages }}{{ m['messages'] }}{% endfor %}").is_some());
}

#[test]
fn loops_with_a_filter_an_else_recursion_or_a_break_are_not_causal() {
    for (source, is_causal) in [
        ("{% for m in messages if m.content %}{% endfor %}", false),
        ("{% for m in messages %}{% else %}none{% endfor %}", false),
        ("{% for m in messages recursive %}{% endfor %}", false),
        (
            "{% for m in messages %}{% if m.stop %}{% break %}{% endif %}{% endfor %}",
            false,
        ),
        (
            "{% for m in messages %}{% if m.skip %}{% continue %}{% endif %}{% endfor %}",
            true,
        ),
        // A nested loop's break is its own; a break in its else is the outer loop's.
        (
            "{% for m in messages %}{% for c in m.content %}{% break %}{% endfor %}{% endfor %}",
            true,
        ),
        (
            "{% for m in messages %}{% for c in m.content %}{% else %}{% break %}{% endfor %}{% endfor %}",
            false,
        ),
    ] {
        assert_eq!(causal(source).is_some(), is_causal, "{source}");
    }
}

#[test]
fn only_attributes_of_loop_that_ignore_later_items_are_read() {
    for attr in ["index", "index0", "first", "previtem", "depth", "depth0"] {
        let source = format!("{{% for m in messages %}}{{{{ loop.{attr} }}}}{{% endfor %}}");
        assert!(causal(&source).is_some(), "{attr}");
    }
    for attr in ["last", "length", "revindex", "revindex0", "nextitem", "other"] {
        let source = format!("{{% for m in messages %}}{{{{ loop.{attr} }}}}{{% endfor %}}");
        assert!(causal(&source).is_none(), "{attr}");
    }
    for (source, is_causal) in [
        (
            "{% for m in messages %}{{ loop.cycle('a', 'b') }}{{ loop.changed(m.role) }}{% endfor %}",
            true,
        ),
        ("{% for m in messages %}{{ loop }}{% endfor %}", false),
        (
            "{% for m in messages %}{% set l = loop %}{{ l.index }}{% endfor %}",
            false,
        ),
        ("{% for m in messages %}{{ loop['length'] }}{% endfor %}", false),
        // A nested loop's `loop` is its own, but its iterable is read with the outer one.
        (
            "{% for m in messages %}{% for c in m.content %}{{ loop.last }}{% endfor %}{% endfor %}",
            true,
        ),
        (
            "{% for m in messages %}{% for c in [loop.last] %}{% endfor %}{% endfor %}",
            false,
        ),
        (
            "{% for m in messages %}{% macro f() %}{{ loop.length }}{% endmacro %}{{ f() }}{% endfor %}",
            false,
        ),
    ] {
        assert_eq!(causal(source).is_some(), is_causal, "{source}");
    }
}

/// Each prefix render `render_prefixes` derives, with and without the flag, against the render
/// of the prefix itself: the same text, or an error for both.
fn derives_every_prefix(source: &str, items: &[serde_json::Value]) {
    let t = Template::new("t", source).expect("compiles");
    let context = |n: usize, flag: bool| {
        Context::from_json(json!({"messages": &items[..n], "add_generation_prompt": flag})).expect("context")
    };
    let (ctx, alt) = (context(items.len(), false), context(items.len(), true));
    let mut out = Rendered::default();
    let names = ("messages", "add_generation_prompt");
    let prefixes = (t.render_prefixes(&ctx, Some(&alt), names, &|i| (true, i % 2 == 1), &mut out))
        .expect("renders")
        .expect("causal");
    assert_eq!(out, t.render(&ctx).expect("renders"), "{source}");
    // With spans, the whole render's come along, as a render with spans gives them.
    let tracked = Context {
        track_spans: true,
        ..ctx.clone()
    };
    let mut with_spans = Rendered::default();
    let again = (t.render_prefixes(&tracked, Some(&alt), names, &|i| (true, i % 2 == 1), &mut with_spans))
        .expect("renders")
        .expect("causal");
    assert_eq!(with_spans, t.render(&tracked).expect("renders"), "{source}");
    // Prefixes not asked for are not rendered.
    let mut unasked = Rendered::default();
    let none = (t.render_prefixes(&ctx, Some(&alt), names, &|_| (false, false), &mut unasked))
        .expect("renders")
        .expect("causal");
    assert!(none.iter().all(|p| p.tail.is_none() && p.alt_tail.is_none()) && unasked == out);
    assert!(again
        .iter()
        .zip(&prefixes)
        .all(|(a, b)| a.len == b.len
            && a.tail.as_ref().map(|t| t.as_ref().ok()) == b.tail.as_ref().map(|t| t.as_ref().ok())));
    assert_eq!(prefixes.len(), items.len());
    let shown = |r: chatfmt_jinja::Result<String>| r.map_err(|e| e.to_string());
    for (i, p) in prefixes.into_iter().enumerate() {
        let derived =
            |tail: chatfmt_jinja::Result<String>| shown(tail.map(|tail| format!("{}{tail}", &out.text[..p.len])));
        let plain = shown(t.render(&context(i, false)).map(|r| r.text));
        let tail = derived(p.tail.expect("asked for"));
        assert_eq!(tail.is_ok(), plain.is_ok(), "{source} [:{i}]");
        assert_eq!(tail.ok(), plain.ok(), "{source} [:{i}]");
        let with_flag = shown(t.render(&context(i, true)).map(|r| r.text));
        match p.alt_tail {
            Some(alt) => {
                let alt = derived(alt);
                assert_eq!(alt.is_ok(), with_flag.is_ok(), "{source} [:{i}] with the flag");
                assert_eq!(alt.ok(), with_flag.ok(), "{source} [:{i}] with the flag");
            }
            None => assert!(
                i % 2 == 0
                    || t.causal_loop("messages", "add_generation_prompt")
                        .is_some_and(|c| !c.flag_only_after)
            ),
        }
    }
}

#[test]
fn prefix_renders_follow_from_one_render() {
    let items: Vec<serde_json::Value> = (0..6)
        .map(|i| {
            let role = ["user", "assistant", "tool"][i % 3];
            json!({"role": role, "content": format!("m{i}")})
        })
        .collect();
    for source in [
        CHATML,
        // A namespace changed in the loop and read after it, and one made in the loop.
        "{% set ns = namespace(users=0, last='', inner=none) %}{% for m in messages %}\
         {% if m.role == 'user' %}{% set ns.users = ns.users + 1 %}{% endif %}{% set ns.last = m.role %}\
         {% set ns.inner = namespace(seen=loop.index) %}{% endfor %}\
         [{{ ns.users }} {{ ns.last }} {{ ns.inner.seen if ns.inner else '-' }}]\
         {% if add_generation_prompt and ns.last != 'assistant' %}<gen>{% endif %}",
        // The loop object's causal attributes.
        "{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}{% if loop.first %}F{% endif %}\
         {{ loop.previtem.role if loop.previtem else '' }}{{ loop.cycle('a', 'b') }}\
         {% if loop.changed(m.role) %}c{% endif %}{% endfor %}{{ add_generation_prompt }}",
        // Statements after the loop that raise for some prefixes, set names and define macros.
        "{% set x = 'top' %}{% set ns = namespace(n=0) %}{% for m in messages %}{% set x = m.role %}\
         {% set ns.n = ns.n + 1 %}{{ x }}{% endfor %}{% macro f(k) %}({{ k }}){% endmacro %}\
         {% set x = x ~ '!' %}{{ f(x) }}{% if ns.n % 3 == 2 %}{{ raise_exception('two') }}{% endif %}",
        // The flag read before the loop: prefixes without it still follow.
        "{% if add_generation_prompt %}G{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}",
    ] {
        derives_every_prefix(source, &items);
    }
}

#[test]
fn cyclers_joiners_self_and_loaders_are_not_causal() {
    for source in [
        "{% set c = cycler('a', 'b') %}{% for m in messages %}{{ c.next() }}{% endfor %}",
        "{% set j = joiner() %}{% for m in messages %}{{ j() }}{% endfor %}",
        "{% block b %}x{% endblock %}{% for m in messages %}{% endfor %}{{ self.b() }}",
        "{% for m in messages %}{% endfor %}{% include 'x' %}",
    ] {
        assert_eq!(causal(source), None, "{source}");
    }
    assert_eq!(causal(""), None, "an empty template has no loop");
}

/// Seeded random causal templates (namespaces, names set in and after the loop, macros, loop
/// attributes, whitespace control, the flag before, in or after the loop, statements after the
/// loop that raise) over seeded random conversations: every derived prefix render equals the
/// render of the prefix itself.
#[test]
fn random_causal_templates_derive_every_prefix() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    const PRE: &[&str] = &[
        "{% set ns = namespace(a=0, s='', last=none) %}",
        "{% set top = 'T' %}",
        "{% macro f(x) %}<{{ x }}>{% endmacro %}",
        "{{ 'pre' }}\n",
        "{% if add_generation_prompt %}G{% endif %}",
    ];
    const BODY: &[&str] = &[
        "{{ m.content }}",
        "{{- m.role | upper -}}",
        "{% if m.role == 'user' %}U{% elif m.role == 'assistant' %}A{% else %}O{% endif %}",
        "{% set ns.a = ns.a + 1 %}",
        "{% set ns.s = ns.s ~ m.role[0] %}",
        "{% set ns.last = m %}",
        "{{ loop.index }}",
        "{% if loop.first %}F{% endif %}",
        "{{ loop.cycle('x', 'y') }}",
        "{% if loop.previtem %}{{ loop.previtem.role }}{% endif %}",
        "{% set top = m.role %}{{ top }}",
        "{{ f(m.content) }}",
        "{% if add_generation_prompt %}g{% endif %}",
        "{%- for c in m.content %}{{ c }}{% endfor -%}",
    ];
    const POST: &[&str] = &[
        "{{ ns.a }}",
        "[{{ ns.s }}]",
        "{{ top }}",
        "{% if add_generation_prompt %}<gen>{% endif %}",
        "{% if ns.a % 3 == 1 %}{{ raise_exception('one') }}{% endif %}",
        "{% for k in range(ns.a) %}{{ k }}{% endfor %}",
        "{{ ns.last.role if ns.last else '-' }}",
        "{% set top = top ~ '!' %}{{ top }}",
    ];
    let mut checked = 0;
    for case in 0..300 {
        let mut source = String::new();
        // The namespace, `top` and the macro are defined whenever a piece may read them.
        source.push_str(PRE[0]);
        source.push_str(PRE[1]);
        source.push_str(PRE[2]);
        for piece in &PRE[3..] {
            if next(2) == 0 {
                source.push_str(piece);
            }
        }
        source.push_str(["{% for m in messages %}", "{%- for m in messages -%}"][next(2)]);
        for _ in 0..1 + next(4) {
            source.push_str(BODY[next(BODY.len())]);
        }
        source.push_str(["{% endfor %}", "{%- endfor %}"][next(2)]);
        for _ in 0..next(4) {
            source.push_str(POST[next(POST.len())]);
        }
        let items: Vec<serde_json::Value> = (0..1 + next(6))
            .map(|i| {
                let role = ["user", "assistant", "tool", "system"][next(4)];
                json!({"role": role, "content": format!("c{i}{}", "z".repeat(next(3)))})
            })
            .collect();
        let t = Template::new("t", &source).expect("compiles");
        let whole = Context::from_json(json!({"messages": &items, "add_generation_prompt": false})).expect("context");
        // A render that raises has no prefixes to derive: the raise is what every caller gets.
        if t.render(&whole).is_err() {
            continue;
        }
        assert!(causal(&source).is_some(), "case {case}: {source}");
        derives_every_prefix(&source, &items);
        checked += 1;
    }
    assert!(checked > 200, "only {checked} of 300 cases rendered");
}
