"""``chatfmt.format_batch`` against the per-conversation API, row for row: the HF kit's scenarios with
the tokens kit's qwen3 tokenizer, list<struct> and JSON-string columns, tables and record batches,
failing rows, bad inputs, the clock in worker threads, pickling and datasets' ``map``; and the release
``chatfmt dataset`` binary, whose Parquet output is ``format_batch``'s table."""

import json
import pickle
import subprocess

import pyarrow as pa
import pytest

import chatfmt
from conftest import kit_dir, release_binary

# Templates with {% generation %} blocks: the tokens kit pairs them with the qwen3 tokenizer.
TAGGED = ("EssentialAI--rnj-1", "poolside--Laguna-S-2.1")
DATE_TEMPLATE = "{{ strftime_now('%Y-%m-%d') }}|{% for m in messages %}{{ m.content }}{% endfor %}"


@pytest.fixture(scope="module")
def kits():
    hf = kit_dir("hf")
    tokens = kit_dir("tokens")
    scen = json.loads((hf / "scenarios.json").read_text(encoding="utf-8"))
    tagged = {n: (hf / "corpus" / f"{n}.jinja").read_text(encoding="utf-8") for n in TAGGED}
    tok = chatfmt.Tokenizer.from_pretrained(tokens / "tokenizers" / "qwen3")
    return {"scenarios": scen["scenarios"], "now": scen["frozen_now"], "tagged": tagged, "tok": tok}


def error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e.args[0] if e.args else ''}"


def expected(tok, row, *, template, masks=True, documents_column=None, **call):
    """What the per-conversation API gives for one row (messages, tools, documents as Python objects)."""
    messages = row["messages"]
    kwargs = dict(tools=row.get("tools"), chat_template=template, **call)
    if documents_column:
        kwargs["documents"] = row.get(documents_column)
    try:
        text = tok.apply_chat_template(messages, tokenize=False, **kwargs)
        out = tok.apply_chat_template(messages, return_dict=True, return_assistant_tokens_mask=masks, **kwargs)
    except Exception as e:  # noqa: BLE001 - a failing row is compared by its error
        got = {"input_ids": None, "attention_mask": None, "assistant_masks": None, "text": None, "error": error_text(e)}
    else:
        got = {"input_ids": out["input_ids"], "attention_mask": out["attention_mask"], "text": text, "error": None}
        got["assistant_masks"] = out.get("assistant_masks")
    if not masks:
        del got["assistant_masks"]
    return got


OUT = ("input_ids", "attention_mask", "assistant_masks", "text", "error")


def outputs(table):
    cols = [c for c in OUT if c in table.column_names]
    return [{c: r[c] for c in cols} for r in table.select(cols).to_pylist()]


def struct_rows(scenarios):
    """The scenarios whose messages and tools share one Arrow type (string contents)."""
    rows = []
    for s in scenarios.values():
        if all(isinstance(m.get("content"), str) for m in s["messages"]):
            rows.append({"messages": s["messages"], "tools": s.get("tools")})
    return rows


@pytest.mark.parametrize("name", TAGGED)
def test_struct_columns_equal_apply_chat_template_row_for_row(kits, name):
    tok = kits["tok"]
    template = kits["tagged"][name]
    rows = struct_rows(kits["scenarios"])
    table = pa.Table.from_pylist(rows)
    assert pa.types.is_list(table.schema.field("messages").type)
    assert pa.types.is_struct(table.schema.field("messages").type.value_type)
    with chatfmt.clock(kits["now"]):
        out = chatfmt.format_batch(table, tok, chat_template=template, return_text=True)
        # The rows as datasets hands them to Python: absent struct fields are None.
        want = [expected(tok, r, template=template) for r in table.to_pylist()]
    assert isinstance(out, pa.Table)
    assert out.column_names == ["messages", "tools", *OUT]
    assert out.select(["messages", "tools"]).equals(table)
    assert out.schema.field("input_ids").type == pa.list_(pa.int32())
    assert out.schema.field("assistant_masks").type == pa.list_(pa.int8())
    assert outputs(out) == want
    assert any(w["error"] is None for w in want)
    if name == "poolside--Laguna-S-2.1":
        assert [w["error"] for w in want if w["error"]] == ["UndefinedError: 'str object' has no attribute 'items'"]
    assert any(w["assistant_masks"] and 1 in w["assistant_masks"] for w in want)


