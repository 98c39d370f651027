"""From a resolved config and its dataset to the objects a training loop uses.

Everything here is built with the public API a user would call by hand: ``layers.Dense`` and
friends in a ``layers.Sequential``, ``optimizers.Adam(...)`` with a schedule from
``optimizers.schedules``, and a per-example loss from ``fw.losses``. The only thing the runner
adds is bookkeeping: which optimizer owns which layers' variables.

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

from .config import Source
from .data import DataError, Dataset
from .optimizer_schema import optimizer_class, schedule_class


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
    layers_by_name = {spec["name"]: _layer(spec) for spec in config["model"]["layers"]}
    model = layers.Sequential(list(layers_by_name.values()))
    model(data.x_train[:1], training=False)
    if "optimizer" in config:
        groups = [OptimizerGroup(config["optimizer"].get("name", "model"),
                                 _optimizer(config["optimizer"], "optimizer", source),
                                 list(layers_by_name.values()))]
    else:
        groups = _groups(config["optimizers"], layers_by_name, source)
    loss = config["loss"]
    loss_fn = getattr(fw.losses, loss["name"])
    if "from_logits" in loss:
        loss_fn = functools.partial(loss_fn, from_logits=loss["from_logits"])
    return Training(model, groups, loss_fn,
                    {name: _metric(name, loss) for name in config["metrics"]})


def training_labels(labels: np.ndarray, config: dict[str, Any]) -> np.ndarray:
    """Labels in the form the loss expects: binary cross-entropy wants float (n, 1) targets."""
    if config["loss"]["name"] == "binary_crossentropy":
        return labels.astype(np.float32).reshape(-1, 1)
    return labels


def _layer(spec: dict[str, Any]) -> layers.Layer:
    if spec["type"] == "dense":
        return layers.Dense(spec["units"], activation=spec.get("activation"),
                            use_bias=spec["use_bias"],
                            kernel_initializer=spec["kernel_initializer"],
                            bias_initializer=spec["bias_initializer"], name=spec["name"])
    if spec["type"] == "dropout":
        return layers.Dropout(spec["rate"], name=spec["name"])
    return layers.Flatten(name=spec["name"])


def _groups(specs: list[dict[str, Any]], layers_by_name: dict[str, layers.Layer],
            source: Source) -> list[OptimizerGroup]:
    claimed = {name for spec in specs for name in spec.get("layers", [])}
    groups = []
    for position, spec in enumerate(specs):
        names = spec.get("layers") or [name for name, layer in layers_by_name.items()
                                        if name not in claimed and layer.trainable_variables]
        groups.append(OptimizerGroup(spec["name"],
                                     _optimizer(spec, f"optimizers[{position}]", source),
                                     [layers_by_name[name] for name in names]))
    return groups


def _optimizer(spec: dict[str, Any], key: str, source: Source) -> optimizers.Optimizer:
    settings = {k: v for k, v in spec.items() if k not in ("type", "name", "layers", "schedule")}
    try:
        if "schedule" in spec:
            schedule = dict(spec["schedule"])
            make_schedule = schedule_class(schedule.pop("type"))
            if "learning_rate" in settings:
                schedule["initial_learning_rate"] = settings["learning_rate"]
            settings["learning_rate"] = make_schedule(**schedule)
        return optimizer_class(spec["type"])(**settings)
    except (TypeError, ValueError) as error:
        raise source.error(key, f"the optimizer rejects these settings: {error}") from None


def _check_fit(config: dict[str, Any], data: Dataset, source: Source) -> None:
    """The last layer's width and the loss must match the task the data turned out to be."""
    loss = config["loss"]["name"]
    dense = [(i, spec) for i, spec in enumerate(config["model"]["layers"])
             if spec["type"] == "dense"]
    if not dense:
        raise source.error("model.layers", "needs at least one dense layer")
    position, last = dense[-1]
    described = f"data {config['data']['name']!r} is a {data.task} task"
    suits = {"classification": ("sparse_categorical_crossentropy",),
             "binary": ("binary_crossentropy", "sparse_categorical_crossentropy"),
             "regression": ("mean_squared_error",)}[data.task]
    if loss not in suits:
        raise source.error("loss.name", f"{loss!r} does not suit the data: {described}; "
                                        f"use {' or '.join(map(repr, suits))}")
    if loss == "sparse_categorical_crossentropy":
        units, why = data.num_classes, f"one output per class: {data.num_classes} classes"
    else:
        units, why = 1, "one output per example"
    if last["units"] != units:
        _check_label_range(data, position, last["units"], loss)
        raise source.error(f"model.layers[{position}].units",
                           f"expected {units} ({why}; {described} with loss {loss!r}), "
                           f"got {last['units']}")
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
