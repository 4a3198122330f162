#!/usr/bin/env python3
"""Tokenizers of the shapes the `tokenizers` 1.0 release candidate refuses, with what transformers gives.

Writes crates/chatfmt-tokenize/tests/fixtures/reference_tokenizers.json, which
crates/chatfmt-tokenize/tests/reference_encoder.rs replays. Each tokenizer is trained here with Python
`tokenizers` on a small fixed corpus and saved as a model folder by transformers (the WordPiece trainer may
number pieces of equal count differently from one run to the next: the fixture's ids change, never whether
they agree); chatfmt encodes these shapes with the `tokenizers` 0.23 release (see
crates/chatfmt-tokenize/src/encoder.rs). Shapes: Falcon's pre-tokenizer (a `Sequence` with `ByteLevel`
before `Digits` and a three-digit `Split`), a ByteLevel pre-tokenizer with `add_prefix_space: true`
(RoBERTa's), a BERT WordPiece tokenizer and a WordLevel one; then added tokens that only
tokenizer_config.json or special_tokens_map.json names, which transformers adds at load; and quirks of real
files: a class named LlamaTokenizer that transformers does or does not load as such (by config.json's model type,
or a byte-level tokenizer.json), a normalizer whose changes can cancel out in length, padding and truncation
stored in tokenizer.json, a ByteLevel decoder followed by a Strip, one id shared by two tokens; and `Split`
patterns that Oniguruma (Python's engine) reads otherwise than the release candidate, or alone.

Record per tokenizer: {"name", "files": {file name: text}, "texts": [{"text", "ids", "ids_special",
"offsets", "decoded", "decoded_skip"?}], "chats": [{"messages", "input_ids", "assistant_masks"}]} where `ids` is
`tokenizer(text, add_special_tokens=False)`, `ids_special` the same with special tokens, `offsets` its
`return_offsets_mapping`, `decoded` is `tokenizer.decode(ids)` (`decoded_skip` with `skip_special_tokens=True`,
for the config variants), and chats are
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
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
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


def byte_level(pre, corpus=CORPUS):
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=420, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    return tok


def falcon():
    return byte_level(pre_tokenizers.Sequence([
        pre_tokenizers.Punctuation(),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), "isolated"),
    ]))


def gpt2():
    return byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False))


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


def text_case(t, text, skip=False):
    """What transformers' tokenizer `t` gives for `text` (and, with `skip`, its decoding without special tokens)."""
    enc = t(text, add_special_tokens=False, return_offsets_mapping=True)
    case = {"text": text, "ids": enc["input_ids"], "ids_special": t(text, add_special_tokens=True)["input_ids"],
            "offsets": [list(o) for o in enc["offset_mapping"]], "decoded": t.decode(enc["input_ids"])}
    if skip:
        case["decoded_skip"] = t.decode(enc["input_ids"], skip_special_tokens=True)
    return case


