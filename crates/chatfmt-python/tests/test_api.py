"""The drop-in API against transformers itself: tokenizer methods, BatchEncoding, special tokens,
the clock, exception classes, and clear errors for bad inputs."""

import asyncio
import datetime
import json
import logging
import subprocess
import sys
import threading

import pytest

import chatfmt
from conftest import kit_dir, release_binary

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi there! café"},
    {"role": "assistant", "content": "Hello."},
]
DATE_TEMPLATE = "{{ strftime_now('%Y-%m-%d %H:%M') }}|{{ messages[0].content }}"


@pytest.fixture(scope="module")
def llama3():
    d = kit_dir("tokens") / "tokenizers" / "llama3"
    from transformers import AutoTokenizer

    return chatfmt.Tokenizer.from_pretrained(d), AutoTokenizer.from_pretrained(str(d))


def test_import_pulls_in_no_optional_dependency():
    code = (
        "import sys, chatfmt; heavy = [m for m in ('numpy', 'torch', 'transformers', 'ray', 'datasets') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_tokenizer_methods_match_transformers(llama3):
    ours, theirs = llama3
    text = "Hello <|eot_id|> world, naïve café!"
    for special in (True, False):
        assert ours.encode(text, add_special_tokens=special) == theirs.encode(text, add_special_tokens=special)
        assert dict(ours(text, add_special_tokens=special)) == dict(theirs(text, add_special_tokens=special))
    ids = theirs.encode(text)
    for skip in (True, False):
        assert ours.decode(ids, skip_special_tokens=skip) == theirs.decode(ids, skip_special_tokens=skip)
    assert ours.batch_decode([ids, ids[:3]]) == theirs.batch_decode([ids, ids[:3]])
    assert ours.convert_ids_to_tokens(ids) == theirs.convert_ids_to_tokens(ids)
    assert ours.convert_ids_to_tokens(ids[0]) == theirs.convert_ids_to_tokens(ids[0])
    tokens = theirs.convert_ids_to_tokens(ids)
    assert ours.convert_tokens_to_ids(tokens) == theirs.convert_tokens_to_ids(tokens)
    assert ours.get_vocab() == theirs.get_vocab()
    assert len(ours) == len(theirs)
    assert ours.all_special_tokens == theirs.all_special_tokens
    assert ours.special_tokens_map == {k: v for k, v in theirs.special_tokens_map.items() if isinstance(v, str)}
    for name in ("bos_token", "eos_token", "pad_token", "unk_token", "bos_token_id", "eos_token_id", "pad_token_id"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.padding_side == theirs.padding_side
    assert ours.truncation_side == theirs.truncation_side
    assert ours.model_max_length == theirs.model_max_length
    assert ours.chat_template == theirs.chat_template


def test_apply_chat_template_shapes_match_transformers(llama3):
    ours, theirs = llama3
    batch = [MESSAGES, MESSAGES[:2]]
    for kwargs in (
        {"tokenize": False},
        {"tokenize": True, "return_dict": False},
        {"tokenize": True},
        {"tokenize": True, "add_generation_prompt": True},
    ):
        for conv in (MESSAGES, batch):
            want, got = theirs.apply_chat_template(conv, **kwargs), ours.apply_chat_template(conv, **kwargs)
            assert type(got).__name__ == type(want).__name__
            assert (dict(got) if isinstance(got, dict) else got) == (dict(want) if isinstance(want, dict) else want)
    got = ours.apply_chat_template(MESSAGES)
    assert got.input_ids == got["input_ids"] and isinstance(got, chatfmt.BatchEncoding)


def test_padding_and_numpy_tensors_match_transformers(llama3):
    ours, theirs = llama3
    ours.pad_token = ours.eos_token
    theirs.pad_token = theirs.eos_token
    try:
        assert ours.pad_token_id == theirs.pad_token_id
        batch = [MESSAGES, MESSAGES[:2]]
        for side in ("left", "right"):
            kwargs = {"padding": True, "return_tensors": "np", "tokenizer_kwargs": {"padding_side": side}}
            want, got = theirs.apply_chat_template(batch, **kwargs), ours.apply_chat_template(batch, **kwargs)
            for key in ("input_ids", "attention_mask"):
                assert got[key].tolist() == want[key].tolist()
                assert got[key].dtype == want[key].dtype
        want = theirs.apply_chat_template(MESSAGES, return_tensors="np", return_dict=False)
        assert ours.apply_chat_template(MESSAGES, return_tensors="np", return_dict=False).tolist() == want.tolist()
    finally:
        ours.pad_token = None
        theirs.pad_token = None


def test_masks_without_generation_blocks_are_zero_and_warn(llama3, caplog):
    ours, theirs = llama3
    with caplog.at_level(logging.WARNING, logger="chatfmt"):
        got = ours.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True)
    want = theirs.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True)
    assert got["assistant_masks"] == want["assistant_masks"] == [0] * len(want["input_ids"])
    assert "does not contain `{% generation %}`" in caplog.text


