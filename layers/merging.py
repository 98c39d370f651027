"""Layers that merge several inputs, for functional models with branches: ``Concatenate``,
``Add``, ``Subtract``, ``Multiply``, ``Average``, ``Maximum``, ``Minimum`` and ``Dot``, and
Keras's functional forms (``add([a, b])`` builds an ``Add`` and calls it), with Keras's
arguments and names.

The elementwise ones follow Keras's shape rule: an input of lower rank gains axes of size 1
after the batch axis until the ranks agree, then sizes broadcast (1 against n). Keras's
masked merges (positions a mask hides taken from the other inputs) are not reproduced: a
mask on the inputs is ignored.
"""
from functools import reduce

import framework as fw

from .base import LAYERS, Layer

__all__ = ["Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply",
           "Subtract", "add", "average", "concatenate", "dot", "maximum", "minimum", "multiply",
           "subtract"]


def _several(layer, inputs, count=None):
    """The inputs as tensors: a list of at least 2 (exactly ``count`` when given)."""
    if not isinstance(inputs, (list, tuple)) or len(inputs) < 2 or \
            count is not None and len(inputs) != count:
        wanted = f"exactly {count}" if count else "at least 2"
        got = f"{len(inputs)}" if isinstance(inputs, (list, tuple)) else \
            f"a {type(inputs).__name__}"
        raise ValueError(f"{type(layer).__name__} '{layer.name}' takes a list of {wanted} "
                         f"inputs, got {got}")
    return [fw.convert_to_tensor(x) for x in inputs]


def _merged_shape(layer, shapes):
    """Keras's output shape of an elementwise merge (a None size against another is None), or
    one line naming the layer and the shapes that do not fit."""
    rank = max(len(s) for s in shapes)
    expanded = [(s[0], *(1,) * (rank - len(s)), *s[1:]) for s in shapes]
    out = list(expanded[0])
    for shape in expanded[1:]:
        for i, (size, other) in enumerate(zip(out, shape)):
            if size is None or other is None:
                out[i] = None
            elif size == 1 or other == 1:
                out[i] = other if size == 1 else size
            elif size != other:
                raise ValueError(f"{type(layer).__name__} '{layer.name}': inputs of shapes "
                                 f"{[tuple(s) for s in shapes]} do not broadcast")
    return tuple(out)


class _Merge(Layer):
    """An elementwise merge: ``_merge(inputs)`` on inputs of one rank."""

    count = None  # how many inputs it takes (None: two or more)

    def call(self, inputs):
        tensors = _several(self, inputs, self.count)
        _merged_shape(self, [t.shape for t in tensors])
        rank = max(t.ndim for t in tensors)
        tensors = [fw.reshape(t, (t.shape[0], *(1,) * (rank - t.ndim), *t.shape[1:]))
                   if t.ndim < rank else t for t in tensors]
        return self._merge(tensors)

    def compute_output_shape(self, input_shape):
        return _merged_shape(self, input_shape)


@LAYERS.register
class Add(_Merge):
    """The elementwise sum of the inputs."""

    def _merge(self, tensors):
        return reduce(fw.add, tensors)


@LAYERS.register
class Subtract(_Merge):
    """The first of two inputs minus the second."""

    count = 2

    def _merge(self, tensors):
        return fw.subtract(tensors[0], tensors[1])


@LAYERS.register
class Multiply(_Merge):
    """The elementwise product of the inputs."""

    def _merge(self, tensors):
        return reduce(fw.multiply, tensors)


@LAYERS.register
class Average(_Merge):
    """The elementwise mean of the inputs."""

    def _merge(self, tensors):
        return reduce(fw.add, tensors) / len(tensors)


@LAYERS.register
class Maximum(_Merge):
    """The elementwise maximum of the inputs (at a tie, the gradient goes to the earlier one,
    as TensorFlow's)."""

    def _merge(self, tensors):
        return reduce(fw.maximum, tensors)


@LAYERS.register
class Minimum(_Merge):
    """The elementwise minimum of the inputs."""

    def _merge(self, tensors):
        return reduce(fw.minimum, tensors)


