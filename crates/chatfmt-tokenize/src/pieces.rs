//! What each token id spells in the input text, read from `tokenizer.json`: enough to walk the ids
//! of an encoding along the text and recover each token's offsets (the 1.0 pipeline returns ids only).

use crate::tokenizer_json::read_vocab;
use crate::{Error, ErrorKind};
use serde_json::Value as Json;

/// An added token (`added_tokens` of tokenizer.json), matched on the raw text before the model runs.
#[derive(Debug, Clone)]
pub struct AddedToken {
    pub content: String,
    pub id: u32,
    pub special: bool,
    /// Matching swallows the whitespace before the token.
    pub lstrip: bool,
    /// Matching swallows the whitespace after the token.
    pub rstrip: bool,
}

/// How a token of the model covers text.
#[derive(Debug, Clone, Copy, Default)]
struct Piece {
    /// Bytes of input text the token stands for (a space marker counts as the one space it replaces).
    bytes: u32,
    /// The token starts with the space marker, which may be a prefix the pre-tokenizer added.
    marker_lead: bool,
    /// Index into `added` for added tokens.
    added: Option<u32>,
    /// Leading and trailing characters of the token's spelling that `trim_offsets` trims (`Ġ` and
    /// whitespace), at most 255.
    spaces: (u8, u8),
}

/// The number of leading and trailing `Ġ` or whitespace characters of a token's spelling (what the
/// ByteLevel post-processor's `trim_offsets` removes from its offsets).
fn trimmed_spaces(token: &str) -> (u8, u8) {
    let space = |c: &char| *c == BYTE_LEVEL_SPACE || c.is_whitespace();
    let count = |n: usize| n.min(255) as u8;
    (
        count(token.chars().take_while(space).count()),
        count(token.chars().rev().take_while(space).count()),
    )
}

/// The per-id table.
#[derive(Debug)]
pub struct PieceTable {
    pieces: Vec<Piece>,
    added: Vec<AddedToken>,
    /// Why offsets cannot be rebuilt for this tokenizer, if they cannot.
    unsupported: Option<String>,
    /// A ByteLevel post-processor trims the offsets (`trim_offsets`), with its `add_prefix_space`.
    trim: Option<bool>,
}

/// Byte-level BPE maps every byte to one printable character.
const BYTE_LEVEL_SPACE: char = 'Ġ';
const METASPACE: char = '\u{2581}';

/// How the pre-processing writes spaces, found in the tokenizer.json components.
#[derive(Debug, Default)]
struct Spelling {
    byte_level: bool,
    /// The space marker (`▁` or `Ġ`) when spaces are spelled with one.
    marker: Option<char>,
    byte_fallback: bool,
    continuing_prefix: String,
    end_suffix: String,
}

fn components<'j>(node: &'j Json, out: &mut Vec<&'j Json>) {
    match node.get("type").and_then(Json::as_str) {
        Some("Sequence") => {
            for key in ["pretokenizers", "normalizers", "processors"] {
                for child in node.get(key).and_then(Json::as_array).into_iter().flatten() {
                    components(child, out);
                }
            }
        }
        Some(_) => out.push(node),
        None => {}
    }
}

impl Spelling {
    fn of(json: &Json) -> Spelling {
        let mut parts = Vec::new();
        components(&json["pre_tokenizer"], &mut parts);
        components(&json["normalizer"], &mut parts);
        let mut s = Spelling::default();
        for p in parts {
            match p["type"].as_str() {
                Some("ByteLevel") => {
                    s.byte_level = true;
                    s.marker = Some(BYTE_LEVEL_SPACE);
                }
                Some("Metaspace") => {
                    s.marker = p["replacement"]
                        .as_str()
                        .and_then(|r| r.chars().next())
                        .or(Some(METASPACE));
                }
                Some("Replace") if p["pattern"]["String"].as_str() == Some(" ") => {
                    s.marker = p["content"].as_str().and_then(|r| r.chars().next());
                }
                _ => {}
            }
        }
        let model = &json["model"];
        s.byte_fallback = model["byte_fallback"].as_bool().unwrap_or(false);
        s.continuing_prefix = model["continuing_subword_prefix"].as_str().unwrap_or("").to_string();
        s.end_suffix = model["end_of_word_suffix"].as_str().unwrap_or("").to_string();
        s
    }

