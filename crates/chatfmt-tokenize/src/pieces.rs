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
    /// Bytes of input text the token's spelling stands for after its leading space markers.
    bytes: u32,
    /// How many space markers the spelling starts with. Each stands for a space, for the marker
    /// character itself when the text has it (SentencePiece-style markers), or for the prefix the
    /// pre-tokenizer added (the first marker of a segment's first token).
    lead: u32,
    kind: Kind,
    /// Leading and trailing characters of the token's spelling that `trim_offsets` trims (`Ġ` and
    /// whitespace), at most 255.
    spaces: (u8, u8),
}

#[derive(Debug, Clone, Copy, Default)]
enum Kind {
    /// Leading space markers, then `bytes` bytes of other characters.
    #[default]
    Text,
    /// A spelling with space markers after other characters: the index of its runs in
    /// [`PieceTable::runs`].
    Runs(u32),
    /// A byte-fallback token `<0xNN>`, one byte of the (pre-tokenized) text.
    Byte(u8),
    /// Index into `added` for added tokens.
    Added(u32),
}

/// A run of space markers followed by a run of `bytes` bytes of other characters.
#[derive(Debug, Clone, Copy)]
struct Run {
    markers: u32,
    bytes: u32,
}

/// The number of leading and trailing `Ġ` or whitespace characters of a token's spelling (what the
/// ByteLevel or RoBERTa post-processor's `trim_offsets` removes from its offsets).
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
    /// How many tokens the model's own vocabulary holds (the added tokens left out).
    model_vocab: usize,
    /// The runs of [`Kind::Runs`] spellings.
    runs: Vec<Box<[Run]>>,
    added: Vec<AddedToken>,
    /// The UTF-8 of a space marker that stands for itself where the text has it (a SentencePiece-style
    /// `▁`; not byte-level `Ġ`, which only ever stands for a space).
    literal_marker: Option<Box<[u8]>>,
    /// A `Prepend` normalizer adds the prefix marker to every segment, whatever it starts with.
    prefix_always: bool,
    /// Why offsets cannot be rebuilt for this tokenizer, if they cannot.
    unsupported: Option<String>,
    /// A ByteLevel or RoBERTa post-processor trims the offsets (`trim_offsets`), with its
    /// `add_prefix_space`.
    trim: Option<bool>,
    /// The vocabulary gives one id to several tokens.
    shared_ids: bool,
    /// A Unigram model's unknown token, whose text is what it covers (its trimmed offsets count
    /// the spaces there, not in its spelling).
    unigram_unk: Option<u32>,
}

/// Byte-level BPE maps every byte to one printable character.
const BYTE_LEVEL_SPACE: char = 'Ġ';
const METASPACE: char = '\u{2581}';

