//! Provenance masks on the Hugging Face kit: one trial per template over every scenario and option set
//! that renders. No assistant span holds a character of another message, every assistant message
//! whose content renders is masked, the templates with `{% generation %}` blocks agree with their
//! tags once the tags are removed (up to whitespace and the assistant's header), and the kit's
//! tokenizers map the spans to masks by transformers' rule.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;
#[path = "support/tag_evidence.rs"]
mod tag_evidence;
#[path = "../../chatfmt/tests/support/trials.rs"]
mod trials;

use chatfmt::jinja::{Clock, Origin};
use chatfmt::{ApplyOptions, ChatSpans, ChatTemplate, MaskSource, SpanOptions};
use chatfmt_tokenize::chat::{tokenize_chats, ChatTokenizeOptions};
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions};
use libtest_mimic::Trial;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;
use tag_evidence::{against_tags, is_assistant, message_of, without_tags};
use trials::{check, kit_trials};

/// One rendering case of the kit: template source, options, messages.
struct Case {
    scenario: String,
    special: Map<String, Json>,
    opts: ApplyOptions,
    messages: Vec<Json>,
    output: String,
    generation_spans: Option<Vec<(usize, usize)>>,
}

fn read(path: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(path).expect("kit file")).expect("kit JSON")
}

/// The kit's cases that render, by template id (named template sets are left out).
fn cases(dir: &Path) -> BTreeMap<String, (String, Vec<Case>)> {
    let index = read(&dir.join("index.json"));
    let scen = read(&dir.join("scenarios.json"));
    let now = scen["frozen_now"].as_str().unwrap_or("2025-07-10T12:00:00").to_string();
    let mut out = BTreeMap::new();
    for t in index["templates"].as_array().into_iter().flatten() {
        let (id, file) = (t["id"].as_str().unwrap(), t["file"].as_str().unwrap());
        let source = std::fs::read_to_string(dir.join("corpus").join(file)).expect("corpus file");
        out.insert(id.to_string(), (source, Vec::new()));
    }
    for g in kits::read_jsonl(&dir.join("goldens.jsonl")).expect("goldens") {
        if g["status"] != "ok" {
            continue;
        }
        let Some((_, list)) = out.get_mut(g["template"].as_str().unwrap_or("")) else {
            continue;
        };
        let scenario = &scen["scenarios"][g["scenario"].as_str().unwrap()];
        let o = &g["options"];
        let opts = ApplyOptions {
            add_generation_prompt: o["add_generation_prompt"].as_bool().unwrap_or(false),
            continue_final_message: (o["continue_final_message"] == true).then(|| "content".to_string()),
            tools: scenario.get("tools").cloned(),
            documents: scenario.get("documents").cloned(),
            chat_template: o["chat_template"].as_str().map(str::to_string),
            kwargs: o["kwargs"].as_object().cloned().unwrap_or_default(),
            clock: Clock::Fixed(now.clone()),
            track_spans: false,
            in_batch: false,
        };
        list.push(Case {
            scenario: g["scenario"].as_str().unwrap().to_string(),
            special: g["special_tokens"].as_object().cloned().unwrap_or_default(),
            opts,
            messages: scenario["messages"].as_array().cloned().unwrap_or_default(),
            output: g["output"].as_str().unwrap_or("").to_string(),
            generation_spans: g["generation_spans"].as_array().map(|s| {
                s.iter()
                    .map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize))
                    .collect()
            }),
        });
    }
    out
}

fn span_options(special: &Map<String, Json>) -> SpanOptions {
    SpanOptions {
        source: MaskSource::Provenance,
        stop_markers: special["eos_token"].as_str().into_iter().map(str::to_string).collect(),
        message_spans: true,
        deadline: None,
    }
}

