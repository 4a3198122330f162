//! OpenAI-shaped messages become a conversation as FastChat's OpenAI-compatible server builds it:
//! a user content list is a `(text, images)` pair whatever parts it holds, other roles' content is
//! passed on as sent. Expected prompts are FastChat 0e6d3e4's `get_prompt()` of the same calls.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chatfmt_fastchat::{conversation_from_openai_messages, get_conv_template, ChatMessage, ErrorKind};
use serde_json::{json, Value};

fn prompt(template: &str, messages: Value) -> Result<String, chatfmt_fastchat::Error> {
    let messages: Vec<ChatMessage> = serde_json::from_value(messages).unwrap();
    let conv = conversation_from_openai_messages(get_conv_template(template).unwrap(), &messages, true)?;
    conv.get_prompt()
}

#[test]
fn a_user_content_list_is_a_text_and_images_pair() {
    // vicuna_v1.1 (ADD_COLON_TWO) shows pairs: one placeholder per image before the text; parts
    // of other types are left out; an empty assistant list is false in Python, as `None` is.
    let got = prompt(
        "vicuna_v1.1",
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": "What is it?"},
                {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
                {"type": "text", "text": "Two parts"}
            ]},
            {"role": "assistant", "content": []},
            {"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "http://x/a.png"}},
                {"type": "text", "text": "And this?"}
            ]}
        ]),
    )
    .unwrap();
    assert_eq!(
        got,
        "A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, \
         detailed, and polite answers to the user's questions. USER: What is it?\nTwo parts ASSISTANT:USER: \
         $$<image>$$<image>\nAnd this? ASSISTANT:"
    );
}

#[test]
fn a_style_without_images_refuses_a_content_list_even_of_text() {
    // FastChat: `TypeError: can only concatenate tuple (not "str") to tuple` in LLAMA2.
    let err = prompt(
        "llama-2",
        json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ImagesNotSupported);
    assert!(
        err.message().contains("list of content parts") && err.message().contains("send the content as a string"),
        "{err}"
    );
    // The same text as a string renders.
    assert_eq!(
        prompt("llama-2", json!([{"role": "user", "content": "hi"}])).unwrap(),
        "[INST] hi [/INST]"
    );
}

#[test]
fn system_and_assistant_content_lists_are_refused() {
    for (role, template) in [
        ("system", "vicuna_v1.1"),
        ("assistant", "OpenHermes-2.5-Mistral-7B"),
        ("system", "llama-2"),
    ] {
        let messages = json!([
            {"role": role, "content": [{"type": "text", "text": "hi"}]},
            {"role": "user", "content": "Hello"}
        ]);
        let err = prompt(template, messages).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(
            err.message()
                .starts_with(&format!("message 0: a {role} message's content is a list of parts")),
            "{err}"
        );
    }
}
