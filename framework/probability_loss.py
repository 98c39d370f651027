"""Keras's sparse cross-entropy on probabilities as one op, with an array VJP.

``losses.sparse_categorical_crossentropy(y, p)`` on a softmax's output (the seed tutorials'
spelling) is Keras's ``-log_softmax(log(clip(p, eps, 1 - eps)))[label]``: the clip keeps a
confident wrong prediction finite, the log-softmax renormalises rows that do not sum to one.
With ``c = clip(p)`` that is ``log(sum(c)) - log(c[label])`` exactly (``exp(log c) = c``), which
needs no shift (``c`` lies in [eps, 1]) and no exponential, and whose derivative is
``1 / sum(c) - one_hot / c[label]``, zero where the clip is active. As four ops (clip, log,
cross-entropy) it cost four records and four VJPs per step; as this one primitive, one each.
And on the output of ``fw.nn.softmax``, a training step's backward pass goes straight to the
logits (``_through_softmax``, declared as the primitive's ``Through``): the softmax's own VJP
runs only for a pass that asks for the probabilities' gradient.
"""
import numpy as np

from .engine import backend
from .tuning.host import row_sums
from .ops.nn import _label_positions, _softmax, checked_sparse_labels
from .ops import cast, clip_by_value, one_hot, reduce_sum
from .engine.primitive import Through, primitive

EPSILON = 1e-7  # Keras's backend.epsilon()


def _bounds(dtype):
    """The clip's bounds in ``dtype`` (kept: every step asks)."""
    bounds = _BOUNDS.get(dtype)
    if bounds is None:
        bounds = _BOUNDS[dtype] = (dtype.type(EPSILON), dtype.type(1 - EPSILON))
    return bounds


_BOUNDS = {}


def _array_vjp(g, out, needs, labels, probabilities, saved):
    clipped, totals, picked, positions, inside = saved
    xp = backend.array_module(clipped)
    grad = xp.empty_like(clipped)
    grad[...] = (g / totals)[..., None]
    # One position per row: distinct, so a fancy-index update is exact (no ufunc.at needed).
    grad.reshape(-1)[positions] -= (g / picked).reshape(-1)
    if not inside:  # the clip's derivative: zero where it changed the value
        grad *= clipped == probabilities
    return None, grad


def _vjp(g, out, labels, probabilities, saved):
    """The same derivative in differentiable ops, for higher orders."""
    clipped = clip_by_value(probabilities, EPSILON, 1 - EPSILON)
    dtype = probabilities.dtype
    hot = one_hot(labels, probabilities.shape[-1], dtype=dtype)
    g = g[..., None]
    grad = g / reduce_sum(clipped, axis=-1, keepdims=True) - g * hot / clipped
    return grad * cast(probabilities <= 1 - EPSILON, dtype) * cast(probabilities >= EPSILON,
                                                                   dtype)


def _through_softmax(g, out, needs, labels, probabilities, saved):
    """The gradient for the logits of the softmax that gave ``probabilities`` (see ``Through``).

    The loss's gradient for ``p`` is ``d = m * (1 / sum(c) - one_hot / c[label])`` (``m``: 1
    where the clip left ``p`` as it was), and the softmax's VJP of ``d`` is
    ``p * d - p * sum(p * d)``. Where ``m`` is 1, ``c[label] = p[label]``, so ``p * d`` is
    ``p / sum(c) - one_hot``; with nothing clipped ``sum(c) = sum(p)`` and ``sum(p * d)`` is 0.
    """
    clipped, totals, picked, positions, inside = saved
    grad = probabilities * (g / totals)[..., None]
    grad.reshape(-1)[positions] -= g.reshape(-1)
    if not inside:
        grad *= clipped == probabilities
        grad -= probabilities * row_sums(grad)[..., None]
    return None, grad


@primitive(None, _vjp, array_vjp=_array_vjp, saves=True,
           through=Through(_softmax.primitive, lambda params: params["axis"] == -1,
                           _through_softmax))
def _probability_xent(labels, probabilities):
    low, high = _bounds(probabilities.dtype)
    # Whether the clip leaves every value as it is (then it needs no copy, and its masks are
    # ones); on the GPU the check would wait for the device, so there it is always applied.
    xp = backend.array_module(probabilities)
    inside = xp is np and (not probabilities.size or low <= np.minimum.reduce(
        probabilities, None) and np.maximum.reduce(probabilities, None) <= high)
    if inside:
        clipped = probabilities
    else:
        clipped = xp.maximum(probabilities, low)
        xp.minimum(clipped, high, out=clipped)
    totals = row_sums(clipped)
    positions = _label_positions(clipped, labels)
    picked = clipped.take(positions).reshape(totals.shape)
    loss = xp.log(totals / picked)
    return loss, (clipped, totals, picked, positions, inside)


def sparse_crossentropy_of_probabilities(labels, probabilities):
    """Per-example ``-log_softmax(log(clip(p)))[label]`` for integer ``labels``."""
    labels, probabilities, raw, values = checked_sparse_labels(
        "sparse_categorical_crossentropy", labels, probabilities)
    return _probability_xent.run((labels, probabilities), (raw, values), {})
