//! Export of a FastChat template as a Hugging Face chat template (Jinja source).
//!
//! The exported template renders the prompt FastChat's `get_prompt()` gives for the
//! conversation [`conversation_from_openai_messages`](super::conversation_from_openai_messages)
//! builds: an optional leading system message, then user and assistant messages (string
//! content), and with `add_generation_prompt` the empty assistant turn. It expects the
//! environment transformers uses (`trim_blocks`, `lstrip_blocks`, Python string methods,
//! `raise_exception`).

use super::error::{Error, ErrorKind, Result};
use super::format::format_system;
use super::message::Message;
use super::record::Conversation;
use super::style::SeparatorStyle;

/// An exported chat template and what it cannot express.
#[derive(Debug, Clone)]
pub struct JinjaExport {
    /// The Jinja source.
    pub source: String,
    /// FastChat behaviours the exported template does not reproduce.
    pub limitations: Vec<String>,
}

/// A Jinja string literal for `s` (Python escapes; non-ASCII kept as is).
fn lit(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The system prompt as a Jinja expression over the variable `system_message`.
fn system_prompt_expr(conv: &Conversation) -> Result<String> {
    const MARK: &str = "\u{0}chatfmt-system-message\u{0}";
    let formatted = format_system(&conv.system_template, MARK)?;
    let parts: Vec<&str> = formatted.split(MARK).collect();
    // A format spec (padding, truncation) would change the message; the split form cannot say it.
    if parts.concat() != format_system(&conv.system_template, "")? {
        return Err(Error::new(
            ErrorKind::SystemTemplateSyntax,
            format!(
                "the system template of {:?} formats the message with a spec the export cannot express",
                conv.name
            ),
        ));
    }
    let literals: Vec<String> = parts.into_iter().map(lit).collect();
    Ok(literals.join(" + system_message + "))
}

fn needed<'a>(conv: &'a Conversation, value: &'a Option<String>, which: &str) -> Result<String> {
    value.as_deref().map(lit).ok_or_else(|| {
        Error::new(
            ErrorKind::MissingSeparator,
            format!(
                "template {:?} has no {which}, which its style needs: FastChat's get_prompt fails",
                conv.name
            ),
        )
    })
}

/// `{{ expr }}`
fn out(expr: &str) -> String {
    format!("{{{{ {expr} }}}}")
}

/// `{% if cond %}then{% endif %}`
fn when(cond: &str, then: &str) -> String {
    format!("{{%- if {cond} -%}}{then}{{%- endif -%}}")
}

/// `{% if cond %}then{% else %}otherwise{% endif %}`
fn if_else(cond: &str, then: &str, otherwise: &str) -> String {
    format!("{{%- if {cond} -%}}{then}{{%- else -%}}{otherwise}{{%- endif -%}}")
}

/// A turn: `filled` when its message is truthy (Python's `if message:`), else `empty`.
fn turn(filled: &str, empty: &str) -> String {
    if_else("t[1]", &out(filled), &out(empty))
}

/// `body` for every turn `t` (`t[0]` the role, `t[1]` the message, `loop.index0` its index).
fn each(body: &str) -> String {
    format!("\n{{%- for t in ns.turns -%}}\n{body}\n{{%- endfor -%}}\n")
}

