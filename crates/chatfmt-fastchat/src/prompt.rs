//! `get_prompt`: the prompt text of a conversation, for every separator style.

use super::error::{Error, ErrorKind, Result};
use super::format::format_system;
use super::message::Message;
use super::record::Conversation;
use super::style::SeparatorStyle;
use std::borrow::Cow;

/// The placeholder written once per image before the text, in styles that show images.
pub const IMAGE_PLACEHOLDER: &str = "$$<image>$$";

/// Python's `str.isspace` (Rust's whitespace plus the ASCII separators U+001C..U+001F).
pub(crate) fn py_is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_is_space)
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
        let system = self.system_prompt()?;
        let style = self
            .sep_style
            .ok_or_else(|| Error::new(ErrorKind::InvalidStyle, "Invalid style: None"))?;
        Renderer { conv: self, style }.render(system)
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

    /// The text to render for a turn, or `None` when Python's `if message:` is false.
    fn text(&self, msg: &'a Option<Message>) -> Result<Option<Cow<'a, str>>> {
        match msg {
            None => Ok(None),
            Some(m) if !m.is_truthy() => Ok(None),
            Some(Message::Text(text)) => Ok(Some(Cow::Borrowed(text))),
            Some(Message::WithImages { text, images }) => match self.style {
                SeparatorStyle::DEFAULT => Ok(Some(Cow::Borrowed(text))),
                s if s.accepts_images() => Ok(Some(Cow::Owned(IMAGE_PLACEHOLDER.repeat(images.len()) + text))),
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

    fn render(&self, system: String) -> Result<String> {
        use SeparatorStyle::*;
        let conv = self.conv;
        let turns = conv.messages.iter().enumerate();
        let mut ret = String::new();
        match self.style {
            ADD_COLON_SINGLE | ADD_COLON_SPACE_SINGLE => {
                let empty = if self.style == ADD_COLON_SINGLE { ":" } else { ": " };
                ret = system + self.sep()?;
                for (role, msg) in &conv.messages {
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, ": ", &m, self.sep()?]),
                        None => push_all(&mut ret, &[role, empty]),
                    }
                }
            }
            ADD_COLON_TWO | DEEPSEEK_CHAT => {
                ret = system;
                if self.style == ADD_COLON_TWO {
                    ret += self.sep()?;
                }
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, ": ", &m, self.seps(i)?]),
                        None => push_all(&mut ret, &[role, ":"]),
                    }
                }
            }
            ADD_NEW_LINE_SINGLE => {
                if !system.is_empty() {
                    ret = system + self.sep()?;
                }
                for (role, msg) in &conv.messages {
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, "\n", &m, self.sep()?]),
                        None => push_all(&mut ret, &[role, "\n"]),
                    }
                }
            }
            NO_COLON_SINGLE | NO_COLON_TWO => {
                ret = system;
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => {
                            let sep = if self.style == NO_COLON_SINGLE {
                                self.sep()?
                            } else {
                                self.seps(i)?
                            };
                            push_all(&mut ret, &[role, &m, sep]);
                        }
                        None => ret += role,
                    }
                }
            }
            RWKV => {
                ret = system;
                for (role, msg) in &conv.messages {
                    match self.text(msg)? {
                        Some(m) => {
                            let collapsed = m.replace("\r\n", "\n").replace("\n\n", "\n");
                            push_all(&mut ret, &[role, ": ", &collapsed, "\n\n"]);
                        }
                        None => push_all(&mut ret, &[role, ":"]),
                    }
                }
            }
            LLAMA2 => {
                ret = if conv.system_message.is_empty() {
                    "[INST] ".to_owned()
                } else {
                    system
                };
                for (i, (_, msg)) in turns {
                    let tag = self.role_by_position(i)?;
                    match self.text(msg)? {
                        Some(m) if i == 0 => push_all(&mut ret, &[&m, " "]),
                        Some(m) => push_all(&mut ret, &[tag, " ", &m, self.seps(i)?]),
                        None => ret += tag,
                    }
                }
            }
            LLAMA3 => {
                ret = "<|begin_of_text|>".to_owned();
                if !conv.system_message.is_empty() {
                    ret += &system;
                }
                for (role, msg) in &conv.messages {
                    push_all(&mut ret, &["<|start_header_id|>", role, "<|end_header_id|>\n\n"]);
                    if let Some(m) = self.text(msg)? {
                        push_all(&mut ret, &[py_strip(&m), "<|eot_id|>"]);
                    }
                }
            }
            CHATGLM => {
                let round_add = usize::from(conv.name == "chatglm2");
                if !system.is_empty() {
                    ret = system + self.sep()?;
                }
                for (i, (role, msg)) in turns {
                    if i.is_multiple_of(2) {
                        ret += &format!("[Round {}]{}", i / 2 + round_add, self.sep()?);
                    }
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, "：", &m, self.sep()?]),
                        None => push_all(&mut ret, &[role, "："]),
                    }
                }
            }
            CHATML => {
                if !system.is_empty() {
                    ret = system + self.sep()? + "\n";
                }
                for (role, msg) in &conv.messages {
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, "\n", &m, self.sep()?, "\n"]),
                        None => push_all(&mut ret, &[role, "\n"]),
                    }
                }
            }
            CHATGLM3 => {
                if !conv.system_message.is_empty() {
                    ret = system;
                }
                for (role, msg) in &conv.messages {
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, "\n", &m]),
                        None => ret += role,
                    }
                }
            }
            CHATINTERN => {
                ret = system;
                for (i, (role, msg)) in turns {
                    if i.is_multiple_of(2) {
                        ret += "<s>";
                    }
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, ":", &m, self.seps(i)?, "\n"]),
                        None => push_all(&mut ret, &[role, ":"]),
                    }
                }
            }
            DOLLY => {
                ret = system;
                for (i, (role, msg)) in turns {
                    match self.text(msg)? {
                        Some(m) => {
                            push_all(&mut ret, &[role, ":\n", &m, self.seps(i)?]);
                            if !i.is_multiple_of(2) {
                                ret += "\n\n";
                            }
                        }
                        None => push_all(&mut ret, &[role, ":\n"]),
                    }
                }
            }
            PHOENIX => {
                ret = system;
                for (role, msg) in &conv.messages {
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, ": <s>", &m, "</s>"]),
                        None => push_all(&mut ret, &[role, ": <s>"]),
                    }
                }
            }
            ROBIN => {
                ret = system + self.sep()?;
                for (role, msg) in &conv.messages {
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, ":\n", &m, self.sep()?]),
                        None => push_all(&mut ret, &[role, ":\n"]),
                    }
                }
            }
            FALCON_CHAT => {
                if !conv.system_message.is_empty() {
                    ret = system + self.sep()?;
                }
                for (role, msg) in &conv.messages {
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, ": ", &m, self.sep()?]),
                        None => push_all(&mut ret, &[role, ":"]),
                    }
                }
            }
            METAMATH => {
                if !system.is_empty() {
                    ret = system + self.sep()?;
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
                            push_all(&mut ret, &[role, &starting, &m, ending]);
                        }
                        None => push_all(&mut ret, &[role, &starting]),
                    }
                }
            }
            YUAN2 => {
                if !conv.system_message.is_empty() {
                    ret = system + self.sep2()?;
                }
                for (_, msg) in &conv.messages {
                    if let Some(m) = self.text(msg)? {
                        push_all(&mut ret, &[&m, "<n>"]);
                    }
                }
                let kept = ret.trim_end_matches(['<', 'n', '>']).len();
                ret.truncate(kept);
                ret += self.sep()?;
            }
            GEMMA => {
                ret = "<bos>".to_owned();
                for (role, msg) in &conv.messages {
                    push_all(&mut ret, &["<start_of_turn>", role, "\n"]);
                    if let Some(m) = self.text(msg)? {
                        push_all(&mut ret, &[&m, self.sep()?]);
                    }
                }
            }
            CLLM => {
                ret = system + self.sep()?;
                let start = conv.messages.len().saturating_sub(2);
                for (i, (role, msg)) in conv.messages[start..].iter().enumerate() {
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, ": ", &m, self.seps(i)?]),
                        None => push_all(&mut ret, &[role, ":"]),
                    }
                }
            }
            DEFAULT => {
                ret = system + "\n";
                for (role, msg) in &conv.messages {
                    match self.text(msg)? {
                        Some(m) => push_all(&mut ret, &[role, ": ", &m, "\n"]),
                        None => push_all(&mut ret, &[role, ":"]),
                    }
                }
            }
        }
        Ok(ret)
    }
}

fn push_all(out: &mut String, parts: &[&str]) {
    for part in parts {
        out.push_str(part);
    }
}