def record(name, tok):
    with tempfile.TemporaryDirectory() as d:
        PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<|im_end|>",
                                chat_template=TEMPLATE).save_pretrained(d)
        files = {f: open(os.path.join(d, f), encoding="utf-8").read()
                 for f in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")}
        t = AutoTokenizer.from_pretrained(d)
        texts = [text_case(t, text) for text in TEXTS]
        chats = []
        for messages in CHATS:
            out = t.apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
            chats.append({"messages": messages, "input_ids": out["input_ids"],
                          "assistant_masks": out["assistant_masks"]})
    return {"name": name, "files": files, "texts": texts, "chats": chats}


# Added tokens that only tokenizer_config.json (or special_tokens_map.json) names, on a GPT-2-shaped
# tokenizer (which chatfmt runs on the 1.0 pipeline): transformers 5 adds them at load. `wor` is in the model's vocabulary; the others are not.
CONFIG_TOKENS = {
    "added_tokens_decoder": {
        "2": {"content": "xy", "lstrip": False, "normalized": False, "rstrip": False, "single_word": False,
              "special": False},
        "900": {"content": "wor", "lstrip": False, "normalized": True, "rstrip": False, "single_word": False,
                "special": False},
    },
    "bos_token": "<bos>",
    "extra_special_tokens": ["<extra>", "<x2>"],
}
SPECIAL_TOKENS_MAP = {"eos_token": "<eos2>", "additional_special_tokens": ["<more>"]}
CONFIG_TEXTS = ["axyb<bos>c", "Hello world xy<extra><x2>", "<eos2> and <more> here", "wor world <|im_end|>",
                "<|im_end|>  x <|im_start|>  y", " <pad> z<unk>", "a<image>b<vid>c"]
IM_END = {"content": "<|im_end|>", "lstrip": False, "normalized": False, "rstrip": True, "single_word": False,
          "special": True}


def set_added(tok_json, content, **flags):
    """Changes the flags of the added token `content` of a tokenizer.json tree."""
    for t in tok_json["added_tokens"]:
        if t["content"] == content:
            t.update(flags)


# Variants: (name, change to tokenizer.json, change to tokenizer_config.json, special_tokens_map.json).
VARIANTS = [
    ("config-tokens", None, CONFIG_TOKENS, None),
    ("special-tokens-map", None, {}, SPECIAL_TOKENS_MAP),
    # a named special token that tokenizer.json holds as a plain added token becomes special
    ("pad-not-special", lambda j: set_added(j, "<pad>", special=False), {"pad_token": "<pad>"}, None),
    # the config's flags replace tokenizer.json's
    ("config-flags", None, {"added_tokens_decoder": {"2": IM_END}}, None),
    # model-specific special tokens (`image_token`, an `extra_special_tokens` object) are added, in order
    ("model-specific", None, {"image_token": "<image>", "extra_special_tokens": {"video_token": "<vid>"}}, None),
    # a named special token given as text, which the config's map lacks, loses tokenizer.json's flags
    ("text-special", lambda j: set_added(j, "<|im_end|>", rstrip=True),
     {"added_tokens_decoder": {}, "eos_token": "<|im_end|>"}, None),
]


def with_config_tokens(rec, tok, variant):
    """`rec` with its files changed as `variant` says, and the texts encoded again."""
    suffix, change_json, change_config, special_map = variant
    with tempfile.TemporaryDirectory() as d:
        tok_json = json.loads(tok.to_str())
        if change_json:
            change_json(tok_json)
        with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tok_json, f, ensure_ascii=False)
        config = json.loads(rec["files"]["tokenizer_config.json"])
        config.update(change_config)
        if special_map:
            with open(os.path.join(d, "special_tokens_map.json"), "w", encoding="utf-8") as f:
                json.dump(special_map, f)
        with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f)
        files = {f: open(os.path.join(d, f), encoding="utf-8").read() for f in os.listdir(d)}
        t = AutoTokenizer.from_pretrained(d)
        texts = [text_case(t, text, skip=True) for text in CONFIG_TEXTS]
    return {"name": rec["name"] + "-" + suffix, "files": files, "texts": texts, "chats": []}


# Quirks of real tokenizer.json files: (name, tokenizer, texts, whether decoding is deterministic).
def stored_padding():
    """Padding and truncation saved in the file, which transformers turns off unless asked for."""
    tok = wordlevel()
    tok.enable_padding(pad_id=tok.token_to_id("<pad>"), pad_token="<pad>", pad_to_multiple_of=8)
    tok.enable_truncation(max_length=4)
    return tok


def bytelevel_strip_decoder():
    """A ByteLevel decoder followed by a Strip, over a vocabulary that spells every byte."""
    tok = gpt2()
    tok.decoder = decoders.Sequence([decoders.ByteLevel(), decoders.Strip(content=" ", left=1, right=0)])
    return tok


def shared_ids():
    """A vocabulary that gives one id to two tokens (both encode to it; which one decodes is random). Saving
    keeps one of them, so the file is written as such files are found."""
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False,
                      "vocab": {"<unk>": 0, "a": 1, "b": 2, "x": 2, "c": 3}, "merges": []}}


def nfkc_metaspace():
    """A normalizer whose changes can cancel out: NFKC writes `½` longer and each `ﬁ` shorter."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(CORPUS + ["1⁄2 fi fifi ²"], trainer)
    return tok


def bpe_end_of_word_suffix():
    """A BPE model that writes `</w>` on each word's last character, with BERT's pre-tokenizer (openai-gpt's
    shape): a one-character word (`a`, `.`) is looked up with the suffix."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    trainer = trainers.BpeTrainer(vocab_size=400, end_of_word_suffix="</w>", special_tokens=SPECIALS,
                                  show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def trimmed_stripping_token():
    """A post-processor that trims offsets, and an added token that takes in the whitespace around it (`lstrip`,
    `rstrip`): trimming reads the text the token matched, so its offsets lose that whitespace."""
    tok = roberta()
    tok.add_tokens([AddedToken("<br>", lstrip=True, rstrip=True, normalized=False)])
    return tok


def prefixed_bpe():
    """A BPE model that writes `##` on every character but a word's first and fuses unknown characters: the
    unknown `##` symbols of a word are fused into one `<unk>` too."""
    vocab = {"<unk>": 0, "a": 1, "##a": 2, "h": 3}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "WhitespaceSplit"}, "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": "##",
                      "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": False,
                      "ignore_merges": False, "vocab": vocab, "merges": []}}