/// Exports `conv` (its settings and preset few-shot messages) as a chat template.
pub fn export_jinja(conv: &Conversation) -> Result<JinjaExport> {
    use SeparatorStyle::*;
    let style = conv.sep_style.ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidStyle,
            format!(
                "template {:?} has no separator style: FastChat cannot render it",
                conv.name
            ),
        )
    })?;
    let (role0, role1) = match conv.roles.as_slice() {
        [a, b, ..] => (lit(a), lit(b)),
        _ => return Err(Error::new(ErrorKind::InvalidInput, "a template needs two roles")),
    };
    let mut preset = Vec::new();
    for (role, msg) in &conv.messages {
        let content = match msg {
            None => "none".to_owned(),
            Some(Message::Text(text)) => lit(text),
            Some(Message::WithImages { .. }) => {
                return Err(Error::new(
                    ErrorKind::ImagesNotSupported,
                    "preset messages with images cannot be exported",
                ))
            }
        };
        preset.push(format!("[{}, {content}]", lit(role)));
    }
    let sep = needed(conv, &conv.sep, "sep");
    let sep2 = needed(conv, &conv.sep2, "sep2");
    let s = || sep.clone();
    let s2 = || sep2.clone();
    // `seps[i % 2]`
    let seps_i = || -> Result<String> { Ok(format!("({} if loop.index0 % 2 == 0 else {})", s()?, s2()?)) };
    let body = match style {
        ADD_COLON_SINGLE => {
            out(&format!("system_prompt + {}", s()?))
                + &each(&turn(&format!("t[0] + ': ' + t[1] + {}", s()?), "t[0] + ':'"))
        }
        ADD_COLON_SPACE_SINGLE => {
            out(&format!("system_prompt + {}", s()?))
                + &each(&turn(&format!("t[0] + ': ' + t[1] + {}", s()?), "t[0] + ': '"))
        }
        ADD_COLON_TWO => {
            out(&format!("system_prompt + {}", s()?))
                + &each(&turn(&format!("t[0] + ': ' + t[1] + {}", seps_i()?), "t[0] + ':'"))
        }
        DEEPSEEK_CHAT => {
            out("system_prompt") + &each(&turn(&format!("t[0] + ': ' + t[1] + {}", seps_i()?), "t[0] + ':'"))
        }
        ADD_NEW_LINE_SINGLE => {
            when("system_prompt != ''", &out(&format!("system_prompt + {}", s()?)))
                + &each(&turn(&format!(r"t[0] + '\n' + t[1] + {}", s()?), r"t[0] + '\n'"))
        }
        NO_COLON_SINGLE => out("system_prompt") + &each(&turn(&format!("t[0] + t[1] + {}", s()?), "t[0]")),
        NO_COLON_TWO => out("system_prompt") + &each(&turn(&format!("t[0] + t[1] + {}", seps_i()?), "t[0]")),
        RWKV => {
            out("system_prompt")
                + &each(&turn(
                    r"t[0] + ': ' + t[1].replace('\r\n', '\n').replace('\n\n', '\n') + '\n\n'",
                    "t[0] + ':'",
                ))
        }
        LLAMA2 => {
            let tag = format!("({role0} if loop.index0 % 2 == 0 else {role1})");
            if_else("system_message", &out("system_prompt"), &out("'[INST] '"))
                + &each(&format!(
                    "{{%- if t[1] and loop.index0 == 0 -%}}{}{{%- elif t[1] -%}}{}{{%- else -%}}{}{{%- endif -%}}",
                    out("t[1] + ' '"),
                    out(&format!("{tag} + ' ' + t[1] + {}", seps_i()?)),
                    out(&tag)
                ))
        }
        LLAMA3 => {
            out("'<|begin_of_text|>'")
                + &when("system_message", &out("system_prompt"))
                + &each(
                    &(out(r"'<|start_header_id|>' + t[0] + '<|end_header_id|>\n\n'")
                        + &when("t[1]", &out("t[1].strip() + '<|eot_id|>'"))),
                )
        }
        CHATGLM => {
            let round_add = usize::from(conv.name == "chatglm2");
            when("system_prompt", &out(&format!("system_prompt + {}", s()?)))
                + &each(
                    &(when(
                        "loop.index0 % 2 == 0",
                        &out(&format!(
                            "'[Round ' ~ (loop.index0 // 2 + {round_add}) ~ ']' ~ {}",
                            s()?
                        )),
                    ) + &turn(&format!("t[0] + '：' + t[1] + {}", s()?), "t[0] + '：'")),
                )
        }
        CHATML => {
            when(
                "system_prompt != ''",
                &out(&format!(r"system_prompt + {} + '\n'", s()?)),
            ) + &each(&turn(&format!(r"t[0] + '\n' + t[1] + {} + '\n'", s()?), r"t[0] + '\n'"))
        }
        CHATGLM3 => when("system_message", &out("system_prompt")) + &each(&turn(r"t[0] + '\n' + t[1]", "t[0]")),
        CHATINTERN => {
            out("system_prompt")
                + &each(
                    &(when("loop.index0 % 2 == 0", &out("'<s>'"))
                        + &turn(&format!(r"t[0] + ':' + t[1] + {} + '\n'", seps_i()?), "t[0] + ':'")),
                )
        }
        DOLLY => {
            out("system_prompt")
                + &each(&turn(
                    &format!(
                        r"t[0] + ':\n' + t[1] + {} + ('\n\n' if loop.index0 % 2 == 1 else '')",
                        seps_i()?
                    ),
                    r"t[0] + ':\n'",
                ))
        }
        PHOENIX => out("system_prompt") + &each(&turn("t[0] + ': <s>' + t[1] + '</s>'", "t[0] + ': <s>'")),
        ROBIN => {
            out(&format!("system_prompt + {}", s()?))
                + &each(&turn(&format!(r"t[0] + ':\n' + t[1] + {}", s()?), r"t[0] + ':\n'"))
        }
        FALCON_CHAT => {
            when("system_message", &out(&format!("system_prompt + {}", s()?)))
                + &each(&turn(&format!("t[0] + ': ' + t[1] + {}", s()?), "t[0] + ':'"))
        }
        METAMATH => {
            when("system_prompt != ''", &out(&format!("system_prompt + {}", s()?)))
                + &each(&if_else(
                    "loop.index0 % 2 == 0",
                    &turn(&format!(r"t[0] + ':\n' + t[1] + {}", s()?), r"t[0] + ':\n'"),
                    &turn(
                        &format!("t[0] + ': ' + {} + t[1]", s2()?),
                        &format!("t[0] + ': ' + {}", s2()?),
                    ),
                ))
        }
        YUAN2 => {
            when(
                "system_message",
                &format!("{{%- set ns.out = system_prompt + {} -%}}", s2()?),
            ) + &each(&when("t[1]", "{%- set ns.out = ns.out + t[1] + '<n>' -%}"))
                + &out(&format!("ns.out.rstrip('<n>') + {}", s()?))
        }
        GEMMA => {
            out("'<bos>'")
                + &each(&(out(r"'<start_of_turn>' + t[0] + '\n'") + &when("t[1]", &out(&format!("t[1] + {}", s()?)))))
        }
        CLLM => {
            out(&format!("system_prompt + {}", s()?))
                + &format!(
                    "{{%- for t in ns.turns[-2:] -%}}\n{}\n{{%- endfor -%}}\n",
                    turn(&format!("t[0] + ': ' + t[1] + {}", seps_i()?), "t[0] + ':'")
                )
        }
        DEFAULT => out(r"system_prompt + '\n'") + &each(&turn(r"t[0] + ': ' + t[1] + '\n'", "t[0] + ':'")),
    };

    let source = format!(
        "{{#- FastChat conversation template {name} (style {style}), exported by chatfmt -#}}\n\
         {{%- set system_message = {default_system} -%}}\n\
         {{%- set loop_messages = messages -%}}\n\
         {{%- if messages and messages[0]['role'] == 'system' -%}}\n\
         {{%- set system_message = messages[0]['content'] -%}}\n\
         {{%- set loop_messages = messages[1:] -%}}\n\
         {{%- endif -%}}\n\
         {{%- set system_prompt = {system_prompt} -%}}\n\
         {{%- set ns = namespace(turns=[{preset}], out='') -%}}\n\
         {{%- for message in loop_messages -%}}\n\
         {{%- if message['role'] == 'user' -%}}\n\
         {{%- set ns.turns = ns.turns + [[{role0}, message['content']]] -%}}\n\
         {{%- elif message['role'] == 'assistant' -%}}\n\
         {{%- set ns.turns = ns.turns + [[{role1}, message['content']]] -%}}\n\
         {{%- else -%}}\n\
         {{{{ raise_exception('Only a leading system message, then user and assistant messages, are supported') }}}}\n\
         {{%- endif -%}}\n\
         {{%- endfor -%}}\n\
         {{%- if add_generation_prompt -%}}\n\
         {{%- set ns.turns = ns.turns + [[{role1}, none]] -%}}\n\
         {{%- endif -%}}\n\
         {body}\n",
        name = lit(&conv.name),
        default_system = lit(&conv.system_message),
        system_prompt = system_prompt_expr(conv)?,
        preset = preset.join(", "),
    );
    let mut limitations = vec![
        "message content must be a string: images and content parts are not supported".to_owned(),
        "only a leading system message is read; FastChat's server takes a system message anywhere".to_owned(),
        "stop strings and stop token ids belong to generation settings, not to the chat template".to_owned(),
    ];
    if style == CHATGLM {
        limitations.push(format!(
            "round numbering is fixed at export (from {}): FastChat decides it from the conversation's name at render time",
            usize::from(conv.name == "chatglm2")
        ));
    }
    Ok(JinjaExport { source, limitations })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_quotes_backslashes_and_controls() {
        assert_eq!(lit("a'b\\c\n\r\t\u{1}é"), r"'a\'b\\c\n\r\t\x01é'");
    }

    #[test]
    fn system_template_becomes_concatenation() {
        let mut conv = Conversation::new("t");
        conv.system_template = "<<{system_message}>> {{x}}".to_owned();
        assert_eq!(system_prompt_expr(&conv).unwrap(), "'<<' + system_message + '>> {x}'");
    }

    #[test]
    fn format_specs_are_refused() {
        let mut conv = Conversation::new("t");
        conv.system_template = "[{system_message:>10}]".to_owned();
        assert_eq!(export_jinja(&conv).unwrap_err().kind(), ErrorKind::SystemTemplateSyntax);
    }
}
