//! Probe conversations: each carries marker text, and a capability holds when the probe renders and
//! its marker shows up in the prompt. Warnings compare renders of related conversations.

use super::{ArgumentsFormat, Capabilities, Diagnostic};
use crate::template::{ApplyOptions, ChatTemplate};
use chatfmt_jinja::analysis::Analysis;
use chatfmt_jinja::Clock;
use serde_json::{json, Map, Value as Json};

const USER: &str = "USER_PROBE_TEXT";
const USER2: &str = "SECOND_USER_PROBE_TEXT";
const ASSISTANT: &str = "ASSISTANT_PROBE_TEXT";
const SYSTEM: &str = "SYSTEM_PROBE_TEXT";
const TOOL_NAME: &str = "probe_lookup";
const ARG: &str = "ARGUMENT_PROBE_VALUE";
const ARG2: &str = "SECOND_ARGUMENT_PROBE_VALUE";
const RESULT: &str = "TOOL_RESULT_PROBE_TEXT";
const REASONING: &str = "REASONING_PROBE_TEXT";
const DOC: &str = "DOCUMENT_PROBE_TEXT";

/// Variables every chat template may read that the caller does not choose.
const STANDARD_VARS: &[&str] = &["messages", "tools", "documents", "add_generation_prompt"];

fn user(text: &str) -> Json {
    json!({"role": "user", "content": text})
}

fn assistant(text: &str) -> Json {
    json!({"role": "assistant", "content": text})
}

fn tool_schema() -> Json {
    json!([{"type": "function", "function": {
        "name": TOOL_NAME,
        "description": "Look something up",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    }}])
}

fn call(id: &str, arg: &str, as_string: bool) -> Json {
    let args = json!({"query": arg});
    let args = if as_string {
        Json::String(args.to_string())
    } else {
        args
    };
    json!({"id": id, "type": "function", "function": {"name": TOOL_NAME, "arguments": args}})
}

fn tool_result(id: &str, text: &str) -> Json {
    json!({"role": "tool", "tool_call_id": id, "name": TOOL_NAME, "content": text})
}

/// Renders probes through one template of a [`ChatTemplate`].
pub(super) struct Prober<'c> {
    chat: &'c ChatTemplate,
    name: Option<&'c str>,
}

impl<'c> Prober<'c> {
    pub(super) fn new(chat: &'c ChatTemplate, name: Option<&'c str>) -> Self {
        Prober { chat, name }
    }

    fn opts(&self, add_generation_prompt: bool) -> ApplyOptions {
        ApplyOptions {
            add_generation_prompt,
            chat_template: self.name.map(str::to_string),
            clock: Clock::Fixed("2025-07-10T12:00:00".to_string()),
            ..ApplyOptions::default()
        }
    }

    fn render_with(&self, messages: &[Json], opts: &ApplyOptions) -> Result<String, String> {
        self.chat
            .apply(messages, opts)
            .map(|r| r.text)
            .map_err(|e| e.to_string())
    }

    fn render(&self, messages: &[Json], add_generation_prompt: bool) -> Result<String, String> {
        self.render_with(messages, &self.opts(add_generation_prompt))
    }

    /// Whether the conversation renders and the prompt contains every marker.
    fn shows(&self, messages: &[Json], opts: &ApplyOptions, markers: &[&str]) -> bool {
        self.render_with(messages, opts)
            .is_ok_and(|text| markers.iter().all(|m| text.contains(m)))
    }

