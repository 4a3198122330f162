"""``chatfmt.get_json_schema`` equals transformers' ``get_json_schema`` (schemas, exception classes by
name and messages) on functions of the kinds transformers' own tests use, and tools given as functions
render as transformers renders them."""

import enum
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


FUNCTIONS = [
    simple, two_args, with_defaults, nested_list, optional_and_union, with_choices, with_returns, multiline,
    literals, enums, Tools().method,
]
FAILING = [no_docstring, missing_arg_doc, missing_hint, custom_class, single_tuple, tuples]


@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f.__name__)
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
