"""Keras's sparse cross-entropy on probabilities as one op: clip, log, then the fused kernel.

``losses.sparse_categorical_crossentropy(y, p)`` on a softmax's output (the seed tutorials'
spelling) computes ``-log_softmax(log(clip(p, eps, 1 - eps)))[label]``: the clip keeps a
confident wrong prediction finite, the log-softmax renormalises rows that do not sum to one.
As four ops that is four records and four VJPs per step; as this one primitive the forward runs
the very same kernels in the same order (the same numbers), and its raw VJP is the four VJPs'
arithmetic in one call: the cross-entropy's ``softmax - one_hot``, divided by the clipped
probabilities, times the clip's masks.
"""
from .nn import _sparse_xent, _sparse_xent_grad, _xent_raw_vjp, checked_sparse_labels
from .ops import cast, clip_by_value, log
from .primitive import _NO_PARAMS, primitive
from . import backend

EPSILON = 1e-7  # Keras's backend.epsilon()


def _bounds(dtype):
    return dtype.type(EPSILON), dtype.type(1 - EPSILON)


def _raw_vjp(g, out, needs, labels, probabilities, saved):
    clipped, logits, xent_saved = saved
    _, grad = _xent_raw_vjp(g, out, (False, True), labels, logits, xent_saved)
    low, high = _bounds(probabilities.dtype)
    grad /= clipped  # log's VJP (in place: the cross-entropy's VJP made this array)
    if probabilities.min() < low or probabilities.max() > high:  # (else the masks are ones)
        grad = grad * (probabilities <= high).astype(grad.dtype)  # the upper clip's
        grad = grad * (probabilities >= low).astype(grad.dtype)  # the lower clip's
    return None, grad


def _vjp(g, out, labels, probabilities, saved):
    """The same derivative in differentiable ops, for higher orders."""
    clipped = clip_by_value(probabilities, EPSILON, 1 - EPSILON)
    grad = _sparse_xent_grad(g, labels, log(clipped)) / clipped
    dtype = probabilities.dtype
    return grad * cast(probabilities <= 1 - EPSILON, dtype) * cast(probabilities >= EPSILON, dtype)


@primitive(None, _vjp, raw_vjp=_raw_vjp, saves=True)
def _probability_xent(labels, probabilities):
    xp = backend.array_module(probabilities)
    low, high = _bounds(probabilities.dtype)
    clipped = xp.maximum(probabilities, low)
    xp.minimum(clipped, high, out=clipped)
    logits = xp.log(clipped)
    loss, saved = _sparse_xent.primitive.forward(labels, logits)
    return loss, (clipped, logits, saved)


def sparse_crossentropy_of_probabilities(labels, probabilities):
    """Per-example ``-log_softmax(log(clip(p)))[label]`` for integer ``labels``."""
    labels, probabilities, raw, values = checked_sparse_labels(
        "sparse_categorical_crossentropy", labels, probabilities)
    return _probability_xent.run((labels, probabilities), (raw, values), _NO_PARAMS)
