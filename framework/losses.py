"""Losses with Keras's formulas and numbers (``fw.losses``).

The functions are per example, as ``tf.keras.losses``'s are: they reduce only the class (last)
axis, and the caller takes the mean. The classes (``SparseCategoricalCrossentropy(...)``) add
Keras's reduction: by default the sum over all elements divided by their number.

Probabilities are clipped to [1e-7, 1 - 1e-7] before the log, as Keras does, so a confident
wrong prediction costs about 16.1 rather than infinity. With ``from_logits=True`` the
cross-entropies use the fused, stable kernels of ``fw.nn`` instead: exact at logits of +-1000.
"""
from . import nn
from .ops import (cast, clip_by_value, expand_dims, log, multiply, reduce_mean, reduce_sum, square,
                  squeeze, subtract, where)
from .probability_loss import sparse_crossentropy_of_probabilities
from .tensor import convert_to_tensor

__all__ = ["EPSILON", "BinaryCrossentropy", "CategoricalCrossentropy", "Loss", "MeanSquaredError",
           "SparseCategoricalCrossentropy", "binary_crossentropy", "categorical_crossentropy",
           "mean_squared_error", "mse", "sparse_categorical_crossentropy"]

EPSILON = 1e-7  # Keras's backend.epsilon(): the clip applied to probabilities


def _same_rank(y_true, y_pred):
    """Keras's squeeze_or_expand_to_same_rank: fix a trailing axis of size 1 on one side."""
    if y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1] == 1:
        if y_pred.ndim == 1:
            return y_true, expand_dims(y_pred, -1)
        return squeeze(y_true, -1), y_pred
    if y_pred.ndim == y_true.ndim + 1 and y_pred.shape[-1] == 1:
        if y_true.ndim == 1:
            return expand_dims(y_true, -1), y_pred
        return y_true, squeeze(y_pred, -1)
    return y_true, y_pred


def _check_same_shape(name, y_true, y_pred):
    if y_true.shape != y_pred.shape:
        raise ValueError(f"{name}: y_true of shape {y_true.shape} and y_pred of shape "
                         f"{y_pred.shape} must have the same shape")


def mean_squared_error(y_true, y_pred):
    """mean((y_true - y_pred)^2) over the last axis."""
    y_pred = convert_to_tensor(y_pred)
    y_true, y_pred = _same_rank(cast(y_true, y_pred.dtype), y_pred)
    return reduce_mean(square(subtract(y_true, y_pred)), axis=-1)


mse = mean_squared_error


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    """-log p[label] for integer labels ``y_true`` (shape ``y_pred.shape[:-1]``, or with a
    trailing 1) and class probabilities or logits ``y_pred`` on the last axis.

    Probabilities go through TensorFlow-Keras's path: clipped, logged, then the fused kernel,
    which also renormalises rows that do not sum to one.
    """
    y_pred = convert_to_tensor(y_pred)
    if axis not in (-1, y_pred.ndim - 1):
        raise ValueError(f"sparse_categorical_crossentropy: only the last axis can hold the "
                         f"classes, got axis={axis} for y_pred of shape {y_pred.shape}")
    y_true = convert_to_tensor(y_true)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = squeeze(y_true, -1)
    if y_true.dtype.kind not in "iu":
        y_true = cast(y_true, "int64")
    if not from_logits:  # clip, log and the fused kernel as one op (the same numbers)
        return sparse_crossentropy_of_probabilities(y_true, y_pred)
    return nn.sparse_softmax_cross_entropy_with_logits(y_true, y_pred)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """-sum(y_true * log p) over ``axis`` for one-hot (or soft) labels.

    ``label_smoothing`` moves that fraction of each label's mass evenly over all classes.
    """
    y_pred = convert_to_tensor(y_pred)
    y_true = cast(y_true, y_pred.dtype)
    _check_same_shape("categorical_crossentropy", y_true, y_pred)
    if label_smoothing:
        classes = y_true.shape[-1]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    if from_logits:
        return nn.softmax_cross_entropy_with_logits(y_true, y_pred, axis=axis)
    probabilities = y_pred / reduce_sum(y_pred, axis=axis, keepdims=True)
    probabilities = clip_by_value(probabilities, EPSILON, 1 - EPSILON)
    return -reduce_sum(multiply(y_true, log(probabilities)), axis=axis)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """The mean over ``axis`` of -(z log p + (1 - z) log(1 - p)) for targets z in [0, 1].

    With logits x it is max(x, 0) - x z + log(1 + exp(-|x|)) (TensorFlow's
    sigmoid_cross_entropy_with_logits): no overflow, and the exact gradient sigmoid(x) - z,
    also at x = 0.
    """
    y_pred = convert_to_tensor(y_pred)
    y_true = cast(y_true, y_pred.dtype)
    _check_same_shape("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        positive = y_pred >= 0
        relu_logits = where(positive, y_pred, 0.0)
        neg_abs_logits = where(positive, -y_pred, y_pred)
        per_element = relu_logits - y_pred * y_true + nn.softplus(neg_abs_logits)
    else:
        p = clip_by_value(y_pred, EPSILON, 1 - EPSILON)
        per_element = -(y_true * log(p) + (1.0 - y_true) * log(1.0 - p))
    return reduce_mean(per_element, axis=axis)


class Loss:
    """A loss function with Keras's reduction, called as ``loss(y_true, y_pred, sample_weight)``.

    ``reduction``: ``"sum_over_batch_size"`` (the default: the sum of the weighted per-example
    losses divided by their number), ``"sum"``, or ``"none"``/None (per-example losses).
    """

    _REDUCTIONS = ("sum_over_batch_size", "sum", "none", None)

    def __init__(self, reduction="sum_over_batch_size", name=None):
        if reduction not in self._REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of "
                             f"{self._REDUCTIONS}, got {reduction!r}")
        self.reduction = reduction
        self.name = name

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} must define call(y_true, y_pred)")

    def __call__(self, y_true, y_pred, sample_weight=None):
        losses = self.call(y_true, y_pred)
        if sample_weight is not None:
            weights, losses = _same_rank(cast(sample_weight, losses.dtype), losses)
            losses = losses * weights
        if self.reduction in ("none", None) or losses.ndim == 0:
            return losses
        total = reduce_sum(losses)
        if self.reduction == "sum":
            return total
        return total / float(max(losses._value.size, 1))


class MeanSquaredError(Loss):
    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error"):
        super().__init__(reduction, name)

    def call(self, y_true, y_pred):
        return mean_squared_error(y_true, y_pred)


class SparseCategoricalCrossentropy(Loss):
    def __init__(self, from_logits=False, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy"):
        super().__init__(reduction, name)
        self.from_logits = from_logits

    def call(self, y_true, y_pred):
        return sparse_categorical_crossentropy(y_true, y_pred, from_logits=self.from_logits)


class CategoricalCrossentropy(Loss):
    def __init__(self, from_logits=False, label_smoothing=0.0, reduction="sum_over_batch_size",
                 name="categorical_crossentropy"):
        super().__init__(reduction, name)
        self.from_logits, self.label_smoothing = from_logits, label_smoothing

    def call(self, y_true, y_pred):
        return categorical_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing)


class BinaryCrossentropy(Loss):
    def __init__(self, from_logits=False, label_smoothing=0.0, reduction="sum_over_batch_size",
                 name="binary_crossentropy"):
        super().__init__(reduction, name)
        self.from_logits, self.label_smoothing = from_logits, label_smoothing

    def call(self, y_true, y_pred):
        return binary_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing)
