"""Ops that move values around without arithmetic: shapes, slicing, joining, selecting.

VJPs here see cotangents that may carry extra leading axes (``jacobian`` rows); they count them
as ``lead = g.ndim - out.ndim`` and leave them in front.
"""
import numpy as np

from ..engine import backend
from ..engine.indexed_slices import IndexedSlices, from_arrays
from ..engine.primitive import define, primitive
from ..engine.tensor import Tensor, convert_to_tensor, dims


def _lead(g, out):
    return g._value.ndim - out._value.ndim


def _axes(axis, ndim):
    """``axis`` (None, an int or a sequence, negatives allowed) as a sorted tuple of positives."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of range for a tensor of rank {ndim}")
        out.append(a % ndim)
    return tuple(sorted(out))


# --- reshaping -----------------------------------------------------------------------------------
@primitive(lambda g, out, x, shape: reshape(g, g.shape[:_lead(g, out)] + x.shape))
def _reshape(x, shape):
    return x.reshape(shape)


def reshape(tensor, shape, name=None):
    """``tensor`` with a new shape of the same size (one entry may be -1)."""
    return _reshape(tensor, shape=dims(shape))


def _transpose_vjp(g, out, x, perm):
    lead = _lead(g, out)
    inverse = np.argsort(perm)
    return _transpose(g, perm=tuple(range(lead)) + tuple(lead + int(p) for p in inverse))


@primitive(_transpose_vjp)
def _transpose(x, perm):
    return x.transpose(perm)


def transpose(a, perm=None, conjugate=False, name=None):
    """Permute the axes (reversed when ``perm`` is None)."""
    a = convert_to_tensor(a)
    perm = tuple(reversed(range(a.ndim))) if perm is None else tuple(int(p) for p in perm)
    if sorted(perm) != list(range(a.ndim)):
        raise ValueError(f"transpose: perm {perm} is not a permutation of the {a.ndim} axes")
    return _transpose(a, perm=perm)


def expand_dims(input, axis, name=None):  # noqa: A002 - TensorFlow's argument name
    """Insert an axis of size 1 at ``axis`` (negative counts from the end)."""
    input = convert_to_tensor(input)
    ndim = input.ndim
    if not -ndim - 1 <= axis <= ndim:
        raise ValueError(f"expand_dims: axis {axis} is out of range for rank {ndim}")
    axis = axis % (ndim + 1)
    return reshape(input, input.shape[:axis] + (1,) + input.shape[axis:])


def squeeze(input, axis=None, name=None):  # noqa: A002
    """Remove axes of size 1 (all of them, or those in ``axis``)."""
    input = convert_to_tensor(input)
    shape = input.shape
    axes = [i for i, d in enumerate(shape) if d == 1] if axis is None else _axes(axis, len(shape))
    for a in axes:
        if shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {shape[a]}, not 1 (shape {shape})")
    return reshape(input, tuple(d for i, d in enumerate(shape) if i not in axes))


@primitive(lambda g, out, x, shape: g)  # the tape sums g back to x's shape
def _broadcast_to(x, shape):
    return backend.array_module(x).broadcast_to(x, shape)


def broadcast_to(input, shape, name=None):  # noqa: A002
    return _broadcast_to(input, shape=dims(shape))


# --- joining -------------------------------------------------------------------------------------
def _concat_vjp(k, g, out, *values, axis):
    lead = _lead(g, out)
    start = sum(v._value.shape[axis] for v in values[:k])
    key = (slice(None),) * (lead + axis) + (slice(start, start + values[k]._value.shape[axis]),)
    return g[key]


@primitive(each_arg=_concat_vjp)
def _concat(*values, axis):
    return backend.array_module(values[0]).concatenate(values, axis=axis)


def _same_dtype(name, tensors):
    """TensorFlow refuses mixed dtypes where NumPy would silently promote them."""
    dtypes = [t.dtype for t in tensors]
    if any(d != dtypes[0] for d in dtypes):
        raise TypeError(f"{name}: all tensors must have the same dtype, got "
                        f"{', '.join(d.name for d in dtypes)}; use fw.cast to convert")


def concat(values, axis, name="concat"):
    """Join tensors along an existing axis."""
    values = [convert_to_tensor(v) for v in values]
    if not values:
        raise ValueError("concat needs at least one tensor")
    _same_dtype("concat", values)
    return _concat(*values, axis=_axes(axis, values[0].ndim)[0])


def stack(values, axis=0, name="stack"):
    """Join tensors along a new axis."""
    values = [convert_to_tensor(v) for v in values]
    _same_dtype("stack", values)
    return concat([expand_dims(v, axis) for v in values], axis)


# --- indexing ------------------------------------------------------------------------------------
def _normalize_key(key):
    """A tuple index whose tensors are arrays (slice bounds too), and whether it uses advanced
    indexing."""
    key = key if isinstance(key, tuple) else (key,)
    key = tuple(k._value if isinstance(k, Tensor) else _slice_of_arrays(k)
                if k.__class__ is slice else k for k in key)
    advanced = any(isinstance(k, (list, np.ndarray)) or backend.is_device_array(k) for k in key)
    if advanced:
        key = tuple(np.asarray(k) if isinstance(k, list) else k for k in key)
    return key, advanced


def _getitem_vjp(g, out, x, key, advanced):
    lead = _lead(g, out)
    return _scatter(g, key=(slice(None),) * lead + key, advanced=advanced,
                    shape=g.shape[:lead] + x.shape)


def _slice_of_arrays(k):
    """A slice whose tensor bounds (``x[:, :fw.shape(y)[1]]``) are their arrays: an op's
    inputs, read on every call, as TensorFlow's strided slice takes them."""
    if isinstance(k.start, Tensor) or isinstance(k.stop, Tensor) or isinstance(k.step, Tensor):
        return slice(*[b._value if isinstance(b, Tensor) else b
                       for b in (k.start, k.stop, k.step)])
    return k


