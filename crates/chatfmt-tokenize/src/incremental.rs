//! Appending turns to an encoded conversation: the ids of a longer prompt that reuse the ids of an
//! earlier one, equal to encoding the whole prompt.
//!
//! Token merges can reach across the end of the earlier text (its last token may merge with what
//! follows), so reuse cannot simply continue at the old end. Tokenizers first split a text at its
//! added tokens (`<|im_start|>`, `<|eot_id|>`, ...) and encode the pieces between them on their own;
//! the only rules that look further are an added token matched longest-first (or swallowing the
//! whitespace after it) and a space marker prepended to the text's very first piece. So encoding
//! resumes at the last added token of the earlier ids that cannot match differently once more text
//! follows (no other added token contains it, or it starts at least the longest added token's
//! length before their end; it does not swallow following whitespace): the ids before it are kept,
//! and the text from it on (which then starts with that added token) is encoded afresh. When the earlier ids do not spell a prefix of the new prompt (the template
//! rewrote history, or they came from another prompt) or no such token exists, everything is
//! encoded and the reason is given.

use crate::{ChatTokenizer, Error};

/// The ids of a prompt built on earlier ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extended {
    /// The ids of the whole prompt.
    pub ids: Vec<u32>,
    /// How many leading ids were taken unchanged from the earlier ids.
    pub reused: usize,
    /// The character (code point) offset of the prompt where encoding resumed.
    pub reencoded_from: usize,
    /// Why fewer ids were reused than the earlier ids hold (`None` when only the tail after the
    /// last resumable added token was encoded again).
    pub reason: Option<String>,
}

impl ChatTokenizer {
    /// The ids of `text`, reusing `previous` (the ids of an earlier prompt) where encoding `text`
    /// whole would give the same ids.
    pub fn extend_encoding(&self, previous: &[u32], text: &str) -> Result<Extended, Error> {
        let whole = |reason: String| -> Result<Extended, Error> {
            Ok(Extended {
                ids: self.encode_ids(text)?,
                reused: 0,
                reencoded_from: 0,
                reason: Some(reason),
            })
        };
        if previous.is_empty() {
            return whole("there are no earlier ids".to_string());
        }
        if self.normalization_changes(text) {
            return whole("the tokenizer's normalizer changes this prompt, so its pieces are not encoded apart".into());
        }
        let walk = match self.spelled_prefix(previous, text) {
            Ok(w) => w,
            Err(why) => return whole(why),
        };
        let margin = self.pieces.longest_added();
        let resume = walk.added.iter().rev().find(|&&(i, start)| {
            self.pieces.added_token(previous[i]).is_some_and(|a| {
                !a.rstrip && (start.saturating_add(margin) <= walk.len || !self.pieces.contained_in_another(a))
            })
        });
        let Some(&(at, from)) = resume else {
            return whole(
                "no added token of the earlier ids is a safe place to resume (each may match differently once more \
                 text follows)"
                    .to_string(),
            );
        };
        let mut ids = previous[..at].to_vec();
        ids.extend(self.encode_ids(&text[from..])?);
        Ok(Extended {
            ids,
            reused: at,
            reencoded_from: text[..from].chars().count(),
            reason: None,
        })
    }
}

/// How earlier ids lie along the start of a prompt.
struct Walk {
    /// Bytes of the prompt they spell.
    len: usize,
    /// Each added token: its index in the ids and its first byte.
    added: Vec<(usize, usize)>,
}

impl ChatTokenizer {
    /// Checks that `ids` spell the start of `text`: added tokens where the text has them, and each
    /// run of other ids decoding to the text between them. Gives why not otherwise.
    fn spelled_prefix(&self, ids: &[u32], text: &str) -> Result<Walk, String> {
        let mut walk = Walk {
            len: 0,
            added: Vec::new(),
        };
        let mut i = 0;
        while i < ids.len() {
            let rest = &text[walk.len..];
            if let Some(a) = self.pieces.added_token(ids[i]) {
                let lead = if a.lstrip {
                    rest.len() - rest.trim_start().len()
                } else {
                    0
                };
                if !rest[lead..].starts_with(a.content.as_str()) {
                    return Err(not_a_prefix(walk.len, &format!("{}…", a.content), text));
                }
                let mut end = lead + a.content.len();
                if a.rstrip {
                    end = rest.len() - rest[end..].trim_start().len();
                }
                walk.added.push((i, walk.len));
                walk.len += end;
                i += 1;
                continue;
            }
            let run = ids[i..]
                .iter()
                .position(|&id| self.pieces.added_token(id).is_some())
                .map_or(ids.len(), |n| i + n);
            let spelled = self.decode(&ids[i..run]).map_err(|e| e.message().to_string())?;
            // Decoding drops the space a leading space marker stands for.
            let space =
                usize::from(self.pieces.marker_lead(ids[i]) && rest.starts_with(' ') && !spelled.starts_with(' '));
            if !rest[space..].starts_with(&spelled) {
                return Err(not_a_prefix(walk.len, &spelled, text));
            }
            walk.len += space + spelled.len();
            i = run;
        }
        Ok(walk)
    }
}

/// Where the earlier text and the prompt part, as a reason.
fn not_a_prefix(at: usize, spelled: &str, text: &str) -> String {
    let snippet = |s: &str| s.chars().take(40).collect::<String>();
    format!(
        "the earlier ids do not spell the start of this prompt: from character {} they spell {:?} where the \
         prompt has {:?} (the template rewrites earlier turns, or the ids come from another prompt)",
        text[..at].chars().count(),
        snippet(spelled),
        snippet(&text[at..])
    )
}
