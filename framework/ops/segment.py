"""Grouping and counting: segment sums and means, ``unique``, ``bincount``, ``searchsorted``,
``confusion_matrix``, ``in_top_k`` and small helpers of ``tf.math``.

Segment sums scatter rows into their segments with ``shape.py``'s ``_scatter`` primitive (the
rows of one segment add up), so their gradient is the gather of each row's segment, at any
order. The rest answer questions about integers and have no gradient, as in TensorFlow: each is
a primitive without VJPs, so tapes and ``fw.function`` see it like any op. A size that depends
on the values (the segments of sorted ids, the classes of a confusion matrix) is read with
``operator.index``, which ``fw.function`` checks on every call (a guard).
"""
import collections
import operator

import numpy as np

from ..engine import backend
from ..engine.dtypes import numpy_dtype, int32
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor
from .math import cast, equal, greater_equal, less, maximum, sqrt
from .reduce import reduce_max, reduce_min, reduce_mean
from .shape import _scatter, expand_dims, getitem, reshape, where
from .stats import reduce_all, reduce_any, reduce_prod

Unique = collections.namedtuple("Unique", ["y", "idx"])


def _segment_ids(name, data, segment_ids):
    ids = convert_to_tensor(segment_ids)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{name}: segment_ids must be integers, got {ids.dtype.name}")
    if data.shape[:ids.ndim] != ids.shape:
        raise ValueError(f"{name}: segment_ids of shape {ids.shape} do not match the leading "
                         f"axes of data of shape {data.shape}")
    return ids


def _in_range(ids, *, num_segments):
    """``ids`` as index positions, those outside [0, num_segments) sent to the extra row
    ``num_segments`` (which the sums drop)."""
    xp = backend.array_module(ids)
    keep = (ids >= 0) & (ids < num_segments)
    return xp.where(keep, ids, num_segments).astype(np.intp)


in_range = define("segment_rows", _in_range)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """``out[s] = sum of data[i] over the i with segment_ids[i] == s`` (ids in any order;
    a segment without rows is 0, an id outside [0, num_segments) is dropped, as in TF)."""
    data = convert_to_tensor(data)
    ids = _segment_ids("unsorted_segment_sum", data, segment_ids)
    num_segments = int(num_segments)
    rows = in_range(ids, num_segments=num_segments)
    shape = (num_segments + 1,) + data.shape[ids.ndim:]
    return _scatter(data, key=(rows._value,), advanced=True, shape=shape)[:num_segments]


def _counts_array(ids, *, num_segments, dtype, ndim):
    xp = backend.array_module(ids)
    flat = ids.reshape(-1)
    flat = flat[(flat >= 0) & (flat < num_segments)]
    counts = xp.bincount(flat, minlength=num_segments)[:num_segments].astype(dtype)
    return counts.reshape((num_segments,) + (1,) * (ndim - ids.ndim))


_counts_op = define("segment_counts", _counts_array)


def _counts(ids, num_segments, like):
    """Each segment's row count, shaped to divide ``like``'s segment rows."""
    return _counts_op(ids, num_segments=num_segments, dtype=like.dtype, ndim=like.ndim)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of each segment's rows (0 for an empty segment)."""
    data = convert_to_tensor(data)
    ids = _segment_ids("unsorted_segment_mean", data, segment_ids)
    total = unsorted_segment_sum(data, segment_ids, num_segments)
    return total / maximum(_counts(ids, int(num_segments), data), 1)


def _sorted_segments(name, data, segment_ids):
    data = convert_to_tensor(data)
    ids = _segment_ids(name, data, segment_ids)
    if ids.ndim != 1:
        raise ValueError(f"{name}: segment_ids must be 1-D, got shape {tuple(ids.shape)}")
    if not ids.shape[0]:
        return data, 0
    if bool(reduce_any(less(ids[1:], ids[:-1]))):
        raise ValueError(f"{name}: segment_ids must be sorted")
    return data, operator.index(ids[-1]) + 1  # (traced: checked on every call)


def _first_appearances_array(x):
    """Where each distinct value of ``x`` first appears, in order of appearance."""
    xp = backend.array_module(x)
    _, first = xp.unique(x, return_index=True)
    return xp.sort(first)


def _unique_positions_array(x, *, dtype):
    """For each element of ``x``, the position of its value among the distinct values in order
    of first appearance."""
    xp = backend.array_module(x)
    _, first, inverse = xp.unique(x, return_index=True, return_inverse=True)
    order = xp.argsort(first, kind="stable")  # sorted values -> order of appearance
    rank = xp.empty_like(order)
    rank[order] = xp.arange(order.size)
    return rank[inverse.reshape(-1)].astype(dtype)


