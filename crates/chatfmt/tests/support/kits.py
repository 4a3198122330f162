"""Where the conformance kits are, for the Python tests (as ``kits.rs`` finds them for the Rust ones):
``$CHATFMT_KITS``, else ``../shared/conformance`` beside the repository. A missing kit skips its test,
except under ``CI=true``, where it fails."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[4]


def kit_dir(name: str) -> pathlib.Path:
    base = os.environ.get("CHATFMT_KITS")
    root = pathlib.Path(base) if base else REPO.parent / "shared" / "conformance"
    path = root / name
    if not path.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"conformance kit {path} is missing (CI=true requires it; set CHATFMT_KITS)")
        pytest.skip(f"conformance kit {path} not found (set CHATFMT_KITS to run it)")
    return path