/// What the rule promises for one render; the failures, described.
fn invariants(case: &Case, s: &ChatSpans) -> Vec<String> {
    let mut failures = Vec::new();
    let what = |msg: String| {
        let o = &case.opts;
        let how = match (o.add_generation_prompt, o.continue_final_message.is_some()) {
            (true, _) => " +prompt",
            (_, true) => " +continue",
            _ => "",
        };
        format!("{}{how}: {msg}", case.scenario)
    };
    let in_spans = |c: usize| s.assistant_spans.iter().any(|&(a, b)| a <= c && c < b);
    // Bytes attributed to one message only.
    let n = case.messages.len();
    for span in &s.rendered.spans {
        let owners: Vec<usize> = match &span.origin {
            Origin::Input(p) => message_of(p).into_iter().collect(),
            Origin::Computed(ps) => ps.iter().filter_map(|p| message_of(p)).collect(),
            Origin::Template => Vec::new(),
        };
        let Some(&owner) = owners.first() else { continue };
        if owners.iter().any(|&o| o != owner) || owner >= n || is_assistant(&case.messages[owner]) {
            continue;
        }
        if let Some(c) = (span.start..span.end).find(|&c| in_spans(c)) {
            failures.push(what(format!(
                "assistant span holds byte {c} of message {owner} ({:?})",
                span.origin
            )));
        }
    }
    for m in &s.messages {
        if !is_assistant(&case.messages[m.index]) || m.content.is_empty() {
            continue;
        }
        let covered = m.content.iter().all(|&(a, b)| (a..b).all(in_spans));
        if !covered {
            failures.push(what(format!(
                "message {} content {:?} not all in {:?}",
                m.index, m.content, s.assistant_spans
            )));
        }
    }
    failures
}

fn main() {
    trials::run(kit_trials("masks_kit", "hf", |dir| {
        let all = cases(&dir);
        let mut trials = Vec::new();
        for (id, (source, cases)) in all {
            let name = format!("masks_kit::{id}");
            trials.push(Trial::test(name, move || {
                let tagged = cases.iter().any(|c| c.generation_spans.is_some());
                let plain = without_tags(&source);
                let mut failures = Vec::new();
                for case in &cases {
                    let t = ChatTemplate::new(if tagged { &plain } else { &source }, case.special.clone());
                    let s = match t.apply_with_spans(&case.messages, &case.opts, &span_options(&case.special)) {
                        Ok(s) => s,
                        Err(e) => {
                            failures.push(format!("{}: {e}", case.scenario));
                            continue;
                        }
                    };
                    if s.rendered.text != case.output {
                        failures.push(format!("{}: render differs from the golden", case.scenario));
                        continue;
                    }
                    failures.extend(invariants(case, &s));
                    if let Some(tags) = &case.generation_spans {
                        let differs = against_tags(&case.messages, &s, tags);
                        failures.extend(differs.map(|d| format!("{}: {d}", case.scenario)));
                    }
                }
                let header = format!("{} of {} cases break the mask rule", failures.len(), cases.len());
                check(|| header, failures)
            }));
        }
        trials.extend(tokenizer_trials());
        Ok(trials)
    }));
}

