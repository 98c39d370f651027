"""From a resolved config and its dataset to the objects a training loop uses.

Everything here is built with the public API a user would call by hand, found by name in the
library's registries: each layer type of ``layers.LAYERS`` in a ``layers.Sequential`` (the
runner's, ``training.step.Sequential``, whose ``fit`` step serves several optimizers), an
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
from .config.fields import Source
from .config.optimizers import make_optimizer
from .config.schema import make_layer
from . import step


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
    model: step.Sequential
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
    model = step.Sequential(list(layers_by_name.values()))
    try:
        outputs = model(data.x_train[:1], training=False)
    except (TypeError, ValueError) as error:  # layers that do not fit the data or each other
        raise source.error("model.layers", f"the model cannot run on the data: {error}") from None
    except MemoryError as error:  # a layer too large to build (units = 2000000000)
        position = next((i for i, layer in enumerate(layers_by_name.values())
                         if not layer.built), len(layers_by_name) - 1)
        raise source.error(f"model.layers[{position}]", f"too large for this machine's memory: "
                                                         f"{error}") from None
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
    metrics = {name: _metric(name, loss) for name in config["metrics"]}
    _try_metrics(metrics, training_labels(data.y_train[:1], config, data.num_classes), outputs,
                 source)
    return Training(model, groups, loss_fn, metrics)


def label_form(loss_name: str) -> str | None:
    """The labels the config's loss declares it takes (``fw.losses.expects``): "class_ids",
    "one_hot", "binary" or "values"; None for a loss that declares none."""
    return getattr(fw.losses.LOSSES.lookup(loss_name), "labels", None)


def training_labels(labels: np.ndarray, config: dict[str, Any], classes: int) -> np.ndarray:
    """The data's labels (class ids, or float (n, 1) targets) in the form the loss takes:
    one-hot rows of ``classes``, float (n, 1) binary targets, or as they are."""
    form = label_form(config["loss"]["name"])
    if form == "one_hot":
        return np.eye(classes, dtype=np.float32)[labels.reshape(-1).astype(np.int64)]
    if form == "binary":
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


# The labels each task's data can be given to a loss in (the runner's labels are class ids or
# numeric targets; it makes one-hot rows and binary targets from them).
_TASK_LABELS = {"classification": ("class_ids", "one_hot"),
                "binary": ("binary", "class_ids", "one_hot"),
                "regression": ("values",)}


def _check_fit(config: dict[str, Any], data: Dataset, source: Source) -> None:
    """The loss and the metrics must suit the task the data turned out to be: the loss by the
    labels it declares (``fw.losses.expects``), each metric by the labels it compares."""
    loss = config["loss"]["name"]
    form = label_form(loss)
    described = f"data {config['data']['name']!r} is a {data.task} task"
    suits = _TASK_LABELS[data.task]
    if form not in suits:
        takes = (f"takes {fw.losses.LABEL_FORMS[form]}" if form is not None else
                 "declares no labels (fw.losses.expects)")
        fitting = [name for name in fw.losses.LOSSES.names()
                   if not name[:1].isupper() and label_form(name) in suits]
        raise source.error("loss.name", f"{loss!r} {takes}, so it does not suit the data: "
                                        f"{described}; use one of {', '.join(fitting)}")
    for position, metric in enumerate(config["metrics"]):
        key = f"metrics[{position}]"
        if metric == "accuracy" and form == "values":
            raise source.error(key, f"'accuracy' needs class labels, but {described}; "
                                    f"use 'mae' or 'mse'")
        cls = fw.metrics.METRICS.lookup(metric)
        if not _compares_predictions(cls):
            raise source.error(key, f"{metric!r} does not compare labels with predictions, so "
                                    f"the runner cannot feed it")
        if metric != "accuracy" and _for_labels(cls, form) is None:
            fitting = ["accuracy"] * (form != "values") + [
                name for name in fw.metrics.METRICS.names()
                if _METRIC_LABELS.get(fw.metrics.METRICS.lookup(name)) == form]
            raise source.error(key, f"{metric!r} compares the outputs with "
                                    f"{fw.losses.LABEL_FORMS[_METRIC_LABELS[cls]]}, but "
                                    f"{described} with loss {loss!r}, which takes "
                                    f"{fw.losses.LABEL_FORMS[form]}; use "
                                    f"{' or '.join(map(repr, fitting))}")


def _check_width(outputs: fw.Tensor, config: dict[str, Any], data: Dataset,
                 source: Source) -> None:
    """The model's output width must match the task: one output per class, or one in all.
    The culprit is the last layer that sets a width (``units``)."""
    loss = config["loss"]["name"]
    described = f"data {config['data']['name']!r} is a {data.task} task"
    if label_form(loss) in ("class_ids", "one_hot"):
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
    if label_form(loss) not in ("class_ids", "one_hot") or data.classes is not None \
            or data.num_classes <= units:
        return
    count = sum(int(np.count_nonzero(y >= units)) for y in (data.y_train, data.y_test))
    raise DataError(f"{data.labels}: label {data.num_classes - 1} ({count} example"
                    f"{'s' if count > 1 else ''} with a label of {units} or more) is out of "
                    f"range for model.layers[{position}].units = {units}, whose class ids are 0 "
                    f"to {units - 1}; correct the labels, or set model.layers[{position}].units "
                    f"= {data.num_classes} for {data.num_classes} classes")


# The labels each metric compares with the outputs (the forms of fw.losses.LABEL_FORMS). A
# metric is refused at validation where the loss takes other labels (it would crash or mean
# nothing), except that a metric of one-hot rows and its twin of class ids stand for each
# other, as Keras's "accuracy" does (categorical_accuracy on ids would compare each
# prediction's argmax with the argmax of a single number, always 0).
_METRIC_LABELS = {
    fw.metrics.SparseCategoricalAccuracy: "class_ids",
    fw.metrics.SparseTopKCategoricalAccuracy: "class_ids",
    fw.metrics.CategoricalAccuracy: "one_hot",
    fw.metrics.TopKCategoricalAccuracy: "one_hot",
    fw.metrics.BinaryAccuracy: "binary",
    fw.metrics.AUC: "binary",
    fw.metrics.Precision: "binary",
    fw.metrics.Recall: "binary",
    fw.metrics.MeanSquaredError: "values",
    fw.metrics.MeanAbsoluteError: "values",
    fw.metrics.RootMeanSquaredError: "values",
}
_TWINS = {
    fw.metrics.CategoricalAccuracy: fw.metrics.SparseCategoricalAccuracy,
    fw.metrics.TopKCategoricalAccuracy: fw.metrics.SparseTopKCategoricalAccuracy,
}
_TWINS.update({ids: one_hot for one_hot, ids in _TWINS.items()})


def _for_labels(cls: type, form: str) -> type | None:
    """The metric class that compares labels of ``form``: ``cls``, its twin, or None."""
    wants = _METRIC_LABELS.get(cls)
    if wants is None or wants == form:
        return cls
    twin = _TWINS.get(cls)
    return twin if twin is not None and _METRIC_LABELS[twin] == form else None


def _try_metrics(metrics: dict[str, fw.metrics.Metric], labels: np.ndarray,
                 outputs: fw.Tensor, source: Source) -> None:
    """Each metric updated on one example, then reset: one that the labels or the outputs do
    not suit (a metric registered by the user, say) is refused here, naming its key, rather
    than in the middle of epoch 1."""
    for position, (name, metric) in enumerate(metrics.items()):
        try:
            metric.update_state(labels, outputs)
            float(metric.result())
        except (ArithmeticError, LookupError, TypeError, ValueError) as error:
            raise source.error(f"metrics[{position}]", f"{name!r} cannot compare this task's "
                                                       f"labels with the model's outputs: "
                                                       f"{error}") from None
        finally:
            metric.reset_state()


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
    categorical; a metric of one-hot labels is given in its form for the loss's labels
    (``_TWINS``). A binary metric sees what it is defined on whatever the model ends
    with: one that takes ``from_logits`` (AUC) gets the loss's, binary accuracy the logits'
    threshold, and the others (precision, recall) the probabilities of logits."""
    logits = loss.get("from_logits", False)
    form = label_form(loss["name"])
    cls = fw.metrics.METRICS.lookup(name)
    if name == "accuracy" or cls is fw.metrics.BinaryAccuracy:
        if form == "binary":
            return fw.metrics.BinaryAccuracy(name=name, threshold=0.0 if logits else 0.5)
        if form == "one_hot":
            return fw.metrics.CategoricalAccuracy(name=name)
        return fw.metrics.SparseCategoricalAccuracy(name=name)
    cls = _for_labels(cls, form)
    if "from_logits" in inspect.signature(cls).parameters:
        return cls(name=name, from_logits=logits)
    if logits and _METRIC_LABELS.get(cls) == "binary":
        return _of_probabilities(cls)(name=name)
    return cls(name=name)


@functools.cache
def _of_probabilities(cls: type) -> type:
    """``cls`` fed the probabilities (sigmoid) of a model that ends with logits."""
    def update_state(self, y_true, y_pred, sample_weight=None):
        return cls.update_state(self, y_true, fw.sigmoid(y_pred), sample_weight)

    return type(cls.__name__, (cls,), {"update_state": update_state,
                                       "__doc__": _of_probabilities.__doc__})
