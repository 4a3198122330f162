"""``chatfmt.format_batch`` on the Arrow types a ``datasets`` table holds, against what a datasets user's
rows give transformers: each row read with ``Dataset.__getitem__`` (datasets' Python formatting, its
``Json`` feature decoded with pandas' ujson) and rendered as ``apply_chat_template`` renders it (message
keys whose value is None dropped, then ``render_jinja_template``, which rebuilds the data with
``_plain_template_data``). Floats widen to Python floats, other objects
become ``<TypeName>`` placeholders, ``Json`` values (the ``arrow.json`` extension type, at any level)
decode as datasets decodes them; what a template would see as NaN or Infinity, or what datasets cannot
load, fails the row with an error naming where the value is."""

import datetime
import decimal
import json
import math
import pathlib
import random
import struct

import pyarrow as pa
import pytest

import chatfmt
from conftest import REPO

datasets = pytest.importorskip("datasets")
chat_template_utils = pytest.importorskip("transformers.utils.chat_template_utils")

# tojson and printing, of every message field and of the tools.
TEMPLATE = (
    "{{ messages | tojson }}|{% for m in messages %}{% for k, v in m.items() %}{{ k }}={{ v }};{% endfor %}"
    "{% endfor %}|{{ tools | tojson }}"
)


@pytest.fixture(scope="module")
def tok():
    return chatfmt.Tokenizer.from_pretrained(pathlib.Path(REPO) / "examples" / "chatml-model")


def reference(ds):
    """Each row of ``ds`` as transformers renders it (text), or the exception datasets or it raises."""
    out = []
    for i in range(len(ds)):
        try:
            row = ds[i]
            # apply_chat_template first drops the message keys whose value is None
            # (transformers/tokenization_utils_base.py), then renders.
            messages = [{k: v for k, v in m.items() if v is not None} for m in row["messages"]]
            rendered, _ = chat_template_utils.render_jinja_template(
                [messages], tools=row.get("tools"), chat_template=TEMPLATE
            )
            out.append(rendered[0])
        except Exception as e:  # noqa: BLE001 - a failing row is compared by failing
            out.append(e)
    return out


def formatted(tok, table):
    out = chatfmt.format_batch(table, tok, tokenize=False, chat_template=TEMPLATE)
    return list(zip(out.column("text").to_pylist(), out.column("error").to_pylist()))


def non_finite(text):
    return any(w in text for w in ("NaN", "Infinity"))


def assert_like_datasets(tok, ds, *, expect_errors=0):
    """format_batch over the Arrow table of ``ds`` renders each row as the reference does; a row the
    reference cannot render, or renders with NaN or Infinity, fails."""
    table = ds.with_format("arrow")[:]
    errors = 0
    for i, (ref, (text, error)) in enumerate(zip(reference(ds), formatted(tok, table))):
        if isinstance(ref, Exception) or non_finite(ref):
            assert error is not None and text is None, (i, ref, text)
            assert error.startswith("ValueError: messages"), (i, error)
            errors += 1
        else:
            assert error is None, (i, ref, error)
            assert text == ref, i
    assert errors == expect_errors
    return table


def messages_with(name, typ, values):
    """A table of one-message conversations whose message has a field ``x`` of type ``typ``."""
    st = pa.struct([("role", pa.string()), ("content", pa.string()), ("x", typ)])
    rows = [[{"role": "user", "content": "q", "x": v}] for v in values]
    return pa.table({"messages": pa.array(rows, type=pa.list_(st))})


