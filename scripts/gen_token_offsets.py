#!/usr/bin/env python3
"""Writes crates/chatfmt-tokenize/tests/fixtures/token_offsets.json: reference token ids and character -> token
maps from transformers, for the offsets behind assistant masks: text in and out of Unicode NFC (normalization
alignments) and ByteLevel post-processors that trim offsets.

    target/bench/venv/bin/python scripts/gen_token_offsets.py   # the venv of scripts/bench_dataset.py

`tokenizers` lists the tokenizers: the tokens kit's three, and variants of them whose tokenizer.json
`post_processor` is replaced (the test builds the same variants from the kit's files). Each record: tokenizer,
text, whether the text is NFC, `tokenizer(text, add_special_tokens=False)["input_ids"]`, and `char_to_token`:
for every character of the text, `BatchEncoding.char_to_token(i)` (None when no token holds it), which is all
that transformers' assistant masks read from a tokenization.
"""
import json
import os
import random
import shutil
import tempfile
import unicodedata

from transformers import AutoTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KITS = os.environ.get("CHATFMT_KITS") or os.path.join(ROOT, "..", "shared", "conformance")
OUT = os.path.join(ROOT, "crates", "chatfmt-tokenize", "tests", "fixtures", "token_offsets.json")

TRIM = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": False}
TOKENIZERS = [
    {"name": "qwen3", "base": "qwen3"},
    {"name": "llama3", "base": "llama3"},
    {"name": "mistral-7b-v0.1", "base": "mistral-7b-v0.1"},
    {"name": "qwen3+trim", "base": "qwen3", "post_processor": TRIM},
    {"name": "qwen3+trim-no-prefix", "base": "qwen3", "post_processor": dict(TRIM, add_prefix_space=False)},
    # Llama 3's own Sequence, its ByteLevel member trimming.
    {"name": "llama3+trim", "base": "llama3", "post_processor_member_trim": True},
]

NORMALIZATION_TEXTS = [
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
NORMALIZATION_POOL = (
    list("abcdefg xyz") + [" ", "\n", "<|im_end|>", "<think>", "\u00e9", "\u00fc", "\u6771", "\U0001f600",
                           "\u212b", "\u0344", "\u1100", "\u1161", "\u11a8", "\uac00", "\u0915", "\u093c"]
    + [chr(c) for c in range(0x300, 0x316)] + ["\u0327", "\u0323", "\u0345"]
)

SPACE_TEXTS = [
    " hello  world \n x",
    "hello",
    "  two leading spaces",
    "trailing spaces   ",
    "<|im_start|>user\n  hi  <|im_end|>\n<|im_start|>assistant\n Sure! \n\n<|im_end|>",
    "tab\tand\u00a0nbsp and\u3000ideographic space",
    "a  b   c    d",
    " \n \n ",
    "<think> </think> x",
    # Rare four-byte characters after a space: byte-level tokens that end inside a character.
    " \U0001d4b3 math x, \U00020000 ext-B, x \U0001f9ff y \U00010348",
]
SPACE_POOL = list("abc xyz") + [" ", "  ", "\n", "\t", "\u00a0", "\u3000", "<|im_end|>", "<think>", "\u00e9",
                                "\U0001f600", ".", "\U0001d4b3", "\U00020000", "\U00010348"]


def random_texts(pool, n, seed, keep=lambda t: True):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 30)))
        if keep(text):
            out.append(text)
    return out


def build(spec, workdir):
    """The tokenizer folder of `spec`: the kit's, or a copy with its post-processor replaced."""
    src = os.path.join(KITS, "tokens", "tokenizers", spec["base"])
    if "post_processor" not in spec and "post_processor_member_trim" not in spec:
        return src
    dst = os.path.join(workdir, spec["name"])
    os.makedirs(dst)
    shutil.copy(os.path.join(src, "tokenizer_config.json"), dst)
    with open(os.path.join(src, "tokenizer.json")) as f:
        tj = json.load(f)
    if "post_processor" in spec:
        tj["post_processor"] = spec["post_processor"]
    else:
        for member in tj["post_processor"]["processors"]:
            if member["type"] == "ByteLevel":
                member["trim_offsets"] = True
    with open(os.path.join(dst, "tokenizer.json"), "w") as f:
        json.dump(tj, f)
    return dst


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
    not_nfc = random_texts(NORMALIZATION_POOL, 300, 7, lambda t: not unicodedata.is_normalized("NFC", t))
    spaces = SPACE_TEXTS + random_texts(SPACE_POOL, 100, 11)
    records = []
    with tempfile.TemporaryDirectory() as workdir:
        for spec in TOKENIZERS:
            tok = AutoTokenizer.from_pretrained(build(spec, workdir))
            if "+trim" in spec["name"]:
                texts = spaces
            else:
                texts = NORMALIZATION_TEXTS + spaces[:len(SPACE_TEXTS)] + (not_nfc if spec["name"] == "qwen3" else [])
            records.extend(record(tok, spec["name"], t) for t in texts)
    with open(OUT, "w") as f:
        f.write('{"tokenizers": ' + json.dumps(TOKENIZERS) + ',\n"records": [\n'
                + ",\n".join(json.dumps(r, ensure_ascii=True) for r in records) + "\n]}\n")
    print(f"{len(records)} records -> {OUT}")


if __name__ == "__main__":
    main()
