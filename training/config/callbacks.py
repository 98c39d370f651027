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

import warnings
from typing import Any, Callable

import framework as fw
from layers.callbacks import CALLBACKS

from .fields import REQUIRED, Source, as_table, check, check_fields, construct, \
    constructor_fields, registered
from .optimizers import canonical

__all__ = ["callback_tables", "make_callbacks"]

SETS_THE_RATE = ("reduce_lr_on_plateau",)
# A callback that takes one of these writes files: under MPI the root's alone is made.
_PATHS = ("filename", "filepath", "log_dir", "backup_dir")


def callback_tables(value: Any, source: Source,
                    optimizers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checked ``[[callbacks]]`` entries, each ``{"type": <registered name>, **arguments}``;
    ``optimizers``: the config's resolved optimizer tables (a callback that sets
    ``model.optimizer``'s rate would change only the first of several, and cannot set one
    that a schedule gives)."""
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
        if kind in SETS_THE_RATE and len(optimizers) > 1:
            raise source.error(f"{key}.type", f"{kind!r} sets the rate of one optimizer, but "
                                              f"this config has {len(optimizers)} "
                                              f"([[optimizers]]); give each its own "
                                              f"[optimizers.schedule] instead")
        if kind in SETS_THE_RATE and "schedule" in optimizers[0]:
            raise source.error(f"{key}.type", f"{kind!r} sets the optimizer's rate, which "
                                              f"[optimizer.schedule] gives in this config; "
                                              f"use one or the other")
        _make(table, key, source)  # the callback's own checks, on these arguments
        tables.append(table)
    return tables


def make_callbacks(config: dict[str, Any]) -> dict[int, Any]:
    """The callbacks a resolved config names, by their position in it; under MPI those that
    write files on the root alone (the others decide alike on every rank: the logs are the
    whole data's)."""
    source, root = Source("config"), fw.distributed.is_root()
    return {position: _make(table, f"callbacks[{position}]", source)
            for position, table in enumerate(config.get("callbacks", []))
            if root or not _writes_files(table["type"])}


def _writes_files(kind: str) -> bool:
    return any(name in _PATHS for name in constructor_fields(CALLBACKS.lookup(kind)))


def _make(table: dict[str, Any], key: str, source: Source) -> Any:
    settings = {k: v for k, v in table.items() if k != "type"}
    return construct(_strict(CALLBACKS.lookup(table["type"])), settings, key, source,
                     f"callback {table['type']!r}")


def _strict(cls: type) -> Callable[..., Any]:
    """``cls`` whose warnings about its arguments (Keras's ``mode 'sideways' is unknown,
    fallback to auto mode``) are errors: a config says what it means."""
    def make(**settings: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            made = cls(**settings)
        if caught:
            raise ValueError(str(caught[0].message))
        return made
    return make
