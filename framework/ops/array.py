"""TensorFlow's array functions beyond the basic shape ops: sizes as tensors, ranges, splitting,
tiling, padding, reversing, masking, N-d gathering and scattering, grids.

Almost all are compositions of ``shape.py``'s primitives (``getitem`` with basic or advanced
keys, ``reshape``, ``broadcast_to``, ``concat``), so their gradients, to any order and under a
Jacobian's leading axes, are those primitives'. Only constant padding has a primitive of its
own (its VJP is the slice that drops the padding).
"""
import operator
from builtins import slice as _slice  # ``slice`` below is TensorFlow's

import numpy as np

from ..engine import backend
from ..engine.dtypes import numpy_dtype, float64, int32
from ..engine.primitive import define, primitive
from ..engine.tensor import Tensor, convert_to_tensor, wrap_constant
from .elementwise import floormod
from .math import cast, greater, identity, less, maximum, minimum
from .reduce import reduce_max
from .shape import (_axes, _scatter, broadcast_to, concat, expand_dims, getitem, reshape, stack,
                    where)

newaxis = None


def is_tensor(x):
    """Whether ``x`` is a framework tensor (a variable included)."""
    return isinstance(x, Tensor)


def _host_int_tensor(values, dtype):
    return wrap_constant(backend.to_backend(np.asarray(values, dtype=numpy_dtype(dtype))))


def shape(input, out_type=int32, name=None):  # noqa: A002 - TensorFlow's argument name
    """The shape of ``input`` as a 1-D integer tensor (int32 by default): an op, so that
    under ``fw.function`` it is a value of each call, as TensorFlow's dynamic shape."""
    return _shape(convert_to_tensor(input), dtype=numpy_dtype(out_type))


def size(input, out_type=int32, name=None):  # noqa: A002
    """The number of elements of ``input`` as a scalar integer tensor (an op, as ``shape``)."""
    return _size(convert_to_tensor(input), dtype=numpy_dtype(out_type))


def _shape_array(x, *, dtype):
    return backend.array_module(x).asarray(x.shape, dtype=dtype)


def _size_array(x, *, dtype):
    return backend.array_module(x).asarray(x.size, dtype=dtype)


_shape = define("shape", _shape_array)
_size = define("size", _size_array)


