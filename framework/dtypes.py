"""The framework's dtypes are NumPy's dtype objects, so NumPy and CuPy arrays speak them natively.

TensorFlow's conversion rule is kept: Python floats become float32 and Python ints int32, so a
literal in user code never turns a float32 computation into float64.
"""
import numpy as np

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
bool = np.dtype("bool")  # noqa: A001 - TensorFlow's name, shadowing is intended here

_PYTHON_DEFAULTS = {float: float32, int: int32, bool: bool}


def as_dtype(dtype):
    """Turn a dtype-like (``fw.float32``, ``"float32"``, ``np.float32``) into a NumPy dtype."""
    if dtype is None:
        return None
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"cannot interpret {dtype!r} as a dtype") from None


FLOATING_KINDS = "fc"  # the NumPy dtype kinds of differentiable tensors


def is_floating(dtype):
    """Only floating (and complex) tensors are differentiable, as in TensorFlow."""
    return (dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)).kind in FLOATING_KINDS


def default_dtype(value):
    """The dtype TensorFlow gives a Python value (float32 for floats, int32 for ints)."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return _PYTHON_DEFAULTS.get(type(value))
