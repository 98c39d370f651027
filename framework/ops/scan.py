"""Cumulative sums and products along one axis (``cumsum``, ``cumprod``), TensorFlow's
``exclusive`` and ``reverse`` included.

The axis is kept counted from the end, so a cotangent with a Jacobian's extra leading axes runs
through the same VJP. The adjoint of a cumulative sum is the cumulative sum the other way round.
A cumulative product's VJP never divides by the input: each element's gradient is the product
of the elements before it times a running sum of the cotangent weighted by the products after
it (a linear recurrence, a primitive solved by doubling, whose VJP is the recurrence run the
other way), so it is exact where inputs are 0, at every order. (TensorFlow divides, with
``div_no_nan``: its gradient is 0 at a zero input, and its second derivatives of ``cumprod``
and ``reduce_prod`` are 0 there too.)
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


def _shift_array(t, axis, toward_start, by):
    """``t`` moved ``by`` places along ``axis`` (negative), zeros filling in: element ``i``
    becomes ``t[i + by]`` when ``toward_start``, else ``t[i - by]``."""
    out = backend.array_module(t).zeros_like(t)
    n, at = t.shape[axis], t.ndim + axis
    if by < n:
        near, far = slice(0, n - by), slice(by, n)
        dst, src = (near, far) if toward_start else (far, near)
        out[(slice(None),) * at + (dst,)] = t[(slice(None),) * at + (src,)]
    return out


# the adjoint of a shift is the shift the other way
_shift = define("shift", _shift_array, lambda g, out, t, axis, toward_start, by: _shift(
    g, axis=axis, toward_start=not toward_start, by=by))


def _recurrence_array(a, b, axis, toward_start):
    """``r`` with ``r[i] = b[i] + a[i] * r[j]``, ``j = i + 1`` when ``toward_start`` (else
    ``i - 1``) and ``r`` 0 past the end, by doubling: ``log2(n)`` rounds of shifts, products
    and sums (``a`` may lack ``b``'s leading axes)."""
    n, by = b.shape[axis], 1
    while by < n:
        b = b + a * _shift_array(b, axis, toward_start, by)
        if by * 2 < n:
            a = a * _shift_array(a, axis, toward_start, by)
        by *= 2
    return b


def _recurrence_vjp_b(g, out, a, b, axis, toward_start):
    # r = (I - diag(a) S)^-1 b: the adjoint runs the same recurrence the other way, each step
    # weighted by the coefficient of the element it comes from
    back = not toward_start
    return _recurrence(_shift(a, axis=axis, toward_start=back, by=1), g, axis=axis,
                       toward_start=back)


def _recurrence_vjp_a(g, out, a, b, axis, toward_start):
    return _recurrence_vjp_b(g, out, a, b, axis, toward_start) * _shift(
        out, axis=axis, toward_start=toward_start, by=1)


_recurrence = define("linear_recurrence", _recurrence_array, _recurrence_vjp_a,
                     _recurrence_vjp_b)


def _cumprod_vjp(g, out, x, axis, exclusive, reverse):
    # d out[k] / d x[i] = (product of the x before i) * (product of the x from i + 1 to k),
    # over the k that include i: the first factor an exclusive cumprod, the sum over k of
    # g[k] times the second a linear recurrence through the x after i
    forward = not reverse  # the product runs toward the end: "after" is toward the end
    after = _shift(x, axis=axis, toward_start=forward, by=1)
    weights = _shift(g, axis=axis, toward_start=forward, by=1) if exclusive else g
    before = _cumprod(x, axis=axis, exclusive=True, reverse=reverse)
    return before * _recurrence(after, weights, axis=axis, toward_start=forward)


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
