"""The rest of ``tf.math``'s elementwise functions: each a primitive with its VJP beside it,
or a short composition of primitives (then differentiable to any order with no rule of its own).

As in ``math.py``, broadcasting needs no care in a VJP (the tape sums each cotangent back to its
input's shape), and every VJP is written with the framework's ops. Float-only functions refuse
integers as TensorFlow's kernels do (``floats_only``). Rounding, comparisons and tests of
NaN/infinity have no gradient in TensorFlow (None), and none here.
"""
import math
import operator

import numpy as np

from ..engine import backend
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor
from .math import (_zeros_of, abs, add, cast, divide, exp, floats_only, log, multiply, sigmoid,
                   sqrt, square, subtract)
from .shape import where

# --- float functions with a primitive each -------------------------------------------------------
log1p = define("log1p", floats_only(np.log1p), lambda g, out, x: g / (x + 1))
expm1 = define("expm1", floats_only(np.expm1), lambda g, out, x: g * (out + 1))
rsqrt = define("rsqrt", floats_only(lambda x: 1 / np.sqrt(x)),
               lambda g, out, x: g * (out * out * out) * -0.5)
tan = define("tan", floats_only(np.tan), lambda g, out, x: g * (out * out + 1))
asin = define("asin", floats_only(np.arcsin), lambda g, out, x: g / sqrt(1 - x * x))
acos = define("acos", floats_only(np.arccos), lambda g, out, x: -g / sqrt(1 - x * x))
atan = define("atan", floats_only(np.arctan), lambda g, out, x: g / (x * x + 1))
sinh = define("sinh", floats_only(np.sinh), lambda g, out, x: g * cosh(x))
cosh = define("cosh", floats_only(np.cosh), lambda g, out, x: g * sinh(x))
asinh = define("asinh", floats_only(np.arcsinh), lambda g, out, x: g / sqrt(x * x + 1))
acosh = define("acosh", floats_only(np.arccosh), lambda g, out, x: g / sqrt(x * x - 1))
atanh = define("atanh", floats_only(np.arctanh), lambda g, out, x: g / (1 - x * x))
atan2 = define("atan2", floats_only(np.arctan2),
               lambda g, out, y, x: g * x / (x * x + y * y),
               lambda g, out, y, x: -g * y / (x * x + y * y), same_dtype=True)
# log(sigmoid(x)) = -softplus(-x), computed without overflow; d/dx = sigmoid(-x)
log_sigmoid = define("log_sigmoid", floats_only(lambda x: -np.logaddexp(0, -x).astype(
    x.dtype, copy=False)), lambda g, out, x: g * sigmoid(-x))
erfc = define("erfc", floats_only(lambda x: (1 - backend.erf(x)).astype(x.dtype, copy=False)),
              lambda g, out, x: g * exp(-x * x) * (-2 / math.sqrt(math.pi)))


def _reciprocal_forward(x):
    return 1 / x if x.dtype.kind in "fc" else np.floor_divide(1, x).astype(x.dtype)


reciprocal = define("reciprocal", _reciprocal_forward, lambda g, out, x: -g * out * out)

# --- integer-friendly arithmetic with TensorFlow's floor semantics -------------------------------


def _floor_mod_vjp_y(g, out, x, y):
    return -g * floor(x / y)


floordiv = define("floordiv", operator.floordiv, same_dtype=True)  # no gradient, as in TF
floormod = define("floormod", operator.mod, lambda g, out, x, y: g, _floor_mod_vjp_y,
                  same_dtype=True)
mod = floormod
truncatediv = define("truncatediv", lambda x, y: np.trunc(x / y).astype(x.dtype, copy=False)
                     if x.dtype.kind in "fc" else np.fix(x / y).astype(x.dtype),
                     same_dtype=True)
truncatemod = define("truncatemod", np.fmod, same_dtype=True)

# --- rounding and tests: no gradient -------------------------------------------------------------
floor = define("floor", floats_only(np.floor))
ceil = define("ceil", floats_only(np.ceil))
rint = define("rint", floats_only(np.rint))
is_nan = define("is_nan", floats_only(np.isnan))
is_inf = define("is_inf", floats_only(np.isinf))
is_finite = define("is_finite", floats_only(np.isfinite))
logical_xor = define("logical_xor", np.logical_xor)


def round(x, name=None):  # noqa: A001 - TensorFlow's name
    """Round half to even (banker's rounding), as TensorFlow does; integers pass through."""
    x = convert_to_tensor(x)
    return rint(x) if x.dtype.kind in "fc" else x


# --- compositions --------------------------------------------------------------------------------
def squared_difference(x, y, name=None):
    """``(x - y) ** 2``."""
    return square(subtract(x, y))


def truediv(x, y, name=None):
    """``x / y``; integers are divided in floating point (float32 for 8- and 16-bit integers,
    float64 for 32- and 64-bit ones, as in TF)."""
    return divide(x, y)


realdiv = truediv


def _zero_where_zero(guard, x, y, combine, safe):
    """``combine(x, y)``, but 0 where the ``guard`` operand (``"x"`` or ``"y"``) is 0, with
    ``y`` replaced by ``safe`` there first, so no NaN or infinity reaches the gradient."""
    x = convert_to_tensor(x)
    y = convert_to_tensor(y, x.dtype)
    nonzero = (x if guard == "x" else y) != cast(0, x.dtype)
    return where(nonzero, combine(x, where(nonzero, y, safe)), 0)