GENERATION_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'assistant' %}<|im_start|>assistant\n{% generation %}"
    "{{ m['content'] }}<|im_end|>{% endgeneration %}\n{% else %}<|im_start|>{{ m['role'] }}\n"
    "{{ m['content'] }}<|im_end|>\n{% endif %}{% endfor %}"
)


RENDER_CASES = [
    ({}, []),
    ({"masks": "provenance"}, ["--masks", "provenance"]),
    ({"add_generation_prompt": True}, ["--add-generation-prompt"]),
    ({"chat_template": "generation"}, ["--template", "generation"]),
    ({"chat_template": "generation", "masks": "provenance"}, ["--template", "generation", "--masks", "provenance"]),
]


@pytest.mark.parametrize(
    "options, flags, tokenize",
    [(o, f, t) for o, f in RENDER_CASES for t in (True, False)] + [({"max_length": 7}, ["--max-length", "7"], True)],
)
def test_render_returns_the_cli_json_object(llama3, tmp_path, options, flags, tokenize):
    """``render`` gives ``chatfmt tokenize --json``'s object (``render --json``'s without tokenizing),
    key for key: provenance masks for a template without blocks, tags for one with them."""
    ours, _ = llama3
    model = kit_dir("tokens") / "tokenizers" / "llama3"
    conv = tmp_path / "conv.json"
    conv.write_text(json.dumps(MESSAGES), encoding="utf-8")
    template = tmp_path / "generation.jinja"
    template.write_text(GENERATION_TEMPLATE, encoding="utf-8")
    flags = [str(template) if f == "generation" else f for f in flags]
    options = {k: GENERATION_TEMPLATE if v == "generation" else v for k, v in options.items()}
    command = "tokenize" if tokenize else "render"
    run = subprocess.run(
        [str(release_binary()), command, "--model", str(model), "--messages", str(conv), "--json", *flags],
        capture_output=True, text=True, check=True,
    )
    want = json.loads(run.stdout)
    got = ours.render(MESSAGES, tokenize=tokenize, **options)
    if "chat_template" in options:
        # The CLI names the file it read; the Python call was given the source itself.
        want["template"], got["template"] = None, None
    assert list(got) == list(want)
    assert got == want
    if tokenize and not options:
        assert got["masks"] == "provenance" and 1 in got["assistant_masks"]


