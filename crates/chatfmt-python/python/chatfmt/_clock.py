"""``chatfmt.clock``: a fixed time for the templates' ``strftime_now``."""

import contextvars
import datetime
import functools
import inspect
from typing import Any, Callable, Optional, TypeVar, Union

_NOW: "contextvars.ContextVar[Optional[str]]" = contextvars.ContextVar("chatfmt_clock", default=None)

F = TypeVar("F", bound=Callable[..., Any])


def _iso(when: Union[str, datetime.datetime]) -> str:
    if isinstance(when, str):
        try:
            parsed = datetime.datetime.fromisoformat(when)
        except ValueError as e:
            raise ValueError(f"chatfmt.clock: not an ISO-8601 date and time: {when!r}") from e
    elif isinstance(when, datetime.datetime):
        parsed = when
    else:
        raise TypeError(f"chatfmt.clock takes an ISO-8601 string or a naive datetime, not {type(when).__name__}")
    if parsed.tzinfo is not None:
        raise ValueError(
            "chatfmt.clock takes a naive local time (as datetime.now() gives), not an aware datetime: "
            f"{parsed.isoformat()}"
        )
    return parsed.isoformat()


def current() -> Optional[str]:
    """The fixed time in effect here (ISO-8601), or None for the machine's clock."""
    return _NOW.get()


class clock:
    """Fixes what ``strftime_now`` sees: ``with chatfmt.clock("2025-07-10T12:00:00"): ...`` or as a
    decorator. The time is a naive local time, an ISO-8601 string or a naive ``datetime``. It holds for
    the current thread or asyncio task; nested clocks restore the outer one on exit."""

    def __init__(self, when: Union[str, datetime.datetime]):
        self._iso = _iso(when)
        self._tokens: list = []

    def __enter__(self) -> "clock":
        self._tokens.append(_NOW.set(self._iso))
        return self

    def __exit__(self, *exc: Any) -> None:
        _NOW.reset(self._tokens.pop())

    def __call__(self, func: F) -> F:
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                token = _NOW.set(self._iso)
                try:
                    return await func(*args, **kwargs)
                finally:
                    _NOW.reset(token)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            token = _NOW.set(self._iso)
            try:
                return func(*args, **kwargs)
            finally:
                _NOW.reset(token)

        return wrapper  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"chatfmt.clock({self._iso!r})"
