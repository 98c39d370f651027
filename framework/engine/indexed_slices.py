"""``IndexedSlices``: a sparse gradient, some rows of a dense tensor (``tf.IndexedSlices``).

The gradient of ``gather`` (axis 0) with respect to its ``params`` is the gathered rows'
cotangent plus their indices, not a table of zeros with a few rows filled in: an embedding
table's gradient then costs memory in proportion to the rows looked up. The tape keeps such a
cotangent sparse while it only meets other sparse ones (two add up by concatenation, duplicate
indices included, as in TensorFlow) and makes it dense wherever a dense contribution joins it or
an op's VJP needs the full shape, which is exactly where TensorFlow densifies.

``convert_to_tensor`` densifies (duplicate rows add up), through a differentiable scatter, so a
second-order gradient taken through a sparse first-order one is right.
"""
import numpy as np

from . import backend
from .tensor import convert_to_tensor, wrap, wrap_constant


class IndexedSlices:
    """Rows ``values[i]`` of a dense tensor of shape ``dense_shape`` at rows ``indices[i]``;
    rows not listed are zero, repeated indices add up."""

    __slots__ = ("_values", "_indices", "_dense_shape")

    def __init__(self, values, indices, dense_shape=None):
        values, indices = convert_to_tensor(values), convert_to_tensor(indices)
        if indices.dtype.kind not in "iu" or indices.ndim != 1:
            raise TypeError(f"IndexedSlices: indices must be a rank-1 integer tensor, got "
                            f"{indices.dtype.name} of shape {indices.shape}")
        if values.ndim < 1 or values.shape[0] != indices.shape[0]:
            raise ValueError(f"IndexedSlices: values of shape {values.shape} need one row per "
                             f"index, and there are {indices.shape[0]} indices")
        if dense_shape is None:
            dense_shape = (int(indices._value.max()) + 1 if indices.shape[0] else 0,) \
                + values.shape[1:]
        dense_shape = tuple(int(d) for d in np.asarray(dense_shape).reshape(-1))
        if dense_shape[1:] != values.shape[1:]:
            raise ValueError(f"IndexedSlices: values of shape {values.shape} do not fit "
                             f"dense_shape {dense_shape}")
        self._values, self._indices, self._dense_shape = values, indices, dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        """The dense tensor's shape, as an int32 tensor (as TensorFlow's gather gradient)."""
        return wrap_constant(np.asarray(self._dense_shape, np.int32))

    @property
    def shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def device(self):
        return self._values.device

    def __fw_tensor__(self, dtype=None):
        """What ``convert_to_tensor`` makes of it: the dense tensor."""
        return convert_to_tensor(to_dense(self), dtype)

    def __neg__(self):
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __repr__(self):
        return (f"IndexedSlices(indices={self._indices!r}, values={self._values!r}, "
                f"dense_shape={self._dense_shape})")


def to_dense(slices):
    """The dense tensor of ``slices`` (a recorded, differentiable scatter-add)."""
    from ..ops.shape import _scatter  # (the ops are built on the engine)
    return _scatter(slices._values, key=(slices._indices._value,), advanced=True,
                    shape=slices._dense_shape)


def from_arrays(values, indices, dense_shape):
    """Slices of raw arrays, already consistent (a raw backward pass's gradient)."""
    s = object.__new__(IndexedSlices)
    s._values, s._indices, s._dense_shape = wrap(values), wrap(indices), tuple(dense_shape)
    return s


def dense_array(slices):
    """The dense array of ``slices``, outside any tape."""
    values = slices._values._value
    out = backend.array_module(values).zeros(slices._dense_shape, dtype=values.dtype)
    backend.scatter_add(out, (slices._indices._value,), values)
    return out


def dense_cotangent(g, raw):
    """A cotangent as an op's VJP needs it: dense (an array when ``raw``, else a tensor)."""
    if g.__class__ is IndexedSlices:
        return dense_array(g) if raw else to_dense(g)
    return g


def add_cotangents(a, b, raw):
    """``a + b`` for two cotangents of one tensor, either of which may be ``IndexedSlices``:
    two sparse ones stay sparse (rows concatenated), else the sum is dense."""
    if a.__class__ is IndexedSlices and b.__class__ is IndexedSlices:
        if raw:
            xp = backend.array_module(a._values._value)
            return from_arrays(xp.concatenate([a._values._value, b._values._value]),
                            xp.concatenate([a._indices._value, b._indices._value]),
                            a._dense_shape)
        ops = _ops()
        indices = a._indices if a._indices.dtype == b._indices.dtype else ops.cast(
            a._indices, np.int64)
        other = b._indices if b._indices.dtype == indices.dtype else ops.cast(
            b._indices, indices.dtype)
        return IndexedSlices(ops.concat([a._values, b._values], 0),
                             ops.concat([indices, other], 0), a._dense_shape)
    if b.__class__ is IndexedSlices:
        a, b = b, a
    if a.__class__ is IndexedSlices:  # (b is dense)
        if raw:
            out = b.copy()  # (never write into a cotangent: array VJPs may share it)
            backend.scatter_add(out, (a._indices._value,), a._values._value)
            return out
        a = to_dense(a)
    if raw:
        return a + b
    return _ops().add(a, b)


def _ops():
    """``framework.ops``: the ops are built on the engine, so it reaches them at call time."""
    from .. import ops
    return ops

