"""``get_json_schema``: a Python function as the JSON schema of a tool, as transformers 5.23.0 makes
it from its type hints and Google-style docstring (description, ``Args:`` with an optional
``(choices: [...])`` suffix, ``Returns:``)."""

import enum
import inspect
import json
import re
import sys
import types
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["DocstringParsingException", "TypeHintParsingException", "get_json_schema"]


class TypeHintParsingException(Exception):
    """A type hint has no JSON schema."""


class DocstringParsingException(Exception):
    """The docstring lacks what the schema needs."""


_SCALARS: Dict[type, str] = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}
_BARE: Dict[Any, Dict[str, Any]] = {
    **{t: {"type": name} for t, name in _SCALARS.items()},
    list: {"type": "array"},
    tuple: {"type": "array"},
    dict: {"type": "object"},
    Any: {},
}

# Docstring sections: the description runs up to the first section header; a section runs to the next.
_DESCRIPTION = re.compile(r"^(.*?)[\n\s]*(?:Args:|Returns:|Raises:|\Z)", re.DOTALL)
_ARGS = re.compile(r"\n\s*Args:\n(.*?)[\n\s]*(?:Returns:|Raises:|\Z)", re.DOTALL)
_RETURNS = re.compile(r"\n\s*Returns:\n\s*(.*?)[\n\s]*(?:Raises:|\Z)", re.DOTALL)
# One `name: description` entry of Args; it ends where a line at the same or a shallower indent starts another.
_ARG = re.compile(r"(?:^|\n)([ \t]*)(\w+):\s*(.*?)\s*(?=\n(?!\1[ \t])[ \t]*\w+:|\Z)", re.DOTALL)
_CHOICES = re.compile(r"\(choices:\s*(.*?)\)\s*$", re.IGNORECASE)

_CUSTOM_CLASS = (
    "Couldn't convert the type hint {!r} to a JSON schema, likely because it is a custom class or object. "
    "Supported type hints are basic types like int, float, str and bool, Enum classes, typing.Literal, and "
    "list, tuple, dict and Union types containing those. If you need a more complex schema than that, you can "
    "write the JSON schema for your tool by hand and pass that instead of the function."
)


_PRE_RELEASE = re.compile(r"[-_.]?(a|b|c|rc|alpha|beta|pre|preview|dev)", re.IGNORECASE)


def _at_least_2_6(version: str) -> bool:
    """Whether ``version`` is 2.6.0 or later by PEP 440, as transformers' ``is_torch_available`` decides
    with ``packaging``: a pre-release or development build of 2.6.0 (``2.6.0a0+git...``, ``2.6.0.dev...``) is
    earlier, a post-release or local build (``2.6.0+cu124``) is not; an unreadable version is not."""
    found = re.fullmatch(r"\s*v?(\d+(?:\.\d+)*)(.*?)\s*", version, re.IGNORECASE)
    if found is None:
        return False
    release = [int(n) for n in found.group(1).split(".")]
    release += [0] * (3 - len(release))
    if release != [2, 6, 0] + [0] * (len(release) - 3):
        return release > [2, 6, 0]
    return _PRE_RELEASE.match(found.group(2).split("+")[0]) is None


def _bare_schema(hint: Any) -> Optional[Dict[str, Any]]:
    """transformers' ``_get_json_schema_type``: also ``PIL.Image.Image`` as ``"image"`` and, with torch
    2.6 or later, ``torch.Tensor`` as ``"audio"`` (a hint that is one has its module imported already,
    so neither is imported here); an unhashable hint raises ``TypeError`` as there."""
    image, torch = sys.modules.get("PIL.Image"), sys.modules.get("torch")
    if image is not None and hint is image.Image:
        return {"type": "image"}
    if torch is not None and hint is torch.Tensor:
        if _at_least_2_6(str(torch.__version__)):
            return {"type": "audio"}
    return _BARE.get(hint)


def _enum_schema(values: List[Any]) -> Dict[str, Any]:
    kinds: List[str] = []
    for v in values:
        if _SCALARS[type(v)] not in kinds:
            kinds.append(_SCALARS[type(v)])
    return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": values}


def _is_union(origin: Any) -> bool:
    return origin is typing.Union or (getattr(types, "UnionType", None) is not None and origin is types.UnionType)