def test_render_without_masks_and_with_bad_masks(llama3):
    ours, _ = llama3
    out = ours.render(MESSAGES, add_generation_prompt=True, masks=False)
    assert list(out) == ["input_ids", "attention_mask", "template", "text"]
    assert out["input_ids"] == ours.apply_chat_template(MESSAGES, add_generation_prompt=True, return_dict=False)
    assert out["text"] == ours.apply_chat_template(MESSAGES, add_generation_prompt=True, tokenize=False)
    assert ours.render(MESSAGES, tokenize=False, masks=False) == {
        "text": ours.apply_chat_template(MESSAGES, tokenize=False),
        "template": out["template"],
    }
    with pytest.raises(ValueError, match="masks must be"):
        ours.render(MESSAGES, masks="all")
    with pytest.raises(ValueError, match="generation"):
        ours.render(MESSAGES, masks="tags")
    # A template that prints no assistant message: no span, which would be an all-zero mask.
    silent = "{% for m in messages %}{% if m.role != 'assistant' %}{{ m.content }}{% endif %}{% endfor %}"
    with pytest.raises(ValueError, match="no assistant span was found"):
        ours.render(MESSAGES, chat_template=silent, masks="provenance")


def test_clock_is_a_context_manager_a_decorator_and_per_thread(llama3):
    ours, _ = llama3
    tok = chatfmt.Tokenizer.from_pretrained(kit_dir("tokens") / "tokenizers" / "llama3")
    tok.chat_template = DATE_TEMPLATE
    render = lambda: tok.apply_chat_template(MESSAGES, tokenize=False)  # noqa: E731
    with chatfmt.clock("2025-07-10T12:00:00"):
        assert render() == "2025-07-10 12:00|Be brief."
        with chatfmt.clock(datetime.datetime(2001, 2, 3, 4, 5)):
            assert render() == "2001-02-03 04:05|Be brief."
        assert render() == "2025-07-10 12:00|Be brief."
        seen = []
        thread = threading.Thread(target=lambda: seen.append(render()))
        thread.start()
        thread.join()
        assert seen[0] != "2025-07-10 12:00|Be brief."

    @chatfmt.clock("1999-12-31 23:59")
    def decorated():
        return render()

    assert decorated() == "1999-12-31 23:59|Be brief."

    @chatfmt.clock("2030-01-01T00:00")
    async def in_task():
        await asyncio.sleep(0)
        return render()

    assert asyncio.run(in_task()) == "2030-01-01 00:00|Be brief."
    assert render() != "2030-01-01 00:00|Be brief."
    with pytest.raises(ValueError):
        chatfmt.clock("2025-07-10T12:00:00+02:00")
    with pytest.raises(ValueError):
        chatfmt.clock("yesterday")
    with pytest.raises(ValueError):
        chatfmt.clock(datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc))


def test_template_errors_are_chatfmt_and_jinja2_classes(llama3):
    import jinja2

    ours, _ = llama3
    cases = [
        ("{{ raise_exception('nope') }}", chatfmt.TemplateError, "nope"),
        ("{{ x.y }}", chatfmt.UndefinedError, "'x' is undefined"),
        ("{% if %}", chatfmt.TemplateSyntaxError, None),
        ("{{ [].append(1) }}", chatfmt.SecurityError, "access to attribute 'append' of 'list' object is unsafe."),
        ("{{ 'a' + 1 }}", TypeError, None),
    ]
    for source, cls, message in cases:
        with pytest.raises(cls) as info:
            ours.apply_chat_template(MESSAGES, chat_template=source, tokenize=False)
        e = info.value
        assert type(e).__name__ == cls.__name__
        if message is not None:
            assert str(e) == message
        if issubclass(cls, chatfmt.TemplateError):
            assert isinstance(e, jinja2.TemplateError)
            assert isinstance(e, getattr(jinja2.exceptions, cls.__name__))
            assert e.lineno == 1
    assert issubclass(chatfmt.LimitError, chatfmt.TemplateError)


