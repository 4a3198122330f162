#!/usr/bin/env python3
"""Tokenizers of the shapes the `tokenizers` 1.0 release candidate refuses, with what transformers gives.

Writes crates/chatfmt-tokenize/tests/fixtures/reference_tokenizers.json, which
crates/chatfmt-tokenize/tests/reference_encoder.rs replays. Each tokenizer is trained here with Python
`tokenizers` on a small fixed corpus (training is deterministic) and saved as a model folder by
transformers; chatfmt encodes these shapes with the `tokenizers` 0.23 release (see
crates/chatfmt-tokenize/src/encoder.rs). Shapes: Falcon's pre-tokenizer (a `Sequence` with `ByteLevel`
before `Digits` and a three-digit `Split`), a ByteLevel pre-tokenizer with `add_prefix_space: true`
(RoBERTa's), a BERT WordPiece tokenizer and a WordLevel one.

Record per tokenizer: {"name", "files": {file name: text}, "texts": [{"text", "ids", "ids_special",
"offsets", "decoded"}], "chats": [{"messages", "input_ids", "assistant_masks"}]} where `ids` is
`tokenizer(text, add_special_tokens=False)`, `ids_special` the same with special tokens, `offsets` its
`return_offsets_mapping`, `decoded` is `tokenizer.decode(ids)`, and chats are
`apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)`.

Pinned: transformers 5.23.0, tokenizers 0.23.3. Run: python scripts/gen_reference_tokenizers.py
"""
import json
import logging
import os
import tempfile
import warnings

import tokenizers
import transformers
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
assert transformers.__version__ == "5.23.0", transformers.__version__
assert tokenizers.__version__ == "0.23.3", tokenizers.__version__

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "chatfmt-tokenize", "tests", "fixtures", "reference_tokenizers.json")

CORPUS = [
    "Hello world, this is a small corpus for a tokenizer.",
    "Numbers: 12345 and 2024 and 3.14159, phone 555-0199.",
    "The quick brown fox jumps over the lazy dog!",
    "Ünïcödé tëxt: café, naïve, résumé; Привет мир; 日本語のテキスト.",
    "Code: def f(x): return x ** 2  # squares",
    "   spaces   and\ttabs\nand newlines\n\n",
] * 20

TEXTS = [
    "Hello world",
    " Hello  world ",
    "12345 2024 7",
    "3.14159 and 1000000",
    "café naïve ½ ² в 日本",
    "emoji 🙂👍🏽 family",
    "def f(x): return x ** 2",
    "line one\nline two\n\n  indented",
    "<|im_start|>user\nhi<|im_end|>",
    "",
]

TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['role'] == 'assistant' %}{% generation %}{{ m['content'] }}<|im_end|>{% endgeneration %}"
    "{% else %}{{ m['content'] }}<|im_end|>{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

CHATS = [
    [{"role": "user", "content": "What is 12345 + 2024?"}, {"role": "assistant", "content": "It is 14369."}],
    [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "café naïve?"},
        {"role": "assistant", "content": " Yes,  naïve café. "},
        {"role": "user", "content": "日本"},
        {"role": "assistant", "content": "日本語 🙂"},
    ],
]

SPECIALS = ["<unk>", "<|im_start|>", "<|im_end|>", "<pad>"]


def byte_level(pre):
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=420, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def falcon():
    return byte_level(pre_tokenizers.Sequence([
        pre_tokenizers.Punctuation(),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), "isolated"),
    ]))


def roberta():
    tok = byte_level(pre_tokenizers.ByteLevel(add_prefix_space=True))
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    return tok


def wordpiece():
    tok = Tokenizer(models.WordPiece(unk_token="<unk>"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=400, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    start, end = tok.token_to_id("<|im_start|>"), tok.token_to_id("<|im_end|>")
    tok.post_processor = processors.TemplateProcessing(
        single="<|im_start|> $A <|im_end|>", special_tokens=[("<|im_start|>", start), ("<|im_end|>", end)])
    return tok


def wordlevel():
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(vocab_size=300, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def record(name, tok):
    with tempfile.TemporaryDirectory() as d:
        PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<|im_end|>",
                                chat_template=TEMPLATE).save_pretrained(d)
        files = {f: open(os.path.join(d, f), encoding="utf-8").read()
                 for f in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")}
        t = AutoTokenizer.from_pretrained(d)
        texts = []
        for text in TEXTS:
            enc = t(text, add_special_tokens=False, return_offsets_mapping=True)
            texts.append({"text": text, "ids": enc["input_ids"],
                          "ids_special": t(text, add_special_tokens=True)["input_ids"],
                          "offsets": [list(o) for o in enc["offset_mapping"]], "decoded": t.decode(enc["input_ids"])})
        chats = []
        for messages in CHATS:
            out = t.apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
            chats.append({"messages": messages, "input_ids": out["input_ids"],
                          "assistant_masks": out["assistant_masks"]})
    return {"name": name, "files": files, "texts": texts, "chats": chats}


def main():
    records = [record(n, f()) for n, f in
               [("falcon", falcon), ("roberta", roberta), ("wordpiece", wordpiece), ("wordlevel", wordlevel)]]
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"tokenizers": records}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(OUT, sum(len(r["texts"]) + len(r["chats"]) for r in records), "cases")


if __name__ == "__main__":
    main()
