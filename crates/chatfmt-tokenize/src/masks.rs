//! Assistant masks: the byte spans of a rendered chat (its `{% generation %}` blocks, or the spans of
//! [`chatfmt::masks`]) mapped to tokens the way transformers does it (`BatchEncoding.char_to_token`
//! on the tokenizer's char offsets).
//!
//! `tokenizers` gives a token the char offsets of every character it has a byte of (the token ranges
//! of [`crate::ChatTokenizer::token_ranges`] say which bytes those are; an empty range holds no
//! character). So a token contains character `c` exactly when its byte range overlaps the bytes of
//! `c`: masks are found on byte ranges, a span's first and last character read at its ends.

use crate::error::{Error, ErrorKind};
use chatfmt::jinja::ByteSpan;

/// The tokens of one (possibly padded) sequence as `char_to_token` sees them.
pub(crate) struct TokenBytes<'r> {
    /// The text the tokens spell.
    pub text: &'r str,
    /// Byte ranges of the real tokens in `text`, in order: starts never decrease, nor do the
    /// characters the ends reach.
    pub ranges: &'r [(usize, usize)],
    /// Index of the first real token (the amount of left padding).
    pub first: usize,
    /// Length of the whole sequence, padding included.
    pub len: usize,
}

impl TokenBytes<'_> {
    /// The first token whose char offsets contain the character at bytes `start..end` (padding never
    /// matches).
    fn token_at(&self, (start, end): (usize, usize)) -> Option<usize> {
        // The first token ending after the character starts holds it if it starts before the
        // character ends (an empty range there starts at or after that end).
        let j = self.ranges.partition_point(|&(_, e)| e <= start);
        let &(b, _) = self.ranges.get(j)?;
        (b < end).then_some(self.first + j)
    }

    /// The bytes of the character of the text holding byte `b`; `None` past the text's end.
    fn char_at(&self, b: usize) -> Option<(usize, usize)> {
        let bytes = self.text.as_bytes();
        if b >= bytes.len() {
            return None;
        }
        let start = (0..=b).rev().take(4).find(|&i| starts_char(bytes[i]))?;
        let len = self.text.get(start..)?.chars().next().map_or(1, char::len_utf8);
        Some((start, start + len))
    }

    /// The first token holding the character at byte `b` (see [`Self::token_at`]).
    fn token_of_byte(&self, b: usize) -> Option<usize> {
        self.char_at(b).and_then(|c| self.token_at(c))
    }

    /// The half-open token range of each span: from the token holding its first character to the
    /// one holding its last (to the end when truncation cut that one off); `None` when the span is
    /// empty or starts past a truncation cut.
    pub fn token_ranges(&self, spans: &[ByteSpan]) -> Vec<Option<(usize, usize)>> {
        spans
            .iter()
            .map(|&(s, e)| {
                if s >= e {
                    return None;
                }
                let t0 = self.token_of_byte(s)?;
                Some((t0, self.token_of_byte(e - 1).map_or(self.len, |t| t + 1)))
            })
            .collect()
    }

    /// The assistant mask of transformers' `apply_chat_template(return_assistant_tokens_mask=True)`
    /// for `spans` of the text. An empty span at 0 fails as there: transformers looks its last
    /// character up at index -1, which `char_to_token` refuses with an `OverflowError`.
    pub fn assistant_mask(&self, spans: &[ByteSpan]) -> Result<Vec<u8>, Error> {
        let mut mask = vec![0u8; self.len];
        for &(start, end) in spans {
            // Both ends are looked up before either is checked.
            let t0 = self.token_of_byte(start);
            let Some(last) = end.checked_sub(1) else {
                return Err(Error::new(ErrorKind::Mask, "can't convert negative int to unsigned"));
            };
            let Some(t0) = t0 else {
                // The span starts past a truncation cut: it and every later span are dropped.
                break;
            };
            // Python truthiness: a last token of None *or 0* marks to the end of the sequence.
            let stop = match self.token_of_byte(last) {
                Some(t) if t > 0 => t + 1,
                _ => self.len,
            };
            for m in mask.iter_mut().take(stop).skip(t0) {
                *m = 1;
            }
        }
        Ok(mask)
    }
}

/// Whether a byte starts a UTF-8 character (continuation bytes are 0x80..=0xBF, below -0x40 as i8).
#[inline]
fn starts_char(x: u8) -> bool {
    (x as i8) >= -0x40
}