/// How the pre-processing writes spaces, found in the tokenizer.json components.
#[derive(Debug, Clone, Default)]
struct Spelling {
    byte_level: bool,
    /// The space marker (`▁` or `Ġ`) when spaces are spelled with one.
    marker: Option<char>,
    byte_fallback: bool,
    /// A `Prepend` normalizer writes the marker in front of every segment (a Metaspace pre-tokenizer
    /// only in front of one that does not start with a space or the marker).
    prefix_always: bool,
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
        let mut prepend = None;
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
                Some("Prepend") => prepend = p["prepend"].as_str().and_then(|r| r.chars().next()),
                _ => {}
            }
        }
        s.prefix_always = prepend.is_some() && prepend == s.marker && !s.byte_level;
        let model = &json["model"];
        s.byte_fallback = model["byte_fallback"].as_bool().unwrap_or(false);
        s.continuing_prefix = model["continuing_subword_prefix"].as_str().unwrap_or("").to_string();
        s.end_suffix = model["end_of_word_suffix"].as_str().unwrap_or("").to_string();
        s
    }

    /// The piece of a vocabulary token; the runs of a [`Kind::Runs`] spelling go to `runs`.
    fn piece(&self, token: &str, runs: &mut Vec<Box<[Run]>>) -> Piece {
        if self.byte_fallback && token.len() == 6 && token.starts_with("<0x") && token.ends_with('>') {
            if let Ok(b) = u8::from_str_radix(&token[3..5], 16) {
                return Piece {
                    bytes: 1,
                    kind: Kind::Byte(b),
                    ..Piece::default()
                };
            }
        }
        let mut t = token.strip_prefix(self.continuing_prefix.as_str()).unwrap_or(token);
        if !self.end_suffix.is_empty() {
            t = t.strip_suffix(self.end_suffix.as_str()).unwrap_or(t);
        }
        let is_marker = |c: char| Some(c) == self.marker;
        let lead = t.chars().take_while(|&c| is_marker(c)).count();
        let rest = &t[lead * self.marker.map_or(0, char::len_utf8)..];
        let spaces = trimmed_spaces(token);
        if self.byte_level {
            // Every character is one byte, a `Ġ` always a space.
            return Piece {
                bytes: rest.chars().count() as u32,
                lead: lead as u32,
                kind: Kind::Text,
                spaces,
            };
        }
        let kind = if rest.chars().any(is_marker) {
            // Markers after other characters: the spelling run by run.
            let mut spelled = vec![Run {
                markers: lead as u32,
                bytes: 0,
            }];
            for c in rest.chars() {
                let last = spelled.len() - 1;
                match (is_marker(c), spelled[last].bytes) {
                    (true, 0) => spelled[last].markers += 1,
                    (true, _) => spelled.push(Run { markers: 1, bytes: 0 }),
                    (false, _) => spelled[last].bytes += c.len_utf8() as u32,
                }
            }
            runs.push(spelled.into_boxed_slice());
            Kind::Runs(runs.len() as u32 - 1)
        } else {
            Kind::Text
        };
        Piece {
            bytes: rest.len() as u32,
            lead: lead as u32,
            kind,
            spaces,
        }
    }
}

/// What the table needs from a tokenizer.json besides its vocabulary, read from the tree before it is
/// canonicalized (which rewrites the pre-tokenizer).
#[derive(Clone)]
pub(crate) struct PieceSource {
    spelling: Spelling,
    added: Vec<AddedToken>,
    unsupported: Option<String>,
    trim: Option<bool>,
    unigram_unk: Option<u32>,
}

/// `Some(add_prefix_space)` when the post-processor (or a member of its `Sequence`) is a ByteLevel
/// or RoBERTa one with `trim_offsets` (both trim offsets the same way).
fn trim_offsets(post_processor: &Json) -> Option<bool> {
    let mut parts = Vec::new();
    components(post_processor, &mut parts);
    parts
        .into_iter()
        .find(|p| {
            matches!(p["type"].as_str(), Some("ByteLevel" | "RobertaProcessing"))
                && p["trim_offsets"].as_bool().unwrap_or(true)
        })
        .map(|p| p["add_prefix_space"].as_bool().unwrap_or(true))
}

/// Why the walk of token spellings cannot be trusted to find offsets: a normalizer may rewrite the
/// text, and the walk, which counts bytes, would then place tokens by length alone. Changes that
/// cancel out (NFKC writes `½` two bytes longer and each `ﬁ` a byte shorter; a pre-tokenizer drops
/// what a `Prepend` adds) leave as many bytes as the text holds, with the tokens standing for other
/// parts of it, so the 0.23 release's own offsets are used instead. The walk spells the markers a
/// `Replace` of spaces, a `Prepend` before a Metaspace marker and a lone NFC (aligned apart)
/// write; every other normalizer may rewrite the text.
fn rewrites_text(json: &Json, spelling: &Spelling) -> Option<String> {
    let mut normalizers = Vec::new();
    components(&json["normalizer"], &mut normalizers);
    let rewriting = normalizers.iter().find_map(|n| match n["type"].as_str() {
        Some("NFC") => None,
        Some("Replace") if n["pattern"]["String"].as_str() == Some(" ") && spelling.marker.is_some() => None,
        Some("Prepend") if spelling.prefix_always => None,
        other => other,
    })?;
    Some(format!(
        "the {rewriting} normalizer may rewrite the text, so the tokens need not spell it where they stand"
    ))
}

