#!/usr/bin/env python3
"""Writes crates/chatfmt-tokenize/tests/fixtures/token_offsets.json: reference token ids and character -> token
maps from transformers, for the offsets behind assistant masks: text in and out of Unicode NFC (normalization
alignments), ByteLevel and RoBERTa post-processors that trim offsets, and SentencePiece-style text holding the space marker
`▁` itself.

    target/bench/venv/bin/python scripts/gen_token_offsets.py   # the venv of scripts/bench_dataset.py

`tokenizers` lists the tokenizers: the tokens kit's three, and variants of them whose tokenizer.json
`post_processor` is replaced, whose tokenizer_config.json takes the settings of `config`, or (`drop_marker_piece`)
whose vocabulary has no `▁` piece, so that byte fallback spells it `<0xE2><0x96><0x81>` (the test builds the
same variants from the kit's files). Each record: tokenizer, text, whether the text is NFC,
`tokenizer(text, add_special_tokens=False)["input_ids"]`, and `char_to_token`: for every character of the text,
`BatchEncoding.char_to_token(i)` (None when no token holds it), which is all that transformers' assistant masks
read from a tokenization; the records of texts holding `▁` also have the `offset_mapping` of each token.
`chats`: `apply_chat_template(messages, chat_template=template, tokenize=True, return_dict=True,
return_assistant_tokens_mask=True)` of conversations holding `▁`, with the SentencePiece tokenizers.
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
ROBERTA = {"type": "RobertaProcessing", "sep": ["<|endoftext|>", 151643], "cls": ["<|im_start|>", 151644],
           "trim_offsets": True, "add_prefix_space": True}
TOKENIZERS = [
    {"name": "qwen3", "base": "qwen3"},
    {"name": "llama3", "base": "llama3"},
    {"name": "mistral-7b-v0.1", "base": "mistral-7b-v0.1"},
    {"name": "qwen3+trim", "base": "qwen3", "post_processor": TRIM},
    {"name": "qwen3+trim-no-prefix", "base": "qwen3", "post_processor": dict(TRIM, add_prefix_space=False)},
    # RoBERTa's post-processor trims offsets as the ByteLevel one does (no cls/sep without special tokens).
    {"name": "qwen3+roberta-trim", "base": "qwen3", "post_processor": ROBERTA},
    {"name": "qwen3+roberta-trim-no-prefix", "base": "qwen3", "post_processor": dict(ROBERTA, add_prefix_space=False)},
    {"name": "qwen3+roberta-no-trim", "base": "qwen3", "post_processor": dict(ROBERTA, trim_offsets=False)},
    # Llama 3's own Sequence, its ByteLevel member trimming.
    {"name": "llama3+trim", "base": "llama3", "post_processor_member_trim": True},
    # Metaspace with prepend_scheme "first" (LlamaTokenizer, legacy=False).
    {"name": "mistral-7b-v0.1+first", "base": "mistral-7b-v0.1", "config": {"legacy": False}},
    # tokenizer.json's own Prepend + Replace normalizers (not LlamaTokenizer's Metaspace).
    {"name": "mistral-7b-v0.1+prepend", "base": "mistral-7b-v0.1",
     "config": {"tokenizer_class": "PreTrainedTokenizerFast"}},
    {"name": "mistral-7b-v0.1+byte-marker", "base": "mistral-7b-v0.1", "drop_marker_piece": True},
]
SENTENCEPIECE = [t["name"] for t in TOKENIZERS if t["base"] == "mistral-7b-v0.1"]

MARKER = "\u2581"
# The marker character in the text: alone, doubled, at either end, beside spaces (where it is ambiguous with
# a space or the prefix marker) and beside added tokens (where segments start).
MARKER_TEXTS = [
    "\u2581", "\u2581\u2581", "\u2581x", "x\u2581", "a\u2581b", "\u2581 ", " \u2581", "\u2581 \u2581", " \u2581 ",
    "  \u2581\u2581  ", "\u2581\u2581\u2581\u2581hello world", "\u2581\u2581 a \u2581 b\u2581 \u2581c",
    "</s>\u2581<s>\u2581x", "<s>\u2581", "\u2581</s>", "<s> \u2581", "<s>\u2581 x", "x </s> \u2581\u2581</s>",
    "[INST] \u2581start mid\u2581dle end\u2581 [/INST]\u2581\u2581 a \u2581 b\u2581 \u2581c</s>\u2581<s>\u2581x",
    "\u2581\U0001f600\u2581\u00e9\u2581\u6771", "\n\u2581\n \u2581\t\u2581", "\u2581the \u2581\u2581the the\u2581",
]
MARKER_POOL = [MARKER, MARKER * 2, MARKER * 4, " ", "  ", "a", "the", "x", "\n", "</s>", "<s>", "\u00e9", "\U0001f600"]

# A simple template with {% generation %} around assistant content, and conversations holding the marker.
CHAT_TEMPLATE = ("{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}"
                 "{% endgeneration %}{% else %}[INST] {{ m.content }} [/INST]{% endif %}{% endfor %}")
CHATS = [
    [{"role": "user", "content": "\u2581start mid\u2581dle end\u2581"},
     {"role": "assistant", "content": "\u2581\u2581 a \u2581 b\u2581 \u2581c</s>\u2581<s>\u2581x"}],
    [{"role": "user", "content": "\u2581"}, {"role": "assistant", "content": "\u2581"},
     {"role": "user", "content": " \u2581 "}, {"role": "assistant", "content": "\u2581 \u2581"}],
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "</s>\u2581\u2581x"},
     {"role": "user", "content": "<s>\u2581"}, {"role": "assistant", "content": "\u2581</s> \u2581"}],
    [{"role": "assistant", "content": "\u2581 starts"}, {"role": "user", "content": "x\u2581"},
     {"role": "assistant", "content": " \u2581\u2581\u2581 \u00e9\u2581"}],
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
    """The tokenizer folder of `spec`: the kit's, or a copy with its post-processor replaced, its config
    changed or its `▁` piece dropped."""
    src = os.path.join(KITS, "tokens", "tokenizers", spec["base"])
    if spec.keys() <= {"name", "base"}:
        return src
    dst = os.path.join(workdir, spec["name"])
    os.makedirs(dst)
    with open(os.path.join(src, "tokenizer_config.json")) as f:
        config = json.load(f)
    config.update(spec.get("config", {}))
    with open(os.path.join(dst, "tokenizer_config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(src, "tokenizer.json")) as f:
        tj = json.load(f)
    if "post_processor" in spec:
        tj["post_processor"] = spec["post_processor"]
    if spec.get("post_processor_member_trim"):
        for member in tj["post_processor"]["processors"]:
            if member["type"] == "ByteLevel":
                member["trim_offsets"] = True
    if spec.get("drop_marker_piece"):
        # The piece keeps its id under a name no text spells; merges of it go.
        model = tj["model"]
        model["vocab"] = {("<dropped-marker>" if k == MARKER else k): v for k, v in model["vocab"].items()}
        model["merges"] = [m for m in model["merges"] if MARKER not in m.split(" ")]
    with open(os.path.join(dst, "tokenizer.json"), "w") as f:
        json.dump(tj, f)
    return dst


def record(tok, name, text):
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=MARKER in text)
    r = {
        "tokenizer": name,
        "text": text,
        "nfc": unicodedata.is_normalized("NFC", text),
        "input_ids": enc["input_ids"],
        "char_to_token": [enc.char_to_token(i) for i in range(len(text))],
    }
    if MARKER in text:
        r["offsets"] = [list(o) for o in enc["offset_mapping"]]
    return r


def chat(tok, name, messages):
    out = tok.apply_chat_template(messages, chat_template=CHAT_TEMPLATE, tokenize=True, return_dict=True,
                                  return_assistant_tokens_mask=True)
    return {"tokenizer": name, "messages": messages, "input_ids": out["input_ids"],
            "assistant_masks": out["assistant_masks"]}


def main():
    not_nfc = random_texts(NORMALIZATION_POOL, 300, 7, lambda t: not unicodedata.is_normalized("NFC", t))
    spaces = SPACE_TEXTS + random_texts(SPACE_POOL, 100, 11)
    markers = MARKER_TEXTS + random_texts(MARKER_POOL, 60, 13, lambda t: MARKER in t)
    records, chats = [], []
    with tempfile.TemporaryDirectory() as workdir:
        for spec in TOKENIZERS:
            tok = AutoTokenizer.from_pretrained(build(spec, workdir))
            if "+trim" in spec["name"] or "+roberta" in spec["name"]:
                texts = spaces
            elif spec["name"] != spec["base"]:
                texts = markers + spaces[:len(SPACE_TEXTS)]
            else:
                texts = NORMALIZATION_TEXTS + spaces[:len(SPACE_TEXTS)] + (not_nfc if spec["name"] == "qwen3" else [])
                texts += markers if spec["name"] in SENTENCEPIECE else []
            records.extend(record(tok, spec["name"], t) for t in texts)
            if spec["name"] in SENTENCEPIECE:
                chats.extend(chat(tok, spec["name"], m) for m in CHATS)
    with open(OUT, "w") as f:
        f.write('{"tokenizers": ' + json.dumps(TOKENIZERS) + ',\n"records": [\n'
                + ",\n".join(json.dumps(r, ensure_ascii=True) for r in records)
                + '\n],\n"chat_template": ' + json.dumps(CHAT_TEMPLATE) + ',\n"chats": [\n'
                + ",\n".join(json.dumps(c, ensure_ascii=True) for c in chats) + "\n]}\n")
    print(f"{len(records)} records, {len(chats)} chats -> {OUT}")


if __name__ == "__main__":
    main()
