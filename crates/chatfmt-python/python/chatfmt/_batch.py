"""``chatfmt.format_batch``: the Arrow batch kernel."""

from typing import Any, Dict, Optional, Union

from . import _native
from ._clock import current as _current_clock
from ._tokenizer import Tokenizer, _template_variables

_MASKS = ("auto", "tags", "provenance")


def _masks(masks: Union[bool, str, None]) -> Optional[str]:
    if masks is True:
        return "auto"
    if masks is False or masks is None:
        return None
    if masks in _MASKS:
        return masks
    raise ValueError(f"masks must be 'auto', 'tags', 'provenance', True or False, not {masks!r}")


def format_batch(
    batch: Any,
    tokenizer: Tokenizer,
    *,
    messages_column: str = "messages",
    tools_column: str = "tools",
    documents_column: Optional[str] = None,
    format: str = "auto",
    add_generation_prompt: bool = False,
    continue_final_message: Union[bool, str] = False,
    chat_template: Optional[str] = None,
    template_kwargs: Optional[Dict[str, Any]] = None,
    tokenize: bool = True,
    masks: Union[bool, str] = "auto",
    max_length: Optional[int] = None,
    return_text: bool = False,
    message_spans: bool = False,
    num_threads: Optional[int] = None,
) -> Any:
    """Formats every row of a ``pyarrow.Table`` or ``pyarrow.RecordBatch`` on Rust threads.

    The messages column holds lists of message structs (as datasets and Parquet store them) or JSON
    strings; ``format="sharegpt"`` (or ``"auto"`` without a messages column) reads ShareGPT
    ``conversations``. Returns the same type, rows in the same order: the input's columns, then
    ``input_ids`` (list<int32>), ``attention_mask`` and ``assistant_masks`` (list<int8>; ``masks=False``
    leaves the latter out), ``text`` (with ``return_text`` or ``tokenize=False``), ``message_spans`` (with
    ``message_spans=True``: each message's ``index``, ``role``, ``turn`` and ``content`` as code-point
    ranges of the text, and ``turn_tokens`` and ``content_tokens`` when tokenizing) and ``error`` (null
    when the row formatted; a failed row has ``"Class: message"`` there and nulls elsewhere); every new
    column is nullable, and ``chatfmt dataset`` writes the same schema. Each row
    is what ``tokenizer.apply_chat_template`` gives for it. ``masks`` is ``"auto"`` (the template's
    ``{% generation %}`` blocks when it has them, else provenance), ``"tags"`` or ``"provenance"``.
    The GIL is released; ``num_threads`` defaults to all cores; ``chatfmt.clock`` applies.
    """
    import pyarrow as pa

    if isinstance(batch, pa.Table):
        batches = batch.to_batches() or [pa.RecordBatch.from_pylist([], schema=batch.schema)]
    elif isinstance(batch, pa.RecordBatch):
        batches = [batch]
    else:
        raise TypeError(f"format_batch takes a pyarrow.Table or pyarrow.RecordBatch, not {type(batch).__name__}")
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"format_batch takes a chatfmt.Tokenizer, not {type(tokenizer).__name__}")
    for name, value in (("messages_column", messages_column), ("tools_column", tools_column)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a column name (str), not {type(value).__name__}")
    if documents_column is not None and not isinstance(documents_column, str):
        raise TypeError(f"documents_column must be a column name (str) or None, not {type(documents_column).__name__}")
    if continue_final_message and add_generation_prompt:
        raise ValueError(
            "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message "
            "when you want the model to continue the final message, and add_generation_prompt when you want "
            "to add a header that will prompt it to start a new assistant message instead."
        )
    if num_threads is not None and (not isinstance(num_threads, int) or num_threads < 1):
        raise ValueError(f"num_threads must be a positive int or None, not {num_threads!r}")
    if max_length is not None and (not isinstance(max_length, int) or max_length < 0):
        raise ValueError(f"max_length must be a non-negative int or None, not {max_length!r}")
    variables = _template_variables("format_batch", template_kwargs)
    field = None
    if continue_final_message:
        field = continue_final_message if isinstance(continue_final_message, str) else "content"
    outs = _native.format_batch(
        tokenizer._model,
        batches,
        messages_column=messages_column,
        tools_column=tools_column,
        documents_column=documents_column,
        format=format,
        add_generation_prompt=bool(add_generation_prompt),
        continue_final_message=field,
        chat_template=chat_template,
        template_kwargs=variables,
        tokenize=bool(tokenize),
        masks=_masks(masks) if tokenize else None,
        max_length=max_length,
        return_text=bool(return_text),
        message_spans=bool(message_spans),
        num_threads=num_threads,
        now=_current_clock(),
    )
    new = outs[0].schema
    clash = [n for n in new.names if n in batch.schema.names]
    if clash:
        raise ValueError(f"the batch already has the output columns {clash}; rename or drop them first")
    if isinstance(batch, pa.RecordBatch):
        [out] = outs
        return pa.RecordBatch.from_arrays(
            [*batch.columns, *out.columns],
            schema=pa.schema([*batch.schema, *new], metadata=batch.schema.metadata),
        )
    table = batch
    for i, f in enumerate(new):
        table = table.append_column(f, pa.chunked_array([o.column(i) for o in outs], type=f.type))
    return table
