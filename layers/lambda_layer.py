"""``Lambda``: a function as a layer; and the operators of symbolic tensors.

``Lambda(lambda x: x * 2)`` wraps any function of tensors (without weights) as a layer. The
same mechanism gives symbolic tensors their arithmetic, as Keras 3 does: ``x + y``,
``x[:, :2]``, ``-x``, ``2.0 * x`` on the outputs of ``Input`` and of layer calls record an
operation in the functional graph (an operation, not one of the model's ``layers``).
"""
import operator

from .base import LAYERS, Layer
from .node import KerasTensor, symbolic_call
from .scope import unique_name

__all__ = ["Lambda"]


@LAYERS.register
class Lambda(Layer):
    """``function(inputs, **arguments)`` as a layer. ``output_shape`` (without the batch axis,
    or a function of the input shape) is what ``compute_output_shape`` answers; without it,
    the shape comes from running the function."""

    def __init__(self, function, output_shape=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda: function must be callable, got {function!r:.80}")
        self.function = function
        self.output_shape = output_shape
        self.arguments = dict(arguments or {})

    def call(self, inputs):
        return self.function(inputs, **self.arguments)

    def compute_output_shape(self, input_shape):
        if self.output_shape is None:
            return super().compute_output_shape(input_shape)
        if callable(self.output_shape):
            return tuple(self.output_shape(input_shape))
        return (input_shape[0], *self.output_shape)


class Operation(Layer):
    """One operator applied to symbolic tensors: ``function(*operands)``, where the operands
    are symbolic tensors or constants."""

    is_operation = True

    def __init__(self, function, name):
        super().__init__(name=unique_name(name))
        self.function = function

    def call(self, operands):
        return self.function(*operands)


def _operator(function, name, reflected=False):
    def apply(self, *others):
        operands = [*others, self] if reflected else [self, *others]
        return symbolic_call(Operation(function, name), operands, (), {})
    apply.__name__ = name
    return apply


def _install_operators():
    """Give ``KerasTensor`` Keras 3's arithmetic and indexing on symbolic tensors."""
    binary = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "truediv": operator.truediv, "pow": operator.pow, "matmul": operator.matmul}
    names = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
             "pow": "power", "matmul": "matmul"}
    for method, function in binary.items():
        setattr(KerasTensor, f"__{method}__", _operator(function, names[method]))
        setattr(KerasTensor, f"__r{method}__", _operator(function, names[method], True))
    KerasTensor.__neg__ = _operator(operator.neg, "negative")
    KerasTensor.__getitem__ = _operator(operator.getitem, "get_item")


_install_operators()
