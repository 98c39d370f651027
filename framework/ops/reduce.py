"""Reductions over axes. Their VJPs put the reduced axes back and broadcast ``g`` over them."""
import math

import numpy as np

from ..engine import backend
from .math import cast, equal
from .shape import _axes, reshape
from ..engine.primitive import define, primitive
from ..engine.tensor import Tensor


def _kept_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _spread_vjp(gg, out, g, shape, axes, keepdims, scale):
    """The adjoint of spreading: sum the spread axes back (leading axes of ``gg`` stay)."""
    lead = gg.ndim - len(shape)
    total = _reduce_sum(gg, axis=tuple(lead + a for a in axes), keepdims=keepdims)
    return total * scale if scale != 1 else total


def _spread_array(g, shape, axes, keepdims, scale):
    """``g * scale`` put back over the reduced ``axes`` of ``shape``, in one pass."""
    lead = g.ndim - len(shape) + (0 if keepdims else len(axes))
    out = backend.array_module(g).empty(g.shape[:lead] + shape, dtype=g.dtype)
    if scale != 1:  # scaled before spreading: fewer products, each the same
        g = g * scale
    if not keepdims and (lead or axes != tuple(range(len(axes)))):
        # reduced axes between kept ones (or after a Jacobian's rows): put them back as 1s;
        # leading ones, as in a loss's mean over everything, broadcast back by themselves
        g = g.reshape(g.shape[:lead] + _kept_shape(shape, axes))
    out[...] = g
    return out


_spread_op = define("spread", _spread_array, _spread_vjp)


def spread(g, x, axis, keepdims, scale=1):
    """The cotangent ``g`` of a reduction of ``x``, spread back over ``x``'s shape."""
    shape = x._value.shape
    return _spread_op(g, shape=shape, axes=_axes(axis, len(shape)), keepdims=keepdims,
                      scale=scale)


def _mean_scale(shape, axes):
    """``1 / n`` for a mean of ``n`` elements over ``axes`` of ``shape`` (1 when none)."""
    return 1 / max(math.prod(shape[a] for a in axes), 1)


def _sum_vjp(g, out, x, axis, keepdims):
    return spread(g, x, axis, keepdims)


def _mean_vjp(g, out, x, axis, keepdims):
    shape = x._value.shape
    return spread(g, x, axis, keepdims, scale=_mean_scale(shape, _axes(axis, len(shape))))


def _fill_array(g, shape, count):
    """The one value of ``g / count`` over ``shape``: the cotangent of a reduction over every
    axis (a loss's), with none of the general spread's shape work. On the host the value is
    worked out as a Python number: NumPy's 0-d arithmetic costs more than the whole fill."""
    if g.__class__ is np.ndarray:
        out = np.empty(shape, dtype=g.dtype)
        out.fill(g.item() / count)
    else:
        out = backend.array_module(g).empty(shape, dtype=g.dtype)
        out[...] = g / count if count != 1 else g
    return out


def _sum_array_vjp(g, out, needs, x, axis, keepdims):
    if axis is None:
        return (_fill_array(g, x.shape, 1),)
    return (_spread_array(g, x.shape, _axes(axis, x.ndim), keepdims, 1),)


def _mean_array_vjp(g, out, needs, x, axis, keepdims):
    if axis is None:
        return (_fill_array(g, x.shape, max(x.size, 1)),)
    axes = _axes(axis, x.ndim)
    return (_spread_array(g, x.shape, axes, keepdims, _mean_scale(x.shape, axes)),)


def _extreme_vjp(g, out, x, axis, keepdims):
    """Ties share the gradient equally, as in TensorFlow."""
    kept = out if keepdims else reshape(out, _kept_shape(x.shape, _axes(axis, x.ndim)))
    hit = cast(equal(x, kept), g.dtype)
    share = hit / _reduce_sum(hit, axis=axis, keepdims=True)
    return spread(g, x, axis, keepdims) * share


def _axis_param(axis):
    if axis is None or isinstance(axis, (int, np.integer)):
        return None if axis is None else int(axis)
    return tuple(int(a) for a in axis)


@primitive(_sum_vjp, array_vjp=_sum_array_vjp)
def _reduce_sum(x, axis, keepdims):
    if x.dtype.kind in "iu":  # NumPy would widen int32 to int64; TensorFlow keeps the dtype
        return x.sum(axis=axis, keepdims=keepdims, dtype=x.dtype)
    return x.sum(axis=axis, keepdims=keepdims)


@primitive(_mean_vjp, array_vjp=_mean_array_vjp)
def _reduce_mean(x, axis, keepdims):
    if x.dtype.kind == "f" and x.size:  # np.mean's sum and division, without its wrapper
        total = (np.add.reduce(x, axis, keepdims=keepdims) if x.__class__ is np.ndarray
                 else x.sum(axis=axis, keepdims=keepdims))
        return total / (x.size // total.size)
    return x.mean(axis=axis, keepdims=keepdims, dtype=x.dtype)


@primitive(_extreme_vjp)
def _reduce_max(x, axis, keepdims):
    return x.max(axis=axis, keepdims=keepdims)


@primitive(_extreme_vjp)
def _reduce_min(x, axis, keepdims):
    return x.min(axis=axis, keepdims=keepdims)


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Sum over ``axis`` (all axes when None)."""
    return _reduce_sum(input_tensor, axis=_axis_param(axis), keepdims=bool(keepdims))


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Mean over ``axis`` (all axes when None), computed in the input's dtype."""
    if axis is None and not keepdims and input_tensor.__class__ is Tensor:  # (a loss's mean)
        return _reduce_mean.run((input_tensor,), (input_tensor._value,), _EVERY_AXIS)
    return _reduce_mean(input_tensor, axis=_axis_param(axis), keepdims=bool(keepdims))


_EVERY_AXIS = {"axis": None, "keepdims": False}  # (shared by such records: never changed)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce_max(input_tensor, axis=_axis_param(axis), keepdims=bool(keepdims))


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce_min(input_tensor, axis=_axis_param(axis), keepdims=bool(keepdims))
