//! Tokenizers whose only normalizer is NFC (Qwen2/3 and other byte-level BPEs) spend a tenth of
//! their encoding time checking that text is already NFC, character by character. NFC text is left
//! unchanged by NFC normalization, and so is every piece of it between added tokens (a piece of NFC
//! text cut at character boundaries is NFC), so such a tokenizer gives NFC text the same ids without
//! its normalizer. chatfmt builds it that way, checks texts with [`is_nfc`] (which skips ASCII a
//! word at a time), and encodes the rare text that is not NFC with the full pipeline.
//!
//! Assistant masks of text that is not NFC need token offsets in the original text, which the
//! tokens spell only after normalization: [`Aligned`] normalizes the text as transformers'
//! `tokenizers` does and keeps, for each normalized byte, the original character it came from.

use std::sync::OnceLock;
use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfc_quick, IsNormalized};

/// One bit per Basic Multilingual Plane character: set for starters (combining class 0) whose NFC
/// quick check is Yes. Like ASCII, such a character is NFC and restarts the quick check.
fn plain_starters() -> &'static [u64] {
    static TABLE: OnceLock<Vec<u64>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut bits = vec![0u64; 0x10000 / 64];
        for (c, ch) in (0..0x10000u32).filter_map(|c| char::from_u32(c).map(|ch| (c, ch))) {
            if canonical_combining_class(ch) == 0 && is_nfc_quick(std::iter::once(ch)) == IsNormalized::Yes {
                bits[c as usize / 64] |= 1 << (c % 64);
            }
        }
        bits
    })
}

/// Whether `text` is in Unicode Normalization Form C: the quick check of `unicode-normalization`
/// (combining classes in order, no character that NFC changes), skipping ASCII a word at a time and
/// plain starters by a table, and the full check where the quick one is not sure.
pub(crate) fn is_nfc(text: &str) -> bool {
    let plain = plain_starters();
    let bytes = text.as_bytes();
    let (mut i, mut last_cc, mut maybe) = (0, 0u8, false);
    while i < bytes.len() {
        let ascii = ascii_len(&bytes[i..]);
        if ascii > 0 {
            i += ascii;
            last_cc = 0;
            continue;
        }
        let Some(ch) = text[i..].chars().next() else { break };
        i += ch.len_utf8();
        let c = ch as usize;
        if c < 0x10000 && plain[c / 64] >> (c % 64) & 1 == 1 {
            last_cc = 0;
            continue;
        }
        let cc = canonical_combining_class(ch);
        if cc != 0 && last_cc > cc {
            return false;
        }
        match is_nfc_quick(std::iter::once(ch)) {
            IsNormalized::Yes => {}
            IsNormalized::No => return false,
            IsNormalized::Maybe => maybe = true,
        }
        last_cc = cc;
    }
    !maybe || unicode_normalization::is_nfc(text)
}

/// A text normalized to NFC piece by piece between its added tokens (which stay as they are), with
/// the original byte range of each normalized byte, as `tokenizers` 0.x's `NormalizedString` records
/// it: a character that replaces original ones aligns to the first of them (characters composed into
/// it align to nothing), an inserted character to the one before it.
pub(crate) struct Aligned {
    pub text: String,
    align: Vec<(usize, usize)>,
}

impl Aligned {
    /// Normalizes `text`, whose added tokens are `added` in order of appearance.
    pub fn of(text: &str, added: &[&str]) -> Aligned {
        let mut out = Aligned {
            text: String::with_capacity(text.len()),
            align: Vec::with_capacity(text.len()),
        };
        let mut pos = 0;
        for content in added {
            let Some(at) = text[pos..].find(content).map(|i| pos + i) else {
                break;
            };
            out.push_normalized(text, pos, at);
            out.push_verbatim(text, at, at + content.len());
            pos = at + content.len();
        }
        out.push_normalized(text, pos, text.len());
        out
    }

    /// `text[start..end]` as it is, each byte aligned to its character.
    fn push_verbatim(&mut self, text: &str, start: usize, end: usize) {
        self.align.extend(byte_chars(text, start, end));
        self.text.push_str(&text[start..end]);
    }

