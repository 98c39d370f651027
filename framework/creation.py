"""Creation functions: new tensors on the current backend, TensorFlow's names and defaults."""
import numpy as np

from . import backend
from .dtypes import numpy_dtype, float32, int32
from .tensor import Tensor, convert_to_tensor, wrap


def _shape(shape):
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


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
    return wrap(backend.xp().zeros(_shape(shape), dtype=_dtype(dtype, "zeros")))


def ones(shape, dtype=float32, name=None, layout=None):
    return wrap(backend.xp().ones(_shape(shape), dtype=_dtype(dtype, "ones")))


def zeros_like(input, dtype=None, name=None, layout=None):  # noqa: A002 - TensorFlow's name
    x = convert_to_tensor(input)
    return wrap(backend.array_module(x._value).zeros(x.shape, dtype=numpy_dtype(dtype) or x.dtype))


def ones_like(input, dtype=None, name=None, layout=None):  # noqa: A002
    x = convert_to_tensor(input)
    return wrap(backend.array_module(x._value).ones(x.shape, dtype=numpy_dtype(dtype) or x.dtype))


def fill(dims, value, name=None, layout=None):
    """A tensor of shape ``dims`` filled with ``value`` (its dtype by TensorFlow's rule)."""
    v = convert_to_tensor(value)
    return wrap(backend.xp().full(_shape(dims), backend.to_host(v._value), dtype=v.dtype))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=float32, name=None):
    """The identity matrix (a ``batch_shape`` of them, stacked, when given)."""
    xp = backend.xp()
    matrix = xp.eye(int(num_rows), None if num_columns is None else int(num_columns),
                    dtype=numpy_dtype(dtype))
    if batch_shape is not None:
        matrix = xp.broadcast_to(matrix, _shape(batch_shape) + matrix.shape).copy()
    return wrap(matrix)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TensorFlow's name
    """Like Python's range: ``fw.range(5)`` or ``fw.range(1.0, 2.0, 0.25)``."""
    if limit is None:
        start, limit = 0, start
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, limit, delta))
        dtype = float32 if floats else int32
    return wrap(backend.xp().arange(start, limit, delta, dtype=numpy_dtype(dtype)))
