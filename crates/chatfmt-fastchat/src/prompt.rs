//! `get_prompt`: the prompt text of a conversation, for every separator style.

use super::error::{Error, ErrorKind, Result};
use super::format::format_system;
use super::message::Message;
use super::pystr::py_strip;
use super::record::Conversation;
use super::style::SeparatorStyle;
use std::borrow::Cow;

/// The placeholder written once per image before the text, in styles that show images.
pub const IMAGE_PLACEHOLDER: &str = "$$<image>$$";

/// Where one part of a conversation went in its prompt: half-open byte ranges of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptSegment {
    /// The role prefix, the message and its separator (for the system message: the system prompt
    /// and its separator).
    pub turn: (usize, usize),
    /// The message's text (without image placeholders); `None` when none was printed.
    pub content: Option<(usize, usize)>,
}

/// A prompt with the place of each part of the conversation in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentedPrompt {
    /// Exactly what [`Conversation::get_prompt`] returns.
    pub text: String,
    /// The system prompt, when printed.
    pub system: Option<PromptSegment>,
    /// One entry per turn of `messages`: `None` for a turn the style leaves out.
    pub turns: Vec<Option<PromptSegment>>,
}

impl Conversation {
    /// The formatted system prompt: `system_template` with `{system_message}` substituted.
    pub fn system_prompt(&self) -> Result<String> {
        format_system(&self.system_template, &self.system_message)
    }

    /// The prompt for generation, exactly as FastChat's `get_prompt()` builds it.
    ///
    /// Errors: a malformed system template, a missing style or separator, and images in a
    /// style that cannot show them (where FastChat crashes or leaks a Python tuple).
    pub fn get_prompt(&self) -> Result<String> {
        self.get_prompt_with_segments().map(|p| p.text)
    }

    /// [`get_prompt`](Self::get_prompt) with the place of the system prompt and of each turn in it.
    pub fn get_prompt_with_segments(&self) -> Result<SegmentedPrompt> {
        let system = self.system_prompt()?;
        let style = self
            .sep_style
            .ok_or_else(|| Error::new(ErrorKind::InvalidStyle, "Invalid style: None"))?;
        let mut out = Out {
            text: String::new(),
            system: None,
            turns: vec![None; self.messages.len()],
            system_message: &self.system_message,
        };
        Renderer { conv: self, style }.render(system, &mut out)?;
        Ok(SegmentedPrompt {
            text: out.text,
            system: out.system,
            turns: out.turns,
        })
    }
}

/// The prompt as it is built, with the byte ranges of its parts.
struct Out<'a> {
    text: String,
    system: Option<PromptSegment>,
    turns: Vec<Option<PromptSegment>>,
    system_message: &'a str,
}

impl Out<'_> {
    fn push(&mut self, parts: &[&str]) {
        push_all(&mut self.text, parts);
    }

    /// The system prompt, then `after`.
    fn system(&mut self, system: &str, after: &[&str]) {
        let start = self.text.len();
        let content = (!self.system_message.is_empty())
            .then(|| system.find(self.system_message))
            .flatten()
            .map(|at| (start + at, start + at + self.system_message.len()));
        self.push(&[system]);
        self.push(after);
        self.system = Some(PromptSegment {
            turn: (start, self.text.len()),
            content,
        });
    }

    /// Turn `i`: `before`, the printed message (its first `lead` bytes image placeholders), `after`.
    fn turn(&mut self, i: usize, before: &[&str], message: Option<(&str, usize)>, after: &[&str]) {
        let start = self.text.len();
        self.push(before);
        let content = message.and_then(|(m, lead)| {
            let at = self.text.len();
            self.text.push_str(m);
            (lead < m.len()).then_some((at + lead, at + m.len()))
        });
        self.push(after);
        if let Some(slot) = self.turns.get_mut(i) {
            *slot = Some(PromptSegment {
                turn: (start, self.text.len()),
                content,
            });
        }
    }

    /// Cuts the text to `len` bytes, and every range with it.
    fn truncate(&mut self, len: usize) {
        self.text.truncate(len);
        let clamp = |(s, e): (usize, usize)| (s.min(len), e.min(len));
        for seg in self.turns.iter_mut().flatten().chain(self.system.iter_mut()) {
            seg.turn = clamp(seg.turn);
            seg.content = seg.content.map(clamp).filter(|(s, e)| s < e);
        }
    }
}

struct Renderer<'a> {
    conv: &'a Conversation,
    style: SeparatorStyle,
}

