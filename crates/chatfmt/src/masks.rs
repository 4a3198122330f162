//! Training masks and message spans for any chat template, with or without `{% generation %}` blocks.
//!
//! # The rule
//!
//! Let R be the full render, P_i the render of `messages[:i]` (P_0 is empty; P_n is R without a final
//! generation prompt, and R itself with `continue_final_message`), G_i the same with the generation
//! prompt (G_0 renders no messages, as a batch would), and g_i = G_i minus P_i when G_i starts with
//! P_i. A render that raises is not a prefix. When G_0 raises (most templates read `messages[0]`),
//! a first assistant message's span starts after another assistant message's g_j where its turn
//! holds one before the message's first character, else at that character.
//!
//! - **Turn i** is `[len(P_i), len(P_{i+1}))` of R when P_i and P_{i+1} are prefixes of R. Otherwise it
//!   is taken from provenance: from the end of the previous turn (or from len(P_i), when P_i is a
//!   prefix of R that ends later, before that character) through the last character produced
//!   for message i (its content, reasoning, tool calls, and text computed from it; a field printed
//!   again later, such as a tool call's name repeated in the header of the tool result, refers back
//!   and does not count), followed by the template text that closes it: what the render of
//!   `messages[:i+1]` puts after that character, when R continues with the same text. A message
//!   that produced no character (an empty tool result) has, when P_{i+1} is a prefix of R, the
//!   text from where its turn would start to len(P_{i+1}) as its turn, and else none.
//! - **Closing text.** A template may write text after its last message that every P_i ends with
//!   (Phi-3's write the eos when there is no generation prompt). A P_i that is not a prefix of R
//!   counts as its part before that text when that part is a prefix of R ending at a boundary of
//!   R's spans, holding every character R shows of messages[i-1], and the rest is what R ends with,
//!   from a boundary of its spans (or, when R ends with a generation prompt, P_n's rest); g_i is then
//!   what G_i writes after that part.
//! - **An assistant turn's span** is the turn minus the longest prefix it shares with g_i (the header
//!   is never masked; it never reaches into the message's content; the header ends after the last
//!   occurrence of a longer prefix of g_i before the message's first character, its role aside,
//!   when there is one), ending after the last stop marker
//!   after the message's last character when there is one, plus a stop marker that begins exactly
//!   where the turn ends. Stop markers are the eos token and the model's
//!   stop tokens ([`stop_markers`]). With `continue_final_message` the final message's span ends at its
//!   last character. No character of another message's content is ever in an assistant span, nor
//!   any computed text that shows it (a tool's output written inside the assistant's turn).
//! - **Content** of message i: the characters whose provenance is its `content`, or text
//!   computed from that alone, or computed text that read no other message's content and is part
//!   of this one (`message.content | trim` after a condition on the role) (adjacent ones merged).
//!
//! # One render for every prefix
//!
//! When the template is causal in `messages` ([`chatfmt_jinja::causal`]: it reads them only as the
//! list of one top-level loop whose iterations cannot tell what follows), P_i is the text the plain
//! render of the whole conversation wrote before iteration i, followed by what the statements
//! after the loop write when run from that point; G_i likewise, when the template reads
//! `add_generation_prompt` only after the loop. The rule then takes P_i and g_i from that one
//! render (R itself when R is the plain render) instead of rendering each prefix, and renders a
//! prefix on its own only where the derivation cannot tell (a limit was hit). The results are the same either way
//! ([`ChatTemplate::with_derived_prefixes`] turns the derivation off).
//!
//! All offsets are bytes of the rendered text ([`ByteSpan`]); outputs that promise Python string
//! indices convert them with [`CodePoints::span`]. With [`MaskSource::Tags`] the assistant spans are
//! the template's `{% generation %}` blocks instead; turns and content follow the same rule.

use crate::{ApplyOptions, ChatTemplate, Error, ErrorKind};
use chatfmt_jinja::{ByteSpan, CodePoints, LoopPrefix, Origin, Rendered};
use serde_json::Value as Json;
use std::path::Path;
use std::time::Instant;

/// Where assistant spans come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskSource {
    /// The template's `{% generation %}` blocks.
    Tags,
    /// The rule of this module, from prefix renders and provenance.
    Provenance,
    /// `Tags` when the template a render uses has `{% generation %}` blocks, else `Provenance`
    /// (resolved per render: a conversation with tools may select another named template).
    Auto,
}

impl MaskSource {
    /// The name used on the command line and in JSON output (`tags`, `provenance`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            MaskSource::Tags => "tags",
            MaskSource::Provenance => "provenance",
            MaskSource::Auto => "auto",
        }
    }
}

/// What [`ChatTemplate::apply_with_spans`] computes.
#[derive(Debug, Clone)]
pub struct SpanOptions {
    /// Where assistant spans come from.
    pub source: MaskSource,
    /// Strings that end a model's turn (see [`stop_markers`]).
    pub stop_markers: Vec<String>,
    /// Also compute each message's turn and content ([`ChatSpans::messages`]).
    pub message_spans: bool,
    /// When set, the rule stops with [`chatfmt_jinja::ErrorKind::LimitExceeded`] once this passes
    /// (checked before each prefix render; each render is bounded by the template's limits): unless
    /// the prefixes come from one render, its work grows with the square of the conversation's
    /// length, which a server must bound.
    pub deadline: Option<Instant>,
}

/// Where one input message is in the rendered text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageSpan {
    /// The message's position in the input.
    pub index: usize,
    /// Its `role`, when a string.
    pub role: Option<String>,
    /// Its turn (see the module's rule); `None` when nothing was rendered for it.
    pub turn: Option<ByteSpan>,
    /// The characters whose provenance is its `content`, ascending, adjacent ones merged.
    pub content: Vec<ByteSpan>,
}

impl MessageSpan {
    /// As JSON: `{"index", "role", "turn": [start, end] | null, "content": [[start, end], ...]}`,
    /// in the code points `text` gives (`CodePoints::new(text)` of the rendered text).
    pub fn to_json(&self, text: &CodePoints) -> Json {
        serde_json::json!({
            "index": self.index,
            "role": self.role,
            "turn": self.turn.map(|span| text.span(span)),
            "content": self.content.iter().map(|&span| text.span(span)).collect::<Vec<_>>(),
        })
    }
}