def rank(input, name=None):  # noqa: A002
    """The number of axes of ``input`` as a scalar int32 tensor."""
    return _host_int_tensor(convert_to_tensor(input).ndim, int32)


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (both included), built as
    TensorFlow builds them: ``start + i * delta`` between the two ends; integer ends give
    float64. Differentiable in ``start`` and ``stop``."""
    start, stop = convert_to_tensor(start), convert_to_tensor(stop)
    if start.dtype.kind in "iu":
        start = cast(start, float64)
    if stop.dtype.kind in "iu":
        stop = cast(stop, float64)
    num = int(num)
    if num < 1:
        raise ValueError(f"linspace: num must be at least 1, got {num}")
    start = expand_dims(start, axis)
    stop = expand_dims(stop, axis)
    if num == 1:
        return start
    axis = axis % start.ndim
    delta = (stop - start) / (num - 1)
    steps_shape = [1] * start.ndim
    steps_shape[axis] = num - 2
    steps = wrap_constant(backend.array_module(start._value).arange(1, num - 1, dtype=start.dtype)
                 .reshape(steps_shape))
    return concat([start, start + steps * delta, stop], axis=axis)


lin_space = linspace


def _take(x, index, axis):
    """``x``'s entries at ``index`` (integers: an array, or a tensor) along ``axis``, with a
    dense gradient (``gather`` gives a variable's gradient as IndexedSlices; these compositions
    should not)."""
    if not isinstance(index, Tensor):
        index = backend.array_module(x._value).asarray(index)
    return getitem(x, (_slice(None),) * axis + (index,))


def _split_sizes(value, num_or_size_splits, axis, num):
    length = value.shape[axis]
    if isinstance(num_or_size_splits, (int, np.integer)):
        parts = int(num_or_size_splits)
        if parts <= 0 or length % parts:
            raise ValueError(f"split: a dimension of size {length} (axis {axis}) cannot be "
                             f"split into {parts} equal parts")
        return [length // parts] * parts
    sizes = [int(s) for s in (num_or_size_splits.numpy() if isinstance(
        num_or_size_splits, Tensor) else num_or_size_splits)]
    if sizes.count(-1) > 1:
        raise ValueError("split: at most one size may be -1")
    if -1 in sizes:
        sizes[sizes.index(-1)] = length - (sum(sizes) + 1)
    if sum(sizes) != length or min(sizes, default=0) < 0:
        raise ValueError(f"split: sizes {sizes} do not add up to the dimension's size {length} "
                         f"(axis {axis})")
    return sizes


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """``value`` cut along ``axis`` into equal parts (an int) or parts of given sizes."""
    value = convert_to_tensor(value)
    axis = _axes(axis, value.ndim)[0]
    parts, start = [], 0
    for length in _split_sizes(value, num_or_size_splits, axis, num):
        parts.append(getitem(value, (_slice(None),) * axis + (_slice(start, start + length),)))
        start += length
    return parts


def unstack(value, num=None, axis=0, name="unstack"):
    """The slices of ``value`` along ``axis``, as a list."""
    value = convert_to_tensor(value)
    axis = _axes(axis, value.ndim)[0]
    if num is not None and num != value.shape[axis]:
        raise ValueError(f"unstack: num = {num} but axis {axis} has size {value.shape[axis]}")
    return [getitem(value, (_slice(None),) * axis + (i,)) for i in range(value.shape[axis])]


def tile(input, multiples, name=None):  # noqa: A002
    """``input`` repeated ``multiples[i]`` times along each axis ``i``."""
    x = convert_to_tensor(input)
    # (a multiple given as a tensor, ``[fw.shape(x)[0], 1]``, is read with ``operator.index``:
    # under fw.function a value the replay checks, as a shape given as a tensor)
    multiples = [operator.index(m) for m in _int_list(multiples)]
    if len(multiples) != x.ndim:
        raise ValueError(f"tile: multiples {multiples} must have one entry per axis of a "
                         f"tensor of shape {x.shape}")
    spread = reshape(x, tuple(d for n in x.shape for d in (1, n)))
    tiled = broadcast_to(spread, tuple(d for m, n in zip(multiples, x.shape) for d in (m, n)))
    return reshape(tiled, tuple(m * n for m, n in zip(multiples, x.shape)))


def reverse(tensor, axis, name=None):
    """``tensor`` with the order of its entries along each of ``axis`` reversed."""
    tensor = convert_to_tensor(tensor)
    axes = set(_axes(axis, tensor.ndim))
    return getitem(tensor, tuple(_slice(None, None, -1) if a in axes else _slice(None)
                                 for a in range(tensor.ndim)))


def roll(input, shift, axis, name=None):  # noqa: A002
    """Entries shifted cyclically by ``shift`` along ``axis`` (ints or matching lists)."""
    x = convert_to_tensor(input)
    shifts = _int_list(shift)
    axes = [int(a) for a in _int_list(axis)]
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift} and axis {axis} must have the same length")
    for s, a in zip(shifts, axes):
        a = _axes(a, x.ndim)[0]
        n = x.shape[a]
        if not n:
            continue
        if isinstance(s, Tensor):  # a tensor stays a tensor: traced, it is read on every call
            positions = wrap_constant(backend.array_module(x._value).arange(n, dtype=s.dtype))
            x = _take(x, floormod(positions - s, s.dtype.type(n)), a)
        else:
            x = _take(x, (np.arange(n) - int(s)) % n, a)
    return x


def _int_list(value):
    """A scalar or a list of ints or int tensors as a list (a 1-D tensor: its entries)."""
    if isinstance(value, Tensor):
        return [value] if value.ndim == 0 else [value[i] for i in range(value.shape[0])]
    if isinstance(value, (list, tuple)):  # (which may hold tensors: no np.ndim on them)
        return list(value)
    return [value] if np.ndim(value) == 0 else list(value)



def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Each entry along ``axis`` repeated ``repeats`` times (the flattened input when None)."""
    x = convert_to_tensor(input)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = _axes(axis, x.ndim)[0]
    if isinstance(repeats, Tensor):
        return _take(x, _repeated_positions(repeats, n=x.shape[axis]), axis)
    return _take(x, np.repeat(np.arange(x.shape[axis]), np.asarray(repeats)), axis)


def _repeated_positions_array(repeats, *, n):
    xp = backend.array_module(repeats)
    return xp.repeat(xp.arange(n), repeats)


_repeated_positions = define("repeat_positions", _repeated_positions_array,
                             dynamic_shape=True)


