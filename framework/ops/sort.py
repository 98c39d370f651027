"""Sorting and selecting by rank: ``sort``, ``argsort``, ``top_k``.

The order is a primitive of its own (``order``, with no derivative); the values are then read
from the input with one advanced index (``take_along_axis``), whose gradient is ``getitem``'s:
each selected element's cotangent goes back to where it came from. Ties keep the lower index first,
as TensorFlow's ``top_k`` (and so its ``sort`` and ``argsort``) does.
"""
import collections

from ..engine import backend
from ..engine.dtypes import numpy_dtype, int32
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor
from .shape import _axes, getitem

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])
ApproxTopK = collections.namedtuple("ApproxTopK", ["values", "indices"])


def take_along_axis(x, indices, axis):
    """``x``'s elements at ``indices`` (an integer tensor shaped like ``x`` but along
    ``axis``), as NumPy's ``take_along_axis``, differentiable in ``x``."""
    xp = backend.array_module(indices._value)
    key = []
    for a, d in enumerate(indices.shape):
        if a == axis:
            key.append(indices)
        else:
            key.append(xp.arange(d).reshape((d,) + (1,) * (indices.ndim - a - 1)))
    return getitem(x, tuple(key))


def _order(raw, *, axis, descending, k=None, dtype=int32):
    """Indices that sort ``raw`` along ``axis`` (the first ``k`` of them), ties by increasing
    index."""
    xp = backend.array_module(raw)
    if not descending:
        order = xp.argsort(raw, axis=axis, kind="stable")
    else:
        n = raw.shape[axis]
        flipped = xp.flip(raw, axis)
        order = (n - 1) - xp.flip(xp.argsort(flipped, axis=axis, kind="stable"), axis)
    if k is not None:
        order = order[(slice(None),) * axis + (slice(0, k),)]
    return order.astype(dtype)


order = define("order", _order)


def _direction(direction, name):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"{name}: direction must be 'ASCENDING' or 'DESCENDING', "
                         f"got {direction!r}")
    return direction == "DESCENDING"


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices (int32) that sort ``values`` along ``axis``."""
    x = convert_to_tensor(values)
    descending = _direction(direction, "argsort")
    axis = _axes(axis, x.ndim)[0]
    return order(x, axis=axis, descending=descending)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis``; the gradient goes back to each value's place."""
    x = convert_to_tensor(values)
    descending = _direction(direction, "sort")
    axis = _axes(axis, x.ndim)[0]
    return take_along_axis(x, order(x, axis=axis, descending=descending), axis)


def top_k(input, k=1, sorted=True, index_type=int32, name=None):  # noqa: A002
    """The ``k`` largest entries of the last axis, largest first: ``(values, indices)``."""
    x = convert_to_tensor(input)
    if x.ndim < 1:
        raise ValueError("top_k: input must have rank >= 1, got a scalar")
    k = int(k)
    if not 0 <= k <= x.shape[-1]:
        raise ValueError(f"top_k: k = {k} is out of range for a last axis of size "
                         f"{x.shape[-1]} (input shape {x.shape})")
    indices = order(x, axis=x.ndim - 1, descending=True, k=k, dtype=numpy_dtype(index_type))
    return TopKV2(take_along_axis(x, indices, x.ndim - 1), indices)


def _approx_k(operand, k, reduction_dimension, largest):
    x = convert_to_tensor(operand)
    axis = _axes(reduction_dimension, x.ndim)[0]
    if not 0 <= int(k) <= x.shape[axis]:
        raise ValueError(f"approx_{'max' if largest else 'min'}_k: k = {k} is out of range for "
                         f"a dimension of size {x.shape[axis]}")
    indices = order(x, axis=axis, descending=largest, k=int(k))
    return ApproxTopK(take_along_axis(x, indices, axis), indices)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """``(values, indices)`` of the ``k`` largest entries along ``reduction_dimension``: the
    exact ones (TensorFlow's approximation trades recall for TPU speed; exact is within it)."""
    return _approx_k(operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """``(values, indices)`` of the ``k`` smallest entries along ``reduction_dimension``."""
    return _approx_k(operand, k, reduction_dimension, False)