/// A render with its assistant spans and, when asked, each message's spans.
#[derive(Debug, Clone)]
pub struct ChatSpans {
    /// The full render, with provenance spans (none for tags without message spans).
    pub rendered: Rendered,
    /// Where the assistant spans came from (never [`MaskSource::Auto`]).
    pub source: MaskSource,
    /// The byte spans of `rendered.text` a model is trained on, ascending.
    pub assistant_spans: Vec<ByteSpan>,
    /// One entry per input message, in input order (empty unless asked for).
    pub messages: Vec<MessageSpan>,
}

impl ChatSpans {
    /// The `masks`, `assistant_spans` and `message_spans` members of `render --json`: spans as
    /// `[start, end]` code-point pairs, each message as [`MessageSpan::to_json`].
    pub fn to_json(&self) -> serde_json::Map<String, Json> {
        let text = CodePoints::new(&self.rendered.text);
        let assistant = self.assistant_code_points(&text);
        let mut out = serde_json::Map::new();
        out.insert("masks".into(), Json::from(self.source.name()));
        out.insert("assistant_spans".into(), serde_json::json!(assistant));
        out.insert(
            "message_spans".into(),
            Json::Array(self.messages.iter().map(|m| m.to_json(&text)).collect()),
        );
        out
    }

    /// The assistant spans as `[start, end]` code-point pairs of the rendered text (`text` is
    /// `CodePoints::new` of it).
    pub fn assistant_code_points(&self, text: &CodePoints) -> Vec<(usize, usize)> {
        self.assistant_spans.iter().map(|&span| text.span(span)).collect()
    }

    /// Whether the conversation has an assistant message but no assistant span holds a character:
    /// the all-zero mask a training run must not receive silently.
    pub fn assistant_mask_is_empty(&self, messages: &[Json]) -> bool {
        messages.iter().any(is_assistant) && self.assistant_spans.iter().all(|&(s, e)| s >= e)
    }
}

/// A message's `role`, when a string (its few keys are scanned rather than hashed).
fn role_of(m: &Json) -> Option<&str> {
    let (_, role) = m.as_object()?.iter().find(|(k, _)| *k == "role")?;
    role.as_str()
}

fn is_assistant(m: &Json) -> bool {
    role_of(m) == Some("assistant")
}

/// `messages[i]` and what follows it in a context path (`messages[3].content` → `(3, ".content")`).
fn split_message(path: &str) -> Option<(usize, &str)> {
    let rest = path.strip_prefix("messages[")?;
    let close = rest.find(']')?;
    Some((rest[..close].parse().ok()?, &rest[close + 1..]))
}

/// The message index a context path belongs to (`messages[3].content` → 3).
fn message_of(path: &str) -> Option<usize> {
    split_message(path).map(|(i, _)| i)
}

/// Whether what follows `messages[i]` in a context path is its content (or a part of it).
fn is_content(rest: &str) -> bool {
    rest.strip_prefix(".content")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('[') || rest.starts_with('.'))
}

/// The message whose content computed text shows, given the messages whose content it read
/// (`shown`, see [`content_messages`]): text computed from that content alone (the message object
/// may have been read on the way, as in `parse_content(message.content)`), or text that also read
/// other fields (conditions on roles just before the content is printed read them too) but no other
/// message's content and is part of that content, as `message.content | trim` is.
fn content_owner(paths: &[String], shown: &[usize], text: &str, messages: &[Json]) -> Option<usize> {
    let &[i] = shown else { return None };
    let alone = (paths.iter())
        .all(|p| split_message(p).is_some_and(|(j, rest)| j == i && (rest.is_empty() || is_content(rest))));
    (alone || (!text.is_empty() && content_texts(messages.get(i)?).any(|c| c.contains(text)))).then_some(i)
}

/// The strings of a message's content: the content itself, or the text of its parts.
fn content_texts(message: &Json) -> impl Iterator<Item = &str> {
    let (whole, parts) = match &message["content"] {
        Json::String(s) => (Some(s.as_str()), &[][..]),
        Json::Array(parts) => (None, parts.as_slice()),
        _ => (None, &[][..]),
    };
    let parts = parts.iter().filter_map(|p| p.as_str().or_else(|| p["text"].as_str()));
    whole.into_iter().chain(parts)
}

/// The messages a span's origin names (`messages[i]` or a part of it), each path once.
fn owners(origin: &Origin) -> impl Iterator<Item = usize> + '_ {
    let (input, computed): (Option<&String>, &[String]) = match origin {
        Origin::Input(path) => (Some(path), &[]),
        Origin::Computed(paths) => (None, paths),
        Origin::Template => (None, &[]),
    };
    input.into_iter().chain(computed).filter_map(|p| message_of(p))
}

/// What [`scan_messages`] finds for each message of a render.
struct Scan {
    /// The start of the first character produced for each message.
    first_char: Vec<Option<usize>>,
    /// The end of the last character produced for each message.
    last_char: Vec<Option<usize>>,
    /// Each message's content spans (ascending, adjacent ones merged).
    content: Vec<Vec<ByteSpan>>,
    /// Computed spans that show some messages' content among other text (a tool's output inside
    /// markup built from the call it answers), with those messages.
    mixed: Vec<(ByteSpan, Vec<usize>)>,
}

/// For each message of a render, the end of the last character produced for it, its content
/// spans, and the computed spans that mix its content with other text.
fn scan_messages(rendered: &Rendered, messages: &[Json]) -> Scan {
    let n = messages.len();
    let mut mixed: Vec<(ByteSpan, Vec<usize>)> = Vec::new();
    let mut last_char: Vec<Option<usize>> = vec![None; n];
    let mut content: Vec<Vec<ByteSpan>> = vec![Vec::new(); n];
    let mut first_char: Vec<Option<usize>> = vec![None; n];
    // `header`: text that only names the message's role, which opens a turn rather than being
    // the message's own (`'<|im_start|>' + message.role`).
    let mut produced = |i: usize, (start, end): ByteSpan, header: bool| {
        if let Some(last) = last_char.get_mut(i) {
            *last = Some(last.map_or(end, |l| l.max(end)));
        }
        if let Some(first) = first_char.get_mut(i).filter(|_| !header) {
            *first = Some(first.map_or(start, |f| f.min(start)));
        }
    };
    // Input fields already printed: a field printed again (a tool call's name repeated in the
    // header of the tool result that answers it) refers back to its message without extending it.
    let mut printed: foldhash::HashSet<&str> = foldhash::HashSet::default();
    for span in &rendered.spans {
        let content_of = match &span.origin {
            Origin::Template => continue,
            // One parse of the path serves both.
            Origin::Input(path) => split_message(path).map(|(i, rest)| {
                let content = is_content(rest);
                if printed.insert(path.as_str()) || content {
                    produced(i, (span.start, span.end), rest == ".role");
                }
                (i, content)
            }),
            // Content is produced for its message alone; other computed text for every message
            // it read.
            Origin::Computed(paths) => {
                let shown = content_messages(paths);
                match content_owner(paths, &shown, &rendered.text[span.start..span.end], messages) {
                    Some(i) => {
                        produced(i, (span.start, span.end), false);
                        Some((i, true))
                    }
                    None => {
                        let header = paths
                            .iter()
                            .all(|p| split_message(p).is_some_and(|(_, rest)| rest == ".role"));
                        owners(&span.origin).for_each(|i| produced(i, (span.start, span.end), header));
                        if !shown.is_empty() {
                            mixed.push(((span.start, span.end), shown));
                        }
                        None
                    }
                }
            }
        };
        if let Some(spans) = content_of.and_then(|(i, is)| is.then(|| content.get_mut(i)).flatten()) {
            match spans.last_mut() {
                Some(last) if last.1 == span.start => last.1 = span.end,
                _ => spans.push((span.start, span.end)),
            }
        }
    }
    Scan {
        first_char,
        last_char,
        content,
        mixed,
    }
}

