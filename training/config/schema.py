"""What a run config may say, checked before anything is built or loaded.

``resolve(raw, source)`` walks the raw tables once: every key must be known, every value of the
expected type, every layer an optimizer names must exist in the model, and every default is
filled in. The first problem raises a ``ConfigError`` naming the file, the key and what was
expected, because a typo found after ten minutes of training costs ten minutes. The optimizer
tables have a module of their own, ``optimizers``, and so have the ``[[callbacks]]``,
``callbacks``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import framework as fw
import layers
from layers.activations import ACTIVATIONS
from layers.initializers import INITIALIZERS

from .fields import (REQUIRED, Field, Source, array_of_strings, as_table, boolean, check,
                     check_fields, construct, constructor_fields, is_integer, one_of,
                     positive_int, registered, reject_unknown)
from .callbacks import callback_tables
from .optimizers import canonical, optimizer_groups, optimizer_table

METRICS = fw.metrics.METRICS

TOP_FIELDS = {
    # One folder name: runs/<name> must not be the filesystem's root, runs/ itself or elsewhere.
    "name": Field("a run name: one folder name, without '/' or '\\', not '.' or '..'",
                  lambda v: isinstance(v, str) and v.strip() not in ("", ".", "..")
                  and not {"/", "\\"} & set(v)),
    "seed": Field("a non-negative integer", lambda v: is_integer(v) and v >= 0, 0),
    "backend": one_of(("numpy", "cupy")),  # optional: else the framework's (FRAMEWORK_BACKEND)
    "epochs": positive_int(),
    "batch_size": positive_int(),
    "metrics": array_of_strings("an array of metric names", []),
    "output_dir": Field("a folder path (a string)", lambda v: isinstance(v, str) and v != ""),
    "on_nonfinite": one_of(("stop", "skip", "continue"), "stop"),  # see training/divergence.py
    "compile": boolean(True),  # each step through fw.function (the same numbers as eager)
}
TABLES = ("data", "model", "loss", "optimizer", "optimizers", "output", "callbacks")
OUTPUT_FIELDS = {
    "format": one_of(("jsonl", "csv"), "jsonl"),
    "step_metrics": boolean(False),
    "plot": boolean(True),
}
LAYER_NAME = Field("a layer name (a string without '/')",
                   lambda v: isinstance(v, str) and v != "" and "/" not in v)
# The arguments every layer takes (its name is the table's; the others are not the config's).
_LAYER_BASE = tuple(constructor_fields(layers.Layer))


def _layer_fields(cls: type) -> dict[str, Field]:
    """A layer type's keys, from its constructor: an activation or an initializer is a name
    from the library's registry."""
    return constructor_fields(cls, skip=_LAYER_BASE, fill=True, named={
        "activation": registered(ACTIVATIONS), "initializer": registered(INITIALIZERS)})


def resolve(raw: dict[str, Any], source: Source, default_name: str) -> dict[str, Any]:
    """The checked config with every default filled in (see the module's docstring)."""
    reject_unknown(raw, [*TOP_FIELDS, *TABLES], "", source)
    scalars = {key: value for key, value in raw.items() if key not in TABLES}
    config = check_fields(scalars, TOP_FIELDS, "", source)
    name = config.get("name", default_name)
    config = {"name": name, **config,
              "output_dir": config.get("output_dir", str(Path("runs") / name))}
    for position, metric in enumerate(config["metrics"]):
        check(metric, registered(METRICS), f"metrics[{position}]", source)
    if "data" not in raw:
        raise source.error("data", "missing required table ([data] with a name, e.g. "
                                   "name = \"digits\")")
    config["data"] = _data(as_table(raw["data"], "data", source), source)
    config["model"], trainable = _model(raw.get("model"), source)
    config["loss"] = _loss(raw.get("loss"), config["model"]["layers"], source)
    config["output"] = check_fields(as_table(raw.get("output", {}), "output", source),
                                    OUTPUT_FIELDS, "output", source)
    if ("optimizer" in raw) == ("optimizers" in raw):
        raise source.error("optimizer", "give either one [optimizer] table for the whole model "
                                        "or [[optimizers]] tables with layers = [...] each"
                           if "optimizer" in raw else
                           "missing required table ([optimizer] or [[optimizers]])")
    if "optimizer" in raw:
        config["optimizer"] = optimizer_table(as_table(raw["optimizer"], "optimizer", source),
                                              "optimizer", source, layer_names=None)
    else:
        config["optimizers"] = optimizer_groups(raw["optimizers"], config["model"]["layers"],
                                                source, trainable)
    if "callbacks" in raw:
        config["callbacks"] = callback_tables(
            raw["callbacks"], source, config.get("optimizers") or [config["optimizer"]])
    return config


