"""``chatfmt.Tokenizer``: a model's chat template and tokenizer with transformers' API."""

import inspect
import json
import logging
import operator
import os
import re
from typing import Any, Dict, List, Optional, Union

from . import _native
from ._clock import current as _current_clock
from ._encoding import TENSOR_TYPES, BatchEncoding

_logger = logging.getLogger("chatfmt")
_warned: set = set()

SPECIAL_TOKENS_ATTRIBUTES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
# transformers' "no limit" model_max_length (VERY_LARGE_INTEGER), and the bound above which a
# model_max_length counts as no limit (LARGE_INTEGER).
_VERY_LARGE_INTEGER = int(1e30)
_LARGE_INTEGER = int(1e20)
_GENERATION_TAG = re.compile(r"\{\%-?\s*generation\s*-?\%\}")
# The arguments ``apply_chat_template`` passes to ``self(...)`` besides ``tokenizer_kwargs``.
_CHAT_CALL_ARGUMENTS = ("padding", "truncation", "max_length", "add_special_tokens", "return_tensors", "sanitize_control_tokens")
# ``Model.apply``'s encoding arguments when only rendering.
_NO_ENCODING: Dict[str, Any] = dict(
    assistant_masks=False, padding="none", truncation=False, max_length=None, padding_side=None, sanitize=False
)


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        _logger.warning(message)


def _padding(padding: Any) -> str:
    value = getattr(padding, "value", padding)
    if value is False or value == "do_not_pad":
        return "none"
    if value is True or value == "longest":
        return "longest"
    if value == "max_length":
        return "max_length"
    raise ValueError(f"{value} is not a valid PaddingStrategy, please select one of ['longest', 'max_length', 'do_not_pad']")


def _truncates(truncation: Any) -> bool:
    """Whether a ``truncation=`` value truncates (one sequence: every strategy but
    ``do_not_truncate`` cuts it the same way, ``only_second`` where it does not raise)."""
    value = getattr(truncation, "value", truncation)
    if value is False or value is None or value == "do_not_truncate":
        return False
    if value is True or value in ("longest_first", "only_first", "only_second"):
        return True
    raise ValueError(
        f"{value} is not a valid TruncationStrategy, please select one of "
        "['only_first', 'only_second', 'longest_first', 'do_not_truncate']"
    )


# The keyword arguments of transformers' ``tokenizer(...)`` that chatfmt honours besides
# ``padding``/``truncation``/``max_length``/``return_tensors``, with their defaults.
_CALL_OPTIONS: Dict[str, Any] = {
    "padding_side": None,
    "pad_to_multiple_of": None,
    "return_token_type_ids": None,
    "return_attention_mask": None,
    "return_special_tokens_mask": False,
    "return_length": False,
    "verbose": True,
}


def _call_options(owner: "Tokenizer", given: Dict[str, Any], explicit: "tuple[str, ...]") -> Dict[str, Any]:
    """``given`` (``tokenizer_kwargs``) checked as Python checks ``self(text, <explicit>=..., **given)``,
    over the defaults of :data:`_CALL_OPTIONS`."""
    for name in given:
        if name in explicit:
            raise TypeError(f"{owner!r} got multiple values for keyword argument '{name}'")
    unknown = sorted(set(given) - set(_CALL_OPTIONS))
    if unknown:
        raise TypeError(f"chatfmt does not support the tokenizer arguments {unknown}")
    return {**_CALL_OPTIONS, **given}


def _tensor_type(return_tensors: Any) -> Optional[str]:
    if return_tensors is None:
        return None
    value = str(getattr(return_tensors, "value", return_tensors))
    if value == "mlx":
        raise ValueError("chatfmt returns NumPy arrays ('np') and torch tensors ('pt'), not MLX arrays")
    if value not in TENSOR_TYPES:
        raise ValueError(f"{value} is not a valid TensorType, please select one of ['pt', 'np', 'mlx']")
    return value


# The arguments of transformers' ``apply_chat_template``: a keyword of one of these names binds the
# argument and never reaches the template as a variable.
_APPLY_ARGUMENTS = frozenset({
    "conversation", "tools", "documents", "chat_template", "add_generation_prompt", "continue_final_message",
    "tokenize", "padding", "truncation", "max_length", "return_tensors", "return_dict",
    "return_assistant_tokens_mask", "tokenizer_kwargs", "sanitize_control_tokens",
})