    /// `text[start..end]` normalized: each output character comes with how it changes the input
    /// (`unicode-normalization-alignments`: 0 replaces the next input character, -n also removes
    /// the n after it, 1 is inserted).
    fn push_normalized(&mut self, text: &str, start: usize, end: usize) {
        use unicode_normalization_alignments::UnicodeNormalization;
        let piece = &text[start..end];
        let char_of: Vec<(usize, usize)> = byte_chars(text, start, end).collect();
        let mut input = piece.chars();
        let mut offset: usize = 0;
        for (ch, change) in piece.nfc() {
            let align = if change > 0 {
                (offset.checked_sub(1).and_then(|i| char_of.get(i).copied())).unwrap_or((start, start))
            } else {
                char_of.get(offset).copied().unwrap_or((end, end))
            };
            if change <= 0 {
                for _ in 0..=change.unsigned_abs() {
                    offset += input.next().map_or(0, char::len_utf8);
                }
            }
            self.align.extend(std::iter::repeat_n(align, ch.len_utf8()));
            self.text.push(ch);
        }
    }

    /// The original byte range of the normalized bytes `b..e`: its first byte's start to its last
    /// byte's end (an empty range stays empty, at its byte's start).
    pub fn original(&self, (b, e): (usize, usize), original_len: usize) -> (usize, usize) {
        match (self.align.get(b), e.checked_sub(1).and_then(|l| self.align.get(l))) {
            (Some(&(s, _)), Some(&(_, end))) if e > b => (s, end),
            (Some(&(s, _)), _) => (s, s),
            _ => (original_len, original_len),
        }
    }
}

/// The byte range of the character each byte of `text[start..end]` belongs to.
fn byte_chars(text: &str, start: usize, end: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    text[start..end].char_indices().flat_map(move |(i, ch)| {
        let (b, e) = (start + i, start + i + ch.len_utf8());
        std::iter::repeat_n((b, e), e - b)
    })
}

/// The length of the ASCII prefix of `bytes`, eight bytes at a time.
fn ascii_len(bytes: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    let mut n = 0;
    for w in &mut words {
        let word = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        if word & HIGH != 0 {
            return n + (word & HIGH).trailing_zeros() as usize / 8;
        }
        n += 8;
    }
    n + words.remainder().iter().take_while(|b| b.is_ascii()).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    #[test]
    fn agrees_with_the_full_check() {
        let texts = [
            "",
            "plain ascii text, long enough to span words",
            "caf\u{e9} \u{6771}\u{4eac} \u{1f600} \u{fc}ber",
            "cafe\u{301}",                   // decomposed é
            "\u{e9}\u{301}",                 // a mark after a precomposed letter (no composition)
            "a\u{327}\u{301} and more text", // marks in canonical order after a base: composes
            "a\u{301}\u{327}",               // marks out of canonical order
            "\u{212b}",                      // ANGSTROM SIGN, a singleton decomposition
            "\u{1100}\u{1161}",              // Hangul L + V, composes
            "\u{ac00}\u{11a8}",              // Hangul LV + T, composes
            "x\u{300}",                      // quick check says Maybe
        ];
        for t in texts {
            for text in [
                t.to_string(),
                format!("{t} padding padding {t}"),
                format!("{}{t}", "a".repeat(13)),
            ] {
                assert_eq!(is_nfc(&text), unicode_normalization::is_nfc(&text), "{text:?}");
            }
        }
    }

    #[test]
    fn ascii_prefix() {
        assert_eq!(ascii_len(b"abcdefghij\xc3\xa9"), 10);
        assert_eq!(ascii_len(b"abcdefgh"), 8);
        assert_eq!(ascii_len(b"\xc3\xa9"), 0);
        assert_eq!(ascii_len(b"abc"), 3);
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_the_full_check_on_random_text(
            parts in proptest::collection::vec(proptest::prop_oneof![
                proptest::sample::select(vec!['a', 'e', ' ', '>', '\u{e9}', '\u{c5}', '\u{212b}', '\u{6771}', '\u{1f600}']),
                (0x300u32..0x370).prop_map(|c| char::from_u32(c).unwrap_or('x')),
                (0x1100u32..0x11c3).prop_map(|c| char::from_u32(c).unwrap_or('x')),
                (0xac00u32..0xac20).prop_map(|c| char::from_u32(c).unwrap_or('x')),
                proptest::char::any(),
            ], 0..40),
        ) {
            let text: String = parts.into_iter().collect();
            proptest::prop_assert_eq!(is_nfc(&text), unicode_normalization::is_nfc(&text), "{:?}", text);
        }
    }
}