/// The messages whose content a computed origin's paths (sorted) name, each once.
fn content_messages(paths: &[String]) -> Vec<usize> {
    let mut out: Vec<usize> = (paths.iter())
        .filter_map(|p| split_message(p).filter(|&(_, rest)| is_content(rest)).map(|(i, _)| i))
        .collect();
    out.dedup();
    out
}

/// The byte length of `prefix` when it is a prefix of `text`.
fn prefix_len(text: &str, prefix: &str) -> Option<usize> {
    text.starts_with(prefix).then_some(prefix.len())
}

impl ChatTemplate {
    /// Whether the rule of [`crate::masks`] may derive the renders of a conversation's prefixes from
    /// one render when the template is causal in `messages` (the default; see the module's doc).
    /// Either way the results are the same; off, every prefix is rendered on its own.
    pub fn with_derived_prefixes(mut self, on: bool) -> Self {
        self.derive_prefixes = on;
        self
    }

    /// Whether the template `apply` would use with `opts` has `{% generation %}` blocks.
    pub fn has_generation_blocks(&self, opts: &ApplyOptions) -> Result<bool, chatfmt_jinja::Error> {
        let selected = self.select(opts.chat_template.as_deref(), opts.tools.is_some())?;
        Ok(selected.get()?.has_generation_blocks())
    }

    /// The source `source` means for a render with `opts`: [`MaskSource::Auto`] becomes `Tags` or
    /// `Provenance`.
    pub fn resolve_mask_source(
        &self,
        source: MaskSource,
        opts: &ApplyOptions,
    ) -> Result<MaskSource, chatfmt_jinja::Error> {
        Ok(match source {
            MaskSource::Auto if self.has_generation_blocks(opts)? => MaskSource::Tags,
            MaskSource::Auto => MaskSource::Provenance,
            other => other,
        })
    }

    /// Renders as [`apply`](Self::apply) does and finds the assistant spans (and, when asked, each
    /// message's turn and content) by the rule of [`crate::masks`].
    pub fn apply_with_spans(
        &self,
        messages: &[Json],
        opts: &ApplyOptions,
        spans: &SpanOptions,
    ) -> Result<ChatSpans, chatfmt_jinja::Error> {
        let source = self.resolve_mask_source(spans.source, opts)?;
        let tags_only = source == MaskSource::Tags && !spans.message_spans;
        let full_opts = ApplyOptions {
            track_spans: !tags_only,
            ..opts.clone()
        };
        // When R is the plain render and the template is causal, the prefixes come with it.
        let plain = !opts.add_generation_prompt && opts.continue_final_message.is_none();
        let with_prefixes = (!tags_only && plain && messages.len() >= 2 && self.derive_prefixes)
            .then(|| {
                let prompt_for = |i: usize| is_assistant(&messages[i]);
                self.apply_prefixes(messages, &full_opts, &prompt_for).ok().flatten()
            })
            .flatten()
            .filter(|(_, prefixes)| prefixes.len() == messages.len());
        let (rendered, prefixes) = match with_prefixes {
            Some((rendered, prefixes)) => (rendered, Some(prefixes)),
            None => (self.apply(messages, &full_opts)?, None),
        };
        let mut out = ChatSpans {
            assistant_spans: match source {
                MaskSource::Tags => rendered.generation_spans.clone(),
                _ => Vec::new(),
            },
            rendered,
            source,
            messages: Vec::new(),
        };
        if tags_only {
            return Ok(out);
        }
        let mut rule = Rule::new(
            self,
            (messages, opts),
            (&out.rendered, prefixes),
            &spans.stop_markers,
            spans.deadline,
        )?;
        let turns = rule.turns();
        if source == MaskSource::Provenance {
            out.assistant_spans = rule.assistant_spans(&turns);
        }
        if spans.message_spans {
            out.messages = (0..messages.len())
                .map(|i| MessageSpan {
                    index: i,
                    role: role_of(&messages[i]).map(str::to_string),
                    turn: turns[i].filter(|&(s, e)| s < e),
                    content: std::mem::take(&mut rule.content[i]),
                })
                .collect();
        }
        Ok(out)
    }
}

/// A render and the end of the last character it produced for its last message.
type WithLastChar = (Rendered, Option<usize>);

/// The render of `messages` and the end of the last character it produced for the last message
/// (its content, or text computed from it).
fn render_with_last_char(
    template: &ChatTemplate,
    messages: &[Json],
    opts: &ApplyOptions,
) -> Result<WithLastChar, chatfmt_jinja::Error> {
    let last = messages.len().checked_sub(1);
    let (rendered, spans) = template.apply_named_spans(messages, opts, &|path| message_of(path) == last)?;
    Ok((rendered, spans.iter().map(|&(_, end)| end).max()))
}

