//! Probe conversations: each carries distinctive marker text, and a capability holds when the probe
//! renders and its markers show up in the prompt as data: verbatim, and not only inside a Python repr
//! of the structure holding them or a re-escaped JSON string. Warnings compare renders of related
//! conversations.

use super::{ArgumentsFormat, Capabilities, Diagnostic, PrefixBreak};
use crate::template::SPECIAL_TOKEN_KEYS;
use crate::template::{ApplyOptions, ChatTemplate};
use chatfmt_jinja::analysis::Analysis;
use chatfmt_jinja::{Clock, Context, Error, Template};
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
/// Tool-call ids of nine letters and digits, the shape the strictest templates require.
const CALL_IDS: [&str; 2] = ["probe0001", "probe0002"];

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
        "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "What to look up"}}, "required": ["query"]}
    }}])
}

fn documents() -> Json {
    json!([{"title": "Probe document", "text": DOC}])
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

/// How a probe's data showed up in the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// The conversation does not render.
    Fails,
    /// A marker is missing.
    Missing,
    /// Every marker is there, but some only inside a Python repr of the structure holding it
    /// (`[{'type': 'text', ...}]`) or inside an escaped JSON string (`"{\"query\": ...}"`).
    Encoded,
    /// Every marker is there as plain data.
    Data,
}

/// Whether `marker` occurs in `text` as a string inside a Python repr (`: 'marker'`, `['marker'`,
/// `, 'marker'`) or as an escaped string inside a JSON string (`\"marker\"`): how structures and
/// re-encoded strings print.
fn quoted(text: &str, marker: &str) -> bool {
    text.match_indices(marker).any(|(i, _)| {
        let (before, after) = (&text[..i], &text[i + marker.len()..]);
        let in_repr = after.starts_with('\'')
            && before
                .strip_suffix('\'')
                .is_some_and(|b| [": ", "[", ", ", "("].iter().any(|p| b.ends_with(p)));
        in_repr || (before.ends_with("\\\"") && after.starts_with("\\\""))
    })
}

/// Every dict inside `value`, outermost first.
fn dicts<'v>(value: &'v Json, out: &mut Vec<&'v Json>) {
    match value {
        Json::Object(map) => {
            out.push(value);
            map.values().for_each(|v| dicts(v, out));
        }
        Json::Array(items) => items.iter().for_each(|v| dicts(v, out)),
        _ => {}
    }
}

/// Renders probes through one template of a [`ChatTemplate`].
pub(super) struct Prober<'c> {
    chat: &'c ChatTemplate,
    /// `{{ v }}`: prints a value as Jinja does, with Python's repr for dicts and lists.
    printer: Option<Template>,
    /// Options every probe starts from: the template's name, a fixed clock, placeholder special
    /// tokens and the inputs the template cannot render without.
    base: ApplyOptions,
}

