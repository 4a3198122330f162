"""Finding the conformance kits as the Rust tests do: ``$CHATFMT_KITS``, else ``../shared/conformance``
beside the repository. A missing kit skips its tests, except under ``CI=true``, where it fails."""

import json
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "crates" / "chatfmt" / "tests" / "support"))

from kits import kit_dir  # noqa: E402  (the test modules import it from here)

__all__ = ["kit_dir", "outcome", "release_binary"]


def release_binary() -> pathlib.Path:
    """``chatfmt`` as ``cargo build --release -p chatfmt-cli`` (and ``cargo test --release``) leaves it."""
    path = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "chatfmt"
    if not path.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing (CI=true requires it; build it with cargo build --release -p chatfmt-cli)")
        pytest.skip(f"{path} not found (build it with cargo build --release -p chatfmt-cli)")
    return path


def read_jsonl(path: pathlib.Path) -> list:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def error_record(e: BaseException) -> dict:
    """The class name and message of an exception, as the kits record them."""
    return {"name": type(e).__name__, "message": str(e)}


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO


def plain(value):
    """Arrays as (dtype, nested lists), recursively, so that results compare with ``==``."""
    if hasattr(value, "dtype") and hasattr(value, "tolist"):
        return (str(value.dtype), [plain(v) for v in value] if value.dtype == object else value.tolist())
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def outcome(call):
    """A call's result as plain values, or its exception's class name and message."""
    try:
        result = call()
    except Exception as e:  # the comparison is the point: any class, with its message
        return ("raised", type(e).__name__, str(e))
    if hasattr(result, "items"):  # transformers' BatchEncoding is a UserDict
        return {k: plain(v) for k, v in result.items()}
    return plain(result)