def _hint_schema(hint: Any) -> Dict[str, Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is None:
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            values = [m.value for m in hint]
            if not values:
                raise TypeHintParsingException(f"The Enum {hint.__name__} has no members, so no value could ever match it.")
            if any(type(v) not in _SCALARS for v in values):
                raise TypeHintParsingException(
                    f"The Enum {hint.__name__} has member values that cannot be written as JSON scalars.\n"
                    f"Values: {values}\n"
                    "Enum member values must be int, float, str, bool or None to be converted to a JSON schema."
                )
            return _enum_schema(values)
        known = _bare_schema(hint)
        if known is None:
            raise TypeHintParsingException(_CUSTOM_CLASS.format(hint))
        return dict(known)
    if _is_union(origin):
        members = [_hint_schema(a) for a in args if a is not type(None)]
        if len(members) == 1:
            out = members[0]
        elif all(set(m) == {"type"} and isinstance(m["type"], str) for m in members):
            names = sorted({m["type"] for m in members})
            out = {"type": names[0] if len(names) == 1 else names}
        else:
            out = {"anyOf": members}
        if type(None) in args:
            out["nullable"] = True
        return out
    if origin is typing.Literal and args:
        if any(type(a) not in _SCALARS for a in args):
            raise TypeHintParsingException("Only the valid python literals can be listed in typing.Literal.")
        return _enum_schema(list(args))
    if origin is list:
        return {"type": "array", "items": _hint_schema(args[0])} if args else {"type": "array"}
    if origin is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 1:
            shown = str(hint).replace("typing.", "")
            raise TypeHintParsingException(
                f"The type hint {shown} is a Tuple with a single element, which we do not automatically convert to "
                "JSON schema as it is rarely necessary. If this input can contain more than one element, we recommend "
                "using a list[] type instead, or if it really is a single element, remove the tuple[] wrapper and just "
                "pass the element directly."
            )
        if ... in args:
            raise TypeHintParsingException(
                "Conversion of '...' is not supported in Tuple type hints. Use list[] types for variable-length inputs instead."
            )
        return {"type": "array", "prefixItems": [_hint_schema(a) for a in args]}
    if origin is dict:
        out: Dict[str, Any] = {"type": "object"}
        if len(args) == 2:
            out["additionalProperties"] = _hint_schema(args[1])
        return out
    raise TypeHintParsingException("Couldn't parse this type hint, likely due to a custom class or object: ", hint)


def _parameters(func: Callable[..., Any], name: str) -> Dict[str, Any]:
    hints = typing.get_type_hints(func)
    params = inspect.signature(func).parameters
    first = next(iter(params), None)
    # `==`, as transformers compares: an annotation or default may define its own equality.
    receiver = first if first in ("self", "cls") and params[first].annotation == inspect.Parameter.empty else None
    required = []
    for pname, param in params.items():
        if pname == receiver:
            continue
        if param.annotation == inspect.Parameter.empty:
            raise TypeHintParsingException(f"Argument {pname} is missing a type hint in function {name}")
        if param.default == inspect.Parameter.empty:
            required.append(pname)
    properties: Dict[str, Any] = {}
    for pname, hint in hints.items():
        if pname == receiver:
            continue
        if pname != "return":
            properties[pname] = _hint_schema(hint)
            continue
        # A return hint without a schema is left out: the model never writes the return value.
        try:
            properties["return"] = _hint_schema(hint)
        except TypeHintParsingException:
            pass
    schema: Dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _docstring_parts(doc: str) -> Tuple[Optional[str], Dict[str, str], Optional[str]]:
    description = _DESCRIPTION.search(doc)
    args = _ARGS.search(doc)
    returns = _RETURNS.search(doc)
    described: Dict[str, str] = {}
    if args is not None:
        block = "\n".join(line for line in args.group(1).split("\n") if line.strip())
        for _indent, arg, text in _ARG.findall(block):
            described[arg] = re.sub(r"\s*\n+\s*", " ", text.strip())
    return (
        description.group(1).strip() if description else None,
        described,
        returns.group(1).strip() if returns else None,
    )


def get_json_schema(func: Callable[..., Any]) -> Dict[str, Any]:
    """The tool schema of ``func`` (``{"type": "function", "function": {...}}``) as transformers'
    ``get_json_schema`` builds it, raising its ``DocstringParsingException`` and
    ``TypeHintParsingException`` with its messages."""
    doc = inspect.getdoc(func)
    name = getattr(func, "__name__", "operation")
    if not doc:
        raise DocstringParsingException(f"Cannot generate JSON schema for {name} because it has no docstring!")
    description, described, returns_doc = _docstring_parts(doc.strip())
    parameters = _parameters(func, name)
    returns = parameters["properties"].pop("return", None)
    if returns is not None and returns_doc is not None:
        returns["description"] = returns_doc
    for arg, schema in parameters["properties"].items():
        if arg not in described:
            raise DocstringParsingException(
                f"Cannot generate JSON schema for {name} because the docstring has no description for the argument '{arg}'"
            )
        text = described[arg]
        choices = _CHOICES.search(text)
        if choices:
            schema["enum"] = [c.strip() if isinstance(c, str) else c for c in json.loads(choices.group(1))]
            text = text[: choices.start()].strip()
        schema["description"] = text
    function: Dict[str, Any] = {"name": name, "description": description, "parameters": parameters}
    if returns is not None:
        function["return"] = returns
    return {"type": "function", "function": function}
