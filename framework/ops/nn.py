"""Neural-network ops (viewed as ``fw.nn`` by ``framework/nn.py``): activations and the fused, stable cross-entropies.

Softmax, log-softmax and the cross-entropies are primitives rather than compositions because
their stable forms subtract the row maximum, and their gradients are short closed forms
(``softmax - labels``) that are both faster and exact at logits of +-1000.

``dense`` is a Dense layer's product, bias and ReLU as one op: one dispatch, one record and one
backward step per layer of a training step.

Each definition here serves NumPy and CuPy arrays alike. Two kinds of tuning sit beside them,
never in place of the maths: on GPU arrays a few forwards (``bias_add_relu``, the ReLU's
gradient, the bias gradient, the sparse cross-entropy and its gradient) hand over to fused
kernels or cuBLAS (``framework.kernels``); on NumPy arrays the ops a training step is made of
run host forms registered with ``host_forward=`` / ``host_array_vjp=`` (``framework.host``),
tested equal to the definitions. The primitives and their tensor VJPs stay the same, so higher
orders are unaffected.
"""
import math

import numpy as np

from ..engine import backend
from ..tuning import host, kernels
from ..engine.primitive import define, device_error, primitive
from ..engine.tensor import Tensor, convert_to_tensor
from ..engine.context import replayed as _replayed
from .linalg import matmul_array_vjp as _matmul_array_vjp
from .linalg import matmul_vjp_a as _matmul_vjp_a
from .linalg import matmul_vjp_b as _matmul_vjp_b
from .math import cast, erf, exp, floats_only as _floats_only, sigmoid, tanh
from .reduce import reduce_sum, spread as _spread
from .shape import expand_dims, gather, one_hot

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus", "gelu", "bias_add",
           "bias_add_relu", "dense", "sparse_softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits", "embedding_lookup"]


def _relu_grad_array(g, y):
    """``g`` where the ReLU's output ``y`` is positive, else 0 (the ReLU's VJP, in one op)."""
    if g.__class__ is not np.ndarray and kernels.fits(g, y):
        return kernels.relu_grad(g, y)
    return g * (y > 0)


_relu_grad = define("relu_grad", _relu_grad_array, lambda gg, out, g, y: _relu_grad(gg, y),
                    None)


def _relu_array(features):
    """max(features, 0)."""
    return backend.array_module(features).maximum(features, 0).astype(features.dtype,
                                                                         copy=False)


relu = define("relu", _relu_array, lambda g, out, x: _relu_grad(g, out),
              array_vjp=lambda g, out, needs, x: (_relu_grad_array(g, out),),
              host_forward=host.relu)


