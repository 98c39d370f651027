"""Activations as layers: ``Activation``, ``ReLU``, ``LeakyReLU``, ``ELU``, ``Softmax``, with
Keras's arguments and defaults. They have no weights; the maths is ``layers.activations``'.
``PReLU`` learns its negative slope (a weight ``alpha``)."""
import framework as fw
from framework.ops.fused import masked_softmax

from . import activations, constraints, initializers, regularizers
from .base import LAYERS, Layer, serialized

__all__ = ["ELU", "Activation", "LeakyReLU", "PReLU", "ReLU", "Softmax"]

class _Elementwise(Layer):
    """A layer whose output has its input's shape (and its padding mask, as in Keras)."""

    supports_masking = True

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


def _non_negative(layer, **values):
    for name, value in values.items():
        if value is not None and not value >= 0:
            raise ValueError(f"{layer}: {name} cannot be negative (or NaN), got {value!r}")


@LAYERS.register
class Activation(_Elementwise):
    """``activation(inputs)``; the activation is a name (``"relu"``) or a callable."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def get_config(self):
        return {**super().get_config(),
                "activation": serialized(activations.ACTIVATIONS, self.activation)}


@LAYERS.register
class ReLU(_Elementwise):
    """``max(x, 0)``, clipped at ``max_value``; below ``threshold`` (0 at ``x == threshold``),
    ``negative_slope * (x - threshold)``."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        _non_negative("ReLU", max_value=max_value, negative_slope=negative_slope,
                      threshold=threshold)
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope = float(negative_slope)
        self.threshold = float(threshold)

    def call(self, inputs):
        return activations.relu(inputs, negative_slope=self.negative_slope,
                                max_value=self.max_value, threshold=self.threshold)

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value,
                "negative_slope": self.negative_slope, "threshold": self.threshold}


class _OneParameter(_Elementwise):
    """An activation with one float argument, named ``_parameter`` (the constructor's)."""

    _parameter = ""

    def call(self, inputs):
        return type(self)._function(inputs, **{self._parameter: getattr(self, self._parameter)})

    def get_config(self):
        return {**super().get_config(), self._parameter: getattr(self, self._parameter)}


@LAYERS.register
class LeakyReLU(_OneParameter):
    """``x`` where ``x > 0``, else ``negative_slope * x`` (0.3 by default, as Keras 3's layer)."""

    _parameter, _function = "negative_slope", staticmethod(activations.leaky_relu)

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:  # Keras 2's name, which Keras 3 still reads
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        _non_negative("LeakyReLU", negative_slope=negative_slope)
        self.negative_slope = float(negative_slope)


@LAYERS.register
class ELU(_OneParameter):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""

    _parameter, _function = "alpha", staticmethod(activations.elu)

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = float(alpha)


@LAYERS.register
class Softmax(_Elementwise):
    """``softmax`` along ``axis`` (an int, or a list of axes normalised together).

    ``mask`` (True, or a number above 0.5, where an entry counts; it broadcasts to the inputs)
    is Keras 3's: masked entries take -1e9 before the softmax and probability 0 after it.
    """

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else int(axis)

    def call(self, inputs, mask=None):
        axes = [self.axis] if isinstance(self.axis, int) else self.axis
        if mask is None:
            if len(axes) == 1:
                return fw.nn.softmax(inputs, axis=axes[0])
            return masked_softmax(inputs, None, axes)
        mask = fw.convert_to_tensor(mask)
        if len(mask.shape) > inputs.ndim or any(
                m not in (1, i) for m, i in zip(mask.shape[::-1], inputs.shape[::-1])):
            raise ValueError(f"Softmax '{self.name}': the mask must broadcast to the inputs "
                             f"{tuple(inputs.shape)} (each axis 1 or the inputs' size), got "
                             f"{tuple(mask.shape)}")
        if mask.dtype != fw.bool:
            mask = fw.greater(mask, fw.cast(0.5, mask.dtype))
        return masked_softmax(inputs, mask, axes)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


@LAYERS.register
class PReLU(Layer):
    """``x`` where ``x > 0``, else ``alpha * x``, with ``alpha`` a weight (one per input cell
    but the batch; shared, a single 1, along ``shared_axes``), as Keras 3's
    ``relu(x) - alpha * relu(-x)``."""

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        super().__init__(**kwargs)
        axes = [shared_axes] if isinstance(shared_axes, int) else shared_axes
        if axes is not None and not (isinstance(axes, (list, tuple)) and all(
                isinstance(a, int) and not isinstance(a, bool) and a >= 1 for a in axes)):
            raise ValueError(f"PReLU: shared_axes must be None, an axis >= 1 or a list of them, "
                             f"got {shared_axes!r}")
        self.shared_axes = None if axes is None else list(axes)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        self.alpha = None

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for axis in self.shared_axes or ():
            if axis >= len(input_shape):
                raise ValueError(f"PReLU '{self.name}': shared axis {axis} is out of range for "
                                 f"input shape {input_shape}")
            shape[axis - 1] = 1
        if None in shape:
            raise ValueError(f"PReLU '{self.name}' needs every unshared axis known, got input "
                             f"shape {input_shape}")
        self.alpha = self.add_weight("alpha", shape, self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)

    def call(self, inputs):
        return fw.nn.relu(inputs) - self.alpha * fw.nn.relu(-inputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(),
                "alpha_initializer": serialized(initializers.INITIALIZERS,
                                                self.alpha_initializer),
                "alpha_regularizer": regularizers.serialize(self.alpha_regularizer),
                "alpha_constraint": constraints.serialize(self.alpha_constraint),
                "shared_axes": self.shared_axes}