DT = datetime.datetime(2024, 1, 2, 3, 4, 5, 6)
TYPES = {
    "float32": (pa.float32(), [0.1, 1.0, 3.4e38, 1e-45, 48.85, -0.0, None]),
    "float16": (pa.float16(), [0.1, 1.0, 65504.0]),
    "float64": (pa.float64(), [0.1, 1e16, 1e-7, -0.0, 1e22, 48.849998474121094, 100.0, 2.5e-300, 1.7976931348623157e308]),
    "int8": (pa.int8(), [-128, 127]),
    "uint64": (pa.uint64(), [2**64 - 1, 0]),
    "bool": (pa.bool_(), [True, False]),
    "timestamp_s": (pa.timestamp("s"), [DT.replace(microsecond=0)]),
    "timestamp_ms": (pa.timestamp("ms"), [DT.replace(microsecond=0)]),
    "timestamp_us": (pa.timestamp("us"), [DT]),
    "timestamp_ns": (pa.timestamp("ns"), [DT]),
    "timestamp_utc": (pa.timestamp("us", tz="UTC"), [DT.replace(tzinfo=datetime.timezone.utc)]),
    "timestamp_offset": (pa.timestamp("ms", tz="+02:00"), [DT.replace(microsecond=0, tzinfo=datetime.timezone.utc)]),
    "timestamp_named": (pa.timestamp("s", tz="Europe/Paris"), [DT.replace(microsecond=0, tzinfo=datetime.timezone.utc)]),
    "date32": (pa.date32(), [datetime.date(2024, 1, 2)]),
    "date64": (pa.date64(), [datetime.date(2024, 1, 2)]),
    "time32": (pa.time32("s"), [datetime.time(1, 2, 3)]),
    "time64_us": (pa.time64("us"), [datetime.time(1, 2, 3, 4)]),
    "time64_ns": (pa.time64("ns"), [datetime.time(1, 2, 3, 4)]),
    "duration_s": (pa.duration("s"), [datetime.timedelta(seconds=5)]),
    "duration_us": (pa.duration("us"), [datetime.timedelta(seconds=5)]),
    "duration_ns": (pa.duration("ns"), [datetime.timedelta(seconds=5)]),
    "binary": (pa.binary(), [b"\x00\xffabc"]),
    "large_binary": (pa.large_binary(), [b"\x00ab"]),
    "fixed_size_binary": (pa.binary(3), [b"\x00ab"]),
    "binary_view": (pa.binary_view(), [b"\x00ab"]),
    "decimal128": (pa.decimal128(10, 3), [decimal.Decimal("1.250")]),
    "decimal256": (pa.decimal256(40, 3), [decimal.Decimal("1.250")]),
    "dictionary": (pa.dictionary(pa.int8(), pa.string()), ["a", None, "b"]),
    "large_string": (pa.large_string(), ["big"]),
    "string_view": (pa.string_view(), ["v"]),
    "list_float32": (pa.list_(pa.float32()), [[0.1, 2.0], []]),
    "fixed_size_list": (pa.list_(pa.float32(), 2), [[0.1, 0.2]]),
    "null": (pa.null(), [None]),
}


@pytest.mark.parametrize("name", sorted(TYPES))
def test_arrow_types_as_datasets_gives_them(tok, name):
    typ, values = TYPES[name]
    assert_like_datasets(tok, datasets.Dataset(messages_with(name, typ, values)))


def test_non_finite_floats_fail_the_row_naming_the_value(tok):
    table = messages_with("f", pa.float64(), [1.5, float("nan"), float("inf"), -float("inf")])
    assert_like_datasets(tok, datasets.Dataset(table), expect_errors=3)
    errors = [e for _, e in formatted(tok, table)]
    assert errors[0] is None
    assert errors[1].startswith("ValueError: messages[0].x is NaN")
    assert errors[2].startswith("ValueError: messages[0].x is Infinity")
    assert errors[3].startswith("ValueError: messages[0].x is -Infinity")
    table = messages_with("f", pa.float32(), [float("nan")])
    assert formatted(tok, table)[0][1].startswith("ValueError: messages[0].x is NaN")


def test_values_datasets_cannot_load_fail_the_row(tok):
    # Out of Python's datetime, date and timedelta ranges: datasets raises on these rows.
    for typ, value in [
        (pa.timestamp("s"), 253402300800),
        (pa.timestamp("us", tz="+01:00"), 253402300799999999 - 3600 * 10**6 + 1),
        (pa.date32(), 2932897),
        (pa.time64("us"), 253402300800 * 10**6),
        (pa.duration("s"), 10**9 * 86400),
    ]:
        table = pa.table({"messages": pa.array([[{"role": "user", "content": "q", "x": value}]],
                                               pa.list_(pa.struct([("role", pa.string()), ("content", pa.string()), ("x", typ)])))})
        assert_like_datasets(tok, datasets.Dataset(table), expect_errors=1)
    # The edges that still load, and pandas' NaT.
    for typ, value in [(pa.timestamp("us"), 253402300799999999), (pa.date32(), -719162),
                       (pa.duration("ms"), -999999999 * 86400000), (pa.timestamp("ns"), -2**63)]:
        table = pa.table({"messages": pa.array([[{"role": "user", "content": "q", "x": value}]],
                                               pa.list_(pa.struct([("role", pa.string()), ("content", pa.string()), ("x", typ)])))})
        assert_like_datasets(tok, datasets.Dataset(table))
    # Types datasets has no feature for: the row fails rather than guess.
    table = messages_with("m", pa.map_(pa.string(), pa.int64()), [[("a", 1)]])
    with pytest.raises(ValueError):
        datasets.Dataset(table)
    [(text, error)] = formatted(tok, table)
    assert text is None and "messages[0].x" in error and "datasets cannot load" in error


