//! Jinja2's `urlize` filter: turns URLs and e-mail addresses in text into links.

use crate::pystr;
use regex::Regex;
use std::sync::OnceLock;

#[expect(clippy::expect_used, reason = "a constant pattern, compiled by the tests")]
fn http_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)^((https?://|www\.)(([\w%-]+\.)+)?([a-z]{2,63}|xn--[\w%]{2,59})|([\w%-]{2,63}\.)+(com|net|int|edu|gov|org|info|mil)|(https?://)((([\d]{1,3})(\.[\d]{1,3}){3})|(\[([\da-f]{0,4}:){2}([\da-f]{0,4}:?){1,6}])))(?::[\d]{1,5})?(?:[/?#]\S*)?$",
        )
        .expect("valid pattern")
    })
}

#[expect(clippy::expect_used, reason = "a constant pattern, compiled by the tests")]
fn email_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^\S+@\w[\w.-]*\.\w+$").expect("valid pattern"))
}

fn escape(s: &str) -> String {
    let mut out = String::new();
    pystr::html_escape(s, &mut out);
    out
}

/// `jinja2.utils.urlize` on text already HTML-escaped: `trim` shortens a link's displayed text,
/// `rel` is the attribute's text (escaped here), `target` its escaped value, `extra_schemes` the
/// further URI prefixes that make a word a link.
pub fn urlize<E>(
    escaped: &str,
    trim: impl Fn(&str) -> Result<String, E>,
    rel: Option<&str>,
    target: Option<&str>,
    extra_schemes: Option<&[String]>,
) -> Result<String, E> {
    let rel_attr = rel.map(|r| format!(" rel=\"{}\"", escape(r))).unwrap_or_default();
    let target_attr = target.map(|t| format!(" target=\"{t}\"")).unwrap_or_default();
    let mut out = String::new();
    // Split on whitespace runs, keeping them.
    let mut words: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut in_space = None;
    for (i, c) in escaped.char_indices() {
        let space = pystr::is_py_whitespace(c);
        if in_space.is_some_and(|s| s != space) {
            words.push(&escaped[start..i]);
            start = i;
        }
        in_space = Some(space);
    }
    words.push(&escaped[start..]);
    for word in words {
        let mut head = String::new();
        let mut middle = word.to_string();
        let mut tail = String::new();
        loop {
            if let Some(rest) = middle.strip_prefix("&lt;") {
                head.push_str("&lt;");
                middle = rest.to_string();
            } else if middle.starts_with(['(', '<']) {
                head.push(middle.remove(0));
            } else {
                break;
            }
        }
        let mut cut = middle.len();
        loop {
            let m = &middle[..cut];
            if m.ends_with("&gt;") {
                cut -= 4;
            } else if m.ends_with([')', '>', '.', ',', '\n']) {
                cut -= 1;
            } else {
                break;
            }
        }
        tail.insert_str(0, &middle[cut..]);
        middle.truncate(cut);
        for (open, close) in [("(", ")"), ("<", ">"), ("&lt;", "&gt;")] {
            let opens = middle.matches(open).count();
            if opens <= middle.matches(close).count() {
                continue;
            }
            for _ in 0..opens.min(tail.matches(close).count()) {
                let Some(idx) = tail.find(close) else { break };
                let end = idx + close.len();
                middle.push_str(&tail[..end]);
                tail = tail[end..].to_string();
            }
        }
        if http_re().is_match(&middle) {
            let href = if middle.starts_with("https://") || middle.starts_with("http://") {
                middle.clone()
            } else {
                format!("https://{middle}")
            };
            middle = format!("<a href=\"{href}\"{rel_attr}{target_attr}>{}</a>", trim(&middle)?);
        } else if middle.starts_with("mailto:") && email_re().is_match(&middle[7..]) {
            middle = format!("<a href=\"{middle}\">{}</a>", &middle[7..]);
        } else if middle.contains('@')
            && !middle.starts_with("www.")
            && !middle.starts_with('@')
            && !middle.contains(':')
            && email_re().is_match(&middle)
        {
            middle = format!("<a href=\"mailto:{middle}\">{middle}</a>");
        } else if let Some(schemes) = extra_schemes {
            for scheme in schemes {
                if middle != *scheme && middle.starts_with(scheme.as_str()) {
                    middle = format!("<a href=\"{middle}\"{rel_attr}{target_attr}>{middle}</a>");
                }
            }
        }
        out.push_str(&head);
        out.push_str(&middle);
        out.push_str(&tail);
    }
    Ok(out)
}
