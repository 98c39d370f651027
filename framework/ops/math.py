"""Elementwise arithmetic and functions.

Each primitive below is its forward (on raw arrays) under a decorator that lists one VJP per
argument (written with these same ops, so they are differentiable in turn). Broadcasting needs no
care here: the tape sums each cotangent back to its input's shape.
"""
import math

import numpy as np

from .. import backend
from ..dtypes import as_dtype
from ..primitive import primitive


def _mask(condition, like):
    """A 0/1 tensor of ``like``'s dtype (masks are constants: their derivative is zero)."""
    return cast(condition, like.dtype)


@primitive(lambda g, out, x, y: g, lambda g, out, x, y: g, same_dtype=True)
def add(x, y):
    return x + y


@primitive(lambda g, out, x, y: g, lambda g, out, x, y: -g, same_dtype=True)
def subtract(x, y):
    return x - y


@primitive(lambda g, out, x, y: g * y, lambda g, out, x, y: g * x, same_dtype=True)
def multiply(x, y):
    return x * y


@primitive(lambda g, out, x, y: g / y, lambda g, out, x, y: -g * out / y, same_dtype=True)
def divide(x, y):
    return x / y


@primitive(lambda g, out, x: -g)
def negative(x):
    return -x


@primitive(lambda g, out, x, y: g * y * x ** (y - 1),
           lambda g, out, x, y: g * out * log(where(x > 0, x, 1)),
           same_dtype=True)
def pow(x, y):  # noqa: A001 - TensorFlow's name
    return x ** y


@primitive(lambda g, out, x: g * (x * 2))
def square(x):
    return x * x


@primitive(lambda g, out, x: g / (out * 2))
def sqrt(x):
    return np.sqrt(x)


@primitive(lambda g, out, x: g * out)
def exp(x):
    return np.exp(x)


@primitive(lambda g, out, x: g / x)
def log(x):
    return np.log(x)


@primitive(lambda g, out, x: g * sign(x))
def abs(x):  # noqa: A001 - TensorFlow's name
    return np.abs(x)


@primitive(lambda g, out, x: g * cos(x))
def sin(x):
    return np.sin(x)


@primitive(lambda g, out, x: -g * sin(x))
def cos(x):
    return np.cos(x)


@primitive(lambda g, out, x: g * (1 - out * out))
def tanh(x):
    return np.tanh(x)


@primitive(lambda g, out, x: g * out * (1 - out))
def sigmoid(x):
    # 0.5 * (1 + tanh(x / 2)) equals 1 / (1 + exp(-x)) and never overflows.
    return (np.tanh(x * 0.5) + 1) * 0.5


@primitive(lambda g, out, x: g * exp(-x * x) * (2 / math.sqrt(math.pi)))
def erf(x):
    return backend.erf(x)


@primitive(lambda g, out, x, y: g * _mask(x >= y, g), lambda g, out, x, y: g * _mask(x < y, g),
           same_dtype=True)
def maximum(x, y):
    return np.maximum(x, y)


@primitive(lambda g, out, x, y: g * _mask(x <= y, g), lambda g, out, x, y: g * _mask(x > y, g),
           same_dtype=True)
def minimum(x, y):
    return np.minimum(x, y)


@primitive(lambda g, out, x, dtype: cast(g, x.dtype) if _both_float(g.dtype, x.dtype) else None)
def _cast(x, dtype):
    return x.astype(dtype, copy=False)


def cast(x, dtype):
    """``x`` converted to ``dtype``; the gradient flows back only between floating dtypes."""
    return _cast(x, dtype=as_dtype(dtype))


def _both_float(a, b):
    return a.kind in "fc" and b.kind in "fc"


@primitive(lambda g, out, x: g)
def identity(x):
    return x


# --- not differentiable: these never reach a tape ----------------------------------------------
@primitive()
def stop_gradient(x):
    return x


@primitive()
def sign(x):
    return np.sign(x)


@primitive()
def equal(x, y):
    return x == y


@primitive()
def not_equal(x, y):
    return x != y


@primitive()
def less(x, y):
    return x < y


@primitive()
def less_equal(x, y):
    return x <= y


@primitive()
def greater(x, y):
    return x > y


@primitive()
def greater_equal(x, y):
    return x >= y


@primitive()
def logical_and(x, y):
    return np.logical_and(x, y)


@primitive()
def logical_or(x, y):
    return np.logical_or(x, y)


@primitive()
def logical_not(x):
    return np.logical_not(x)


from .shape import where  # noqa: E402 - the VJP of pow needs it; shape ops import nothing from here
