"""What ``Model.compile`` turns its ``loss``, ``loss_weights``, ``metrics`` and
``weighted_metrics`` into, as Keras 3's ``trainers/compile_utils.py`` does.

Both are resolved on their first call, from the structures and shapes of ``y_true`` and
``y_pred``: ``"accuracy"``/``"acc"`` becomes binary accuracy when the model has one output
unit (at 0.5, even on logits), sparse categorical accuracy when the labels have a lower rank
than the predictions (or one unit against several), categorical accuracy otherwise.
A model of several outputs names them (dict keys, or its output layers' names), takes a loss,
weight and metric list per output, and tracks each output's loss as ``<name>_loss``; its
metrics are reported as ``<name>_<metric>``.
"""
from framework import losses as losses_module
from framework import metrics as metrics_module
from framework.engine import nest
from framework.ops import cast

__all__ = ["CompileLoss", "CompileMetrics", "output_names"]


def output_names(model, y_pred):
    """The outputs' names in flattened order: dict keys, or a functional model's output layers,
    or ``output_<i>``."""
    if isinstance(y_pred, dict):
        return sorted(y_pred)
    flat = nest.flatten(y_pred)
    outputs = getattr(model, "outputs", None)
    if outputs and len(outputs) == len(flat):
        return [tensor.node.layer.name for tensor in outputs]
    return [f"output_{i}" for i in range(len(flat))] if len(flat) > 1 else [None]


def _is_binary_or_sparse(y_true, y_pred):
    is_binary = y_pred.shape[-1] == 1
    is_sparse = len(y_true.shape) < len(y_pred.shape) or (
        y_true.shape[-1] == 1 and y_pred.shape[-1] > 1)
    return is_binary, is_sparse


def _get_metric(identifier, y_true, y_pred):
    if str(identifier).lower() in ("accuracy", "acc"):
        is_binary, is_sparse = _is_binary_or_sparse(y_true, y_pred)
        cls = (metrics_module.BinaryAccuracy if is_binary else
               metrics_module.SparseCategoricalAccuracy if is_sparse else
               metrics_module.CategoricalAccuracy)
        return cls(name=str(identifier))
    metric = metrics_module.get(identifier)
    if not isinstance(metric, metrics_module.Metric):
        metric = metrics_module.MeanMetricWrapper(metric)
    if isinstance(identifier, str):
        metric.name = identifier
    return metric


def _get_loss(identifier, y_true, y_pred):
    if identifier is None:
        return None
    if str(identifier).lower() in ("crossentropy", "ce"):
        is_binary, is_sparse = _is_binary_or_sparse(y_true, y_pred)
        fn = (losses_module.binary_crossentropy if is_binary else
              losses_module.sparse_categorical_crossentropy if is_sparse else
              losses_module.categorical_crossentropy)
    else:
        fn = losses_module.get(identifier)
    if isinstance(fn, losses_module.Loss):
        return fn
    name = identifier if isinstance(identifier, str) else getattr(fn, "__name__", "loss")
    return losses_module.LossFunctionWrapper(fn, name=name)


def _per_output(setting, names, what):
    """``setting`` (one value for a single output, a list in output order, or a dict by output
    name) as a list in output order."""
    if isinstance(setting, dict):
        unknown = sorted(set(setting) - set(names), key=str)
        if unknown:
            raise ValueError(f"compile(): {what} names outputs {unknown} the model does not "
                             f"have; its outputs are {names}")
        return [setting.get(name) for name in names]
    if isinstance(setting, (list, tuple)) and len(names) > 1:
        if len(setting) != len(names):
            raise ValueError(f"compile(): {what} must have one entry per output ({len(names)}: "
                             f"{names}), got {len(setting)}")
        return list(setting)
    return [setting] * len(names)


def _aligned(y, names, like):
    """``y`` as a list in the outputs' order: a dict by name, a list, or one array."""
    if isinstance(y, dict):
        missing = [name for name in names if name not in y]
        if missing:
            raise ValueError(f"the targets lack outputs {missing}; the model's outputs are "
                             f"{names}, the targets' keys {sorted(y)}")
        return [y[name] for name in names]
    flat = nest.flatten(y)
    if len(flat) != len(like):
        raise ValueError(f"the model has {len(like)} outputs {names}, but {len(flat)} target "
                         f"arrays were given")
    return flat


