#!/usr/bin/env python3
"""Writes crates/chatfmt/tests/data/special_token_folders.jsonl: model folders whose tokenizer_config.json (and
special_tokens_map.json) name special tokens in the ways real repositories do, each with the special tokens
transformers 5 passes to chat templates (`tokenizer.special_tokens_map`, which `apply_chat_template` spreads
into the template's variables), read with `AutoTokenizer.from_pretrained` of the folder.

    python3 -m venv /tmp/venv5 && /tmp/venv5/bin/pip install transformers==5.23.0 tokenizers
    /tmp/venv5/bin/python scripts/gen_special_token_folders.py

Each line is `{"name", "tokenizer_config", "special_tokens_map" (or null), "expected"}`; the tokenizer.json is a
tiny word-level one the test writes itself (its added tokens are the strings of the case).
"""
import json
import os
import tempfile

import transformers
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "chatfmt", "tests", "data", "special_token_folders.jsonl")


def added(content):
    return {"__type": "AddedToken", "content": content, "lstrip": False, "normalized": False, "rstrip": False,
            "single_word": False, "special": True}


DECODER = {"0": {"content": "<s>", "lstrip": False, "normalized": False, "rstrip": False, "single_word": False,
                 "special": True}}

CASES = [
    ("modern config: the map is not read", {"bos_token": "<s>", "eos_token": "</s>", "added_tokens_decoder": DECODER},
     {"bos_token": "<MAPBOS>", "unk_token": "<unk>"}),
    ("legacy config: the map fills and overrides named tokens", {"eos_token": "</s>", "bos_token": "<s>"},
     {"bos_token": {"content": "<MAPBOS>", "lstrip": False, "normalized": False, "rstrip": False,
                    "single_word": False}, "unk_token": "<unk>", "pad_token": "</s>"}),
    ("legacy config without named tokens", {"model_max_length": 2048},
     {"bos_token": "<s>", "eos_token": {"content": "</s>"}, "additional_special_tokens": ["<x>"]}),
    ("model-specific tokens as strings", {"bos_token": "<s>", "image_token": "<image>", "boi_token": "<start_of_image>",
                                         "add_bos_token": True, "padding_side": "left", "added_tokens_decoder": DECODER},
     None),
    ("model-specific token as an AddedToken", {"eos_token": added("</s>"), "audio_token": added("<audio>"),
                                               "video_token": {"content": "<video>"}, "added_tokens_decoder": DECODER},
     None),
    ("extra_special_tokens as an object", {"eos_token": "</s>", "extra_special_tokens": {"image_token": "<img>",
                                                                                      "eoi_token": added("</img>")},
                                          "added_tokens_decoder": DECODER}, None),
    ("extra_special_tokens as a list", {"eos_token": "</s>", "extra_special_tokens": ["<a>", "<b>"],
                                        "added_tokens_decoder": DECODER}, None),
    ("legacy map with model-specific tokens", {"eos_token": "</s>", "image_token": "<cfg-image>",
                                               "audio_token": added("<cfg-audio>")},
     {"image_token": "<map-image>", "audio_token": "<map-audio>", "video_token": {"content": "<map-video>"},
      "extra_special_tokens": {"box_token": "<box>"}}),
    ("null and non-string values", {"bos_token": None, "eos_token": "</s>", "sep_token": None, "mask_token": "<mask>",
                                    "weird_token": 5, "flag_token": False, "added_tokens_decoder": DECODER}, None),
]


def strings(value, out):
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, dict):
        if isinstance(value.get("content"), str):
            out.add(value["content"])
        for v in value.values():
            strings(v, out)
    elif isinstance(value, list):
        for v in value:
            strings(v, out)


def main():
    records = []
    for name, config, special_map in CASES:
        tokens = set()
        strings(config, tokens)
        strings(special_map, tokens)
        with tempfile.TemporaryDirectory() as d:
            vocab = {"[UNK]": 0, "hello": 1}
            tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
            tok.pre_tokenizer = pre_tokenizers.Whitespace()
            tok.save(os.path.join(d, "tokenizer.json"))
            with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
                json.dump(dict(config, tokenizer_class="PreTrainedTokenizerFast"), f)
            if special_map is not None:
                with open(os.path.join(d, "special_tokens_map.json"), "w") as f:
                    json.dump(special_map, f)
            expected = dict(AutoTokenizer.from_pretrained(d).special_tokens_map)
        records.append({"name": name, "tokenizer_config": config, "special_tokens_map": special_map,
                        "expected": expected})
    with open(OUT, "w") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(records)} folders, transformers {transformers.__version__}")


if __name__ == "__main__":
    main()
