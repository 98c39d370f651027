"""Keras's loss functions, per example: each reduces only the last axis and leaves the batch.

Every function is made of the framework's differentiable ops, so its gradients (of any order)
come from the tape. Probabilities are clipped to [1e-7, 1 - 1e-7] before a log, as Keras does,
so a confident wrong prediction costs about 16.1 rather than infinity. With
``from_logits=True`` the cross-entropies use fused, stable forms instead: exact at logits of
+-1000.
"""
import math

from .. import nn
from ..ops import (abs, cast, clip_by_value, equal, expand_dims, log, logical_or, maximum,
                   multiply, reduce_all, reduce_max, reduce_mean, reduce_sum, sqrt, square,
                   squeeze, subtract, where)
from ..probability_loss import sparse_crossentropy_of_probabilities
from ..registry import Registry
from ..engine.tensor import convert_to_tensor

LOSSES = Registry("loss")
EPSILON = 1e-7  # Keras's backend.epsilon(): the clip applied to probabilities

# The labels a loss compares predictions with, which it declares (``expects``): what a trainer
# that reads labels from data (the runner) must feed it, and which tasks it suits.
LABEL_FORMS = {"class_ids": "integer class ids, one per example",
               "one_hot": "one-hot rows (or class probabilities), one per example",
               "binary": "targets in [0, 1] (or -1/1 for the hinges), one per output",
               "values": "real-valued targets, one per output"}


def expects(form):
    """Declare the form of labels a loss takes (one of ``LABEL_FORMS``), as ``labels``."""
    if form not in LABEL_FORMS:
        raise ValueError(f"a loss's labels are one of {sorted(LABEL_FORMS)}, got {form!r}")

    def declare(loss):
        loss.labels = form
        return loss
    return declare


def same_rank(y_true, y_pred):
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


def _pair(y_true, y_pred):
    """Both as tensors of ``y_pred``'s dtype, at the same rank (Keras's preamble)."""
    y_pred = convert_to_tensor(y_pred)
    return same_rank(cast(y_true, y_pred.dtype), y_pred)


def _check_same_shape(name, y_true, y_pred):
    if y_true.shape != y_pred.shape:
        raise ValueError(f"{name}: y_true of shape {y_true.shape} and y_pred of shape "
                         f"{y_pred.shape} must have the same shape")


@LOSSES.register(aliases=("mse", "MSE"))
@expects("values")
def mean_squared_error(y_true, y_pred):
    """mean((y_true - y_pred)^2) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    return reduce_mean(square(subtract(y_true, y_pred)), axis=-1)


@LOSSES.register(aliases=("mae", "MAE"))
@expects("values")
def mean_absolute_error(y_true, y_pred):
    """mean(|y_true - y_pred|) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    return reduce_mean(abs(subtract(y_true, y_pred)), axis=-1)


@LOSSES.register(aliases=("mape", "MAPE"))
@expects("values")
def mean_absolute_percentage_error(y_true, y_pred):
    """100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7)) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    return reduce_mean(abs((y_true - y_pred) / maximum(abs(y_true), EPSILON)), axis=-1) * 100.0


@LOSSES.register(aliases=("msle", "MSLE"))
@expects("values")
def mean_squared_logarithmic_error(y_true, y_pred):
    """mean((log(1 + max(y_pred, 1e-7)) - log(1 + max(y_true, 1e-7)))^2) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    first = log(maximum(y_pred, EPSILON) + 1.0)
    second = log(maximum(y_true, EPSILON) + 1.0)
    return reduce_mean(square(first - second), axis=-1)


@LOSSES.register
@expects("values")
def huber(y_true, y_pred, delta=1.0):
    """Half the squared error where it is at most ``delta``, linear beyond: robust to outliers."""
    y_true, y_pred = _pair(y_true, y_pred)
    error = y_pred - y_true
    abs_error = abs(error)
    quadratic = square(error) * 0.5
    linear = abs_error * delta - 0.5 * delta * delta
    return reduce_mean(where(abs_error <= delta, quadratic, linear), axis=-1)


@LOSSES.register
@expects("values")
def log_cosh(y_true, y_pred):
    """mean(log(cosh(y_pred - y_true))), as x + softplus(-2x) - log 2: no overflow of cosh."""
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return reduce_mean(x + nn.softplus(x * -2.0) - math.log(2.0), axis=-1)