    fn piece(&self, token: &str) -> Piece {
        if self.byte_fallback && token.len() == 6 && token.starts_with("<0x") && token.ends_with('>') {
            return Piece {
                bytes: 1,
                ..Piece::default()
            };
        }
        let mut t = token.strip_prefix(self.continuing_prefix.as_str()).unwrap_or(token);
        if !self.end_suffix.is_empty() {
            t = t.strip_suffix(self.end_suffix.as_str()).unwrap_or(t);
        }
        let bytes = if self.byte_level {
            t.chars().count()
        } else {
            t.chars()
                .map(|c| if Some(c) == self.marker { 1 } else { c.len_utf8() })
                .sum()
        };
        Piece {
            bytes: bytes as u32,
            marker_lead: self.marker.is_some_and(|m| t.starts_with(m)),
            added: None,
            spaces: trimmed_spaces(token),
        }
    }
}

/// What the table needs from a tokenizer.json besides its vocabulary, read from the tree before it is
/// canonicalized (which rewrites the pre-tokenizer).
pub(crate) struct PieceSource {
    spelling: Spelling,
    added: Vec<AddedToken>,
    unsupported: Option<String>,
    trim: Option<bool>,
}

/// `Some(add_prefix_space)` when the post-processor (or a member of its `Sequence`) is a ByteLevel
/// one with `trim_offsets`.
fn trim_offsets(post_processor: &Json) -> Option<bool> {
    let mut parts = Vec::new();
    components(post_processor, &mut parts);
    parts
        .into_iter()
        .find(|p| p["type"] == "ByteLevel" && p["trim_offsets"].as_bool().unwrap_or(true))
        .map(|p| p["add_prefix_space"].as_bool().unwrap_or(true))
}

impl PieceSource {
    /// Reads a (pre-processed, not yet canonicalized) tokenizer.json tree; its vocabulary comes later.
    pub fn of(json: &Json) -> Result<PieceSource, Error> {
        let unsupported = match json["model"]["type"].as_str() {
            Some("BPE") | Some("Unigram") | Some("WordLevel") => None,
            other => Some(format!(
                "assistant masks need token offsets, not available for model type {other:?}"
            )),
        };
        let mut added = Vec::new();
        for (i, t) in json["added_tokens"].as_array().into_iter().flatten().enumerate() {
            let (Some(content), Some(id)) = (t["content"].as_str(), t["id"].as_u64()) else {
                return Err(Error::new(
                    ErrorKind::Malformed,
                    format!("added_tokens[{i}] needs a string content and an integer id"),
                ));
            };
            added.push(AddedToken {
                content: content.to_string(),
                id: id as u32,
                special: t["special"].as_bool().unwrap_or(false),
                lstrip: t["lstrip"].as_bool().unwrap_or(false),
                rstrip: t["rstrip"].as_bool().unwrap_or(false),
            });
        }
        Ok(PieceSource {
            spelling: Spelling::of(json),
            added,
            unsupported,
            trim: trim_offsets(&json["post_processor"]),
        })
    }

    /// The table, from the text of `model.vocab` (`None`: the file has no vocabulary).
    pub fn build(self, vocab: Option<&str>) -> Result<PieceTable, Error> {
        let vocab = vocab.ok_or_else(|| {
            Error::new(
                ErrorKind::Malformed,
                "model.vocab is missing (is this a tokenizer.json?)",
            )
        })?;
        let mut pieces = Vec::new();
        let spelling = &self.spelling;
        read_vocab(vocab, |token, id| {
            let i = id as usize;
            if i >= pieces.len() {
                pieces.resize(i + 1, Piece::default());
            }
            pieces[i] = spelling.piece(token);
        })?;
        for (i, a) in self.added.iter().enumerate() {
            let id = a.id as usize;
            if id >= pieces.len() {
                pieces.resize(id + 1, Piece::default());
            }
            pieces[id] = Piece {
                bytes: a.content.len() as u32,
                marker_lead: false,
                added: Some(i as u32),
                spaces: trimmed_spaces(&a.content),
            };
        }
        Ok(PieceTable {
            pieces,
            added: self.added,
            unsupported: self.unsupported,
            trim: self.trim,
        })
    }
}

impl PieceTable {
    /// The text of an added token's id (`None` for other ids).
    pub fn added_content(&self, id: u32) -> Option<&str> {
        self.added_token(id).map(|a| a.content.as_str())
    }

    /// The added token an id stands for (`None` for other ids).
    pub fn added_token(&self, id: u32) -> Option<&AddedToken> {
        let piece = self.pieces.get(id as usize)?;
        piece.added.map(|a| &self.added[a as usize])
    }

    /// Whether the token's spelling starts with the space marker (which decoding may drop at the
    /// start of a text).
    pub fn marker_lead(&self, id: u32) -> bool {
        self.pieces.get(id as usize).is_some_and(|p| p.marker_lead)
    }

