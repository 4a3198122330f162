"""transformers' tokenizer behaviour at the edges, against transformers itself on the tokens kit's
tokenizers: ``vocab_size``, ``model_max_length`` (unlimited or set), ``only_first``/``only_second``
truncation of single texts, the classes and messages of bad inputs (torch tensors without torch
included), and ``chatfmt.patch`` after the transformers tokenizer changes (added tokens,
``model_max_length``) and its ``BatchEncoding``."""

import importlib.util
import itertools
import logging

import pytest

import chatfmt
from conftest import kit_dir, outcome

NAMES = ["qwen3", "llama3", "mistral-7b-v0.1"]
CHAT = [{"role": "user", "content": "one two three four five six"}]
BATCH = [CHAT, CHAT + [{"role": "assistant", "content": "seven"}]]
TEXTS = ["hello world", "one two three four five six"]
# For the kit's tokenizers without a chat template of their own.
TEMPLATE = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"


@pytest.fixture(scope="module", params=NAMES)
def pair(request):
    from transformers import AutoTokenizer

    d = kit_dir("tokens") / "tokenizers" / request.param
    ours, theirs = chatfmt.Tokenizer.from_pretrained(d), AutoTokenizer.from_pretrained(str(d))
    if theirs.chat_template is None:
        ours.chat_template = theirs.chat_template = TEMPLATE
    return ours, theirs


def same(ours, theirs, call):
    assert outcome(lambda: call(ours)) == outcome(lambda: call(theirs))


def test_vocab_size_leaves_out_added_tokens(pair):
    ours, theirs = pair
    assert (ours.vocab_size, len(ours)) == (theirs.vocab_size, len(theirs))


def test_max_length_padding_and_truncation_follow_model_max_length(pair):
    ours, theirs = pair
    calls = [
        lambda t: t.apply_chat_template(CHAT, padding="max_length"),
        lambda t: t.apply_chat_template(BATCH, truncation=True),
        lambda t: t.apply_chat_template(BATCH, padding="max_length", truncation=True, return_tensors="np"),
        lambda t: t(TEXTS[1], padding="max_length"),
        lambda t: t(TEXTS, truncation=True, padding="max_length", tokenizer_kwargs={"pad_to_multiple_of": 4}),
    ]
    loaded = theirs.model_max_length
    try:
        # The kit's own limit (llama3's is transformers' unlimited 1e30, which neither pads nor
        # truncates, even without a pad token), then ones set after loading.
        for limit in (loaded, 6, 8, int(1e20) + 1):
            ours.model_max_length = theirs.model_max_length = limit
            for call in calls:
                same(ours, theirs, call)
    finally:
        ours.model_max_length = theirs.model_max_length = loaded


@pytest.mark.parametrize("strategy", ["only_first", "only_second", "longest_first"])
def test_single_text_truncation_strategies(pair, strategy):
    ours, theirs = pair
    for max_length, special in itertools.product((0, 1, 2, 3, 4, 12, None), (True, False)):
        for text in (TEXTS[0], TEXTS):
            same(ours, theirs, lambda t: t(text, truncation=strategy, max_length=max_length, add_special_tokens=special))
        for conv in (CHAT, BATCH):
            same(ours, theirs, lambda t: t.apply_chat_template(conv, truncation=strategy, max_length=max_length))
    # transformers cuts sanitized chats itself, past tokenizers' checks.
    same(ours, theirs, lambda t: t.apply_chat_template(CHAT, truncation=strategy, max_length=3, sanitize_control_tokens=True))


def test_bad_inputs_raise_as_transformers(pair):
    ours, theirs = pair
    for call in (
        lambda t: t(5),
        lambda t: t({"text": "a"}),
        lambda t: t(5, padding="sideways"),
        lambda t: t([]),
        lambda t: t([[1]]),
        lambda t: t.convert_tokens_to_ids(None),
        lambda t: t(TEXTS, padding=True, padding_side="middle"),
        lambda t: t(TEXTS, padding_side="middle"),
        lambda t: t.apply_chat_template(BATCH, padding=True, tokenizer_kwargs={"padding_side": "middle"}),
        lambda t: t.apply_chat_template(BATCH, tokenizer_kwargs={"padding_side": "middle"}),
        lambda t: t.apply_chat_template(CHAT, tokenize=False, tokenizer_kwargs=5),
        lambda t: t.apply_chat_template(CHAT, tokenize=False, chat_template=5),
        lambda t: t.apply_chat_template(CHAT, chat_template=5),
        lambda t: t.apply_chat_template(CHAT, tokenize=False, chat_template=["{{ 1 }}"]),
    ):
        same(ours, theirs, call)
    # Python's message names the callee: each library's tokenizer, by its repr.
    for kwargs in ([("padding", True)], []):
        got = outcome(lambda: ours.apply_chat_template(CHAT, tokenizer_kwargs=kwargs))
        want = outcome(lambda: theirs.apply_chat_template(CHAT, tokenizer_kwargs=kwargs))
        assert got[:2] == want[:2] == ("raised", "TypeError")
        assert got[2] == repr(ours) + want[2][len(repr(theirs)) :]


