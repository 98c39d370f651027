"""Neural-network functions (``fw.nn``): activations and the fused, stable cross-entropies.

Softmax, log-softmax and the cross-entropies are primitives rather than compositions because
their stable forms subtract the row maximum, and their gradients are short closed forms
(``softmax - labels``) that are both faster and exact at logits of +-1000.

``dense`` is a Dense layer's product, bias and ReLU as one op: one dispatch, one record and one
backward step per layer of a training step.

On GPU arrays a few forwards (``bias_add_relu``, the ReLU's gradient, the bias gradient, the
sparse cross-entropy and its gradient) hand over to fused kernels or cuBLAS
(``framework.kernels``); the primitives and their VJPs stay the same, so higher orders are
unaffected, and a host array pays one class check per call (see ``framework.backend``).
"""
import math

import numpy as np

from . import backend, kernels
from .ops import cast, erf, exp, expand_dims, gather, one_hot, reduce_sum, sigmoid, tanh
from .ops.math import floats_only as _floats_only
from .ops.linalg import _matmul_raw_vjp, _matmul_vjp_a, _matmul_vjp_b
from .ops.reduce import _spread
from .primitive import _NO_PARAMS, define, device_error, primitive
from .tensor import Tensor, convert_to_tensor

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus", "gelu", "bias_add",
           "bias_add_relu", "dense", "sparse_softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits", "embedding_lookup"]


def _relu_grad_raw(g, y):
    """``g`` where the ReLU's output ``y`` is positive, else 0 (the ReLU's VJP, in one op)."""
    if g.__class__ is not np.ndarray and kernels.fits(g, y):
        return kernels.relu_grad(g, y)
    return g * (y > 0)


_relu_grad = define("relu_grad", _relu_grad_raw, lambda gg, out, g, y: _relu_grad(gg, y),
                    None)


@primitive(lambda g, out, x: _relu_grad(g, out),
           raw_vjp=lambda g, out, needs, x: (_relu_grad_raw(g, out),))
def relu(features):
    if features.dtype.kind == "f":
        return _relu_into(features, None)
    return np.maximum(features, 0).astype(features.dtype, copy=False)


def _relu_into(x, out):
    """``max(x, 0)`` for a float array, into ``out`` (None: a new array). On the host, NumPy
    compares an array with a scalar one element at a time but with another array in vector
    registers: against a row of zeros, a last axis of 32 or more takes half the time or less
    (a 256 x 1024 float32 batch: 98 -> 54 us); shorter rows keep the scalar."""
    n = x.shape[-1] if x.ndim else 0
    if n < 32 or x.__class__ is not np.ndarray:
        return np.maximum(x, 0, out=out)
    key = ("zeros", n, x.dtype)
    zeros = _kept.get(key)
    if zeros is None:
        zeros = _keep(key, np.zeros(n, x.dtype))
    return np.maximum(x, zeros, out=out)


def _keep(key, array):
    """Keep ``array``, a constant a step asks for again and again (a row of zeros or ones,
    the row starts of the label positions), under ``key`` in ``_kept``, read-only on the host.
    Shapes that keep changing must not grow it forever: past 64 entries it starts over."""
    if len(_kept) >= 64:
        _kept.clear()
    if array.__class__ is np.ndarray:
        array.flags.writeable = False
    _kept[key] = array
    return array


_kept = {}