class CompileLoss:
    """The compiled loss: each output's loss times its weight, added up (Keras's
    ``CompileLoss``); with several outputs, a ``Mean`` per output tracks its unweighted loss,
    as the plain mean of the batches' values: Keras weights it by the batch size read from the
    static shape, which TensorFlow's compiled step does not know, so on TensorFlow the last,
    smaller batch counts as much as the others (recorded)."""

    def __init__(self, model, loss, loss_weights=None):
        self._model, self._loss, self._loss_weights = model, loss, loss_weights
        self.metrics, self._flat = [], None

    def build(self, y_true, y_pred):
        names = output_names(self._model, y_pred)
        flat_pred = nest.flatten(y_pred)
        flat_true = _aligned(y_true, names, flat_pred)
        losses = _per_output(self._loss, names, "loss")
        weights = _per_output(self._loss_weights, names, "loss_weights")
        self._flat = [(name, _get_loss(loss, t, p), weight) for name, loss, weight, t, p in
                      zip(names, losses, weights, flat_true, flat_pred, strict=True)]
        if len(self._flat) > 1:
            self.metrics = [metrics_module.Mean(name=f"{name}_loss")
                            for name, loss, _ in self._flat if loss is not None]
        self._names = names

    def __call__(self, y_true, y_pred, sample_weight=None):
        if self._flat is None:
            self.build(y_true, y_pred)
        flat_pred = nest.flatten(y_pred)
        flat_true = _aligned(y_true, self._names, flat_pred)
        weights = (_aligned(sample_weight, self._names, flat_pred)
                   if isinstance(sample_weight, (dict, list, tuple)) else
                   [sample_weight] * len(flat_pred))
        trackers, total = iter(self.metrics), None
        for (name, loss, weight), t, p, w in zip(self._flat, flat_true, flat_pred, weights):
            if loss is None:
                continue
            value = _checked_call(loss, name, t, p, w)
            value = value if value.dtype == "float32" else cast(value, "float32")
            if self.metrics:
                next(trackers).update_state(value)  # (see the class's docstring)
            value = value if weight is None else value * float(weight)
            total = value if total is None else total + value
        return total


def _checked_call(loss, output, y_true, y_pred, sample_weight):
    """The loss's value; labels whose shape does not fit the predictions are one line naming
    the loss, the output and both shapes (Keras: "Dimensions must be equal")."""
    try:
        return loss(y_true, y_pred, sample_weight)
    except ValueError as error:
        where = f" of output '{output}'" if output else ""
        raise ValueError(f"loss '{loss.name}'{where} does not fit the labels: y_true has shape "
                         f"{tuple(y_true.shape)}, y_pred {tuple(y_pred.shape)} "
                         f"({str(error).splitlines()[0]})") from None


class CompileMetrics:
    """The compiled metrics of every output (Keras's ``CompileMetrics``): ``metrics`` see no
    ``sample_weight``, ``weighted_metrics`` do; ``result()`` is one dict of all of them."""

    name = "compile_metrics"

    def __init__(self, model, metrics=None, weighted_metrics=None):
        for what, value in (("metrics", metrics), ("weighted_metrics", weighted_metrics)):
            if value is not None and not isinstance(value, (list, tuple, dict)):
                raise ValueError(f"Expected `{what}` argument to be a list, tuple, or dict. "
                                 f"Received instead: {what}={value!r} of type {type(value)}")
        self._model, self._given = model, (metrics, weighted_metrics)
        self._plain = self._weighted = None

    @property
    def built(self):
        return self._plain is not None

    @property
    def metrics(self):
        """Every metric object, the plain ones first (what a monitor looks its direction up in)."""
        if not self.built:
            return []
        return [m for group in self._plain + self._weighted for _, m in group]

    def build(self, y_true, y_pred):
        names = output_names(self._model, y_pred)
        flat_pred = nest.flatten(y_pred)
        flat_true = _aligned(y_true, names, flat_pred)
        prefix = len(names) > 1

        def resolve(given, what):
            groups = []
            for name, identifiers, t, p in zip(names, _per_output(given, names, what),
                                               flat_true, flat_pred):
                identifiers = [] if identifiers is None else (
                    identifiers if isinstance(identifiers, (list, tuple)) else [identifiers])
                groups.append([(name if prefix else None, _get_metric(i, t, p))
                               for i in identifiers])
            return groups

        self._names = names
        self._plain = resolve(self._given[0], "metrics")
        self._weighted = resolve(self._given[1], "weighted_metrics")

    def update_state(self, y_true, y_pred, sample_weight=None):
        if not self.built:
            self.build(y_true, y_pred)
        flat_pred = nest.flatten(y_pred)
        flat_true = _aligned(y_true, self._names, flat_pred)
        for group, t, p in zip(self._plain, flat_true, flat_pred):
            for _, metric in group:
                metric.update_state(t, p)
        weights = (_aligned(sample_weight, self._names, flat_pred)
                   if isinstance(sample_weight, (dict, list, tuple)) else
                   [sample_weight] * len(flat_pred))
        for group, t, p, w in zip(self._weighted, flat_true, flat_pred, weights):
            for _, metric in group:
                metric.update_state(t, p, sample_weight=w)

    def reset_state(self):
        for metric in self.metrics:
            metric.reset_state()

    def result(self):
        """``{name: value}``, Keras's names: ``<output>_<metric>`` with several outputs, a
        weighted metric whose name is taken ``weighted_<name>``, then ``_1``, ``_2``..."""
        if not self.built:
            raise ValueError("Cannot get result() since the metric has not yet been built.")
        results = {}
        for weighted, groups in ((False, self._plain), (True, self._weighted)):
            for group in groups:
                for output, metric in group:
                    name = f"{output}_{metric.name}" if output else metric.name
                    if name in results and weighted:
                        name = f"weighted_{metric.name}"
                        name = f"{output}_{name}" if output else name
                    base, index = name, 1
                    while name in results:
                        name, index = f"{base}_{index}", index + 1
                    results[name] = metric.result()
        return results
