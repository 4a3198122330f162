"""Finding the conformance kits as the Rust tests do: ``$CHATFMT_KITS``, else ``../shared/conformance``
beside the repository. A missing kit skips its tests, except under ``CI=true``, where it fails."""

import json
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


def kit_dir(name: str) -> pathlib.Path:
    base = os.environ.get("CHATFMT_KITS")
    root = pathlib.Path(base) if base else REPO.parent / "shared" / "conformance"
    path = root / name
    if not path.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"conformance kit {path} is missing (CI=true requires it; set CHATFMT_KITS)")
        pytest.skip(f"conformance kit {path} not found (set CHATFMT_KITS to run it)")
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
