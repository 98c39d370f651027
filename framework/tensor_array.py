"""``fw.TensorArray``: TensorFlow's eager TensorArray, a Python list of tensors.

A write stores the tensor itself, and ``stack``, ``gather`` and ``concat`` are the framework's
ops on the stored tensors, so a tape differentiates from them back to every written value, and
``fw.function`` records them like any op: a Python loop (or ``fw.while_loop``) that writes a
step's output traces into a plan that replays with each call's values. An index given as a
tensor is read with ``operator.index``, which a trace turns into a guard. The errors and their
messages are TensorFlow's eager ones (``clear_after_read`` included).
"""
import operator

from .engine.dtypes import as_dtype, int32
from .creation import zeros
from .ops import concat, gather, stack, unstack
from .ops.array import split
from .engine.tensor import Tensor, TensorShape, convert_to_tensor


class TensorArray:
    """A list of tensors of one dtype, written once each (``tf.TensorArray``)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if handle is not None:
            raise ValueError("TensorArray handles are not supported when eager execution is "
                             "enabled.")
        if size is None:
            raise ValueError("Size must be declared for TensorArrays when eager execution is "
                             "enabled.")
        self._dtype = as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = infer_shape
        self._element_shape = None if element_shape is None else _dims(element_shape)
        self._previously_read = set()
        self._tensors = [None] * operator.index(size)

    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic_size(self):
        return self._dynamic_size

    @property
    def element_shape(self):
        """The shape every element has (None: unknown; ``None`` entries: unknown sizes)."""
        shape = self._element_shape
        return TensorShape(shape) if shape is not None and None not in shape else shape

    def size(self, name=None):
        """The number of elements, as an int32 tensor."""
        return convert_to_tensor(len(self._tensors), int32)

    def write(self, index, value, name=None):
        """Store ``value`` at ``index``; returns the TensorArray (``ta = ta.write(i, x)``)."""
        self._write(operator.index(index), value)
        return self

    def read(self, index, name=None):
        """The element at ``index`` (zeros of the element shape if never written)."""
        index = operator.index(index)
        if index < 0:
            raise IndexError(f"Reading from negative indices (index {index}) is not allowed.")
        if index >= len(self._tensors):
            raise IndexError(f"Tried to read from index {index} but array size is: "
                             f"{len(self._tensors)} ")
        tensor = self._tensors[index]
        if tensor is None:
            if index in self._previously_read:
                raise ValueError(f"Could not read index {index} twice because it was cleared "
                                 f"after a previous read (perhaps try setting clear_after_read "
                                 f"= false?)")
            tensor = self._zero(index)
        if self._clear_after_read:
            self._tensors[index] = None
            self._previously_read.add(index)
        return tensor

    def stack(self, name=None):
        """Every element stacked along a new first axis."""
        if not self._tensors:
            shape = self._element_shape
            if shape is None or None in shape:
                return zeros((0,), self._dtype)
            return zeros((0,) + shape, self._dtype)
        return stack([self._zero(i) for i in range(len(self._tensors))])

    def gather(self, indices, name=None):
        """The elements at ``indices``, stacked."""
        if isinstance(indices, Tensor):
            return gather(self.stack(), indices)
        return stack([self._zero(operator.index(i)) for i in indices])

    def concat(self, name=None):
        """Every element joined along its first axis."""
        tensors = [self._zero(i) for i in range(len(self._tensors))]
        for i, t in enumerate(tensors):
            if not t.ndim:
                raise ValueError(f"Concat saw a scalar shape at index {i} but requires at "
                                 f"least vectors.")
        return concat(tensors, 0)

    def unstack(self, value, name=None):
        """Elements from the slices of ``value`` along its first axis (replacing all)."""
        tensors = unstack(self._checked(self._converted(value)))
        if len(tensors) > len(self._tensors) and not self._dynamic_size:
            raise ValueError(f"Cannot unstack {len(tensors)} tensors into a TensorArray of "
                             f"static size {len(self._tensors)} ")
        self._tensors = tensors
        return self

    def scatter(self, indices, value, name=None):
        """Write the slices of ``value`` at ``indices``."""
        indices = unstack(indices) if isinstance(indices, Tensor) else indices
        for index, slice_ in zip(indices, unstack(self._converted(value))):
            self._write(operator.index(index), slice_)
        return self

    def split(self, value, lengths, name=None):
        """Elements from ``value`` cut along its first axis into pieces of ``lengths``
        (replacing all; one piece per element unless ``dynamic_size``)."""
        value = self._checked(self._converted(value))
        lengths = [operator.index(n) for n in (unstack(lengths) if isinstance(
            lengths, Tensor) else lengths)]
        if not value.ndim:
            raise ValueError(f"Expected value to be at least a vector, but received shape: "
                             f"{list(value.shape)} ")
        if sum(lengths) != value.shape[0]:
            raise ValueError(f"Expected sum of lengths to be equal to values.shape[0], but "
                             f"sum of lengths is {sum(lengths)} and value's shape is: "
                             f"{list(value.shape)} ")
        if not self._dynamic_size and len(lengths) != len(self._tensors):
            raise ValueError(f"TensorArray's size is not equal to the size of lengths "
                             f"({len(self._tensors)} vs. {len(lengths)}), and the TensorArray "
                             f"is not marked as dynamically resizeable.")
        self._tensors = split(value, lengths)
        return self

    def identity(self):
        return self

    def close(self, name=None):
        self._tensors = []
        return self

    # --- TensorFlow's eager checks -------------------------------------------------------------
    def _converted(self, value):
        if isinstance(value, Tensor):
            return value
        try:
            return convert_to_tensor(value, self._dtype)
        except TypeError:
            return convert_to_tensor(value)

    def _checked(self, value):
        if value.dtype != self._dtype:
            raise TypeError(f"TensorArray dtype is {self._dtype.name} but Op is trying to "
                            f"write dtype {value.dtype.name} ")
        return value

    def _write(self, index, value):
        if index < 0:
            raise IndexError(f"Writing to negative indices (index {index}) is not allowed.")
        size = len(self._tensors)
        if index >= size and not self._dynamic_size:
            raise IndexError(f"Tried to write to index {index} but array is not resizeable "
                             f"and size is: {size} ")
        value = self._checked(self._converted(value))
        shape = tuple(value.shape)
        known = self._element_shape
        if known is not None and (len(known) != len(shape) or any(
                k is not None and k != s for k, s in zip(known, shape))):
            raise ValueError(f"Incompatible shape for value ({shape}), expected "
                             f"({_shown(known)})")
        if self._infer_shape:
            self._element_shape = shape
        if index >= size:  # (a dynamic_size array grows only once the value is accepted)
            self._tensors.extend([None] * (index - size + 1))
        self._tensors[index] = value

    def _zero(self, index):
        """The element at ``index``, zeros of the element shape if never written."""
        tensor = self._tensors[index]
        if tensor is None:
            shape = self._element_shape
            if shape is None or None in shape:
                raise ValueError(f"Could not read from TensorArray index {index}: it was "
                                 f"never written and the element shape is not fully known "
                                 f"({_shown(shape)}); give element_shape")
            tensor = self._tensors[index] = zeros(shape, self._dtype)
        return tensor

    def __repr__(self):
        return (f"<fw.TensorArray dtype={self._dtype.name} size={len(self._tensors)} "
                f"element_shape={_shown(self._element_shape)}>")


def _dims(shape):
    """An element shape as a tuple (``None`` entries for unknown sizes), or None if unknown."""
    if shape is None:
        return None
    return tuple(None if d is None else operator.index(d) for d in shape)


def _shown(shape):
    """A shape as TensorFlow prints it: ``(3,)``, ``(None, 2)`` or ``<unknown>``."""
    return "<unknown>" if shape is None else str(tuple(shape))


__all__ = ["TensorArray"]