    pub(super) fn run(&self, analysis: &Analysis, source: &str) -> (Capabilities, Vec<Diagnostic>) {
        let mut warnings = Vec::new();
        let base_false = self.render(&[user(USER)], false);
        let base_true = self.render(&[user(USER)], true);
        if let Err(e) = &base_false {
            warnings.push(Diagnostic::new(
                "single_user_fails",
                format!("a conversation of one user message does not render: {e}"),
            ));
        }
        let system_role = self.shows(
            &[json!({"role": "system", "content": SYSTEM}), user(USER)],
            &self.opts(false),
            &[SYSTEM],
        );
        // Tool-call probes start like the reference scenario: a system message when one is accepted.
        let mut head: Vec<Json> = Vec::new();
        if system_role {
            head.push(json!({"role": "system", "content": "You are a helpful assistant."}));
        }
        head.push(user(USER));
        let mut tools_opts = self.opts(false);
        tools_opts.tools = Some(tool_schema());
        let tools = self.shows(&head, &tools_opts, &[TOOL_NAME]);

        let mut roundtrip_opts = self.opts(true);
        roundtrip_opts.tools = Some(tool_schema());
        let roundtrip = |as_string: bool| {
            let mut m = head.clone();
            m.push(json!({"role": "assistant", "tool_calls": [call("call_1", ARG, as_string)]}));
            m.push(tool_result("call_1", RESULT));
            m
        };
        let object_args = self.shows(&roundtrip(false), &roundtrip_opts, &[ARG]);
        let string_args = self.shows(&roundtrip(true), &roundtrip_opts, &[ARG]);
        let tool_call_arguments = match (object_args, string_args) {
            (true, true) => ArgumentsFormat::Both,
            (true, false) => ArgumentsFormat::Object,
            (false, true) => ArgumentsFormat::String,
            (false, false) => ArgumentsFormat::None,
        };
        if !object_args && !string_args {
            let with_content = |as_string: bool| {
                let mut m = roundtrip(as_string);
                if let Some(call) = m.iter_mut().find(|m| m.get("tool_calls").is_some()) {
                    call["content"] = json!("");
                }
                m
            };
            if [false, true]
                .iter()
                .any(|s| self.shows(&with_content(*s), &roundtrip_opts, &[ARG]))
            {
                warnings.push(Diagnostic::new(
                    "tool_calls_need_content",
                    "tool calls render only when the assistant message also has a `content` field: without one (transformers drops `content: None`) the template fails or drops them; send `\"content\": \"\"`",
                ));
            }
        }
        let as_string = !object_args && string_args;
        let tool_results = self.shows(&roundtrip(as_string), &roundtrip_opts, &[RESULT]);
        let mut parallel = head.clone();
        parallel.push(json!({"role": "assistant", "tool_calls": [
            call("call_1", ARG, as_string), call("call_2", ARG2, as_string)
        ]}));
        parallel.push(tool_result("call_1", RESULT));
        parallel.push(tool_result("call_2", "SECOND_RESULT_PROBE"));
        let parallel_tool_calls = (object_args || string_args) && self.shows(&parallel, &roundtrip_opts, &[ARG, ARG2]);

        // Content as parts in every role the template accepts, as real multimodal conversations send it.
        let parts = |text: &str| json!([{"type": "text", "text": text}]);
        let mut parts_conv = Vec::new();
        if system_role {
            parts_conv.push(json!({"role": "system", "content": parts(SYSTEM)}));
        }
        parts_conv.push(json!({"role": "user", "content": parts(USER)}));
        parts_conv.push(json!({"role": "assistant", "content": parts(ASSISTANT)}));
        parts_conv.push(json!({"role": "user", "content": parts(USER2)}));
        let content_text_parts = self.shows(&parts_conv, &self.opts(true), &[USER, ASSISTANT, USER2]);
        // The same conversation with an image part in the first user message: supported when it renders
        // the text and the image changes the prompt (a placeholder).
        let mut image_conv = parts_conv.clone();
        if let Some(first_user) = image_conv.iter_mut().find(|m| m["role"] == "user") {
            first_user["content"] = json!([{"type": "image"}, {"type": "text", "text": USER}]);
        }
        let with_image = self.render(&image_conv, true);
        let content_image_parts = content_text_parts
            && with_image.as_ref().is_ok_and(|t| t.contains(USER))
            && with_image.as_ref().ok() != self.render(&parts_conv, true).as_ref().ok();
        if let (true, Err(e)) = (content_text_parts, &with_image) {
            warnings.push(Diagnostic::new(
                "image_parts_fail",
                format!("text parts render, but the same conversation with an image part fails: {e}"),
            ));
        }

        let reasoning_turn = json!({"role": "assistant", "content": ASSISTANT, "reasoning_content": REASONING});
        let reasoning = self.shows(&[user(USER), reasoning_turn.clone()], &self.opts(false), &[REASONING]);
        let reasoning_in_history = self.shows(
            &[user(USER), reasoning_turn.clone(), user(USER2)],
            &self.opts(true),
            &[REASONING],
        );
        let mut doc_opts = self.opts(true);
        doc_opts.documents = Some(json!([{"title": "Probe document", "text": DOC}]));
        let documents = self.shows(&[user(USER)], &doc_opts, &[DOC]);

        let add_generation_prompt = match (&base_false, &base_true) {
            (Ok(f), Ok(t)) => t.len() > f.len() && t.starts_with(f.as_str()),
            _ => false,
        };
        let special = self.chat.special_tokens();
        let extra_variables = analysis
            .free_variables
            .iter()
            .filter(|v| !STANDARD_VARS.contains(&v.as_str()) && !special.contains_key(*v) && !v.ends_with("_token"))
            .cloned()
            .collect();
        let caps = Capabilities {
            system_role,
            tools,
            tool_calls: object_args || string_args,
            tool_results,
            parallel_tool_calls,
            tool_call_arguments,
            content_text_parts,
            content_image_parts,
            reasoning,
            reasoning_in_history,
            documents,
            generation_tags: analysis.uses_generation,
            add_generation_prompt,
            date_dependent: analysis.uses_strftime_now(),
            extra_variables,
            message_fields: analysis.message_fields.iter().cloned().collect(),
        };
        if let (Ok(f), Ok(t)) = (&base_false, &base_true) {
            self.whitespace_warnings(f, t, &mut warnings);
        }
        self.prefix_warning(system_role, &mut warnings);
        self.control_token_warning(special, source, &mut warnings);
        (caps, warnings)
    }

