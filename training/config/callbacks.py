"""The ``[[callbacks]]`` tables of a run config: Keras's callbacks, by their registered names.

    [[callbacks]]
    type = "early_stopping"
    monitor = "val_loss"
    patience = 3

A type is a name of ``layers.callbacks.CALLBACKS`` (the registry ``fw.keras.callbacks``
registers its classes in); its keys are the class's constructor arguments, Keras's names,
checked like every other key, and the constructor judges the values (each is built once here).
The epoch's logs these callbacks see are Keras's: ``loss``, the metrics, ``val_loss`` and
``val_<metric>`` for the test split, and ``lr``.
"""

from __future__ import annotations

from typing import Any

from layers.callbacks import CALLBACKS

from .fields import REQUIRED, Source, as_table, check, check_fields, construct, \
    constructor_fields, registered
from .optimizers import canonical

__all__ = ["callback_tables", "make_callbacks"]


def callback_tables(value: Any, source: Source) -> list[dict[str, Any]]:
    """The checked ``[[callbacks]]`` entries, each ``{"type": <registered name>, **arguments}``."""
    if not isinstance(value, list):
        raise source.error("callbacks", f"expected an array of tables ([[callbacks]]), "
                                        f"got {value!r}")
    tables = []
    for position, entry in enumerate(value):
        key = f"callbacks[{position}]"
        entry = as_table(entry, key, source)
        kind = canonical(CALLBACKS, check(entry.get("type"), registered(CALLBACKS, REQUIRED),
                                          f"{key}.type", source))
        fields = constructor_fields(CALLBACKS.lookup(kind))
        table = {"type": kind, **check_fields(entry, fields, key, source, ("type",))}
        _make(table, key, source)  # the callback's own checks, on these arguments
        tables.append(table)
    return tables


def make_callbacks(config: dict[str, Any], source: Source | None = None) -> list[Any]:
    """The callbacks a resolved config names, in its order."""
    source = source or Source("config")
    return [_make(table, f"callbacks[{position}]", source)
            for position, table in enumerate(config.get("callbacks", []))]


def _make(table: dict[str, Any], key: str, source: Source) -> Any:
    settings = {k: v for k, v in table.items() if k != "type"}
    return construct(CALLBACKS.lookup(table["type"]), settings, key, source,
                     f"callback {table['type']!r}")
