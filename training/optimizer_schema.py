"""The optimizer tables of a run config: ``[optimizer]``, or ``[[optimizers]]`` per layer group.

Optimizer and schedule settings are read from the constructors' own signatures, so a setting the
optimizers package adds is accepted here without a second list to keep in step; the table below
only sharpens the checks (and the error messages) of the settings whose meaning is known.
"""

from __future__ import annotations

import inspect
from typing import Any

import optimizers
from optimizers import schedules

from .config import Source
from .fields import (FRACTION, NON_NEGATIVE, POSITIVE, REQUIRED, Field, array_of_strings, as_table,
                     boolean, check, check_fields, is_integer, is_number, number_in, one_of,
                     positive_int)

OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSprop",
              "adagrad": "Adagrad"}
SCHEDULES = {"exponential_decay": "ExponentialDecay", "cosine_decay": "CosineDecay",
             "piecewise_constant_decay": "PiecewiseConstantDecay"}
# Checks for constructor arguments whose meaning is known; others are checked by their default.
_ARGUMENT_FIELDS = {
    **dict.fromkeys(("learning_rate", "epsilon", "decay_rate"), POSITIVE),
    **dict.fromkeys(("clipnorm", "clipvalue", "global_clipnorm"), POSITIVE),
    **dict.fromkeys(("momentum", "beta_1", "beta_2", "rho"), FRACTION),
    **dict.fromkeys(("weight_decay", "initial_accumulator_value"), NON_NEGATIVE),
    "alpha": number_in("a number from 0 to 1", lambda v: 0 <= v <= 1),
    "decay_steps": positive_int(),
    "boundaries": Field("an array of step numbers",
                        lambda v: isinstance(v, list) and all(map(is_integer, v))),
    "values": Field("an array of learning rates",
                    lambda v: isinstance(v, list) and all(map(is_number, v))),
}


def optimizer_groups(value: Any, layers: list[dict[str, Any]], source: Source) -> list[dict]:
    """Each [[optimizers]] entry owns the variables of the layers it names; at most one entry
    without ``layers`` takes every layer the others leave, and every trainable layer needs one."""
    if not isinstance(value, list) or not value:
        raise source.error("optimizers", f"expected an array of tables ([[optimizers]]), "
                                         f"got {value!r}")
    names = [layer["name"] for layer in layers]
    trainable = [layer["name"] for layer in layers if layer["type"] == "dense"]
    groups, owner, rest = [], {}, None
    for position, entry in enumerate(value):
        key = f"optimizers[{position}]"
        group = optimizer_table(as_table(entry, key, source), key, source, layer_names=names)
        for layer in group.get("layers", []):
            if layer not in trainable:
                raise source.error(f"{key}.layers", f"layer {layer!r} has no variables to train")
            if layer in owner:
                raise source.error(f"{key}.layers", f"layer {layer!r} is already updated by "
                                                    f"{owner[layer]}")
            owner[layer] = key
        if "layers" not in group:
            if rest is not None:
                raise source.error(f"{key}.layers", f"missing: only one optimizer may go "
                                                    f"without layers (that is {rest})")
            rest = key
        groups.append(group)
    orphans = [layer for layer in trainable if layer not in owner]
    check_rest_group(rest, orphans, owner, source)
    if orphans and rest is None:
        raise source.error("optimizers", f"no optimizer updates {', '.join(orphans)}; add them "
                                         f"to an optimizer's layers, or leave one optimizer "
                                         f"without layers to update the rest")
    for group in groups:
        group.setdefault("name", "+".join(group.get("layers", ["rest"])))
    seen = [group["name"] for group in groups]
    if len(set(seen)) != len(seen):
        raise source.error("optimizers", f"optimizer names must differ, got {seen}")
    return groups


def check_rest_group(rest: str | None, orphans: list[str], owner: dict[str, str],
                     source: Source) -> None:
    """The optimizer without ``layers`` (``rest``, its key) must be left some layer to update:
    one with nothing to update would pass here and fail at the first step."""
    if rest is not None and not orphans:
        raise source.error(f"{rest}.layers", f"missing, and the other optimizers already update "
                                             f"every layer with variables "
                                             f"({', '.join(owner)}); name its layers, or remove "
                                             f"this optimizer")


def optimizer_table(table: dict[str, Any], key: str, source: Source,
                    layer_names: list[str] | None) -> dict[str, Any]:
    """One optimizer's table; ``layer_names`` (the model's) when it may name ``layers``."""
    kind = check(table.get("type"), one_of(tuple(OPTIMIZERS), REQUIRED), f"{key}.type", source)
    arguments = _arguments(optimizer_class(kind))
    fields = {"name": Field("a name (a string)", lambda v: isinstance(v, str) and v != "")}
    if layer_names is not None:
        fields["layers"] = array_of_strings("an array of layer names")
    fields.update(arguments)
    resolved = {"type": kind, **check_fields(table, fields, key, source, ("type", "schedule"))}
    for layer in resolved.get("layers", []):
        if layer not in layer_names:
            raise source.error(f"{key}.layers", f"no layer named {layer!r} in the model; its "
                                                f"layers are {', '.join(layer_names)}")
    if "layers" in resolved and not resolved["layers"]:
        raise source.error(f"{key}.layers", "empty: name at least one layer")
    if "schedule" in table:
        resolved["schedule"] = _schedule(as_table(table["schedule"], f"{key}.schedule", source),
                                         f"{key}.schedule", source)
        schedule_arguments = _arguments(schedule_class(resolved["schedule"]["type"]))
        if "initial_learning_rate" not in schedule_arguments:
            if "learning_rate" in table:
                raise source.error(f"{key}.learning_rate", "not used: this schedule's values "
                                                           "set the learning rate")
            resolved.pop("learning_rate", None)
    return resolved


def _schedule(table: dict[str, Any], key: str, source: Source) -> dict[str, Any]:
    kind = check(table.get("type"), one_of(tuple(SCHEDULES), REQUIRED), f"{key}.type", source)
    arguments = _arguments(schedule_class(kind))
    arguments.pop("initial_learning_rate", None)  # the optimizer's learning_rate
    return {"type": kind, **check_fields(table, arguments, key, source, ("type",))}


def optimizer_class(kind: str) -> type:
    """The class a config's optimizer ``type`` names (``"adam"``: ``optimizers.Adam``)."""
    return getattr(optimizers, OPTIMIZERS[kind])


def schedule_class(kind: str) -> type:
    """The class a schedule ``type`` names (``"cosine_decay"``: ``schedules.CosineDecay``)."""
    return getattr(schedules, SCHEDULES[kind])


def _arguments(cls: type) -> dict[str, Field]:
    """A field per constructor argument: required without a default, else the default's type."""
    fields = {}
    for name, parameter in inspect.signature(cls).parameters.items():
        if name == "name" or parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
            continue
        default = parameter.default
        known = _ARGUMENT_FIELDS.get(name)
        if isinstance(default, bool):
            base = boolean()
        elif known is not None:
            base = known
        elif is_integer(default):
            base = Field("a non-negative integer", lambda v: is_integer(v) and v >= 0)
        elif isinstance(default, str):
            base = Field("a string", lambda v: isinstance(v, str))
        else:
            base = NON_NEGATIVE
        if default is inspect.Parameter.empty:
            default = None if name == "learning_rate" else REQUIRED
        elif name != "learning_rate":
            default = None  # left to the constructor, so the resolved config shows only choices
        fields[name] = Field(base.description, base.accepts, default)
    return fields
