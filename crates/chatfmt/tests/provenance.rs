//! The rendered text knows where each span came from: template text, a message field, or computed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "support/kits.rs"]
mod kits;

use chatfmt::jinja::{Origin, Rendered};
use chatfmt::{ApplyOptions, ChatTemplate, MaskSource, SpanOptions};
use serde_json::{json, Value};
use std::path::Path;

fn render(template: &ChatTemplate, messages: &[Value]) -> Rendered {
    let opts = ApplyOptions {
        add_generation_prompt: true,
        track_spans: true,
        ..ApplyOptions::default()
    };
    template.apply(messages, &opts).expect("renders")
}

/// The text of each span whose origin is the given input path.
fn input_text(r: &Rendered, path: &str) -> Vec<String> {
    r.spans
        .iter()
        .filter(|s| s.origin == Origin::Input(path.to_string()))
        .map(|s| r.text[s.start..s.end].to_string())
        .collect()
}

/// Provenance masks with message spans, `markers` ending a model's turn.
fn provenance(markers: &[&str]) -> SpanOptions {
    SpanOptions {
        source: MaskSource::Provenance,
        stop_markers: markers.iter().map(|m| m.to_string()).collect(),
        message_spans: true,
        deadline: None,
    }
}

/// Spans tile the text exactly: contiguous, in order, covering every byte.
fn assert_tiles(r: &Rendered) {
    let mut at = 0;
    for s in &r.spans {
        assert_eq!(s.start, at, "spans must be contiguous: {:?}", r.spans);
        assert!(s.end > s.start);
        at = s.end;
    }
    assert_eq!(at, r.text.len());
}

#[test]
fn chatml_example_spans_name_message_fields() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/chatml-model");
    let t = ChatTemplate::from_model_dir(&root).expect("example loads");
    let messages = vec![
        json!({"role": "system", "content": "Be brief."}),
        json!({"role": "user", "content": "Héllo <|im_end|> there"}),
    ];
    let r = render(&t, &messages);
    assert_tiles(&r);
    assert_eq!(input_text(&r, "messages[0].content"), ["Be brief."]);
    assert_eq!(input_text(&r, "messages[1].content"), ["Héllo <|im_end|> there"]);
    assert_eq!(input_text(&r, "messages[1].role"), ["user"]);
    // The special-token text typed by the user is input, the template's own markers are template text.
    let template_text: String = r
        .spans
        .iter()
        .filter(|s| s.origin == Origin::Template)
        .map(|s| &r.text[s.start..s.end])
        .collect();
    assert!(template_text.contains("<|im_start|>assistant\n"));
    assert!(!template_text.contains("there"));
}

#[test]
fn trimmed_content_in_a_real_template_keeps_its_origin() {
    let Some(path) = kits::kit_for_test("hf/corpus/meta-llama--Llama-3.1-8B-Instruct.jinja") else {
        return;
    };
    let source = std::fs::read_to_string(&path).expect("corpus file readable");
    let mut special = serde_json::Map::new();
    special.insert("bos_token".into(), json!("<|begin_of_text|>"));
    let t = ChatTemplate::new(&source, special);
    let messages = vec![json!({"role": "user", "content": "  What is 2 + 2?  "})];
    let r = render(&t, &messages);
    assert_tiles(&r);
    // Llama 3.1 prints `message['content'] | trim`: the trimmed slice still points at the message.
    assert_eq!(input_text(&r, "messages[0].content"), ["What is 2 + 2?"]);
    // Special tokens are template variables too.
    assert_eq!(input_text(&r, "bos_token"), ["<|begin_of_text|>"]);
}