    /// The generation prompt should be exactly how a rendered assistant turn starts, and the prompt
    /// should not end in whitespace the model never saw before its answer.
    fn whitespace_warnings(&self, without: &str, with: &str, out: &mut Vec<Diagnostic>) {
        if let Some(gen) = with.strip_prefix(without).filter(|g| !g.is_empty()) {
            if let Ok(turn) = self.render(&[user(USER), assistant(ASSISTANT)], false) {
                if let Some(header) = turn
                    .strip_prefix(without)
                    .and_then(|rest| rest.find(ASSISTANT).map(|i| &rest[..i]))
                {
                    if header != gen {
                        out.push(Diagnostic::new(
                            "generation_prompt_mismatch",
                            format!(
                                "the generation prompt {gen:?} differs from how a rendered assistant turn starts ({header:?}): the model is prompted with text it did not see in training"
                            ),
                        ));
                    }
                }
            }
            if gen.ends_with([' ', '\t']) {
                out.push(Diagnostic::new(
                    "trailing_whitespace",
                    format!("the generation prompt {gen:?} ends with a space: the model's first token usually carries that space, so the prompt splits it"),
                ));
            }
        } else if without.ends_with(char::is_whitespace) {
            out.push(Diagnostic::new(
                "trailing_whitespace",
                format!(
                    "the prompt ends with whitespace ({:?}) and add_generation_prompt adds nothing after it",
                    &without[without.trim_end().len()..]
                ),
            ));
        }
    }

    /// Renders growing prefixes of a conversation: each rendering should be a prefix of the next one,
    /// or cached prompts (and training on multi-turn data) break.
    fn prefix_warning(&self, system: bool, out: &mut Vec<Diagnostic>) {
        let mut conv = Vec::new();
        if system {
            conv.push(json!({"role": "system", "content": SYSTEM}));
        }
        conv.push(user(USER));
        conv.push(json!({"role": "assistant", "content": ASSISTANT, "reasoning_content": REASONING}));
        conv.push(user(USER2));
        conv.push(assistant("SECOND_ASSISTANT_PROBE_TEXT"));
        conv.push(user("THIRD_USER_PROBE_TEXT"));
        let renders: Vec<Option<String>> = (1..=conv.len()).map(|k| self.render(&conv[..k], false).ok()).collect();
        for k in 1..conv.len() {
            let (Some(short), Some(long)) = (&renders[k - 1], &renders[k]) else {
                continue;
            };
            if long.starts_with(short.as_str()) {
                continue;
            }
            let common = short
                .char_indices()
                .zip(long.chars())
                .find(|((_, a), b)| a != b)
                .map_or(short.len(), |((i, _), _)| i);
            let why = if short.contains(REASONING) && !long.contains(REASONING) {
                "the reasoning of an earlier assistant turn is dropped from the history".to_string()
            } else {
                format!(
                    "the text from character {} changes from {:?} to {:?}",
                    short[..common].chars().count(),
                    snippet(&short[common..]),
                    snippet(&long[common..])
                )
            };
            out.push(Diagnostic::new(
                "not_prefix_preserving",
                format!(
                    "not prefix-preserving: the prompt for the first {k} messages is not a prefix of the prompt for {} ({} message {} added): {why}",
                    k + 1,
                    conv[k]["role"].as_str().unwrap_or("?"),
                    k + 1
                ),
            ));
            return;
        }
    }

    /// Message text is inserted verbatim: a control token typed in content becomes a real one. The
    /// candidates are the special tokens and the `<|...|>` tokens the template writes itself.
    fn control_token_warning(&self, special: &Map<String, Json>, source: &str, out: &mut Vec<Diagnostic>) {
        let mut tokens: Vec<&str> = special
            .values()
            .filter_map(Json::as_str)
            .filter(|t| !t.is_empty())
            .chain(literal_tokens(source))
            .collect();
        tokens.sort_unstable();
        tokens.dedup();
        for token in tokens {
            let text = format!("{USER} {token} {USER2}");
            if self.render(&[user(&text)], false).is_ok_and(|p| p.contains(&text)) {
                out.push(Diagnostic::new(
                    "control_token_in_content",
                    format!(
                        "message content is inserted verbatim: content containing {token:?} will tokenize as that control token; strip or escape it before rendering"
                    ),
                ));
                return;
            }
        }
    }
}

/// `<|...|>` tokens written in the template text.
fn literal_tokens(source: &str) -> impl Iterator<Item = &str> {
    source.match_indices("<|").filter_map(move |(i, _)| {
        let rest = &source[i..];
        let end = rest[2..].find("|>")? + 4;
        let token = &rest[..end];
        (end <= 48 && !token.contains(char::is_whitespace) && !token.contains(['\'', '"', '{', '}'])).then_some(token)
    })
}

fn snippet(s: &str) -> String {
    s.chars().take(40).collect()
}
