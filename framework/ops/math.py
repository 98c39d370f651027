"""Elementwise arithmetic and functions.

Each line below declares one primitive: its name, its forward on arrays (a NumPy ufunc
where one exists, which CuPy arrays answer too), and one VJP per argument, written with these
same ops so they are differentiable in turn. Broadcasting needs no care here: the tape sums each
cotangent back to its input's shape. The arithmetic that losses are made of also has an array VJP
(``framework.primitive``), for the first-order passes of training.
"""
import functools
import math
import operator

import numpy as np

from ..engine import backend
from ..engine.dtypes import numpy_dtype
from ..engine.primitive import define, primitive
from ..engine.tensor import convert_to_tensor, wrap, wrap_constant


def floats_only(forward):
    """``forward`` refusing integer and bool arrays, as TensorFlow's float-only kernels do
    (NumPy would silently compute ``sqrt`` of an int32 array in float64). The op's error
    wrapper adds its name and the inputs' dtypes and shapes. A one-argument ufunc (``exp``,
    ``sqrt``: the common case) gets a wrapper without argument packing, the cheapest call."""
    if getattr(forward, "nin", None) == 1:
        def checked(x):
            if x.dtype.kind not in "fc":
                _refuse(x)
            return forward(x)
        checked.nin = 1
    else:
        def checked(x, *rest, **params):
            if x.dtype.kind not in "fc":
                _refuse(x)
            return forward(x, *rest, **params)
    return functools.wraps(forward)(checked)


def _refuse(x):
    raise TypeError(f"expected a floating-point tensor (float16, float32 or float64), got "
                    f"{x.dtype.name}; convert it first, e.g. fw.cast(x, fw.float32)")


def _mask(condition, like):
    """A 0/1 tensor of ``like``'s dtype (masks are constants: their derivative is zero)."""
    return cast(condition, like.dtype)


add = define("add", operator.add, lambda g, out, x, y: g, lambda g, out, x, y: g,
             array_vjp=lambda g, out, needs, x, y: (g if needs[0] else None,
                                                  g if needs[1] else None),
             same_dtype=True)
subtract = define("subtract", operator.sub, lambda g, out, x, y: g, lambda g, out, x, y: -g,
                  array_vjp=lambda g, out, needs, x, y: (g if needs[0] else None,
                                                       -g if needs[1] else None),
                  same_dtype=True)
multiply = define("multiply", operator.mul, lambda g, out, x, y: g * y,
                  lambda g, out, x, y: g * x,
                  array_vjp=lambda g, out, needs, x, y: (g * y if needs[0] else None,
                                                       g * x if needs[1] else None),
                  same_dtype=True)


def _true_divide(x, y):
    """TensorFlow's true division: integers are divided in floating point, float32 for 8- and
    16-bit integers and float64 for 32- and 64-bit ones (``uint8_images / 255`` is float32,
    ready for a float32 kernel); bool is refused, as TensorFlow refuses it."""
    kind = x.dtype.kind
    if kind in "iu":
        real = np.float64 if x.dtype.itemsize > 2 else np.float32
        return x.astype(real) / y.astype(real)
    if kind == "b":
        raise TypeError("expected a numeric tensor, got bool; cast it first, e.g. "
                        "fw.cast(x, fw.float32)")
    return x / y


divide = define("divide", _true_divide, lambda g, out, x, y: g / y,
                lambda g, out, x, y: -g * out / y, same_dtype=True)
negative = define("negative", operator.neg, lambda g, out, x: -g,
                  array_vjp=lambda g, out, needs, x: (-g,))
pow = define("pow", operator.pow,  # noqa: A001 - TensorFlow's name
             lambda g, out, x, y: g * y * x ** (y - 1),
             lambda g, out, x, y: g * out * log(where(x > 0, x, 1)), same_dtype=True)
square = define("square", np.square, lambda g, out, x: g * (x * 2),
                array_vjp=lambda g, out, needs, x: (g * (x * 2),))
sqrt = define("sqrt", floats_only(np.sqrt), lambda g, out, x: g / (out * 2))
exp = define("exp", floats_only(np.exp), lambda g, out, x: g * out)
log = define("log", floats_only(np.log), lambda g, out, x: g / x)
abs = define("abs", np.abs, lambda g, out, x: g * sign(x))  # noqa: A001
sin = define("sin", floats_only(np.sin), lambda g, out, x: g * cos(x))
cos = define("cos", floats_only(np.cos), lambda g, out, x: -g * sin(x))
tanh = define("tanh", floats_only(np.tanh), lambda g, out, x: g * (1 - out * out))
erf = define("erf", floats_only(backend.erf),
             lambda g, out, x: g * exp(-x * x) * (2 / math.sqrt(math.pi)))
maximum = define("maximum", np.maximum, lambda g, out, x, y: g * _mask(x >= y, g),
                 lambda g, out, x, y: g * _mask(x < y, g), same_dtype=True)
minimum = define("minimum", np.minimum, lambda g, out, x, y: g * _mask(x <= y, g),
                 lambda g, out, x, y: g * _mask(x > y, g), same_dtype=True)
identity = define("identity", lambda x: x, lambda g, out, x: g)
# a variable's value at one moment: a copy, so a later assign leaves it as it was
read_value = define("read_value", lambda x: x.copy(), lambda g, out, x: g)


@primitive(lambda g, out, x: g * out * (1 - out))
@floats_only
def sigmoid(x):
    # 0.5 * (1 + tanh(x / 2)) equals 1 / (1 + exp(-x)) and never overflows.
    return (np.tanh(x * 0.5) + 1) * 0.5


@primitive(lambda g, out, x, dtype: cast(g, x.dtype) if _both_float(g.dtype, x.dtype) else None)
def _cast(x, dtype):
    return x.astype(dtype, copy=False)


def cast(x, dtype, name=None):
    """``x`` converted to ``dtype``; the gradient flows back only between floating dtypes."""
    return _cast(x, dtype=numpy_dtype(dtype))


def _both_float(a, b):
    return a.kind in "fc" and b.kind in "fc"


# TensorFlow's gradient of sign is zero (not None): a constant of the cotangent's shape.
sign = define("sign", np.sign, lambda g, out, x: _zeros_of(g))


def _zeros_of(g):
    return wrap_constant(backend.array_module(g._value).zeros(g.shape, g.dtype))


def stop_gradient(input, name=None):  # noqa: A002 - TensorFlow's argument names
    """``input`` as a constant: a new tensor no tape tracks, so no gradient flows back through
    it, and (as in TensorFlow) a variable read this way is not watched."""
    return wrap(convert_to_tensor(input)._value)


# --- not differentiable: recorded (a variable they read is watched), with no gradient ----------
equal = define("equal", operator.eq)
not_equal = define("not_equal", operator.ne)
less = define("less", operator.lt)
less_equal = define("less_equal", operator.le)
greater = define("greater", operator.gt)
greater_equal = define("greater_equal", operator.ge)
logical_and = define("logical_and", np.logical_and)
logical_or = define("logical_or", np.logical_or)
logical_not = define("logical_not", np.logical_not)

from .shape import where  # noqa: E402 - the VJP of pow needs it; shape ops import nothing from here
