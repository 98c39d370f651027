"""Host tuning: faster forms of a few ``fw.nn`` ops for NumPy arrays, with the same numbers.

Each function here is registered beside its op's definition in ``framework.nn``
(``host_forward=`` / ``host_array_vjp=``, see ``framework.primitive.define``) and runs in its
place when the op's first array is a NumPy array; the definition serves every other array
(CuPy's, where ``framework.tuning.kernels`` has the GPU's own fused forms). The tests hold each pair
equal (``tests/test_host.py``). Why each form is faster is said beside it; by how much, the
scripts in ``benchmarks/`` measure.

Products of 2-D arrays go through ``ndarray.dot``: it enters BLAS with about half a
microsecond less overhead than the ``@`` operator (the ``matmul`` ufunc), with the same result
bit for bit, and a training step takes a dozen small products.

They share a few constant arrays that a training step asks for again and again (a row of
zeros or ones, the row starts of the label positions), kept read-only by key.
"""
import math

import numpy as np

__all__ = ["FEW_CLASSES", "bias_add_array_vjp", "bias_add_relu", "bias_add_relu_array_vjp",
           "column_sums", "dense", "dense_array_vjp", "label_positions", "last_axis_means", "matmul", "relu",
           "relu_grad", "row_sums", "softmax", "softmax_array_vjp", "sparse_xent",
           "sparse_xent_array_vjp", "sum_batch"]

# Up to this many classes a batch's cross-entropy is worked out classes first (see sparse_xent).
FEW_CLASSES = 32
# From this many values a row's sum is a product with ones (see _long_rows).
LONG_ROW = 64
_EXP_BOUNDS = {}  # (dtype, row length) -> _exp_bound's answer
_kept = {}


def _keep(key, array):
    """Keep ``array`` under ``key``, read-only (callers look in ``_kept`` first). Shapes that
    keep changing must not grow the store forever: past 64 entries it starts over."""
    if len(_kept) >= 64:
        _kept.clear()
    array.flags.writeable = False
    _kept[key] = array
    return array


def matmul(a, b):
    """``a @ b``: for two NumPy matrices through ``ndarray.dot`` (see above), for any other
    arrays (CuPy's among them) as it is."""
    if a.__class__ is np.ndarray and a.ndim == 2 and b.ndim == 2:
        return a.dot(b)
    return a @ b


def _relu_into(x, out):
    """``max(x, 0)`` for a float array, into ``out`` (None: a new array). NumPy compares an
    array with a scalar one element at a time but with another array in vector registers: a
    row of zeros serves every row of a batch whose last axis is long enough to gain."""
    n = x.shape[-1] if x.ndim else 0
    if n < 32:
        return np.maximum(x, 0, out=out)
    key = ("zeros", n, x.dtype)
    zeros = _kept.get(key)
    if zeros is None:
        zeros = _keep(key, np.zeros(n, x.dtype))
    return np.maximum(x, zeros, out=out)


def relu(features):
    if features.dtype.kind == "f":
        return _relu_into(features, None)
    return np.maximum(features, 0).astype(features.dtype, copy=False)


def bias_add_relu(value, bias):
    """The sum, then the ReLU in place on it: one temporary less."""
    out = value + bias
    return _relu_into(out, out)


def dense(inputs, kernel, bias, relu):
    """The product, then the bias and the ReLU in place on it."""
    out = matmul(inputs, kernel)
    out += bias
    return _relu_into(out, out) if relu else out


def relu_grad(g, y):
    """``g`` where the ReLU's output ``y`` is positive, else 0."""
    return g * (y > 0)


def _ones(n, dtype):
    """A kept vector of ones (sums as products)."""
    key = ("ones", n, dtype)
    ones = _kept.get(key)
    if ones is None:
        ones = _keep(key, np.ones(n, dtype))
    return ones


def column_sums(g):
    """A matrix's column sums as ``ones @ g``: BLAS's product runs in vector registers over
    whole rows where NumPy's reduction walks one row after another, and in float32 it is the
    more accurate of the two."""
    return _ones(g.shape[0], g.dtype).dot(g)