/// `char_to_token` of every character of `text`, tokens given by their byte ranges (for tests).
#[cfg(test)]
pub(crate) fn char_to_token(text: &str, ranges: &[(usize, usize)]) -> Vec<Option<usize>> {
    let t = TokenBytes {
        text,
        ranges,
        first: 0,
        len: ranges.len(),
    };
    text.char_indices()
        .map(|(b, c)| t.token_at((b, b + c.len_utf8())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_of_a_character_finds_it() {
        let text = "a\u{e9}\u{6771}\u{1f600}b".repeat(3);
        let t = TokenBytes {
            text: &text,
            ranges: &[],
            first: 0,
            len: 0,
        };
        for (at, ch) in text.char_indices() {
            for b in at..at + ch.len_utf8() {
                assert_eq!(t.char_at(b), Some((at, at + ch.len_utf8())), "byte {b}");
            }
        }
        assert_eq!(t.char_at(text.len()), None);
    }

    #[test]
    fn multibyte_characters_map_to_the_first_token_holding_them() {
        // "aé" split as [a + first byte of é] [second byte of é]: both tokens hold é.
        let t = TokenBytes {
            text: "aé",
            ranges: &[(0, 2), (2, 3)],
            first: 0,
            len: 2,
        };
        assert_eq!(t.token_at((1, 3)), Some(0));
        assert_eq!(t.assistant_mask(&[(1, 3)]).unwrap(), vec![1, 1]);
    }

    #[test]
    fn an_empty_range_holds_nothing() {
        // A prefix marker holding "a", then "ab", a space trimmed to nothing, then "c".
        let t = TokenBytes {
            text: "ab c",
            ranges: &[(0, 1), (0, 2), (3, 3), (3, 4)],
            first: 0,
            len: 4,
        };
        assert_eq!(t.token_at((0, 1)), Some(0));
        assert_eq!(t.token_at((1, 2)), Some(1));
        assert_eq!(t.token_at((2, 3)), None);
        assert_eq!(t.token_at((3, 4)), Some(3));
        assert_eq!(t.assistant_mask(&[(1, 2)]).unwrap(), vec![0, 1, 0, 0]);
    }

    #[test]
    fn truncated_span_runs_to_the_end_and_later_spans_are_dropped() {
        let t = TokenBytes {
            text: "abc",
            ranges: &[(0, 1), (1, 2), (2, 3)],
            first: 1,
            len: 4,
        };
        assert_eq!(t.assistant_mask(&[(1, 9), (20, 25)]).unwrap(), vec![0, 0, 1, 1]);
        assert_eq!(t.assistant_mask(&[(9, 12), (0, 1)]).unwrap(), vec![0, 0, 0, 0]);
    }

    /// transformers' rule stated directly: each token's char offsets as `tokenizers` reports them
    /// (`(c(b), c(e-1)+1)`; an empty range holds nothing), then `char_to_token` = the first token whose
    /// offsets contain the char. `None` where Python raises (`char_to_token(-1)`).
    fn reference_mask(text: &str, ranges: &[(usize, usize)], spans: &[(usize, usize)], len: usize) -> Option<Vec<u8>> {
        // The character holding byte `b`.
        let char_of = |b: usize| text.as_bytes()[..=b].iter().filter(|&&x| starts_char(x)).count() - 1;
        let n = text.chars().count();
        let offsets: Vec<(usize, usize)> = ranges
            .iter()
            .map(|&(b, e)| match (b >= text.len(), e > b) {
                (false, true) => (char_of(b), char_of(e - 1) + 1),
                _ => (n, n),
            })
            .collect();
        let to_token = |c: usize| offsets.iter().position(|&(s, e)| s <= c && c < e);
        let mut mask = vec![0u8; len];
        for &(start, end) in spans {
            let (t0, t1) = (to_token(start), to_token(end.checked_sub(1)?));
            let Some(t0) = t0 else { break };
            let stop = match t1 {
                Some(t) if t > 0 => t + 1,
                _ => len,
            };
            mask.iter_mut().take(stop).skip(t0).for_each(|m| *m = 1);
        }
        Some(mask)
    }

    proptest::proptest! {
        #[test]
        fn masks_match_the_char_offset_rule(
            chars in proptest::collection::vec(proptest::sample::select(vec!['a', ' ', '\u{e9}', '\u{6771}', '\u{1f600}']), 0..150),
            cuts in proptest::collection::vec((0usize..8, 0u8..10), 0..200),
            spans in proptest::collection::vec((0usize..160, 0usize..20), 0..5),
            keep in 0usize..220,
        ) {
            let text: String = chars.into_iter().collect();
            // Contiguous byte ranges over the text (cutting inside characters too), some of them
            // empty (trimmed) or holding the next character without spelling it (a prefix marker),
            // the rest of the text in one last token.
            let mut ranges = Vec::new();
            let mut pos = 0;
            for (step, kind) in cuts {
                // (An empty range never follows one that holds the next character: a prefix marker is
                // followed by the token that spells it.)
                if kind == 0 && ranges.last().is_none_or(|&(_, e)| e <= pos) {
                    ranges.push((pos, pos));
                } else if kind == 1 && text.is_char_boundary(pos) {
                    let next = text[pos..].chars().next().map_or(0, char::len_utf8);
                    ranges.push((pos, pos + next));
                } else if pos < text.len() {
                    let end = (pos + step.max(1)).min(text.len());
                    ranges.push((pos, end));
                    pos = end;
                }
            }
            if pos < text.len() {
                ranges.push((pos, text.len()));
            }
            ranges.truncate(keep);
            let mut spans: Vec<(usize, usize)> = spans.into_iter().map(|(s, l)| (s, s + l)).collect();
            spans.sort_unstable();
            // The same spans in bytes (a character past the end one byte past it).
            let starts: Vec<usize> = text.char_indices().map(|(b, _)| b).chain([text.len()]).collect();
            let byte = |c: usize| starts.get(c).copied().unwrap_or(text.len() + c - (starts.len() - 1));
            let byte_spans: Vec<ByteSpan> = spans.iter().map(|&(s, e)| (byte(s), byte(e))).collect();
            let t = TokenBytes { text: &text, ranges: &ranges, first: 0, len: ranges.len() };
            proptest::prop_assert_eq!(t.assistant_mask(&byte_spans).ok(), reference_mask(&text, &ranges, &spans, ranges.len()));
        }
    }
}
