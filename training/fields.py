"""The building blocks of config checking: a ``Field`` per key and the helpers that apply them.

Every check raises through ``Source.error``, so each message names the file, the key (in the
form ``optimizers[0].learning_rate``) and what was expected, and says when the value came from
``--set``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable

from .config import Source

REQUIRED = object()


@dataclass(frozen=True)
class Field:
    """One key: what it must be (in words, for errors), a test, and its default.

    A ``None`` default means optional and left out of the resolved config (TOML has no null).
    """
    description: str
    accepts: Callable[[Any], bool]
    default: Any = None


def is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def positive_int(default: Any = REQUIRED) -> Field:
    return Field("a positive integer", lambda v: is_integer(v) and v > 0, default)


def number_in(description: str, test: Callable[[float], bool], default: Any = None) -> Field:
    return Field(description, lambda v: is_number(v) and test(v), default)


def boolean(default: Any = None) -> Field:
    return Field("true or false", lambda v: isinstance(v, bool), default)


def one_of(choices: tuple[str, ...], default: Any = None) -> Field:
    return Field(f"one of {', '.join(map(repr, choices))}", lambda v: v in choices, default)


def array_of_strings(description: str, default: Any = None) -> Field:
    return Field(description, lambda v: isinstance(v, list)
                 and all(isinstance(item, str) for item in v), default)


POSITIVE = number_in("a positive number", lambda v: v > 0)
FRACTION = number_in("a number from 0 up to (not including) 1", lambda v: 0 <= v < 1)
NON_NEGATIVE = number_in("a non-negative number", lambda v: v >= 0)


def kind_of(value: Any) -> str:
    """A value's type in TOML's words, for error messages."""
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a float"),
                       (str, "a string"), (list, "an array"), (dict, "a table")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def check(value: Any, field: Field, key: str, source: Source) -> Any:
    if not field.accepts(value):
        raise source.error(key, f"expected {field.description}, got {value!r} ({kind_of(value)})")
    return value


def as_table(value: Any, key: str, source: Source) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise source.error(key, f"expected a table ([{key}] or {key} = {{...}}), "
                                f"got {value!r} ({kind_of(value)})")
    return value


def reject_unknown(table: dict[str, Any], known: Any, key: str, source: Source) -> None:
    for name in table:
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise source.error(join_key(key, name),
                               f"unknown key{hint}; expected one of {', '.join(known)}")


def join_key(key: str, name: str | int) -> str:
    """``key`` extended by a table key (``a.b``) or an array index (``a[0]``)."""
    return f"{key}[{name}]" if isinstance(name, int) else (f"{key}.{name}" if key else name)


def check_fields(table: dict[str, Any], fields: dict[str, Field], key: str, source: Source,
                 extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """Check ``table`` against ``fields`` (``extra`` keys are the caller's); fill defaults."""
    reject_unknown(table, [*extra, *fields], key, source)
    resolved = {}
    for name, field in fields.items():
        if name in table:
            resolved[name] = check(table[name], field, join_key(key, name), source)
        elif field.default is REQUIRED:
            raise source.error(join_key(key, name), f"missing required key ({field.description})")
        elif field.default is not None:
            resolved[name] = field.default
    return resolved
