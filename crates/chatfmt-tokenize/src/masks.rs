//! Assistant masks: the `{% generation %}` character spans of a rendered chat mapped to tokens the way
//! transformers does it (`BatchEncoding.char_to_token` on the tokenizer's char offsets).

/// Character (code point) offsets of each real token, the way `tokenizers` reports them: a token
/// covers every character it has a byte of; a token that covers no text (a space-marker prefix)
/// has the offsets of the character after it.
pub(crate) fn char_ranges(text: &str, byte_ranges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let char_at = CharIndex::of(text);
    byte_ranges
        .iter()
        .map(|&(b, e)| {
            if b >= text.len() {
                let n = char_at.get(text.len());
                (n, n)
            } else if e > b {
                (char_at.get(b), char_at.get(e - 1) + 1)
            } else {
                let c = char_at.get(b);
                (c, c + 1)
            }
        })
        .collect()
}

/// The index of the character holding each byte of a text (the char count for the end offset).
enum CharIndex {
    /// ASCII text: byte offsets are char offsets.
    Ascii {
        len: usize,
    },
    Table(Vec<usize>),
}

impl CharIndex {
    fn of(text: &str) -> CharIndex {
        if text.is_ascii() {
            return CharIndex::Ascii { len: text.len() };
        }
        let mut table = Vec::with_capacity(text.len() + 1);
        let mut starts = 0usize;
        for &x in text.as_bytes() {
            // UTF-8 continuation bytes are 0x80..=0xBF, i.e. below -0x40 as i8.
            starts += usize::from((x as i8) >= -0x40);
            table.push(starts - 1);
        }
        table.push(starts);
        CharIndex::Table(table)
    }

    /// The char holding byte `b`; offsets at or past the end give the char count.
    fn get(&self, b: usize) -> usize {
        match self {
            CharIndex::Ascii { len } => b.min(*len),
            CharIndex::Table(t) => t[b.min(t.len() - 1)],
        }
    }
}

/// The tokens of one (possibly padded) sequence as `char_to_token` sees them.
pub(crate) struct TokenChars<'r> {
    /// Char ranges of the real tokens, in order (monotone).
    pub ranges: &'r [(usize, usize)],
    /// Index of the first real token (the amount of left padding).
    pub first: usize,
    /// Length of the whole sequence, padding included.
    pub len: usize,
}

impl TokenChars<'_> {
    /// The first token whose char offsets contain `c` (padding never matches).
    fn char_to_token(&self, c: usize) -> Option<usize> {
        let j = self.ranges.partition_point(|&(_, e)| e <= c);
        let &(s, _) = self.ranges.get(j)?;
        (s <= c).then_some(self.first + j)
    }

    /// The assistant mask of transformers' `apply_chat_template(return_assistant_tokens_mask=True)`.
    pub fn assistant_mask(&self, spans: &[(usize, usize)]) -> Vec<u8> {
        let mut mask = vec![0u8; self.len];
        for &(start, end) in spans {
            let Some(t0) = self.char_to_token(start) else {
                // The span starts past a truncation cut: it and every later span are dropped.
                break;
            };
            // `end - 1` of an empty span at 0 is -1 in Python, which no token contains.
            let t1 = end.checked_sub(1).and_then(|c| self.char_to_token(c));
            // Python truthiness: a last token of None *or 0* marks to the end of the sequence.
            let stop = match t1 {
                Some(t) if t > 0 => t + 1,
                _ => self.len,
            };
            for m in mask.iter_mut().take(stop).skip(t0) {
                *m = 1;
            }
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multibyte_characters_map_to_the_first_token_holding_them() {
        // "aé" split as [a + first byte of é] [second byte of é]: both tokens hold é.
        let ranges = char_ranges("aé", &[(0, 2), (2, 3)]);
        assert_eq!(ranges, vec![(0, 2), (1, 2)]);
        let t = TokenChars {
            ranges: &ranges,
            first: 0,
            len: 2,
        };
        assert_eq!(t.char_to_token(1), Some(0));
    }

    #[test]
    fn char_index_counts_code_points() {
        let text = "a\u{e9}\u{6771}\u{1f600}b";
        let index = CharIndex::of(text);
        let got: Vec<usize> = (0..=text.len()).map(|b| index.get(b)).collect();
        assert_eq!(got, vec![0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 5]);
    }

    #[test]
    fn truncated_span_runs_to_the_end_and_later_spans_are_dropped() {
        let ranges = vec![(0, 1), (1, 2), (2, 3)];
        let t = TokenChars {
            ranges: &ranges,
            first: 1,
            len: 4,
        };
        assert_eq!(t.assistant_mask(&[(1, 9), (20, 25)]), vec![0, 0, 1, 1]);
        assert_eq!(t.assistant_mask(&[(9, 12), (0, 1)]), vec![0, 0, 0, 0]);
    }
}