@LAYERS.register
class Concatenate(Layer):
    """The inputs joined along ``axis``; the other sizes must agree."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def call(self, inputs):
        return fw.concat(_several(self, inputs), axis=self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


@LAYERS.register
class Dot(Layer):
    """The dot product of two inputs along ``axes`` (one axis of each: an int for both, or a
    pair), example by example: Keras's ``batch_dot``. The output has the other axes of the
    first input, then those of the second (``(batch, 1)`` when none is left).
    ``normalize=True`` takes the cosine proximity: each input L2-normalized along its axis
    first, as Keras's ``x * min(rsqrt(sum(x ** 2)), 1 / epsilon)`` with ``epsilon = 1e-7``."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int) or isinstance(axes, bool):
            if not isinstance(axes, (list, tuple)):
                raise TypeError(f"Dot: axes must be an int or a list of 2 ints, got {axes!r}")
            if len(axes) != 2 or not all(isinstance(a, int) and not isinstance(a, bool)
                                         for a in axes):
                raise ValueError(f"Dot: axes must be an int or a list of 2 ints, got {axes!r}")
        self.axes = axes if isinstance(axes, int) else list(axes)
        self.normalize = bool(normalize)

    def _axes(self, shapes):
        """The two axes, non-negative, checked against ``shapes``."""
        pair = (self.axes, self.axes) if isinstance(self.axes, int) else self.axes
        axes = []
        for axis, shape in zip(pair, shapes):
            if len(shape) < 2 or not -len(shape) <= axis < len(shape) or axis % len(shape) == 0:
                raise ValueError(f"Dot '{self.name}': axes {self.axes} do not fit inputs of "
                                 f"shapes {[tuple(s) for s in shapes]} (each needs an axis "
                                 f"after the batch axis)")
            axes.append(axis % len(shape))
        first, second = (shapes[0][axes[0]], shapes[1][axes[1]])
        if first is not None and second is not None and first != second:
            raise ValueError(f"Dot '{self.name}': axis {axes[0]} of the first input has size "
                             f"{first}, axis {axes[1]} of the second {second} (shapes "
                             f"{[tuple(s) for s in shapes]})")
        return axes

    def call(self, inputs):
        x, y = _several(self, inputs, 2)
        a, b = self._axes([x.shape, y.shape])
        out_shape = self.compute_output_shape([x.shape, y.shape])
        if self.normalize:
            x = fw.math.l2_normalize(x, axis=a, epsilon=1e-14)
            y = fw.math.l2_normalize(y, axis=b, epsilon=1e-14)
        x = fw.transpose(x, [i for i in range(x.ndim) if i != a] + [a])  # (batch, ..., d)
        y = fw.transpose(y, [0, b] + [i for i in range(1, y.ndim) if i != b])  # (batch, d, ...)
        batch, size = x.shape[0], x.shape[-1]
        product = fw.matmul(fw.reshape(x, (batch, -1, size)), fw.reshape(y, (batch, size, -1)))
        return fw.reshape(product, (batch,) + out_shape[1:])

    def compute_output_shape(self, input_shape):
        first, second = (list(s) for s in input_shape)
        a, b = self._axes([first, second])
        shape = [d for i, d in enumerate(first) if i != a] + \
            [d for i, d in enumerate(second) if i not in (0, b)]
        return tuple(shape) if len(shape) > 1 else (shape[0], 1)

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def _applied(layer):
    """Keras's functional form of a merge layer: ``add(inputs, **kwargs)`` is
    ``Add(**kwargs)(inputs)``."""
    def merge(inputs, **kwargs):
        return layer(**kwargs)(inputs)
    merge.__name__ = merge.__qualname__ = layer.__name__.lower()
    merge.__doc__ = f"``{layer.__name__}(**kwargs)(inputs)``."
    return merge


add, subtract, multiply, average, maximum, minimum = map(
    _applied, (Add, Subtract, Multiply, Average, Maximum, Minimum))


def concatenate(inputs, axis=-1, **kwargs):
    """``Concatenate(axis, **kwargs)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, **kwargs):
    """``Dot(axes, **kwargs)(inputs)``."""
    return Dot(axes=axes, **kwargs)(inputs)
