"""``chatfmt.get_json_schema`` equals transformers' ``get_json_schema`` (schemas, exception classes by
name and messages) on functions of the kinds transformers' own tests use, and tools given as functions
render as transformers renders them."""

import enum
import sys
import types
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

import pytest

import chatfmt


def simple(x: int):
    """
    Test function

    Args:
        x: The input
    """


def two_args(x: int, y: float):
    """
    Test function

    Args:
        x: The input
        y: Also the input
    """


def with_defaults(x: int, y: int = 2):
    """
    Test function

    Args:
        x: The input
        y: Optional, with a default
    """


def nested_list(x: List[List[Union[int, str]]]):
    """
    Test function

    Args:
        x: The input
    """


def optional_and_union(x: Optional[int], y: Union[int, str, None] = None, z: "int | float" = 1):
    """
    Test function

    Args:
        x: An optional int
        y: A union with None
        z: A union written with a bar
    """


def with_choices(temperature_format: str, x: int):
    """
    Test function

    Args:
        temperature_format: The temperature format to use (Choices: ["celsius", "fahrenheit"])
        x: A number (choices: [1, 2, 3])
    """


def with_returns(x: int) -> int:
    """
    Test function

    Args:
        x: The input

    Returns:
        The output
    """


def multiline(x: int, y: Dict[str, List[float]]):
    """
    Test function that has a longer description
    spanning two lines.

    Args:
        x: The input, described
            over two lines
        y: A dict of lists

    Returns:
        Nothing useful

    Raises:
        ValueError: never
    """


def tuples(x: Tuple[int, str], y: Tuple[float, ...] = (1.0,)):
    """
    Test function

    Args:
        x: A pair
        y: A variable tuple
    """


def literals(mode: Literal["fast", "slow", 3], flag: Literal[True, None] = True):
    """
    Test function

    Args:
        mode: The mode
        flag: A flag
    """


class Colour(enum.Enum):
    RED = "red"
    GREEN = 2


def enums(colour: Colour, anything: Any, items: list, mapping: dict):
    """
    Test function

    Args:
        colour: A colour
        anything: Anything at all
        items: Some items
        mapping: A mapping
    """


def no_docstring(x: int):
    pass


def missing_arg_doc(x: int, y: int):
    """
    Test function

    Args:
        x: The input
    """


def missing_hint(x: int, y):
    """
    Test function

    Args:
        x: The input
        y: No hint
    """


class Custom:
    pass


def custom_class(x: Custom):
    """
    Test function

    Args:
        x: A custom object
    """


def single_tuple(x: Tuple[int]):
    """
    Test function

    Args:
        x: A one-element tuple
    """


class Tools:
    def method(self, x: int) -> str:
        """
        A method

        Args:
            x: The input
        """
        return str(x)


def no_arguments():
    """
    Takes nothing.
    """


def bare_containers(items: list, pair: tuple, table: dict):
    """
    Bare builtin containers.

    Args:
        items: Some items
        pair: A pair
        table: A table
    """


def repeated_json_types(x: list | tuple, y: list | tuple | dict | None = None):
    """
    Unions whose members share a JSON type.

    Args:
        x: Array either way
        y: Array, object or nothing
    """


def builtin_generics(x: list[list[str | int]], y: int | str | None = None) -> dict[str, int]:
    """
    PEP 585 and PEP 604 hints.

    Args:
        x: Nested lists
        y: A bar union with None
    """


def any_of(x: str | list[str], y: Literal["up", "down"] | int | None = None):
    """
    Unions of complex types become anyOf.

    Args:
        x: A string or strings
        y: A direction or a number
    """


def returns_after_blank_lines(x: int) -> int:
    """
    Two blank lines before Returns.

    Args:
        x: The input


    Returns:
        The output
    """


def typed_choices(rating: int, enabled: bool, level: float):
    """
    Choices that are not strings.

    Args:
        rating: A rating (choices: [1, 2, 3])
        enabled: On or off (choices: [true, false])
        level: A level (Choices: [0.5, 1.5])
    """


def mixed_literal(answer: Literal[True, False, 0, 1, "y", "n"] = False):
    """
    A literal of several JSON types.

    Args:
        answer: Something boolean-ish
    """


def spaced_args(x: int, y: int) -> None:
    """
    Blank lines between arguments.

    Args:
        x: The first

        y: The second, whose description runs
           onto a second line.

    Returns:
        Nothing at all
    """


def everything(a: str, b: list[str | int] | None, c: tuple[str | int, str] = (1, "x")) -> tuple[int, str]:
    """
    All features at once, with choices inside a multi-line description.

    Args:
        a: The first input, described over
           two lines and with
           (choices: ["p", "q"])

        b: A list that may be missing.

        c: A pair with a default.

    Returns:
        A pair, described over
        two lines.
    """


def open_tuple(x: tuple[int, ...]):
    """
    Variable-length tuples are refused.

    Args:
        x: The input
    """