def _log_softmax_raw(x, axis):
    xp = backend.array_module(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


def _softmax_raw_vjp(g, out, needs, x, axis):
    """The softmax's VJP on arrays, by the tensor VJP's formula (the first-order passes),
    in one scratch array; a host batch of rows of a few classes sums its rows as a product
    with ones (BLAS), which beats NumPy's reduction along a short axis."""
    grad = g * out
    if _few_classes(grad, axis):
        total = (grad @ _ones(grad.shape[1], grad.dtype))[:, None]
    else:
        total = grad.sum(axis=axis, keepdims=True)
    backend.array_module(g).subtract(g, total, out=grad)
    grad *= out
    return (grad,)


@primitive(lambda g, out, x, axis: out * (g - reduce_sum(g * out, axis=axis, keepdims=True)),
           raw_vjp=_softmax_raw_vjp)
@_floats_only
def _softmax(x, axis):
    """On a host batch of rows of a few classes NumPy reduces each short row on its own: when
    no value is large enough for ``exp`` to overflow (nor small enough to underflow), the
    shift by the row's maximum is left out (softmax does not depend on it) and rows are summed
    as a product with ones; otherwise the batch is worked out classes first, as the
    cross-entropy is (see ``_sparse_xent``)."""
    if _few_classes(x, axis):
        bound = _exp_bound(x.dtype)
        if -bound < np.minimum.reduce(x, None) and np.maximum.reduce(x, None) < bound:
            e = np.exp(x)
            e /= (e @ _ones(e.shape[1], e.dtype))[:, None]
            return e
        e = x.T.copy()
        e -= np.maximum.reduce(e, 0)
        np.exp(e, out=e)
        e /= np.add.reduce(e, 0)
        return np.ascontiguousarray(e.T)
    xp = backend.array_module(x)
    e = x - x.max(axis=axis, keepdims=True)
    xp.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def _exp_bound(dtype):
    """A bound on |x| within which ``exp(x)`` of a row of up to ``_FEW_CLASSES`` values sums
    to a finite, normal number in ``dtype``."""
    bound = _EXP_BOUNDS.get(dtype)
    if bound is None:
        info = np.finfo(dtype)
        bound = _EXP_BOUNDS[dtype] = dtype.type(
            min(math.log(float(info.max) / (2 * _FEW_CLASSES)), -math.log(float(info.tiny))) - 1)
    return bound


_EXP_BOUNDS = {}


def _few_classes(x, axis):
    return x.__class__ is np.ndarray and x.ndim == 2 and axis in (-1, 1) \
        and x.shape[1] <= _FEW_CLASSES


def _ones(n, dtype):
    """A kept vector of ones (row sums as products)."""
    key = ("ones", n, dtype)
    ones = _kept.get(key)
    if ones is None:
        ones = _keep(key, np.ones(n, dtype))
    return ones


@primitive(lambda g, out, x, axis: g - exp(out) * reduce_sum(g, axis=axis, keepdims=True))
@_floats_only
def _log_softmax(x, axis):
    return _log_softmax_raw(x, axis)


def _from_end(axis, logits):
    """``axis`` counted from the end, so the VJPs stay right under a cotangent's leading axes."""
    ndim = convert_to_tensor(logits).ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of range for logits of rank {ndim}")
    return axis % ndim - ndim


def softmax(logits, axis=-1, name=None):
    """exp(logits) normalised along ``axis``, computed without overflow."""
    if axis == -1 and logits.__class__ is Tensor and logits._value.ndim:  # (a model's output)
        return _softmax(logits, axis=-1)
    return _softmax(logits, axis=_from_end(axis, logits))


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


def _softmax_raw(x):
    e = backend.array_module(x).exp(x - x.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


def _label_positions(x, labels, xp, classes_first=False):
    """The flat index of each example's label entry in ``x`` (classes on the last axis, or on
    the first with ``classes_first``; ``xp`` its array module): a flat index reads and writes
    several times faster than a (row, column) pair of arrays, and an ``intp`` one (NumPy's
    own index type, which it need not convert) several times faster again.

    The row starts (``0, depth, 2 * depth, ...``; classes first, ``0, 1, 2, ...``) are kept per
    batch shape (every step of a training asks again).
    """
    rows, depth = labels.size, x.shape[0 if classes_first else -1]
    key = ("starts", xp, rows, depth, classes_first)
    starts = _kept.get(key)
    if starts is None:
        starts = _keep(key, xp.arange(0, rows if classes_first else rows * depth,
                                      1 if classes_first else depth, dtype=np.intp))
    positions = labels.reshape(-1).astype(np.intp)  # (any integer dtype, uint64 too)
    if classes_first:
        positions *= rows
    positions += starts
    return positions


def _xent_grad_vjp_g(gg, out, g, labels, logits):
    hot = one_hot(labels, logits.shape[-1], dtype=logits.dtype)
    return reduce_sum(gg * (softmax(logits) - hot), axis=-1)


def _xent_grad_vjp_logits(gg, out, g, labels, logits):
    u = gg * expand_dims(g, -1)
    p = softmax(logits)
    return p * (u - reduce_sum(u * p, axis=-1, keepdims=True))


def _sparse_xent_grad_raw(g, labels, logits):
    """``g[..., None] * (softmax(logits) - one_hot(labels))`` in one pass over the logits."""
    if backend.is_device_array(logits) and kernels.fits_xent(labels, logits, g):
        return kernels.sparse_xent_grad(g, labels, logits)
    return _minus_label_times(_softmax_raw(logits), labels, g)


def _minus_label_times(p, labels, g):
    """``(p - one_hot(labels)) * g[..., None]``, in place on the softmax ``p``."""
    _subtract_at(p.reshape(-1), _label_positions(p, labels, backend.array_module(p)), 1)
    if g.ndim == labels.ndim:
        p *= g[..., None]
        return p
    return p * g[..., None]  # a jacobian's leading axes on g


_sparse_xent_grad = define("sparse_xent_grad", _sparse_xent_grad_raw, _xent_grad_vjp_g,
                           None, _xent_grad_vjp_logits)


def _xent_raw_vjp(g, out, needs, labels, logits, saved):
    """``(softmax - one_hot) * g`` from the forward's softmax and label positions: one product
    and one scattered subtraction (on the GPU, where nothing is saved, the fused kernel)."""
    if saved is None:
        return None, _sparse_xent_grad_raw(g, labels, logits)
    probabilities, positions, classes_first = saved  # (classes, rows) when classes first
    grad = probabilities * (g if classes_first else g[..., None])
    _subtract_at(grad.reshape(-1), positions, g.reshape(-1))
    return None, grad.T if classes_first else grad


def _subtract_at(flat, positions, values):
    """``flat[positions] -= values`` for distinct positions: with NumPy's ``subtract.at`` on the
    host, a third faster than the indexed assignment at a batch's size."""
    if flat.__class__ is np.ndarray:
        np.subtract.at(flat, positions, values)
    else:
        flat[positions] -= values


@primitive(None, lambda g, out, labels, logits, saved: _sparse_xent_grad(g, labels, logits),
           raw_vjp=_xent_raw_vjp, saves=True)
def _sparse_xent(labels, logits):
    """The per-example loss, and the softmax and label positions for the backward pass.

    A host batch of rows of a few classes is worked out classes first (on the transposed
    logits, one copy): NumPy reduces a short last axis one row at a time, a long one in vector
    registers. The loss and its gradient: 50 x 10 float32 logits, 13.8 -> 10.7 us; 256 x 10,
    32 -> 16 us; at 64 classes and more, rows first is as fast or faster (``_FEW_CLASSES``)."""
    host = logits.__class__ is np.ndarray
    xp = backend.array_module(logits)
    if xp is not np and kernels.fits_xent(labels, logits):
        return kernels.sparse_xent(labels, logits), None
    classes_first = host and logits.ndim == 2 and logits.shape[1] <= _FEW_CLASSES
    if classes_first:
        shifted = logits.T.copy()
        shifted -= np.maximum.reduce(shifted, 0)
    else:  # (on the host, the ufuncs' own reductions: the array methods add a Python wrapper)
        shifted = logits - (np.maximum.reduce(logits, -1, keepdims=True) if host
                            else logits.max(axis=-1, keepdims=True))
    positions = _label_positions(shifted, labels, xp, classes_first)
    picked = shifted.reshape(-1)[positions].reshape(labels.shape)  # before exp overwrites it
    probabilities = xp.exp(shifted, out=shifted)
    axis = 0 if classes_first else -1
    totals = np.add.reduce(probabilities, axis) if host else probabilities.sum(axis=axis)
    loss = xp.log(totals)
    loss -= picked  # log(sum(exp(shifted))) - shifted[label]
    probabilities /= totals if classes_first else totals[..., None]
    return loss, (probabilities, positions, classes_first)


_FEW_CLASSES = 32


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


def _sum_batch_raw(g, axes):
    """``g`` summed over its batch ``axes``: a bias gradient (a product with cuBLAS on the GPU)."""
    if g.__class__ is not np.ndarray:
        if kernels.fits(g):
            return kernels.sum_rows(g, axes)
    elif g.ndim == 2 and axes == (0,):
        return _column_sums(g)
    return g.sum(axis=axes)


def _column_sums(g):
    """A host matrix's column sums as ``ones @ g``: BLAS's product takes half the time of
    NumPy's reduction or less (256 x 1024 float32: 35 -> 18 us; 50 x 100: 3.1 -> 1.5 us), and
    in float32 it is the more accurate of the two on a row-major matrix, whose columns NumPy
    sums one row after another."""
    key = ("ones", g.shape[0], g.dtype)
    ones = _kept.get(key)
    if ones is None:
        ones = _keep(key, np.ones(g.shape[0], g.dtype))
    return ones @ g


_sum_batch = define("sum_batch", _sum_batch_raw,
                    lambda gg, out, g, axes: _spread(gg, g, axes, False))


def _bias_raw_vjp(g, out, needs, value, bias):
    return (g if needs[0] else None, _sum_batch_raw(g, _batch_axes(g)) if needs[1] else None)


@primitive(lambda g, out, value, bias: g, _bias_vjp, raw_vjp=_bias_raw_vjp, same_dtype=True)
def _bias_add(value, bias):
    return value + bias


def bias_add_relu(value, bias):
    """``relu(bias_add(value, bias))`` as one op: one kernel on the GPU (one temporary less on
    the host), with the backward of the two (``dense`` also fuses the product before it)."""
    return _bias_add_relu(*_checked_bias("bias_add_relu", value, bias))


# Both gradients start from the ReLU-masked cotangent: the raw VJP masks once for the two.
@primitive(lambda g, out, value, bias: _relu_grad(g, out),
           lambda g, out, value, bias: _bias_vjp(_relu_grad(g, out), out, value, bias),
           raw_vjp=lambda g, out, needs, value, bias: _bias_raw_vjp(
               _relu_grad_raw(g, out), out, needs, value, bias),
           same_dtype=True)
def _bias_add_relu(value, bias):
    if backend.is_device_array(value) and kernels.fits(value, bias):
        return kernels.bias_add_relu(value, bias)
    out = value + bias
    return _relu_into(out, out)


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
    return _dense.run((inputs, kernel, bias), (x, w, b), _RELU if relu else _LINEAR)


_RELU, _LINEAR = {"relu": True}, {"relu": False}  # shared by the records (never mutated)


def _dense_masked(g, out, relu):
    return _relu_grad(g, out) if relu else g


def _dense_raw_vjp(g, out, needs, inputs, kernel, bias, relu):
    if relu:
        g = _relu_grad_raw(g, out)
    if g.__class__ is np.ndarray and g.ndim == 2:  # a batch of rows on the host: every step
        return (g @ kernel.T if needs[0] else None, inputs.T @ g if needs[1] else None,
                _column_sums(g) if needs[2] else None)
    g_inputs, g_kernel = _matmul_raw_vjp(g, out, needs, inputs, kernel, False, False)
    return g_inputs, g_kernel, _sum_batch_raw(g, _batch_axes(g)) if needs[2] else None


def _batch_axes(g):
    """Every axis of ``g`` but the last."""
    return (0,) if g.ndim == 2 else tuple(range(g.ndim - 1))


@primitive(
    lambda g, out, x, w, b, relu: _matmul_vjp_a(_dense_masked(g, out, relu), out, x, w, False,
                                                False),
    lambda g, out, x, w, b, relu: _matmul_vjp_b(_dense_masked(g, out, relu), out, x, w, False,
                                                False),
    lambda g, out, x, w, b, relu: _bias_vjp(_dense_masked(g, out, relu), out, x, b),
    raw_vjp=_dense_raw_vjp)
def _dense(inputs, kernel, bias, relu):
    out = inputs @ kernel
    if out.__class__ is not np.ndarray and kernels.fits(out, bias):
        return kernels.bias_add_relu(out, bias) if relu else out + bias
    out += bias
    return _relu_into(out, out) if relu else out


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Per-example -log softmax(logits)[label] for integer ``labels`` (fused and stable)."""
    labels, logits, raw, values = checked_sparse_labels(
        "sparse_softmax_cross_entropy_with_logits", labels, logits)
    return _sparse_xent.run((labels, logits), (raw, values), _NO_PARAMS)


def checked_sparse_labels(name, labels, logits):
    """Both as tensors and arrays, the labels checked against the classes of ``logits``."""
    if labels.__class__ is not Tensor or logits.__class__ is not Tensor:
        labels, logits = convert_to_tensor(labels), convert_to_tensor(logits)
    raw, values = labels._value, logits._value
    if raw.dtype.kind not in "iu":
        raise TypeError(f"{name}: labels must be integers, "
                        f"got {raw.dtype.name}")
    if raw.shape != values.shape[:-1]:
        raise ValueError(f"{name}: labels of shape "
                         f"{labels.shape} do not match logits of shape {logits.shape} "
                         f"(expected labels of shape {logits.shape[:-1]})")
    on_host = raw.__class__ is np.ndarray is values.__class__
    if not on_host and backend.is_device_array(raw) != backend.is_device_array(values):
        raise device_error(name, (labels, logits))
    # TensorFlow's CPU kernel refuses labels out of range too (a -1 would silently pick the
    # last class); on the GPU the check is skipped, as in TensorFlow, to keep the step free of
    # syncs. Seen as unsigned, a negative label is huge: one reduction checks both ends.
    depth = values.shape[-1]
    if (on_host or not backend.is_device_array(raw)) and raw.size and np.maximum.reduce(
            raw.view(_UNSIGNED[raw.itemsize]) if raw.dtype.kind == "i" else raw, None) >= depth:
        bad = raw[(raw < 0) | (raw >= depth)].flat[0]
        raise ValueError(f"{name}: received a label value of "
                         f"{bad} which is outside the valid range of [0, {depth})")
    return labels, logits, raw, values


_UNSIGNED = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}


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


from .ops.activation import *  # noqa: E402,F401,F403 - elu, selu, ..., moments: ops/activation.py