def _log_softmax_array(x, axis):
    xp = backend.array_module(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


def _softmax_array_vjp(g, out, needs, x, axis):
    """The softmax's VJP on arrays, by the tensor VJP's formula (the first-order passes)."""
    grad = g * out
    total = grad.sum(axis=axis, keepdims=True)
    backend.array_module(g).subtract(g, total, out=grad)
    grad *= out
    return (grad,)


@primitive(lambda g, out, x, axis: out * (g - reduce_sum(g * out, axis=axis, keepdims=True)),
           array_vjp=_softmax_array_vjp, host_forward=_floats_only(host.softmax),
           host_array_vjp=host.softmax_array_vjp)
@_floats_only
def _softmax(x, axis):
    xp = backend.array_module(x)
    e = x - x.max(axis=axis, keepdims=True)
    xp.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


@primitive(lambda g, out, x, axis: g - exp(out) * reduce_sum(g, axis=axis, keepdims=True))
@_floats_only
def _log_softmax(x, axis):
    return _log_softmax_array(x, axis)


def _from_end(axis, logits):
    """``axis`` counted from the end, so the VJPs stay right under a cotangent's leading axes."""
    ndim = convert_to_tensor(logits).ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for logits of rank {ndim}")
    return axis % ndim - ndim


def softmax(logits, axis=-1, name=None):
    """exp(logits) normalised along ``axis``, computed without overflow."""
    if axis == -1 and logits.__class__ is Tensor:  # (a model's output: the checks run here)
        value = logits._value
        if value.ndim:
            run = _softmax.run_on_host if value.__class__ is np.ndarray else _softmax.run
            return run((logits,), (value,), _LAST_AXIS)
    return _softmax(logits, axis=_from_end(axis, logits))


_LAST_AXIS = {"axis": -1}  # (the parameters every such record shares: never changed)


def log_softmax(logits, axis=-1, name=None):
    """log(softmax(logits)), computed without overflow or log(0)."""
    return _log_softmax(logits, axis=_from_end(axis, logits))


@primitive(lambda g, out, x: g * sigmoid(x))
@_floats_only
def softplus(features):
    return np.logaddexp(features, 0).astype(features.dtype, copy=False)


def gelu(features, approximate=False, name=None):
    """Gaussian error linear unit: x * Phi(x) (the tanh approximation when ``approximate``)."""
    x = convert_to_tensor(features)
    if approximate:
        inner = (x + x * x * x * 0.044715) * math.sqrt(2 / math.pi)
        return x * (tanh(inner) + 1) * 0.5
    return x * (erf(x * (1 / math.sqrt(2))) + 1) * 0.5


def _softmax_array(x):
    e = backend.array_module(x).exp(x - x.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


def _label_positions(x, labels):
    """The flat index of each example's label entry in ``x`` (classes on the last axis)."""
    if x.__class__ is np.ndarray:
        return host.label_positions(x, labels, False)
    depth = x.shape[-1]
    xp = backend.array_module(x)
    return xp.arange(0, labels.size * depth, depth) + labels.reshape(-1).astype(np.intp)


def _xent_grad_vjp_g(gg, out, g, labels, logits):
    hot = one_hot(labels, logits.shape[-1], dtype=logits.dtype)
    return reduce_sum(gg * (softmax(logits) - hot), axis=-1)


def _xent_grad_vjp_logits(gg, out, g, labels, logits):
    u = gg * expand_dims(g, -1)
    p = softmax(logits)
    return p * (u - reduce_sum(u * p, axis=-1, keepdims=True))


def _sparse_xent_grad_array(g, labels, logits):
    """``g[..., None] * (softmax(logits) - one_hot(labels))`` in one pass over the logits."""
    if backend.is_device_array(logits) and kernels.fits_xent(labels, logits, g):
        return kernels.sparse_xent_grad(g, labels, logits)
    p = _softmax_array(logits)
    p.reshape(-1)[_label_positions(p, labels)] -= 1
    if g.ndim == labels.ndim:
        p *= g[..., None]
        return p
    return p * g[..., None]  # a jacobian's leading axes on g


_sparse_xent_grad = define("sparse_xent_grad", _sparse_xent_grad_array, _xent_grad_vjp_g,
                           None, _xent_grad_vjp_logits)


def _xent_array_vjp(g, out, needs, labels, logits, saved):
    """``(softmax - one_hot) * g`` from the forward's softmax and label positions: one product
    and one scattered subtraction (on the GPU, where nothing is saved, the fused kernel)."""
    if saved is None:
        return None, _sparse_xent_grad_array(g, labels, logits)
    probabilities, positions, classes_first = saved  # (classes, rows) when classes first
    grad = probabilities * (g if classes_first else g[..., None])
    grad.reshape(-1)[positions] -= g.reshape(-1)
    return None, grad.T if classes_first else grad


@primitive(None, lambda g, out, labels, logits, saved: _sparse_xent_grad(g, labels, logits),
           array_vjp=_xent_array_vjp, saves=True, host_forward=host.sparse_xent,
           host_array_vjp=host.sparse_xent_array_vjp)
def _sparse_xent(labels, logits):
    """The per-example loss, and the softmax and label positions for the backward pass
    (nothing when the GPU's fused kernel does both)."""
    xp = backend.array_module(logits)
    if xp is not np and kernels.fits_xent(labels, logits):
        return kernels.sparse_xent(labels, logits), None
    shifted = logits - logits.max(axis=-1, keepdims=True)
    positions = _label_positions(shifted, labels)
    picked = shifted.reshape(-1)[positions].reshape(labels.shape)
    probabilities = xp.exp(shifted, out=shifted)
    totals = probabilities.sum(axis=-1)
    loss = xp.log(totals) - picked  # log(sum(exp(shifted))) - shifted[label]
    probabilities /= totals[..., None]
    return loss, (probabilities, positions, False)


def _checked_bias(name, value, bias):
    value, bias = convert_to_tensor(value), convert_to_tensor(bias)
    if bias.ndim != 1 or not value.ndim or value.shape[-1] != bias.shape[0]:
        raise ValueError(f"{name}: bias of shape {bias.shape} does not match the last axis "
                         f"of a value of shape {value.shape}")
    return value, bias


def bias_add(value, bias, name=None):
    """``value + bias`` for a 1-D ``bias`` along the last axis (a Dense layer's bias)."""
    return _bias_add(*_checked_bias("bias_add", value, bias))


def _bias_vjp(g, out, value, bias):
    """Sum over every axis but the last (and a jacobian's leading axes stay)."""
    lead = g.ndim - out.ndim
    return _sum_batch(g, axes=tuple(range(lead, g.ndim - 1)))


def _sum_batch_array(g, axes):
    """``g`` summed over its batch ``axes``: a bias gradient (a product with cuBLAS on the GPU)."""
    if g.__class__ is not np.ndarray and kernels.fits(g):
        return kernels.sum_rows(g, axes)
    return g.sum(axis=axes)


_sum_batch = define("sum_batch", _sum_batch_array,
                    lambda gg, out, g, axes: _spread(gg, g, axes, False),
                    host_forward=host.sum_batch)


def _batch_axes(g):
    """Every axis of ``g`` but the last."""
    return tuple(range(g.ndim - 1))


def _bias_array_vjp(g, out, needs, value, bias):
    return (g if needs[0] else None, _sum_batch_array(g, _batch_axes(g)) if needs[1] else None)


@primitive(lambda g, out, value, bias: g, _bias_vjp, array_vjp=_bias_array_vjp,
           host_array_vjp=host.bias_add_array_vjp, same_dtype=True)
def _bias_add(value, bias):
    return value + bias


def bias_add_relu(value, bias):
    """``relu(bias_add(value, bias))`` as one op: one kernel on the GPU (one temporary less on
    the host), with the backward of the two (``dense`` also fuses the product before it)."""
    return _bias_add_relu(*_checked_bias("bias_add_relu", value, bias))


def _bias_add_relu_array_vjp(g, out, needs, value, bias):
    """Both gradients start from the ReLU-masked cotangent: masked once for the two."""
    return _bias_array_vjp(_relu_grad_array(g, out), out, needs, value, bias)


@primitive(lambda g, out, value, bias: _relu_grad(g, out),
           lambda g, out, value, bias: _bias_vjp(_relu_grad(g, out), out, value, bias),
           array_vjp=_bias_add_relu_array_vjp, host_forward=host.bias_add_relu,
           host_array_vjp=host.bias_add_relu_array_vjp, same_dtype=True)
def _bias_add_relu(value, bias):
    if backend.is_device_array(value) and kernels.fits(value, bias):
        return kernels.bias_add_relu(value, bias)
    return _relu_array(value + bias)


def dense(inputs, kernel, bias, relu=False):
    """``inputs @ kernel + bias``, then ReLU when ``relu``: a Dense layer's whole forward as one
    op, so a training step records, dispatches and walks back one op per layer, and the
    backward masks the cotangent once for all three gradients."""
    if not (isinstance(inputs, Tensor) and isinstance(kernel, Tensor)
            and isinstance(bias, Tensor)):
        inputs, kernel, bias = (convert_to_tensor(inputs), convert_to_tensor(kernel),
                                convert_to_tensor(bias))
    x, w, b = inputs._value, kernel._value, bias._value
    if w.ndim != 2 or not x.ndim or x.shape[-1] != w.shape[0] or b.shape != w.shape[1:]:
        raise ValueError(f"dense: inputs of shape {inputs.shape}, a kernel of shape "
                         f"{kernel.shape} and a bias of shape {bias.shape} do not fit; they need "
                         f"(..., n), (n, units) and (units,)")
    if not x.dtype == w.dtype == b.dtype:
        raise TypeError(f"dense: inputs, kernel and bias must have one dtype, got "
                        f"{x.dtype.name}, {w.dtype.name} and {b.dtype.name}")
    run = _run_dense_on_host if x.__class__ is _ndarray else _dense.run
    return run((inputs, kernel, bias), (x, w, b), _RELU if relu else _LINEAR)


_RELU, _LINEAR, _NO_PARAMS = {"relu": True}, {"relu": False}, {}  # shared (never mutated)


def _dense_masked(g, out, relu):
    return _relu_grad(g, out) if relu else g


def _dense_array_vjp(g, out, needs, inputs, kernel, bias, relu):
    if relu:
        g = _relu_grad_array(g, out)
    g_inputs, g_kernel = _matmul_array_vjp(g, out, needs, inputs, kernel, False, False)
    return g_inputs, g_kernel, _sum_batch_array(g, _batch_axes(g)) if needs[2] else None


@primitive(
    lambda g, out, x, w, b, relu: _matmul_vjp_a(_dense_masked(g, out, relu), out, x, w, False,
                                               False),
    lambda g, out, x, w, b, relu: _matmul_vjp_b(_dense_masked(g, out, relu), out, x, w, False,
                                               False),
    lambda g, out, x, w, b, relu: _bias_vjp(_dense_masked(g, out, relu), out, x, b),
    array_vjp=_dense_array_vjp, host_forward=host.dense, host_array_vjp=host.dense_array_vjp)
def _dense(inputs, kernel, bias, relu):
    out = inputs @ kernel
    if out.__class__ is not np.ndarray and kernels.fits(out, bias):
        return kernels.bias_add_relu(out, bias) if relu else out + bias
    out += bias
    return _relu_array(out) if relu else out


_ndarray = np.ndarray
_run_dense_on_host = _dense.run_on_host


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Per-example -log softmax(logits)[label] for integer ``labels`` (fused and stable)."""
    labels, logits, ids, values = checked_sparse_labels(
        "sparse_softmax_cross_entropy_with_logits", labels, logits)
    run = _run_sparse_xent_on_host if ids.__class__ is _ndarray is values.__class__ \
        else _sparse_xent.run
    return run((labels, logits), (ids, values), _NO_PARAMS)


def checked_sparse_labels(name, labels, logits):
    """Both as tensors and arrays, the labels checked against the classes of ``logits``."""
    if labels.__class__ is not Tensor or logits.__class__ is not Tensor:
        labels, logits = convert_to_tensor(labels), convert_to_tensor(logits)
    ids, values = labels._value, logits._value
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{name}: labels must be integers, got {ids.dtype.name}")
    if ids.shape != values.shape[:-1]:
        raise ValueError(f"{name}: labels of shape {labels.shape} do not match logits of shape "
                         f"{logits.shape} (expected labels of shape {logits.shape[:-1]})")
    on_host = ids.__class__ is np.ndarray is values.__class__
    if not on_host and backend.is_device_array(ids) != backend.is_device_array(values):
        raise device_error(name, (labels, logits))
    # TensorFlow's CPU kernel refuses labels out of range too (a -1 would silently pick the
    # last class); on the GPU the check is skipped, as in TensorFlow, to keep the step free of
    # syncs.
    if on_host or not backend.is_device_array(ids):
        _check_label_range(name, ids, values.shape[-1])
    return labels, logits, ids, values


@_replayed  # (under fw.function: each call's labels, not only the trace's)
def _check_label_range(name, ids, depth):
    """Refuse a label outside ``[0, depth)`` naming it. Seen as unsigned, a negative label is
    huge: one reduction checks both ends."""
    if ids.size and np.maximum.reduce(
            ids.view(_UNSIGNED[ids.itemsize]) if ids.dtype.kind == "i" else ids, None) >= depth:
        bad = ids[(ids < 0) | (ids >= depth)].flat[0]
        raise ValueError(f"{name}: received a label value of {bad} which is outside the valid "
                         f"range of [0, {depth})")


_UNSIGNED = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}
_run_sparse_xent_on_host = _sparse_xent.run_on_host


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Per-example -sum(labels * log_softmax(logits)) along ``axis``, for soft labels."""
    logits = convert_to_tensor(logits)
    labels = cast(labels, logits.dtype)
    return -reduce_sum(labels * log_softmax(logits, axis=axis), axis=axis)


def embedding_lookup(params, ids, max_norm=None, name=None):
    """Rows of the table ``params`` at ``ids`` (any shape): ``gather`` on axis 0, so a
    variable table's gradient is an ``IndexedSlices`` of the rows looked up."""
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise ValueError(f"embedding_lookup: sharded tables are not supported, got "
                             f"{len(params)} shards; concatenate them into one table")
        params = params[0]
    if max_norm is not None:
        raise ValueError("embedding_lookup: max_norm is not supported; clip the rows with "
                         "fw.clip_by_norm(rows, max_norm, axes=[-1])")
    return gather(params, ids)