def _template_variables(owner: str, template_kwargs: Any) -> Dict[str, Any]:
    """``template_kwargs`` of ``owner`` as template variables, refused where transformers would not pass a
    key to the template: ``messages`` collides with its own (its ``TypeError``), and a key naming one of
    ``apply_chat_template``'s arguments would set that argument, which ``owner`` takes as a parameter."""
    if template_kwargs is None:
        return {}
    if not isinstance(template_kwargs, dict):
        raise TypeError(f"template_kwargs must be a dict, not {type(template_kwargs).__name__}")
    if "messages" in template_kwargs:
        raise TypeError("jinja2.environment.Template.render() got multiple values for keyword argument 'messages'")
    bound = sorted(_APPLY_ARGUMENTS.intersection(template_kwargs))
    if bound:
        raise TypeError(
            f"template_kwargs {bound} name arguments of apply_chat_template, not template variables: "
            f"use the parameters of {owner}() for them"
        )
    return dict(template_kwargs)


def _conversation_options(tools: Any, documents: Any, continue_final_message: Any) -> Dict[str, Any]:
    """``tools``, ``documents`` and ``continue_final_message`` as the native renderer takes them, checked as
    transformers checks them: tools as JSON schemas, documents dicts, the final message's field named."""
    schemas = _tool_schemas(tools)
    if documents is not None:
        for document in documents:
            if not isinstance(document, dict):
                raise TypeError("Documents should be a list of dicts with 'title' and 'text' keys!")
    field = None
    if continue_final_message:
        field = continue_final_message if isinstance(continue_final_message, str) else "content"
    return {"tools": schemas, "documents": documents, "continue_final_message": field}


def _tool_schemas(tools: Any) -> Any:
    if tools is None:
        return None
    from ._schema import get_json_schema

    schemas = []
    for tool in tools:
        if isinstance(tool, dict):
            schemas.append(tool)
        elif inspect.isfunction(tool) or inspect.ismethod(tool):
            schemas.append(get_json_schema(tool))
        else:
            raise ValueError(
                "Tools should either be a JSON schema, or a callable function with type hints "
                "and a docstring suitable for auto-conversion to a schema."
            )
    return schemas


# Every keyword ``tokenizer(text, ...)`` honours.
_ENCODE_ARGUMENTS = frozenset(
    ["add_special_tokens", "padding", "truncation", "max_length", "return_tensors", *_CALL_OPTIONS]
)


# transformers' ``clean_up_tokenization``: no space before punctuation and English contractions.
clean_up_tokenization = _native.clean_up_tokenization


def _added_by_post_processor(attention: List[int], layout: "tuple[int, int]") -> List[int]:
    """1 for each token of a row the post-processor added: the first and last ``layout`` of its tokens
    (pads, where ``attention`` is 0, aside)."""
    before, after = layout
    real = [i for i, a in enumerate(attention) if a]
    added = [0] * len(attention)
    for k, i in enumerate(real):
        if k < before or k >= len(real) - after:
            added[i] = 1
    return added


def _is_text_input(text: Any) -> bool:
    """transformers' check of ``tokenizer(text)``'s input: a string or (nested up to three deep) lists
    and tuples, judged by their first items."""
    for _ in range(3):
        if isinstance(text, str):
            return True
        if not isinstance(text, (list, tuple)):
            return False
        if len(text) == 0:
            return True
        text = text[0]
    return isinstance(text, str)