/// Prefixes that differ from R only by the text the template writes after its last message (an eos
/// when there is no generation prompt, as Phi-3's templates write): P_i is taken as its part before
/// that closing text when that part is a prefix of R ending at a boundary of R's spans and holding
/// all of its last message that R shows, and what follows it is text R ends with as spans of its
/// own, or the closing text of P_n (`last` is n when R has a generation prompt, and so does not end
/// with it). g_i is then what G_i writes after that part.
fn closing_text(
    rendered: &Rendered,
    unmatched: &[(usize, String, Option<String>)],
    last: Option<usize>,
    last_char: &[Option<usize>],
    prefixes: &mut [Option<usize>],
    prompts: &mut [Option<String>],
) {
    let text = rendered.text.as_str();
    if rendered.spans.is_empty() {
        return;
    }
    // The span starts of R where P may be cut, latest first: those within its prefix shared with R.
    let starts = |p: &str| {
        let shared = common_prefix_len(p.as_bytes(), text.as_bytes());
        let at = rendered.spans.partition_point(|s| s.start <= shared);
        (rendered.spans[..at].iter().rev().map(|s| s.start)).filter(|&cut| cut > 0)
    };
    let is_start = |b: usize| rendered.spans.binary_search_by_key(&b, |s| s.start).is_ok();
    // The part of P_n before the text R does not go on with: P_n's closing text.
    let closing = (unmatched.iter().find(|(i, ..)| Some(*i) == last)).and_then(|(_, p, _)| {
        let cut = starts(p).next()?;
        p.get(cut..).filter(|rest| !rest.is_empty())
    });
    for (i, p, g) in unmatched {
        // The part kept holds all that R shows of the prefix's last message (a prefix that drops
        // that message, as templates do with a last assistant message, is no prefix); the longest
        // such part whose rest R also ends with, as text of its own, or that is P_n's closing text.
        let least = last_char[i - 1].unwrap_or(0);
        let found = starts(p).take_while(|&cut| cut >= least).take(8).find(|&cut| {
            let rest = &p[cut.min(p.len())..];
            !rest.is_empty() && ((text.ends_with(rest) && is_start(text.len() - rest.len())) || closing == Some(rest))
        });
        let Some(cut) = found else { continue };
        prefixes[*i] = Some(cut);
        if let (Some(slot), Some(g)) = (prompts.get_mut(*i), g) {
            if slot.is_none() && g.as_bytes().starts_with(&p.as_bytes()[..cut]) {
                *slot = g.get(cut..).map(str::to_string);
            }
        }
    }
}

/// The length of the longest common prefix of `a` and `b` (compared a block at a time: the texts
/// are usually equal for most of their length).
fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let mut at = 0;
    while at + BLOCK <= n && a[at..at + BLOCK] == b[at..at + BLOCK] {
        at += BLOCK;
    }
    at + (a[at..n].iter().zip(&b[at..n])).take_while(|(x, y)| x == y).count()
}

/// The renders of a conversation's prefixes derived from one plain render of the whole (see
/// [`ChatTemplate::apply_prefixes`]), as the rule reads them against R.
struct Derived {
    /// The plain render of the whole conversation (`None` when it is R).
    full: Option<String>,
    /// The prefix renders, by length.
    prefixes: Vec<LoopPrefix>,
    /// The length of the longest common prefix of R and `full`.
    common: usize,
}

impl Derived {
    /// The byte length of P_i in R when P_i is a prefix of R (`Some(None)` when it is not, or
    /// raises), or `None` when the derivation cannot tell (it hit a limit).
    fn prefix(&self, i: usize, text: &str) -> Option<Option<usize>> {
        let Some(p) = self.prefixes.get(i) else {
            return Some(
                self.full
                    .as_deref()
                    .map_or(Some(text.len()), |full| prefix_len(text, full)),
            );
        };
        match p.tail.as_ref()? {
            Ok(tail) => Some(
                (p.len <= self.common && text.get(p.len..).is_some_and(|rest| rest.starts_with(tail.as_str())))
                    .then_some(p.len + tail.len()),
            ),
            Err(e) => (e.kind() != chatfmt_jinja::ErrorKind::LimitExceeded).then_some(None),
        }
    }

    /// The texts of P_i and G_i, when they rendered (see [`Rule::new`]'s closing text).
    fn texts(&self, i: usize, text: &str) -> Option<(String, Option<String>)> {
        let Some(p) = self.prefixes.get(i) else {
            return self.full.clone().map(|full| (full, None));
        };
        let base = self.full.as_deref().unwrap_or(text).get(..p.len)?;
        let tail = p.tail.as_ref()?.as_ref().ok()?;
        let alt = p
            .alt_tail
            .as_ref()
            .and_then(|a| a.as_ref().ok())
            .map(|alt| format!("{base}{alt}"));
        Some((format!("{base}{tail}"), alt))
    }

    /// g_i (see `Rule::generation_prompt`): `Some(None)` when P_i or G_i raises or G_i does not
    /// start with P_i, `None` when the derivation cannot tell.
    fn prompt(&self, i: usize) -> Option<Option<String>> {
        let p = self.prefixes.get(i)?;
        let limit = |e: &chatfmt_jinja::Error| e.kind() == chatfmt_jinja::ErrorKind::LimitExceeded;
        match (p.tail.as_ref()?, p.alt_tail.as_ref()?) {
            (Err(e), _) | (_, Err(e)) if limit(e) => None,
            (Ok(tail), Ok(alt)) => Some(alt.strip_prefix(tail.as_str()).map(str::to_string)),
            _ => Some(None),
        }
    }
}

/// What the rule needs of one conversation: the full render, its prefixes and provenance.
struct Rule<'r> {
    messages: &'r [Json],
    /// Whether each message is an assistant's.
    assistant: Vec<bool>,
    /// R's text.
    text: &'r str,
    /// Byte length of P_i when it is a prefix of R, for i in 0..=n.
    prefixes: Vec<Option<usize>>,
    /// g_i for each assistant message i before the last (see `generation_prompt`).
    prompts: Vec<Option<String>>,
    /// The start of the first character produced for each message.
    first_char: Vec<Option<usize>>,
    /// The end of the last character produced for each message.
    last_char: Vec<Option<usize>>,
    /// The byte length of the template text that closes each message (see `Rule::new`).
    trailers: Vec<usize>,
    /// The content spans of each message.
    content: Vec<Vec<ByteSpan>>,
    /// Computed spans showing some messages' content among other text (see [`Scan::mixed`]).
    mixed: Vec<(ByteSpan, Vec<usize>)>,
    stop_markers: &'r [String],
    continued: bool,
}

