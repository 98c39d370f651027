"""TensorFlow's remaining indexing functions: ``strided_slice`` (with its bit masks),
``reverse_sequence``, ``unravel_index``, ``tensor_scatter_nd_sub/max/min``, ``unique_with_counts``.

Each builds a key for ``getitem`` (or a composition of ``scatter_nd`` and ``where``), so the
gradients are those of the shape primitives, at any order.
"""
import collections

import numpy as np

from ..engine import backend
from ..engine.dtypes import int32
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor
from .array import scatter_nd, scattered_to, tensor_scatter_nd_add
from .math import maximum, minimum
from .segment import bincount, unique
from .shape import getitem, where

UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def _bits(mask, i):
    return bool(int(mask) >> i & 1)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """``input_[begin:end:strides]`` spelled as TensorFlow's masks spell it: bit ``i`` of
    ``begin_mask``/``end_mask`` ignores ``begin[i]``/``end[i]``, of ``ellipsis_mask`` makes
    entry ``i`` an ``...``, of ``new_axis_mask`` a new axis, of ``shrink_axis_mask`` an index."""
    x = convert_to_tensor(input_)
    begin = [int(b) for b in np.asarray(begin).reshape(-1)]
    end = [int(e) for e in np.asarray(end).reshape(-1)]
    strides = [1] * len(begin) if strides is None else [int(s) for s in
                                                         np.asarray(strides).reshape(-1)]
    if not len(begin) == len(end) == len(strides):
        raise ValueError(f"strided_slice: begin {begin}, end {end} and strides {strides} must "
                         f"have the same length")
    key = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        if _bits(ellipsis_mask, i):
            key.append(Ellipsis)
        elif _bits(new_axis_mask, i):
            key.append(None)
        elif _bits(shrink_axis_mask, i):
            key.append(b)
        else:
            key.append(slice(None if _bits(begin_mask, i) else b,
                             None if _bits(end_mask, i) else e, s))
    return getitem(x, tuple(key))


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=0, name=None):  # noqa: A002
    """For each batch entry ``b``, its first ``seq_lengths[b]`` entries along ``seq_axis``
    reversed and the rest left in place."""
    x = convert_to_tensor(input)
    if seq_axis is None:
        raise ValueError("reverse_sequence: seq_axis is required")
    seq_axis, batch_axis = int(seq_axis) % x.ndim, int(batch_axis) % x.ndim
    n = x.shape[seq_axis]
    shape = [1] * x.ndim
    shape[batch_axis], shape[seq_axis] = x.shape[batch_axis], n
    source = _reversed_positions(convert_to_tensor(seq_lengths), n=n,
                                 batch=x.shape[batch_axis], shape=tuple(shape),
                                 transposed=batch_axis > seq_axis)
    xp = backend.array_module(x._value)
    key = [xp.arange(d).reshape((-1,) + (1,) * (x.ndim - 1 - a)) for a, d in enumerate(x.shape)]
    key[seq_axis] = source
    return getitem(x, tuple(key))


def _reversed_positions_array(lengths, *, n, batch, shape, transposed):
    """For each batch entry, the source position of each of the ``n`` positions: its first
    ``lengths[b]`` reversed, the rest in place, shaped to index the sequence axis."""
    host = backend.to_host(lengths).astype(np.int64)
    if host.shape != (batch,) or (host > n).any() or (host < 0).any():
        raise ValueError(f"seq_lengths {host.tolist()} must give one length in [0, {n}] for "
                         f"each of the {batch} batch entries")
    positions = np.arange(n)[None, :]
    source = np.where(positions < host[:, None], host[:, None] - 1 - positions, positions)
    return backend.to_backend((source.T if transposed else source).reshape(shape))


_reversed_positions = define("reverse_sequence", _reversed_positions_array)


def unravel_index(indices, dims, name=None):
    """The coordinates of flat ``indices`` in an array of shape ``dims``: one row per axis."""
    dims = tuple(int(d) for d in np.asarray(dims).reshape(-1))
    return _unravel(convert_to_tensor(indices), dims=dims)


def _unravel_array(indices, *, dims):
    flat = backend.to_host(indices)
    if flat.size and (flat.min() < 0 or flat.max() >= int(np.prod(dims))):
        raise ValueError(f"indices must lie in [0, {int(np.prod(dims))}) for dims {dims}")
    return backend.to_backend(np.stack(np.unravel_index(flat, dims)).astype(flat.dtype))


_unravel = define("unravel_index", _unravel_array)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` subtracted at the index tuples of ``indices``."""
    tensor = convert_to_tensor(tensor)
    return tensor_scatter_nd_add(tensor, indices, -convert_to_tensor(updates, tensor.dtype))


def _scatter_extreme(pick, name):
    def scatter(tensor, indices, updates, name=None):
        tensor = convert_to_tensor(tensor)
        updates = convert_to_tensor(updates, tensor.dtype)
        return where(scattered_to(indices, updates, tensor.shape),
                     pick(tensor, scatter_nd(indices, updates, tensor.shape)), tensor)
    scatter.__name__ = scatter.__qualname__ = name
    scatter.__doc__ = (f"``tensor`` with the {name.rsplit('_', 1)[1]} of its entry and the update "
                       f"at the index tuples of ``indices`` (one update per index).")
    return scatter


tensor_scatter_nd_max = _scatter_extreme(maximum, "tensor_scatter_nd_max")
tensor_scatter_nd_min = _scatter_extreme(minimum, "tensor_scatter_nd_min")


def unique_with_counts(x, out_idx=int32, name=None):
    """``unique``'s ``(y, idx)`` and how often each value of ``y`` occurs."""
    y, idx = unique(x, out_idx)
    return UniqueWithCounts(y, idx, bincount(idx, dtype=out_idx))