impl<'c> Prober<'c> {
    /// A prober for one template; the setup's warnings (placeholders used, inputs required) go to `warnings`.
    pub(super) fn new(
        chat: &'c ChatTemplate,
        name: Option<&'c str>,
        analysis: &Analysis,
        warnings: &mut Vec<Diagnostic>,
    ) -> Self {
        let mut base = ApplyOptions {
            chat_template: name.map(str::to_string),
            clock: Clock::Fixed("2025-07-10T12:00:00".to_string()),
            ..ApplyOptions::default()
        };
        let missing: Vec<&str> = SPECIAL_TOKEN_KEYS
            .iter()
            .copied()
            .filter(|t| analysis.free_variables.contains(*t) && !chat.special_tokens().contains_key(*t))
            .collect();
        if !missing.is_empty() {
            let placeholders: Vec<String> = missing
                .iter()
                .map(|t| {
                    let placeholder = format!("<{}_PLACEHOLDER>", t.to_uppercase());
                    base.kwargs.insert(t.to_string(), Json::String(placeholder.clone()));
                    format!("{t} = {placeholder:?}")
                })
                .collect();
            warnings.push(Diagnostic::new(
                "placeholder_special_tokens",
                format!(
                    "the template reads special tokens that were not given, so the probes used placeholders ({}): give the model's own tokens (or check its model folder) to see the prompts it really gets",
                    placeholders.join(", ")
                ),
            ));
        }
        let printer = Template::new("repr", "{{ v }}").ok();
        let mut prober = Prober { chat, printer, base };
        if let Err(alone) = prober.render(&[user(USER)], false) {
            let candidates = [(true, false), (false, true), (true, true)];
            let found = candidates.into_iter().find(|&(tools, docs)| {
                let mut opts = prober.opts(false);
                opts.tools = tools.then(tool_schema);
                opts.documents = docs.then(documents);
                prober.render_with(&[user(USER)], &opts).is_ok()
            });
            match found {
                Some((tools, docs)) => {
                    prober.base.tools = tools.then(tool_schema);
                    prober.base.documents = docs.then(documents);
                    let what = match (tools, docs) {
                        (true, false) => "tools are",
                        (false, true) => "documents are",
                        _ => "tools and documents are",
                    };
                    warnings.push(Diagnostic::new(
                        "requires_inputs",
                        format!(
                            "a conversation renders only when {what} given (without: {alone}); the probes gave them"
                        ),
                    ));
                }
                None => warnings.push(Diagnostic::new(
                    "single_user_fails",
                    format!("a conversation of one user message does not render: {alone}"),
                )),
            }
        }
        prober
    }

    fn opts(&self, add_generation_prompt: bool) -> ApplyOptions {
        ApplyOptions {
            add_generation_prompt,
            ..self.base.clone()
        }
    }

    fn render_with(&self, messages: &[Json], opts: &ApplyOptions) -> Result<String, Error> {
        self.chat.apply(messages, opts).map(|r| r.text)
    }

    fn render(&self, messages: &[Json], add_generation_prompt: bool) -> Result<String, Error> {
        self.render_with(messages, &self.opts(add_generation_prompt))
    }

    /// How the markers of a probe conversation show up in its prompt. `carriers` are the values
    /// holding the markers (a message, its tool calls, the tools, the documents): the Python repr
    /// of any dict in them, or any of the `encoded` forms, means the data was printed as a structure.
    fn look(
        &self,
        messages: &[Json],
        opts: &ApplyOptions,
        markers: &[&str],
        carriers: &[Json],
        encoded: &[&str],
    ) -> Seen {
        let Ok(text) = self.render_with(messages, opts) else {
            return Seen::Fails;
        };
        if !markers.iter().all(|m| text.contains(m)) {
            return Seen::Missing;
        }
        let mut inner = Vec::new();
        carriers.iter().for_each(|v| dicts(v, &mut inner));
        let as_structure = markers.iter().any(|m| quoted(&text, m))
            || inner.iter().filter_map(|d| self.repr(d)).any(|r| text.contains(&r))
            || encoded.iter().any(|e| text.contains(e));
        if as_structure {
            Seen::Encoded
        } else {
            Seen::Data
        }
    }

    /// How Jinja prints `value` (Python's repr for dicts and lists).
    fn repr(&self, value: &Json) -> Option<String> {
        let ctx = Context::from_json(json!({ "v": value })).ok()?;
        self.printer.as_ref()?.render(&ctx).ok().map(|r| r.text)
    }