def test_json_string_columns_and_every_scenario(kits):
    tok = kits["tok"]
    scen = kits["scenarios"]
    rows = [
        {
            "messages": json.dumps(s["messages"]),
            "tools": json.dumps(s["tools"]) if "tools" in s else None,
            "docs": json.dumps(s["documents"]) if "documents" in s else None,
        }
        for s in scen.values()
    ]
    batch = pa.RecordBatch.from_pylist(rows)
    with chatfmt.clock(kits["now"]):
        out = chatfmt.format_batch(batch, tok, documents_column="docs", return_text=True, masks=False, num_threads=2)
        want = [
            expected(tok, {**s, "docs": s.get("documents")}, template=None, masks=False, documents_column="docs")
            for s in scen.values()
        ]
    assert isinstance(out, pa.RecordBatch)
    assert out.schema.names == ["messages", "tools", "docs", "input_ids", "attention_mask", "text", "error"]
    assert outputs(pa.Table.from_batches([out])) == want


def test_table_of_many_chunks_keeps_row_order(kits):
    tok = kits["tok"]
    rows = struct_rows(kits["scenarios"])
    table = pa.Table.from_pylist(rows)
    chunked = pa.concat_tables([table.slice(0, 3), table.slice(3, 4), table.slice(7)])
    assert chunked.num_columns and len(chunked.to_batches()) == 3
    with chatfmt.clock(kits["now"]):
        whole = chatfmt.format_batch(table, tok, chat_template=kits["tagged"][TAGGED[0]], num_threads=1)
        parts = chatfmt.format_batch(chunked, tok, chat_template=kits["tagged"][TAGGED[0]], num_threads=3)
    assert parts.to_pylist() == whole.to_pylist()
    empty = chatfmt.format_batch(table.slice(0, 0), tok, chat_template=kits["tagged"][TAGGED[0]])
    assert empty.num_rows == 0 and "input_ids" in empty.column_names


def test_text_only_and_sharegpt(kits):
    tok = kits["tok"]
    rows = [
        {"conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello!"}]},
        {"conversations": [{"from": "robot", "value": "Hi"}]},
    ]
    out = chatfmt.format_batch(pa.Table.from_pylist(rows), tok, tokenize=False)
    assert out.column_names == ["conversations", "text", "error"]
    msgs = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    assert out["text"].to_pylist() == [tok.apply_chat_template(msgs, tokenize=False), None]
    assert out["error"][0].as_py() is None
    assert "unknown ShareGPT role" in out["error"][1].as_py()


def test_failing_rows_get_an_error_and_nulls(kits):
    tok = kits["tok"]
    good = json.dumps([{"role": "user", "content": "Hi"}])
    batch = pa.RecordBatch.from_pydict({"messages": [good, "{not json", None, "[]", good]})
    out = chatfmt.format_batch(batch, tok, return_text=True)
    errors = out.column("error").to_pylist()
    assert errors[0] is None and errors[4] is None
    assert errors[1].startswith("ValueError: column `messages` is a string but not JSON")
    assert errors[2] == "ValueError: messages is null; expected a list of messages"
    assert errors[3] == "ValueError: Cannot apply chat template to an empty conversation. Provide at least one message."
    for col in ("input_ids", "attention_mask", "assistant_masks", "text"):
        values = out.column(col).to_pylist()
        assert values[1] is None and values[2] is None and values[3] is None
        assert values[0] is not None and values[0] == values[4]
    assert out.column("input_ids")[0].as_py() == tok.apply_chat_template([{"role": "user", "content": "Hi"}])["input_ids"]
    # JSON strings nest as deep as `chatfmt dataset` reads rows.
    deep = lambda n: '[{"role": "user", "content": "Hi", "x": ' + "[" * n + "]" * n + "}]"  # noqa: E731
    out = chatfmt.format_batch(pa.RecordBatch.from_pydict({"messages": [deep(300), deep(1600)]}), tok, return_text=True)
    assert out.column("text")[0].as_py() == tok.apply_chat_template([{"role": "user", "content": "Hi"}], tokenize=False)
    assert out.column("error")[1].as_py() == (
        "ValueError: column `messages` is a string but not JSON: arrays and objects nested deeper than 1500 levels"
        " at line 1 column 1539"
    )