    /// Whether another added token contains this one's text (and so could match across it).
    pub fn contained_in_another(&self, token: &AddedToken) -> bool {
        self.added
            .iter()
            .any(|a| a.content.len() > token.content.len() && a.content.contains(token.content.as_str()))
    }

    /// The byte length of the longest added token.
    pub fn longest_added(&self) -> usize {
        self.added.iter().map(|a| a.content.len()).max().unwrap_or(0)
    }

    /// The added tokens, in tokenizer.json order.
    pub fn added_tokens(&self) -> &[AddedToken] {
        &self.added
    }

    /// The byte range of `text` each token of `ids` covers (its offsets hold every character it has a
    /// byte of), found by walking the token spellings along the text. A space marker at the start of
    /// a segment (after an added token, or at the start) that faces no space is the prefix the
    /// pre-tokenizer added: it spells no text, and its offsets are those of the character after it.
    pub fn byte_ranges(&self, text: &str, ids: &[u32]) -> Result<Vec<(usize, usize)>, Error> {
        if let Some(why) = &self.unsupported {
            return Err(Error::offsets(why));
        }
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(ids.len());
        let mut pos = 0usize;
        let mut segment_start = true;
        for (i, &id) in ids.iter().enumerate() {
            let piece = self
                .pieces
                .get(id as usize)
                .copied()
                .ok_or_else(|| Error::offsets(format_args!("token {i}: id {id} is outside the vocabulary")))?;
            if let Some(a) = piece.added {
                let a = &self.added[a as usize];
                let start = pos;
                if a.lstrip {
                    pos += text.get(pos..).map_or(0, whitespace_len);
                }
                if !text.get(pos..).is_some_and(|rest| rest.starts_with(a.content.as_str())) {
                    return Err(Error::offsets(format_args!(
                        "token {i} ({:?}) is not at byte {pos} of the text",
                        a.content
                    )));
                }
                pos += a.content.len();
                if a.rstrip {
                    pos += text.get(pos..).map_or(0, whitespace_len);
                }
                out.push((start, pos));
                segment_start = true;
                continue;
            }
            let mut len = piece.bytes as usize;
            if piece.marker_lead && segment_start && bytes.get(pos) != Some(&b' ') {
                len -= 1;
            }
            // A lone prefix marker holds the character after it (if any).
            let holds = match len {
                0 => text.get(pos..).and_then(|t| t.chars().next()).map_or(0, char::len_utf8),
                n => n,
            };
            out.push((pos, pos + holds));
            pos += len;
            segment_start = false;
        }
        if pos != text.len() {
            return Err(Error::offsets(format_args!(
                "the tokens spell {pos} bytes but the text has {} (a normalizer changed the text?)",
                text.len()
            )));
        }
        Ok(out)
    }
}

impl PieceTable {
    /// The ByteLevel post-processor's `trim_offsets` on the ranges of a sequence's tokens (after
    /// truncation, as transformers runs it): each token's offsets lose as many characters as its
    /// spelling has leading and trailing spaces, except a single leading one of the first token when
    /// the post-processor adds a prefix space. A token may end up holding no character.
    pub fn trim_offsets(&self, text: &str, ids: &[u32], ranges: &mut [(usize, usize)]) {
        let Some(add_prefix_space) = self.trim else { return };
        for (i, (&id, range)) in ids.iter().zip(ranges.iter_mut()).enumerate() {
            let Some(piece) = self.pieces.get(id as usize) else {
                continue;
            };
            let (mut lead, trail) = (usize::from(piece.spaces.0), usize::from(piece.spaces.1));
            let (start, end) = *range;
            if lead == 1 && add_prefix_space && (i == 0 || start == 0) {
                lead = 0;
            }
            // A token that starts with spaces starts a character, though it may end inside one.
            let mut new_start = start;
            for ch in text.get(start..).unwrap_or_default().chars().take(lead) {
                new_start += ch.len_utf8();
            }
            let new_start = new_start.min(end);
            // Offsets count characters: the end moves back `trail` characters when the text has that
            // many before it, and not at all otherwise.
            let mut before = text.get(..end).unwrap_or_default().chars().rev();
            let back: Option<usize> = (0..trail).map(|_| before.next().map(char::len_utf8)).sum();
            let new_end = end - back.unwrap_or(0);
            *range = (new_start, new_end.max(new_start));
        }
    }
}

fn whitespace_len(s: &str) -> usize {
    s.len() - s.trim_start().len()
}
