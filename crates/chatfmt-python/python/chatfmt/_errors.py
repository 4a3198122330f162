"""Exceptions: jinja2's classes as ``chatfmt.<Name>``.

Each derives from :class:`TemplateError`; when jinja2 is installed each also derives from
jinja2's class of the same name, so ``except jinja2.TemplateError`` handlers keep working.
Builtin errors (``TypeError``, ``ValueError``, ...) are raised as themselves.
"""

from typing import Optional

try:
    import jinja2.exceptions as _jinja
except ImportError:  # jinja2 is optional
    _jinja = None


def _base(name: str) -> tuple:
    cls = getattr(_jinja, name, None) if _jinja is not None else None
    return (cls,) if cls is not None else ()


class TemplateError(*(_base("TemplateError") or (Exception,))):
    """A template failed: the template's own ``raise_exception`` or any Jinja error below."""

    def __init__(self, message: Optional[str] = None, lineno: Optional[int] = None, name: Optional[str] = None):
        Exception.__init__(self, message)
        self.lineno = lineno
        self.name = name
        self.filename = name
        self.source = None
        self.translated = True

    @property
    def message(self) -> Optional[str]:
        return self.args[0] if self.args else None

    def __str__(self) -> str:
        return str(self.message) if self.message is not None else ""


def _subclass(name: str, doc: str) -> type:
    return type(name, (TemplateError, *_base(name)), {"__doc__": doc, "__module__": "chatfmt"})


TemplateSyntaxError = _subclass("TemplateSyntaxError", "The template does not parse.")
TemplateAssertionError = _subclass("TemplateAssertionError", "A compile-time check failed (unknown filter or test).")
TemplateRuntimeError = _subclass("TemplateRuntimeError", "A runtime failure of the template, e.g. an unknown filter in a branch that ran.")
UndefinedError = _subclass("UndefinedError", "An operation on an undefined value.")
SecurityError = _subclass("SecurityError", "The sandbox refused an attribute or call.")
FilterArgumentError = _subclass("FilterArgumentError", "A filter got an argument it cannot use.")
TemplateError.__module__ = "chatfmt"


class LimitError(TemplateError):
    """A resource limit of chatfmt's sandbox (steps, depth, output or value size) was exceeded."""

    __module__ = "chatfmt"


class OffsetError(ValueError):
    """The token offsets an assistant mask needs cannot be rebuilt for this tokenizer and text."""

    __module__ = "chatfmt"