    pub(super) fn run(&self, analysis: &Analysis, source: &str, warnings: &mut Vec<Diagnostic>) -> Capabilities {
        // Capabilities whose probe data showed up only as a structure's repr or an escaped string.
        let mut encoded: Vec<&str> = Vec::new();
        let mut data = |what: &'static str, seen: Seen| {
            if seen == Seen::Encoded && !encoded.contains(&what) {
                encoded.push(what);
            }
            seen == Seen::Data
        };
        let base_false = self.render(&[user(USER)], false);
        let base_true = self.render(&[user(USER)], true);
        let system = json!({"role": "system", "content": SYSTEM});
        let system_role = data(
            "system role",
            self.look(
                &[system.clone(), user(USER)],
                &self.opts(false),
                &[SYSTEM],
                &[system],
                &[],
            ),
        );
        // Tool-call probes start like the reference scenario: a system message when one is accepted.
        let mut head: Vec<Json> = Vec::new();
        if system_role {
            head.push(json!({"role": "system", "content": "You are a helpful assistant."}));
        }
        head.push(user(USER));
        let mut tools_opts = self.opts(false);
        tools_opts.tools = Some(tool_schema());
        let tools = data(
            "tools",
            self.look(&head, &tools_opts, &[TOOL_NAME], &[tool_schema()], &[]),
        );

        let mut roundtrip_opts = self.opts(true);
        roundtrip_opts.tools = Some(tool_schema());
        // OpenAI clients send `content: null` with tool calls, which transformers drops; many
        // templates need the field, so each form is also tried with `content: ""`.
        let roundtrip = |as_string: bool, with_content: bool| {
            let mut m = head.clone();
            let mut turn = json!({"role": "assistant", "tool_calls": [call(CALL_IDS[0], ARG, as_string)]});
            if with_content {
                turn["content"] = json!("");
            }
            m.push(turn);
            m.push(tool_result(CALL_IDS[0], RESULT));
            m
        };
        // The tool's name is in the tools too: the call must add occurrences of it.
        let name_count = |conv: &[Json]| {
            self.render_with(conv, &roundtrip_opts)
                .map_or(0, |t| t.matches(TOOL_NAME).count())
        };
        let head_names = name_count(&head);
        let call_seen = |as_string: bool, with_content: bool| {
            let conv = roundtrip(as_string, with_content);
            let turn = conv[head.len()].clone();
            match self.look(&conv, &roundtrip_opts, &[ARG], &[turn], &[]) {
                Seen::Data if name_count(&conv) <= head_names => Seen::Missing,
                seen => seen,
            }
        };
        let mut forms = Vec::new();
        for as_string in [false, true] {
            for with_content in [false, true] {
                let seen = call_seen(as_string, with_content);
                let what = if as_string {
                    "tool-call arguments as a JSON string"
                } else {
                    "tool-call arguments as an object"
                };
                if data(what, seen) {
                    forms.push((as_string, with_content));
                }
            }
        }
        let object_args = forms.iter().any(|f| !f.0);
        let string_args = forms.iter().any(|f| f.0);
        let tool_call_arguments = match (object_args, string_args) {
            (true, true) => ArgumentsFormat::Both,
            (true, false) => ArgumentsFormat::Object,
            (false, true) => ArgumentsFormat::String,
            (false, false) => ArgumentsFormat::None,
        };
        if !forms.is_empty() && forms.iter().all(|f| f.1) {
            warnings.push(Diagnostic::new(
                "tool_calls_need_content",
                "tool calls render only when the assistant message also has a `content` field: without one (transformers drops `content: None`) the template fails or drops them; send `\"content\": \"\"`",
            ));
        }
        // The rest of the tool probes use the first form that rendered (objects before strings); a
        // template that drops tool calls may still render their results, after either call form.
        let (as_string, with_content) = forms.first().copied().unwrap_or((false, false));
        let result_forms = if forms.is_empty() {
            vec![(false, false), (false, true)]
        } else {
            vec![(as_string, with_content)]
        };
        let result_seen: Vec<Seen> = result_forms
            .into_iter()
            .map(|(as_string, with_content)| {
                self.look(
                    &roundtrip(as_string, with_content),
                    &roundtrip_opts,
                    &[RESULT],
                    &[tool_result(CALL_IDS[0], RESULT)],
                    &[],
                )
            })
            .collect();
        let tool_results = match result_seen.iter().find(|s| **s == Seen::Data) {
            Some(seen) => data("tool results", *seen),
            None => result_seen.into_iter().any(|s| data("tool results", s)),
        };
        let mut parallel = head.clone();
        let mut turn = json!({"role": "assistant", "tool_calls": [
            call(CALL_IDS[0], ARG, as_string), call(CALL_IDS[1], ARG2, as_string)
        ]});
        if with_content {
            turn["content"] = json!("");
        }
        parallel.push(turn.clone());
        parallel.push(tool_result(CALL_IDS[0], RESULT));
        parallel.push(tool_result(CALL_IDS[1], "SECOND_RESULT_PROBE"));
        let parallel_tool_calls = !forms.is_empty()
            && data(
                "parallel tool calls",
                self.look(&parallel, &roundtrip_opts, &[ARG, ARG2], &[turn], &[]),
            );

