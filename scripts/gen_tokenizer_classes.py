#!/usr/bin/env python3
"""The tokenizer class transformers registers for each model type, and the model types whose declared
tokenizer class it distrusts, as AutoTokenizer reads them when it picks a class.

Writes crates/chatfmt-tokenize/src/tokenizer_classes.json, which `load.rs` reads to decide, as
transformers' `AutoTokenizer.from_pretrained` does, whether a folder that names `LlamaTokenizer` gets
`LlamaTokenizer`'s rebuilt pipeline or its `tokenizer.json` as written.

Pinned: transformers 5.23.0. Run: python scripts/gen_tokenizer_classes.py
"""
import json
import os

import transformers
from transformers.models.auto.tokenization_auto import MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS, TOKENIZER_MAPPING_NAMES

assert transformers.__version__ == "5.23.0", transformers.__version__

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "chatfmt-tokenize", "src", "tokenizer_classes.json")

table = {
    "registered": {k: v for k, v in sorted(TOKENIZER_MAPPING_NAMES.items()) if v is not None},
    "incorrect_hub_class": sorted(MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS),
}
with open(OUT, "w", encoding="utf-8") as f:
    json.dump(table, f, indent=1, sort_keys=True)
    f.write("\n")
print(OUT, len(table["registered"]), "model types,", len(table["incorrect_hub_class"]), "distrusted")