def _values_decide(params):
    """Whether a key's values decide the result's shape: a boolean mask, or a slice bound
    given as a tensor."""
    key = params["key"]
    if params["advanced"] and any(getattr(k, "dtype", None) == np.bool_ for k in key):
        return True
    return any(k.__class__ is slice and any(hasattr(b, "dtype") for b in (k.start, k.stop, k.step))
               for k in key)


@primitive(_getitem_vjp, dynamic_shape=_values_decide)
def _getitem(x, key, advanced):
    return x[key]


def getitem(tensor, key):
    """``tensor[key]``: ints, slices, None, Ellipsis, integer or boolean arrays."""
    key, advanced = _normalize_key(key)
    return _getitem(tensor, key=key, advanced=advanced)


def _scatter_vjp(g, out, values, key, advanced, shape):
    lead = _lead(g, out)
    return _getitem(g, key=(slice(None),) * lead + key, advanced=advanced)


@primitive(_scatter_vjp)
def _scatter(values, key, advanced, shape):
    """Zeros of ``shape`` with ``values`` added at ``key`` (repeated indices add up)."""
    xp = backend.array_module(values)
    out = xp.zeros(shape, dtype=values.dtype)
    if advanced:
        backend.scatter_add(out, key, values)
    else:
        out[key] = values
    return out


def _gather_vjp(g, out, params, indices):
    """Sparse, as TensorFlow's: the rows' cotangent and their indices (dense for jacobian rows)."""
    lead = _lead(g, out)
    if lead:
        return _scatter(g, key=(slice(None),) * lead + (indices._value,), advanced=True,
                        shape=g.shape[:lead] + params.shape)
    return IndexedSlices(reshape(g, (-1,) + params.shape[1:]), reshape(indices, (-1,)),
                         params.shape)


def _gather_array_vjp(g, out, needs, params, indices):
    rows = g.reshape((-1,) + params.shape[1:])
    return (from_arrays(rows, indices.reshape(-1), params.shape) if needs[0] else None), None


