#!/usr/bin/env python3
"""Writes crates/chatfmt-tokenize/tests/fixtures/normalization_ids.json: reference token ids and character ->
token maps of texts in and out of Unicode NFC, from transformers with the tokens kit's tokenizers, for chatfmt's
NFC fast path and for assistant masks of text that normalization changes.

    target/bench/venv/bin/python scripts/gen_normalization_ids.py   # the venv of scripts/bench_dataset.py

Each record: tokenizer, text, whether the text is NFC, `tokenizer(text, add_special_tokens=False)["input_ids"]`,
and `char_to_token`: for every character of the text, `BatchEncoding.char_to_token(i)` (None when no token
holds it), which is all that transformers' assistant masks read from a tokenization. The texts are a fixed list
plus seeded random strings of accents (precomposed, decomposed, out of canonical order), Hangul jamo and
syllables, singletons, CJK, emoji and added tokens.
"""
import json
import os
import random
import unicodedata

from transformers import AutoTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KITS = os.environ.get("CHATFMT_KITS") or os.path.join(ROOT, "..", "shared", "conformance")
OUT = os.path.join(ROOT, "crates", "chatfmt-tokenize", "tests", "fixtures", "normalization_ids.json")

TEXTS = [
    "plain ascii text",
    "caf\u00e9 na\u00efve \u6771\u4eac \U0001f600 \u00fcber",  # NFC
    "cafe\u0301 nai\u0308ve",  # decomposed accents
    "<|im_start|>user\ncafe\u0301<|im_end|>\n",  # decomposed inside a chat, between added tokens
    "<|im_end|>\u0301x and e\u0301",  # a combining mark right after an added token
    "a\u0301\u0327 marks out of canonical order",
    "\u212b angstrom sign, \u2126 ohm sign",  # singleton decompositions
    "\u1100\u1161\u11a8 hangul jamo, \uac00\u11a8 LV + T",
    "x\u0300 quick check maybe, \u00e0 precomposed",
    "\u0915\u093c devanagari nukta",  # composition excluded: stays decomposed under NFC
    "\u0344 dialytika tonos",  # decomposes into two marks that stay apart
    "Vie\u0302\u0323t Nam, ti\u00ea\u0301ng Vi\u1ec7t",  # Vietnamese, stacked marks
    "e\u0301\u0301\u0301 repeated marks",
]

POOL = (
    list("abcdefg xyz") + [" ", "\n", "<|im_end|>", "<think>", "\u00e9", "\u00fc", "\u6771", "\U0001f600",
                           "\u212b", "\u0344", "\u1100", "\u1161", "\u11a8", "\uac00", "\u0915", "\u093c"]
    + [chr(c) for c in range(0x300, 0x316)] + ["\u0327", "\u0323", "\u0345"]
)


def random_texts(n, seed=7):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        text = "".join(rng.choice(POOL) for _ in range(rng.randint(3, 30)))
        if unicodedata.is_normalized("NFC", text):
            continue
        out.append(text)
    return out


def record(tok, name, text):
    enc = tok(text, add_special_tokens=False)
    return {
        "tokenizer": name,
        "text": text,
        "nfc": unicodedata.is_normalized("NFC", text),
        "input_ids": enc["input_ids"],
        "char_to_token": [enc.char_to_token(i) for i in range(len(text))],
    }


def main():
    records = []
    for name in ("qwen3", "llama3", "mistral-7b-v0.1"):
        tok = AutoTokenizer.from_pretrained(os.path.join(KITS, "tokens", "tokenizers", name))
        texts = TEXTS + (random_texts(300) if name == "qwen3" else [])
        records.extend(record(tok, name, t) for t in texts)
    with open(OUT, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(r, ensure_ascii=True) for r in records) + "\n]\n")
    print(f"{len(records)} records -> {OUT}")


if __name__ == "__main__":
    main()
