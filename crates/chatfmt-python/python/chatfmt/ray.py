"""Scale-out with Ray Data.

``ds.map_batches(chatfmt.ray.Formatter, fn_constructor_kwargs={"model": PATH, "now": ..., **options},
batch_format="pyarrow", compute=ray.data.ActorPoolStrategy(size=N))`` formats a dataset on N actors, each
loading the model once; ``options`` are ``chatfmt.format_batch``'s keyword arguments. The same code runs on
a multi-node cluster once ``ray.init(address=...)`` joins it, as long as ``PATH`` is readable on every node
(a shared file system, or a repo id in each node's Hugging Face cache). This module does not import Ray.
"""

import inspect
from typing import Any, Optional

from ._batch import format_batch
from ._clock import clock
from ._tokenizer import Tokenizer

_OPTIONS = [p for p in inspect.signature(format_batch).parameters if p not in ("batch", "tokenizer")]


class Formatter:
    """A Ray Data callable class: loads ``model`` once per actor and formats each pyarrow batch.

    ``now`` fixes what ``strftime_now`` sees (as ``chatfmt.clock``), ``max_steps`` is the step budget of
    each render (``Tokenizer.max_steps``); other keyword arguments are ``chatfmt.format_batch``'s
    options, checked when the actor starts.
    """

    def __init__(self, model: str, now: Optional[Any] = None, max_steps: Optional[int] = None, **options: Any) -> None:
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise TypeError(f"unknown format_batch options: {', '.join(unknown)}; expected some of {', '.join(_OPTIONS)}")
        self._tokenizer = Tokenizer.from_pretrained(model, max_steps=max_steps)
        self._now = now
        self._options = options

    def __call__(self, batch: Any) -> Any:
        if self._now is None:
            return format_batch(batch, self._tokenizer, **self._options)
        with clock(self._now):
            return format_batch(batch, self._tokenizer, **self._options)