@primitive(_gather_vjp, None, array_vjp=_gather_array_vjp)
def _gather(params, indices):
    """``params``' rows at ``indices``, each checked to lie in [0, rows) as TensorFlow's CPU
    kernel checks it (NumPy would read a negative index from the end), on every call."""
    if indices.size:
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high >= params.shape[0]:
            bad = low if low < 0 else high
            raise IndexError(f"indices[{_first_position(indices, bad)}] = {bad} is not in "
                             f"[0, {params.shape[0]})")
    return params[indices]


def _first_position(indices, value):
    return ",".join(str(int(i)) for i in
                    backend.to_host(backend.array_module(indices).argwhere(indices == value)[0]))


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Take slices of ``params`` along ``axis`` at ``indices`` (TensorFlow's shape rule)."""
    if batch_dims:
        raise ValueError("gather: batch_dims other than 0 is not supported")
    axis = 0 if axis is None else axis
    params = convert_to_tensor(params)
    indices = convert_to_tensor(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"gather: indices must be integers, got {indices.dtype.name}")
    axis = _axes(axis, params.ndim)[0]
    if axis == 0:
        return _gather(params, indices)
    return getitem(params, (slice(None),) * axis + (indices,))


# --- selecting -----------------------------------------------------------------------------------
def _zeros(g):
    return Tensor(backend.array_module(g._value).zeros((), dtype=g.dtype))


@primitive(None,
           lambda g, out, c, x, y: _where(c, g, _zeros(g)),
           lambda g, out, c, x, y: _where(c, _zeros(g), g))
def _where(condition, x, y):
    return backend.array_module(x).where(condition, x, y)


def _argwhere_array(condition):
    return backend.array_module(condition).argwhere(condition).astype(np.int64)


_argwhere = define("where", _argwhere_array, dynamic_shape=True)


def where(condition, x=None, y=None, name=None):
    """Elements of ``x`` where ``condition`` holds, else of ``y``; with neither, the true indices."""
    condition = convert_to_tensor(condition)
    if x is None and y is None:
        return _argwhere(condition)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x, y.dtype if isinstance(y, Tensor) else None)
    y = y if isinstance(y, Tensor) else convert_to_tensor(y, x.dtype)
    if condition.dtype != np.bool_:
        raise TypeError(f"where: condition must be bool, got {condition.dtype.name}")
    _same_dtype("where", (x, y))
    return _where(condition, x, y)


@primitive()
def _one_hot(indices, depth, on_value, off_value, axis, dtype):
    xp = backend.array_module(indices)
    hot = xp.expand_dims(indices, -1) == xp.arange(depth)
    out = xp.where(hot, xp.asarray(on_value, dtype), xp.asarray(off_value, dtype))
    return xp.moveaxis(out, -1, axis) if axis != -1 else out


def one_hot(indices, depth, on_value=None, off_value=None, axis=-1, dtype=None, name=None):
    """Rows of the identity at ``indices``; an index out of range gives a row of zeros."""
    from ..engine.dtypes import numpy_dtype, float32
    dtype = numpy_dtype(dtype) or float32
    return _one_hot(convert_to_tensor(indices), depth=int(depth),
                    on_value=1 if on_value is None else on_value,
                    off_value=0 if off_value is None else off_value, axis=axis, dtype=dtype)


@primitive()
def _argmax(x, axis, output_type):
    return x.argmax(axis=axis).astype(output_type)


@primitive()
def _argmin(x, axis, output_type):
    return x.argmin(axis=axis).astype(output_type)


def argmax(input, axis=None, output_type=np.int64, name=None):  # noqa: A002
    """Index of the largest value along ``axis`` (0 when None, as in TensorFlow)."""
    return _argmax(input, axis=0 if axis is None else axis, output_type=np.dtype(output_type))


def argmin(input, axis=None, output_type=np.int64, name=None):  # noqa: A002
    return _argmin(input, axis=0 if axis is None else axis, output_type=np.dtype(output_type))