def test_max_steps_sets_the_step_budget(llama3):
    d = kit_dir("tokens") / "tokenizers" / "llama3"
    _, theirs = llama3
    assert chatfmt.Tokenizer.from_pretrained(d).max_steps == 20_000_000
    tok = chatfmt.Tokenizer.from_pretrained(d, max_steps=40)
    assert tok.max_steps == 40
    long = MESSAGES[:1] + MESSAGES[1:] * 40
    # The model's template, a template passed to the call and one set later all run under the budget.
    nested = "{% for m in messages %}{% for n in messages %}{{ n.role }}{% endfor %}{% endfor %}"
    for call in (
        lambda: tok.apply_chat_template(long, tokenize=False),
        lambda: tok.apply_chat_template(long, chat_template=nested, tokenize=False),
    ):
        with pytest.raises(chatfmt.LimitError, match=r"max_steps \(40\) steps; raise the budget with tokenizer\.max_steps = N"):
            call()
    tok.max_steps = 10**9
    assert tok.apply_chat_template(long, tokenize=False) == theirs.apply_chat_template(long, tokenize=False)
    assert tok.apply_chat_template(long) == theirs.apply_chat_template(long)
    tok.max_steps = 40
    tok.chat_template = nested
    with pytest.raises(chatfmt.LimitError):
        tok.apply_chat_template(long, tokenize=False)
    for bad, cls in ((0, ValueError), (-1, ValueError), ("5", TypeError), (True, TypeError), (2.0, TypeError)):
        with pytest.raises(cls, match="max_steps"):
            tok.max_steps = bad
        with pytest.raises(cls, match="max_steps"):
            chatfmt.Tokenizer.from_pretrained(d, max_steps=bad)
    assert tok.max_steps == 40


def test_builtin_exceptions_carry_the_arguments_transformers_raises_with(llama3):
    ours, theirs = llama3
    # A KeyError's argument is the key itself: str() shows its repr, so 0 and '0' differ.
    for source in ("{{ {'a': 1}|random }}", "{{ '{a}'.format() }}", "{{ '{0}'.format() }}", "{{ 'a' + 1 }}"):
        raised = []
        for tok in (ours, theirs):
            with pytest.raises(Exception) as info:
                tok.apply_chat_template(MESSAGES, chat_template=source, tokenize=False)
            raised.append((type(info.value).__name__, info.value.args, str(info.value)))
        assert raised[0] == raised[1], source


def test_bad_inputs_raise_clear_python_errors(llama3, tmp_path):
    ours, theirs = llama3
    with pytest.raises(OSError):
        chatfmt.Tokenizer.from_pretrained(tmp_path / "absent")
    with pytest.raises(OSError):
        chatfmt.Tokenizer.from_pretrained("nobody-here/absent-model", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="empty conversation"):
        ours.apply_chat_template([])
    for bad in (["not a message"], [1]):
        with pytest.raises(AttributeError) as mine:
            ours.apply_chat_template(bad, tokenize=False)
        with pytest.raises(AttributeError) as ref:
            theirs.apply_chat_template(bad, tokenize=False)
        assert str(mine.value) == str(ref.value)
    with pytest.raises(TypeError, match="Documents should be a list of dicts"):
        ours.apply_chat_template(MESSAGES, documents=["x"], tokenize=False)
    with pytest.raises(ValueError, match="Tools should either be a JSON schema"):
        ours.apply_chat_template(MESSAGES, tools=[42], tokenize=False)
    with pytest.raises(ValueError, match="not a valid TensorType"):
        ours.apply_chat_template(MESSAGES, return_tensors="tf")
    with pytest.raises(ValueError, match="text input must be of type `str`"):
        ours(42)
    with pytest.raises(ValueError, match="Padding side should be selected between 'right' and 'left'"):
        chatfmt.Tokenizer.from_pretrained(kit_dir("tokens") / "tokenizers" / "llama3", padding_side="middle")


def test_template_only_folders_render_without_a_tokenizer(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text('{"chat_template": "{{ bos_token }}{{ messages[0].content }}", "bos_token": "<s>"}')
    tok = chatfmt.Tokenizer.from_pretrained(tmp_path)
    assert tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False) == "<s>hi"
    with pytest.raises(OSError, match="no tokenizer.json"):
        tok.apply_chat_template([{"role": "user", "content": "hi"}])
