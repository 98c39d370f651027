"""The core layers: ``Dense``, ``Flatten``, ``Reshape``, ``Dropout``, ``Identity`` and
``Rescaling``, with Keras's arguments and numbers."""
import math

import numpy as np

import framework as fw
from framework.engine import backend
from framework.engine.tensor import wrap
from framework.engine.context import replayed

from . import activations, constraints, initializers, regularizers
from .base import LAYERS, Layer, serialized


_RELUS = (activations.relu, fw.nn.relu)


class KernelLayer(Layer):
    """A layer with a kernel and an optional bias (``Dense``, ``Conv2D``): Keras's arguments
    for them (the activation, ``use_bias``, the initializers and regularizers), the two
    weights and their config. The constraints are applied by an optimizer after each update."""

    def __init__(self, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.kernel = None
        self.bias = None

    def _add_kernel_and_bias(self, kernel_shape, outputs=None):
        """The kernel, and when ``use_bias`` a bias for the ``outputs`` (default: the kernel's
        last dimension)."""
        self.kernel = self.add_weight("kernel", kernel_shape, self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (outputs or kernel_shape[-1],),
                                        self.bias_initializer, regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def get_config(self):
        return {**super().get_config(),
                "activation": serialized(activations.ACTIVATIONS, self.activation),
                "use_bias": self.use_bias,
                "kernel_initializer": serialized(initializers.INITIALIZERS,
                                                 self.kernel_initializer),
                "bias_initializer": serialized(initializers.INITIALIZERS, self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint)}


@LAYERS.register
class Dense(KernelLayer):
    """``activation(inputs @ kernel + bias)``, on the last axis of inputs of any rank.

    The kernel has shape ``(input_dim, units)``, created on the first call from the input's
    last dimension.
    """

    supports_masking = True  # (Keras's: a padding mask passes through to the next layer)

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 **kwargs):
        super().__init__(activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, **kwargs)
        if isinstance(units, bool) or int(units) != units or units <= 0:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        self.units = int(units)

    def build(self, input_shape):
        if not input_shape or input_shape[-1] is None:
            raise ValueError(f"Dense '{self.name}' needs inputs with a known last dimension, "
                             f"got input shape {input_shape}")
        self._add_kernel_and_bias((input_shape[-1], self.units))

    def _autocast(self, inputs):
        """Integer inputs (uint8 pixels) are cast to the layer's dtype too, as in Keras."""
        inputs = super()._autocast(inputs)
        if isinstance(inputs, fw.Tensor) and inputs.dtype.kind in "iub":
            return fw.cast(inputs, self.dtype)
        return inputs

    def call(self, inputs):
        activation = self.activation
        if self.bias is None:
            outputs = fw.matmul(inputs, self.kernel)
        elif activation in _RELUS:  # the product, the bias and the ReLU as one op
            return fw.nn.dense(inputs, self.kernel, self.bias, relu=True)
        else:
            outputs = fw.nn.dense(inputs, self.kernel, self.bias)
        return outputs if activation is activations.linear else activation(outputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


@LAYERS.register
class Flatten(Layer):
    """Every axis but the batch axis flattened into one: ``(batch, prod(rest))``."""

    def call(self, inputs):
        return fw.reshape(inputs, (inputs.shape[0], -1))

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        size = None if any(d is None for d in rest) else math.prod(rest)
        return (input_shape[0], size)


@LAYERS.register
class Reshape(Layer):
    """Every example reshaped to ``target_shape`` (one entry may be -1): ``(batch, *target)``."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1 or any(
                d < -1 or d == 0 for d in self.target_shape):
            raise ValueError(f"Reshape: target_shape takes positive sizes and at most one -1, "
                             f"got {target_shape!r}")

    def call(self, inputs):
        return fw.reshape(inputs, (inputs.shape[0],) + self.target_shape)

    def compute_output_shape(self, input_shape):
        if -1 not in self.target_shape:
            return (input_shape[0],) + self.target_shape
        rest = input_shape[1:]
        known = math.prod(d for d in self.target_shape if d != -1)
        missing = None if any(d is None for d in rest) else math.prod(rest) // known
        return (input_shape[0],) + tuple(missing if d == -1 else d for d in self.target_shape)

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}


@LAYERS.register
class Identity(Layer):
    """Its inputs, unchanged (a placeholder where a model needs a layer)."""

    supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape


@LAYERS.register
class Rescaling(Layer):
    """``inputs * scale + offset`` in the layer's dtype, in training and inference: pixels of
    ``[0, 255]`` become ``[0, 1]`` with ``scale=1/255``, ``[-1, 1]`` with ``scale=1/127.5,
    offset=-1``. ``scale`` and ``offset`` are numbers, or lists broadcast over the last axis
    (one per channel); integer inputs are cast first, as in Keras."""

    supports_masking = True

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        for what, value in (("scale", scale), ("offset", offset)):
            try:
                if value is None:
                    raise TypeError
                np.asarray(value, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"Rescaling: {what} must be a number or a list of numbers, "
                                 f"got {value!r}") from None
        self.scale, self.offset = scale, offset

    def call(self, inputs):
        scale = fw.constant(self.scale, dtype=self.dtype)
        offset = fw.constant(self.offset, dtype=self.dtype)
        return fw.cast(inputs, self.dtype) * scale + offset

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


@LAYERS.register
class Dropout(Layer):
    """In training, zero each input with probability ``rate`` and scale the rest by
    ``1 / (1 - rate)``; at inference (``training`` None or False), the identity.

    The masks come from ``fw.random``'s global generator (``fw.random.set_seed`` drives them),
    or, with ``seed``, from a generator of the layer's own: a reproducible sequence of masks.
    ``noise_shape`` shares one mask along the axes where it is 1 (None means the input's size).
    """

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate < 1:
            raise ValueError(f"{type(self).__name__}: rate must be in [0, 1), got {rate!r}")
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self._generator = None if seed is None else fw.random.generator(seed)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        shape = inputs.shape
        if self.noise_shape is not None:
            if len(self.noise_shape) != len(shape):
                raise ValueError(f"Dropout '{self.name}': noise_shape {self.noise_shape} does not "
                                 f"match inputs of shape {shape}")
            shape = tuple(s if n is None else n for s, n in zip(shape, self.noise_shape))
        return fw.multiply(inputs, _keep_scale(self._generator, shape, self.rate, inputs))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape,
                "seed": self.seed}


@replayed(draws=True)  # a traced fw.function draws a fresh mask on every call
def _keep_scale(generator, shape, rate, like):
    """Dropout's mask, scaled: ``1 / (1 - rate)`` where kept, 0 where dropped."""
    generator = generator or fw.random.generator()
    keep = generator.random(shape) >= rate
    scale = (keep / (1.0 - rate)).astype(like.dtype)
    return wrap(backend.array_module(like._value).asarray(scale))
