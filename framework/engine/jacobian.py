"""Jacobians of a tape's recorded computation (``GradientTape.jacobian``, ``batch_jacobian``).

A Jacobian is the tape's backward walk with a leading axis of rows on the cotangents: with
``experimental_use_pfor`` all rows (in chunks of ``parallel_iterations``) go through one walk,
whose VJPs let the extra axis broadcast through; without it, one walk per row. What a Jacobian
answers at the edges is TensorFlow's: the Jacobian of a never-watched constant is unconnected
even to itself (nothing records the gather of its rows), and an unconnected ``batch_jacobian``
is zeros unless asked to raise.
"""
import math

from . import backend, nest
from ..ops import broadcast_to, concat, reshape, transpose
from .tensor import Tensor, Variable, wrap_constant
from .unconnected import UnconnectedGradients, unconnected_mode


class Jacobians:
    """The Jacobian half of ``GradientTape`` (its walk is the tape's ``_tensor_walk``)."""

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The full Jacobian of ``target`` for each source: shape ``target.shape + source.shape``.

        With ``experimental_use_pfor`` all rows go through one backward pass whose cotangent has
        an extra leading axis (chunks of ``parallel_iterations`` rows bound its memory); without
        it, one backward pass per row.
        """
        mode = unconnected_mode(unconnected_gradients)
        self._begin_differentiation("jacobian")
        (target,) = checked_tensors([target], "target")
        flat_sources = checked_tensors(sources, "source")
        n = math.prod(target.shape)
        eye = _eye_like(target, n)
        parts = [None] * len(flat_sources)
        if self._gathers(target):
            parts = self._rows(target, flat_sources, n, parallel_iterations,
                               experimental_use_pfor,
                               lambda rows: reshape(eye[rows], _count(rows) + target.shape),
                               self._frees(mode))
        out = []
        for i, (chunks, s) in enumerate(zip(parts, flat_sources)):
            if chunks is None:
                out.append(self._unconnected(s, i, [target], mode, target.shape + s.shape))
            else:
                out.append(reshape(_join(chunks), target.shape + s.shape))
        self._done()
        return nest.pack_sequence_as(sources, out)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians, ``[b, y..., x...]``, when ``target[i]`` depends on ``source[i]`` only."""
        mode = unconnected_mode(unconnected_gradients)
        target, source = checked_tensors((target, source), "target/source")
        for what, t in (("target", target), ("source", source)):
            if t.ndim < 2:
                raise ValueError(f"batch_jacobian: the {what} has shape {t.shape}; it must have "
                                 f"rank at least 2 (a batch axis, then each example's values)")
        if target.shape[0] != source.shape[0]:
            raise ValueError(f"batch_jacobian: the first dimension of the target shape "
                             f"{target.shape} and of the source shape {source.shape} must match")
        self._begin_differentiation("batch_jacobian")
        ny = math.prod(target.shape[1:])
        eye = _eye_like(target, ny)

        def seed(rows):  # row j of every example at once: (m, b, y...)
            block = reshape(eye[rows], _count(rows) + (1,) + target.shape[1:])
            return broadcast_to(block, (block.shape[0],) + target.shape)

        chunks = None
        if self._gathers(target):
            (chunks,) = self._rows(target, [source], ny, parallel_iterations,
                                   experimental_use_pfor, seed, self._frees(mode))
        shape = target.shape + source.shape[1:]
        if chunks is None and mode is UnconnectedGradients.NONE:  # TensorFlow's batch_jacobian
            result = wrap_constant(zeros_like(target._value, shape))  # keeps answering zeros (target's)
        elif chunks is None:
            result = self._unconnected(source, 0, [target], mode, shape)
        else:
            stacked = transpose(_join(chunks), (1, 0) + tuple(range(2, source.ndim + 1)))
            result = reshape(stacked, shape)
        self._done()
        return result

    def _gathers(self, target):
        """Whether the tape would record TensorFlow's gather of the target's rows: a Jacobian of
        a never-watched constant, even by itself, is unconnected (its gradient is not)."""
        return id(target) in self._tracked or (
            isinstance(target, Variable) and target._trainable and self._watch_accessed)

    def _rows(self, target, sources, n, parallel_iterations, use_pfor, seed_for, free):
        """Backward passes over the rows of a Jacobian: per source, a list of row blocks."""
        step = (parallel_iterations or n) if use_pfor else 1
        starts = list(range(0, n, max(step, 1))) or [0]
        parts = [[] for _ in sources]
        for k, start in enumerate(starts):
            rows = slice(start, min(start + step, n))
            last = k == len(starts) - 1
            grads = self._tensor_walk([target], [seed_for(rows)], sources, 1, last and free)
            for part, g in zip(parts, grads):
                part.append(g)
        return [None if any(g is None for g in part) else part for part in parts]


def checked_tensors(structure, what):
    """The leaves of ``structure`` (a tensor or any nest of them) as a list, each checked: a
    plain list of tensors is returned as it is (so ``gradient`` knows it needs no packing)."""
    if isinstance(structure, Tensor):
        return [structure]
    if structure.__class__ is list:
        for t in structure:
            if not isinstance(t, Tensor):
                break
        else:
            return structure
    items = nest.flatten(structure)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what} {i} is a {type(t).__name__}, not a tensor or variable: "
                            f"{t!r:.80}")
    return items



def zeros_like(value, shape):
    return backend.array_module(value).zeros(shape, dtype=value.dtype)


def _eye_like(target, n):
    return wrap_constant(backend.array_module(target._value).eye(n, dtype=target.dtype))


def _count(rows):
    """The number of Jacobian rows in a block, as a shape prefix (explicit: it may be 0)."""
    return (rows.stop - rows.start,)


def _join(chunks):
    return chunks[0] if len(chunks) == 1 else concat(chunks, axis=0)
