"""The optimizer tables of a run config: ``[optimizer]``, or ``[[optimizers]]`` per layer group.

The optimizer and schedule types are the names of ``optimizers.OPTIMIZERS`` and
``optimizers.schedules.SCHEDULES``; their settings are read from the constructors' signatures,
and the constructors judge the values (each is built once here, on the config's settings), so
an optimizer or a setting the optimizers package adds is accepted with no edit to this file.
"""

from __future__ import annotations

from typing import Any, Callable

from optimizers import OPTIMIZERS
from optimizers.schedules import SCHEDULES

from .fields import (REQUIRED, Field, Source, array_of_strings, as_table, check, check_fields,
                     construct, constructor_fields, is_number, registered)

# A learning rate may be left out: the optimizer's default, or the schedule's initial rate.
_NAMED = {"learning_rate": Field("a number", is_number)}


def optimizer_groups(value: Any, layers: list[dict[str, Any]], source: Source,
                     trainable: list[str]) -> list[dict]:
    """Each [[optimizers]] entry owns the variables of the layers it names (``trainable``: the
    layers that have variables); at most one entry without ``layers`` takes every layer the
    others leave, and every trainable layer needs one."""
    if not isinstance(value, list) or not value:
        raise source.error("optimizers", f"expected an array of tables ([[optimizers]]), "
                                         f"got {value!r}")
    names = [layer["name"] for layer in layers]
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
    kind = canonical(OPTIMIZERS, check(table.get("type"), registered(OPTIMIZERS, REQUIRED),
                                       f"{key}.type", source))
    fields = {"name": Field("a name (a string)", lambda v: isinstance(v, str) and v != "")}
    if layer_names is not None:
        fields["layers"] = array_of_strings("an array of layer names")
    fields.update(constructor_fields(OPTIMIZERS.lookup(kind), skip=("name",), named=_NAMED,
                                     fill=("learning_rate",)))
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
        if not _takes_initial_rate(SCHEDULES.lookup(resolved["schedule"]["type"])):
            if "learning_rate" in table:
                raise source.error(f"{key}.learning_rate", "not used: this schedule's values "
                                                           "set the learning rate")
            resolved.pop("learning_rate", None)
    make_optimizer(resolved, key, source)  # the optimizer's own checks, on these settings
    return resolved


def _schedule(table: dict[str, Any], key: str, source: Source) -> dict[str, Any]:
    kind = canonical(SCHEDULES, check(table.get("type"), registered(SCHEDULES, REQUIRED),
                                      f"{key}.type", source))
    # (initial_learning_rate is the optimizer's learning_rate)
    arguments = constructor_fields(SCHEDULES.lookup(kind),
                                   skip=("name", "initial_learning_rate"))
    return {"type": kind, **check_fields(table, arguments, key, source, ("type",))}


def _takes_initial_rate(schedule: Callable) -> bool:
    return "initial_learning_rate" in constructor_fields(schedule)


def canonical(registry: Any, name: str) -> str:
    """The registry's own name for ``name`` (``"Adam"`` -> ``"adam"``), as the resolved
    config writes it."""
    return registry.name_of(registry.lookup(name))


def make_optimizer(spec: dict[str, Any], key: str, source: Source) -> Any:
    """The optimizer a resolved table describes, with its schedule; a setting the optimizer
    or the schedule refuses is a ConfigError naming the key."""
    settings = {k: v for k, v in spec.items() if k not in ("type", "name", "layers", "schedule")}
    if "schedule" in spec:
        schedule = {k: v for k, v in spec["schedule"].items() if k != "type"}
        make_schedule = SCHEDULES.lookup(spec["schedule"]["type"])
        if "learning_rate" in settings:
            schedule["initial_learning_rate"] = settings["learning_rate"]
        settings["learning_rate"] = construct(make_schedule, schedule, f"{key}.schedule", source,
                                              f"schedule {spec['schedule']['type']!r}")
    return construct(OPTIMIZERS.lookup(spec["type"]), settings, key, source,
                     f"optimizer {spec['type']!r}")
