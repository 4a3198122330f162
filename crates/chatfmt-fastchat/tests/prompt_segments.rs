//! `get_prompt_with_segments` gives `get_prompt`'s text exactly, for every registered template and
//! every separator style, and each segment holds what it says: turns in order and back to back,
//! each message's text where its content is, the role in its turn.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt_fastchat::{
    openai_messages_prompt, registry_snapshot, ChatMessage, Conversation, SegmentedPrompt, SeparatorStyle,
};
use serde_json::json;
use std::collections::BTreeSet;

fn slice(text: &str, (s, e): (usize, usize)) -> String {
    text[s..e].to_string()
}

fn messages(system: bool) -> Vec<ChatMessage> {
    let mut m = vec![
        json!({"role": "user", "content": "Hello there"}),
        json!({"role": "assistant", "content": "Hi! How can I help?\n\nAsk away."}),
        json!({"role": "user", "content": " Caf\u{e9} \u{6771}\u{4eac} "}),
        json!({"role": "assistant", "content": "Sure."}),
    ];
    if system {
        m.insert(0, json!({"role": "system", "content": "Be brief."}));
    }
    m.into_iter().map(|v| serde_json::from_value(v).unwrap()).collect()
}

/// The text a style prints for a message.
fn printed(style: SeparatorStyle, text: &str) -> String {
    match style {
        SeparatorStyle::LLAMA3 => text.trim().to_string(),
        SeparatorStyle::RWKV => text.replace("\r\n", "\n").replace("\n\n", "\n"),
        _ => text.to_string(),
    }
}

/// What must hold of one segmented prompt of `conv`; the failures.
fn check(conv: &Conversation, p: &SegmentedPrompt) -> Vec<String> {
    let mut failures = Vec::new();
    let name = &conv.name;
    let style = conv.sep_style.unwrap();
    if conv.get_prompt().as_deref() != Ok(p.text.as_str()) {
        failures.push(format!("{name}: text differs from get_prompt"));
    }
    let len = p.text.len();
    let placed: Vec<(usize, _)> = (p.turns.iter().enumerate())
        .filter_map(|(i, t)| t.map(|t| (i, t)))
        .collect();
    if let (Some(system), Some((_, first))) = (p.system, placed.first()) {
        if system.turn.1 > first.turn.0 {
            failures.push(format!("{name}: the system prompt overlaps the first turn"));
        }
        let want = &conv.system_message;
        if let Some(c) = system.content {
            if slice(&p.text, c) != *want {
                failures.push(format!("{name}: system content {:?}", slice(&p.text, c)));
            }
        }
    }
    for pair in placed.windows(2) {
        if pair[0].1.turn.1 != pair[1].1.turn.0 {
            failures.push(format!(
                "{name}: turns {} and {} are not back to back",
                pair[0].0, pair[1].0
            ));
        }
    }
    for &(i, seg) in &placed {
        let (role, msg) = &conv.messages[i];
        let (s, e) = seg.turn;
        if s > e || e > len {
            failures.push(format!("{name}: turn {i} {:?} outside the text", seg.turn));
            continue;
        }
        let turn = slice(&p.text, seg.turn);
        let by_position = matches!(style, SeparatorStyle::LLAMA2 | SeparatorStyle::YUAN2);
        if !by_position && !turn.contains(role.as_str()) {
            failures.push(format!("{name}: turn {i} {turn:?} lacks its role {role:?}"));
        }
        match (msg.as_ref().map(|m| m.text()), seg.content) {
            (Some(text), Some(c)) => {
                let got = slice(&p.text, c);
                let want = printed(style, text);
                // YUAN2 strips trailing `<`, `n`, `>` characters from the end of the whole prompt.
                let cut = style == SeparatorStyle::YUAN2 && want.starts_with(&got);
                if got != want && !cut {
                    failures.push(format!("{name}: content of turn {i} is {got:?}, not {want:?}"));
                }
                if c.0 < s || c.1 > e {
                    failures.push(format!("{name}: content of turn {i} outside its turn"));
                }
            }
            (None, None) => {}
            (m, c) => failures.push(format!("{name}: turn {i} message {m:?} but content {c:?}")),
        }
    }
    failures
}

#[test]
fn segments_match_get_prompt_for_every_template_and_style() {
    let registry = registry_snapshot();
    let mut styles = BTreeSet::new();
    let mut failures = Vec::new();
    for template in registry.templates() {
        let Some(style) = template.sep_style else { continue };
        for (system, generation) in [(false, false), (true, true)] {
            let conv =
                chatfmt_fastchat::conversation_from_openai_messages(template.clone(), &messages(system), generation)
                    .unwrap();
            let Ok(p) = conv.get_prompt_with_segments() else {
                assert!(
                    conv.get_prompt().is_err(),
                    "{}: segments fail where get_prompt does not",
                    conv.name
                );
                continue;
            };
            styles.insert(style.name());
            failures.extend(check(&conv, &p));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let all: BTreeSet<&str> = SeparatorStyle::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(styles, all, "every separator style is exercised");
}

#[test]
fn every_style_is_segmented_with_a_template_of_its_own() {
    // Templates the registry lacks a style for: the first template, restyled, with both separators.
    let base = registry_snapshot().templates()[0].clone();
    for &style in SeparatorStyle::ALL {
        let mut conv = Conversation {
            sep_style: Some(style),
            sep: Some("</s>".into()),
            sep2: Some("<|end|>".into()),
            ..base.clone()
        };
        conv.name = format!("restyled-{}", style.name());
        let conv = chatfmt_fastchat::conversation_from_openai_messages(conv, &messages(true), true).unwrap();
        let p = conv.get_prompt_with_segments().unwrap();
        let failures = check(&conv, &p);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

#[test]
fn input_messages_map_to_their_turns() {
    let conv = chatfmt_fastchat::get_conv_template("OpenHermes-2.5-Mistral-7B").unwrap();
    let p = openai_messages_prompt(conv, &messages(true), true).unwrap();
    assert_eq!(p.messages.len(), 5);
    let system = p.messages[0].unwrap();
    assert_eq!(slice(&p.text, system.content.unwrap()), "Be brief.");
    let reply = p.messages[2].unwrap();
    assert_eq!(
        slice(&p.text, reply.turn),
        "<|im_start|>assistant\nHi! How can I help?\n\nAsk away.<|im_end|>\n"
    );
    assert_eq!(
        slice(&p.text, reply.content.unwrap()),
        "Hi! How can I help?\n\nAsk away."
    );
    // Images: the placeholders are not the message's text.
    let with_image: Vec<ChatMessage> = vec![serde_json::from_value(json!({"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "text", "text": "What is it?"}
    ]}))
    .unwrap()];
    let conv = chatfmt_fastchat::get_conv_template("OpenHermes-2.5-Mistral-7B").unwrap();
    let p = openai_messages_prompt(conv, &with_image, false).unwrap();
    let content = slice(&p.text, p.messages[0].unwrap().content.unwrap());
    assert!(
        !content.contains("$$<image>$$") && content.ends_with("What is it?"),
        "{content:?}"
    );
}