def row_sums(x):
    """Sums over the last axis, for any array: on the host, a matrix of a few columns sums its
    rows as a product with ones (see ``column_sums``), which beats NumPy's reduction along a
    short axis; any other array sums as it would."""
    if x.__class__ is np.ndarray and x.ndim == 2 and x.shape[1] <= FEW_CLASSES:
        return x.dot(_ones(x.shape[1], x.dtype))
    return x.sum(axis=-1)


def _few_classes(x, axis):
    return x.ndim == 2 and axis in (-1, 1) and x.shape[1] <= FEW_CLASSES


def _long_rows(x, axis):
    """A float array reduced along a last axis of at least ``LONG_ROW`` values: its row sums
    as products with ones (BLAS) take a quarter of NumPy's reduction's time (2048 rows of 128
    float32: 27 against 118 us)."""
    n = x.shape[-1] if x.ndim else 0
    return axis in (-1, x.ndim - 1) and n >= LONG_ROW and x.dtype.kind == "f"


def _exp_bound(dtype, n=FEW_CLASSES):
    """A bound on |x| within which ``exp(x)`` of a row of up to ``n`` values sums to a finite,
    normal number in ``dtype``."""
    bound = _EXP_BOUNDS.get((dtype, n))
    if bound is None:
        info = np.finfo(dtype)
        bound = _EXP_BOUNDS[dtype, n] = dtype.type(
            min(math.log(float(info.max) / (2 * n)), -math.log(float(info.tiny))) - 1)
    return bound


def _unshifted(x, n):
    """Whether ``exp`` of every value of ``x`` (rows of ``n``) sums to a finite, normal
    number: then a softmax may leave out the shift by each row's maximum (it does not depend
    on it), and with it a reduction along every row."""
    bound = _exp_bound(x.dtype, n)
    return -bound < np.minimum.reduce(x, None) and np.maximum.reduce(x, None) < bound


