//! Deliberate differences from FastChat: the rules that recognise each one (here), and the kit
//! records that show it (the evidence, listed in the "FastChat" section of
//! `KNOWN_DIFFERENCES.md`, read by [`crate::KnownDifferences`]).
//!
//! A mismatch is documented only when chatfmt's output is the specific deliberate error (or
//! value) of a difference and FastChat's output is the behaviour that difference describes;
//! any other mismatch is a failure.

use serde_json::Value;

/// One deliberate difference: its code in KNOWN_DIFFERENCES.md, the outputs it concerns, and
/// the rule that recognises it from (FastChat's output, chatfmt's output).
struct Difference {
    code: &'static str,
    fields: &'static [&'static str],
    applies: fn(&Value, &Value) -> bool,
}

fn our_error(actual: &Value) -> Option<&str> {
    actual.get("error")?.get("kind")?.as_str()
}

fn python_error(expected: &Value) -> Option<&str> {
    expected.get("error")?.get("type")?.as_str()
}

const DIFFERENCES: &[Difference] = &[
    // Images in a style that cannot show them: FastChat crashes, chatfmt reports it.
    Difference {
        code: "FC-1",
        fields: &["prompt"],
        applies: |expected, actual| {
            our_error(actual) == Some("ImagesNotSupported")
                && matches!(python_error(expected), Some("TypeError" | "AttributeError"))
        },
    },
    // Images in CHATGLM: FastChat writes the Python repr of the (text, [Image]) tuple.
    Difference {
        code: "FC-2",
        fields: &["prompt"],
        applies: |expected, actual| {
            our_error(actual) == Some("ImagesNotSupported")
                && expected["ok"].as_str().is_some_and(|p| p.contains("[Image("))
        },
    },
    // OpenAI text messages with images: FastChat puts the Python tuple in `content`.
    Difference {
        code: "FC-3",
        fields: &["openai_messages"],
        applies: |expected, actual| {
            our_error(actual) == Some("ImagesInTextOnlyOutput")
                && expected
                    .get("ok")
                    .is_some_and(|v| v.to_string().contains("\"__image__\""))
        },
    },
    // dict() with images: FastChat hashes decoded pixels or keeps Image objects.
    Difference {
        code: "FC-4",
        fields: &["dict"],
        applies: |expected, actual| our_error(actual) == Some("ImagesInTextOnlyOutput") && expected.get("ok").is_some(),
    },
    // Copies share FastChat's registry lists; chatfmt's copies are independent.
    Difference {
        code: "FC-5",
        fields: &[
            "fresh_copy_after_appending_999_to_other_copy",
            "registry_list_is_shared",
        ],
        applies: |expected, actual| match (expected, actual) {
            (Value::Bool(true), Value::Bool(false)) => true,
            (Value::Array(shared), Value::Array(own)) => shared.len() == own.len() + 1 && shared.starts_with(own),
            _ => false,
        },
    },
];

/// The code of the documented difference a mismatch of `field` is, if any.
pub(super) fn classify(field: &str, expected: &Value, actual: &Value) -> Option<&'static str> {
    DIFFERENCES
        .iter()
        .find(|d| d.fields.contains(&field) && (d.applies)(expected, actual))
        .map(|d| d.code)
}

/// The codes of the deliberate differences recognised here (`FC-1`, ...); KNOWN_DIFFERENCES.md lists
/// the evidence of each.
pub fn difference_codes() -> Vec<&'static str> {
    DIFFERENCES.iter().map(|d| d.code).collect()
}