def test_any_padding_side_is_accepted_until_it_pads(pair):
    ours, theirs = pair
    loaded = theirs.padding_side
    try:
        ours.padding_side = theirs.padding_side = "up"
        assert ours.padding_side == theirs.padding_side
        for call in (
            lambda t: t(TEXTS),
            lambda t: t(TEXTS, padding=True),
            lambda t: t(TEXTS, padding=True, padding_side="left"),
            lambda t: t.apply_chat_template(BATCH),
            lambda t: t.apply_chat_template(BATCH, padding=True),
        ):
            same(ours, theirs, call)
    finally:
        ours.padding_side = theirs.padding_side = loaded


@pytest.fixture()
def qwen3_pair():
    """Two fresh transformers tokenizers: the first to patch, the second left as it is."""
    from transformers import AutoTokenizer

    d = str(kit_dir("tokens") / "tokenizers" / "qwen3")
    return AutoTokenizer.from_pretrained(d), AutoTokenizer.from_pretrained(d)


def test_patch_falls_back_when_tokens_are_added_after_it(qwen3_pair, caplog):
    patched, reference = qwen3_pair
    chatfmt.patch(patched)
    messages = [{"role": "user", "content": "hi <x> there <y>"}]
    same(patched, reference, lambda t: t.apply_chat_template(messages))
    for tok in qwen3_pair:
        tok.add_tokens(["<x>"])
        tok.add_tokens(["<y>"], special_tokens=True)
    with caplog.at_level(logging.WARNING, logger="chatfmt"):
        for _ in range(2):
            same(patched, reference, lambda t: t.apply_chat_template(messages))
    assert reference.convert_tokens_to_ids("<x>") in reference.apply_chat_template(messages)["input_ids"]
    assert caplog.text.count("differs from its tokenizer.json") == 1
    chatfmt.unpatch(patched)


def test_patch_follows_model_max_length():
    from transformers import AutoTokenizer

    d = str(kit_dir("tokens") / "tokenizers" / "qwen3")
    reference = AutoTokenizer.from_pretrained(d, model_max_length=5)
    patched = chatfmt.patch(AutoTokenizer.from_pretrained(d, model_max_length=5))
    for limit in (5, 8):
        patched.model_max_length = reference.model_max_length = limit
        for kwargs in ({"truncation": True}, {"padding": "max_length"}, {"padding": "max_length", "truncation": True}):
            same(patched, reference, lambda t: t.apply_chat_template(BATCH, **kwargs))
    chatfmt.unpatch(patched)


GENERATION_TEMPLATE = (
    "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}"
    "{% else %}{{ m.content }}{% endif %}\n{% endfor %}"
)


def test_patch_returns_transformers_batch_encoding(qwen3_pair):
    from transformers import BatchEncoding

    patched, reference = qwen3_pair
    chatfmt.patch(patched)
    masks = {"return_assistant_tokens_mask": True, "chat_template": GENERATION_TEMPLATE}
    for conv, kwargs in itertools.product(
        (BATCH[1], BATCH),
        ({}, {"return_tensors": "np"}, {"padding": True, "return_tensors": "np"}, masks,
         {**masks, "padding": True, "return_tensors": "np"}, {"return_dict": False}, {"tokenize": False}),
    ):
        got, want = patched.apply_chat_template(conv, **kwargs), reference.apply_chat_template(conv, **kwargs)
        assert type(got) is type(want), kwargs
        assert outcome(lambda: got) == outcome(lambda: want), kwargs
        if isinstance(want, BatchEncoding):
            assert list(got.data) == list(want.data)
            assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}
    chatfmt.unpatch(patched)


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed")
def test_torch_tensors_without_torch_raise_as_transformers(pair):
    ours, theirs = pair
    same(ours, theirs, lambda t: t(TEXTS, return_tensors="pt"))
    same(ours, theirs, lambda t: t.apply_chat_template(CHAT, return_tensors="pt"))
