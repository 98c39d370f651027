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

_PYTHON_DEFAULTS = {float: float32, int: int32, type(True): bool}  # (``bool`` is the dtype here)


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
    """The dtype TensorFlow gives a Python value: float32 for floats (a list mixing ints and
    floats included), int32 for ints (int64 past int32's range), bool for bools. Tensors and
    NumPy values inside a list keep their dtype and the Python numbers beside them follow it.
    None leaves the choice to NumPy (an array, a NumPy scalar, a string)."""
    if value.__class__ in _PYTHON_DEFAULTS:  # a single number: the common case
        if value.__class__ is int and not _INT32_MIN <= value <= _INT32_MAX:
            return int64
        return _PYTHON_DEFAULTS[value.__class__]
    if not isinstance(value, (list, tuple)):
        return None
    kinds, typed, big, stack = set(), set(), False, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif item.__class__ in _PYTHON_DEFAULTS:
            kinds.add(item.__class__)
            big = big or (item.__class__ is int and not _INT32_MIN <= item <= _INT32_MAX)
        elif isinstance(getattr(item, "dtype", None), np.dtype):  # a tensor, a NumPy value
            typed.add(item.dtype)
        else:  # a string, an object: NumPy's rule
            return None
    if typed:
        return np.result_type(*typed)
    if _PYTHON_BOOL in kinds and len(kinds) > 1:
        raise ValueError("Can't convert Python sequence with mixed types to Tensor: "
                         "bools mixed with numbers")
    if float in kinds:
        return float32
    if int in kinds:
        return int64 if big else int32
    return bool if kinds else float32  # an empty list is float32, as in TensorFlow


_PYTHON_BOOL = type(True)
_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1


DType = np.dtype  # what ``tf.dtypes.DType`` names: the class of every dtype here


def __getattr__(name):
    """``fw.dtypes.cast`` (tf.dtypes.cast) lives with the ops, which import this module."""
    if name == "cast":
        from .ops import cast
        return cast
    raise AttributeError(f"module 'fw.dtypes' has no attribute '{name}'")
