"""Ops that Keras layers compose from several, fused into one: the softmax with a mask over
one or several axes (``layers.Softmax``, the attention layers).

Keras's masked softmax is ``where(mask, x, -1e9)``, the softmax, then ``where(mask, p, 0)``
(``fill``); its ``Attention`` layers' is ``where(mask, x - 1e9, x)`` and the softmax, without
the last step. As one op it takes one pass over the scores instead of three and its VJP is the
softmax's own, ``p * (g - sum(g * p))``: at a masked entry ``p`` is 0 (``exp`` of -1e9
underflows), so the masked entries get no gradient, as through the ``where``s. The VJP is
written with the framework's ops, so higher orders come from the tape.
"""
import numpy as np

from .. import backend
from ..primitive import define
from ..tensor import convert_to_tensor
from .math import floats_only
from .reduce import reduce_sum

__all__ = ["masked_softmax"]

# What Keras puts at masked-out logits (float16: -3e4, which its exp still takes to 0).
_LARGE_NEGATIVE = {np.dtype(np.float16): -3e4}


def _large_negative(dtype):
    return _LARGE_NEGATIVE.get(dtype, -1e9)


def _normalized(e, axes):
    """``exp`` of ``e`` (shifted by its maximum over ``axes``) over its sum, in place."""
    e -= e.max(axis=axes, keepdims=True)
    backend.array_module(e).exp(e, out=e)
    e /= e.sum(axis=axes, keepdims=True)
    return e


def _softmax_forward(x, axes):
    return _normalized(x.copy(), axes)


def _masked_forward(x, mask, axes, fill):
    xp = backend.array_module(x)
    negative = x.dtype.type(_large_negative(x.dtype))
    if fill:
        p = _normalized(xp.where(mask, x, negative), axes)
        return xp.multiply(p, mask, out=p)
    return _normalized(xp.where(mask, x, x + negative), axes)


def _vjp(g, out, x, *rest, axes, **params):
    return out * (g - reduce_sum(g * out, axis=axes, keepdims=True))


def _array_vjp(g, out, needs, x, *rest, axes, **params):
    grad = g * out
    total = grad.sum(axis=axes, keepdims=True)
    backend.array_module(g).subtract(g, total, out=grad)
    grad *= out
    return (grad,) + (None,) * len(rest)


_softmax = define("softmax_over_axes", floats_only(_softmax_forward), _vjp,
                  array_vjp=_array_vjp)
_masked = define("masked_softmax", floats_only(_masked_forward), _vjp, None,
                 array_vjp=_array_vjp)


def masked_softmax(x, mask, axes, fill=True):
    """The softmax of ``x`` over ``axes`` (a tuple), where ``mask`` (booleans broadcasting to
    ``x``, or None) is False an entry takes no part: Keras's ``Softmax`` layer's form with
    ``fill`` (masked entries' probability exactly 0), its attention layers' without."""
    x = convert_to_tensor(x)
    axes = tuple(sorted(a % x.ndim - x.ndim for a in axes))  # from the end, for the VJPs
    if mask is None:
        return _softmax(x, axes=axes)
    return _masked(x, convert_to_tensor(mask), axes=axes, fill=bool(fill))