impl<'r> Rule<'r> {
    /// The rule's data for `messages` rendered with `opts` as `rendered` (R), with the prefix
    /// renders derived along with R when it is the plain render of a causal template.
    fn new(
        template: &'r ChatTemplate,
        (messages, opts): (&'r [Json], &ApplyOptions),
        (rendered, with_r): (&'r Rendered, Option<Vec<LoopPrefix>>),
        stop_markers: &'r [String],
        deadline: Option<Instant>,
    ) -> Result<Self, chatfmt_jinja::Error> {
        let n = messages.len();
        let assistant: Vec<bool> = messages.iter().map(is_assistant).collect();
        let plain = ApplyOptions {
            add_generation_prompt: false,
            continue_final_message: None,
            track_spans: false,
            ..opts.clone()
        };
        let continued = opts.continue_final_message.is_some();
        let text = rendered.text.as_str();
        let Scan {
            first_char,
            last_char,
            content,
            mixed,
        } = scan_messages(rendered, messages);
        // P_n is R itself unless R ends with a generation prompt.
        let full_is_last = continued || !opts.add_generation_prompt;
        // Whether P_i is rendered on its own (not as R, nor with G_i by `apply_pair`).
        let alone = |i: usize| !((i == n && full_is_last) || (i < n && assistant[i]));
        let hint = &template.prefix_hint;
        let mut prefixes: Vec<Option<usize>> = vec![Some(0)];
        // g_i for each assistant message i, from G_i rendered with P_i.
        let mut prompts: Vec<Option<String>> = vec![None; n];
        // g_0 is G_0 itself, since P_0 is empty: the text before a first assistant message (a
        // default system prompt, the header). transformers refuses to render an empty conversation
        // on its own but renders one within a batch, which is how G_0 is rendered here.
        if assistant.first() == Some(&true) {
            let empty = ApplyOptions {
                add_generation_prompt: true,
                in_batch: true,
                ..plain.clone()
            };
            prompts[0] = template.apply(&[], &empty).ok().map(|g| g.text);
        }
        let mut trailers = vec![0; n];
        // The prefixes that rendered but are not prefixes of R, with G_i when it was rendered.
        let mut unmatched: Vec<(usize, String, Option<String>)> = Vec::new();
        // One render replaces the prefix renders when there are two or more of them.
        let derived = if let Some(prefixes) = with_r {
            Some(Derived {
                full: None,
                prefixes,
                common: text.len(),
            })
        } else if template.derive_prefixes && n - usize::from(full_is_last) >= 2 {
            let prompt_for = |i: usize| assistant[i];
            let found = template.apply_prefixes(messages, &plain, &prompt_for).ok().flatten();
            found.filter(|(_, p)| p.len() == n).map(|(full, prefixes)| {
                let common = common_prefix_len(text.as_bytes(), full.text.as_bytes());
                Derived {
                    full: Some(full.text),
                    prefixes,
                    common,
                }
            })
        } else {
            None
        };
        for i in 1..=n {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(chatfmt_jinja::Error::new(
                    chatfmt_jinja::ErrorKind::LimitExceeded,
                    format!(
                        "finding the spans of {n} messages took longer than allowed: the rule renders \
                         every prefix of the conversation, so its work grows with the square of the \
                         conversation's length; stopped before messages[:{i}]"
                    ),
                ));
            }
            // A prefix rendered with provenance at once (see `PrefixHint`).
            let mut tracked: Option<Result<WithLastChar, chatfmt_jinja::Error>> = None;
            let from_one_render = derived.as_ref().filter(|_| i < n || !full_is_last).and_then(|d| {
                let prefix = d.prefix(i, text)?;
                if i < n && assistant[i] {
                    prompts[i] = d.prompt(i)?;
                }
                Some(prefix)
            });
            let mut miss = |p: &str, g: Option<&str>, len: Option<usize>| {
                if len.is_none() {
                    unmatched.push((i, p.to_string(), g.map(str::to_string)));
                }
                len
            };
            prefixes.push(if i == n && full_is_last {
                Some(text.len())
            } else if let Some(prefix) = from_one_render {
                if prefix.is_none() {
                    if let Some((p, g)) = derived.as_ref().and_then(|d| d.texts(i, text)) {
                        miss(&p, g.as_deref(), None);
                    }
                }
                prefix
            } else if i < n && assistant[i] {
                template.apply_pair(&messages[..i], &plain).ok().and_then(|(p, g)| {
                    let g = g.ok();
                    prompts[i] = (g.as_ref()).and_then(|g| g.text.strip_prefix(p.text.as_str()).map(str::to_string));
                    miss(&p.text, g.as_ref().map(|g| g.text.as_str()), prefix_len(text, &p.text))
                })
            } else if last_char[i - 1].is_some() && hint.expects(assistant[i - 1]) {
                let r = render_with_last_char(template, &messages[..i], &plain);
                let len = (r.as_ref().ok()).and_then(|(r, _)| miss(&r.text, None, prefix_len(text, &r.text)));
                tracked = Some(r);
                len
            } else {
                (template.apply(&messages[..i], &plain).ok())
                    .and_then(|r| miss(&r.text, None, prefix_len(text, &r.text)))
            });
            // The text the render of messages[..i] puts after message i-1's last character, when R
            // has it there too: the template text that closes message i-1. Only a turn that
            // prefixes do not give (see `turns`) needs it, so only then is that render repeated with
            // provenance. It is found now, so that no prefix render outlives its iteration.
            let by_prefixes = matches!((prefixes[i - 1], prefixes[i]), (Some(a), Some(b)) if a <= b);
            if alone(i) {
                hint.learn(assistant[i - 1], !by_prefixes);
            }
            let Some(end) = last_char[i - 1].filter(|_| !by_prefixes) else {
                continue;
            };
            let again;
            let (p, last) = match &tracked {
                _ if i == n && full_is_last => (rendered, last_char[i - 1]),
                Some(Ok((r, last))) => (r, *last),
                Some(Err(_)) => continue,
                None => match render_with_last_char(template, &messages[..i], &plain) {
                    Ok(r) => {
                        again = r;
                        (&again.0, again.1)
                    }
                    Err(_) => continue,
                },
            };
            if let Some(tail) = last.and_then(|last| p.text.get(last..)) {
                if text.get(end..).is_some_and(|after| after.starts_with(tail)) {
                    trailers[i - 1] = tail.len();
                }
            }
        }
        let last = (!full_is_last).then_some(n);
        closing_text(rendered, &unmatched, last, &last_char, &mut prefixes, &mut prompts);
        Ok(Rule {
            messages,
            assistant,
            text,
            prefixes,
            prompts,
            first_char,
            last_char,
            trailers,
            content,
            mixed,
            stop_markers,
            continued,
        })
    }

    /// Each message's turn (possibly empty), by prefixes where they hold, else by provenance.
    fn turns(&self) -> Vec<Option<ByteSpan>> {
        let mut end = 0;
        (0..self.messages.len())
            .map(|i| {
                // A turn starts after the previous one, and not before P_i when P_i is a prefix.
                let from = self.prefixes[i].map_or(end, |p| p.max(end));
                let turn = match (self.prefixes[i], self.prefixes[i + 1]) {
                    (Some(a), Some(b)) if a <= b => Some((a, b)),
                    _ => match self.last_char[i] {
                        Some(last) => {
                            let start = if from <= last { from } else { end };
                            Some((start, (last + self.trailers[i]).max(start)))
                        }
                        // No character of its own (empty content): what it rendered runs up to
                        // where P_{i+1} ends, when that is a prefix.
                        None => self.prefixes[i + 1].filter(|&b| b > from).map(|b| (from, b)),
                    },
                };
                if let Some((_, e)) = turn {
                    end = end.max(e);
                }
                turn
            })
            .collect()
    }

    /// g_i: what the generation prompt adds to P_i, when P_i rendered and G_i starts with it.
    fn generation_prompt(&self, i: usize) -> Option<&str> {
        self.prompts.get(i)?.as_deref()
    }

    fn assistant_spans(&self, turns: &[Option<ByteSpan>]) -> Vec<ByteSpan> {
        let n = self.messages.len();
        let mut spans = Vec::new();
        for (i, turn) in turns.iter().enumerate() {
            let Some((a, b)) = *turn else { continue };
            if a >= b || !self.assistant[i] {
                continue;
            }
            let header = self.generation_prompt(i).map_or(0, |g| self.header_len(i, (a, b), g));
            // The header never reaches into the message's own content.
            let start = match self.content[i].first() {
                Some(&(c, _)) if c >= a => (a + header).min(c),
                _ => a + header,
            };
            let start = if i == 0 && self.generation_prompt(0).is_none() {
                self.first_header_end((a, b)).unwrap_or(start)
            } else {
                start
            };
            let end = if self.continued && i + 1 == n {
                b
            } else {
                let from = self.last_char[i].map_or(start, |l| l.clamp(start, b));
                self.span_end(from, b)
            };
            if start < end {
                spans.extend(self.without_other_content(i, (start, end)));
            }
        }
        spans
    }

    /// How much of assistant turn i, `[a, b)`, is its header: the longest prefix it shares with
    /// g_i, or through the last occurrence of a longer prefix of g_i before the message's first
    /// character when the turn holds one (it then also holds other text: a default system prompt
    /// before a first message, or the text of a message that produced no character of its own).
    fn header_len(&self, i: usize, (a, b): ByteSpan, g: &str) -> usize {
        let turn = self.text.get(a..b).unwrap_or_default();
        let shared: usize = (turn.chars().zip(g.chars()))
            .take_while(|(x, y)| x == y)
            .map(|(x, _)| x.len_utf8())
            .sum();
        // Only before the message's own text: a turn without any has nothing to anchor the search.
        let Some(first) = self.first_char[i] else {
            return shared;
        };
        let before = turn.get(..first.clamp(a, b) - a).unwrap_or_default();
        // The ends of g_i's longer prefixes, longest first (`shared` is at least 0, so no empty one).
        let longer = (g.char_indices().map(|(k, _)| k).chain([g.len()]).rev())
            .take_while(|&k| k > shared)
            .find_map(|k| before.rfind(&g[..k]).map(|at| at + k));
        longer.unwrap_or(shared)
    }

    /// Where a first assistant message's span starts when g_0 is unknown (the template cannot
    /// render no messages): after the last generation prompt of another assistant message that the
    /// turn holds before the message's first character, else at that character. What comes before
    /// (a BOS, a default system prompt, the header) is never trained on.
    fn first_header_end(&self, (a, b): ByteSpan) -> Option<usize> {
        let first = self.first_char.first().copied().flatten()?.clamp(a, b);
        let turn = self.text.get(a..b)?;
        let after_prompt = (self.prompts.iter().flatten())
            .filter(|g| !g.is_empty())
            .filter_map(|g| {
                let before = turn.get(..(first - a + g.len()).min(turn.len()))?;
                before.rfind(g.as_str()).map(|at| a + at + g.len())
            })
            .filter(|&end| end <= b)
            .max();
        Some(after_prompt.unwrap_or(first))
    }

    /// Where an assistant span ends in a turn ending at `end`: after the last stop marker from `start`
    /// on, else at the turn's end plus a stop marker that begins there.
    fn span_end(&self, start: usize, end: usize) -> usize {
        let inside = self.text.get(start..end).unwrap_or_default();
        let last_marker = (self.stop_markers.iter())
            .filter(|m| !m.is_empty())
            .filter_map(|m| inside.rfind(m.as_str()).map(|at| start + at + m.len()))
            .max();
        match last_marker {
            Some(b) if b < end => b,
            _ => {
                let after = self.text.get(end..).unwrap_or_default();
                let longest = (self.stop_markers.iter())
                    .filter(|m| !m.is_empty() && after.starts_with(m.as_str()))
                    .map(String::len)
                    .max();
                longest.map_or(end, |len| end + len)
            }
        }
    }

    /// `span` without the characters of any other message's content, nor the computed text that
    /// shows it.
    fn without_other_content(&self, i: usize, span: ByteSpan) -> Vec<ByteSpan> {
        let mixed = (self.mixed.iter())
            .filter(|(_, shown)| shown.iter().any(|&j| j != i))
            .map(|&(s, _)| s);
        let mut others: Vec<ByteSpan> = (self.content.iter().enumerate())
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, c)| c.iter().copied())
            .chain(mixed)
            .filter(|&(s, e)| s < span.1 && e > span.0)
            .collect();
        others.sort_unstable();
        let mut out = Vec::new();
        let mut at = span.0;
        for (s, e) in others {
            if s > at {
                out.push((at, s));
            }
            at = at.max(e);
        }
        if at < span.1 {
            out.push((at, span.1));
        }
        out
    }
}