def llama2_like():
    """A Llama 2 shaped SentencePiece BPE: the marker prepended and written for spaces, byte fallback."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(content=" ", left=1, right=0)])
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    # Every byte has its token, as in Llama 2's vocabulary.
    tree = json.loads(tok.to_str())
    vocab = tree["model"]["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    return Tokenizer.from_str(json.dumps(tree))


def llama2_metaspace_decoder():
    """Llama 2 shaped, but tokenizer.json decodes with a Metaspace decoder: LlamaTokenizer decodes with its own."""
    tok = llama2_like()
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=False)
    return tok


def llama2_without_byte_tokens():
    """Llama 2 shaped, without byte tokens or byte fallback: LlamaTokenizer's rebuilt model falls back to
    bytes it does not have, so it drops what it has no piece for (no unknown token)."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(content=" ", left=1, right=0)])
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def unigram_unknown_spaces():
    """A Unigram model whose unknown token covers spaces, under a post-processor that trims offsets."""
    tok = Tokenizer(models.Unigram())
    trainer = trainers.UnigramTrainer(vocab_size=200, special_tokens=["<unk>"], unk_token="<unk>",
                                      show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    tok.post_processor = processors.ByteLevel(trim_offsets=True, add_prefix_space=False)
    return tok


def smollm_like():
    """SmolLM2's pre-tokenizer: single digits, then ByteLevel with its regex (merges learned without the digit
    split, so that dropping it changes the ids)."""
    tok = gpt2()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    return tok


def nfkc_byte_level():
    """GPT-2's shape under an NFKC normalizer, which GPT2Tokenizer's rebuild leaves out."""
    tok = gpt2()
    tok.normalizer = normalizers.NFKC()
    return tok


def bytelevel_added_tokens():
    """GPT-2's shape with added tokens the ByteLevel decoder rewrites when decoding, as it rewrites every token:
    characters of its byte alphabet (`ñé`, `Ġx`) and ones outside it (spaces)."""
    tok = gpt2()
    tok.add_tokens([AddedToken("ñé", normalized=True), AddedToken(" two  spaces", normalized=False)])
    tok.add_special_tokens([AddedToken("Ġx", normalized=False)])
    return tok


def regex_split(pattern):
    """Qwen's pre-tokenizer shape (a `Split` isolating the matches of `pattern`, then `ByteLevel` without its own
    regex) with another pattern: one whose syntax Oniguruma, which Python's tokenizers matches with, reads
    otherwise than the release candidate's engine, or that engine cannot read at all. The merges are learned on
    whole lines, so they cross wherever the two engines could split, and a split in another place changes the ids."""
    def build():
        tok = byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False), CORPUS + REGEX_TEXTS * 20)
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(pattern), "isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        return tok
    return build


REGEX_TEXTS = TEXTS + ["a\u200db c\u200cd", "x² y³ ½z", "ab\ncd\n ef\n", "a«b» c¿d", "1é2 3ß4", "e\u0301 🏳️‍🌈 ok"]

QWEN2_TEXTS = TEXTS + ["12345 678", "e\u0301 cafe\u0301", "Hello   world\n\n  x", "I'M here, we'LL see"]

# Patterns whose syntax the two regex engines read differently (word characters, line anchors, POSIX
# classes), or that only Oniguruma reads (grapheme clusters, Unicode blocks, word boundaries of clusters, an
# ASCII-only option).
REGEX_PATTERNS = [
    ("word", r"\w+"),
    ("not-word", r"\w+|[^\w\s]+"),
    ("word-boundary", r"\b\S"),
    ("line-end", r"$"),
    ("line-start", r"^ ?[a-z]+"),
    ("posix-punct", r"[[:punct:]]"),
    ("posix-alpha", r"[[:alpha:]]+"),
    ("grapheme", r"\X"),
    ("block", r"\p{InBasicLatin}+"),
    ("cluster-boundary", r"\y"),
    ("ascii-option", r"(?W)\w+"),
]


# An added token matched on normalized text (the config's flag replaces the file's) in a Metaspace model.
NORMALIZED_UNK = {"tokenizer_class": "LlamaTokenizerFast", "legacy": True, "added_tokens_decoder": {
    "0": {"content": "<unk>", "lstrip": False, "normalized": True, "rstrip": False, "single_word": False,
          "special": True}}}


# A folder that names LlamaTokenizer is loaded as that class, which rebuilds the pipeline, unless its
# tokenizer.json is byte-level or config.json's model type has a class of its own (Mistral's: the file as
# written): (config.json, or None).
LLAMA_CLASS = {"tokenizer_class": "LlamaTokenizerFast", "legacy": False, "add_bos_token": True}


