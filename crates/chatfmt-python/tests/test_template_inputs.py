"""What templates see of Python inputs, against transformers 5.23.0: NumPy scalars and arrays, the
truthiness of ``add_generation_prompt``, a template variable named ``messages``, an empty conversation
in a batch; and the inputs JSON cannot hold, refused with a clear error."""

import numpy as np
import pytest

import chatfmt
from conftest import kit_dir

PRINT = "{% for m in messages %}{{ m.content }}|{{ m.get('v') }};{% endfor %}"
USER = {"role": "user", "content": "x"}


@pytest.fixture(scope="module")
def qwen3():
    d = kit_dir("tokens") / "tokenizers" / "qwen3"
    from transformers import AutoTokenizer

    return chatfmt.Tokenizer.from_pretrained(d), AutoTokenizer.from_pretrained(str(d))


def outcome(tok, *args, **kwargs):
    try:
        return tok.apply_chat_template(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the comparison is of what each raises
        return type(e).__name__, str(e)


def both(pair, *args, **kwargs):
    ours, theirs = pair
    got, want = outcome(ours, *args, **kwargs), outcome(theirs, *args, **kwargs)
    assert got == want
    return got


@pytest.mark.parametrize(
    "value",
    [np.int64(7), np.float32(0.5), np.bool_(False), np.str_("s"), np.array([7]), np.zeros((4, 4, 3), np.uint8)],
    ids=["int64", "float32", "bool_", "str_", "size-1 array", "image array"],
)
def test_numpy_scalars_are_their_item_and_arrays_a_placeholder(qwen3, value):
    messages = [{"role": "user", "content": [{"type": "image", "image": value}, {"type": "text", "text": "?"}], "v": value}]
    template = "{% for b in messages[0].content %}{{ b.type }}={{ b.get('image', b.get('text')) }},{% endfor %}{{ messages[0].v }}"
    both(qwen3, messages, chat_template=template, tokenize=False)


@pytest.mark.parametrize("prompt", [1, 0, None, "yes", "", [], [0]])
def test_add_generation_prompt_is_read_by_its_truthiness(qwen3, prompt):
    out = both(qwen3, [USER], add_generation_prompt=prompt, chat_template="{% if add_generation_prompt %}Y{% endif %}",
               tokenize=False)
    assert out == ("Y" if prompt else "")


@pytest.mark.parametrize("masks", [False, True])
def test_a_template_variable_named_messages_is_refused_as_transformers_refuses_it(qwen3, masks):
    kwargs = dict(tokenize=True, return_dict=True, return_assistant_tokens_mask=True) if masks else dict(tokenize=False)
    name, message = both(qwen3, [USER], chat_template=PRINT, messages=[USER], **kwargs)
    assert name == "TypeError" and "got multiple values for keyword argument 'messages'" in message


def test_an_empty_conversation_in_a_batch_reaches_the_template(qwen3):
    both(qwen3, [[USER], []], chat_template="{{ messages | length }};", tokenize=False)
    both(qwen3, [[USER], []], chat_template="{{ messages | length }};", tokenize=True, return_dict=True)
    # Qwen3's own template reads messages[-1] and fails on it.
    both(qwen3, [[USER], []], tokenize=False)
    both(qwen3, [], tokenize=False)


@pytest.mark.parametrize("key", [1, 2.5, True, None, ("a", "b")])
def test_a_mapping_key_that_is_not_a_string_is_refused(qwen3, key):
    ours, _ = qwen3
    with pytest.raises(TypeError, match="chatfmt passes only str keys to a template"):
        ours.apply_chat_template([{**USER, "v": {key: "a"}}], chat_template=PRINT, tokenize=False)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_float_json_cannot_hold_is_refused(qwen3, value):
    ours, _ = qwen3
    with pytest.raises(ValueError, match="NaN and infinities have no JSON form"):
        ours.apply_chat_template([{**USER, "v": value}], chat_template=PRINT, tokenize=False)