impl PieceSource {
    /// Reads a (pre-processed, not yet canonicalized) tokenizer.json tree; its vocabulary comes later.
    pub fn of(json: &Json) -> Result<PieceSource, Error> {
        let spelling = Spelling::of(json);
        let unsupported = match json["model"]["type"].as_str() {
            Some("BPE") | Some("Unigram") | Some("WordLevel") => rewrites_text(json, &spelling),
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
            spelling,
            added,
            unsupported,
            trim: trim_offsets(&json["post_processor"]),
            unigram_unk: match json["model"]["type"].as_str() {
                Some("Unigram") => json["model"]["unk_id"].as_u64().map(|id| id as u32),
                _ => None,
            },
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
        let mut runs = Vec::new();
        let spelling = &self.spelling;
        let mut model_vocab = 0;
        let mut seen: Vec<bool> = Vec::new();
        let mut shared_ids = false;
        read_vocab(vocab, |token, id| {
            model_vocab += 1;
            let i = id as usize;
            if i >= pieces.len() {
                pieces.resize(i + 1, Piece::default());
                seen.resize(i + 1, false);
            }
            shared_ids |= std::mem::replace(&mut seen[i], true);
            pieces[i] = spelling.piece(token, &mut runs);
        })?;
        for (i, a) in self.added.iter().enumerate() {
            let id = a.id as usize;
            if id >= pieces.len() {
                pieces.resize(id + 1, Piece::default());
            }
            pieces[id] = Piece {
                bytes: a.content.len() as u32,
                lead: 0,
                kind: Kind::Added(i as u32),
                spaces: trimmed_spaces(&a.content),
            };
        }
        let literal_marker = match spelling.marker {
            Some(m) if !spelling.byte_level => Some(m.to_string().into_bytes().into_boxed_slice()),
            _ => None,
        };
        Ok(PieceTable {
            pieces,
            model_vocab,
            runs,
            added: self.added,
            literal_marker,
            prefix_always: spelling.prefix_always,
            unsupported: self.unsupported,
            trim: self.trim,
            shared_ids,
            unigram_unk: self.unigram_unk,
        })
    }
}

impl PieceTable {
    /// Whether the vocabulary gives one id to several tokens (each of them encodes to it).
    pub fn has_shared_ids(&self) -> bool {
        self.shared_ids
    }

    /// The text of an added token's id (`None` for other ids).
    pub fn added_content(&self, id: u32) -> Option<&str> {
        self.added_token(id).map(|a| a.content.as_str())
    }

    /// How many tokens the model's own vocabulary holds (the added tokens left out).
    pub fn model_vocab_size(&self) -> usize {
        self.model_vocab
    }

    /// The added token an id stands for (`None` for other ids).
    pub fn added_token(&self, id: u32) -> Option<&AddedToken> {
        match self.pieces.get(id as usize)?.kind {
            Kind::Added(a) => self.added.get(a as usize),
            _ => None,
        }
    }

