"""Cumulative sums and products along one axis (``cumsum``, ``cumprod``), TensorFlow's
``exclusive`` and ``reverse`` included.

The axis is kept counted from the end, so a cotangent with a Jacobian's extra leading axes runs
through the same VJP. The adjoint of a cumulative sum is the cumulative sum the other way round;
a cumulative product's VJP divides by the input, as TensorFlow's does (so it is undefined where
an input is exactly 0).
"""
from ..engine import backend
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor


def _from_end(axis, ndim, name):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of range for a tensor of rank {ndim}")
    return axis % ndim - ndim


def _scan_forward(x, axis, exclusive, reverse, product):
    """The cumulative sum or product of ``x`` along ``axis`` (negative), in ``x``'s dtype."""
    xp = backend.array_module(x)
    if reverse:
        x = xp.flip(x, axis)
    out = (xp.cumprod if product else xp.cumsum)(x, axis=axis, dtype=x.dtype)
    if exclusive:  # shift by one: the identity first, the last total dropped
        start = xp.full(x.shape[:x.ndim + axis] + (1,) + x.shape[x.ndim + axis:][1:],
                        1 if product else 0, dtype=x.dtype)
        head = out[(slice(None),) * (x.ndim + axis) + (slice(0, -1),)]
        out = xp.concatenate([start, head], axis=axis)
    return xp.flip(out, axis) if reverse else out


def _cumsum_vjp(g, out, x, axis, exclusive, reverse):
    return _cumsum(g, axis=axis, exclusive=exclusive, reverse=not reverse)


_cumsum = define("cumsum", lambda x, axis, exclusive, reverse: _scan_forward(
    x, axis, exclusive, reverse, False), _cumsum_vjp)


def _cumprod_vjp(g, out, x, axis, exclusive, reverse):
    return _cumsum(g * out, axis=axis, exclusive=exclusive, reverse=not reverse) / x


_cumprod = define("cumprod", lambda x, axis, exclusive, reverse: _scan_forward(
    x, axis, exclusive, reverse, True), _cumprod_vjp)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along ``axis``; ``exclusive`` leaves out each element itself, ``reverse``
    runs from the end."""
    x = convert_to_tensor(x)
    return _cumsum(x, axis=_from_end(axis, x.ndim, "cumsum"), exclusive=bool(exclusive),
                   reverse=bool(reverse))


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along ``axis`` (``exclusive`` and ``reverse`` as in ``cumsum``)."""
    x = convert_to_tensor(x)
    return _cumprod(x, axis=_from_end(axis, x.ndim, "cumprod"), exclusive=bool(exclusive),
                    reverse=bool(reverse))


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """``log(cumsum(exp(x)))`` without overflow: shifted by the (constant) maximum."""
    from .math import exp, log, stop_gradient
    from .reduce import reduce_max
    x = convert_to_tensor(x)
    shift = stop_gradient(reduce_max(x))
    return log(cumsum(exp(x - shift), axis, exclusive, reverse)) + shift