@LOSSES.register(aliases=("kld", "KLD"))
@expects("one_hot")
def kl_divergence(y_true, y_pred):
    """sum(y_true * log(y_true / y_pred)) over the last axis, both clipped to [1e-7, 1]."""
    y_pred = convert_to_tensor(y_pred)
    y_true = clip_by_value(cast(y_true, y_pred.dtype), EPSILON, 1.0)
    y_pred = clip_by_value(y_pred, EPSILON, 1.0)
    return reduce_sum(y_true * log(y_true / y_pred), axis=-1)


@LOSSES.register
@expects("values")
def poisson(y_true, y_pred):
    """mean(y_pred - y_true * log(y_pred + 1e-7)) over the last axis."""
    y_pred = convert_to_tensor(y_pred)
    y_true = cast(y_true, y_pred.dtype)
    return reduce_mean(y_pred - y_true * log(y_pred + EPSILON), axis=-1)


def _l2_normalize(x, axis):
    """x / ||x||, with the norm kept at least 1e-7 (Keras's normalize: a zero vector stays 0)."""
    return x / sqrt(maximum(reduce_sum(square(x), axis=axis, keepdims=True), EPSILON ** 2))


@LOSSES.register
@expects("values")
def cosine_similarity(y_true, y_pred, axis=-1):
    """MINUS the cosine of the angle between y_true and y_pred along ``axis`` (Keras's sign: a
    loss, so that minimizing it aligns the vectors): -1 for parallel vectors."""
    y_true, y_pred = _pair(y_true, y_pred)
    return -reduce_sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis), axis=axis)


def _hinge_labels(y_true):
    """Labels in {-1, 1}: Keras maps {0, 1} labels to them, but only when every label is 0 or
    1 (labels already in {-1, 1}, or any other values, are used as they are)."""
    # (a value read from the labels: fw.function checks it on every call)
    binary = bool(reduce_all(logical_or(equal(y_true, 0.0), equal(y_true, 1.0))))
    return y_true * 2.0 - 1.0 if binary else y_true


@LOSSES.register
@expects("binary")
def hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0)) over the last axis, labels in {-1, 1} (or {0, 1})."""
    y_pred = convert_to_tensor(y_pred)
    y_true = _hinge_labels(cast(y_true, y_pred.dtype))
    return reduce_mean(maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


@LOSSES.register
@expects("binary")
def squared_hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0)^2) over the last axis, labels as ``hinge``'s."""
    y_pred = convert_to_tensor(y_pred)
    y_true = _hinge_labels(cast(y_true, y_pred.dtype))
    return reduce_mean(square(maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


@LOSSES.register
@expects("one_hot")
def categorical_hinge(y_true, y_pred):
    """max(max_wrong - score_true + 1, 0) for one-hot ``y_true``."""
    y_pred = convert_to_tensor(y_pred)
    y_true = cast(y_true, y_pred.dtype)
    positive = reduce_sum(y_true * y_pred, axis=-1)
    negative = reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return maximum(negative - positive + 1.0, 0.0)


@LOSSES.register
@expects("class_ids")
def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    """-log p[label] for integer labels ``y_true`` (shape ``y_pred.shape[:-1]``, or with a
    trailing 1) and class probabilities or logits ``y_pred`` on the last axis.

    Probabilities go through TensorFlow-Keras's path: clipped, logged, then the fused kernel,
    which also renormalises rows that do not sum to one.
    """
    y_pred, y_true = convert_to_tensor(y_pred), convert_to_tensor(y_true)
    values, ids = y_pred._value, y_true._value  # (checked as arrays: every training step)
    if axis != -1 and axis != values.ndim - 1:
        raise ValueError(f"sparse_categorical_crossentropy: only the last axis can hold the "
                         f"classes, got axis={axis} for y_pred of shape {y_pred.shape}")
    if ids.ndim == values.ndim and ids.shape[-1] == 1:
        y_true = squeeze(y_true, -1)
    if ids.dtype.kind not in "iu":
        y_true = cast(y_true, "int64")
    if not from_logits:  # clip, log and the cross-entropy as one op (Keras's numbers)
        return sparse_crossentropy_of_probabilities(y_true, y_pred)
    return nn.sparse_softmax_cross_entropy_with_logits(y_true, y_pred)


@LOSSES.register
@expects("one_hot")
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


@LOSSES.register(aliases=("bce", "BCE"))
@expects("binary")
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


# Keras's short names, as module attributes too (``fw.losses.mse``).
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kl_divergence
bce = BCE = binary_crossentropy
