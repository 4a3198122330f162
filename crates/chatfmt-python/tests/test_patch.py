"""``chatfmt.patch``: a patched transformers tokenizer returns what the unpatched one returns, on the
HF kit's templates and scenarios; fallbacks warn once per reason; ``unpatch`` restores."""

import json
import logging

import pytest

import chatfmt
from conftest import kit_dir, read_jsonl


@pytest.fixture()
def hf_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(kit_dir("tokens") / "tokenizers" / "qwen3"))


def outcome(call):
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - compared as class and message
        return ("raised", type(e).__name__, str(e))
    return ("ok", dict(out) if isinstance(out, dict) else out)


def test_patched_equals_unpatched_on_hf_kit_cases(hf_tokenizer):
    hf = kit_dir("hf")
    index = json.loads((hf / "index.json").read_text(encoding="utf-8"))
    scenarios = json.loads((hf / "scenarios.json").read_text(encoding="utf-8"))
    sources = {t["id"]: (hf / "corpus" / t["file"]).read_bytes().decode("utf-8") for t in index["templates"]}
    original = hf_tokenizer.apply_chat_template
    chatfmt.patch(hf_tokenizer)
    assert chatfmt.patch(hf_tokenizer) is hf_tokenizer  # idempotent
    compared = 0
    seen = set()
    with chatfmt.clock(scenarios["frozen_now"]):
        for g in read_jsonl(hf / "goldens.jsonl"):
            if g["template"] not in sources or (g["template"], g["scenario"]) in seen:
                continue
            seen.add((g["template"], g["scenario"]))
            scenario = scenarios["scenarios"][g["scenario"]]
            opts = g["options"]
            kwargs = dict(
                tools=scenario.get("tools"),
                documents=scenario.get("documents"),
                chat_template=sources[g["template"]],
                add_generation_prompt=opts.get("add_generation_prompt", False),
                continue_final_message=opts.get("continue_final_message", False),
                **opts.get("kwargs", {}),
            )
            for tokenize in (False, True):
                # The unpatched method reads the real clock: templates that print the date differ by design.
                if "strftime_now" in sources[g["template"]]:
                    continue
                want = outcome(lambda: original(scenario["messages"], tokenize=tokenize, **kwargs))
                got = outcome(lambda: hf_tokenizer.apply_chat_template(scenario["messages"], tokenize=tokenize, **kwargs))
                assert got == want, (g["template"], g["scenario"], tokenize)
                compared += 1
    assert compared > 1000
    chatfmt.unpatch(hf_tokenizer)
    assert "apply_chat_template" not in vars(hf_tokenizer)


def test_fallbacks_warn_once_per_reason(hf_tokenizer, caplog):
    chatfmt.patch(hf_tokenizer)
    messages = [{"role": "user", "content": "hi"}]
    with caplog.at_level(logging.WARNING, logger="chatfmt"):
        for _ in range(2):
            with pytest.raises(ValueError):
                hf_tokenizer.apply_chat_template(messages, return_tensors="tf")
    assert caplog.text.count("return_tensors='tf'") == 1
    chatfmt.unpatch(hf_tokenizer)


def test_patch_follows_changes_to_the_tokenizer(hf_tokenizer):
    chatfmt.patch(hf_tokenizer)
    hf_tokenizer.chat_template = "{{ eos_token }}{{ messages[0]['content'] }}"
    assert hf_tokenizer.apply_chat_template([{"role": "user", "content": "x"}], tokenize=False) == "<|im_end|>x"
    hf_tokenizer.eos_token = "<|endoftext|>"
    assert hf_tokenizer.apply_chat_template([{"role": "user", "content": "x"}], tokenize=False) == "<|endoftext|>x"
    chatfmt.unpatch(hf_tokenizer)


def test_patch_takes_the_step_budget(hf_tokenizer):
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}] * 20
    expected = hf_tokenizer.apply_chat_template(messages, tokenize=False)
    chatfmt.patch(hf_tokenizer, max_steps=30)
    with pytest.raises(chatfmt.LimitError, match="max_steps"):
        hf_tokenizer.apply_chat_template(messages, tokenize=False)
    # Patching again sets the budget of the tokenizer already patched.
    chatfmt.patch(hf_tokenizer, max_steps=10**9)
    assert hf_tokenizer.apply_chat_template(messages, tokenize=False) == expected
    chatfmt.unpatch(hf_tokenizer)
    assert not [k for k in vars(hf_tokenizer) if k.startswith("_chatfmt")]