def slice(input_, begin, size, name=None):  # noqa: A001 - TensorFlow's name
    """The block of ``input_`` starting at ``begin`` with ``size`` (-1: to the end)."""
    x = convert_to_tensor(input_)
    # (a tensor's entries are read with operator.index: traced, they are checked on every call)
    begin = [operator.index(b) for b in _int_list(begin)]
    size = [operator.index(s) for s in _int_list(size)]
    if not len(begin) == len(size) == x.ndim:
        raise ValueError(f"slice: begin {begin} and size {size} need one entry per axis of "
                         f"shape {x.shape}")
    return getitem(x, tuple(_slice(b, None if s == -1 else b + s)
                            for b, s in zip(begin, size)))


def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """The entries of ``tensor`` where ``mask`` (covering axes ``axis``... of it) is true."""
    tensor, mask = convert_to_tensor(tensor), convert_to_tensor(mask)
    axis = 0 if axis is None else _axes(axis, tensor.ndim)[0]
    if mask.dtype.kind != "b":
        raise TypeError(f"boolean_mask: mask must be bool, got {mask.dtype.name}")
    if tensor.shape[axis:axis + mask.ndim] != mask.shape:
        raise ValueError(f"boolean_mask: a mask of shape {mask.shape} does not fit axes "
                         f"{axis}..{axis + mask.ndim - 1} of a tensor of shape {tensor.shape}")
    return getitem(tensor, (_slice(None),) * axis + (mask,))