_first_appearances = define("unique_first", _first_appearances_array, dynamic_shape=True)
_unique_positions = define("unique_positions", _unique_positions_array)


def unique(x, out_idx=int32, name=None):
    """``(y, idx)``: the distinct values of a 1-D ``x`` in order of first appearance, and for
    each element of ``x`` the position of its value in ``y``."""
    x = convert_to_tensor(x)
    if x.ndim != 1:
        raise ValueError(f"unique: x must be 1-D, got shape {x.shape}")
    return Unique(getitem(x, _first_appearances(x)),
                  _unique_positions(x, dtype=numpy_dtype(out_idx)))


def _bincount_array(arr, *weights, minlength, maxlength, binary_output, dtype):
    raw = backend.to_host(arr).reshape(-1)
    if raw.size and raw.min() < 0:
        raise ValueError(f"arr must be non-negative, found {raw.min()}")
    w = backend.to_host(weights[0]).reshape(-1) if weights else None
    counts = np.bincount(raw, weights=w, minlength=minlength)
    if maxlength is not None:
        counts = counts[:maxlength]
    if binary_output:
        counts = counts > 0
    return backend.to_backend(counts.astype(dtype))


_bincount = define("bincount", _bincount_array, dynamic_shape=True)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype="int32", name=None,
             axis=None, binary_output=False):
    """How often each value 0, 1, ... occurs in the non-negative integers ``arr`` (or the sum of
    their ``weights``)."""
    arrays = (convert_to_tensor(arr),) if weights is None else (
        convert_to_tensor(arr), convert_to_tensor(weights))
    return _bincount(*arrays, minlength=int(minlength or 0),
                     maxlength=None if maxlength is None else int(maxlength),
                     binary_output=bool(binary_output),
                     dtype=numpy_dtype(dtype) if weights is None else arrays[1].dtype)


def _confusion_array(labels, predictions, *weights, num_classes, dtype):
    labels = backend.to_host(labels).reshape(-1).astype(np.int64)
    predictions = backend.to_host(predictions).reshape(-1).astype(np.int64)
    w = backend.to_host(weights[0]).reshape(-1) if weights else np.ones(labels.size)
    matrix = np.zeros((num_classes, num_classes), dtype=np.float64)
    np.add.at(matrix, (labels, predictions), w)
    return backend.to_backend(matrix.astype(dtype))


_confusion = define("confusion_matrix", _confusion_array)


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype="int32",
                     name=None):
    """``m[i, j]``: how many examples of label ``i`` were predicted ``j`` (or their weights)."""
    labels, predictions = convert_to_tensor(labels), convert_to_tensor(predictions)
    if labels.shape[0] != predictions.shape[0] or labels.ndim != predictions.ndim:
        raise ValueError(f"confusion_matrix: labels of shape {labels.shape} but predictions of "
                         f"shape {predictions.shape}")
    n = int(num_classes) if num_classes is not None else (
        operator.index(maximum(reduce_max(labels), reduce_max(predictions))) + 1
        if labels.shape[0] else 0)
    arrays = (labels, predictions) if weights is None else (
        labels, predictions, convert_to_tensor(weights))
    return _confusion(*arrays, num_classes=n, dtype=numpy_dtype(dtype))


def _in_top_k_array(targets, predictions, *, k):
    xp = backend.array_module(predictions)
    targets = xp.asarray(targets).astype(np.intp)
    target_values = xp.take_along_axis(predictions, targets[:, None], axis=1)
    return (predictions > target_values).sum(axis=1) < k


_in_top_k = define("in_top_k", _in_top_k_array)


def in_top_k(targets, predictions, k, name=None):
    """Whether each row's target class is among its ``k`` largest predictions (ties count in,
    as in TensorFlow)."""
    return _in_top_k(convert_to_tensor(targets), convert_to_tensor(predictions), k=int(k))


def _searchsorted_array(seq, vals, *, side, dtype):
    s = backend.to_host(seq).reshape(-1, seq.shape[-1] if seq.ndim else 1)
    v = backend.to_host(vals).reshape(s.shape[0], -1)
    out = np.stack([np.searchsorted(a, b, side=side) for a, b in zip(s, v)])
    return backend.to_backend(out.reshape(vals.shape).astype(dtype))


_searchsorted = define("searchsorted", _searchsorted_array)


def searchsorted(sorted_sequence, values, side="left", out_type=int32, name=None):
    """For each of ``values`` (per row of a batch), where it would go in ``sorted_sequence``'s
    row to keep it sorted."""
    seq, vals = convert_to_tensor(sorted_sequence), convert_to_tensor(values)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if seq.shape[:-1] != vals.shape[:-1]:
        raise ValueError(f"searchsorted: leading axes of {seq.shape} and {vals.shape} differ")
    return _searchsorted(seq, vals, side=side, dtype=numpy_dtype(out_type))