/// The strings that end a model's turn, as a model folder gives them: the eos token (`eos_token` of
/// `special_tokens`) and each id of `generation_config.json`'s `eos_token_id` (an int or a list) mapped
/// through `tokenizer.json` (its vocabulary and added tokens), plus `extra`. Missing files give nothing.
pub fn stop_markers(dir: Option<&Path>, eos_token: Option<&str>, extra: &[String]) -> Result<Vec<String>, Error> {
    let mut out: Vec<String> = eos_token.into_iter().map(str::to_string).collect();
    if let Some(dir) = dir {
        let ids: Vec<u64> = match crate::template::read_json_file(&dir.join("generation_config.json"))? {
            Some(config) => match &config["eos_token_id"] {
                Json::Number(n) => n.as_u64().into_iter().collect(),
                Json::Array(items) => items.iter().filter_map(Json::as_u64).collect(),
                _ => Vec::new(),
            },
            None => Vec::new(),
        };
        if !ids.is_empty() {
            let path = dir.join("tokenizer.json");
            let tokenizer = crate::template::read_json_file(&path)?.ok_or_else(|| {
                Error::new(
                    ErrorKind::NotFound,
                    "generation_config.json names eos token ids but the folder has no tokenizer.json to spell them",
                )
                .in_file(&path)
            })?;
            out.extend(ids.iter().filter_map(|&id| token_text(&tokenizer, id)));
        }
    }
    out.extend(extra.iter().cloned());
    out.retain(|m| !m.is_empty());
    out.sort();
    out.dedup();
    Ok(out)
}