def _index_columns(indices, name):
    """The columns of the index tuples on the last axis of ``indices``: a key of tensors."""
    indices = convert_to_tensor(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{name}: indices must be integers, got {indices.dtype.name}")
    return tuple(getitem(indices, (Ellipsis, i)) for i in range(indices.shape[-1]))


def gather_nd(params, indices, batch_dims=0, name=None):
    """Slices of ``params`` at the index tuples on the last axis of ``indices``."""
    if batch_dims:
        raise ValueError("gather_nd: batch_dims other than 0 is not supported")
    params = convert_to_tensor(params)
    return getitem(params, _index_columns(indices, "gather_nd"))


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of ``shape`` with ``updates`` added at the index tuples of ``indices``."""
    key = tuple(column._value for column in _index_columns(indices, "scatter_nd"))
    return _scatter(convert_to_tensor(updates), key=key, advanced=True,
                    shape=tuple(int(d) for d in shape))


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors; ``indexing="xy"`` (default) swaps the first two."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid: unexpected arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [reshape(convert_to_tensor(a), (-1,)) for a in args]
    sizes = [v.shape[0] for v in vectors]
    if indexing == "xy" and len(vectors) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for i, v in enumerate(vectors):
        position = (1 - i if i < 2 else i) if indexing == "xy" and len(vectors) > 1 else i
        kept = [1] * len(vectors)
        kept[position] = v.shape[0]
        grids.append(broadcast_to(reshape(v, kept), sizes))
    return grids


def sequence_mask(lengths, maxlen=None, dtype="bool", name=None):
    """``mask[..., j] = j < lengths[...]``."""
    lengths = convert_to_tensor(lengths)
    # (traced: a maximum length read from the values is checked on every call)
    maxlen = operator.index(reduce_max(lengths)) if maxlen is None else int(maxlen)
    positions = backend.array_module(lengths._value).arange(maxlen, dtype=lengths.dtype)
    return cast(less(positions, expand_dims(lengths, -1)), numpy_dtype(dtype))


# --- padding -------------------------------------------------------------------------------------
def _pad_vjp(g, out, x, widths, value):
    """The cotangent's cells inside the input; an unpadded axis is taken whole, so no size
    of it (a batch's) is fixed in a traced plan."""
    lead = g.ndim - out.ndim
    return getitem(g, (_slice(None),) * lead + tuple(
        _slice(before, before + n) if before or after else _slice(None)
        for (before, after), n in zip(widths, x.shape)))


@primitive(_pad_vjp)
def _pad(x, widths, value):
    return backend.array_module(x).pad(x, widths, constant_values=value)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """``tensor`` padded by ``paddings[i] = [before, after]`` entries on each axis: constant
    values, or a reflection of the edge (``REFLECT`` without it, ``SYMMETRIC`` with it)."""
    x = convert_to_tensor(tensor)
    widths = tuple((int(b), int(a)) for b, a in np.asarray(
        paddings.numpy() if isinstance(paddings, Tensor) else paddings).reshape(-1, 2))
    if len(widths) != x.ndim:
        raise ValueError(f"pad: paddings {widths} need one [before, after] pair per axis of "
                         f"shape {x.shape}")
    mode = mode.upper()
    if mode == "CONSTANT":
        return _pad(x, widths=widths, value=x.dtype.type(constant_values))
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"pad: mode must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}")
    for a, (before, after) in enumerate(widths):  # each axis: a gather of mirrored indices
        if before or after:
            limit = x.shape[a] - (1 if mode == "REFLECT" else 0)
            if before > limit or after > limit:
                raise ValueError(f"pad: paddings {widths[a]} on axis {a} exceed {limit}, the "
                                 f"most {mode} allows for a size of {x.shape[a]}")
            index = np.pad(np.arange(x.shape[a]), (before, after), mode=mode.lower())
            x = _take(x, index, a)
    return x



def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` added at the index tuples of ``indices``."""
    tensor = convert_to_tensor(tensor)
    return tensor + scatter_nd(indices, convert_to_tensor(updates, tensor.dtype), tensor.shape)


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """``tensor`` with the entries at the index tuples of ``indices`` replaced by ``updates``
    (the gradient reaches ``tensor`` only where it was kept)."""
    tensor = convert_to_tensor(tensor)
    updates = convert_to_tensor(updates, tensor.dtype)
    return where(scattered_to(indices, updates, tensor.shape),
                 scatter_nd(indices, updates, tensor.shape), tensor)


def scattered_to(indices, updates, shape):
    """Where ``scatter_nd(indices, updates, shape)`` puts an update: a bool tensor."""
    counts = scatter_nd(indices, backend.array_module(updates._value).ones(updates.shape,
                                                                            np.int32), shape)
    return greater(counts, 0)


# --- small helpers of TensorFlow's top level -------------------------------------------------
def identity_n(input, name=None):  # noqa: A002
    """Each tensor of the list ``input``, passed through (``identity`` of each)."""
    return [identity(t) for t in input]


def shape_n(input, out_type=int32, name=None):  # noqa: A002
    """``shape`` of each tensor of the list ``input``."""
    return [shape(t, out_type) for t in input]


def parallel_stack(values, name="parallel_stack"):
    """``stack(values)`` (TensorFlow's variant that needs every shape known; all are here)."""
    return stack(values)


def ensure_shape(x, shape, name=None):
    """``x`` unchanged, after checking it has ``shape`` (None: any size on that axis)."""
    x = convert_to_tensor(x)
    expected = [None if d is None else int(d) for d in shape]
    if len(expected) != x.ndim or any(e is not None and e != d for e, d in zip(expected, x.shape)):
        raise ValueError(f"ensure_shape: shape of tensor {x.shape} is not compatible with the "
                         f"expected shape {tuple(expected)}")
    return x


def get_static_value(tensor, partial=False):
    """The value of ``tensor`` as a NumPy array (every value is known here)."""
    return convert_to_tensor(tensor).numpy() if isinstance(tensor, Tensor) else np.asarray(tensor)


def broadcast_static_shape(shape_x, shape_y):
    """The shape two shapes broadcast to (a ValueError if they do not)."""
    try:
        return tuple(np.broadcast_shapes(tuple(shape_x), tuple(shape_y)))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: {tuple(shape_x)} and "
                         f"{tuple(shape_y)}") from None


def _broadcast_shapes_array(shape_x, shape_y):
    dims = [tuple(int(d) for d in backend.to_host(s)) for s in (shape_x, shape_y)]
    return backend.to_backend(np.asarray(broadcast_static_shape(*dims), dtype=shape_x.dtype))


_broadcast_shapes = define("broadcast_dynamic_shape", _broadcast_shapes_array,
                           dynamic_shape=True)


def broadcast_dynamic_shape(shape_x, shape_y):
    """``broadcast_static_shape`` on two shapes given as integer tensors (or lists)."""
    shapes = [s if isinstance(s, Tensor) else convert_to_tensor(s, int32)
              for s in (shape_x, shape_y)]
    return _broadcast_shapes(*shapes)


def saturate_cast(value, dtype, name=None):
    """``value`` cast to ``dtype``, clipped first to the range ``dtype`` can hold."""
    x = convert_to_tensor(value)
    dtype = numpy_dtype(dtype)
    if dtype.kind in "iu" and x.dtype.kind in "fiu":
        info = np.iinfo(dtype)
        low, high = max(info.min, _lowest(x.dtype)), min(info.max, _highest(x.dtype))
        x = minimum(maximum(x, x.dtype.type(low)), x.dtype.type(high))
    elif dtype.kind == "f" and x.dtype.kind == "f" and dtype.itemsize < x.dtype.itemsize:
        limit = np.finfo(dtype).max
        x = minimum(maximum(x, -limit), limit)
    return cast(x, dtype)


def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.finfo(dtype).max if dtype.kind == "f" else np.iinfo(dtype).max
