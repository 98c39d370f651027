"""Containers: ``Sequential`` (a stack of layers) and ``MLP`` (a Sequential of Dense layers)."""
from framework.module import tracked_items

from .base import LAYERS, Layer
from .core import Dense, Flatten
from .model import Model
from .model_config import sequential_config, sequential_from_config
from .node import KerasTensor


@LAYERS.register
class Sequential(Model):
    """Layers applied one after another; each gets the ``training`` flag of the call.

    Its variables' structural paths are ``layers/<index>/...``, as the list is held in order.
    """

    _untracked_attributes = Model._untracked_attributes | {"_layers"}

    def __init__(self, layers=None, trainable=True, name=None, dtype=None):
        super().__init__(trainable=trainable, name=name, dtype=dtype)
        self._layers = []  # the first one's input_shape, if declared, becomes the model's
        for layer in layers or ():
            self.add(layer)

    @property
    def layers(self):
        return list(self._layers)

    def add(self, layer):
        """Append a layer; names must be unique within the model, as Keras requires.

        ``Input(shape)`` (or an ``InputLayer``) first declares the input shape, as in
        ``Sequential([Input((784,)), Dense(10)])``; it is not one of the ``layers``.
        """
        if isinstance(layer, KerasTensor) and layer.node is not None and layer.node.is_input:
            layer = layer.node.layer
        if getattr(layer, "is_input_layer", False):
            if self._layers or self._declared_input_shape is not None:
                raise ValueError(f"Sequential '{self.name}': an Input can only come first")
            self._declared_input_shape = layer.output.shape
            self._declared_input_dtype = layer.output.dtype  # (ids for an Embedding: int32)
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Sequential '{self.name}' takes layers, got {layer!r}")
        if any(existing.name == layer.name for existing in self._layers):
            raise ValueError(f"Sequential '{self.name}' already has a layer named "
                             f"'{layer.name}'; layer names in a model must be unique")
        if self.built:
            raise ValueError(f"Sequential '{self.name}' is already built (called, or built for "
                             f"summary or weights); add its layers before that")
        if not self._layers and self._declared_input_shape is None:
            self._declared_input_shape = layer._declared_input_shape
        self._layers.append(layer)
        if not self.trainable:
            layer.trainable = False

    def pop(self):
        """Remove and return the last layer."""
        if not self._layers:
            raise IndexError(f"Sequential '{self.name}' has no layers to pop")
        return self._layers.pop()

    def _attribute_items(self):
        yield from tracked_items(self._layers, "layers")
        yield from super()._attribute_items()

    def call(self, inputs, training=None):
        for layer in self._layers:  # (without training: each takes this one's, see scope)
            inputs = layer(inputs) if training is None else layer(inputs, training=training)
        return inputs

    def get_config(self):
        return sequential_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return sequential_from_config(cls, config, custom_objects)

    def compute_output_shape(self, input_shape):
        for layer in self._layers:
            input_shape = layer.compute_output_shape(input_shape)
        return tuple(input_shape)


@LAYERS.register
class MLP(Sequential):
    """A multi-layer perceptron: ``Flatten``, a ``Dense`` per entry of ``hidden_units`` with
    ``activation``, and a ``Dense(output_units, output_activation)``.

    Flattening first lets it take images as the seed tutorial's MLP does; on inputs that are
    already ``(batch, features)`` it is a free reshape. ``input_shape`` (without the batch
    axis) lets ``summary`` and ``get_weights`` work before the first call.
    """

    def __init__(self, hidden_units, output_units, activation="relu", output_activation=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", input_shape=None,
                 **kwargs):
        super().__init__(**kwargs)
        hidden_units = [hidden_units] if isinstance(hidden_units, int) else list(hidden_units)
        self.add(Flatten(input_shape=input_shape))
        for units in hidden_units:
            self.add(Dense(units, activation, kernel_initializer=kernel_initializer,
                           bias_initializer=bias_initializer))
        self.add(Dense(output_units, output_activation, kernel_initializer=kernel_initializer,
                       bias_initializer=bias_initializer))