def _data(table: dict[str, Any], source: Source) -> dict[str, Any]:
    """The [data] table's keys are the loader's to check; missing files are caught here early."""
    if "name" not in table:
        raise source.error("data.name", "missing required key (a dataset name such as "
                                        "\"digits\", \"moons\", \"csv\" or \"mnist_idx\")")
    path = table.get("path")
    if isinstance(path, str) and not Path(path).exists():
        raise source.error("data.path", f"no such file or folder: {path!r} (relative paths are "
                                        f"read from the current directory, {Path.cwd()})")
    return dict(table)


def _model(value: Any, source: Source) -> tuple[dict[str, Any], list[str]]:
    """The layer tables, each checked by building its layer (a type is any name in
    ``layers.LAYERS``), and the names of the layers that create variables."""
    if value is None:
        raise source.error("model", "missing required table ([[model.layers]] entries)")
    table = as_table(value, "model", source)
    reject_unknown(table, ["layers"], "model", source)
    entries = table.get("layers")
    if not isinstance(entries, list) or not entries:
        raise source.error("model.layers", f"expected a non-empty array of layer tables "
                                           f"([[model.layers]]), got {entries!r}")
    specs, trainable, counts = [], [], {}
    for position, entry in enumerate(entries):
        key = f"model.layers[{position}]"
        entry = as_table(entry, key, source)
        kind = canonical(layers.LAYERS, check(entry.get("type"),
                                              registered(layers.LAYERS, REQUIRED),
                                              f"{key}.type", source))
        counts[kind] = counts.get(kind, 0) + 1
        name = check(entry.get("name", f"{kind}{counts[kind]}"), LAYER_NAME, f"{key}.name", source)
        if name in (spec["name"] for spec in specs):
            raise source.error(f"{key}.name", f"layer name {name!r} is used twice")
        cls = layers.LAYERS.lookup(kind)
        spec = {"name": name, "type": kind,
                **check_fields(entry, _layer_fields(cls), key, source, ("name", "type"))}
        if _creates_variables(make_layer(spec, key, source)):
            trainable.append(name)
        specs.append(spec)
    return {"layers": specs}, trainable


def make_layer(spec: dict[str, Any], key: str, source: Source) -> layers.Layer:
    """The layer a resolved layer table describes; a setting its constructor refuses is a
    ConfigError naming the key."""
    settings = {k: v for k, v in spec.items() if k != "type"}
    return construct(layers.LAYERS.lookup(spec["type"]), settings, key, source,
                     f"layer type {spec['type']!r}")


def _creates_variables(layer: layers.Layer) -> bool:
    """Whether a layer, once built, has variables: it builds its own, or holds some already,
    or is a model with such layers."""
    if type(layer).build is not layers.Layer.build or layer.variables:
        return True
    return isinstance(layer, layers.Model) and any(map(_creates_variables, layer.layers))


def _loss(value: Any, specs: list[dict[str, Any]], source: Source) -> dict[str, Any]:
    """The [loss] table: a name from ``fw.losses.LOSSES`` and the keyword arguments of its
    function (or its class's constructor).
    ``from_logits`` defaults to what the last layer's activation implies (Keras's rule)."""
    losses = fw.losses.LOSSES
    if value is None:
        raise source.error("loss", f"missing required table ([loss] with name = one of "
                                   f"{', '.join(losses.names())})")
    table = as_table(value, "loss", source)
    name = canonical(losses, check(table.get("name"), registered(losses, REQUIRED), "loss.name",
                                   source))
    fields = constructor_fields(losses.lookup(name), skip=("y_true", "y_pred", "name"))
    if "from_logits" in fields:
        # Logits, unless the last layer that takes an activation squashes them.
        last = next((spec.get(key) or "linear" for spec in reversed(specs)
                     for key in [_output_activation(spec)] if key), "linear")
        fields["from_logits"] = boolean(ACTIVATIONS.lookup(last) is ACTIVATIONS.lookup("linear"))
    return {"name": name, **check_fields(table, fields, "loss", source, ("name",))}


def _output_activation(spec: dict[str, Any]) -> str | None:
    """The key of a layer table that sets the activation of the layer's outputs (an MLP's
    ``output_activation``, a Dense's ``activation``), or None if it takes none."""
    fields = _layer_fields(layers.LAYERS.lookup(spec["type"]))
    return next((key for key in ("output_activation", "activation") if key in fields), None)
