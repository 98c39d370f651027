"""Neural-network functions (``fw.nn``): activations and the fused, stable cross-entropies.

Softmax, log-softmax and the cross-entropies are primitives rather than compositions because
their stable forms subtract the row maximum, and their gradients are short closed forms
(``softmax - labels``) that are both faster and exact at logits of +-1000.
"""
import math

import numpy as np

from . import backend
from .ops import cast, erf, exp, expand_dims, one_hot, reduce_sum, sigmoid, tanh
from .primitive import primitive
from .tensor import convert_to_tensor

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus", "gelu",
           "sparse_softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits"]


@primitive(lambda gg, out, g, y: _relu_grad(gg, y), None)
def _relu_grad(g, y):
    """``g`` where the ReLU's output is positive, else 0 (the ReLU's own VJP, in one op)."""
    return np.where(y > 0, g, 0).astype(g.dtype, copy=False)


@primitive(lambda g, out, x: _relu_grad(g, out))
def relu(features):
    return np.maximum(features, 0).astype(features.dtype, copy=False)


def _log_softmax_raw(x, axis):
    xp = backend.array_module(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


@primitive(lambda g, out, x, axis: out * (g - reduce_sum(g * out, axis=axis, keepdims=True)))
def _softmax(x, axis):
    e = backend.array_module(x).exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@primitive(lambda g, out, x, axis: g - exp(out) * reduce_sum(g, axis=axis, keepdims=True))
def _log_softmax(x, axis):
    return _log_softmax_raw(x, axis)


def _from_end(axis, logits):
    """``axis`` counted from the end, so the VJPs stay right under a cotangent's leading axes."""
    ndim = convert_to_tensor(logits).ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for logits of rank {ndim}")
    return axis % ndim - ndim


def softmax(logits, axis=-1):
    """exp(logits) normalised along ``axis``, computed without overflow."""
    return _softmax(logits, axis=_from_end(axis, logits))


def log_softmax(logits, axis=-1):
    """log(softmax(logits)), computed without overflow or log(0)."""
    return _log_softmax(logits, axis=_from_end(axis, logits))


@primitive(lambda g, out, x: g * sigmoid(x))
def softplus(features):
    return np.logaddexp(features, 0).astype(features.dtype, copy=False)


def gelu(features, approximate=False):
    """Gaussian error linear unit: x * Phi(x) (the tanh approximation when ``approximate``)."""
    x = convert_to_tensor(features)
    if approximate:
        inner = (x + x * x * x * 0.044715) * math.sqrt(2 / math.pi)
        return x * (tanh(inner) + 1) * 0.5
    return x * (erf(x * (1 / math.sqrt(2))) + 1) * 0.5


def _sparse_xent_vjp(g, out, labels, logits):
    hot = one_hot(labels, logits.shape[-1], dtype=logits.dtype)
    return expand_dims(g, -1) * (softmax(logits) - hot)


@primitive(None, _sparse_xent_vjp)
def _sparse_xent(labels, logits):
    log_p = _log_softmax_raw(logits, -1)
    picked = backend.array_module(logits).take_along_axis(log_p, labels[..., None], axis=-1)
    return -picked[..., 0]


def sparse_softmax_cross_entropy_with_logits(labels, logits):
    """Per-example -log softmax(logits)[label] for integer ``labels`` (fused and stable)."""
    labels, logits = convert_to_tensor(labels), convert_to_tensor(logits)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"sparse_softmax_cross_entropy_with_logits: labels must be integers, "
                        f"got {labels.dtype.name}")
    if labels.shape != logits.shape[:-1]:
        raise ValueError(f"sparse_softmax_cross_entropy_with_logits: labels of shape "
                         f"{labels.shape} do not match logits of shape {logits.shape} "
                         f"(expected labels of shape {logits.shape[:-1]})")
    raw, depth = labels._value, logits.shape[-1]
    if not backend.is_device_array(raw) and raw.size and (raw.min() < 0 or raw.max() >= depth):
        # TensorFlow's CPU kernel refuses these too (a -1 would silently pick the last class);
        # on the GPU the check is skipped, as in TensorFlow, to keep the step free of syncs.
        bad = raw[(raw < 0) | (raw >= depth)].flat[0]
        raise ValueError(f"sparse_softmax_cross_entropy_with_logits: received a label value of "
                         f"{bad} which is outside the valid range of [0, {depth})")
    return _sparse_xent(labels, logits)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1):
    """Per-example -sum(labels * log_softmax(logits)) along ``axis``, for soft labels."""
    logits = convert_to_tensor(logits)
    labels = cast(labels, logits.dtype)
    return -reduce_sum(labels * log_softmax(logits, axis=axis), axis=axis)
