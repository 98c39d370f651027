"""``fw.keras.utils``: the helpers TF2 programs call there: ``set_random_seed``,
``to_categorical``, ``normalize``, ``pad_sequences``.

As in Keras, ``to_categorical`` and ``normalize`` give NumPy arrays for NumPy input (data
preparation, before any tensor exists) and framework ops for tensors (traced and
differentiable like any op).
"""
import random

import numpy as np

import framework as fw

from . import backend

__all__ = ["clear_session", "normalize", "pad_sequences", "set_random_seed", "to_categorical"]

clear_session = backend.clear_session


def set_random_seed(seed):
    """Seed Python's ``random``, NumPy's global generator and ``fw.random`` at once (Keras's)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed!r} "
                         f"(of type {type(seed)})")
    random.seed(seed)
    np.random.seed(seed)
    fw.random.set_seed(seed)


def _squeezed_last(shape):
    """Keras drops a trailing axis of size 1 from class labels (``(n, 1)`` -> ``(n,)``)."""
    return tuple(shape[:-1]) if len(shape) > 1 and shape[-1] == 1 else tuple(shape)


def to_categorical(x, num_classes=None):
    """One-hot rows for integer class labels: float64 NumPy for arrays and lists (Keras's),
    ``fw.one_hot`` (float32) for tensors; ``num_classes`` defaults to the largest label + 1."""
    if isinstance(x, fw.Tensor):
        x = fw.reshape(x, _squeezed_last(x.shape))
        if num_classes is None:
            raise ValueError("to_categorical: give num_classes for a tensor of labels")
        return fw.one_hot(fw.cast(x, fw.int64), num_classes)
    labels = np.array(x, dtype="int64")
    shape = _squeezed_last(labels.shape)
    labels = labels.reshape(-1)
    num_classes = int(labels.max()) + 1 if not num_classes else int(num_classes)
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(f"to_categorical: labels must be in [0, {num_classes}), got "
                         f"[{labels.min()}, {labels.max()}]")
    categorical = np.zeros((labels.shape[0], num_classes))
    categorical[np.arange(labels.shape[0]), labels] = 1
    return categorical.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """``x`` divided by its ``order``-norm along ``axis`` (a norm of 0 leaves zeros)."""
    if isinstance(x, np.ndarray):
        norm = np.atleast_1d(np.linalg.norm(x, order, axis))
        norm[norm == 0] = 1
        return x / np.expand_dims(norm, axis or -1)
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order!r}")
    x = fw.convert_to_tensor(x)
    epsilon = backend.epsilon()
    if order == 2:  # (Keras's: x * min(rsqrt(sum of squares), 1 / epsilon))
        inverse = fw.math.rsqrt(fw.reduce_sum(fw.square(x), axis=axis, keepdims=True))
        return x * fw.minimum(inverse, fw.cast(1.0 / epsilon, x.dtype))
    norm = fw.norm(x, ord=order, axis=axis, keepdims=True)
    return x / fw.maximum(norm, fw.cast(epsilon, x.dtype))


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):
    """Lists of integers as one array of ``maxlen`` columns (the longest by default), padded
    with ``value`` and truncated at the front (``"pre"``) or back (``"post"``), as Keras."""
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        raise ValueError(f"pad_sequences: padding and truncating take 'pre' or 'post', got "
                         f"{padding!r} and {truncating!r}")
    rows = [np.asarray(row) for row in sequences]
    maxlen = max((len(row) for row in rows), default=0) if maxlen is None else int(maxlen)
    out = np.full((len(rows), maxlen), value, dtype=dtype)
    for i, row in enumerate(rows):
        row = row[-maxlen:] if truncating == "pre" else row[:maxlen]
        if maxlen and len(row):
            if padding == "post":
                out[i, :len(row)] = row
            else:
                out[i, -len(row):] = row
    return out

from ..namespaces import suggest_close_names as _suggest  # noqa: E402

_suggest(__import__("sys").modules[__name__], "fw.keras.utils")