/// The text of token `id` in a `tokenizer.json`: an added token, else the vocabulary's entry (a map
/// of token to id, or Unigram's list of `[piece, score]`).
fn token_text(tokenizer: &Json, id: u64) -> Option<String> {
    let added = tokenizer["added_tokens"].as_array().into_iter().flatten();
    if let Some(t) = added
        .filter(|t| t["id"].as_u64() == Some(id))
        .find_map(|t| t["content"].as_str())
    {
        return Some(t.to_string());
    }
    match &tokenizer["model"]["vocab"] {
        Json::Object(vocab) => vocab
            .iter()
            .find(|(_, v)| v.as_u64() == Some(id))
            .map(|(k, _)| k.clone()),
        Json::Array(pieces) => usize::try_from(id)
            .ok()
            .and_then(|i| pieces.get(i))
            .and_then(|p| p[0].as_str())
            .map(str::to_string),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::PrefixHint;
    use serde_json::json;

    fn chatml() -> ChatTemplate {
        ChatTemplate::new(
            "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}\
             {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
            Default::default(),
        )
    }

    fn spans(t: &ChatTemplate, messages: &[Json], markers: &[&str]) -> ChatSpans {
        let opts = SpanOptions {
            source: MaskSource::Provenance,
            stop_markers: markers.iter().map(|m| m.to_string()).collect(),
            message_spans: true,
            deadline: None,
        };
        t.apply_with_spans(messages, &ApplyOptions::default(), &opts)
            .expect("renders")
    }

    fn texts(s: &ChatSpans) -> Vec<String> {
        s.assistant_spans.iter().map(|&r| slice(s, r).to_string()).collect()
    }

    fn slice(s: &ChatSpans, (start, end): ByteSpan) -> &str {
        &s.rendered.text[start..end]
    }

    #[test]
    fn a_passed_deadline_stops_the_rule_before_its_prefix_renders() {
        let msgs = [
            json!({"role": "user", "content": "Hi"}),
            json!({"role": "assistant", "content": "Hello!"}),
        ];
        let opts = SpanOptions {
            source: MaskSource::Provenance,
            stop_markers: Vec::new(),
            message_spans: true,
            deadline: Some(Instant::now()),
        };
        let e = chatml()
            .apply_with_spans(&msgs, &ApplyOptions::default(), &opts)
            .expect_err("the deadline has passed");
        assert_eq!(e.kind(), chatfmt_jinja::ErrorKind::LimitExceeded);
        assert!(e.message().contains("spans of 2 messages"), "{}", e.message());
        // A deadline still ahead changes nothing.
        let later = SpanOptions {
            deadline: Some(Instant::now() + std::time::Duration::from_secs(600)),
            ..opts
        };
        let found = chatml()
            .apply_with_spans(&msgs, &ApplyOptions::default(), &later)
            .expect("renders");
        assert_eq!(texts(&found), texts(&spans(&chatml(), &msgs, &[])));
    }

    #[test]
    fn chatml_masks_the_reply_and_its_end_marker_not_the_header_or_newline() {
        let msgs = [
            json!({"role": "user", "content": "Hi"}),
            json!({"role": "assistant", "content": "Hello!"}),
            json!({"role": "user", "content": "Bye"}),
        ];
        let s = spans(&chatml(), &msgs, &["<|im_end|>"]);
        assert_eq!(texts(&s), ["Hello!<|im_end|>"]);
        assert_eq!(
            s.messages[1].content.iter().map(|&r| slice(&s, r)).collect::<Vec<_>>(),
            ["Hello!"]
        );
        let turn = |i: usize| s.messages[i].turn.map(|r| slice(&s, r));
        assert_eq!(turn(0), Some("<|im_start|>user\nHi<|im_end|>\n"));
        assert_eq!(turn(1), Some("<|im_start|>assistant\nHello!<|im_end|>\n"));
        // Without a stop marker the whole turn after the header is masked.
        assert_eq!(texts(&spans(&chatml(), &msgs, &[])), ["Hello!<|im_end|>\n"]);
    }

    #[test]
    fn spans_are_bytes_inside_and_code_points_in_json() {
        let msgs = [
            json!({"role": "user", "content": "Caf\u{e9} \u{6771}?"}),
            json!({"role": "assistant", "content": "\u{1f600} s\u{ed}"}),
        ];
        let s = spans(&chatml(), &msgs, &["<|im_end|>"]);
        let text = &s.rendered.text;
        let reply = "\u{1f600} s\u{ed}<|im_end|>";
        let start = text.find(reply).expect("the reply is rendered");
        assert_eq!(s.assistant_spans, [(start, start + reply.len())]);
        assert_eq!(texts(&s), [reply]);
        // Python string indices: code points before each byte offset.
        let py = |byte: usize| text[..byte].chars().count();
        let content = s.messages[1].content[0];
        assert_eq!(slice(&s, content), "\u{1f600} s\u{ed}");
        let out = Json::Object(s.to_json());
        assert_eq!(out["assistant_spans"], json!([[py(start), py(start + reply.len())]]));
        assert_eq!(
            out["message_spans"][1]["content"],
            json!([[py(content.0), py(content.1)]])
        );
        let turn = s.messages[0].turn.expect("a user turn");
        assert_eq!(out["message_spans"][0]["turn"], json!([py(turn.0), py(turn.1)]));
        assert_ne!(py(start), start, "the text before the reply is not ASCII");
    }

    #[test]
    fn a_stop_marker_right_after_the_turn_is_masked() {
        // GLM-4 style: the turn ends where the model generates the next `<|user|>`.
        let t = ChatTemplate::new(
            "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}{% endfor %}\
             {% if add_generation_prompt %}<|assistant|>\n{% endif %}",
            Default::default(),
        );
        let msgs = [
            json!({"role": "user", "content": "Hi"}),
            json!({"role": "assistant", "content": "Yo"}),
            json!({"role": "user", "content": "Bye"}),
        ];
        assert_eq!(texts(&spans(&t, &msgs, &["<|user|>"])), ["Yo<|user|>"]);
    }

    #[test]
    fn tool_calls_computed_from_a_message_belong_to_its_turn() {
        // The earlier turn's text changes once a later message exists, so prefixes do not hold and
        // the turn comes from provenance, tool-call JSON included.
        let t = ChatTemplate::new(
            "{% for m in messages %}{% if m.role == 'assistant' %}<a>{{ m.content }}\
             {% for c in m.tool_calls %}{{ c.function | tojson }}{% endfor %}\
             {% if not loop.last %}[more]{% endif %}{% else %}<u>{{ m.content }}{% endif %}{% endfor %}",
            Default::default(),
        );
        let msgs = [
            json!({"role": "user", "content": "Go"}),
            json!({"role": "assistant", "content": "ok", "tool_calls": [{"function": {"name": "f"}}]}),
            json!({"role": "user", "content": "next"}),
        ];
        let s = spans(&t, &msgs, &[]);
        assert_eq!(texts(&s), ["<a>ok{\"name\": \"f\"}"]);
        assert_eq!(s.messages[2].turn.map(|r| slice(&s, r)), Some("[more]<u>next"));
    }

    #[test]
    fn a_kind_of_prefix_that_needed_provenance_gets_it_at_once_with_the_same_result() {
        // The last message renders differently: the prefix that ends with the assistant's is not a
        // prefix of the full render.
        let t = ChatTemplate::new(
            "{% for m in messages %}{% if m.role == 'assistant' %}<a>{% if loop.last %}(last){% endif %}\
             {{ m.content }}</a>{% else %}<u>{{ m.content }}</u>{% endif %}{% endfor %}",
            Default::default(),
        );
        let msgs = [
            json!({"role": "user", "content": "Go"}),
            json!({"role": "assistant", "content": "ok"}),
            json!({"role": "user", "content": "next"}),
        ];
        assert!(!t.prefix_hint.expects(true));
        let first = spans(&t, &msgs, &[]);
        assert!(t.prefix_hint.expects(true) && !t.prefix_hint.expects(false));
        let second = spans(&t, &msgs, &[]);
        assert_eq!(texts(&second), ["<a>ok</a>"]);
        assert_eq!(
            (first.rendered, first.assistant_spans, first.messages),
            (second.rendered, second.assistant_spans, second.messages)
        );
        let hint = PrefixHint::default();
        hint.learn(false, true);
        assert!(hint.expects(false) && !hint.expects(true));
        hint.learn(false, false);
        assert!(!hint.expects(false));
    }

    #[test]
    fn prefixes_derived_from_one_render_give_what_rendering_each_gives() {
        let templates = [
            // A namespace changed in the loop and read after it.
            "{% set ns = namespace(last='', n=0) %}{% for m in messages %}<{{ m.role }}>{{ m.content }}\
             {% set ns.last = m.role %}{% set ns.n = ns.n + 1 %}{% endfor %}\
             {% if ns.last == 'assistant' %}</s>{% endif %}[{{ ns.n }}]\
             {% if add_generation_prompt %}<assistant>{% endif %}",
            // The loop object's attributes that ignore later messages.
            "{% for m in messages %}{% if loop.first %}<bos>{% endif %}{{ loop.index }}\
             {% if loop.previtem and loop.previtem.role == m.role %}(again){% endif %}\
             <{{ m.role }}>{{ m.content }}<end>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}",
            // Statements after the loop that raise for some prefixes.
            "{% set ns = namespace(users=0) %}{% for m in messages %}<{{ m.role }}>{{ m.content }}\
             {% if m.role == 'user' %}{% set ns.users = ns.users + 1 %}{% endif %}{% endfor %}\
             {% if ns.users == 2 %}{{ raise_exception('two users') }}{% endif %}\
             {% if add_generation_prompt %}<assistant>{% endif %}",
        ];
        let msgs: Vec<Json> = [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "assistant",
            "user",
            "assistant",
        ]
        .iter()
        .enumerate()
        .map(|(i, role)| json!({"role": role, "content": format!("text {i}")}))
        .collect();
        for source in templates {
            let derived = ChatTemplate::new(source, Default::default());
            let separate = ChatTemplate::new(source, Default::default()).with_derived_prefixes(false);
            assert!(derived.derive_prefixes && !separate.derive_prefixes);
            for n in 1..=msgs.len() {
                for add_generation_prompt in [false, true] {
                    let opts = ApplyOptions {
                        add_generation_prompt,
                        ..ApplyOptions::default()
                    };
                    let spans = SpanOptions {
                        source: MaskSource::Provenance,
                        stop_markers: vec!["</s>".into()],
                        message_spans: true,
                        deadline: None,
                    };
                    let outcome = |t: &ChatTemplate| {
                        t.apply_with_spans(&msgs[..n], &opts, &spans)
                            .map(|s| (s.rendered, s.assistant_spans, s.messages))
                            .map_err(|e| e.to_string())
                    };
                    assert_eq!(outcome(&derived), outcome(&separate), "{source} [..{n}]");
                }
            }
        }
    }

    #[test]
    fn message_paths_name_their_message() {
        assert_eq!(message_of("messages[12].content[0].text"), Some(12));
        assert_eq!(message_of("tools[0]"), None);
        assert_eq!(
            split_message("messages[1].content[0].text"),
            Some((1, ".content[0].text"))
        );
        assert!(is_content(".content[0].text") && is_content(".content"));
        assert!(!is_content(".content_type"));
    }

    #[test]
    fn stop_markers_read_generation_config_through_the_vocabulary() {
        let dir = std::env::temp_dir().join(format!("chatfmt-stop-markers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("generation_config.json"), r#"{"eos_token_id": [2, 7]}"#).expect("write");
        std::fs::write(
            dir.join("tokenizer.json"),
            r#"{"added_tokens": [{"id": 7, "content": "<|user|>"}], "model": {"vocab": {"</s>": 2, "a": 3}}}"#,
        )
        .expect("write");
        let got = stop_markers(Some(&dir), Some("<eos>"), &["<|end|>".to_string()]);
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(got.expect("reads"), ["</s>", "<eos>", "<|end|>", "<|user|>"]);
    }
}
