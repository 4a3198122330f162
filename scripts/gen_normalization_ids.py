#!/usr/bin/env python3
"""Writes crates/chatfmt-tokenize/tests/fixtures/normalization_ids.json: reference ids of texts that are and
are not in Unicode NFC, from transformers (the tokens kit's tokenizers), for chatfmt's NFC fast path.

    target/bench/venv/bin/python scripts/gen_normalization_ids.py   # venv of scripts/bench_dataset.py

Each record: tokenizer, text, and `tokenizer(text, add_special_tokens=False)["input_ids"]`.
"""
import json
import os
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
]


def main():
    records = []
    for name in ("qwen3", "llama3", "mistral-7b-v0.1"):
        tok = AutoTokenizer.from_pretrained(os.path.join(KITS, "tokens", "tokenizers", name))
        for text in TEXTS:
            records.append({
                "tokenizer": name,
                "text": text,
                "nfc": unicodedata.is_normalized("NFC", text),
                "input_ids": tok(text, add_special_tokens=False)["input_ids"],
            })
    with open(OUT, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(r, ensure_ascii=True) for r in records) + "\n]\n")
    print(f"{len(records)} records -> {OUT}")


if __name__ == "__main__":
    main()
