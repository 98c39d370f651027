"""``Model``: a ``Layer`` that is a whole model, with Keras's ``layers`` list and ``predict``.

``Model(inputs, outputs)``, called on the class itself with symbolic tensors, makes a functional
model (``layers.functional``), as ``keras.Model`` does; a subclass is a subclassed model.
"""
import sys
import time

import numpy as np

from framework.engine import nest

from .base import Layer
from .model_access import ModelAccess
from .trainer import Trainer

__all__ = ["Model"]


class Model(Trainer, ModelAccess, Layer):
    """A whole model: a ``Layer`` with the same tracking, plus ``layers`` and ``predict``, the
    access Keras gives to its layers and shapes (``ModelAccess``), and Keras's training API
    from ``Trainer`` (``compile``, ``fit``, ``evaluate``...)."""

    def __new__(cls, *args, **kwargs):
        from .containers import Sequential  # (both build on this module)
        from .functional import Functional
        if issubclass(cls, (Functional, Sequential)) or not _functional_arguments(args, kwargs):
            return object.__new__(cls)
        return object.__new__(Functional if cls is Model else _functional_subclass(cls))

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A model from its ``get_config()``: a functional model's config (its layers, their
        calls and the inputs and outputs) rebuilds the graph, as ``keras.Model.from_config``
        does; any other config goes to the constructor."""
        from .model_config import functional_from_config  # (it builds models of this module)
        if {"layers", "input_layers", "nodes"} <= config.keys():  # (functional_config's)
            return functional_from_config(cls, config, custom_objects)
        return cls(**config)

    @property
    def layers(self):
        """The direct sublayers, in assignment order."""
        return [layer for _, layer in self._sublayers()]

    def predict(self, x, batch_size=None, verbose="auto", steps=None):
        """The model's outputs on ``x`` at inference (``training=False``), as NumPy arrays.

        ``x`` is an array (or tensor), a list or dict of them for a model of several inputs,
        cut into batches of ``batch_size`` (32 by default) along the first axis; or an
        iterable of batches (a ``fw.data.Dataset``; of ``(x, y)`` pairs, ``x`` is used), of
        which ``steps`` are read if given. The batches' outputs are concatenated, in the
        structure of the model's outputs. ``verbose`` 1 (or "auto") prints one line at the
        end, Keras's step count and time per step; 0 prints nothing.
        """
        if verbose not in (0, 1, 2, "auto"):
            raise ValueError(f"predict(): verbose must be 0, 1, 2 or 'auto', got {verbose!r}")
        start, flat_outputs, structure = time.perf_counter(), [], None
        for batch in _batches(x, 32 if batch_size is None else batch_size, steps):
            outputs = self.make_predict_function()((batch,))
            structure = outputs if structure is None else structure
            flat_outputs.append([np.asarray(output) for output in nest.flatten(outputs)])
        if not flat_outputs:
            raise ValueError("predict(): x holds no samples")
        if verbose in (1, 2, "auto"):
            seconds, steps = time.perf_counter() - start, len(flat_outputs)
            print(f"{steps}/{steps} - {seconds:.0f}s {1000 * seconds / steps:.0f}ms/step",
                  file=sys.stdout)
        stacked = [np.concatenate(parts) for parts in zip(*flat_outputs)]
        return nest.pack_sequence_as(structure, stacked)


def _functional_arguments(args, kwargs):
    """Whether a model is made from ``(inputs, outputs)``, by position or keyword (Keras's
    rule)."""
    return len(args) == 2 or (len(args) == 1 and "outputs" in kwargs) or (
        "inputs" in kwargs and "outputs" in kwargs)


_FUNCTIONAL_SUBCLASSES = {}


def _functional_subclass(cls):
    """``class CustomModel(Model)`` made from ``(inputs, outputs)``: ``CustomModel`` with the
    functional model under it (Keras puts ``Functional`` among its bases), so its own methods
    (``train_step``...) come first and ``isinstance(model, CustomModel)`` holds."""
    if cls not in _FUNCTIONAL_SUBCLASSES:
        from .functional import Functional
        _FUNCTIONAL_SUBCLASSES[cls] = type(cls.__name__, (cls, Functional),
                                           {"__module__": cls.__module__,
                                            "__qualname__": cls.__qualname__})
    return _FUNCTIONAL_SUBCLASSES[cls]


def _batches(x, batch_size, steps):
    """The batches ``predict`` runs on: slices of arrays (or of a structure of them), or the
    items of an iterable of batches."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"predict(): batch_size must be a positive integer, got {batch_size!r}")
    if isinstance(x, (list, tuple, dict)) or hasattr(x, "shape") or hasattr(x, "__array__"):
        flat = [leaf if hasattr(leaf, "shape") else np.asarray(leaf) for leaf in nest.flatten(x)]
        sizes = {leaf.shape[0] if leaf.shape else None for leaf in flat}
        if len(sizes) != 1 or None in sizes:
            raise ValueError(f"predict(): the inputs must share their first (batch) axis, got "
                             f"shapes {[tuple(leaf.shape) for leaf in flat]}")
        total = sizes.pop()
        count = -(-total // batch_size) if steps is None else min(steps, -(-total // batch_size))
        for index in range(count):
            part = slice(index * batch_size, (index + 1) * batch_size)
            yield nest.pack_sequence_as(x, [leaf[part] for leaf in flat])
        return
    for index, batch in enumerate(x):
        if steps is not None and index >= steps:
            return
        yield batch[0] if isinstance(batch, tuple) and len(batch) in (2, 3) else batch
