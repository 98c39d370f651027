"""Neural-network functions (``fw.nn``): activations and the fused, stable cross-entropies.

Softmax, log-softmax and the cross-entropies are primitives rather than compositions because
their stable forms subtract the row maximum, and their gradients are short closed forms
(``softmax - labels``) that are both faster and exact at logits of +-1000.

On GPU arrays a few forwards (``bias_add_relu``, the ReLU's gradient, the bias gradient, the
sparse cross-entropy and its gradient) hand over to fused kernels or cuBLAS
(``framework.kernels``); the primitives and their VJPs stay the same, so higher orders are
unaffected, and the host pays one ``is_device_array`` check per call.
"""
import math
import threading

import numpy as np

from . import backend, kernels
from .ops import cast, erf, exp, expand_dims, one_hot, reduce_sum, sigmoid, tanh
from .ops.reduce import _spread
from .primitive import device_error, primitive
from .tensor import Tensor, convert_to_tensor

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus", "gelu", "bias_add",
           "bias_add_relu", "sparse_softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits"]


@primitive(lambda gg, out, g, y: _relu_grad(gg, y), None)
def _relu_grad(g, y):
    """``g`` where the ReLU's output is positive, else 0 (the ReLU's own VJP, in one op)."""
    if backend.is_device_array(g) and kernels.fits(g, y):
        return kernels.relu_grad(g, y)
    return g * (y > 0)


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


def _softmax_raw(x):
    e = backend.array_module(x).exp(x - x.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


def _rows(x, labels):
    """Index of each example's label entry in ``x`` seen as (examples, classes)."""
    xp = backend.array_module(x)
    return xp.arange(labels.size), labels.reshape(-1)


def _xent_grad_vjp_g(gg, out, g, labels, logits):
    hot = one_hot(labels, logits.shape[-1], dtype=logits.dtype)
    return reduce_sum(gg * (softmax(logits) - hot), axis=-1)


def _xent_grad_vjp_logits(gg, out, g, labels, logits):
    u = gg * expand_dims(g, -1)
    p = softmax(logits)
    return p * (u - reduce_sum(u * p, axis=-1, keepdims=True))


@primitive(_xent_grad_vjp_g, None, _xent_grad_vjp_logits)
def _sparse_xent_grad(g, labels, logits):
    """``g[..., None] * (softmax(logits) - one_hot(labels))`` in one pass over the logits."""
    if backend.is_device_array(logits) and kernels.fits_xent(labels, logits, g):
        return kernels.sparse_xent_grad(g, labels, logits)
    p = _softmax_raw(logits)
    p.reshape(-1, p.shape[-1])[_rows(p, labels)] -= 1
    if g.ndim == labels.ndim:
        p *= g[..., None]
        return p
    return p * g[..., None]  # a jacobian's leading axes on g


@primitive(None, lambda g, out, labels, logits: _sparse_xent_grad(g, labels, logits))
def _sparse_xent(labels, logits):
    if backend.is_device_array(logits) and kernels.fits_xent(labels, logits):
        return kernels.sparse_xent(labels, logits)
    xp = backend.array_module(logits)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_total = xp.log(xp.exp(shifted).sum(axis=-1))
    picked = shifted.reshape(-1, shifted.shape[-1])[_rows(shifted, labels)]
    return log_total - picked.reshape(labels.shape)


def _checked_bias(name, value, bias):
    value, bias = convert_to_tensor(value), convert_to_tensor(bias)
    if bias.ndim != 1 or not value.ndim or value.shape[-1] != bias.shape[0]:
        raise ValueError(f"{name}: bias of shape {bias.shape} does not match the last axis "
                         f"of a value of shape {value.shape}")
    return value, bias


def bias_add(value, bias):
    """``value + bias`` for a 1-D ``bias`` along the last axis (a Dense layer's bias)."""
    return _bias_add(*_checked_bias("bias_add", value, bias))


def _bias_vjp(g, out, value, bias):
    """Sum over every axis but the last (and a jacobian's leading axes stay)."""
    lead = g.ndim - out.ndim
    return _sum_batch(g, axes=tuple(range(lead, g.ndim - 1)))


@primitive(lambda gg, out, g, axes: _spread(gg, g, axes, False))
def _sum_batch(g, axes):
    """``g`` summed over its batch ``axes``: a bias gradient (a product with cuBLAS on the GPU)."""
    if backend.is_device_array(g) and kernels.fits(g):
        return kernels.sum_rows(g, axes)
    return g.sum(axis=axes)


@primitive(lambda g, out, value, bias: g, _bias_vjp, same_dtype=True)
def _bias_add(value, bias):
    return value + bias


def bias_add_relu(value, bias):
    """``relu(bias_add(value, bias))`` as one op: a ReLU Dense layer's bias and activation in
    one kernel on the GPU (one temporary less on the host), with the backward of the two."""
    return _bias_add_relu(*_checked_bias("bias_add_relu", value, bias))


# The tape asks for each argument's VJP in turn, the value's first, with the same cotangent;
# both VJPs of bias_add_relu start from the ReLU-masked cotangent, so the first keeps it (one
# per thread) for the second, and the backward masks once, as relu(bias_add(...)) did.
_masked = threading.local()


def _bias_add_relu_value_vjp(g, out, value, bias):
    masked = _relu_grad(g, out)
    if g.__class__ is Tensor:  # immutable (unlike a Variable): the same object, the same values
        _masked.last = (g, out, masked)
    return masked


def _bias_add_relu_bias_vjp(g, out, value, bias):
    seen_g, seen_out, masked = getattr(_masked, "last", None) or (None, None, None)
    _masked.last = None
    if seen_g is not g or seen_out is not out:  # the value needed no gradient
        masked = _relu_grad(g, out)
    return _bias_vjp(masked, out, value, bias)


@primitive(_bias_add_relu_value_vjp, _bias_add_relu_bias_vjp, same_dtype=True)
def _bias_add_relu(value, bias):
    if backend.is_device_array(value) and kernels.fits(value, bias):
        return kernels.bias_add_relu(value, bias)
    out = value + bias
    np.maximum(out, 0, out=out)
    return out


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
    on_device = backend.is_device_array(raw)
    if on_device != backend.is_device_array(logits._value):  # indexing would copy them over
        raise device_error("sparse_softmax_cross_entropy_with_logits", (labels, logits))
    if not on_device and raw.size and (raw.min() < 0 or raw.max() >= depth):
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