QUIRKS = [
    ("llama-class-mistral-config", llama2_like, TEXTS, True, LLAMA_CLASS, {"model_type": "mistral"}),
    ("llama-class-llama-config", llama2_like, TEXTS, True, LLAMA_CLASS, {"model_type": "llama"}),
    ("llama-class-byte-level", gpt2, TEXTS, True, LLAMA_CLASS, None),
    ("llama-class-no-prefix-space", llama2_like, TEXTS + [" x", "  two"], True,
     {**LLAMA_CLASS, "add_prefix_space": False}, None),
    ("llama-class-other-decoder", llama2_metaspace_decoder, TEXTS + [" x", "a\u00e9\u00ff"], True, LLAMA_CLASS, None),
    ("llama-class-normalized-unk", llama2_without_byte_tokens,
     TEXTS + ["<unk>x", "x<unk>x", " <unk> a<unk>", "Hello 🙂 wörld"], True, NORMALIZED_UNK, None),
    ("unigram-unknown-spaces", unigram_unknown_spaces, TEXTS + ["\u3000\u3000Hi", "a \u2003\u2003 b", "ξ Hi"], True),
    ("bpe-nfkc", nfkc_metaspace, TEXTS + ["½ﬁﬁﬁ a", "½ﬁﬁ a", "x ﬁ½ﬁﬁ"], True),
    ("wordlevel-stored-padding", stored_padding, TEXTS, True),
    ("gpt2-bytelevel-strip-decoder", bytelevel_strip_decoder, TEXTS, True),
    ("shared-ids", shared_ids, ["abxc", "xbab c", "cc"], False),
    ("bpe-end-of-word-suffix", bpe_end_of_word_suffix, TEXTS + ["a b c", "I am .", "x , y !?"], True),
    ("bpe-prefix-fuse-unk", prefixed_bpe, ["axy", "hh a", "xy aa", "a"], False),
    ("trimmed-stripping-token", trimmed_stripping_token,
     TEXTS + ["a  <br>  b", "<br>", " <br>\n", "x<br>y", "  <br>"], True),
    ("gpt2-added-tokens-decoded", bytelevel_added_tokens, TEXTS + ["añéb", "Ġx y", "ñé Ġx", "a two  spaces b"], True),
    # GPT2Tokenizer too: SmolLM2's folder (GPT2Tokenizer, model type llama) splits digits in its file, not there.
    ("gpt2-class-digits", smollm_like, QWEN2_TEXTS, True, {"tokenizer_class": "GPT2Tokenizer"}, {"model_type": "llama"}),
    ("gpt2-class-normalized", nfkc_byte_level, QWEN2_TEXTS + ["ﬁ½"], True, {"tokenizer_class": "GPT2TokenizerFast"}, None),
    # Qwen2Tokenizer builds its own pipeline from the vocabulary and merges, and model type qwen2 loads as it
    # whatever the folder declares (DeepSeek-R1-Distill-Qwen declares LlamaTokenizerFast).
    ("qwen2-class-llama-declared", gpt2, QWEN2_TEXTS, True, {"tokenizer_class": "LlamaTokenizerFast"},
     {"model_type": "qwen2"}),
    ("qwen2-class-declared", regex_split(r"\p{N}{1,3}| ?\p{L}+| ?[^\s\p{L}\p{N}]+|\s+"), QWEN2_TEXTS, True,
     {"tokenizer_class": "Qwen2Tokenizer"}, None),
] + [(f"regex-{name}", regex_split(pattern), REGEX_TEXTS, True) for name, pattern in REGEX_PATTERNS]


def quirk(name, tok, texts, decodes, config=None, model_config=None):
    with tempfile.TemporaryDirectory() as d:
        if isinstance(tok, dict):
            with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
                json.dump(tok, f)
            with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
                json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "<unk>"}, f)
        else:
            PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>").save_pretrained(d)
        if config:
            path = os.path.join(d, "tokenizer_config.json")
            with open(path, encoding="utf-8") as f:
                merged = {**json.load(f), **config}
            with open(path, "w", encoding="utf-8") as f:
                json.dump(merged, f)
        if model_config:
            with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
                json.dump(model_config, f)
        files = {f: open(os.path.join(d, f), encoding="utf-8").read() for f in os.listdir(d)}
        t = AutoTokenizer.from_pretrained(d)
        cases = [text_case(t, text, skip=decodes) for text in texts]
    if not decodes:
        for case in cases:
            del case["decoded"]
    return {"name": name, "files": files, "texts": cases, "chats": []}


def main():
    records = [record(n, f()) for n, f in
               [("falcon", falcon), ("roberta", roberta), ("wordpiece", wordpiece), ("wordlevel", wordlevel)]]
    base = record("gpt2", gpt2())
    for variant in VARIANTS:
        records.append(with_config_tokens(base, gpt2(), variant))
    records += [quirk(name, f(), *rest) for name, f, *rest in QUIRKS]
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"tokenizers": records}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(OUT, sum(len(r["texts"]) + len(r["chats"]) for r in records), "cases")


if __name__ == "__main__":
    main()
