"""Run configs: a TOML file, command-line overrides on top, then the schema's checks.

``load_config(path, overrides)`` is the one entry point: it reads the file with the standard
library's TOML parser, applies each ``--set KEY=VALUE`` to the raw tables (so an override really
replaces what the file says, before anything is checked), and hands the result to
``training.schema`` for validation and defaults. What comes back is the *resolved* config: plain
dicts and lists, every default filled in, that ``dump_toml`` writes back as TOML, so the copy
saved in a run's folder is itself a config that reproduces the run.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib

from .fields import ConfigError, Source
from .schema import resolve

__all__ = ["ConfigError", "Source", "apply_override", "dump_toml", "load_config", "parse_key",
           "parse_value", "read_toml", "render_key", "tomllib"]


def read_toml(path: str | Path) -> dict[str, Any]:
    """The file's tables, or a ConfigError that names the file and, for syntax, the line."""
    try:
        with open(path, "rb") as file:
            data = file.read()
        # TOML has no byte-order mark, but editors (Notepad) write one: UTF-8's is skipped.
        return tomllib.loads(data.removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (byte {error.start}), as TOML must be; save "
                          f"it as UTF-8") from None
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, expected a TOML config file") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None


_PART = re.compile(r"([^\[\]]*)((?:\[\d+\])*)")


def parse_key(key: str) -> list[str | int]:
    """``optimizers[0].learning_rate`` or ``optimizers.0.learning_rate`` as path tokens.

    A token of digits is a list index; any other token is a table key or, inside a list of
    tables, the ``name`` of an element (``model.layers.dense1.units``).
    """
    tokens: list[str | int] = []
    for part in key.split("."):
        match = _PART.fullmatch(part.strip())
        if match is None or not any(match.groups()):
            raise ConfigError(f"--set {key}: not a dotted key such as optimizer.learning_rate")
        name, indices = match.groups()
        if name:
            tokens.append(int(name) if name.isdigit() else name)
        tokens += [int(index) for index in re.findall(r"\d+", indices)]
    return tokens


def parse_value(text: str) -> Any:
    """A TOML literal (``0.01``, ``true``, ``[100, 50]``, ``"adam"``), or else the bare text,
    so ``--set data.name=moons`` works without shell-quoted TOML quotes."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


def render_key(tokens: list[str | int]) -> str:
    """Path tokens in the form errors use: ``optimizers[0].learning_rate``."""
    out = ""
    for token in tokens:
        out += f"[{token}]" if isinstance(token, int) else (f".{token}" if out else token)
    return out


def apply_override(config: dict[str, Any], assignment: str) -> str:
    """Apply one ``KEY=VALUE`` in place; return the key in the form errors use.

    Missing tables on the way are created, so an override may set a key the file leaves to
    its default; whether the key is allowed at all is the schema's job.
    """
    key, equals, text = assignment.partition("=")
    if not equals or not key.strip():
        raise ConfigError(f"--set {assignment}: expected KEY=VALUE, "
                          f"e.g. optimizer.learning_rate=0.01")
    tokens = parse_key(key.strip())
    node: Any = config
    resolved: list[str | int] = []
    for position, token in enumerate(tokens):
        last = position == len(tokens) - 1
        if isinstance(node, list):
            token = _list_index(node, token, render_key(resolved), key)
        elif not isinstance(node, dict):
            raise ConfigError(f"--set {key}: {render_key(resolved)} is a value, not a table")
        elif isinstance(token, int):
            raise ConfigError(f"--set {key}: {render_key(resolved) or 'the config'} is a table; "
                              f"[{token}] needs an array")
        resolved.append(token)
        if last:
            node[token] = parse_value(text.strip())
        else:
            if isinstance(node, dict) and token not in node:
                node[token] = {}
            node = node[token]
    return render_key(resolved)


def _list_index(items: list[Any], token: str | int, where: str, key: str) -> int:
    if isinstance(token, int):
        if token >= len(items):
            raise ConfigError(f"--set {key}: {where} has {len(items)} entries, no [{token}]")
        return token
    names = [item.get("name") for item in items if isinstance(item, dict)]
    if token not in names:
        raise ConfigError(f"--set {key}: {where} has no entry named {token!r}; names are "
                          f"{', '.join(map(str, filter(None, names))) or 'none'} "
                          f"(or use an index: {where}[0])")
    return names.index(token)


def load_config(path: str | Path,
                overrides: list[str] | tuple[str, ...] = ()) -> tuple[dict[str, Any], Source]:
    """The resolved config of the file at ``path`` with ``overrides`` (``KEY=VALUE``) applied,
    and its ``Source``, which later checks (those that need the data) use to name the key."""
    raw = read_toml(path)
    source = Source(path, {apply_override(raw, assignment) for assignment in overrides})
    return resolve(raw, source, default_name=Path(path).stem), source


def dump_toml(config: dict[str, Any]) -> str:
    """TOML text for a resolved config: scalars first, then tables, then arrays of tables."""
    lines: list[str] = []
    _dump_table(config, [], lines)
    return "\n".join(lines).strip() + "\n"


def _dump_table(table: dict[str, Any], prefix: list[str], lines: list[str]) -> None:
    def is_table_array(value: Any) -> bool:
        return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)

    for key, value in table.items():
        if not isinstance(value, dict) and not is_table_array(value):
            lines.append(f"{_key(key)} = {_literal(value)}")
    for key, value in table.items():
        if isinstance(value, dict):
            if not value or not all(isinstance(v, dict) or is_table_array(v)
                                    for v in value.values()):
                lines += ["", f"[{'.'.join(map(_key, prefix + [key]))}]"]
            _dump_table(value, prefix + [key], lines)
    for key, value in table.items():
        if is_table_array(value):
            for item in value:
                lines += ["", f"[[{'.'.join(map(_key, prefix + [key]))}]]"]
                _dump_table(item, prefix + [key], lines)


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(map(_literal, value)) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_literal(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as TOML")
