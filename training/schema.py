"""What a run config may say, checked before anything is built or loaded.

``resolve(raw, source)`` walks the raw tables once: every key must be known, every value of the
expected type, every layer an optimizer names must exist in the model, and every default is
filled in. The first problem raises a ``ConfigError`` naming the file, the key and what was
expected, because a typo found after ten minutes of training costs ten minutes. The optimizer
tables have a module of their own, ``optimizer_schema``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import framework as fw

from .config import Source
from .fields import (FRACTION, REQUIRED, Field, array_of_strings, as_table, boolean, check,
                     check_fields, is_integer, one_of, positive_int, reject_unknown)
from .optimizer_schema import optimizer_groups, optimizer_table

ACTIVATIONS = ("linear", "relu", "sigmoid", "tanh", "softmax", "softplus", "softsign", "elu",
               "selu", "silu", "gelu")
INITIALIZERS = ("glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_uniform",
                "lecun_normal", "random_normal", "random_uniform", "truncated_normal", "zeros",
                "ones")
LOSSES = ("sparse_categorical_crossentropy", "binary_crossentropy", "mean_squared_error")
METRICS = fw.metrics.METRICS  # a name is valid where the registry knows it
TOP_FIELDS = {
    "name": Field("a run name (a string)", lambda v: isinstance(v, str) and v.strip() != ""),
    "seed": Field("a non-negative integer", lambda v: is_integer(v) and v >= 0, 0),
    "backend": one_of(("numpy", "cupy")),  # optional: else the framework's (FRAMEWORK_BACKEND)
    "epochs": positive_int(),
    "batch_size": positive_int(),
    "metrics": array_of_strings(f"an array of metric names from {', '.join(METRICS)}", []),
    "output_dir": Field("a folder path (a string)", lambda v: isinstance(v, str) and v != ""),
    "on_nonfinite": one_of(("stop", "skip", "continue"), "stop"),  # see training/divergence.py
    "compile": boolean(True),  # each step through fw.function (the same numbers as eager)
}
TABLES = ("data", "model", "loss", "optimizer", "optimizers", "output")
OUTPUT_FIELDS = {
    "format": one_of(("jsonl", "csv"), "jsonl"),
    "step_metrics": boolean(False),
    "plot": boolean(True),
}
LAYER_FIELDS = {
    "dense": {
        "units": positive_int(),
        "activation": one_of(ACTIVATIONS),
        "use_bias": boolean(True),
        "kernel_initializer": one_of(INITIALIZERS, "glorot_uniform"),
        "bias_initializer": one_of(INITIALIZERS, "zeros"),
    },
    "dropout": {"rate": Field(FRACTION.description, FRACTION.accepts, REQUIRED)},
    "flatten": {},
}
LAYER_NAME = Field("a layer name (a string without '/')",
                   lambda v: isinstance(v, str) and v != "" and "/" not in v)


def resolve(raw: dict[str, Any], source: Source, default_name: str) -> dict[str, Any]:
    """The checked config with every default filled in (see the module's docstring)."""
    reject_unknown(raw, [*TOP_FIELDS, *TABLES], "", source)
    scalars = {key: value for key, value in raw.items() if key not in TABLES}
    config = check_fields(scalars, TOP_FIELDS, "", source)
    name = config.get("name", default_name)
    config = {"name": name, **config,
              "output_dir": config.get("output_dir", str(Path("runs") / name))}
    for position, metric in enumerate(config["metrics"]):
        check(metric, one_of(METRICS), f"metrics[{position}]", source)
    if "data" not in raw:
        raise source.error("data", "missing required table ([data] with a name, e.g. "
                                   "name = \"digits\")")
    config["data"] = _data(as_table(raw["data"], "data", source), source)
    config["model"] = _model(raw.get("model"), source)
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
                                                source)
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


def _model(value: Any, source: Source) -> dict[str, Any]:
    if value is None:
        raise source.error("model", "missing required table ([[model.layers]] entries)")
    table = as_table(value, "model", source)
    reject_unknown(table, ["layers"], "model", source)
    entries = table.get("layers")
    if not isinstance(entries, list) or not entries:
        raise source.error("model.layers", f"expected a non-empty array of layer tables "
                                           f"([[model.layers]]), got {entries!r}")
    layers, counts = [], {}
    for position, entry in enumerate(entries):
        key = f"model.layers[{position}]"
        entry = as_table(entry, key, source)
        kind = check(entry.get("type"), one_of(tuple(LAYER_FIELDS)), f"{key}.type", source)
        counts[kind] = counts.get(kind, 0) + 1
        name = check(entry.get("name", f"{kind}{counts[kind]}"), LAYER_NAME, f"{key}.name", source)
        if name in (layer["name"] for layer in layers):
            raise source.error(f"{key}.name", f"layer name {name!r} is used twice")
        layers.append({"name": name, "type": kind,
                       **check_fields(entry, LAYER_FIELDS[kind], key, source, ("name", "type"))})
    return {"layers": layers}


def _loss(value: Any, layers: list[dict[str, Any]], source: Source) -> dict[str, Any]:
    if value is None:
        raise source.error("loss", f"missing required table ([loss] with name = one of "
                                   f"{', '.join(LOSSES)})")
    table = as_table(value, "loss", source)
    fields = {"name": one_of(LOSSES, REQUIRED)}
    if str(table.get("name", "")).endswith("crossentropy"):
        # Logits, unless the last dense layer squashes them (Keras's from_logits).
        dense = [layer for layer in layers if layer["type"] == "dense"] or [{}]
        fields["from_logits"] = boolean(dense[-1].get("activation", "linear") == "linear")
    return check_fields(table, fields, "loss", source)