def test_json_feature_of_whole_messages_and_nested_fields(tok):
    rows = [
        {"messages": [{"role": "user", "content": "w?"},
                      {"role": "assistant", "content": "", "tool_calls": [
                          {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "lat": 48.85}}}]}],
         "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]},
        {"messages": [{"role": "user", "content": "s?", "meta": {"k": [1, 2.5, None, True]}},
                      {"role": "assistant", "content": "x"}],
         "tools": [{"type": "function", "function": {"name": "search", "strict": True}}]},
        {"messages": [{"role": "user", "content": "n"}], "tools": None},
    ]
    # Whole messages as Json (mixed message keys), tools[].function as Json.
    ds = datasets.Dataset.from_list(rows, on_mixed_types="use_json")
    assert isinstance(ds.features["messages"], datasets.List)
    table = assert_like_datasets(tok, ds)
    assert table.schema.field("messages").type.value_type == pa.json_()
    # Only the arguments as Json, in a struct in a list in a struct in a list.
    feats = datasets.Features({
        "messages": datasets.List({"role": datasets.Value("string"), "content": datasets.Value("string"),
                                   "tool_calls": datasets.List({"type": datasets.Value("string"), "function": {
                                       "name": datasets.Value("string"), "arguments": datasets.Json()}})}),
    })
    plain_rows = [{"messages": [{k: m.get(k) for k in ("role", "content", "tool_calls")} for m in r["messages"]]} for r in rows]
    assert_like_datasets(tok, datasets.Dataset.from_list(plain_rows, features=feats))
    # A Json column read as a whole (the messages themselves).
    whole = pa.table({"messages": pa.array([json.dumps(r["messages"]) for r in rows], pa.json_())})
    assert_like_datasets(tok, datasets.Dataset(whole))


def json_numbers():
    """JSON texts whose decoding by pandas' ujson (precise_float=False) differs from a correctly rounded
    parse, or which ujson reads leniently, and random doubles in every notation."""
    texts = ["0.001099860412068665", "1.0270784629388736e-273", "1.26753247473822E-38", "12345678901234567890",
             "18446744073709551615", "18446744073709551616", "-9223372036854775808", "-9223372036854775809",
             "27670116110564327424", "9007199254740993", "1e5", "1E-5", "1e", "01", "1.", "-0", "-0.0", "-", "5e-324",
             "1.7976931348623157e308", "1e400", "0e400", "-1e400", "NaN", "Infinity", "-Infinity", "12345678901234567890.5",
             '{"a": 1, "a": 2, "b": 3}', '{"a": 1,}', "[1,]", '"\\u00e9\\ud83d\\ude00\\/"', '"a\tb"',
             "  3 ", "3 x", "", "tru", "[0.1, 0.2, 0.30000000000000004]"]
    rng = random.Random(7)
    for _ in range(300):
        x = struct.unpack("d", rng.randbytes(8))[0] if rng.random() < 0.5 else rng.uniform(-1e4, 1e4)
        if math.isfinite(x):
            texts += [json.dumps(x), json.dumps(x).upper()]
    return texts


def test_json_values_decode_as_datasets_decodes_them(tok):
    texts = json_numbers()
    st = pa.struct([("role", pa.string()), ("content", pa.string()), ("x", pa.json_())])
    children = [pa.array(["user"] * len(texts)), pa.array(["q"] * len(texts)),
                pa.ExtensionArray.from_storage(pa.json_(), pa.array(texts))]
    messages = pa.StructArray.from_arrays(children, fields=list(st))
    offsets = pa.array(range(len(texts) + 1), pa.int32())
    table = pa.table({"messages": pa.ListArray.from_arrays(offsets, messages)})
    ds = datasets.Dataset(table)
    refs = reference(ds)
    failing = sum(isinstance(r, Exception) or non_finite(r) for r in refs)
    assert failing >= 8  # the too-big integers, the infinities, the malformed texts
    assert_like_datasets(tok, ds, expect_errors=failing)
    # The error names the value and says why.
    by_text = dict(zip(texts, formatted(tok, table)))
    assert by_text["1e400"][1].startswith("ValueError: messages[0].x is a datasets Json value")
    assert "Infinity" in by_text["1e400"][1]
    assert by_text["NaN"][1] is None  # ujson reads NaN as None
    # A lone surrogate, which ujson turns into an empty string, fails the row instead.
    lone = pa.table({"messages": pa.array([json.dumps([{"role": "user", "content": "\ud800"}])], pa.json_())})
    assert datasets.Dataset(lone)[0]["messages"][0]["content"] == ""
    [(text, error)] = formatted(tok, lone)
    assert text is None and error.startswith("ValueError: messages is a datasets Json value") and "surrogate" in error
