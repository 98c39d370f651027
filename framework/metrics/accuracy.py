"""Accuracy and error metrics: a per-sample function each, averaged by ``MeanMetricWrapper``.

The functions (``fw.metrics.binary_accuracy`` and friends, as ``keras.metrics``'s) take
tensors, arrays or lists and return a float32 tensor of per-sample values; the classes
accumulate their mean. Keras's quirks kept: ``binary_accuracy`` uses a strict
``y_pred > threshold``; ``top_k`` counts a class in when it ties the k-th score (TensorFlow's
``in_top_k``); argmax ties go to the first class.
"""
import numpy as np

from ..engine import backend
from ..registry import snake_case
from ..ops import sqrt
from .base import METRICS, MeanMetricWrapper, metric_op, same_rank


def _float(matches):
    return matches.astype(np.float32)


def _values(fn):
    """A per-sample function on arrays as a public one (``metric_op``: it takes tensors,
    arrays or lists and returns a tensor)."""
    public = metric_op(fn.__name__.lstrip("_"), fn)
    public.__name__, public.__doc__ = fn.__name__.lstrip("_"), fn.__doc__
    return public


def _pair(y_true, y_pred):
    """Keras's preamble of the regression metrics: y_true in y_pred's dtype, same rank."""
    if y_pred.dtype.kind != "f":
        y_pred = y_pred.astype(np.float32)
    return same_rank(y_true.astype(y_pred.dtype, copy=False), y_pred)


def _accuracy(y_true, y_pred):
    """1 where y_true == y_pred, else 0."""
    y_true, y_pred = same_rank(y_true.astype(y_pred.dtype, copy=False), y_pred)
    return _float(y_true == y_pred)


def _binary_accuracy(y_true, y_pred, threshold=0.5):
    """1 where (y_pred > threshold) equals y_true (strictly greater, as Keras)."""
    y_true, y_pred = same_rank(y_true, y_pred)
    return _float((y_pred > threshold) == y_true)


def _categorical_accuracy(y_true, y_pred):
    """1 where the argmax of one-hot y_true is y_pred's argmax."""
    return _float(y_true.argmax(axis=-1) == y_pred.argmax(axis=-1))


def _sparse_categorical_accuracy(y_true, y_pred):
    """1 where the integer label y_true (shape y_pred.shape[:-1], or with a trailing 1) is
    y_pred's argmax."""
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    return _float(y_pred.argmax(axis=-1) == y_true)


def _in_top_k(labels, y_pred, k):
    """TensorFlow's in_top_k: the label's score is beaten by fewer than k others (so a tie at
    the k-th place counts in), and is finite."""
    xp = backend.array_module(y_pred)
    scores = y_pred.reshape(-1, y_pred.shape[-1])
    flat = labels.reshape(-1).astype(np.intp)
    inside = (flat >= 0) & (flat < scores.shape[-1])
    target = xp.take_along_axis(scores, xp.where(inside, flat, 0)[:, None], axis=-1)
    beaten_by = (scores > target).sum(axis=-1)
    hits = (beaten_by < k) & inside & xp.isfinite(target[:, 0])
    return _float(hits).reshape(labels.shape)


def _top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where one-hot y_true's class is among y_pred's k highest scores."""
    return _in_top_k(y_true.argmax(axis=-1), y_pred, k)


def _sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where the integer label is among y_pred's k highest scores."""
    return _in_top_k(y_true, y_pred, k)


def _mean_squared_error(y_true, y_pred):
    """mean((y_true - y_pred)^2) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    return ((y_true - y_pred) ** 2).mean(axis=-1)


def _mean_absolute_error(y_true, y_pred):
    """mean(|y_true - y_pred|) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    return abs(y_true - y_pred).mean(axis=-1)


def _squared_error(y_true, y_pred):
    """(y_pred - y_true)^2 per element: RootMeanSquaredError's values."""
    y_true, y_pred = _pair(y_true, y_pred)
    return (y_pred - y_true) ** 2


accuracy = _values(_accuracy)
binary_accuracy = _values(_binary_accuracy)
categorical_accuracy = _values(_categorical_accuracy)
sparse_categorical_accuracy = _values(_sparse_categorical_accuracy)
top_k_categorical_accuracy = _values(_top_k_categorical_accuracy)
sparse_top_k_categorical_accuracy = _values(_sparse_top_k_categorical_accuracy)
_mean_squared_error_op = _values(_mean_squared_error)
_mean_absolute_error_op = _values(_mean_absolute_error)
_squared_error_op = _values(_squared_error)


class _Wrapped(MeanMetricWrapper):
    """A MeanMetricWrapper whose function is fixed by the class (``_per_sample``), named by default
    by the class's snake_case name; ``settings`` are a subclass's own (``threshold``, ``k``).
    Config: name, dtype and the settings."""

    _per_sample = None

    def __init__(self, name=None, dtype=None, **settings):
        super().__init__(type(self)._per_sample, name=name or snake_case(type(self).__name__),
                         dtype=dtype, **settings)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, **self._fn_kwargs}


@METRICS.register
class Accuracy(_Wrapped):
    """How often y_pred equals y_true exactly."""
    _per_sample = staticmethod(accuracy)


@METRICS.register
class BinaryAccuracy(_Wrapped):
    """How often ``y_pred > threshold`` matches the 0/1 label."""
    _per_sample = staticmethod(binary_accuracy)

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(name, dtype, threshold=threshold)
        self.threshold = threshold


@METRICS.register
class CategoricalAccuracy(_Wrapped):
    """How often y_pred's argmax is one-hot y_true's."""
    _per_sample = staticmethod(categorical_accuracy)


@METRICS.register
class SparseCategoricalAccuracy(_Wrapped):
    """How often y_pred's argmax is the integer label."""
    _per_sample = staticmethod(sparse_categorical_accuracy)


class _TopK(_Wrapped):
    """The top-k accuracies: ``k`` (default 5) comes first, as in Keras."""

    def __init__(self, k=5, name=None, dtype=None):
        super().__init__(name, dtype, k=k)
        self.k = k


@METRICS.register
class TopKCategoricalAccuracy(_TopK):
    """How often one-hot y_true's class is among y_pred's ``k`` highest scores."""
    _per_sample = staticmethod(top_k_categorical_accuracy)


@METRICS.register
class SparseTopKCategoricalAccuracy(_TopK):
    """How often the integer label is among y_pred's ``k`` highest scores."""
    _per_sample = staticmethod(sparse_top_k_categorical_accuracy)


@METRICS.register(aliases=("mse", "MSE"))
class MeanSquaredError(_Wrapped):
    """The mean over samples of the mean squared error over the last axis."""
    _per_sample = staticmethod(_mean_squared_error_op)


@METRICS.register(aliases=("mae", "MAE"))
class MeanAbsoluteError(_Wrapped):
    """The mean over samples of the mean absolute error over the last axis."""
    _per_sample = staticmethod(_mean_absolute_error_op)


@METRICS.register
class RootMeanSquaredError(_Wrapped):
    """sqrt of the (weighted) mean squared error over every element seen."""
    _per_sample = staticmethod(_squared_error_op)

    def result(self):
        return sqrt(super().result())