def _to_py_obj(obj: Any) -> Any:
    """transformers' ``to_py_obj``: arrays (and numbers of numpy) as Python lists and numbers, inside
    lists, tuples and dicts too; a list of numbers as it is."""
    if isinstance(obj, (int, float)):
        return obj
    if isinstance(obj, dict):
        return {k: _to_py_obj(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        if all(isinstance(x, (int, float)) or _is_numpy_number(x) for x in obj):
            return list(obj)
        return [_to_py_obj(o) for o in obj]
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return obj


def _is_numpy_number(x: Any) -> bool:
    return type(x).__module__ == "numpy" and hasattr(x, "dtype") and getattr(x, "ndim", None) == 0


def _ids_list(ids: Any) -> List[int]:
    """A sequence of ids as ``tokenizers`` reads one (``int``-like items, 32-bit), with its errors."""
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    if isinstance(ids, int):
        return [ids]
    if isinstance(ids, str):
        raise TypeError("Can't extract `str` to `Vec`")
    if not isinstance(ids, (list, tuple)):
        raise TypeError(f"'{'None' if ids is None else type(ids).__name__}' is not an instance of 'Sequence'")
    out = []
    for i in ids:
        if isinstance(i, float) or not hasattr(i, "__index__"):
            raise TypeError(f"'{type(i).__name__}' object cannot be interpreted as an integer")
        i = operator.index(i)
        if i < 0:
            raise OverflowError("number too small to fit in target type")
        if i > 0xFFFFFFFF:
            raise OverflowError("number too large to fit in target type")
        out.append(i)
    return out


class Tokenizer:
    """A model's chat template(s) and tokenizer, rendering and encoding as transformers 5.23.0 does.

    Load with :meth:`from_pretrained`; ``apply_chat_template`` and the common tokenizer methods
    behave as transformers'. ``render`` returns what ``chatfmt tokenize --json`` prints.
    """

    def __init__(self, model: "_native.Model", config: Optional[Dict[str, Any]] = None):
        config = config or {}
        self._model = model
        self._extra_special_tokens = _extra_special_tokens(config)
        # Set freely, as on a transformers tokenizer: a bad padding side fails only when padding.
        self.padding_side: str = model.padding_side or "right"
        self._truncation_side = model.truncation_side or "right"
        limit = model.model_max_length
        self.model_max_length: int = _VERY_LARGE_INTEGER if limit is None else limit
        names = config.get("model_input_names")
        self._model_input_names = list(names) if isinstance(names, list) else ["input_ids", "attention_mask"]
        self.clean_up_tokenization_spaces = bool(config.get("clean_up_tokenization_spaces", False))
        self.clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output = bool(
            config.get("clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output", False)
        )
        self.name_or_path = model.path or ""

    @classmethod
    def from_pretrained(
        cls,
        path_or_repo_id: Union[str, "os.PathLike[str]"],
        cache_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        revision: Optional[str] = None,
        local_files_only: bool = False,
        trust_remote_code: bool = False,
        **kwargs: Any,
    ) -> "Tokenizer":
        """Loads a model folder, a ``.gguf`` file, or a repo id found in the local Hugging Face cache
        (nothing is downloaded; a missing model raises ``OSError`` as transformers does offline).
        ``tokenizer.json`` is needed only to encode. ``padding_side`` may be given as a keyword, and so
        may ``max_steps`` (see :attr:`max_steps`)."""
        padding_side = kwargs.pop("padding_side", None)
        max_steps = kwargs.pop("max_steps", None)
        if kwargs:
            raise TypeError(f"from_pretrained() got unexpected keyword arguments: {', '.join(sorted(kwargs))}")
        path = os.fspath(path_or_repo_id)
        model = _native.Model.load(path, os.fspath(cache_dir) if cache_dir is not None else None, revision)
        tok = cls(model, _config(model.path))
        if padding_side is not None:
            _check_side("padding", padding_side)
            tok.padding_side = padding_side
        if max_steps is not None:
            tok.max_steps = max_steps
        return tok

    @property
    def max_steps(self) -> int:
        """The evaluation steps one render may take (20,000,000 by default), for the model's
        templates and a ``chat_template`` passed to a call. A render past it raises
        ``chatfmt.LimitError``; raise it for conversations of thousands of messages with templates
        that scan the conversation again for each message, which transformers renders slowly."""
        return self._model.max_steps

    @max_steps.setter
    def max_steps(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"max_steps must be an int, not {type(value).__name__}")
        if value < 1:
            raise ValueError(f"max_steps must be at least 1, not {value}")
        self._model.max_steps = value

    # Special tokens ------------------------------------------------------------------------

    @property
    def special_tokens_map(self) -> Dict[str, str]:
        """The named special tokens (``bos_token``, ``eos_token``, ...) templates see."""
        tokens = self._model.special_tokens
        return {k: tokens[k] for k in SPECIAL_TOKENS_ATTRIBUTES if k in tokens}

    @property
    def all_special_tokens(self) -> List[str]:
        """Every special token string, named ones first, without repeats."""
        seen: List[str] = []
        for token in [*self.special_tokens_map.values(), *self._extra_special_tokens]:
            if token not in seen:
                seen.append(token)
        return seen

    @property
    def all_special_ids(self) -> List[Optional[int]]:
        return [self.convert_tokens_to_ids(t) for t in self.all_special_tokens]

    # Template ------------------------------------------------------------------------------

    @property
    def chat_template(self) -> Optional[Union[str, Dict[str, str]]]:
        """The template source, a dict of named templates, or None."""
        return self._model.chat_template

    @chat_template.setter
    def chat_template(self, value: Optional[Union[str, Dict[str, str]]]) -> None:
        self._model.set_chat_template(value)

    def get_chat_template(self, chat_template: Optional[str] = None, tools: Optional[list] = None) -> str:
        """The template source ``apply_chat_template`` uses, chosen as transformers chooses it."""
        own = self.chat_template
        if isinstance(own, dict):
            if chat_template is not None and chat_template in own:
                return own[chat_template]
            if chat_template is None:
                if tools is not None and "tool_use" in own:
                    return own["tool_use"]
                if "default" in own:
                    return own["default"]
                raise ValueError(
                    "This model has multiple chat templates with no default specified! Please either pass a chat "
                    "template or the name of the template you wish to use to the `chat_template` argument. Available "
                    f"template names are {sorted(own.keys())}."
                )
            return chat_template
        if chat_template is not None:
            return chat_template
        if own is None:
            raise ValueError(
                "Cannot use chat template functions because tokenizer.chat_template is not set and no template "
                "argument was passed! For information about writing templates and setting the "
                "tokenizer.chat_template attribute, please see the documentation at "
                "https://huggingface.co/docs/transformers/main/en/chat_templating"
            )
        return own

    def apply_chat_template(
        self,
        conversation: Any,
        tools: Optional[list] = None,
        documents: Optional[list] = None,
        chat_template: Optional[str] = None,
        add_generation_prompt: bool = False,
        continue_final_message: Union[bool, str] = False,
        tokenize: bool = True,
        padding: Any = False,
        truncation: bool = False,
        max_length: Optional[int] = None,
        return_tensors: Any = None,
        return_dict: bool = True,
        return_assistant_tokens_mask: bool = False,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        sanitize_control_tokens: bool = False,
        **kwargs: Any,
    ) -> Any:
        """transformers 5.23.0's ``apply_chat_template``: the prompt text (``tokenize=False``), its ids,
        or a :class:`BatchEncoding`; a list of conversations gives a batch. Unknown keywords are
        template variables."""
        if not tokenize:
            return_dict = False
        if return_assistant_tokens_mask and not (return_dict and tokenize):
            raise ValueError("`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`")
        source = self.get_chat_template(chat_template, tools)
        if isinstance(conversation, (list, tuple)) and len(conversation) == 0:
            raise ValueError("Cannot apply chat template to an empty conversation. Provide at least one message.")
        if isinstance(conversation, (list, tuple)) and (
            isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages")
        ):
            conversations, is_batched = conversation, True
        else:
            conversations, is_batched = [conversation], False
        conversations = [[{k: v for k, v in msg.items() if v is not None} for msg in conv] for conv in conversations]
        if continue_final_message:
            if add_generation_prompt:
                raise ValueError(
                    "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message "
                    "when you want the model to continue the final message, and add_generation_prompt when you want "
                    "to add a header that will prompt it to start a new assistant message instead."
                )
            if return_assistant_tokens_mask:
                raise ValueError("continue_final_message is not compatible with return_assistant_tokens_mask.")
        if sanitize_control_tokens and (not tokenize or return_assistant_tokens_mask):
            raise ValueError(
                "`sanitize_control_tokens=True` requires `tokenize=True` and is not compatible with "
                "`return_assistant_tokens_mask=True`."
            )
        if return_assistant_tokens_mask and not _GENERATION_TAG.search(source):
            _warn_once("return_assistant_tokens_mask==True but chat template does not contain `{% generation %}` keyword.")
        render_only = dict(
            tools=tools,
            documents=documents,
            chat_template=chat_template,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message,
            kwargs=kwargs,
        )
        if not tokenize:
            rows = self._apply(conversations, tokenize=False, **render_only, **_NO_ENCODING)
            texts = [r[0] for r in rows]
            return texts if is_batched else texts[0]
        try:
            if tokenizer_kwargs is None:
                tokenizer_kwargs = {}
            elif not hasattr(tokenizer_kwargs, "keys"):  # as Python rejects `self(..., **tokenizer_kwargs)`
                raise TypeError(f"{self!r} argument after ** must be a mapping, not {type(tokenizer_kwargs).__name__}")
            options = _call_options(self, dict(tokenizer_kwargs), _CHAT_CALL_ARGUMENTS)
            tensors = _tensor_type(return_tensors)
            padding_mode, truncates, max_length = self._strategies(
                padding, truncation, max_length, options["pad_to_multiple_of"]
            )
            padding_side = self._padding_side(padding_mode, options["padding_side"])
        except (TypeError, ValueError):
            # transformers renders before it calls the tokenizer: template errors come first.
            self._apply(conversations, tokenize=False, **render_only, **_NO_ENCODING)
            raise
        rows = self._apply(
            conversations,
            **render_only,
            tokenize=True,
            assistant_masks=return_assistant_tokens_mask,
            padding=padding_mode,
            truncation=truncates,
            max_length=max_length,
            padding_side=padding_side,
            sanitize=sanitize_control_tokens,
            pad_to_multiple_of=options["pad_to_multiple_of"],
            truncation_side=self.truncation_side,
        )
        if truncates and not sanitize_control_tokens:  # transformers truncates sanitized chats itself
            self._check_only_second(truncation, [r[0] for r in rows], False, max_length)
        out = self._encoding(
            [r[1] for r in rows],
            [r[2] for r in rows],
            [[0] * len(r[1]) for r in rows],
            options,
            batched=is_batched or bool(tensors),
        )
        if return_assistant_tokens_mask:
            masks = [r[3] for r in rows]
            out["assistant_masks"] = masks if (is_batched or tensors) else masks[0]
        if tensors:
            out.convert_to_tensors(tensors)
        return out if return_dict else out["input_ids"]

    def _strategies(
        self, padding: Any, truncation: Any, max_length: Optional[int], multiple: Optional[int]
    ) -> "tuple[str, bool, Optional[int]]":
        """transformers' ``_get_padding_truncation_strategies``: the padding mode, whether to truncate (as
        ``max_length`` alone asks, without padding and with ``truncation`` None), and
        the length both go by, ``model_max_length`` when ``max_length`` is None (neither pads nor truncates
        when that is unlimited); checks for a pad token and that truncation leaves room for
        ``pad_to_multiple_of``."""
        # max_length alone (no padding, truncation unset) truncates.
        if max_length is not None and padding is False and truncation is None:
            truncation = True
        padding_mode, truncates = _padding(padding), _truncates(truncation)
        if max_length is None:
            unlimited = self.model_max_length > _LARGE_INTEGER
            if padding_mode == "max_length":
                padding_mode, max_length = ("none", None) if unlimited else (padding_mode, self.model_max_length)
            if truncates:
                truncates, max_length = (False, None) if unlimited else (True, self.model_max_length)
        if padding_mode != "none" and self.pad_token is None:
            raise ValueError(
                "Asking to pad but the tokenizer does not have a padding token. Please select a token to use as "
                "`pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via "
                "`tokenizer.add_special_tokens({'pad_token': '[PAD]'})`."
            )
        if truncates and padding_mode != "none" and multiple is not None and max_length is not None and max_length % multiple:
            raise ValueError(
                "Truncation and padding are both activated but "
                f"truncation length ({max_length}) is not a multiple of pad_to_multiple_of ({multiple})."
            )
        return padding_mode, truncates, max_length

    def _padding_side(self, padding_mode: str, padding_side: Optional[str]) -> Optional[str]:
        """The side to pad on (None when not padding), checked as ``tokenizers`` checks it."""
        if padding_mode == "none":
            return None
        side = self.padding_side if padding_side is None else padding_side
        if side not in ("left", "right"):
            raise ValueError(f"Unknown `direction`: `{side}`. Use one of `left` or `right`")
        return side

    def _post_processor_layout(self) -> "tuple[int, int]":
        """How many tokens the post-processor puts before and after a single text's own (as ``tokenizers``
        reports them in ``special_tokens_mask``: the ones it added, never a special token of the text)."""
        uncut = dict(truncation=False, max_length=None, padding="none", padding_side=None)
        probe = ["a b"]
        ((plain, _),) = self._model.encode(probe, add_special_tokens=False, **uncut)
        ((full, _),) = self._model.encode(probe, add_special_tokens=True, **uncut)
        before = next((k for k in range(len(full) - len(plain) + 1) if full[k : k + len(plain)] == plain), 0)
        return before, len(full) - len(plain) - before

    def _check_only_second(self, truncation: Any, texts: List[str], add_special_tokens: bool, max_length: int) -> None:
        """``tokenizers``' error for ``only_second`` truncation of single texts: raised where it would cut,
        at ``max_length`` less the special tokens added (when that leaves a positive length)."""
        if getattr(truncation, "value", truncation) != "only_second":
            return
        uncut = dict(truncation=False, max_length=None, padding="none", padding_side=None)
        plain = self._model.encode(texts, add_special_tokens=False, **uncut)
        full = self._model.encode(texts, add_special_tokens=True, **uncut) if add_special_tokens else plain
        for (ids, _), (all_ids, _) in zip(plain, full):
            if max_length > len(all_ids) - len(ids) and len(all_ids) > max_length:
                raise Exception("Truncation error: Second sequence not provided")

    def _encoding(
        self, ids: list, attention: list, added: list, options: Dict[str, Any], *, batched: bool
    ) -> BatchEncoding:
        """The ``BatchEncoding`` of encoded rows, with the keys ``options`` ask for, in transformers'
        order. ``added[i][j]`` is 1 where the post-processor added token ``j`` of row ``i``."""
        names = self._model_input_names
        want_types = options["return_token_type_ids"]
        want_attention = options["return_attention_mask"]
        if want_types is None:
            want_types = "token_type_ids" in names
        if want_attention is None:
            want_attention = "attention_mask" in names
        fields: Dict[str, list] = {"input_ids": ids}
        if want_types:
            fields["token_type_ids"] = [[0] * len(row) for row in ids]
        if want_attention:
            fields["attention_mask"] = attention
        if options["return_special_tokens_mask"]:
            fields["special_tokens_mask"] = [
                [1 if (a == 0 or s) else 0 for a, s in zip(mask, extra)] for mask, extra in zip(attention, added)
            ]
        if options["return_length"]:
            fields["length"] = [len(row) for row in ids]
        out = BatchEncoding()
        for key, value in fields.items():
            out[key] = value if (batched or key == "length") else value[0]
        return out

    def _apply(self, conversations: list, *, tools: Any, documents: Any, continue_final_message: Any, **options: Any) -> list:
        template = options["chat_template"]
        if template is not None and not isinstance(template, str):
            hash(template)  # transformers' template cache rejects an unhashable one first
            raise TypeError("Can't compile non template nodes")  # jinja2's error for a non-string source
        return self._model.apply(
            [getattr(c, "messages", c) for c in conversations],
            **_conversation_options(tools, documents, continue_final_message),
            now=_current_clock(),
            **options,
        )

    def render(
        self,
        conversation: Any,
        *,
        tools: Optional[list] = None,
        documents: Optional[list] = None,
        chat_template: Optional[str] = None,
        add_generation_prompt: bool = False,
        continue_final_message: Union[bool, str] = False,
        tokenize: bool = True,
        masks: Union[bool, str] = "auto",
        max_length: Optional[int] = None,
        template_kwargs: Optional[Dict[str, Any]] = None,
    ) -> Dict[str, Any]:
        """One conversation as ``chatfmt tokenize --json`` prints it (``input_ids``, ``attention_mask``,
        ``assistant_masks``, ``template``, ``text``, ``masks``, ``assistant_spans``, ``message_spans``), or with
        ``tokenize=False`` as ``chatfmt render --json`` does (``text``, ``template`` and the spans).
        ``masks``: ``"auto"`` (the template's ``{% generation %}`` blocks when it has them, else
        provenance), ``"tags"``, ``"provenance"``, ``True`` (``"auto"``) or ``False`` (no masks nor
        spans)."""
        if masks is True:
            masks = "auto"
        if masks is not False and masks not in ("auto", "tags", "provenance"):
            raise ValueError(f"masks must be 'auto', 'tags', 'provenance', True or False, not {masks!r}")
        out = self._model.render_json(
            list(getattr(conversation, "messages", conversation)),
            **_conversation_options(tools, documents, continue_final_message),
            chat_template=chat_template,
            add_generation_prompt=bool(add_generation_prompt),
            kwargs=_template_variables("Tokenizer.render", template_kwargs),
            tokenize=tokenize,
            masks=None if masks is False else masks,
            max_length=max_length,
            now=_current_clock(),
        )
        return json.loads(out)

    # Tokenizer -----------------------------------------------------------------------------

    def __call__(
        self,
        text: Union[str, List[str], None] = None,
        text_pair: Any = None,
        text_target: Any = None,
        text_pair_target: Any = None,
        add_special_tokens: bool = True,
        padding: Any = False,
        truncation: Any = None,
        max_length: Optional[int] = None,
        stride: int = 0,
        is_split_into_words: bool = False,
        pad_to_multiple_of: Optional[int] = None,
        padding_side: Optional[str] = None,
        return_tensors: Any = None,
        return_token_type_ids: Optional[bool] = None,
        return_attention_mask: Optional[bool] = None,
        return_overflowing_tokens: bool = False,
        return_special_tokens_mask: bool = False,
        return_offsets_mapping: bool = False,
        return_length: bool = False,
        verbose: bool = True,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        **kwargs: Any,
    ) -> BatchEncoding:
        """Encodes a text (or a list of texts) as ``tokenizer(text)``: ``input_ids``, ``attention_mask``
        and the other outputs asked for. Text pairs, targets, strides, overflowing tokens and offsets
        are not supported (``TypeError``)."""
        given = {
            "add_special_tokens": add_special_tokens,
            "padding": padding,
            "truncation": truncation,
            "max_length": max_length,
            "pad_to_multiple_of": pad_to_multiple_of,
            "padding_side": padding_side,
            "return_tensors": return_tensors,
            "return_token_type_ids": return_token_type_ids,
            "return_attention_mask": return_attention_mask,
            "return_special_tokens_mask": return_special_tokens_mask,
            "return_length": return_length,
            "verbose": verbose,
        }
        unsupported = {
            "text_pair": text_pair is not None,
            "text_target": text_target is not None,
            "text_pair_target": text_pair_target is not None,
            "stride": stride != 0,
            "is_split_into_words": bool(is_split_into_words),
            "return_overflowing_tokens": bool(return_overflowing_tokens),
            "return_offsets_mapping": bool(return_offsets_mapping),
        }
        # As transformers merges them: tokenizer_kwargs, then other keywords, over the explicit ones.
        given.update(tokenizer_kwargs or {})
        given.update(kwargs)
        if given.pop("sanitize_control_tokens", False):
            raise ValueError("chatfmt supports sanitize_control_tokens only through apply_chat_template")
        asked = sorted([k for k, v in unsupported.items() if v] + [k for k in given if k not in _ENCODE_ARGUMENTS])
        if asked:
            raise TypeError(f"chatfmt does not support the tokenizer arguments {asked}")
        if text is None:
            raise ValueError("You need to specify either `text` or `text_target`.")
        options = {k: given[k] for k in _CALL_OPTIONS}
        truncation = given["truncation"]
        padding_mode, truncates, max_length = self._strategies(
            given["padding"], truncation, given["max_length"], options["pad_to_multiple_of"]
        )
        if not _is_text_input(text):
            raise ValueError(
                "text input must be of type `str` (single example), `list[str]` (batch or single pretokenized "
                "example) or `list[list[str]]` (batch of pretokenized examples) or `list[tuple[list[str], "
                "list[str]]]` (batch of pretokenized sequence pairs)."
            )
        batched = not isinstance(text, str)
        texts = list(text) if batched else [text]
        if not all(isinstance(t, str) for t in texts):
            # tokenizers' own error, as transformers raises it
            raise TypeError("TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]")
        encode = dict(
            add_special_tokens=bool(given["add_special_tokens"]),
            truncation=truncates,
            max_length=max_length,
            padding=padding_mode,
            padding_side=self._padding_side(padding_mode, options["padding_side"]),
            pad_to_multiple_of=options["pad_to_multiple_of"],
            truncation_side=self.truncation_side,
        )
        if not texts:
            raise IndexError("list index out of range")  # transformers' failure on an empty batch
        tensors = _tensor_type(given["return_tensors"])
        rows = self._model.encode(texts, **encode)
        if truncates:
            self._check_only_second(truncation, texts, encode["add_special_tokens"], max_length)
        added = [[0] * len(r[0]) for r in rows]
        if options["return_special_tokens_mask"] and encode["add_special_tokens"]:
            layout = self._post_processor_layout()
            added = [_added_by_post_processor(r[1], layout) for r in rows]
        out = self._encoding([r[0] for r in rows], [r[1] for r in rows], added, options, batched=batched or bool(tensors))
        return out.convert_to_tensors(tensors) if tensors else out

    def encode(self, text: str, text_pair: Any = None, add_special_tokens: bool = True, **kwargs: Any) -> List[int]:
        """The ids of ``text`` (text pairs are not supported: ``TypeError``)."""
        return self(text, text_pair=text_pair, add_special_tokens=add_special_tokens, **kwargs)["input_ids"]

    def decode(
        self,
        token_ids: Any,
        skip_special_tokens: bool = False,
        clean_up_tokenization_spaces: Optional[bool] = None,
        **kwargs: Any,
    ) -> Union[str, List[str]]:
        """The text of ``token_ids`` (a list of texts for a batch of sequences), with transformers'
        ``clean_up_tokenization_spaces`` (which it ignores for BPE models)."""
        token_ids = _to_py_obj(token_ids)
        if isinstance(token_ids, (list, tuple)) and token_ids and isinstance(token_ids[0], (list, tuple)):
            return [self._decode(s, skip_special_tokens, clean_up_tokenization_spaces) for s in token_ids]
        return self._decode(token_ids, skip_special_tokens, clean_up_tokenization_spaces)

    def _decode(self, token_ids: Any, skip_special_tokens: bool, clean_up_tokenization_spaces: Optional[bool]) -> str:
        """One sequence's text (a dict gives its ``input_ids``' text)."""
        if isinstance(token_ids, dict):
            token_ids = token_ids["input_ids"]
        text = self._model.decode(_ids_list(token_ids), skip_special_tokens)
        if clean_up_tokenization_spaces is None:
            clean_up_tokenization_spaces = self.clean_up_tokenization_spaces
        if clean_up_tokenization_spaces:
            if (
                self._model.model_type == "BPE"
                and not self.clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output
            ):
                _warn_once(
                    "Ignoring clean_up_tokenization_spaces=True for BPE tokenizer. The clean_up_tokenization "
                    "post-processing step is designed for WordPiece tokenizers and is destructive for BPE."
                )
            else:
                text = clean_up_tokenization(text)
        return text

    def batch_decode(
        self,
        sequences: Any,
        skip_special_tokens: bool = False,
        clean_up_tokenization_spaces: Optional[bool] = None,
        **kwargs: Any,
    ) -> List[str]:
        """``decode`` of ``sequences``, a one-item list when that is one sequence's text."""
        result = self.decode(sequences, skip_special_tokens, clean_up_tokenization_spaces)
        return [result] if isinstance(result, str) else result

    def convert_ids_to_tokens(self, ids: Any, skip_special_tokens: bool = False) -> Any:
        """The token string of an id, or of each id of a list."""
        if isinstance(ids, int):
            return self._model.id_to_token(ids)
        special = set(self.all_special_tokens) if skip_special_tokens else set()
        tokens = [self._model.id_to_token(i) for i in _ids_list(ids)]
        return [t for t in tokens if t not in special]

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        """The id of a token string (the unknown token's id when absent), or of each of a list."""
        if isinstance(tokens, str):
            found = self._model.token_to_id(tokens)
            if found is None and "unk_token" in self.special_tokens_map:
                return self._model.token_to_id(self.special_tokens_map["unk_token"])
            return found
        return [self.convert_tokens_to_ids(t) for t in tokens]

    def get_vocab(self) -> Dict[str, int]:
        """Every token string with its id, added tokens included."""
        return self._model.vocab()

    @property
    def vocab_size(self) -> int:
        """The size of the tokenizer model's own vocabulary: without the added tokens ``len()`` counts."""
        return self._model.model_vocab_size()

    def __len__(self) -> int:
        return self._model.vocab_size()

    @property
    def truncation_side(self) -> str:
        """The side truncation cuts ("left" or "right", checked when set)."""
        return self._truncation_side

    @truncation_side.setter
    def truncation_side(self, value: str) -> None:
        _check_side("truncation", value)
        self._truncation_side = value

    @property
    def model_input_names(self) -> List[str]:
        """The model inputs ``tokenizer(...)`` returns by default (the config's ``model_input_names``)."""
        return list(self._model_input_names)

    def __reduce__(self) -> Any:
        """Pickles by the resolved model files and the changes made since loading, in a stable order,
        so that equal tokenizers pickle (and datasets fingerprints them) alike."""
        template = self.chat_template
        if isinstance(template, dict):
            template = dict(sorted(template.items()))
        state = {
            "path": self._model.path,
            "chat_template": template,
            "special_tokens": dict(sorted(self._model.special_tokens.items())),
            "extra_special_tokens": list(self._extra_special_tokens),
            "padding_side": self.padding_side,
            "truncation_side": self._truncation_side,
            "model_max_length": self.model_max_length,
            "clean_up_tokenization_spaces": self.clean_up_tokenization_spaces,
            "max_steps": self.max_steps,
        }
        return (_restore, (state,))

    def __repr__(self) -> str:
        return f"chatfmt.Tokenizer(name_or_path={self.name_or_path!r}, vocab_size={len(self) if self._model.has_tokenizer else 0})"


def _special_property(name: str) -> property:
    def get(self: Tokenizer) -> Optional[str]:
        return self._model.special_tokens.get(name)

    def set_(self: Tokenizer, value: Optional[str]) -> None:
        if value is not None and not isinstance(value, str):
            value = str(value)
        self._model.set_special_token(name, value)

    return property(get, set_, doc=f"The {name.replace('_', ' ')} (settable).")


def _special_id_property(name: str) -> property:
    def get(self: Tokenizer) -> Optional[int]:
        token = self._model.special_tokens.get(name)
        return None if token is None else self.convert_tokens_to_ids(token)

    def set_(self: Tokenizer, value: Optional[int]) -> None:
        self._model.set_special_token(name, None if value is None else self._model.id_to_token(int(value)))

    return property(get, set_, doc=f"The id of the {name.replace('_', ' ')} (settable).")


def _check_side(kind: str, value: Any) -> None:
    if value not in ("left", "right"):
        raise ValueError(f"{kind.capitalize()} side should be selected between 'right' and 'left', current value: {value}")


for _name in SPECIAL_TOKENS_ATTRIBUTES:
    setattr(Tokenizer, _name, _special_property(_name))
    setattr(Tokenizer, f"{_name}_id", _special_id_property(_name))


def _restore(state: Dict[str, Any]) -> Tokenizer:
    """A pickled :class:`Tokenizer`, loaded again from its files."""
    model = _native.Model.load(state["path"], None, None)
    tok = Tokenizer(model, _config(model.path))
    tok._extra_special_tokens = list(state["extra_special_tokens"])
    tokens = state["special_tokens"]
    for name in sorted(set(model.special_tokens) | set(tokens)):
        if model.special_tokens.get(name) != tokens.get(name):
            model.set_special_token(name, tokens.get(name))
    if tok.chat_template != state["chat_template"]:
        tok.chat_template = state["chat_template"]
    tok.padding_side = state["padding_side"]
    tok.truncation_side = state["truncation_side"]
    tok.model_max_length = state["model_max_length"]
    tok.clean_up_tokenization_spaces = state["clean_up_tokenization_spaces"]
    tok.max_steps = state["max_steps"]
    return tok


def _config(path: Optional[str]) -> Dict[str, Any]:
    """A model folder's ``tokenizer_config.json`` (empty when there is none)."""
    if not path or not os.path.isdir(path):
        return {}
    try:
        with open(os.path.join(path, "tokenizer_config.json"), encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError):
        return {}
    return config if isinstance(config, dict) else {}


def _extra_special_tokens(config: Dict[str, Any]) -> List[str]:
    """The config's extra special tokens (``extra_special_tokens`` / ``additional_special_tokens``)."""
    extra = config.get("extra_special_tokens") or config.get("additional_special_tokens") or []
    if isinstance(extra, dict):
        extra = list(extra.values())
    return [t["content"] if isinstance(t, dict) else str(t) for t in extra]
