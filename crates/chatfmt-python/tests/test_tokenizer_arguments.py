"""The tokenizer arguments of ``apply_chat_template`` (``tokenizer_kwargs``), ``tokenizer(...)``
and ``decode`` against transformers itself, on the tokens kit's tokenizers: each call's result,
or its exception class and message, must be the same."""

import itertools

import pytest

import chatfmt
from conftest import kit_dir, outcome

CHATS = [
    [{"role": "user", "content": "Hi there! café"}, {"role": "assistant", "content": "Hello , you 're fine ."}],
    [{"role": "user", "content": "How are you doing today, my friend?"}],
]
TEXTS = ["Hello , world ! I 'm here", "a <|im_start|> b"]


@pytest.fixture(scope="module", params=["qwen3", "llama3", "mistral-7b-v0.1"])
def pair(request):
    d = kit_dir("tokens") / "tokenizers" / request.param
    from transformers import AutoTokenizer

    ours, theirs = chatfmt.Tokenizer.from_pretrained(d), AutoTokenizer.from_pretrained(str(d))
    if theirs.pad_token is None:
        ours.pad_token = ours.eos_token
        theirs.pad_token = theirs.eos_token
    return ours, theirs


def same(ours, theirs, method, *args, **kwargs):
    got = outcome(lambda: getattr(ours, method)(*args, **kwargs))
    want = outcome(lambda: getattr(theirs, method)(*args, **kwargs))
    if isinstance(want, tuple) and want[0] == "raised" and want[1] == "TypeError":
        # The message names the object's repr, which differs; the class and the argument must not.
        assert isinstance(got, tuple) and got[1] == "TypeError", (kwargs, got, want)
        assert want[2].split(" got ")[-1] == got[2].split(" got ")[-1], (kwargs, got, want)
        return
    assert got == want, (method, args, kwargs)
    if isinstance(want, dict):
        assert list(got) == list(want), ("key order", kwargs)


TOKENIZER_KWARGS = [
    {},
    {"pad_to_multiple_of": 8},
    {"return_attention_mask": False},
    {"return_token_type_ids": True},
    {"return_special_tokens_mask": True, "return_length": True},
    {"padding_side": "left", "pad_to_multiple_of": 4, "return_special_tokens_mask": True},
    {"verbose": False},
    {"padding": True},
    {"max_length": 3},
]
CALLS = [
    {},
    {"padding": True},
    {"padding": "max_length", "max_length": 20},
    {"padding": True, "truncation": True, "max_length": 10},
    {"padding": True, "truncation": True, "max_length": 16},
    {"truncation": True, "max_length": 5},
    {"truncation": "longest_first", "max_length": 5},
    {"truncation": "do_not_truncate", "max_length": 5},
    {"truncation": "sideways", "max_length": 5},
    {"padding": "sideways"},
]


def test_tokenizer_kwargs_of_apply_chat_template(pair):
    ours, theirs = pair
    for tokenizer_kwargs, call, batch in itertools.product(TOKENIZER_KWARGS, CALLS, (True, False)):
        conv = CHATS if batch else CHATS[0]
        same(ours, theirs, "apply_chat_template", conv, tokenizer_kwargs=tokenizer_kwargs, **call)
        same(ours, theirs, "apply_chat_template", conv, tokenizer_kwargs=tokenizer_kwargs, return_tensors="np", **call)


def test_tokenizer_kwargs_are_ignored_without_tokenizing(pair):
    ours, theirs = pair
    kwargs = {"tokenize": False, "tokenizer_kwargs": {"padding": True, "stride": 3}}
    same(ours, theirs, "apply_chat_template", CHATS, **kwargs)


def test_truncation_side_is_settable(pair):
    ours, theirs = pair
    try:
        for side in ("left", "right"):
            ours.truncation_side = side
            theirs.truncation_side = side
            same(ours, theirs, "apply_chat_template", CHATS, truncation=True, max_length=6)
            for special in (True, False):
                same(ours, theirs, "__call__", TEXTS, truncation=True, max_length=3, add_special_tokens=special)
    finally:
        ours.truncation_side = theirs.truncation_side = "right"
    with pytest.raises(ValueError, match="Truncation side should be selected between 'right' and 'left'"):
        ours.truncation_side = "middle"