def softmax(x, axis):
    """NumPy reduces each short row of a batch of a few classes on its own, and reduces along
    long rows at a quarter of BLAS's rate: when no value is large enough for ``exp`` to
    overflow (nor small enough to underflow), the shift by the row's maximum is left out
    (softmax does not depend on it) and rows are summed as a product with ones; otherwise a
    batch of a few classes is worked out classes first, as the cross-entropy is."""
    few, long_rows = _few_classes(x, axis), _long_rows(x, axis)
    if (few or long_rows) and _unshifted(x, x.shape[-1]):
        e = np.exp(x)
        e /= e.dot(_ones(e.shape[-1], e.dtype))[..., None]
        return e
    if few:
        e = x.T.copy()
        e -= np.maximum.reduce(e, 0)
        np.exp(e, out=e)
        e /= np.add.reduce(e, 0)
        return np.ascontiguousarray(e.T)
    e = x - x.max(axis=axis, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def softmax_array_vjp(g, out, needs, x, axis):
    """The softmax's VJP in one scratch array; rows of a few classes, or long ones, sum as a
    product with ones (BLAS), which beats NumPy's reduction along a row."""
    grad = g * out
    if _few_classes(grad, axis) or _long_rows(grad, axis):
        total = grad.dot(_ones(grad.shape[-1], grad.dtype))[..., None]
    else:
        total = grad.sum(axis=axis, keepdims=True)
    np.subtract(g, total, out=grad)
    grad *= out
    return (grad,)


def last_axis_means(axes, x):
    """The means over ``axes`` (keeping them) of arrays shaped as ``x``, as products with
    ``1 / n`` (BLAS, see ``_long_rows``), when ``axes`` is long rows' last axis; else None
    (the caller's own reduction)."""
    if axes != (-1,) or not _long_rows(x, -1):
        return None
    n = x.shape[-1]
    key = ("inverse", n, x.dtype)
    weights = _kept.get(key)
    if weights is None:
        weights = _keep(key, np.full(n, 1 / n, x.dtype))
    return lambda a: a.dot(weights)[..., None]


def sum_batch(g, axes):
    """``g`` summed over its batch ``axes`` (a bias gradient)."""
    if g.ndim == 2 and axes == (0,):
        return column_sums(g)
    return g.sum(axis=axes)


def bias_add_array_vjp(g, out, needs, value, bias):
    return (g if needs[0] else None,
            sum_batch(g, tuple(range(g.ndim - 1))) if needs[1] else None)


def bias_add_relu_array_vjp(g, out, needs, value, bias):
    """Both gradients from the ReLU-masked cotangent, masked once."""
    return bias_add_array_vjp(relu_grad(g, out), out, needs, value, bias)


def dense_array_vjp(g, out, needs, inputs, kernel, bias, relu):
    """The three gradients of ``dense`` from the masked cotangent: two products and the
    column sums."""
    if relu:
        g = relu_grad(g, out)
    if g.ndim != 2:  # a batch of more than one axis: one matrix of rows for the products
        rows = g.reshape(-1, g.shape[-1])
        return (rows.dot(kernel.T).reshape(*g.shape[:-1], kernel.shape[0]) if needs[0] else None,
                *dense_array_vjp(rows, None, (False, *needs[1:]),
                                 inputs.reshape(-1, inputs.shape[-1]), kernel, bias, False)[1:])
    return (g.dot(kernel.T) if needs[0] else None, inputs.T.dot(g) if needs[1] else None,
            column_sums(g) if needs[2] else None)


def label_positions(x, labels, classes_first):
    """The flat index of each example's label entry in ``x`` (classes on the last axis, or on
    the first with ``classes_first``). A flat index reads and writes faster than a (row,
    column) pair of arrays, an ``intp`` one (NumPy's own index type) faster again, and the row
    starts are kept per batch shape."""
    rows, depth = labels.size, x.shape[0 if classes_first else -1]
    key = ("starts", rows, depth, classes_first)
    starts = _kept.get(key)
    if starts is None:
        starts = _keep(key, np.arange(0, rows if classes_first else rows * depth,
                                      1 if classes_first else depth, dtype=np.intp))
    positions = labels.reshape(-1).astype(np.intp)  # (any integer dtype, uint64 too)
    if classes_first:
        positions *= rows
    positions += starts
    return positions


def sparse_xent(labels, logits):
    """The per-example loss, and the softmax and label positions for the backward pass.

    A batch of rows of a few classes is worked out classes first (on the transposed logits,
    one copy): NumPy reduces a short last axis one row at a time, a long one in vector
    registers. The ufuncs' own reductions skip the array methods' Python wrappers."""
    classes_first = logits.ndim == 2 and logits.shape[1] <= FEW_CLASSES
    if classes_first:
        shifted = logits.T.copy()
        shifted -= np.maximum.reduce(shifted, 0)
    else:
        shifted = logits - np.maximum.reduce(logits, -1, keepdims=True)
    positions = label_positions(shifted, labels, classes_first)
    picked = shifted.take(positions).reshape(labels.shape)  # before exp overwrites it
    probabilities = np.exp(shifted, out=shifted)
    totals = np.add.reduce(probabilities, 0 if classes_first else -1)
    loss = np.log(totals)
    loss -= picked  # log(sum(exp(shifted))) - shifted[label]
    probabilities /= totals if classes_first else totals[..., None]
    return loss, (probabilities, positions, classes_first)


def sparse_xent_array_vjp(g, out, needs, labels, logits, saved):
    """``(softmax - one_hot) * g`` from the forward's softmax and label positions: one product
    and one scattered subtraction (NumPy's ``subtract.at``, faster than the indexed form)."""
    probabilities, positions, classes_first = saved  # (classes, rows) when classes first
    grad = probabilities * (g if classes_first else g[..., None])
    np.subtract.at(grad.reshape(-1), positions, g.reshape(-1))
    return None, grad.T if classes_first else grad
