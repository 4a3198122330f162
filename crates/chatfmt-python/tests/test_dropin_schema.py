"""Type hints transformers' ``get_json_schema`` maps beyond the basic ones (``PIL.Image.Image`` as
``"image"`` when PIL is importable, ``torch.Tensor`` as ``"audio"`` when torch is), and its
``TypeError`` for an unhashable hint, against transformers itself."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import chatfmt
from conftest import kit_dir


def unhashable(a: [int]):  # type: ignore[valid-type]
    """Sums.

    Args:
        a: the numbers
    """


def test_an_unhashable_hint_raises_type_error_as_transformers():
    from transformers.utils import get_json_schema

    with pytest.raises(TypeError) as theirs:
        get_json_schema(unhashable)
    with pytest.raises(TypeError) as ours:
        chatfmt.get_json_schema(unhashable)
    assert ours.value.args == theirs.value.args


# Run in a fresh interpreter that imports PIL.Image from `sys.argv[1]` first; prints what transformers
# and chatfmt make of functions with PIL image hints, as schemas and as rendered tools.
IMAGE_SCRIPT = textwrap.dedent(
    '''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from typing import Optional
    from PIL.Image import Image
    from transformers import AutoTokenizer
    from transformers.utils import get_json_schema
    import chatfmt

    def caption(img: Image, hint: Optional[Image] = None) -> Image:
        """Captions an image.

        Args:
            img: the image
            hint: another image
        """

    def outcome(call):
        try:
            return call()
        except Exception as e:
            return [type(e).__name__, str(e)]

    messages = [{"role": "user", "content": "Caption this"}]
    print(json.dumps({
        name: [outcome(lambda: schema(caption)), outcome(lambda: tok.apply_chat_template(messages, tools=[caption], tokenize=False))]
        for name, schema, tok in (
            ("transformers", get_json_schema, AutoTokenizer.from_pretrained(sys.argv[2])),
            ("chatfmt", chatfmt.get_json_schema, chatfmt.Tokenizer.from_pretrained(sys.argv[2])),
        )
    }))
    '''
)


def test_pil_image_hints_are_image_types_as_in_transformers(tmp_path):
    # transformers maps the hint whenever `import PIL.Image` succeeds: a stand-in module shows both
    # libraries the same PIL.Image.Image (pillow is not a test dependency).
    (tmp_path / "PIL").mkdir()
    (tmp_path / "PIL" / "__init__.py").write_text("")
    (tmp_path / "PIL" / "Image.py").write_text("class Image:\n    pass\n")
    tokenizer = kit_dir("tokens") / "tokenizers" / "qwen3"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, "-c", IMAGE_SCRIPT, str(tmp_path), str(tokenizer)],
        capture_output=True, text=True, env=env, check=True,
    )
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["chatfmt"] == result["transformers"]
    schema = result["chatfmt"][0]["function"]
    assert schema["parameters"]["properties"]["img"]["type"] == "image"
    assert schema["return"] == {"type": "image"}


def test_torch_tensor_hints_are_audio_types_as_in_transformers():
    torch = pytest.importorskip("torch")
    from transformers.utils import get_json_schema

    def listen(clip: torch.Tensor):
        """Transcribes a clip.

        Args:
            clip: the waveform
        """

    assert chatfmt.get_json_schema(listen) == get_json_schema(listen)