def _invert_permutation(x):
    """The permutation ``y`` with ``y[x[i]] = i``."""
    xp = backend.array_module(x)
    if sorted(backend.to_host(x).tolist()) != list(range(x.size)):
        raise ValueError(f"{backend.to_host(x).tolist()} is not a permutation of "
                         f"0..{x.size - 1}")
    out = xp.empty_like(x)
    out[x] = xp.arange(x.size, dtype=x.dtype)
    return out


invert_permutation = define("invert_permutation", _invert_permutation)


def zero_fraction(value, name=None):
    """The fraction of entries that are 0, as float32."""
    value = convert_to_tensor(value)
    return reduce_mean(cast(equal(value, 0), np.float32))


# --- segment reductions other than sums: one masked dense reduction per segment -------------------
def _segment_table(name, data, segment_ids, num_segments, fill):
    """``table[s, i, ...] = data[i, ...]`` where row ``i`` is in segment ``s``, else ``fill``,
    and which segments have rows: a (segments, rows, ...) tensor whose reduction over axis 1
    is the segment reduction, so the gradient is that reduction's (ties share it, as in
    TensorFlow). It costs memory in segments x rows."""
    data = convert_to_tensor(data)
    ids = _segment_ids(name, data, segment_ids)
    rows = data.shape[ids.ndim:]
    segments = backend.array_module(ids._value).arange(int(num_segments))
    member = equal(reshape(segments, (-1, 1)), reshape(ids, (1, -1)))
    mask = reshape(member, tuple(member.shape) + (1,) * len(rows))
    table = where(mask, expand_dims(reshape(data, (-1,) + rows), 0),
                  convert_to_tensor(fill, data.dtype))
    return table, reshape(reduce_any(member, axis=1), (-1,) + (1,) * len(rows))


def _segment_extreme(name, reduce, lowest):
    def segment_reduction(data, segment_ids, num_segments, name=None):
        data = convert_to_tensor(data)
        info = np.finfo if data.dtype.kind == "f" else np.iinfo
        empty = info(data.dtype).min if lowest else info(data.dtype).max
        table, present = _segment_table(op_name, data, segment_ids, num_segments, empty)
        return where(present, reduce(table, axis=1), convert_to_tensor(empty, data.dtype))
    op_name = name
    segment_reduction.__name__ = segment_reduction.__qualname__ = name
    segment_reduction.__doc__ = (f"The {name.split('_')[-1]} of each segment's rows (an empty "
                                 f"segment gives the dtype's {'lowest' if lowest else 'highest'}"
                                 f" value, as in TensorFlow).")
    return segment_reduction


unsorted_segment_max = _segment_extreme("unsorted_segment_max", reduce_max, lowest=True)
unsorted_segment_min = _segment_extreme("unsorted_segment_min", reduce_min, lowest=False)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product of each segment's rows (1 for an empty segment)."""
    table, _ = _segment_table("unsorted_segment_prod", data, segment_ids, num_segments, 1)
    return reduce_prod(table, axis=1)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Each segment's sum divided by the square root of its row count."""
    data = convert_to_tensor(data)
    ids = _segment_ids("unsorted_segment_sqrt_n", data, segment_ids)
    total = unsorted_segment_sum(data, segment_ids, num_segments)
    return total / sqrt(maximum(_counts(ids, int(num_segments), data), 1))


def _sorted(unsorted, name):
    """The ``segment_*`` form of ``unsorted``: sorted ids, as many segments as the last + 1."""
    def segment_reduction(data, segment_ids, name=None):
        data, count = _sorted_segments(op_name, data, segment_ids)
        return unsorted(data, segment_ids, count)
    op_name = name
    segment_reduction.__name__ = segment_reduction.__qualname__ = name
    segment_reduction.__doc__ = f"``{unsorted.__name__}`` for sorted ids."
    return segment_reduction


segment_sum = _sorted(unsorted_segment_sum, "segment_sum")
segment_mean = _sorted(unsorted_segment_mean, "segment_mean")
segment_max = _sorted(unsorted_segment_max, "segment_max")
segment_min = _sorted(unsorted_segment_min, "segment_min")
segment_prod = _sorted(unsorted_segment_prod, "segment_prod")


def is_non_decreasing(x, name=None):
    """Whether the entries of ``x`` (read in order) never decrease: a bool scalar."""
    flat = reshape(convert_to_tensor(x), (-1,))
    return reduce_all(greater_equal(flat[1:], flat[:-1]))


def is_strictly_increasing(x, name=None):
    """Whether the entries of ``x`` (read in order) always increase: a bool scalar."""
    flat = reshape(convert_to_tensor(x), (-1,))
    return reduce_all(less(flat[:-1], flat[1:]))