        // Content as parts in every role the template accepts, as real multimodal conversations send it.
        let parts = |text: &str| json!([{"type": "text", "text": text}]);
        let mut parts_conv = Vec::new();
        let mut part_texts = Vec::new();
        if system_role {
            parts_conv.push(json!({"role": "system", "content": parts(SYSTEM)}));
            part_texts.push(SYSTEM);
        }
        parts_conv.push(json!({"role": "user", "content": parts(USER)}));
        parts_conv.push(json!({"role": "assistant", "content": parts(ASSISTANT)}));
        parts_conv.push(json!({"role": "user", "content": parts(USER2)}));
        part_texts.extend([USER, ASSISTANT, USER2]);
        // Parts printed with `tojson` are a structure too, not text.
        let part_json = ["{\"type\": \"text\"", "{\"type\": \"image\"}"];
        let content_text_parts = data(
            "content text parts",
            self.look(&parts_conv, &self.opts(true), &part_texts, &parts_conv, &part_json),
        );
        // The same conversation with an image part in the first user message: supported when it renders
        // the text as data and the image changes the prompt (a placeholder).
        let mut image_conv = parts_conv.clone();
        if let Some(first_user) = image_conv.iter_mut().find(|m| m["role"] == "user") {
            first_user["content"] = json!([{"type": "image"}, {"type": "text", "text": USER}]);
        }
        let with_image = self.render(&image_conv, true);
        let content_image_parts = content_text_parts
            && data(
                "content image parts",
                self.look(&image_conv, &self.opts(true), &part_texts, &image_conv, &part_json),
            )
            && with_image.as_ref().ok() != self.render(&parts_conv, true).as_ref().ok();
        if let (true, Err(e)) = (content_text_parts, &with_image) {
            warnings.push(Diagnostic::new(
                "image_parts_fail",
                format!("text parts render, but the same conversation with an image part fails: {e}"),
            ));
        }

        let reasoning_turn = json!({"role": "assistant", "content": ASSISTANT, "reasoning_content": REASONING});
        let reasoning = data(
            "reasoning",
            self.look(
                &[user(USER), reasoning_turn.clone()],
                &self.opts(false),
                &[REASONING],
                std::slice::from_ref(&reasoning_turn),
                &[],
            ),
        );
        let reasoning_in_history = data(
            "reasoning kept in history",
            self.look(
                &[user(USER), reasoning_turn.clone(), user(USER2)],
                &self.opts(true),
                &[REASONING],
                std::slice::from_ref(&reasoning_turn),
                &[],
            ),
        );
        let mut doc_opts = self.opts(true);
        doc_opts.documents = Some(documents());
        let documents = data(
            "documents",
            self.look(&[user(USER)], &doc_opts, &[DOC], &[documents()], &[]),
        );

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
            tool_calls: !forms.is_empty(),
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
        if !encoded.is_empty() {
            warnings.push(Diagnostic::new(
                "printed_as_structure",
                format!(
                    "probe data shows up only inside a Python repr (`[{{'type': 'text', ...}}]`), a JSON dump of content parts or a re-escaped JSON string, not as data, so these are not counted as supported: {}",
                    encoded.join(", ")
                ),
            ));
        }
        if let (Ok(f), Ok(t)) = (&base_false, &base_true) {
            self.whitespace_warnings(f, t, warnings);
        }
        self.prefix_warning(warnings);
        self.control_token_warning(special, source, warnings);
        caps
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
    fn prefix_warning(&self, out: &mut Vec<Diagnostic>) {
        let Some(b) = self.prefix_breaks().into_iter().next() else {
            return;
        };
        out.push(Diagnostic::new(
            "not_prefix_preserving",
            format!(
                "not prefix-preserving: the prompt for the first {} messages of the {} probe is not a prefix of the prompt for {} ({} message {} added): {}; from character {} it had {:?}, now {:?}",
                b.messages,
                b.probe,
                b.messages + 1,
                b.added_role,
                b.messages + 1,
                b.cause,
                b.offset,
                b.expected,
                b.actual
            ),
        ));
    }

