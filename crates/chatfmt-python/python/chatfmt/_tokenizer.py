"""``chatfmt.Tokenizer``: a model's chat template and tokenizer with transformers' API."""

import inspect
import json
import logging
import os
import re
from typing import Any, Dict, List, Optional, Union

from . import _native
from ._clock import current as _current_clock
from ._encoding import TENSOR_TYPES, BatchEncoding, to_tensor

_logger = logging.getLogger("chatfmt")
_warned: set = set()

SPECIAL_TOKENS_ATTRIBUTES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
# transformers' "no limit" model_max_length (VERY_LARGE_INTEGER).
_VERY_LARGE_INTEGER = int(1e30)
_GENERATION_TAG = re.compile(r"\{\%-?\s*generation\s*-?\%\}")


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        _logger.warning(message)


def _padding(padding: Any) -> str:
    value = getattr(padding, "value", padding)
    if value is False or value is None or value == "do_not_pad":
        return "none"
    if value is True or value == "longest":
        return "longest"
    if value == "max_length":
        return "max_length"
    raise ValueError(f"{padding!r} is not a valid PaddingStrategy, please select one of ['longest', 'max_length', 'do_not_pad']")


def _tensor_type(return_tensors: Any) -> Optional[str]:
    if return_tensors is None:
        return None
    value = str(getattr(return_tensors, "value", return_tensors))
    if value not in TENSOR_TYPES:
        raise ValueError(f"{value!r} is not a valid TensorType, please select one of {list(TENSOR_TYPES)}")
    return value


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


def _ids_list(ids: Any) -> List[int]:
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    if isinstance(ids, int):
        return [ids]
    return [int(i) for i in ids]