    /// Whether the token's spelling starts with the space marker (which decoding may drop at the
    /// start of a text).
    pub fn marker_lead(&self, id: u32) -> bool {
        self.pieces.get(id as usize).is_some_and(|p| p.lead > 0)
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
    /// byte of), found by walking the token spellings along the text.
    ///
    /// A space marker stands for what the text has where it lies: a space, or (SentencePiece's `▁`)
    /// the marker character itself. The one exception is the first marker of a segment (the text
    /// after an added token, or the start): where the text does not start with a space or the marker
    /// (or always, after a `Prepend` normalizer), it is the prefix the pre-processing added, which
    /// spells no text and whose offsets are those of the character after it. Byte-fallback tokens
    /// spelling a marker's UTF-8 stand for it together, each with its whole range.
    pub fn byte_ranges(&self, text: &str, ids: &[u32]) -> Result<Vec<(usize, usize)>, Error> {
        if let Some(why) = &self.unsupported {
            return Err(Error::offsets(why));
        }
        let mut out = Vec::with_capacity(ids.len());
        let mut pos = 0usize;
        let mut segment_start = true;
        let mut i = 0;
        while i < ids.len() {
            let id = ids[i];
            let piece = self
                .pieces
                .get(id as usize)
                .copied()
                .ok_or_else(|| Error::offsets(format_args!("token {i}: id {id} is outside the vocabulary")))?;
            match piece.kind {
                Kind::Added(a) => {
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
                    i += 1;
                    continue;
                }
                Kind::Byte(_) => {
                    let n = self.marker_in_bytes(&ids[i..]);
                    if n > 0 {
                        // The bytes of one marker: each token holds what the marker stands for.
                        let len = self.marker_len(text, pos, segment_start);
                        let range = (pos, pos + self.holds(text, pos, len));
                        out.extend(std::iter::repeat_n(range, n));
                        pos += len;
                        i += n;
                    } else {
                        out.push((pos, pos + 1));
                        pos += 1;
                        i += 1;
                    }
                }
                // Markers that only lead the spelling, where each is one space (byte-level `Ġ`) and
                // none can be a segment's prefix: the common token, counted at once.
                Kind::Text if self.literal_marker.is_none() && !(segment_start && piece.lead > 0) => {
                    let len = (piece.lead + piece.bytes) as usize;
                    out.push((pos, pos + self.holds(text, pos, len)));
                    pos += len;
                    i += 1;
                }
                Kind::Text | Kind::Runs(_) => {
                    let start = pos;
                    let one = [Run {
                        markers: piece.lead,
                        bytes: piece.bytes,
                    }];
                    let runs = match piece.kind {
                        Kind::Runs(r) => self.runs.get(r as usize).map_or(&one[..], |r| &r[..]),
                        _ => &one[..],
                    };
                    // Only the spelling's first character may be the prefix.
                    let mut first = segment_start;
                    for run in runs {
                        for _ in 0..run.markers {
                            pos += self.marker_len(text, pos, first);
                            first = false;
                        }
                        first = false;
                        pos += run.bytes as usize;
                    }
                    out.push((start, start + self.holds(text, start, pos - start)));
                    i += 1;
                }
            }
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

    /// The bytes of text a space marker at byte `pos` stands for: a space (1), the marker character
    /// when the text has it there, or nothing for the prefix of a segment (`first`: the marker starts
    /// the first token after the segment's start).
    fn marker_len(&self, text: &str, pos: usize, first: bool) -> usize {
        let rest = text.as_bytes().get(pos..).unwrap_or_default();
        let space = rest.first() == Some(&b' ');
        let literal = self.literal_marker.as_deref().filter(|m| rest.starts_with(m));
        if first && (self.prefix_always || !(space || literal.is_some())) {
            0
        } else if let (false, Some(m)) = (space, literal) {
            m.len()
        } else {
            // A space (or text the walk cannot explain, which the length check reports).
            1
        }
    }

    /// The length of the range of a token at `pos` that spells `len` bytes: those, or the character
    /// after it for a lone prefix marker, which spells nothing (none at the end of the text).
    fn holds(&self, text: &str, pos: usize, len: usize) -> usize {
        match len {
            0 => text.get(pos..).and_then(|t| t.chars().next()).map_or(0, char::len_utf8),
            n => n,
        }
    }

    /// How many of the byte-fallback tokens starting `ids` spell the UTF-8 of a (literal-capable)
    /// space marker together: its length, or 0.
    fn marker_in_bytes(&self, ids: &[u32]) -> usize {
        let Some(m) = self.literal_marker.as_deref() else {
            return 0;
        };
        let byte = |id: &u32| match self.pieces.get(*id as usize).map(|p| p.kind) {
            Some(Kind::Byte(b)) => Some(b),
            _ => None,
        };
        let spelled = ids.iter().take(m.len()).map_while(byte);
        if spelled.eq(m.iter().copied()) {
            m.len()
        } else {
            0
        }
    }
}

impl PieceTable {
    /// Whether `covered` is the match of an added token that strips whitespace: its text with only
    /// whitespace around it.
    fn matched_stripping(&self, id: u32, covered: &str) -> bool {
        self.added_token(id).is_some_and(|a| {
            (a.lstrip || a.rstrip)
                && covered.find(a.content.as_str()).is_some_and(|at| {
                    let (before, after) = (&covered[..at], &covered[at + a.content.len()..]);
                    before.chars().all(char::is_whitespace) && after.chars().all(char::is_whitespace)
                })
        })
    }

    /// The post-processor's `trim_offsets` on the ranges of a sequence's tokens (after
    /// truncation, as transformers runs it): each token's offsets lose as many characters as its
    /// spelling has leading and trailing spaces, except a single leading one of the first token when
    /// the post-processor adds a prefix space. A token may end up holding no character.
    pub fn trim_offsets(&self, text: &str, ids: &[u32], ranges: &mut [(usize, usize)]) {
        let Some(add_prefix_space) = self.trim else { return };
        for (i, (&id, range)) in ids.iter().zip(ranges.iter_mut()).enumerate() {
            let Some(piece) = self.pieces.get(id as usize) else {
                continue;
            };
            let (start, end) = *range;
            // Trimming reads the token's string: the text it covers for the unknown token of a
            // Unigram model and for an added token matched with the whitespace its `lstrip` or
            // `rstrip` takes in, else its spelling (an added token the model gives, such as its
            // unknown token, has its own text).
            let covered = text.get(start..end).unwrap_or_default();
            let spaces = match Some(id) == self.unigram_unk || self.matched_stripping(id, covered) {
                true => trimmed_spaces(covered),
                false => piece.spaces,
            };
            let (mut lead, trail) = (usize::from(spaces.0), usize::from(spaces.1));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A SentencePiece-style table: `▁` pieces, `x▁` (a marker after another character), byte
    /// fallback tokens, and the added token `<s>`; `normalizer` and `pre_tokenizer` as given.
    fn table(normalizer: Json, pre_tokenizer: Json) -> PieceTable {
        let vocab =
            json!({"▁": 0, "▁▁": 1, "x": 2, "▁x": 3, "<0xE2>": 4, "<0x96>": 5, "<0x81>": 6, "x▁": 7, "<0x82>": 9});
        let json = json!({
            "added_tokens": [{"id": 8, "content": "<s>", "special": true}],
            "normalizer": normalizer,
            "pre_tokenizer": pre_tokenizer,
            "model": {"type": "BPE", "byte_fallback": true, "vocab": vocab, "merges": []},
        });
        PieceSource::of(&json).unwrap().build(Some(&vocab.to_string())).unwrap()
    }

    /// A text, its token ids and the byte ranges they cover.
    type Case = (&'static str, &'static [u32], &'static [(usize, usize)]);

    fn check(t: &PieceTable, cases: &[Case]) {
        for &(text, ids, want) in cases {
            assert_eq!(t.byte_ranges(text, ids).unwrap(), want, "{text:?}");
        }
    }

    fn metaspace() -> PieceTable {
        table(
            Json::Null,
            json!({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": false}),
        )
    }

    #[test]
    fn a_marker_stands_for_a_space_or_itself_as_the_text_has_it() {
        let t = metaspace();
        // (text, ids, ranges): `▁` is 3 bytes in the text, a space 1.
        let cases: &[Case] = &[
            (" x", &[3], &[(0, 2)]),
            ("\u{2581}x", &[3], &[(0, 4)]),
            ("\u{2581} ", &[1], &[(0, 4)]),
            (" \u{2581}", &[1], &[(0, 4)]),
            ("\u{2581}", &[0], &[(0, 3)]),
            ("\u{2581} x", &[0, 3], &[(0, 3), (3, 5)]),
            (" \u{2581}x", &[0, 3], &[(0, 1), (1, 5)]),
            ("x\u{2581}\u{2581}", &[3, 0, 0], &[(0, 1), (1, 4), (4, 7)]),
            ("<s>\u{2581}", &[8, 0], &[(0, 3), (3, 6)]),
            (
                "<s> \u{2581}<s>\u{2581}x",
                &[8, 1, 8, 3],
                &[(0, 3), (3, 7), (7, 10), (10, 14)],
            ),
        ];
        check(&t, cases);
    }

    #[test]
    fn a_segment_facing_other_text_starts_with_the_prefix_marker() {
        let t = metaspace();
        let cases: &[Case] = &[
            // The prefix spells nothing: a lone one holds the character after it.
            ("x", &[3], &[(0, 1)]),
            ("x", &[0, 2], &[(0, 1), (0, 1)]),
            ("<s>x", &[8, 3], &[(0, 3), (3, 4)]),
            // A marker after other characters is never the prefix.
            ("x ", &[0, 7], &[(0, 1), (0, 2)]),
            ("x\u{2581}", &[0, 7], &[(0, 1), (0, 4)]),
            ("x\u{2581}x", &[3, 0, 2], &[(0, 1), (1, 4), (4, 5)]),
        ];
        check(&t, cases);
        // Text that does not hold what the tokens spell is an error.
        let e = t.byte_ranges("x\u{2581}", &[3, 2]).unwrap_err();
        assert!(e.to_string().contains("the tokens spell"), "{e}");
    }

    #[test]
    fn a_prepend_normalizer_writes_the_prefix_before_any_text() {
        // tokenizer.json's own SentencePiece pre-processing: every segment gets the prefix, even
        // one that starts with a space or the marker.
        let t = table(
            json!({"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "▁"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
            ]}),
            Json::Null,
        );
        let cases: &[Case] = &[
            (" x", &[1, 2], &[(0, 1), (1, 2)]),
            ("\u{2581}x", &[0, 3], &[(0, 3), (0, 4)]),
            ("x", &[3], &[(0, 1)]),
            ("<s> x", &[8, 1, 2], &[(0, 3), (3, 4), (4, 5)]),
        ];
        check(&t, cases);
    }

    #[test]
    fn a_normalizer_that_may_rewrite_the_text_gives_no_spelled_offsets() {
        for normalizer in [
            json!({"type": "Prepend", "prepend": "▁"}),
            json!({"type": "NFKD"}),
            json!({"type": "NFKC"}),
            json!({"type": "Sequence", "normalizers": [{"type": "Lowercase"}]}),
            json!({"type": "Replace", "pattern": {"String": "\n"}, "content": "Ċ"}),
        ] {
            let t = table(normalizer.clone(), json!({"type": "WhitespaceSplit"}));
            let e = t.byte_ranges("x", &[2]).unwrap_err();
            assert!(e.to_string().contains("may rewrite the text"), "{normalizer}: {e}");
        }
        // Spelled markers do not rewrite it, whatever the pre-tokenizer.
        let ok = [
            (
                json!({"type": "Replace", "pattern": {"String": " "}, "content": "▁"}),
                json!({"type": "WhitespaceSplit"}),
            ),
            (
                json!({"type": "NFC"}),
                json!({"type": "Digits", "individual_digits": true}),
            ),
            (Json::Null, Json::Null),
        ];
        for (normalizer, pre_tokenizer) in ok {
            let t = table(normalizer, pre_tokenizer);
            assert_eq!(t.byte_ranges("x", &[2]).unwrap(), [(0, 1)]);
        }
    }

    #[test]
    fn byte_fallback_tokens_of_a_marker_stand_for_it_together() {
        let t = metaspace();
        let marker: &[u32] = &[4, 5, 6];
        let ids = |tail: &[u32]| [marker, tail].concat();
        // The prefix, a space, the marker itself: each byte token holds what the marker stands for.
        assert_eq!(
            t.byte_ranges("x", &ids(&[2])).unwrap(),
            [(0, 1), (0, 1), (0, 1), (0, 1)]
        );
        assert_eq!(
            t.byte_ranges(" x", &ids(&[2])).unwrap(),
            [(0, 1), (0, 1), (0, 1), (1, 2)]
        );
        assert_eq!(
            t.byte_ranges("\u{2581}x", &ids(&[2])).unwrap(),
            [(0, 3), (0, 3), (0, 3), (3, 4)]
        );
        assert_eq!(
            t.byte_ranges("\u{2581} ", &[4, 5, 6, 4, 5, 6]).unwrap(),
            [(0, 3), (0, 3), (0, 3), (3, 4), (3, 4), (3, 4)]
        );
        // The bytes of another character (`▂`, E2 96 82) are one byte each.
        assert_eq!(
            t.byte_ranges("x\u{2582}", &[3, 4, 5, 9]).unwrap(),
            [(0, 1), (1, 2), (2, 3), (3, 4)]
        );
    }

    #[test]
    fn byte_level_markers_are_only_spaces() {
        let vocab = json!({"Ġ": 0, "x": 1, "Ġx": 2, "Ä": 3, "ł": 4});
        let json = json!({
            "added_tokens": [],
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false},
            "model": {"type": "BPE", "vocab": vocab, "merges": []},
        });
        let t = PieceSource::of(&json).unwrap().build(Some(&vocab.to_string())).unwrap();
        assert_eq!(t.byte_ranges(" x", &[2]).unwrap(), [(0, 2)]);
        // `Ġ` in the text is two bytes of its own, never a marker.
        assert_eq!(t.byte_ranges("\u{120}x", &[3, 4, 1]).unwrap(), [(0, 1), (1, 2), (2, 3)]);
    }
}