    /// Where growing prefixes of the probe conversations stop being prefixes of each other: plain
    /// turns, with a system message, with reasoning in the history, and with tool calls and results.
    /// Prefixes that do not render are passed over.
    pub(super) fn prefix_breaks(&self) -> Vec<PrefixBreak> {
        let turns = |first: Json| {
            vec![
                user(USER),
                first,
                user(USER2),
                assistant("SECOND_ASSISTANT_PROBE_TEXT"),
                user("THIRD_USER_PROBE_TEXT"),
            ]
        };
        let mut system = vec![json!({"role": "system", "content": SYSTEM})];
        system.extend(turns(assistant(ASSISTANT)));
        let tools = vec![
            user(USER),
            json!({"role": "assistant", "content": "", "tool_calls": [call(CALL_IDS[0], ARG, false)]}),
            tool_result(CALL_IDS[0], RESULT),
            assistant(ASSISTANT),
            user(USER2),
            assistant("SECOND_ASSISTANT_PROBE_TEXT"),
        ];
        let probes = [
            ("plain", turns(assistant(ASSISTANT))),
            ("system", system),
            (
                "reasoning",
                turns(json!({"role": "assistant", "content": ASSISTANT, "reasoning_content": REASONING})),
            ),
            ("tool_calls", tools),
        ];
        let mut breaks = Vec::new();
        for (probe, conv) in probes {
            let mut opts = self.opts(false);
            if probe == "tool_calls" && opts.tools.is_none() {
                opts.tools = Some(tool_schema());
            }
            let renders: Vec<Option<String>> = (1..=conv.len())
                .map(|k| self.render_with(&conv[..k], &opts).ok())
                .collect();
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
                    .map_or(short.len().min(long.len()), |((i, _), _)| i);
                let cause = if short.contains(REASONING) && !long.contains(REASONING) {
                    "the reasoning of an earlier assistant turn is dropped from the history"
                } else if removed(&short[common..], &long[common..]) {
                    "text written for an earlier message is removed when a message is added"
                } else {
                    "text already written for earlier messages changes when a message is added"
                };
                breaks.push(PrefixBreak {
                    probe,
                    messages: k,
                    added_role: conv[k]["role"].as_str().unwrap_or_default().to_string(),
                    offset: short[..common].chars().count(),
                    expected: snippet(&short[common..]),
                    actual: snippet(&long[common..]),
                    cause: cause.to_string(),
                });
                break;
            }
        }
        breaks
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

/// Whether `after` continues with text that `before` has further on: something was cut out.
fn removed(before: &str, after: &str) -> bool {
    let probe: String = after.chars().take(20).collect();
    !probe.is_empty() && before.find(probe.as_str()).is_some_and(|i| i > 0)
}

fn snippet(s: &str) -> String {
    s.chars().take(40).collect()
}