impl<'a> Renderer<'a> {
    fn sep(&self) -> Result<&'a str> {
        self.conv.sep.as_deref().ok_or_else(|| self.missing("sep"))
    }

    fn sep2(&self) -> Result<&'a str> {
        self.conv.sep2.as_deref().ok_or_else(|| self.missing("sep2"))
    }

    /// `seps[i % 2]`.
    fn seps(&self, i: usize) -> Result<&'a str> {
        if i.is_multiple_of(2) {
            self.sep()
        } else {
            self.sep2()
        }
    }

    fn missing(&self, which: &str) -> Error {
        Error::new(
            ErrorKind::MissingSeparator,
            format!("style {} needs {which}, which is not set", self.style),
        )
    }

    fn role_by_position(&self, i: usize) -> Result<&'a str> {
        self.conv
            .roles
            .get(i % 2)
            .map(String::as_str)
            .ok_or_else(|| Error::new(ErrorKind::InvalidInput, format!("style {} needs two roles", self.style)))
    }

    /// The text to render for a turn and the bytes of image placeholders it starts with, or `None`
    /// when Python's `if message:` is false.
    fn text(&self, msg: &'a Option<Message>) -> Result<Option<(Cow<'a, str>, usize)>> {
        match msg {
            None => Ok(None),
            Some(m) if !m.is_truthy() => Ok(None),
            Some(Message::Text(text)) => Ok(Some((Cow::Borrowed(text), 0))),
            Some(Message::WithImages { text, images }) => match self.style {
                SeparatorStyle::DEFAULT => Ok(Some((Cow::Borrowed(text), 0))),
                s if s.accepts_images() => {
                    let lead = IMAGE_PLACEHOLDER.repeat(images.len());
                    Ok(Some((Cow::Owned(lead.clone() + text), lead.len())))
                }
                s if images.is_empty() => Err(Error::new(
                    ErrorKind::ImagesNotSupported,
                    format!(
                        "separator style {s} cannot show a message given as a list of content parts \
                         (template {:?}): FastChat makes it a (text, images) pair, which it fails on or \
                         writes as a Python tuple here; send the content as a string",
                        self.conv.name
                    ),
                )),
                s => Err(Error::new(
                    ErrorKind::ImagesNotSupported,
                    format!(
                        "separator style {s} cannot show images (template {:?}); \
                         FastChat fails or writes a Python tuple into the prompt here",
                        self.conv.name
                    ),
                )),
            },
        }
    }

    fn render(&self, system: String, out: &mut Out<'_>) -> Result<()> {
        use SeparatorStyle::*;
        let conv = self.conv;
        let turns = conv.messages.iter().enumerate();
        match self.style {
            ADD_COLON_SINGLE | ADD_COLON_SPACE_SINGLE => {
                let empty = if self.style == ADD_COLON_SINGLE { ":" } else { ": " };
                out.system(&system, &[self.sep()?]);
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[role, ": "], printed(&m), &[self.sep()?]),
                        None => out.turn(i, &[role, empty], None, &[]),
                    }
                }
            }
            ADD_COLON_TWO | DEEPSEEK_CHAT => {
                if self.style == ADD_COLON_TWO {
                    out.system(&system, &[self.sep()?]);
                } else {
                    out.system(&system, &[]);
                }
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[role, ": "], printed(&m), &[self.seps(i)?]),
                        None => out.turn(i, &[role, ":"], None, &[]),
                    }
                }
            }
            ADD_NEW_LINE_SINGLE => {
                if !system.is_empty() {
                    out.system(&system, &[self.sep()?]);
                }
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[role, "\n"], printed(&m), &[self.sep()?]),
                        None => out.turn(i, &[role, "\n"], None, &[]),
                    }
                }
            }
            NO_COLON_SINGLE | NO_COLON_TWO => {
                out.system(&system, &[]);
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => {
                            let sep = if self.style == NO_COLON_SINGLE {
                                self.sep()?
                            } else {
                                self.seps(i)?
                            };
                            out.turn(i, &[role], printed(&m), &[sep]);
                        }
                        None => out.turn(i, &[role], None, &[]),
                    }
                }
            }
            RWKV => {
                out.system(&system, &[]);
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some((m, lead)) => {
                            let collapsed = m.replace("\r\n", "\n").replace("\n\n", "\n");
                            out.turn(i, &[role, ": "], Some((&collapsed, lead)), &["\n\n"]);
                        }
                        None => out.turn(i, &[role, ":"], None, &[]),
                    }
                }
            }
            LLAMA2 => {
                if conv.system_message.is_empty() {
                    out.push(&["[INST] "]);
                } else {
                    out.system(&system, &[]);
                }
                for (i, (_, msg)) in turns {
                    let tag = self.role_by_position(i)?;
                    match self.text(msg)? {
                        Some(m) if i == 0 => out.turn(i, &[], printed(&m), &[" "]),
                        Some(m) => out.turn(i, &[tag, " "], printed(&m), &[self.seps(i)?]),
                        None => out.turn(i, &[tag], None, &[]),
                    }
                }
            }
            LLAMA3 => {
                out.push(&["<|begin_of_text|>"]);
                if !conv.system_message.is_empty() {
                    out.system(&system, &[]);
                }
                for (i, (role, msg)) in turns {
                    let header = ["<|start_header_id|>", role, "<|end_header_id|>\n\n"];
                    match self.text(msg)? {
                        Some((m, lead)) => out.turn(i, &header, Some((py_strip(&m), lead)), &["<|eot_id|>"]),
                        None => out.turn(i, &header, None, &[]),
                    }
                }
            }
            CHATGLM => {
                let round_add = usize::from(conv.name == "chatglm2");
                if !system.is_empty() {
                    out.system(&system, &[self.sep()?]);
                }
                for (i, (role, msg)) in turns {
                    let round = if i.is_multiple_of(2) {
                        format!("[Round {}]{}", i / 2 + round_add, self.sep()?)
                    } else {
                        String::new()
                    };
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[&round, role, "："], printed(&m), &[self.sep()?]),
                        None => out.turn(i, &[&round, role, "："], None, &[]),
                    }
                }
            }
            CHATML => {
                if !system.is_empty() {
                    out.system(&system, &[self.sep()?, "\n"]);
                }
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[role, "\n"], printed(&m), &[self.sep()?, "\n"]),
                        None => out.turn(i, &[role, "\n"], None, &[]),
                    }
                }
            }
            CHATGLM3 => {
                if !conv.system_message.is_empty() {
                    out.system(&system, &[]);
                }
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[role, "\n"], printed(&m), &[]),
                        None => out.turn(i, &[role], None, &[]),
                    }
                }
            }
            CHATINTERN => {
                out.system(&system, &[]);
                for (i, (role, msg)) in turns {
                    let s = if i.is_multiple_of(2) { "<s>" } else { "" };
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[s, role, ":"], printed(&m), &[self.seps(i)?, "\n"]),
                        None => out.turn(i, &[s, role, ":"], None, &[]),
                    }
                }
            }
            DOLLY => {
                out.system(&system, &[]);
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => {
                            let gap = if i.is_multiple_of(2) { "" } else { "\n\n" };
                            out.turn(i, &[role, ":\n"], printed(&m), &[self.seps(i)?, gap]);
                        }
                        None => out.turn(i, &[role, ":\n"], None, &[]),
                    }
                }
            }
            PHOENIX => {
                out.system(&system, &[]);
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[role, ": <s>"], printed(&m), &["</s>"]),
                        None => out.turn(i, &[role, ": <s>"], None, &[]),
                    }
                }
            }
            ROBIN => {
                out.system(&system, &[self.sep()?]);
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[role, ":\n"], printed(&m), &[self.sep()?]),
                        None => out.turn(i, &[role, ":\n"], None, &[]),
                    }
                }
            }
            FALCON_CHAT => {
                if !conv.system_message.is_empty() {
                    out.system(&system, &[self.sep()?]);
                }
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[role, ": "], printed(&m), &[self.sep()?]),
                        None => out.turn(i, &[role, ":"], None, &[]),
                    }
                }
            }
            METAMATH => {
                if !system.is_empty() {
                    out.system(&system, &[self.sep()?]);
                }
                for (i, (role, msg)) in turns {
                    let starting = if i.is_multiple_of(2) {
                        ":\n".to_owned()
                    } else {
                        format!(": {}", self.sep2()?)
                    };
                    match self.text(msg)? {
                        Some(m) => {
                            let ending = if i.is_multiple_of(2) { self.sep()? } else { "" };
                            out.turn(i, &[role, &starting], printed(&m), &[ending]);
                        }
                        None => out.turn(i, &[role, &starting], None, &[]),
                    }
                }
            }
            YUAN2 => {
                if !conv.system_message.is_empty() {
                    out.system(&system, &[self.sep2()?]);
                }
                for (i, (_, msg)) in turns {
                    if let Some(m) = self.text(msg)? {
                        out.turn(i, &[], printed(&m), &["<n>"]);
                    }
                }
                let kept = out.text.trim_end_matches(['<', 'n', '>']).len();
                out.truncate(kept);
                out.push(&[self.sep()?]);
            }
            GEMMA => {
                out.push(&["<bos>"]);
                for (i, (role, msg)) in turns {
                    let header = ["<start_of_turn>", role, "\n"];
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &header, printed(&m), &[self.sep()?]),
                        None => out.turn(i, &header, None, &[]),
                    }
                }
            }
            CLLM => {
                out.system(&system, &[self.sep()?]);
                let start = conv.messages.len().saturating_sub(2);
                for (i, (role, msg)) in conv.messages[start..].iter().enumerate() {
                    match self.text(msg)? {
                        Some(m) => out.turn(start + i, &[role, ": "], printed(&m), &[self.seps(i)?]),
                        None => out.turn(start + i, &[role, ":"], None, &[]),
                    }
                }
            }
            DEFAULT => {
                out.system(&system, &["\n"]);
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => out.turn(i, &[role, ": "], printed(&m), &["\n"]),
                        None => out.turn(i, &[role, ":"], None, &[]),
                    }
                }
            }
        }
        Ok(())
    }
}

/// A printed message and its placeholder bytes, borrowed.
fn printed<'t>((m, lead): &'t (Cow<'_, str>, usize)) -> Option<(&'t str, usize)> {
    Some((m, *lead))
}

fn push_all(out: &mut String, parts: &[&str]) {
    for part in parts {
        out.push_str(part);
    }
}
