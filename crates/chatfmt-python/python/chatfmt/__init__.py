"""chatfmt: Hugging Face chat templates rendered byte for byte as transformers 5.23.0 does.

``chatfmt.Tokenizer.from_pretrained(path)`` is a drop-in for a transformers tokenizer's chat
templating (``apply_chat_template``) and common tokenizer methods; ``chatfmt.format_batch`` formats
whole pyarrow tables on Rust threads; ``chatfmt.clock`` fixes the time templates see;
``chatfmt.patch`` routes a transformers tokenizer's ``apply_chat_template`` through chatfmt. Importing chatfmt imports neither numpy, torch nor transformers.
"""

from ._native import __version__
from ._batch import format_batch
from ._clock import clock
from ._encoding import BatchEncoding
from ._errors import (
    FilterArgumentError,
    LimitError,
    OffsetError,
    SecurityError,
    TemplateAssertionError,
    TemplateError,
    TemplateRuntimeError,
    TemplateSyntaxError,
    UndefinedError,
)
from ._patch import patch, unpatch
from ._schema import DocstringParsingException, TypeHintParsingException, get_json_schema
from ._tokenizer import Tokenizer

__all__ = [
    "BatchEncoding",
    "DocstringParsingException",
    "FilterArgumentError",
    "LimitError",
    "OffsetError",
    "SecurityError",
    "TemplateAssertionError",
    "TemplateError",
    "TemplateRuntimeError",
    "TemplateSyntaxError",
    "Tokenizer",
    "TypeHintParsingException",
    "UndefinedError",
    "__version__",
    "clock",
    "format_batch",
    "get_json_schema",
    "patch",
    "unpatch",
]


def __getattr__(name: str):
    # `chatfmt.ray` is loaded on first use, so `import chatfmt` stays free of it.
    if name == "ray":
        import importlib

        return importlib.import_module(".ray", __name__)
    raise AttributeError(f"module 'chatfmt' has no attribute {name!r}")