def _divide_no_nan_forward(x, y):
    if y.__class__ is np.ndarray and (y.all() if y.ndim else y):  # no zero divisor on the
        return x / y  # host (a metric's count, usually): a plain division
    zero = y == 0
    xp = backend.array_module(zero)
    quotient = x / xp.where(zero, y.dtype.type(1), y)  # (no warning to silence: cheaper)
    return xp.where(zero, quotient.dtype.type(0), quotient)


# One op (a metric's mean reads it on every step), with TensorFlow's DivNoNan gradients:
# g / y for x and g * (-x / y) / y for y, each 0 where y is 0.
_divide_no_nan = define("divide_no_nan", _divide_no_nan_forward,
                        lambda g, out, x, y: _divide_no_nan(g, y),
                        lambda g, out, x, y: g * _divide_no_nan(_divide_no_nan(-x, y), y),
                        same_dtype=True)


def divide_no_nan(x, y, name=None):
    """``x / y``, and 0 where ``y`` is 0 (its gradient there too)."""
    x = convert_to_tensor(x)
    y = convert_to_tensor(y, x.dtype)
    if x.dtype.kind != "f":  # integers divide into floats: the division's dtype rules
        return _zero_where_zero("y", x, y, divide, 1)
    return _divide_no_nan(x, y)


def reciprocal_no_nan(x, name=None):
    """``1 / x``, and 0 where ``x`` is 0."""
    x = convert_to_tensor(x)
    return divide_no_nan(cast(1, x.dtype), x)


def _multiply_no_nan_forward(x, y):
    with np.errstate(invalid="ignore"):  # NaN and infinity times 0: 0 here, not a warning
        product = x * y
    return backend.array_module(product).where(y == 0, product.dtype.type(0), product)


# TensorFlow's gradients: g * y for x and x * g for y, both without NaN where a factor is 0
_multiply_no_nan = define("multiply_no_nan", _multiply_no_nan_forward,
                          lambda g, out, x, y: _multiply_no_nan(g, y),
                          lambda g, out, x, y: _multiply_no_nan(x, g), same_dtype=True)


def multiply_no_nan(x, y, name=None):
    """``x * y``, and 0 where ``y`` is 0 even if ``x`` is NaN or infinite."""
    return _multiply_no_nan(x, y)


def xlogy(x, y, name=None):
    """``x * log(y)``, and 0 where ``x`` is 0 (its gradients there too, as in TF)."""
    return _zero_where_zero("x", x, y, lambda a, b: a * log(b), 1)


def xlog1py(x, y, name=None):
    """``x * log1p(y)``, and 0 where ``x`` is 0."""
    return _zero_where_zero("x", x, y, lambda a, b: a * log1p(b), 0)


def xdivy(x, y, name=None):
    """``x / y``, and 0 where ``x`` is 0."""
    return _zero_where_zero("x", x, y, divide, 1)


def add_n(inputs, name=None):
    """The sum of a list of tensors of one shape and dtype."""
    inputs = [convert_to_tensor(t) for t in inputs]
    if not inputs:
        raise ValueError("add_n: inputs must be a non-empty list of tensors")
    shapes = {t.shape for t in inputs}
    if len(shapes) > 1:
        raise ValueError(f"add_n: all inputs must have the same shape, got {sorted(shapes)}")
    total = inputs[0]
    for t in inputs[1:]:
        total = add(total, t)
    return total


def scalar_mul(scalar, x, name=None):
    """``scalar * x`` for a scalar ``scalar``."""
    scalar = convert_to_tensor(scalar) if not isinstance(scalar, (int, float)) else scalar
    if getattr(scalar, "ndim", 0):
        raise ValueError(f"scalar_mul: scalar must be a scalar, got shape {scalar.shape}")
    return multiply(scalar, x)


def softsign(features, name=None):
    """``x / (1 + |x|)``."""
    x = convert_to_tensor(features)
    return x / (abs(x) + 1)


def polyval(coeffs, x, name=None):
    """``coeffs[0] * x ** (n - 1) + ... + coeffs[n - 1]`` (Horner's rule), ``coeffs`` a list."""
    x = convert_to_tensor(x)
    if not coeffs:
        return x * 0
    total = convert_to_tensor(coeffs[0], x.dtype) + x * 0
    for c in coeffs[1:]:
        total = total * x + convert_to_tensor(c, x.dtype)
    return total


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """TensorFlow's older ``add_n`` (the same sum)."""
    return add_n(inputs)


def real(input, name=None):  # noqa: A002 - TensorFlow's argument name
    """The real part: a real tensor itself (complex tensors are not supported)."""
    x = convert_to_tensor(input)
    if x.dtype.kind == "c":
        raise TypeError("real: complex tensors are not supported")
    return x


conj = real  # of a real tensor: itself, as in TensorFlow


def imag(input, name=None):  # noqa: A002
    """The imaginary part of a real tensor: zeros (no gradient flows through them)."""
    from ..creation import zeros_like
    return zeros_like(real(input))


# TensorFlow's gradient: the cotangent for x1 (one step barely moves it), none for x2
nextafter = define("nextafter", np.nextafter, lambda g, out, x1, x2: g,
                   lambda g, out, x1, x2: _zeros_of(g), same_dtype=True)