def test_template_errors_name_the_class(kits):
    tok = kits["tok"]
    batch = pa.RecordBatch.from_pylist([{"messages": [{"role": "user", "content": "x"}]}])
    out = chatfmt.format_batch(batch, tok, chat_template="{{ raise_exception('no way') }}")
    assert out.column("error").to_pylist() == ["TemplateError: no way"]
    out = chatfmt.format_batch(batch, tok, chat_template="{% for %}", masks=False)
    assert out.column("error")[0].as_py().startswith("TemplateSyntaxError: ")


def test_clock_applies_in_worker_threads(kits):
    tok = kits["tok"]
    batch = pa.RecordBatch.from_pylist([{"messages": [{"role": "user", "content": str(i)}]} for i in range(64)])
    with chatfmt.clock("2031-02-03T04:05:06"):
        out = chatfmt.format_batch(batch, tok, chat_template=DATE_TEMPLATE, tokenize=False, num_threads=4)
    assert out.column("text").to_pylist() == [f"2031-02-03|{i}" for i in range(64)]


def test_provenance_masks_cover_assistant_content_only(kits):
    tok = kits["tok"]
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Name a colour."},
        {"role": "assistant", "content": "Teal."},
        {"role": "user", "content": "Another?"},
        {"role": "assistant", "content": "Crimson."},
    ]
    batch = pa.RecordBatch.from_pylist([{"messages": messages}])
    out = chatfmt.format_batch(batch, tok, masks="provenance")
    ids = out.column("input_ids")[0].as_py()
    mask = out.column("assistant_masks")[0].as_py()
    assert ids == tok.apply_chat_template(messages)["input_ids"]
    trained = tok.decode([i for i, m in zip(ids, mask) if m])
    assert "Teal." in trained and "Crimson." in trained
    assert "colour" not in trained and "Another" not in trained and "Be brief" not in trained
    with pytest.raises(ValueError, match="masks='provenance'"):
        chatfmt.format_batch(batch, tok, masks="tags")


def test_message_spans(kits):
    tok = kits["tok"]
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Name a colour, en français : é, 東京? 😀"},
        {"role": "assistant", "content": "Bleu canard 🦆."},
    ]
    batch = pa.RecordBatch.from_pylist([{"messages": messages}, {"messages": []}])
    # Spans are Python string indices of the text, also after characters of several bytes.
    text_only = chatfmt.format_batch(batch, tok, tokenize=False, message_spans=True)
    text = text_only.column("text")[0].as_py()
    spans = text_only.column("message_spans").to_pylist()
    assert spans[1] is None
    assert [m["index"] for m in spans[0]] == [0, 1, 2]
    assert [m["role"] for m in spans[0]] == ["system", "user", "assistant"]
    assert ["".join(text[s:e] for s, e in m["content"]) for m in spans[0]] == [m["content"] for m in messages]
    ends = [m["turn"][1] for m in spans[0]]
    assert ends == sorted(ends) and ends[-1] == len(text)
    assert "turn_tokens" not in spans[0][0]
    out = chatfmt.format_batch(batch, tok, masks="provenance", message_spans=True)
    ids = out.column("input_ids")[0].as_py()
    tokens = out.column("message_spans")[0].as_py()
    assert [m["content"] for m in tokens] == [m["content"] for m in spans[0]]
    for m, want in zip(tokens, messages):
        [(s, e)] = m["content_tokens"]
        assert want["content"] in tok.decode(ids[s:e])
        assert want["content"] in tok.decode(ids[m["turn_tokens"][0] : m["turn_tokens"][1]])