def test_call_arguments(pair):
    ours, theirs = pair
    options = [
        {},
        {"max_length": 0},
        {"max_length": 1},
        {"max_length": 2},
        {"max_length": 2, "add_special_tokens": False},
        {"return_special_tokens_mask": True},
        {"return_special_tokens_mask": True, "padding": True},
        {"return_length": True, "return_token_type_ids": True},
        {"return_attention_mask": False, "padding": True, "pad_to_multiple_of": 8},
        {"padding": "max_length", "max_length": 12, "add_special_tokens": False, "return_tensors": "np"},
        {"tokenizer_kwargs": {"padding": True}},
    ]
    for kwargs, text in itertools.product(options, (TEXTS, TEXTS[0])):
        same(ours, theirs, "__call__", text, **kwargs)


def test_decode_cleans_up_tokenization_spaces_as_transformers(pair):
    ours, theirs = pair
    ids = theirs(TEXTS[0])["input_ids"]
    for clean in (None, True, False):
        for skip in (True, False):
            same(ours, theirs, "decode", ids, skip_special_tokens=skip, clean_up_tokenization_spaces=clean)
    same(ours, theirs, "decode", [ids, ids[:2]])
    same(ours, theirs, "batch_decode", [ids, ids[:2]], clean_up_tokenization_spaces=True)
    assert ours.clean_up_tokenization_spaces == theirs.clean_up_tokenization_spaces


def test_clean_up_applies_to_models_other_than_bpe():
    assert chatfmt._tokenizer.clean_up_tokenization("a , b . I 'm c n't ' x") == "a, b. I'm cn't'x"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"truncation": None, "max_length": 2},
        {"padding": None},
        {"padding": None, "truncation": True, "max_length": 4},
    ],
)
def test_padding_and_truncation_none(pair, kwargs):
    """``truncation=None`` with ``max_length`` truncates, ``padding=None`` is not a strategy: in
    ``apply_chat_template`` as in ``tokenizer(...)``."""
    ours, theirs = pair
    same(ours, theirs, "apply_chat_template", CHATS[1], **kwargs)
    same(ours, theirs, "__call__", TEXTS[0], **kwargs)


@pytest.mark.parametrize(
    "text, kwargs",
    [
        ("hello world foo", {"max_length": 2}),
        ("hello world", {"max_length": 0}),
        ("hello world", {"max_length": 1, "truncation": True}),
        ("<|begin_of_text|>", {}),
        ("<s> x </s>", {}),
        ("<|im_start|>user", {"padding": "max_length", "max_length": 8, "padding_side": "left"}),
        (["short", "a much longer text here"], {"padding": True}),
    ],
)
def test_special_tokens_mask_marks_what_the_post_processor_added(pair, text, kwargs):
    """``special_tokens_mask`` marks the tokens the post-processor added (never a special token of the
    text itself), also when truncation cuts the text or cannot."""
    ours, theirs = pair
    same(ours, theirs, "__call__", text, return_special_tokens_mask=True, **kwargs)


def test_decode_and_batch_decode_read_ids_as_transformers(pair):
    """``batch_decode`` of one sequence gives a one-item list; arrays inside lists are sequences; ids that
    are not integers, or out of 32 bits, raise as ``tokenizers`` does."""
    import numpy as np

    ours, theirs = pair
    ids = ours.encode("Hello world again", add_special_tokens=False)
    for value in [ids, [], [[]], [ids, ids[:1]], np.array(ids), [np.array(ids), np.array(ids[:2])],
                  tuple(ids), {"input_ids": ids}, [float(ids[0])], [[ids]], None, "abc", [-1], [10**12]]:
        same(ours, theirs, "decode", value)
        same(ours, theirs, "batch_decode", value)
    same(ours, theirs, "convert_ids_to_tokens", [-1])
