"""The batches ``fit``, ``evaluate`` and the ``*_on_batch`` methods run on (Keras's data
adapters and epoch iterator, for arrays, tensors, dicts of them and ``fw.data.Dataset``).

Each batch is Keras's ``data``: ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)`` of tensors,
what ``train_step(data)`` unpacks. Arrays are cut along their first axis as ``predict`` cuts
them (``model._batches``); float arrays become float32 (Keras's floatx); ``shuffle=True``
permutes the samples each epoch with ``fw.random``'s global generator (so a checkpoint of its
state resumes the same order); ``class_weight`` becomes per-sample weights.
"""
import math

import numpy as np

import framework as fw
from framework.engine import backend, nest
from framework.engine.tensor import wrap_constant

from . import model as model_module  # (a cycle: model imports the trainer, which imports this)

__all__ = ["ArrayData", "DatasetData", "class_weights", "make", "split", "unpack"]


def unpack(data):
    """Keras's ``unpack_x_y_sample_weight``: ``(x, y, sample_weight)`` from a step's data."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) in (1, 2, 3):
        return (*data, *([None] * (3 - len(data))))
    raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                     f"`(x, y, sample_weight)`, found: {data!r:.200}")


def _packed(x, y, sample_weight):
    return (x,) if y is None else (x, y) if sample_weight is None else (x, y, sample_weight)


def _host(leaf):
    """A leaf as a host array, floats as float32 (as Keras's array adapter makes them)."""
    array = leaf.numpy() if isinstance(leaf, fw.Tensor) else np.asarray(leaf)
    return array.astype(np.float32) if array.dtype.kind == "f" and array.dtype != np.float32 \
        else array


def _tensors(structure):
    if structure.__class__ is tuple and all(leaf.__class__ is np.ndarray for leaf in structure):
        return tuple([fw.convert_to_tensor(leaf) for leaf in structure])  # (the usual batch)
    return nest.pack_sequence_as(structure, [fw.convert_to_tensor(leaf)
                                             for leaf in nest.flatten(structure)])


def class_weights(y, class_weight):
    """Keras's ``class_weight_to_sample_weights``: each sample's weight is its class's (from
    the label, the argmax of a one-hot row, or a rounded single column), 1 if not listed."""
    labels = np.asarray(y)
    if labels.ndim > 1:
        labels = labels.argmax(-1) if labels.shape[-1] != 1 else labels[..., 0]
    labels = np.round(labels).astype(np.int64)
    table = np.array([float(class_weight.get(int(c), 1.0)) for c in range(labels.max() + 1)]
                     if labels.size else [], np.float32)
    return table[labels] if labels.size else np.ones(0, np.float32)


def _checked_class_weight(y, sample_weight, class_weight):
    if class_weight is None:
        return sample_weight
    if sample_weight is not None:
        raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
    if isinstance(y, (list, tuple, dict)) and len(nest.flatten(y)) > 1:
        raise ValueError("`class_weight` is only supported for Models with a single output.")
    return class_weights(nest.flatten(y)[0], class_weight)


class ArrayData:
    """Arrays (or tensors, or lists and dicts of them) cut into batches."""

    def __init__(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False,
                 class_weight=None):
        sample_weight = _checked_class_weight(y, sample_weight, class_weight)
        self.data = nest.pack_sequence_as(
            _packed(x, y, sample_weight),
            [_host(leaf) for leaf in nest.flatten(_packed(x, y, sample_weight))])
        self.size = nest.flatten(self.data)[0].shape[0]
        self.batch_size = 32 if batch_size is None else batch_size
        self.shuffle = shuffle
        self.steps = math.ceil(self.size / self.batch_size)
        self._kept = None  # (batch size, the batches): host batches in order, made once

    def epoch(self):
        """The batches of one pass, as tensors (in a new order each pass with shuffle)."""
        data = self.data
        if self.shuffle:
            order = fw.random.generator().permutation(self.size)
            data = nest.pack_sequence_as(data, [leaf[order] for leaf in nest.flatten(data)])
        if data.__class__ is tuple and all(leaf.__class__ is np.ndarray for leaf in data):
            if self.shuffle or backend.get_backend() != "numpy":  # (a device backend's batches
                yield from _cut(data, self.batch_size)  # are copies there: one at a time)
                return
            if self._kept is None or self._kept[0] != self.batch_size:  # views: kept for free
                self._kept = (self.batch_size, list(_cut(data, self.batch_size)))
            yield from self._kept[1]  # (tensors are immutable: each pass may reuse them)
            return
        for batch in model_module._batches(data, self.batch_size, None):
            yield _tensors(batch)


def _cut(arrays, batch_size):
    """The batches of a tuple of host arrays: each a tuple of tensors over views of the
    arrays (no copy on the host), as ``convert_to_tensor`` makes them."""
    size = arrays[0].shape[0]
    for start in range(0, size, batch_size):
        stop = start + batch_size
        yield tuple([wrap_constant(backend.to_backend(leaf[start:stop])) for leaf in arrays])


class DatasetData:
    """An iterable of batches (``fw.data.Dataset``): each element ``x``, ``(x, y)`` or
    ``(x, y, sample_weight)``."""

    def __init__(self, dataset, class_weight=None):
        self.dataset, self.class_weight = dataset, class_weight
        cardinality = int(dataset.cardinality()) if hasattr(dataset, "cardinality") else -2
        self.steps = cardinality if cardinality >= 0 else None

    def epoch(self):
        for element in self.dataset:
            x, y, sample_weight = unpack(element)
            if self.class_weight is not None:
                sample_weight = _checked_class_weight(y, sample_weight, self.class_weight)
            yield _tensors(_packed(x, y, sample_weight))


def _is_dataset(x):
    return isinstance(x, fw.data.Dataset) or (
        not isinstance(x, (list, tuple, dict)) and not hasattr(x, "shape")
        and not hasattr(x, "__array__") and hasattr(x, "__iter__"))


def make(x, y=None, sample_weight=None, batch_size=None, shuffle=False, class_weight=None):
    """The data source for ``x`` (and ``y``, ``sample_weight``): a dataset as it is, arrays
    cut into batches."""
    if x is None:
        raise ValueError("fit/evaluate: x is required (arrays, tensors, dicts of them, or a "
                         "fw.data.Dataset)")
    if _is_dataset(x):
        if y is not None or sample_weight is not None:
            raise ValueError("When providing `x` as a dataset, `y` and `sample_weight` should "
                             "not be passed: the dataset yields them")
        return DatasetData(x, class_weight)
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(
            batch_size, int) or batch_size <= 0):
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    return ArrayData(x, y, sample_weight, batch_size, shuffle, class_weight)


def split(x, y, sample_weight, validation_split):
    """Keras's ``train_validation_split``: the last ``validation_split`` of the samples (taken
    before any shuffling) become the validation data."""
    if _is_dataset(x):
        raise ValueError(f"Argument `validation_split` is only supported for tensors or NumPy "
                         f"arrays. Found incompatible type in the input: [{type(x).__name__}]")
    if not 0 < validation_split < 1:
        raise ValueError(f"validation_split must be in (0, 1), got {validation_split!r}")
    arrays = [leaf for leaf in nest.flatten((x, y, sample_weight)) if leaf is not None]
    size = arrays[0].shape[0]
    at = int(math.floor(size * (1.0 - validation_split)))
    if at == 0 or at == size:
        raise ValueError(f"Training data contains {size} samples, which is not sufficient to "
                         f"split it into a validation and training set as specified by "
                         f"`validation_split={validation_split}`.")

    def cut(part, where):
        return None if part is None else nest.pack_sequence_as(
            part, [_host(leaf)[where] for leaf in nest.flatten(part)])

    return tuple(cut(part, slice(0, at)) for part in (x, y, sample_weight)), \
        tuple(cut(part, slice(at, None)) for part in (x, y, sample_weight))
