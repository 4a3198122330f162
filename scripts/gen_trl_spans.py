#!/usr/bin/env python3
"""Generation spans of TRL's training chat templates, recorded from transformers itself.

TRL ships hand-patched "training" copies of model chat templates with `{% generation %}` blocks
(`trl/chat_templates/*_training.jinja`). This script renders each of them on six conversations through
transformers' own `render_jinja_template(..., return_assistant_tokens_mask=True)` and writes, per
template and conversation, the generation spans (half-open code-point offsets into the render) and the
render's length, or the error raised. No template text is written: the test that reads this file
(`crates/chatfmt-conformance/tests/trl_masks.rs`) renders the same templates from TRL's wheel, with their tags
removed, through chatfmt's provenance masks and compares.

Pinned versions: transformers 5.23.0, Jinja2 3.1.6, CPython 3.11, trl 1.16.0 (templates only).

Set-up: python3 -m venv /tmp/venv && /tmp/venv/bin/pip install transformers==5.23.0 jinja2==3.1.6
        pip download --no-deps trl==1.16.0 -d /tmp/trl && unzip -o /tmp/trl/trl-1.16.0-py3-none-any.whl \
            'trl/chat_templates/*' -d /tmp/trl
Run:    /tmp/venv/bin/python scripts/gen_trl_spans.py /tmp/trl/trl/chat_templates

Record: {"template": file name, "sha256": of the template file, "conversation": id, "messages": [...],
         "tools": [...] | null, "special_tokens": {...}, "status": "ok"|"raised", "length": int, "generation_spans": [[start, end], ...] |
         "error": {"name", "message"}}
"""
import hashlib
import json
import os
import sys
import warnings

import jinja2
from transformers.utils import chat_template_utils as ctu

warnings.simplefilter("ignore")
assert jinja2.__version__ == "3.1.6", jinja2.__version__
assert sys.version_info[:2] == (3, 11), sys.version

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "chatfmt-conformance", "tests", "data", "trl_generation_spans.jsonl")

# The special tokens of each model family (from the models' tokenizer configs), by file-name prefix.
SPECIAL_TOKENS = {
    "cohere": {"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>"},
    "deepseek": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "diffusion_gemma": {"bos_token": "<bos>", "eos_token": "<end_of_turn>"},
    "gemma": {"bos_token": "<bos>", "eos_token": "<end_of_turn>"},
    "glm4moe": {"eos_token": "<|endoftext|>"},
    "gptoss": {"eos_token": "<|return|>"},
    "idefics3": {"bos_token": "<|begin_of_text|>", "eos_token": "<end_of_utterance>"},
    "lfm2": {"bos_token": "<|startoftext|>", "eos_token": "<|im_end|>"},
    "llama3": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "llava_next": {"bos_token": "<s>", "eos_token": "</s>"},
    "muse": {"eos_token": "<|im_end|>"},
    "nemotron": {"bos_token": "<s>", "eos_token": "<|im_end|>"},
    "phi3": {"bos_token": "<s>", "eos_token": "<|end|>"},
    "qwen": {"eos_token": "<|im_end|>"},
    "smolvlm": {"bos_token": "<|im_start|>", "eos_token": "<end_of_utterance>"},
}

TOOLS = [{"type": "function", "function": {
    "name": "get_weather",
    "description": "Get the current weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city"}},
                   "required": ["city"]},
}}]

CALL = {"id": "call00001", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}

CONVERSATIONS = {
    "plain": ([
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "The capital of France is Paris."},
    ], None),
    "system": ([
        {"role": "system", "content": "You are a terse assistant."},
        {"role": "user", "content": "Name a prime number."},
        {"role": "assistant", "content": "Seven."},
    ], None),
    "multi_turn": ([
        {"role": "user", "content": "Hi!"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Tell me a joke."},
        {"role": "assistant", "content": "Why did the chicken cross the road? To get to the other side."},
    ], None),
    "tool_calls": ([
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": "{\"temp\": 22}"},
        {"role": "assistant", "content": "It is 22 degrees in Paris."},
    ], TOOLS),
    "reasoning": ([
        {"role": "user", "content": "What is 2 + 2?"},
        {"role": "assistant", "content": "4", "reasoning_content": "Two plus two makes four."},
    ], None),
    "empty_content": ([
        {"role": "user", "content": "Say nothing."},
        {"role": "assistant", "content": ""},
    ], None),
}


def special_tokens(name):
    for prefix in sorted(SPECIAL_TOKENS, key=len, reverse=True):
        if name.startswith(prefix):
            return SPECIAL_TOKENS[prefix]
    raise SystemExit(f"no special tokens known for {name}: add its family to SPECIAL_TOKENS")


def main():
    folder = sys.argv[1]
    lines = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith("_training.jinja"):
            continue
        data = open(os.path.join(folder, name), "rb").read()
        source = data.decode("utf-8")
        tokens = special_tokens(name)
        for conv_id, (messages, tools) in CONVERSATIONS.items():
            record = {"template": name, "sha256": hashlib.sha256(data).hexdigest(), "conversation": conv_id,
                      "messages": messages, "tools": tools, "special_tokens": tokens}
            try:
                rendered, indices = ctu.render_jinja_template(
                    conversations=[messages], tools=tools, chat_template=source,
                    return_assistant_tokens_mask=True, **tokens)
                record.update(status="ok", length=len(rendered[0]),
                              generation_spans=[list(span) for span in indices[0]])
            except Exception as e:  # the template's own error is part of the reference
                record.update(status="raised", error={"name": type(e).__name__, "message": str(e)})
            lines.append(json.dumps(record, ensure_ascii=False))
    with open(OUT + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(OUT + ".tmp", OUT)
    print(f"wrote {len(lines)} records to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