/// One trial per kit tokenizer: its own template and every hf-kit template (with the tokenizer's
/// special tokens, as transformers passes them), every hf scenario that renders: the assistant mask
/// is 1 exactly on the tokens holding a character of an assistant span.
fn tokenizer_trials() -> Vec<Trial> {
    let base = kits::kits_base();
    ["qwen3", "llama3", "mistral-7b-v0.1"]
        .into_iter()
        .map(|name| {
            let base = base.clone();
            Trial::test(format!("masks_kit::tokenizers::{name}"), move || {
                let scen = read(&base.join("hf/scenarios.json"));
                let scen = scen["scenarios"].as_object().cloned().unwrap_or_default();
                let dir = base.join("tokens/tokenizers").join(name);
                let tokenizer = ChatTokenizer::from_model_dir(&dir).map_err(|e| e.to_string())?;
                let special = tokenizer.special_tokens().clone();
                let mut templates: Vec<(String, ChatTemplate)> = Vec::new();
                if let Ok(own) = ChatTemplate::from_model_dir(&dir) {
                    templates.push(("own".to_string(), own.with_special_tokens(special.clone())));
                }
                let index = read(&base.join("hf/index.json"));
                for t in index["templates"].as_array().into_iter().flatten() {
                    let file = base.join("hf/corpus").join(t["file"].as_str().unwrap_or_default());
                    let source = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
                    let id = t["id"].as_str().unwrap_or_default().to_string();
                    templates.push((id, ChatTemplate::new(&source, special.clone())));
                }
                let eos = special.get("eos_token").and_then(Json::as_str);
                let mut failures = Vec::new();
                let mut checked = 0;
                for (template_id, template) in &templates {
                    for (id, sc) in scen.iter() {
                        let what = format!("{template_id} / {id}");
                        match mask_case(&tokenizer, template, sc, eos) {
                            Ok(None) => {}
                            Ok(Some(problem)) => {
                                checked += 1;
                                failures.extend(problem.map(|p| format!("{what}: {p}")));
                            }
                            Err(e) => failures.push(format!("{what}: {e}")),
                        }
                    }
                }
                if checked < 1000 {
                    failures.push(format!("only {checked} template x scenario cases rendered"));
                }
                eprintln!("masks_kit::tokenizers::{name}: {checked} template x scenario cases");
                let header = format!("{name}: {} of {checked} cases break the mask mapping", failures.len());
                check(|| header, failures)
            })
        })
        .collect()
}

/// One template x scenario through `tokenize_chats` with provenance masks: `None` when it does not
/// render, else the problem found, if any.
fn mask_case(
    tokenizer: &ChatTokenizer,
    template: &ChatTemplate,
    sc: &Json,
    eos: Option<&str>,
) -> Result<Option<Option<String>>, String> {
    let messages = sc["messages"].as_array().cloned().unwrap_or_default();
    let apply = ApplyOptions {
        tools: sc.get("tools").cloned(),
        documents: sc.get("documents").cloned(),
        clock: Clock::Fixed("2025-07-10T12:00:00".into()),
        ..ApplyOptions::default()
    };
    let opts = ChatTokenizeOptions {
        encode: EncodeOptions {
            assistant_masks: true,
            ..EncodeOptions::default()
        },
        sanitize_control_tokens: None,
        spans: Some(SpanOptions {
            source: MaskSource::Provenance,
            stop_markers: eos.into_iter().map(str::to_string).collect(),
            message_spans: true,
            deadline: None,
        }),
    };
    let Ok(mut chats) = tokenize_chats(template, tokenizer, &[&messages], &apply, &opts) else {
        return Ok(None);
    };
    let chat = chats.pop().ok_or("no chat")?;
    let spans = chat.spans.as_ref().ok_or("no spans")?;
    let mask = chat.encoded.assistant_masks.clone().unwrap_or_default();
    // The token ranges of the assistant spans, found by a second path: the tokens holding each span.
    let ranges = tokenizer
        .encode_batch(
            &[chatfmt_tokenize::Text {
                text: &chat.text,
                generation_spans: &[],
                token_spans: &spans.assistant_spans,
            }],
            &EncodeOptions::default(),
        )
        .map_err(|e| e.to_string())?
        .pop()
        .ok_or("no encoding")?
        .span_tokens;
    let mut want = vec![0u8; mask.len()];
    for (a, b) in ranges.into_iter().flatten() {
        // transformers reads a span's last token with Python truthiness: one ending in token 0
        // marks everything from its start to the end of the sequence.
        let b = if b == 1 { want.len() } else { b };
        want[a..b].fill(1);
    }
    if mask != want {
        return Ok(Some(Some(format!("mask {mask:?} != {want:?}"))));
    }
    if messages.iter().any(is_assistant) && !mask.contains(&1) && !spans.assistant_spans.is_empty() {
        return Ok(Some(Some("all-zero mask".to_string())));
    }
    Ok(Some(None))
}
