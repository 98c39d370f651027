"""The metrics a run config names (``metrics = ["accuracy"]``), computed on NumPy arrays.

Each registers itself in ``METRICS`` as a factory: given the resolved ``[loss]`` table, it
returns a function of (labels, predictions) giving a per-example mean. ``on_classes`` says
whether it needs class labels (accuracy) or numeric targets (the distances).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from framework.registry import Registry

METRICS = Registry("metric")
Metric = Callable[[np.ndarray, np.ndarray], float]


@METRICS.register
def accuracy(loss: dict[str, Any]) -> Metric:
    """The fraction of examples whose predicted class is the label."""
    if loss["name"] == "binary_crossentropy":
        threshold = 0.0 if loss["from_logits"] else 0.5
        return lambda y, p: np.count_nonzero((p > threshold) == (y > 0.5)) / y.size
    # (every training step asks: the array method and a count skip NumPy's Python wrappers)
    return lambda y, p: np.count_nonzero(p.argmax(axis=-1) == y) / y.size


@METRICS.register
def mae(loss: dict[str, Any]) -> Metric:
    """The mean absolute error."""
    return lambda y, p: float(np.mean(np.abs(p - y)))


@METRICS.register
def mse(loss: dict[str, Any]) -> Metric:
    """The mean squared error."""
    return lambda y, p: float(np.mean((p - y) ** 2))


accuracy.on_classes, mae.on_classes, mse.on_classes = True, False, False
