"""Reductions over axes. Their VJPs put the reduced axes back and broadcast ``g`` over them."""
import numpy as np

from .math import cast, equal
from .shape import _axes, _lead, broadcast_to, reshape


def _kept_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _spread(g, out, x, axis, keepdims):
    """``g`` (with any leading axes) broadcast back over the axes the reduction removed."""
    lead = _lead(g, out)
    shape = x.shape
    kept = _kept_shape(shape, _axes(axis, len(shape)))
    if not keepdims:
        g = reshape(g, g.shape[:lead] + kept)
    return broadcast_to(g, g.shape[:lead] + shape)


def _count(x, axis):
    return int(np.prod([x.shape[a] for a in _axes(axis, x.ndim)], dtype=np.int64))


def _sum_vjp(g, out, x, axis, keepdims):
    return _spread(g, out, x, axis, keepdims)


def _mean_vjp(g, out, x, axis, keepdims):
    return _spread(g, out, x, axis, keepdims) / _count(x, axis)


def _extreme_vjp(g, out, x, axis, keepdims):
    """Ties share the gradient equally, as in TensorFlow."""
    kept = out if keepdims else reshape(out, _kept_shape(x.shape, _axes(axis, x.ndim)))
    hit = cast(equal(x, kept), g.dtype)
    share = hit / _reduce_sum(hit, axis=axis, keepdims=True)
    return _spread(g, out, x, axis, keepdims) * share


def _axis_param(axis):
    if axis is None or isinstance(axis, (int, np.integer)):
        return None if axis is None else int(axis)
    return tuple(int(a) for a in axis)


from ..primitive import primitive  # noqa: E402


@primitive(_sum_vjp)
def _reduce_sum(x, axis, keepdims):
    return x.sum(axis=axis, keepdims=keepdims)


@primitive(_mean_vjp)
def _reduce_mean(x, axis, keepdims):
    return x.mean(axis=axis, keepdims=keepdims, dtype=x.dtype)


@primitive(_extreme_vjp)
def _reduce_max(x, axis, keepdims):
    return x.max(axis=axis, keepdims=keepdims)


@primitive(_extreme_vjp)
def _reduce_min(x, axis, keepdims):
    return x.min(axis=axis, keepdims=keepdims)


def reduce_sum(input_tensor, axis=None, keepdims=False):
    """Sum over ``axis`` (all axes when None)."""
    return _reduce_sum(input_tensor, axis=_axis_param(axis), keepdims=bool(keepdims))


def reduce_mean(input_tensor, axis=None, keepdims=False):
    """Mean over ``axis`` (all axes when None), computed in the input's dtype."""
    return _reduce_mean(input_tensor, axis=_axis_param(axis), keepdims=bool(keepdims))


def reduce_max(input_tensor, axis=None, keepdims=False):
    return _reduce_max(input_tensor, axis=_axis_param(axis), keepdims=bool(keepdims))


def reduce_min(input_tensor, axis=None, keepdims=False):
    return _reduce_min(input_tensor, axis=_axis_param(axis), keepdims=bool(keepdims))
