"""Creation functions: new tensors on the current backend, TensorFlow's names and defaults.

What depends only on shapes and Python values is a constant; what depends on a tensor's values
(``fill``'s value, ``range``'s ends) is an op, so ``fw.function`` reads it on every call. A
shape given as a tensor is read entry by entry with ``operator.index``, which a trace checks
on every call; a shape holding a traced call's own size (``engine.tensor.dims``) is a
broadcast, an op that makes it anew on every call.
"""
import operator

import numpy as np

from .engine import backend
from .engine.dtypes import numpy_dtype, float32, int32
from .engine.primitive import define
from .engine.tensor import Tensor, convert_to_tensor, dims, wrap_constant
from .ops import broadcast_to


def _shape(shape):
    if isinstance(shape, Tensor):
        return tuple(operator.index(shape[i]) for i in range(shape.shape[0])) if shape.ndim \
            else (operator.index(shape),)
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return dims(d if getattr(d, "per_call_size", False) else operator.index(d) for d in shape)


def _filled(make, shape, dtype):
    """``make(shape, dtype=dtype)``, a new filled tensor: a constant, or, where the shape holds
    a size of each call, a broadcast of ``make(())``, an op that makes it anew on every call."""
    shape = _shape(shape)
    if all(d.__class__ is int for d in shape):
        return wrap_constant(make(shape, dtype=dtype))
    return broadcast_to(wrap_constant(make((), dtype=dtype)), shape)


def _dtype(dtype, fn):
    """``dtype`` as a NumPy dtype for ``fn``: TensorFlow's forms, its enum values included
    (``tf.zeros(1, 1)`` is float32), and None refused as TensorFlow refuses it."""
    if dtype is None:
        raise TypeError(f"{fn}: dtype None is not a dtype; give one, e.g. fw.float32")
    try:
        return numpy_dtype(dtype)
    except TypeError as e:
        raise TypeError(f"{fn}: {e}") from None


def zeros(shape, dtype=float32, name=None, layout=None):
    return _filled(backend.xp().zeros, shape, _dtype(dtype, "zeros"))


def ones(shape, dtype=float32, name=None, layout=None):
    return _filled(backend.xp().ones, shape, _dtype(dtype, "ones"))


def zeros_like(input, dtype=None, name=None, layout=None):  # noqa: A002 - TensorFlow's name
    x = convert_to_tensor(input)
    return _filled(backend.array_module(x._value).zeros, x.shape,
                   numpy_dtype(dtype) or x._value.dtype)


def ones_like(input, dtype=None, name=None, layout=None):  # noqa: A002
    x = convert_to_tensor(input)
    return _filled(backend.array_module(x._value).ones, x.shape,
                   numpy_dtype(dtype) or x._value.dtype)


def fill(dims, value, name=None, layout=None):
    """A tensor of shape ``dims`` filled with ``value`` (its dtype by TensorFlow's rule);
    differentiable in ``value``, as TensorFlow's."""
    v = convert_to_tensor(value)
    if v.ndim:
        raise ValueError(f"fill: value must be a scalar, got shape {v.shape}")
    return broadcast_to(v, _shape(dims))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=float32, name=None):
    """The identity matrix (a ``batch_shape`` of them, stacked, when given)."""
    xp = backend.xp()
    matrix = xp.eye(int(num_rows), None if num_columns is None else int(num_columns),
                    dtype=numpy_dtype(dtype))
    if batch_shape is not None:
        matrix = xp.broadcast_to(matrix, _shape(batch_shape) + matrix.shape).copy()
    return wrap_constant(matrix)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TensorFlow's name
    """Like Python's range: ``fw.range(5)`` or ``fw.range(1.0, 2.0, 0.25)``."""
    if limit is None:
        start, limit = 0, start
    ends = (start, limit, delta)
    if dtype is None:
        floats = any(isinstance(v, float) or isinstance(v, Tensor) and v.dtype.kind == "f"
                     for v in ends)
        dtype = float32 if floats else next(
            (v.dtype for v in ends if isinstance(v, Tensor)), int32)
    dtype = numpy_dtype(dtype)
    if not any(isinstance(v, Tensor) or getattr(v, "per_call_size", False) for v in ends):
        return wrap_constant(backend.xp().arange(start, limit, delta, dtype=dtype))
    return _range(*[v if isinstance(v, Tensor) else convert_to_tensor(v, dtype) for v in ends],
                  dtype=dtype)


def _range_array(start, limit, delta, *, dtype):
    return backend.array_module(start).arange(start, limit, delta, dtype=dtype)


_range = define("range", _range_array, dynamic_shape=True)