class Methods:
    def bound(self, x: int) -> str:
        """
        A method.

        Args:
            x: The input
        """
        return str(x)

    @staticmethod
    def static(x: int):
        """
        A static method.

        Args:
            x: The input
        """

    @classmethod
    def of_class(cls, x: int):
        """
        A class method.

        Args:
            x: The input
        """


class _EqualsAnything(type):
    """A class equal to every value, as ``mock.ANY`` is: transformers compares annotations and defaults with
    ``inspect.Parameter.empty`` by ``==``."""

    def __eq__(cls, other):
        return True

    __hash__ = type.__hash__


class Anything(metaclass=_EqualsAnything):
    pass


def default_equal_to_empty(x: int = Anything):
    """
    A default equal to everything counts as no default.

    Args:
        x: The input
    """


def receiver_hint_equal_to_empty(self: Anything, x: int):
    """
    A `self` whose hint equals everything is the receiver.

    Args:
        x: The input
    """


def hint_equal_to_empty(x: Anything):
    """
    A hint equal to everything is a missing hint.

    Args:
        x: The input
    """


FUNCTIONS = [
    simple, two_args, with_defaults, nested_list, optional_and_union, with_choices, with_returns, multiline,
    literals, enums, Tools().method, no_arguments, bare_containers, repeated_json_types, builtin_generics, any_of,
    returns_after_blank_lines, typed_choices, mixed_literal, spaced_args, everything, Methods.bound, Methods().bound,
    Methods.static, Methods().static, Methods.of_class, Methods().of_class, default_equal_to_empty,
    receiver_hint_equal_to_empty,
]
FAILING = [
    no_docstring, missing_arg_doc, missing_hint, custom_class, single_tuple, tuples, open_tuple, hint_equal_to_empty,
]


@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f.__qualname__)
def test_schema_equals_transformers(func):
    from transformers.utils import get_json_schema

    assert chatfmt.get_json_schema(func) == get_json_schema(func)


@pytest.mark.parametrize("func", FAILING, ids=lambda f: f.__name__)
def test_failures_equal_transformers(func):
    from transformers.utils import get_json_schema

    with pytest.raises(Exception) as theirs:
        get_json_schema(func)
    with pytest.raises(Exception) as ours:
        chatfmt.get_json_schema(func)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert ours.value.args == theirs.value.args
    assert isinstance(ours.value, (chatfmt.DocstringParsingException, chatfmt.TypeHintParsingException))


def test_function_tools_render_as_transformers_renders_them(tmp_path):
    from transformers import AutoTokenizer

    from conftest import kit_dir

    d = kit_dir("tokens") / "tokenizers" / "qwen3"
    ours, theirs = chatfmt.Tokenizer.from_pretrained(d), AutoTokenizer.from_pretrained(str(d))
    messages = [{"role": "user", "content": "Weather?"}]
    tools = [with_choices, {"type": "function", "function": {"name": "raw", "parameters": {}}}]
    want = theirs.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)
    assert ours.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True) == want


@pytest.mark.parametrize(
    "version, audio",
    [("2.5.1", False), ("2.6.0", True), ("2.6", True), ("2.6.0+cu124", True), ("2.6.0.post1", True),
     ("2.6.0a0+git1234", False), ("2.6.0.dev20250101", False), ("2.6.0rc1", False), ("2.7.0a0", True),
     ("2.10.0", True), ("unknown", False)],
)
def test_tensor_hints_follow_the_torch_version_as_transformers_reads_it(version, audio, monkeypatch):
    from packaging.version import InvalidVersion, parse

    try:
        expected = parse(version) >= parse("2.6.0")
    except InvalidVersion:
        expected = False
    assert expected == audio
    torch = types.ModuleType("torch")
    torch.__version__ = version
    torch.Tensor = type("Tensor", (), {})
    monkeypatch.setitem(sys.modules, "torch", torch)

    def listen(a: torch.Tensor):
        """
        Listens.

        Args:
            a: The audio
        """

    if audio:
        assert chatfmt.get_json_schema(listen)["function"]["parameters"]["properties"]["a"] == {
            "type": "audio",
            "description": "The audio",
        }
    else:
        with pytest.raises(chatfmt.TypeHintParsingException):
            chatfmt.get_json_schema(listen)


def test_a_patched_tokenizer_raises_transformers_exceptions_for_tools():
    from transformers import AutoTokenizer
    from transformers.utils.chat_template_utils import DocstringParsingException

    from conftest import kit_dir

    tok = chatfmt.patch(AutoTokenizer.from_pretrained(str(kit_dir("tokens") / "tokenizers" / "qwen3")))
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(DocstringParsingException):
        tok.apply_chat_template(messages, tools=[no_docstring], tokenize=False)
    text = tok.apply_chat_template(messages, tools=[with_choices], tokenize=False)
    assert chatfmt.unpatch(tok).apply_chat_template(messages, tools=[with_choices], tokenize=False) == text
