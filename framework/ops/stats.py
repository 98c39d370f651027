"""The other reductions of ``tf.math``: products, log-sum-exp, any/all, variance and standard
deviation, norms and counts, and the normalisations built on them (``l2_normalize``,
``moments``).

Most are compositions of ``reduce.py``'s primitives, written as TensorFlow writes them, so
their numbers and gradients (at any order) are TensorFlow's. ``reduce_prod`` is a primitive:
its VJP multiplies each element's cotangent by the product of the *other* elements (an
exclusive cumulative product from each side), which stays right where an input is 0, at every
order (``cumprod``'s own VJP never divides by the input).
"""
from ..engine.primitive import define, primitive
from ..engine.tensor import convert_to_tensor
from .elementwise import is_finite, rsqrt
from .math import cast, exp, log, maximum, sqrt, square, stop_gradient
from .reduce import _axis_param, reduce_max, reduce_mean, reduce_sum
from .scan import cumprod
from .shape import _axes, broadcast_to, reshape, squeeze, transpose, where


def _others_product(x, axes):
    """For each element of ``x``, the product of the other elements of its reduction."""
    keep = [a for a in range(x.ndim) if a not in axes]
    perm = keep + list(axes)
    moved = transpose(x, perm)
    flat = reshape(moved, moved.shape[:len(keep)] + (-1,))
    left = cumprod(flat, axis=-1, exclusive=True)
    right = cumprod(flat, axis=-1, exclusive=True, reverse=True)
    others = reshape(left * right, moved.shape)
    inverse = [perm.index(a) for a in range(x.ndim)]
    return transpose(others, inverse)


def _spread_back(g, x, axes, keepdims):
    """The cotangent ``g`` of a reduction of ``x`` over ``axes``, put back over ``x``'s shape
    (a Jacobian's leading axes of ``g`` stay in front)."""
    lead = g.ndim - (x.ndim if keepdims else x.ndim - len(axes))
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return broadcast_to(reshape(g, g.shape[:lead] + kept), g.shape[:lead] + x.shape)


def _prod_vjp(g, out, x, axis, keepdims):
    axes = _axes(axis, x.ndim)
    if not axes:
        return g
    return _spread_back(g, x, axes, keepdims) * _others_product(x, axes)


@primitive(_prod_vjp)
def _reduce_prod(x, axis, keepdims):
    return x.prod(axis=axis, keepdims=keepdims, dtype=x.dtype)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    """Product over ``axis`` (all axes when None), in the input's dtype."""
    return _reduce_prod(input_tensor, axis=_axis_param(axis), keepdims=bool(keepdims))


def _boolean_reduction(op_name, method):
    def forward(x, axis, keepdims):
        if x.dtype.kind != "b":
            raise TypeError(f"expected a bool tensor, got {x.dtype.name}; compare first, "
                            f"e.g. fw.not_equal(x, 0)")
        return getattr(x, method)(axis=axis, keepdims=keepdims)
    reduce = define(op_name, forward)

    def public(input_tensor, axis=None, keepdims=False, name=None):
        return reduce(input_tensor, axis=_axis_param(axis), keepdims=bool(keepdims))
    public.__name__ = public.__qualname__ = op_name
    public.__doc__ = f"Logical {method} over ``axis`` of a bool tensor (all axes when None)."
    return public


reduce_any = _boolean_reduction("reduce_any", "any")
reduce_all = _boolean_reduction("reduce_all", "all")


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """``log(reduce_sum(exp(x)))`` without overflow: shifted by the (constant) maximum."""
    x = convert_to_tensor(input_tensor)
    raw_max = reduce_max(x, axis=axis, keepdims=True)
    shift = stop_gradient(where(is_finite(raw_max), raw_max, 0))
    total = log(reduce_sum(exp(x - shift), axis=axis, keepdims=keepdims))
    if not keepdims:
        shift = reshape(shift, total.shape)
    return total + shift


def _require_float(name, x):
    if x.dtype.kind not in "fc":
        raise TypeError(f"{name}: input must be either real or complex, got {x.dtype.name}")


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The population variance over ``axis`` (divided by the count, as TensorFlow does)."""
    x = convert_to_tensor(input_tensor)
    _require_float("reduce_variance", x)
    mean = reduce_mean(x, axis=axis, keepdims=True)
    return reduce_mean(square(x - mean), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The square root of ``reduce_variance``."""
    x = convert_to_tensor(input_tensor)
    _require_float("reduce_std", x)
    return sqrt(reduce_variance(x, axis=axis, keepdims=keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """``sqrt(reduce_sum(x ** 2))`` over ``axis``."""
    return sqrt(reduce_sum(square(input_tensor), axis=axis, keepdims=keepdims))


@primitive()
def _count_nonzero(x, axis, keepdims, dtype):
    return (x != 0).sum(axis=axis, keepdims=keepdims).astype(dtype)  # (CuPy's has no keepdims)


def count_nonzero(input, axis=None, keepdims=None, dtype="int64", name=None):  # noqa: A002
    """How many elements are not 0 (not False) over ``axis``; int64 by default."""
    from ..engine.dtypes import numpy_dtype
    return _count_nonzero(convert_to_tensor(input), axis=_axis_param(axis),
                          keepdims=bool(keepdims), dtype=numpy_dtype(dtype))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / sqrt(max(reduce_sum(x ** 2, axis), epsilon))``."""
    axis = dim if axis is None else axis
    x = convert_to_tensor(x)
    square_sum = reduce_sum(square(x), axis=axis, keepdims=True)
    return x * rsqrt(maximum(square_sum, epsilon))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """``(mean, variance)`` over ``axes``. float16 is worked in float32, as in TensorFlow.

    TensorFlow treats the mean inside the variance as a constant (``stop_gradient``): the
    same first derivative (the deviations sum to zero), but a wrong second one. Here the mean
    stays differentiable, so Hessians through ``moments`` are right too."""
    x = convert_to_tensor(x)
    y = cast(x, "float32") if x.dtype == "float16" else x
    mean = reduce_mean(y, axis=axes, keepdims=True)
    variance = reduce_mean(square(y - mean), axis=axes, keepdims=True)
    if not keepdims:
        mean, variance = squeeze(mean, axes), squeeze(variance, axes)
    if x.dtype == "float16":
        mean, variance = cast(mean, x.dtype), cast(variance, x.dtype)
    return mean, variance