def test_bad_inputs_raise_clear_errors(kits):
    tok = kits["tok"]
    batch = pa.RecordBatch.from_pylist([{"messages": [{"role": "user", "content": "x"}]}])
    with pytest.raises(TypeError, match="pyarrow.Table or pyarrow.RecordBatch, not list"):
        chatfmt.format_batch([{"messages": []}], tok)
    with pytest.raises(TypeError, match="chatfmt.Tokenizer"):
        chatfmt.format_batch(batch, "qwen3")
    with pytest.raises(KeyError, match="no column `chat`"):
        chatfmt.format_batch(batch, tok, messages_column="chat", format="messages")
    with pytest.raises(KeyError, match="no documents column `docs`"):
        chatfmt.format_batch(batch, tok, documents_column="docs")
    with pytest.raises(TypeError, match="column `messages` is Int64"):
        chatfmt.format_batch(pa.RecordBatch.from_pydict({"messages": [1, 2]}), tok)
    with pytest.raises(ValueError, match="format must be"):
        chatfmt.format_batch(batch, tok, format="alpaca")
    with pytest.raises(ValueError, match="masks must be"):
        chatfmt.format_batch(batch, tok, masks="everything")
    with pytest.raises(ValueError, match="num_threads"):
        chatfmt.format_batch(batch, tok, num_threads=0)
    with pytest.raises(ValueError, match="not compatible"):
        chatfmt.format_batch(batch, tok, add_generation_prompt=True, continue_final_message=True)
    with pytest.raises(ValueError, match="already has the output columns"):
        chatfmt.format_batch(batch.append_column("error", pa.array(["x"])), tok)
    # transformers binds these keywords to apply_chat_template's arguments: never template variables.
    with pytest.raises(TypeError, match=r"template_kwargs \['tools'\] name arguments of apply_chat_template"):
        chatfmt.format_batch(batch, tok, template_kwargs={"tools": [], "x": 1})
    with pytest.raises(TypeError, match="got multiple values for keyword argument 'messages'"):
        chatfmt.format_batch(batch, tok, template_kwargs={"messages": []})
    with pytest.raises(TypeError, match="template_kwargs must be a dict"):
        chatfmt.format_batch(batch, tok, template_kwargs=[("x", 1)])
    with pytest.raises(TypeError, match=r"\['add_generation_prompt'\] .*Tokenizer.render\(\)"):
        tok.render([{"role": "user", "content": "x"}], template_kwargs={"add_generation_prompt": True})


def messages_with_raw_contents(contents):
    """A list<struct<role, content>> column, one user message a row, whose content bytes are taken as
    they are (pyarrow does not check them), and a column of the other columns it is read with."""
    data = b"".join(contents)
    offsets = [0]
    for c in contents:
        offsets.append(offsets[-1] + len(c))
    content = pa.Array.from_buffers(
        pa.string(), len(contents), [None, pa.py_buffer(pa.array(offsets, pa.int32()).buffers()[1]), pa.py_buffer(data)]
    )
    role = pa.array(["user"] * len(contents))
    structs = pa.StructArray.from_arrays([role, content], names=["role", "content"])
    lists = pa.ListArray.from_arrays(pa.array(range(len(contents) + 1), pa.int32()), structs)
    return pa.table({"messages": lists, "other": pa.array([b"\xff"] * len(contents), pa.binary())})


def test_invalid_arrow_data_is_refused_and_slices_check_only_their_rows(kits):
    tok = kits["tok"]
    table = messages_with_raw_contents([b"hello", b"bad \xff byte", b"world", b"again"])
    with pytest.raises(ValueError, match="not valid Arrow data.*[Uu][Tt][Ff]"):
        chatfmt.format_batch(table, tok)
    # Valid UTF-8 as a whole, but a character split between two strings.
    with pytest.raises(ValueError, match="not valid Arrow data.*not whole UTF-8"):
        chatfmt.format_batch(messages_with_raw_contents([b"caf\xc3", b"\xa9"]), tok)
    # A slice of the table whose rows do not include the bad string formats: its list column still
    # points into the whole table's strings, of which only its own rows are read and checked.
    for rows in (table.slice(2, 2), table.slice(0, 1), pa.Table.from_batches(table.slice(3, 1).to_batches())):
        got = outputs(chatfmt.format_batch(rows, tok, return_text=True))
        want = [expected(tok, r, template=None) for r in rows.select(["messages"]).to_pylist()]
        assert got == want
        assert all(g["error"] is None for g in got)


def test_tokenizer_pickles_by_its_files_and_deterministically(kits):
    tok = kits["tok"]
    copy = pickle.loads(pickle.dumps(tok))
    assert copy.name_or_path == tok.name_or_path
    assert copy.chat_template == tok.chat_template
    assert copy.special_tokens_map == tok.special_tokens_map
    assert pickle.dumps(copy) == pickle.dumps(tok)
    changed = pickle.loads(pickle.dumps(tok))
    changed.chat_template = DATE_TEMPLATE
    changed.pad_token = "<|im_end|>"
    changed.max_steps = 123
    again = pickle.loads(pickle.dumps(changed))
    assert again.chat_template == DATE_TEMPLATE and again.pad_token == "<|im_end|>" and again.max_steps == 123
    assert pickle.dumps(again) != pickle.dumps(tok)


