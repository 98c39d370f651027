"""From a resolved config and its dataset to the objects a training loop uses.

Everything here is built with the public API a user would call by hand, found by name in the
library's registries: each layer type of ``layers.LAYERS`` in a ``layers.Sequential``, an
optimizer of ``optimizers.OPTIMIZERS`` with a schedule of ``optimizers.schedules.SCHEDULES``,
and a per-example loss of ``fw.losses.LOSSES``. The only thing the runner adds is bookkeeping:
which optimizer owns which layers' variables.

Checks that need the data (does the last layer fit the task, does the loss suit the labels) are
made here and raise ``ConfigError`` naming the config key.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import framework as fw
import layers
import optimizers

from .data import DataError, Dataset
from .fields import Source
from .optimizer_schema import make_optimizer
from .schema import make_layer


@dataclass
class OptimizerGroup:
    """One optimizer and the layers whose trainable variables it updates."""
    name: str
    optimizer: optimizers.Optimizer
    layers: list[layers.Layer]

    @property
    def variables(self) -> list[fw.Variable]:
        return [v for layer in self.layers for v in layer.trainable_variables]

    def learning_rate(self) -> float:
        """The rate the next step uses (a schedule is evaluated at the current step)."""
        return float(self.optimizer.learning_rate)


@dataclass
class Training:
    """What one training run needs, built and ready: call ``model`` on a batch to use it."""
    model: layers.Sequential
    groups: list[OptimizerGroup]
    loss_fn: Callable[[Any, Any], fw.Tensor]
    metrics: dict[str, fw.metrics.Metric]

    @property
    def optimizers(self) -> dict[str, optimizers.Optimizer]:
        """The optimizers by group name, as checkpoints key them."""
        return {group.name: group.optimizer for group in self.groups}


def build_training(config: dict[str, Any], data: Dataset, source: Source) -> Training:
    """Model, optimizer groups, loss and metrics; the model is built on one training example,
    so its variables exist for the optimizers and for restoring a checkpoint. A ``backend``
    key switches the framework to it first, so that every variable lives there."""
    _check_fit(config, data, source)
    if "backend" in config:
        try:
            fw.set_backend(config["backend"])
        except RuntimeError as error:  # CuPy or a GPU missing: one line, naming the key
            raise source.error("backend", str(error)) from None
    layers_by_name = {spec["name"]: make_layer(spec, f"model.layers[{position}]", source)
                      for position, spec in enumerate(config["model"]["layers"])}
    model = layers.Sequential(list(layers_by_name.values()))
    try:
        outputs = model(data.x_train[:1], training=False)
    except (TypeError, ValueError) as error:  # layers that do not fit the data or each other
        raise source.error("model.layers", f"the model cannot run on the data: {error}") from None
    _check_width(outputs, config, data, source)
    if "optimizer" in config:
        groups = [OptimizerGroup(config["optimizer"].get("name", "model"),
                                 make_optimizer(config["optimizer"], "optimizer", source),
                                 list(layers_by_name.values()))]
    else:
        groups = _groups(config["optimizers"], layers_by_name, source)
    loss = config["loss"]
    loss_fn = fw.losses.LOSSES.lookup(loss["name"])
    settings = {k: v for k, v in loss.items() if k != "name"}
    if isinstance(loss_fn, type):  # a Loss class: its instance, called as the function is
        loss_fn = loss_fn(**settings)
    elif settings:
        loss_fn = functools.partial(loss_fn, **settings)
    return Training(model, groups, loss_fn,
                    {name: _metric(name, loss) for name in config["metrics"]})


def training_labels(labels: np.ndarray, config: dict[str, Any]) -> np.ndarray:
    """Labels in the form the loss expects: binary cross-entropy wants float (n, 1) targets."""
    if config["loss"]["name"] == "binary_crossentropy":
        return labels.astype(np.float32).reshape(-1, 1)
    return labels


def _groups(specs: list[dict[str, Any]], layers_by_name: dict[str, layers.Layer],
            source: Source) -> list[OptimizerGroup]:
    claimed = {name for spec in specs for name in spec.get("layers", [])}
    groups = []
    for position, spec in enumerate(specs):
        names = spec.get("layers") or [name for name, layer in layers_by_name.items()
                                        if name not in claimed and layer.trainable_variables]
        groups.append(OptimizerGroup(spec["name"],
                                     make_optimizer(spec, f"optimizers[{position}]", source),
                                     [layers_by_name[name] for name in names]))
    return groups


def _check_fit(config: dict[str, Any], data: Dataset, source: Source) -> None:
    """The loss and the metrics must suit the task the data turned out to be."""
    loss = config["loss"]["name"]
    described = f"data {config['data']['name']!r} is a {data.task} task"
    suits = {"classification": ("sparse_categorical_crossentropy",),
             "binary": ("binary_crossentropy", "sparse_categorical_crossentropy"),
             "regression": ("mean_squared_error",)}[data.task]
    if loss not in suits:
        raise source.error("loss.name", f"{loss!r} does not suit the data: {described}; "
                                        f"use {' or '.join(map(repr, suits))}")
    for metric in config["metrics"]:
        if metric == "accuracy" and data.task == "regression":
            raise source.error("metrics", f"'accuracy' needs class labels, but {described}; "
                                          f"use 'mae' or 'mse'")
        cls = fw.metrics.METRICS.lookup(metric)
        if not _compares_predictions(cls):
            raise source.error("metrics", f"{metric!r} does not compare labels with "
                                          f"predictions, so the runner cannot feed it")
        distance = issubclass(cls, _DISTANCES)
        if distance and data.task != "regression":
            raise source.error("metrics", f"{metric!r} measures distances to numeric targets, "
                                          f"but {described}; use 'accuracy'")


def _check_width(outputs: fw.Tensor, config: dict[str, Any], data: Dataset,
                 source: Source) -> None:
    """The model's output width must match the task: one output per class, or one in all.
    The culprit is the last layer that sets a width (``units``)."""
    loss = config["loss"]["name"]
    described = f"data {config['data']['name']!r} is a {data.task} task"
    if loss == "sparse_categorical_crossentropy":
        units, why = data.num_classes, f"one output per class: {data.num_classes} classes"
    else:
        units, why = 1, "one output per example"
    width = outputs.shape[-1] if outputs.ndim else None
    if width != units:
        specs = config["model"]["layers"]
        position = next((i for i in reversed(range(len(specs))) if "units" in specs[i]), None)
        if position is not None and width is not None:
            _check_label_range(data, position, width, loss)
        key = "model.layers" if position is None else f"model.layers[{position}].units"
        raise source.error(key, f"expected {units} ({why}; {described} with loss {loss!r}), "
                                f"got {width}")


def _check_label_range(data: Dataset, position: int, units: int, loss: str) -> None:
    """Integer labels at or past the last layer's width are blamed on the labels first: a label
    of 200 among digits is a broken label far more often than a wish for 201 classes."""
    if loss != "sparse_categorical_crossentropy" or data.classes is not None \
            or data.num_classes <= units:
        return
    count = sum(int(np.count_nonzero(y >= units)) for y in (data.y_train, data.y_test))
    raise DataError(f"{data.labels}: label {data.num_classes - 1} ({count} example"
                    f"{'s' if count > 1 else ''} with a label of {units} or more) is out of "
                    f"range for model.layers[{position}].units = {units}, whose class ids are 0 "
                    f"to {units - 1}; correct the labels, or set model.layers[{position}].units "
                    f"= {data.num_classes} for {data.num_classes} classes")


_DISTANCES = (fw.metrics.MeanSquaredError, fw.metrics.MeanAbsoluteError,
              fw.metrics.RootMeanSquaredError)


def _compares_predictions(cls: type) -> bool:
    """Whether a metric class is built with no arguments and updated with (y_true, y_pred)
    (not ``Mean``'s values, nor a wrapper's function)."""
    required = [p for p in inspect.signature(cls).parameters.values()
                if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return not required and "y_pred" in inspect.signature(cls.update_state).parameters


def _metric(name: str, loss: dict[str, Any]) -> fw.metrics.Metric:
    """The ``fw.metrics`` object a config's metric name asks for (through its registry).

    ``"accuracy"`` means what Keras's ``compile`` makes of it: the accuracy that suits the
    loss, binary (at the logits' threshold 0, or the probabilities' 0.5) or sparse
    categorical. A metric that takes ``from_logits`` (AUC) gets the loss's."""
    logits = loss.get("from_logits", False)
    if name == "accuracy":
        if loss["name"] == "binary_crossentropy":
            return fw.metrics.BinaryAccuracy(name=name, threshold=0.0 if logits else 0.5)
        return fw.metrics.SparseCategoricalAccuracy(name=name)
    cls = fw.metrics.METRICS.lookup(name)
    if "from_logits" in inspect.signature(cls).parameters:
        return cls(name=name, from_logits=logits)
    return cls(name=name)
