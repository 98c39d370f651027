"""Activations as layers: ``Activation``, ``ReLU``, ``LeakyReLU``, ``ELU``, ``Softmax``, with
Keras's arguments and defaults. They have no weights; the maths is ``layers.activations``'."""
import framework as fw
from framework.ops.fused import masked_softmax

from . import activations
from .base import LAYERS, Layer, serialized

__all__ = ["ELU", "Activation", "LeakyReLU", "ReLU", "Softmax"]

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
