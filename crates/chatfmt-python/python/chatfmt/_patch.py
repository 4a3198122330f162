"""``chatfmt.patch``: a transformers tokenizer's ``apply_chat_template`` served by chatfmt.

What chatfmt cannot serve exactly goes to the original method, with one warning per reason: a
tokenizer chatfmt cannot load from its folder (or whose vocabulary differs from it, checked on each
call, as after ``add_tokens``), a ``return_tensors`` other than ``"np"``/``"pt"``, or tokenizer
arguments chatfmt does not take. Encodings are transformers' own ``BatchEncoding``, without the
``tokenizers`` encodings behind ``char_to_token`` and the like.
"""

import inspect
import logging
from typing import Any, Callable, Optional

from ._encoding import BatchEncoding
from ._tokenizer import _CALL_OPTIONS, SPECIAL_TOKENS_ATTRIBUTES, Tokenizer

_logger = logging.getLogger("chatfmt")
_ORIGINAL = "_chatfmt_original_apply_chat_template"
_OURS = "_chatfmt_tokenizer"
_warned: set = set()


def _fallback(reason: str) -> None:
    if reason not in _warned:
        _warned.add(reason)
        _logger.warning("chatfmt.patch: using transformers' apply_chat_template: %s", reason)


def _load(hf_tokenizer: Any, max_steps: Optional[int]) -> "tuple[Optional[Tokenizer], Optional[str]]":
    try:
        ours = Tokenizer.from_pretrained(hf_tokenizer.name_or_path, max_steps=max_steps)
    except (OSError, ValueError) as e:
        return None, f"chatfmt cannot load {hf_tokenizer.name_or_path!r} ({e})"
    if not ours._model.has_tokenizer:
        return None, f"{hf_tokenizer.name_or_path!r} has no tokenizer.json"
    return ours, None


def _sync(ours: Tokenizer, hf_tokenizer: Any, state: dict) -> None:
    """Brings chatfmt's copy up to date with what the user changed on the transformers tokenizer."""
    template = hf_tokenizer.chat_template
    if template is not state.get("template"):
        if template != ours.chat_template:
            ours.chat_template = template
        state["template"] = template
    for name in SPECIAL_TOKENS_ATTRIBUTES:
        value = getattr(hf_tokenizer, name, None)
        value = None if value is None else str(value)
        if getattr(ours, name) != value:
            setattr(ours, name, value)
    ours.padding_side = hf_tokenizer.padding_side
    ours.truncation_side = hf_tokenizer.truncation_side
    ours.model_max_length = hf_tokenizer.model_max_length


def patch(hf_tokenizer: Any, *, max_steps: Optional[int] = None) -> Any:
    """Routes ``hf_tokenizer.apply_chat_template`` through chatfmt (idempotent); returns the tokenizer.

    ``max_steps`` sets the step budget of each render (``Tokenizer.max_steps``), also on a tokenizer
    patched before."""
    if _ORIGINAL in vars(hf_tokenizer):
        ours = vars(hf_tokenizer)[_OURS]
        if max_steps is not None and ours is not None:
            ours.max_steps = max_steps
        return hf_tokenizer
    original: Callable[..., Any] = hf_tokenizer.apply_chat_template
    signature = inspect.signature(original)
    ours, reason = _load(hf_tokenizer, max_steps)
    state: dict = {}

    def apply_chat_template(*args: Any, **kwargs: Any) -> Any:
        if ours is None:
            _fallback(reason or "chatfmt cannot load this tokenizer")
            return original(*args, **kwargs)
        if len(ours) != len(hf_tokenizer):
            _fallback(f"the vocabulary of {hf_tokenizer.name_or_path!r} differs from its tokenizer.json (added tokens?)")
            return original(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        call = dict(bound.arguments)
        call.update(call.pop("kwargs", {}))
        tensors = call.get("return_tensors")
        tensors = getattr(tensors, "value", tensors)
        if tensors not in (None, "np", "pt"):
            _fallback(f"return_tensors={tensors!r}")
            return original(*args, **kwargs)
        given = call.get("tokenizer_kwargs")
        if given is not None and not hasattr(given, "keys"):  # transformers' own error (or no use of them)
            _fallback("tokenizer_kwargs that is not a mapping")
            return original(*args, **kwargs)
        extra = set(given or {}) - set(_CALL_OPTIONS)
        if extra:
            _fallback(f"tokenizer_kwargs {sorted(extra)}")
            return original(*args, **kwargs)
        _sync(ours, hf_tokenizer, state)
        if call.get("tools") is not None:
            # transformers' own conversion, so a tool it cannot convert raises transformers' exception
            # classes, which callers of the patched tokenizer catch.
            from transformers.utils import get_json_schema

            call["tools"] = [
                get_json_schema(t) if inspect.isfunction(t) or inspect.ismethod(t) else t for t in call["tools"]
            ]
        out = ours.apply_chat_template(**call)
        if isinstance(out, BatchEncoding):
            from transformers.tokenization_utils_base import BatchEncoding as HFBatchEncoding

            out = HFBatchEncoding(dict(out), tensor_type=call.get("return_tensors"))
        return out

    apply_chat_template.__doc__ = original.__doc__
    setattr(hf_tokenizer, _ORIGINAL, original)
    setattr(hf_tokenizer, _OURS, ours)
    hf_tokenizer.apply_chat_template = apply_chat_template
    return hf_tokenizer


def unpatch(hf_tokenizer: Any) -> Any:
    """Restores the tokenizer's own ``apply_chat_template``; returns the tokenizer."""
    if _ORIGINAL in vars(hf_tokenizer):
        delattr(hf_tokenizer, _ORIGINAL)
        delattr(hf_tokenizer, _OURS)
        del hf_tokenizer.apply_chat_template
    return hf_tokenizer
