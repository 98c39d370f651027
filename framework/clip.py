"""Clipping by norm (``tf.clip_by_norm``, ``tf.clip_by_global_norm``, ``tf.linalg.global_norm``).

Written with the framework's ops, so clipping is differentiable like the rest. An
``IndexedSlices`` is clipped through its values, as TensorFlow does: its norm is the values'
norm (a repeated row counts once per occurrence, not once summed), and the result stays sparse.
"""
from .engine.indexed_slices import IndexedSlices
from .ops import cast, maximum, minimum, reduce_sum, sqrt, where
from .engine.tensor import Tensor, convert_to_tensor


def _values(t):
    return t.values if isinstance(t, IndexedSlices) else convert_to_tensor(t)


def _like(t, values):
    """``values`` in the form of ``t``: the same indices when ``t`` is sparse."""
    if isinstance(t, IndexedSlices):
        return IndexedSlices(values, t.indices, t.shape)
    return values


def _number(value, dtype, what):
    value = convert_to_tensor(value) if not isinstance(value, Tensor) else value
    if value.ndim:
        raise ValueError(f"{what} must be a scalar, got shape {value.shape}")
    return cast(value, dtype) if value.dtype != dtype else value


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """``t * clip_norm / max(norm(t), clip_norm)``: ``t`` unchanged when its L2 norm (over
    ``axes``, all by default) is at most ``clip_norm``. A zero ``t`` stays zero, with a finite
    gradient (the norm's square root is taken only where the sum is positive)."""
    values = _values(t)
    if values.dtype.kind != "f":
        raise TypeError(f"clip_by_norm: t must be a floating tensor, got {values.dtype.name}")
    clip = _number(clip_norm, values.dtype, "clip_by_norm: clip_norm")
    squares = reduce_sum(values * values, axis=axes, keepdims=True)
    positive = squares > 0
    norm = where(positive, sqrt(where(positive, squares, squares * 0 + 1)), squares)
    return _like(t, values * clip / maximum(norm, clip))


def global_norm(t_list, name=None):
    """The L2 norm of all the tensors of ``t_list`` together (None entries skipped)."""
    if isinstance(t_list, (Tensor, IndexedSlices)) or not hasattr(t_list, "__iter__"):
        raise TypeError(f"global_norm takes a list of tensors, got {type(t_list).__name__}")
    values = [_values(t) for t in t_list if t is not None]
    if not values:
        return convert_to_tensor(0.0)
    total = reduce_sum(values[0] * values[0])
    for v in values[1:]:
        total = total + reduce_sum(v * v)
    return sqrt(total)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """``(list_clipped, global_norm)``: every tensor times ``clip_norm / max(global_norm,
    clip_norm)``, None entries kept; an infinite or NaN norm makes every entry NaN, as in
    TensorFlow, so an overflowed step shows instead of silently vanishing."""
    t_list = list(t_list) if not isinstance(t_list, (Tensor, IndexedSlices)) else None
    if t_list is None:
        raise TypeError("clip_by_global_norm: t_list must be a list of tensors")
    norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    clip = _number(clip_norm, norm.dtype, "clip_by_global_norm: clip_norm")
    # an infinite or NaN norm gives NaN (norm - norm), as TensorFlow's clip does
    scale = clip * minimum(1.0 / norm, 1.0 / clip) + (norm - norm)
    clipped = [None if t is None else _like(t, _scaled(_values(t), scale)) for t in t_list]
    return clipped, norm


def _scaled(values, scale):
    return values * (scale if scale.dtype == values.dtype else cast(scale, values.dtype))
