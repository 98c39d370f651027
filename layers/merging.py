"""Layers that merge several inputs: ``Concatenate`` and ``Add``, for functional models with
branches (Keras's arguments and names)."""
import framework as fw

from .base import LAYERS, Layer

__all__ = ["Add", "Concatenate"]


def _several(layer, inputs):
    if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
        raise ValueError(f"{type(layer).__name__} '{layer.name}' takes a list of at least 2 "
                         f"inputs, got {inputs!r:.80}")
    return [fw.convert_to_tensor(x) for x in inputs]


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
class Add(Layer):
    """The elementwise sum of the inputs."""

    def call(self, inputs):
        tensors = _several(self, inputs)
        total = tensors[0]
        for tensor in tensors[1:]:
            total = total + tensor
        return total