#[test]
fn computed_text_names_the_values_it_read() {
    let t = ChatTemplate::new(
        "{% for m in messages %}{% for c in m.tool_calls %}{{ c.function | tojson }}{% endfor %}{{ 1 + 2 }}{% endfor %}",
        Default::default(),
    );
    let messages = vec![json!({"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]})];
    let r = render(&t, &messages);
    assert_tiles(&r);
    let origins: Vec<&Origin> = r.spans.iter().map(|s| &s.origin).collect();
    assert_eq!(
        origins,
        [
            &Origin::Computed(vec![
                "messages[0].tool_calls".into(),
                "messages[0].tool_calls[0].function".into()
            ]),
            &Origin::Computed(vec![]),
        ]
    );
}

/// Text computed from a message's content alone names that content however the template builds
/// it: an operand of `+` after a literal, a value `{% set %}` bound before other output (a macro's
/// result, a `~` concatenation, a `set` block), read again later in another expression.
#[test]
fn computed_content_keeps_its_origin_through_set_and_concatenation() {
    let messages = vec![
        json!({"role": "user", "content": "Hi there"}),
        json!({"role": "tool", "content": "TOOL"}),
    ];
    let computed_content = |r: &Rendered, i: usize| -> Vec<String> {
        let want = Origin::Computed(vec![format!("messages[{i}].content")]);
        (r.spans.iter())
            .filter(|s| s.origin == want)
            .map(|s| r.text[s.start..s.end].to_string())
            .collect()
    };
    let sources = [
        "{% for m in messages %}<{{ m.role }}>{{ '<t>' + m.content | tojson }}{% endfor %}",
        "{% for m in messages %}{% set c = m.content ~ '' %}<{{ m.role }}>{{ c | tojson }}{% endfor %}",
        "{% macro r(c) %}{{ c }}{% endmacro %}{% for m in messages %}{% set c = r(m.content) | trim %}\
         <{{ m.role }}>{{ '' ~ c | tojson }}{% endfor %}",
        "{% for m in messages %}{% set c %}{{ m.content }}{% endset %}<{{ m.role }}>{{ c | tojson }}{% endfor %}",
    ];
    for source in sources {
        let r = render(&ChatTemplate::new(source, Default::default()), &messages);
        assert_tiles(&r);
        assert_eq!(computed_content(&r, 0), ["\"Hi there\""], "{source}");
        assert_eq!(computed_content(&r, 1), ["\"TOOL\""], "{source}");
    }
}

/// Qwen3.5's template builds each message's content with a macro and `| trim` in a `{% set %}`
/// before printing it: every assistant reply is still in an assistant span, and no user text is.
#[test]
fn qwen3_5_provenance_masks_cover_every_assistant_reply() {
    let Some(path) = kits::kit_for_test("hf/corpus/Qwen--Qwen3.5-4B.jinja") else {
        return;
    };
    let source = std::fs::read_to_string(&path).expect("corpus file readable");
    let t = ChatTemplate::new(&source, Default::default());
    let messages = vec![
        json!({"role": "user", "content": "Hi"}),
        json!({"role": "assistant", "content": "Hello there!"}),
        json!({"role": "user", "content": "USER-SECRET question"}),
        json!({"role": "assistant", "content": "Answer."}),
    ];
    let found = t
        .apply_with_spans(&messages, &ApplyOptions::default(), &provenance(&["<|im_end|>"]))
        .expect("renders");
    let text = &found.rendered.text;
    let trained: Vec<&str> = found.assistant_spans.iter().map(|&(a, b)| &text[a..b]).collect();
    assert_eq!(trained.len(), 2, "{trained:?}");
    assert!(trained[0].starts_with("Hello there!"), "{trained:?}");
    assert!(trained[1].ends_with("Answer.<|im_end|>"), "{trained:?}");
    assert!(!trained.iter().any(|s| s.contains("USER-SECRET")), "{trained:?}");
    let content: Vec<&str> = (found.messages.iter())
        .map(|m| m.content.first().map_or("", |&(a, b)| &text[a..b]))
        .collect();
    assert_eq!(content, ["Hi", "Hello there!", "USER-SECRET question", "Answer."]);
}

/// The text of a template's assistant spans (provenance masks, `<call>` and `<end>` ending a turn).
fn trained(source: &str, messages: &[Value]) -> Vec<String> {
    trained_with(source, messages, &["<call>", "<end>"])
}

/// The text of a template's assistant spans, `markers` ending a turn.
fn trained_with(source: &str, messages: &[Value], markers: &[&str]) -> Vec<String> {
    let t = ChatTemplate::new(source, Default::default());
    let found = t
        .apply_with_spans(messages, &ApplyOptions::default(), &provenance(markers))
        .expect("renders");
    (found.assistant_spans.iter())
        .map(|&(a, b)| found.rendered.text[a..b].to_string())
        .collect()
}

/// A tool's output that the template writes inside the assistant's turn, in text computed from more
/// than the output (Gemma 4 answers a call in the model's own turn), is not trained on; nor is the
/// tool call's name the tool result's header repeats (gpt-oss), which would stretch the caller's turn.
#[test]
fn tool_output_and_repeated_names_stay_out_of_assistant_spans() {
    let messages = vec![
        json!({"role": "user", "content": "Hi"}),
        json!({"role": "assistant", "content": "Checking.", "tool_calls": [{"name": "clock"}]}),
        json!({"role": "tool", "name": "clock", "content": "SECRET-OUTPUT"}),
        json!({"role": "assistant", "content": "Noon."}),
    ];
    let inline = "{% for m in messages %}{% if m.role == 'assistant' %}<a>\
        {% for t in messages[loop.index0 + 1:] %}{% if t.role == 'tool' %}\
        {{ (t.name ~ ': ' ~ t.content) | trim }}{% endif %}{% endfor %}{{ m.content }}<end>\
        {% elif m.role == 'user' %}<u>{{ m.content }}</u>{% endif %}{% endfor %}";
    let spans = trained(inline, &messages);
    assert!(spans.iter().all(|s| !s.contains("SECRET")), "{spans:?}");
    assert!(spans.iter().any(|s| s.contains("Checking.")), "{spans:?}");
    // The final assistant message renders differently (as gpt-oss's final channel), so the prefix
    // that ends with the call is not a prefix of the whole render and the turn comes from provenance.
    let header = "{% for m in messages %}{% if m.role == 'assistant' %}{% if loop.last %}<final>{% endif %}\
        <a>{% if m.tool_calls %}{{ m.tool_calls[0].name }}<call>{% else %}{{ m.content }}<end>{% endif %}\
        {% elif m.role == 'tool' %}<t {{ messages[loop.index0 - 1].tool_calls[0].name }}>{{ m.content }}</t>\
        {% else %}<u>{{ m.content }}</u>{% endif %}{% endfor %}";
    let spans = trained(header, &messages);
    assert_eq!(spans, ["<a>clock<call>", "<final><a>Noon.<end>"], "{spans:?}");
}

/// A conversation that opens with the assistant trains on that message, not on what comes before it
/// (the BOS, a default system prompt, the header), whether or not the template can render no messages.
#[test]
fn a_first_assistant_message_is_trained_from_its_content() {
    let messages = vec![
        json!({"role": "assistant", "content": "I open."}),
        json!({"role": "user", "content": "Hi"}),
        json!({"role": "assistant", "content": "Hello."}),
    ];
    // Reads messages[0], so it cannot render no messages.
    let reads_first = "<s>{% if messages[0].role != 'system' %}[sys]Default.[/sys]{% endif %}\
        {% for m in messages %}<{{ m.role }}>{{ m.content }}<end>{% endfor %}\
        {% if add_generation_prompt %}<assistant>{% endif %}";
    assert_eq!(trained(reads_first, &messages), ["I open.<end>", "Hello.<end>"]);
    // Renders no messages as the default system prompt: g_0 is that and the header.
    let renders_empty = "<s>[sys]Default.[/sys]{% for m in messages %}<{{ m.role }}>{{ m.content }}<end>\
        {% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}";
    assert_eq!(trained(renders_empty, &messages), ["I open.<end>", "Hello.<end>"]);
    // What the model writes before the content (its reasoning, after the generation prompt that
    // later assistant turns show) is trained on in the first message too.
    let thinking = vec![
        json!({"role": "assistant", "content": "I open.", "reasoning_content": "r1"}),
        json!({"role": "user", "content": "Hi"}),
        json!({"role": "assistant", "content": "Hello.", "reasoning_content": "r2"}),
    ];
    let reasons = "<s>{% if messages[0].role != 'system' %}[sys]Default.[/sys]{% endif %}\
        {% for m in messages %}{% if m.role == 'assistant' %}<assistant><think>{{ m.reasoning_content }}</think>\
        {{ m.content }}<end>{% else %}<u>{{ m.content }}</u>{% endif %}{% endfor %}\
        {% if add_generation_prompt %}<assistant><think>{% endif %}";
    assert_eq!(
        trained(reasons, &thinking),
        ["r1</think>I open.<end>", "r2</think>Hello.<end>"]
    );
}

/// A conversation that opens with the assistant, in a template that prints the role into the header
/// (`'<|im_start|>' + m.role`): the role names the turn, it is not the message's own text.
#[test]
fn a_role_printed_into_the_header_is_not_trained() {
    let template = "{%- if messages[0].role == 'system' %}{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}{%- endif %}\
        {%- for m in messages %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}\
        {%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";
    let messages = vec![
        json!({"role": "assistant", "content": "I am the opener."}),
        json!({"role": "user", "content": "Hi"}),
    ];
    assert_eq!(
        trained_with(template, &messages, &["<|im_end|>"]),
        ["I am the opener.<|im_end|>"]
    );
}

/// A message with empty content produces no character of its own. Where the turns come from
/// provenance (the last assistant message renders differently, so prefixes ending with one are not
/// prefixes of the whole), its header and end marker must not join the next assistant's span: the
/// empty message takes the text up to where the prefix after it ends, and the reply after it starts
/// at its own header.
#[test]
fn an_empty_message_keeps_its_text_out_of_the_next_reply() {
    let template = "{%- for m in messages -%}\
        {%- if m.role == 'assistant' -%}<a>{{ m.content }}{{ '</s>' if loop.last else '<end>' }}\
        {%- else -%}<{{ 'u' if m.role == 'user' else 't' }}>{{ m.content }}<end>{%- endif -%}\
        {%- endfor -%}{%- if add_generation_prompt -%}<a>{%- endif -%}";
    let messages = vec![
        json!({"role": "user", "content": "Hi"}),
        json!({"role": "assistant", "content": "calling"}),
        json!({"role": "tool", "content": ""}),
        json!({"role": "assistant", "content": "Hello!"}),
        json!({"role": "user", "content": "Bye"}),
    ];
    assert_eq!(trained(template, &messages), ["calling<end>", "Hello!<end>"]);
    // The same with the tool's output present: the spans do not move with the content.
    let mut with_output = messages.clone();
    with_output[2] = json!({"role": "tool", "content": "x"});
    assert_eq!(trained(template, &with_output), ["calling<end>", "Hello!<end>"]);
}

/// A reply a macro prints with text around it (`{{ 'A: ' + c }}` in its body, or `'<u>' + vt(c)` at
/// the call) is trained as it is when the template writes the same text without the macro, and no
/// user text joins it. The last message renders differently, so the turns come from provenance.
#[test]
fn text_a_macro_builds_from_content_belongs_to_its_message() {
    let messages = vec![
        json!({"role": "user", "content": "USER-SECRET"}),
        json!({"role": "assistant", "content": "Hello there!"}),
        json!({"role": "user", "content": "Bye"}),
    ];
    let pairs = [
        (
            "{% macro am(c) %}{{ 'A: ' + c + '<end>' }}{% endmacro %}{% for m in messages %}\
             {% if m.role == 'user' %}{{ 'U: ' + m.content + '\\n' }}{% endif %}\
             {% if m.role == 'assistant' %}{{ am(m.content) }}{% endif %}{% if loop.last %}[SEP]{% endif %}{% endfor %}",
            "{% for m in messages %}{% if m.role == 'user' %}{{ 'U: ' + m.content + '\\n' }}{% endif %}\
             {% if m.role == 'assistant' %}{{ 'A: ' + m.content + '<end>' }}{% endif %}{% if loop.last %}[SEP]{% endif %}{% endfor %}",
        ),
        (
            "{% macro vt(c) %}{% if c is string %}{{ c }}{% endif %}{% endmacro %}{% for m in messages %}\
             {% if m.role == 'assistant' %}<a>{{ vt(m.content) }}<end>{% else %}{{ '<u>' + vt(m.content) }}{% endif %}\
             {% if loop.last %}[SEP]{% endif %}{% endfor %}",
            "{% for m in messages %}{% if m.role == 'assistant' %}<a>{{ m.content }}<end>{% else %}<u>{{ m.content }}\
             {% endif %}{% if loop.last %}[SEP]{% endif %}{% endfor %}",
        ),
    ];
    for (with_macro, inline) in pairs {
        let spans = trained(with_macro, &messages);
        assert_eq!(spans, trained(inline, &messages), "{with_macro}");
        assert!(spans.iter().any(|s| s.contains("Hello there!")), "{spans:?}");
        assert!(!spans.iter().any(|s| s.contains("SECRET")), "{spans:?}");
    }
}

/// A value `{% set %}` computed from a message, printed and then read again (`has_content = c |
/// trim | length > 0`), does not make the next message's text look computed from both: the
/// reply right after it is trained as it is without that read.
#[test]
fn a_value_read_again_after_printing_leaves_the_next_reply_its_own() {
    let messages = vec![
        json!({"role": "user", "content": "Hi"}),
        json!({"role": "assistant", "content": "Let me check."}),
        json!({"role": "assistant", "content": "Hello!"}),
        json!({"role": "user", "content": "Bye"}),
    ];
    let template = |read_again: &str| {
        format!(
            "{{% for m in messages %}}{{% if loop.first or m.role != messages[loop.index0 - 1].role %}}\
             <{{{{ m.role }}}}>{{% endif %}}{{% set c = m.content ~ '' %}}{{{{ c }}}}{read_again}{{% endfor %}}"
        )
    };
    let spans = trained(&template("{% set has_content = c | trim | length > 0 %}"), &messages);
    assert_eq!(spans, trained(&template(""), &messages));
    assert!(spans.iter().any(|s| s.contains("Hello!")), "{spans:?}");
}

/// Phi-3's templates write the eos after the last message when there is no generation prompt, so
/// no render of a prefix is a prefix of the whole: the turns still end where each message's text
/// ends, and only the replies (with their end marker) are trained, with or without the prompt.
#[test]
fn text_written_after_the_last_message_does_not_hide_the_turns() {
    let template = "{% for m in messages %}{{ '<|' + m.role + '|>\\n' + m.content + '<|end|>\\n' }}{% endfor %}\
        {% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% else %}{{ eos_token }}{% endif %}";
    let messages = vec![
        json!({"role": "user", "content": "Hi"}),
        json!({"role": "assistant", "content": "Hello"}),
        json!({"role": "user", "content": ""}),
        json!({"role": "assistant", "content": "Bye now"}),
        json!({"role": "user", "content": "Q"}),
    ];
    let mut tokens = serde_json::Map::new();
    tokens.insert("eos_token".into(), json!("<|endoftext|>"));
    let t = ChatTemplate::new(template, tokens);
    let spans = provenance(&["<|end|>"]);
    for add_generation_prompt in [false, true] {
        let opts = ApplyOptions {
            add_generation_prompt,
            ..ApplyOptions::default()
        };
        let found = t.apply_with_spans(&messages, &opts, &spans).expect("renders");
        let text = &found.rendered.text;
        let trained: Vec<&str> = found.assistant_spans.iter().map(|&(a, b)| &text[a..b]).collect();
        assert_eq!(
            trained,
            ["Hello<|end|>", "Bye now<|end|>"],
            "prompt: {add_generation_prompt}"
        );
        let turns: Vec<&str> = (found.messages.iter())
            .map(|m| m.turn.map_or("", |(a, b)| &text[a..b]))
            .collect();
        assert_eq!(
            &turns[..4],
            [
                "<|user|>\nHi<|end|>\n",
                "<|assistant|>\nHello<|end|>\n",
                "<|user|>\n<|end|>\n",
                "<|assistant|>\nBye now<|end|>\n"
            ],
            "prompt: {add_generation_prompt}"
        );
    }
}
