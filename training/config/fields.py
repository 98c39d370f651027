"""The building blocks of config checking: a ``Field`` per key and the helpers that apply them.

Every check raises through ``Source.error``, so each message names the file, the key (in the
form ``optimizers[0].learning_rate``) and what was expected, and says when the value came from
``--set``. The keys of a library class (a layer, an optimizer, a schedule, a loss) come from
its constructor's signature (``constructor_fields``), and its own checks judge the values
(``construct``): the runner keeps no copy of the library's names or bounds.
"""

from __future__ import annotations

import difflib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

REQUIRED = object()


class ConfigError(ValueError):
    """A config is invalid; the message names the file, the key and what was expected."""


class Source:
    """Where a config's values come from, so that errors point at the file and at ``--set``."""

    def __init__(self, path: str | Path, overridden: set[str] = frozenset()):
        self.path = str(path)
        self.overridden = set(overridden)

    def error(self, key: str, message: str) -> ConfigError:
        origin = " (from --set)" if key in self.overridden else ""
        return ConfigError(f"{self.path}: {key}{origin}: {message}" if key
                           else f"{self.path}: {message}")


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


def registered(registry: Any, default: Any = None) -> Field:
    """A name from one of the library's registries (its names, read when the check is made)."""
    return Field(f"one of {', '.join(map(repr, registry.names()))}",
                 lambda v: isinstance(v, str) and v in registry, default)


def any_value(default: Any = None) -> Field:
    """A key whose value only the library's constructor can judge."""
    return Field("a value the constructor accepts", lambda v: True, default)


def constructor_fields(factory: Callable, skip: Any = (), named: dict[str, Field] | None = None,
                       fill: bool | tuple[str, ...] = False) -> dict[str, Field]:
    """A field per keyword of ``factory``'s signature, but those in ``skip``: required without a
    default; otherwise optional, its default written into the resolved config if ``fill`` says
    so (all, or those named) and TOML can write it, else left to the constructor. The type
    comes from the default; ``named`` gives the fields of keys with a known meaning
    (``learning_rate``) or whose name ends with a role (``_initializer``)."""
    fields = {}
    for name, parameter in _parameters(factory):
        if name in skip or name in fields:
            continue
        default = parameter.default
        required = default is inspect.Parameter.empty
        known = next((field for role, field in (named or {}).items()
                      if name == role or name.endswith(f"_{role}")), None)
        if known is not None:
            base = known
        elif isinstance(default, bool):
            base = boolean()
        elif is_integer(default):
            base = Field("an integer", is_integer)
        elif isinstance(default, float):
            base = number_in("a number", lambda v: True)
        elif isinstance(default, str):
            base = Field("a string", lambda v: isinstance(v, str))
        else:
            base = any_value()
        filled = fill is True or name in (fill or ())
        writable = isinstance(default, (bool, int, float, str))
        fields[name] = Field(base.description, base.accepts, REQUIRED if required else
                             default if filled and writable else None)
    return fields


def _parameters(factory: Callable) -> list[tuple[str, inspect.Parameter]]:
    """The keyword parameters of ``factory``; a class whose ``__init__`` passes ``**kwargs`` on
    also takes those of the classes it inherits from."""
    found = []
    owners = [c for c in factory.__mro__ if "__init__" in vars(c)] if isinstance(
        factory, type) else [factory]
    for owner in owners:
        init = owner.__init__ if isinstance(owner, type) else owner
        passes_on = False
        for name, parameter in inspect.signature(init).parameters.items():
            if parameter.kind is parameter.VAR_KEYWORD:
                passes_on = True
            elif parameter.kind is not parameter.VAR_POSITIONAL and name != "self":
                found.append((name, parameter))
        if not passes_on:
            break
    return found


def construct(factory: Callable, settings: dict[str, Any], key: str, source: Source,
              what: str) -> Any:
    """``factory(**settings)``, its ValueError or TypeError as one line naming the key: the
    setting the message names (or whose text value it quotes), else the table's."""
    try:
        return factory(**settings)
    except (TypeError, ValueError) as error:
        message = str(error)
        culprit = next((name for name in sorted(settings, key=len, reverse=True)
                        if re.search(rf"\b{name}\b", message)), None) or next(
            (name for name, value in settings.items()
             if isinstance(value, str) and repr(value) in message), None)
        raise source.error(join_key(key, culprit) if culprit else key,
                           f"{what} rejects this: {error}") from None