@pytest.mark.parametrize("num_proc", [None, 2])
def test_datasets_map(kits, num_proc, tmp_path):
    datasets = pytest.importorskip("datasets")
    from datasets.fingerprint import Hasher

    tok = kits["tok"]
    rows = struct_rows(kits["scenarios"]) * 3
    ds = datasets.Dataset.from_list(rows)
    assert Hasher.hash(tok) == Hasher.hash(pickle.loads(pickle.dumps(tok)))
    with chatfmt.clock(kits["now"]):
        mapped = ds.with_format("arrow").map(
            lambda t: chatfmt.format_batch(t, tok), batched=True, batch_size=4, num_proc=num_proc,
            cache_file_name=str(tmp_path / "out.arrow"),
        )
        direct = chatfmt.format_batch(ds.data.table, tok)
    assert mapped.num_rows == len(rows)
    got = mapped.with_format(None).to_list()
    want = direct.to_pylist()
    for g, w in zip(got, want):
        assert {k: g[k] for k in ("input_ids", "attention_mask", "assistant_masks", "error")} == {
            k: w[k] for k in ("input_ids", "attention_mask", "assistant_masks", "error")
        }


# ChatML with the assistant's reply in {% generation %}, refusing roles it does not know.
GENERATION_CHATML = (
    "{%- for m in messages %}"
    "{%- if m['role'] not in ['system', 'user', 'assistant'] %}{{ raise_exception('unknown role: ' + m['role']) }}"
    "{%- endif %}"
    "{%- if m['role'] == 'assistant' %}{{- '<|im_start|>assistant\\n' }}{% generation %}"
    "{{- m['content'] + '<|im_end|>' }}{% endgeneration %}{{- '\\n' }}"
    "{%- else %}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{%- endif %}"
    "{%- endfor %}"
)


def test_dataset_command_writes_format_batch_table(kits, tmp_path):
    import pyarrow.parquet as pq

    binary = release_binary()
    tok = kits["tok"]
    rows = [
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Café, 東京? 😀"},
         {"role": "assistant", "content": "Oui 🦆."}],
        [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
         {"role": "user", "content": "Bye"}, {"role": "assistant", "content": "Ciao."}],
        [{"role": "user", "content": "Hi"}, {"role": "bot", "content": "beep"}],
        [{"role": "user", "content": "A longer question " * 20}, {"role": "assistant", "content": "Sure."}],
    ]
    table = pa.table({
        "id": pa.array([10, 11, 12, 13], pa.int64()),
        "messages": rows,
        "source": ["a", None, "c", "d"],
    })
    data = tmp_path / "in.parquet"
    pq.write_table(table, data, row_group_size=3)
    template = tmp_path / "t.jinja"
    template.write_text(GENERATION_CHATML, encoding="utf-8")
    out = tmp_path / "out.parquet"
    model = kit_dir("tokens") / "tokenizers" / "qwen3"
    run = subprocess.run(
        [str(binary), "dataset", str(data), "--model", str(model), "--template", str(template), "--tokenize",
         "--text", "--message-spans", "--window", "2", "--output", str(out), "--json"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert run.returncode == 1, run.stderr  # the unknown role fails its row
    summary = json.loads(run.stdout)
    assert (summary["rows_in"], summary["rows_out"], summary["rows_rejected"]) == (4, 3, 1)
    got = pq.read_table(out)
    want = chatfmt.format_batch(table, tok, chat_template=GENERATION_CHATML, return_text=True, message_spans=True)
    assert got.schema.equals(want.schema), f"{got.schema}\n!=\n{want.schema}"
    # Every value but the failures' messages (the dataset's name the stage and the template's line).
    assert got.drop_columns(["error"]).equals(want.drop_columns(["error"]))
    kinds = [e and e.split(":")[0] for e in got.column("error").to_pylist()]
    assert kinds == [e and e.split(":")[0] for e in want.column("error").to_pylist()]
    assert kinds == [None, None, "TemplateError", None]
    assert "unknown role: bot" in got.column("error")[2].as_py()
