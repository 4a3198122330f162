"""``chatfmt.ray.Formatter`` on Ray Data: a dataset formatted by an actor pool equals one
``format_batch`` call row for row. Ray starts with 2 CPUs and a 512 MiB object store and is shut down
in ``finally``; the test is bounded to 120 s. Without Ray installed the test is skipped, except under
``CI=true``, where it fails."""

import json
import os
import signal

import pyarrow as pa
import pytest

import chatfmt
from conftest import kit_dir

TIME_LIMIT = 120


def ray_module():
    try:
        import ray
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("ray[data] is not installed (CI=true requires it; see requirements-ci.txt)")
        pytest.skip("ray[data] is not installed")
    return ray


def conversations():
    hf = kit_dir("hf")
    scen = json.loads((hf / "scenarios.json").read_text(encoding="utf-8"))
    rows = [{"messages": json.dumps(s["messages"])} for _, s in sorted(scen["scenarios"].items())]
    return pa.Table.from_pylist(rows * 8), scen["frozen_now"]


def test_an_actor_pool_formats_as_one_format_batch_call():
    ray = ray_module()
    model = str(kit_dir("tokens") / "tokenizers" / "qwen3")
    table, now = conversations()
    options = {"return_text": True, "masks": "provenance"}
    with chatfmt.clock(now):
        want = chatfmt.format_batch(table, chatfmt.Tokenizer.from_pretrained(model), **options)

    def too_slow(*_):
        raise TimeoutError(f"the Ray test took more than {TIME_LIMIT} s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(TIME_LIMIT)
    try:
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=512 * 1024 * 1024, log_to_driver=False)
        ray.data.DataContext.get_current().execution_options.preserve_order = True
        # Four blocks, so both actors get work (a repartition task would need a CPU the actors hold).
        step = -(-table.num_rows // 4)
        ds = ray.data.from_arrow([table.slice(i, step) for i in range(0, table.num_rows, step)])
        out = ds.map_batches(
            chatfmt.ray.Formatter,
            fn_constructor_kwargs={"model": model, "now": now, **options},
            batch_format="pyarrow",
            batch_size=16,
            compute=ray.data.ActorPoolStrategy(size=2),
        )
        got = pa.concat_tables(ray.get(out.to_arrow_refs()))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        ray.shutdown()
    assert got.num_rows == want.num_rows
    assert got.column_names == want.column_names
    assert got.to_pylist() == want.to_pylist()


def test_unknown_options_are_refused_when_the_actor_starts():
    model = str(kit_dir("tokens") / "tokenizers" / "qwen3")
    with pytest.raises(TypeError, match="unknown format_batch options: mask"):
        chatfmt.ray.Formatter(model, mask="provenance")


def test_the_formatter_takes_the_step_budget():
    # The class itself, without Ray: its actors call it so.
    model = str(kit_dir("tokens") / "tokenizers" / "qwen3")
    table = pa.Table.from_pylist([{"messages": json.dumps([{"role": "user", "content": "hi"}] * 30)}])
    out = chatfmt.ray.Formatter(model, max_steps=20, return_text=True)(table).to_pylist()
    assert out[0]["text"] is None and out[0]["error"].startswith("LimitError: ")
    assert "max_steps = N" in out[0]["error"]
    out = chatfmt.ray.Formatter(model, max_steps=10**9, return_text=True)(table).to_pylist()
    assert out[0]["error"] is None and out[0]["text"].count("<|im_start|>user") == 30