class Tokenizer:
    """A model's chat template(s) and tokenizer, rendering and encoding as transformers 5.23.0 does.

    Load with :meth:`from_pretrained`; ``apply_chat_template`` and the common tokenizer methods
    behave as transformers'. ``render`` returns what ``chatfmt tokenize --json`` prints.
    """

    def __init__(self, model: "_native.Model", extra_special_tokens: Optional[List[str]] = None):
        self._model = model
        self._extra_special_tokens = list(extra_special_tokens or [])
        self._padding_side = model.padding_side or "right"
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
        ``tokenizer.json`` is needed only to encode. ``padding_side`` may be given as a keyword."""
        padding_side = kwargs.pop("padding_side", None)
        if kwargs:
            raise TypeError(f"from_pretrained() got unexpected keyword arguments: {', '.join(sorted(kwargs))}")
        path = os.fspath(path_or_repo_id)
        model = _native.Model.load(path, os.fspath(cache_dir) if cache_dir is not None else None, revision)
        tok = cls(model, _extra_special_tokens(model.path))
        if padding_side is not None:
            tok.padding_side = padding_side
        return tok

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
        tokenizer_kwargs = dict(tokenizer_kwargs or {})
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
        tensors = _tensor_type(return_tensors) if tokenize else None
        padding_side = tokenizer_kwargs.pop("padding_side", None) or self.padding_side
        if tokenizer_kwargs:
            raise TypeError(f"chatfmt does not support tokenizer_kwargs {sorted(tokenizer_kwargs)}")
        rows = self._apply(
            conversations,
            tools=tools,
            documents=documents,
            chat_template=chat_template,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message,
            kwargs=kwargs,
            tokenize=tokenize,
            assistant_masks=return_assistant_tokens_mask,
            padding=_padding(padding),
            truncation=bool(truncation),
            max_length=max_length,
            padding_side=padding_side,
            sanitize=sanitize_control_tokens,
        )
        if not tokenize:
            texts = [r[0] for r in rows]
            return texts if is_batched else texts[0]
        pick = (lambda i: [r[i] for r in rows]) if (is_batched or tensors) else (lambda i: rows[0][i])
        out = BatchEncoding(input_ids=pick(1), attention_mask=pick(2))
        if return_assistant_tokens_mask:
            out["assistant_masks"] = pick(3)
        if tensors:
            out.convert_to_tensors(tensors)
        return out if return_dict else out["input_ids"]

    def _apply(self, conversations: list, *, tools: Any, documents: Any, continue_final_message: Any, **options: Any) -> list:
        schemas = _tool_schemas(tools)
        if documents is not None:
            for document in documents:
                if not isinstance(document, dict):
                    raise TypeError("Documents should be a list of dicts with 'title' and 'text' keys!")
        field = None
        if continue_final_message:
            field = continue_final_message if isinstance(continue_final_message, str) else "content"
        return self._model.apply(
            [getattr(c, "messages", c) for c in conversations],
            tools=schemas,
            documents=documents,
            continue_final_message=field,
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
        ``assistant_masks`` when masks apply, ``template``), or with ``tokenize=False`` as
        ``chatfmt render --json`` (``text``, ``template``). ``masks="auto"`` adds assistant masks when
        the template has ``{% generation %}`` blocks."""
        source = self.get_chat_template(chat_template, tools)
        if masks == "auto":
            want_masks = bool(tokenize and _GENERATION_TAG.search(source))
        elif isinstance(masks, bool):
            want_masks = masks
        else:
            raise ValueError(f"masks must be 'auto', True or False, not {masks!r}")
        if want_masks and not tokenize:
            raise ValueError("masks=True needs tokenize=True")
        messages = list(getattr(conversation, "messages", conversation))
        [row] = self._apply(
            [messages],
            tools=tools,
            documents=documents,
            chat_template=chat_template,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message,
            kwargs=dict(template_kwargs or {}),
            tokenize=tokenize,
            assistant_masks=want_masks,
            padding="none",
            truncation=max_length is not None,
            max_length=max_length,
            padding_side=None,
            sanitize=False,
        )
        template = self._model.template_info(chat_template, tools is not None)
        if not tokenize:
            return {"text": row[0], "template": template}
        out: Dict[str, Any] = {"input_ids": row[1], "attention_mask": row[2]}
        if want_masks:
            out["assistant_masks"] = row[3]
        out["template"] = template
        return out

    # Tokenizer -----------------------------------------------------------------------------

    def __call__(
        self,
        text: Union[str, List[str]],
        add_special_tokens: bool = True,
        padding: Any = False,
        truncation: bool = False,
        max_length: Optional[int] = None,
        return_tensors: Any = None,
        padding_side: Optional[str] = None,
        **kwargs: Any,
    ) -> BatchEncoding:
        """Encodes a text (or a list of texts) as ``tokenizer(text)``: ``input_ids`` and ``attention_mask``."""
        if kwargs.pop("sanitize_control_tokens", False):
            raise ValueError("chatfmt supports sanitize_control_tokens only through apply_chat_template")
        if kwargs:
            raise TypeError(f"chatfmt does not support the tokenizer arguments {sorted(kwargs)}")
        if not isinstance(text, (str, list, tuple)):
            raise TypeError(f"text input must be of type `str` (single example) or `list[str]` (batch), not {type(text).__name__}")
        batched = not isinstance(text, str)
        texts = list(text) if batched else [text]
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("text input must be of type `str` (single example) or `list[str]` (batch)")
        tensors = _tensor_type(return_tensors)
        rows = self._model.encode(
            texts,
            add_special_tokens=add_special_tokens,
            truncation=bool(truncation),
            max_length=max_length,
            padding=_padding(padding),
            padding_side=padding_side or self.padding_side,
        )
        if batched or tensors:
            out = BatchEncoding(input_ids=[r[0] for r in rows], attention_mask=[r[1] for r in rows])
        else:
            out = BatchEncoding(input_ids=rows[0][0], attention_mask=rows[0][1])
        return out.convert_to_tensors(tensors) if tensors else out

    def encode(self, text: str, add_special_tokens: bool = True, **kwargs: Any) -> List[int]:
        """The ids of ``text``."""
        return self(text, add_special_tokens=add_special_tokens, **kwargs)["input_ids"]

    def decode(self, token_ids: Any, skip_special_tokens: bool = False, **kwargs: Any) -> str:
        """The text of ``token_ids``."""
        return self._model.decode(_ids_list(token_ids), skip_special_tokens)

    def batch_decode(self, sequences: Any, skip_special_tokens: bool = False, **kwargs: Any) -> List[str]:
        """The text of each sequence of ids."""
        if hasattr(sequences, "tolist"):
            sequences = sequences.tolist()
        return [self.decode(s, skip_special_tokens=skip_special_tokens) for s in sequences]

    def convert_ids_to_tokens(self, ids: Any, skip_special_tokens: bool = False) -> Any:
        """The token string of an id, or of each id of a list."""
        if isinstance(ids, int):
            return self._model.id_to_token(ids)
        special = set(self.all_special_tokens) if skip_special_tokens else set()
        tokens = [self._model.id_to_token(i) for i in _ids_list(ids)]
        return [t for t in tokens if t not in special]

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        """The id of a token string (the unknown token's id when absent), or of each of a list."""
        if tokens is None:
            return None
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
        return self._model.vocab_size()

    def __len__(self) -> int:
        return self._model.vocab_size()

    @property
    def padding_side(self) -> str:
        return self._padding_side

    @padding_side.setter
    def padding_side(self, value: str) -> None:
        if value not in ("left", "right"):
            raise ValueError(f"Padding side should be selected between 'right' and 'left', current value: {value}")
        self._padding_side = value

    @property
    def truncation_side(self) -> str:
        return self._model.truncation_side or "right"

    @property
    def model_max_length(self) -> int:
        limit = self._model.model_max_length
        return _VERY_LARGE_INTEGER if limit is None else limit

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
            "padding_side": self._padding_side,
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


for _name in SPECIAL_TOKENS_ATTRIBUTES:
    setattr(Tokenizer, _name, _special_property(_name))
    setattr(Tokenizer, f"{_name}_id", _special_id_property(_name))


def _restore(state: Dict[str, Any]) -> Tokenizer:
    """A pickled :class:`Tokenizer`, loaded again from its files."""
    model = _native.Model.load(state["path"], None, None)
    tok = Tokenizer(model, state["extra_special_tokens"])
    tokens = state["special_tokens"]
    for name in sorted(set(model.special_tokens) | set(tokens)):
        if model.special_tokens.get(name) != tokens.get(name):
            model.set_special_token(name, tokens.get(name))
    if tok.chat_template != state["chat_template"]:
        tok.chat_template = state["chat_template"]
    tok.padding_side = state["padding_side"]
    return tok


def _extra_special_tokens(path: Optional[str]) -> List[str]:
    """The config's extra special tokens (``extra_special_tokens`` / ``additional_special_tokens``)."""
    if not path or not os.path.isdir(path):
        return []
    try:
        with open(os.path.join(path, "tokenizer_config.json"), encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError):
        return []
    extra = config.get("extra_special_tokens") or config.get("additional_special_tokens") or []
    if isinstance(extra, dict):
        extra = list(extra.values())
    return [t["content"] if isinstance(t, dict) else str(t) for t in extra]
