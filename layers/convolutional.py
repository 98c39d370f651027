"""Keras's convolution layers on channels-last inputs: ``Conv2D`` (grouped too),
``Conv2DTranspose``, ``DepthwiseConv2D``, ``SeparableConv2D``, the 2-D pools and global pools on
NHWC images, and ``Conv1D``, ``Conv1DTranspose``, the 1-D pools and global pools on NWC
sequences, over ``fw.nn``'s convolutions and pools.

Keras's arguments, defaults and config keys; ``padding`` is "valid" or "same" (either case), and
for ``Conv1D`` also "causal" (the sequence padded on the left only: no output sees a later
step). A kernel has shape ``(kh, kw, in_channels, filters)`` (``(kw, in_channels, filters)`` in
1-D) and is created on the first call from the input's channels (Glorot-uniform over fans that
count the receptive field, as Keras's).
"""
import framework as fw
from framework.ops.convolution import conv2d_bias

from . import activations, constraints, initializers, regularizers
from .base import LAYERS, Layer, serialized
from .core import _RELUS, KernelLayer


def _sizes(value, rank, what, layer):
    """An int, or ``rank`` of them, as a ``rank``-tuple of positive ints."""
    values = (value,) * rank if isinstance(value, int) else tuple(value)
    if len(values) != rank or not all(isinstance(v, int) and v > 0 for v in values):
        raise ValueError(f"{layer}: {what} must be a positive int or {rank} of them, got "
                         f"{value!r}")
    return values


def _padding(padding, layer, modes=("valid", "same")):
    mode = str(padding).lower()
    if mode not in modes:
        raise ValueError(f"{layer}: padding must be {' or '.join(map(repr, modes))}, got "
                         f"{padding!r}")
    return mode


def _check_format(data_format, layer):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{layer}: only data_format='channels_last' is supported, got "
                         f"{data_format!r}")


def _set_window(layer, kernel_size, strides, padding, data_format, dilation_rate,
                paddings=("valid", "same")):
    """A convolution layer's ``kernel_size``, ``strides``, ``dilation_rate`` and ``padding``,
    checked (over ``layer.rank`` spatial axes)."""
    name, rank = type(layer).__name__, layer.rank
    _check_format(data_format, name)
    layer.kernel_size = _sizes(kernel_size, rank, "kernel_size", name)
    layer.strides = _sizes(strides, rank, "strides", name)
    layer.dilation_rate = _sizes(dilation_rate, rank, "dilation_rate", name)
    if max(layer.strides) > 1 and max(layer.dilation_rate) > 1:
        raise ValueError(f"{name}: strides and dilation_rate cannot both exceed 1")
    layer.padding = _padding(padding, name, paddings)


def _out_size(size, window, stride, padding, dilation=1):
    if size is None:
        return None
    if padding in ("same", "causal"):
        return -(-size // stride)
    return (size - (window - 1) * dilation - 1) // stride + 1


class _Conv(KernelLayer):
    """``activation(conv(inputs, kernel) + bias)`` with ``filters`` output channels, over
    ``rank`` spatial axes between the batch and the channels."""

    rank = None  # 1 or 2
    _conv = None  # fw.nn.conv1d or fw.nn.conv2d
    _biased = None  # the convolution, the bias and a ReLU as one op, where there is one
    _paddings = ("valid", "same")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, **kwargs)
        name, rank = type(self).__name__, self.rank
        if isinstance(filters, bool) or int(filters) != filters or filters <= 0:
            raise ValueError(f"{name}: filters must be a positive integer, got {filters!r}")
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0 or \
                filters % groups:
            raise ValueError(f"{name}: groups must be a positive int dividing filters={filters}, "
                             f"got {groups!r}")
        self.filters, self.groups = int(filters), groups
        _set_window(self, kernel_size, strides, padding, data_format, dilation_rate,
                    self._paddings)

    def build(self, input_shape):
        self._check_input(input_shape)
        if input_shape[-1] % self.groups:
            raise ValueError(f"{type(self).__name__} '{self.name}': groups={self.groups} does not "
                             f"divide the input's {input_shape[-1]} channels")
        self._add_kernel_and_bias(self.kernel_size + (input_shape[-1] // self.groups,
                                                      self.filters))

    def _check_input(self, input_shape):
        if len(input_shape) != self.rank + 2 or input_shape[-1] is None:
            axes = "steps" if self.rank == 1 else "height, width"
            raise ValueError(f"{type(self).__name__} '{self.name}' needs inputs (batch, {axes}, "
                             f"channels) with known channels, got input shape {input_shape}")

    def call(self, inputs):
        padding = self.padding.upper()
        if padding == "CAUSAL":  # every step's window ends at that step, as Keras pads it
            left = (self.kernel_size[0] - 1) * self.dilation_rate[0]
            inputs, padding = fw.pad(inputs, [[0, 0], [left, 0], [0, 0]]), "VALID"
        biased = type(self)._biased
        if self.bias is not None and biased is not None and self.groups == 1:  # one op, with the bias (and ReLU)
            relu = self.activation in _RELUS
            outputs = biased(inputs, self.kernel, self.bias, self.strides, padding,
                             dilations=self.dilation_rate, relu=relu)
            return outputs if relu or self.activation is activations.linear else \
                self.activation(outputs)
        outputs = self._convolve(inputs, padding)
        if self.bias is not None:
            outputs = fw.nn.bias_add(outputs, self.bias)
        return outputs if self.activation is activations.linear else self.activation(outputs)

    def _convolve(self, inputs, padding):
        """The convolution; with ``groups``, each group of input channels convolved with its
        slice of the filters, the results side by side (Keras's grouped convolution)."""
        conv = type(self)._conv
        if self.groups == 1:
            return conv(inputs, self.kernel, self.strides, padding, dilations=self.dilation_rate)
        pieces = zip(fw.split(inputs, self.groups, axis=-1),
                     fw.split(self.kernel, self.groups, axis=-1))
        return fw.concat([conv(x, w, self.strides, padding, dilations=self.dilation_rate)
                          for x, w in pieces], axis=-1)

    def compute_output_shape(self, input_shape):
        batch, *sizes, _ = input_shape
        return (batch, *(_out_size(n, k, s, self.padding, d) for n, k, s, d in zip(
            sizes, self.kernel_size, self.strides, self.dilation_rate)), self.filters)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate, "groups": self.groups}


@LAYERS.register
class Conv1D(_Conv):
    """The convolution over (batch, steps, channels) sequences; ``padding="causal"`` pads the
    left only, so no output sees a later step."""

    rank, _conv, _paddings = 1, fw.nn.conv1d, ("valid", "same", "causal")


@LAYERS.register
class Conv2D(_Conv):
    """The convolution over (batch, height, width, channels) images."""

    rank, _conv, _biased = 2, fw.nn.conv2d, conv2d_bias


def _transposed_size(size, kernel, stride, padding, output_padding, dilation):
    """Keras's output length of a transposed convolution."""
    if size is None:
        return None
    kernel = (kernel - 1) * dilation + 1
    if output_padding is None:
        return size * stride + (max(kernel - stride, 0) if padding == "valid" else 0)
    pad = kernel // 2 if padding == "same" else 0
    return (size - 1) * stride + kernel - 2 * pad + output_padding


class _Transposed(_Conv):
    """The transpose of a convolution (``fw.nn.conv2d_transpose``, a sequence as an image one
    row high): each input cell spreads over a ``kernel_size`` window of the output, windows
    ``strides`` apart (upsampling, as in a GAN's generator). The kernel has shape
    ``kernel_size + (filters, in_channels)``; Keras's output sizes (``output_padding`` extra
    cells at the end of each axis, below its stride)."""

    _biased, _paddings = None, ("valid", "same")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         1, activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, **kwargs)
        self.output_padding = None
        if output_padding is not None:
            rank, name = self.rank, type(self).__name__
            pads = (output_padding,) * rank if isinstance(output_padding, int) else tuple(
                output_padding)
            if len(pads) != rank or not all(isinstance(p, int) and 0 <= p < s
                                            for p, s in zip(pads, self.strides)):
                form = "a pair" if rank == 2 else "a tuple of one int"
                raise ValueError(f"{name}: output_padding must be an int or {form}, each "
                                 f"below its stride {self.strides}, got {output_padding!r}")
            self.output_padding = pads

    def build(self, input_shape):
        self._check_input(input_shape)
        self._add_kernel_and_bias(self.kernel_size + (self.filters, input_shape[-1]),
                                  outputs=self.filters)

    def _convolve(self, inputs, padding):
        if self.rank == 2:
            return fw.nn.conv2d_transpose(inputs, self.kernel, self.compute_output_shape(
                inputs.shape), self.strides, padding, dilations=self.dilation_rate)
        batch, steps, channels = self.compute_output_shape(inputs.shape)
        image = fw.nn.conv2d_transpose(
            fw.expand_dims(inputs, 1), fw.expand_dims(self.kernel, 0), (batch, 1, steps, channels),
            (1,) + self.strides, padding, dilations=(1,) + self.dilation_rate)
        return fw.squeeze(image, 1)

    def compute_output_shape(self, input_shape):
        batch, *sizes, _ = input_shape
        paddings = self.output_padding or (None,) * self.rank
        return (batch, *(_transposed_size(n, k, s, self.padding, p, d) for n, k, s, p, d in zip(
            sizes, self.kernel_size, self.strides, paddings, self.dilation_rate)), self.filters)

    def get_config(self):
        config = super().get_config()
        del config["groups"]
        return {**config, "output_padding": self.output_padding}


@LAYERS.register
class Conv2DTranspose(_Transposed, Conv2D):
    """The transpose of ``Conv2D``: kernel ``(kh, kw, filters, in_channels)``."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format,
                         dilation_rate, **kwargs)


@LAYERS.register
class Conv1DTranspose(_Transposed, Conv1D):
    """The transpose of ``Conv1D`` (Keras 3): kernel ``(kw, filters, in_channels)``."""


@LAYERS.register
class DepthwiseConv2D(KernelLayer):
    """Each input channel convolved with its own ``depth_multiplier`` filters
    (``fw.nn.depthwise_conv2d``): ``in * depth_multiplier`` output channels, channel ``k``'s
    ``depth_multiplier`` side by side. The kernel has shape ``(kh, kw, in, depth_multiplier)``
    (Keras's ``kernel``); its initializer, regularizer and constraint are Keras's
    ``depthwise_*`` arguments."""

    rank = 2

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, depthwise_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(activation, use_bias, depthwise_initializer, bias_initializer,
                         depthwise_regularizer, bias_regularizer, depthwise_constraint,
                         bias_constraint, **kwargs)
        name = type(self).__name__
        if isinstance(depth_multiplier, bool) or not isinstance(depth_multiplier, int) or \
                depth_multiplier <= 0:
            raise ValueError(f"{name}: depth_multiplier must be a positive int, got "
                             f"{depth_multiplier!r}")
        self.depth_multiplier = depth_multiplier
        _set_window(self, kernel_size, strides, padding, data_format, dilation_rate)

    _check_input = _Conv._check_input

    def build(self, input_shape):
        self._check_input(input_shape)
        self._add_kernel_and_bias(self.kernel_size + (input_shape[-1], self.depth_multiplier),
                                  outputs=input_shape[-1] * self.depth_multiplier)

    def _convolve(self, inputs):
        return fw.nn.depthwise_conv2d(inputs, self.kernel, self.strides, self.padding.upper(),
                                      dilations=self.dilation_rate)

    def call(self, inputs):
        outputs = self._convolve(inputs)
        if self.bias is not None:
            outputs = fw.nn.bias_add(outputs, self.bias)
        return outputs if self.activation is activations.linear else self.activation(outputs)

    def _channels(self, input_shape):
        return input_shape[-1] * self.depth_multiplier

    def compute_output_shape(self, input_shape):
        batch, *sizes, channels = input_shape
        return (batch, *(_out_size(n, k, s, self.padding, d) for n, k, s, d in zip(
            sizes, self.kernel_size, self.strides, self.dilation_rate)),
            self._channels(input_shape))

    def get_config(self):
        config = super().get_config()
        for part in ("initializer", "regularizer", "constraint"):
            config["depthwise_" + part] = config.pop("kernel_" + part)
        return {**config, "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "depth_multiplier": self.depth_multiplier,
                "data_format": "channels_last", "dilation_rate": self.dilation_rate}


@LAYERS.register
class SeparableConv2D(DepthwiseConv2D):
    """A ``DepthwiseConv2D`` (no bias) then a 1x1 convolution to ``filters`` channels
    (``fw.nn.separable_conv2d``), then the bias and the activation; Keras's weights
    ``depthwise_kernel`` (kh, kw, in, depth_multiplier), ``pointwise_kernel`` (1, 1, in *
    depth_multiplier, filters) and ``bias``."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, activation, use_bias, depthwise_initializer,
                         bias_initializer, depthwise_regularizer, bias_regularizer,
                         depthwise_constraint, bias_constraint, **kwargs)
        if isinstance(filters, bool) or not isinstance(filters, int) or filters <= 0:
            raise ValueError(f"SeparableConv2D: filters must be a positive int, got {filters!r}")
        self.filters = filters
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = constraints.get(pointwise_constraint)
        self.depthwise_kernel = self.pointwise_kernel = None

    def build(self, input_shape):
        self._check_input(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", self.kernel_size + (input_shape[-1], self.depth_multiplier),
            self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", (1, 1, input_shape[-1] * self.depth_multiplier, self.filters),
            self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def _convolve(self, inputs):
        return fw.nn.separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel,
                                      self.strides, self.padding.upper(),
                                      dilations=self.dilation_rate)

    def _channels(self, input_shape):
        return self.filters

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "pointwise_initializer": serialized(initializers.INITIALIZERS,
                                                    self.pointwise_initializer),
                "pointwise_regularizer": regularizers.serialize(self.pointwise_regularizer),
                "pointwise_constraint": constraints.serialize(self.pointwise_constraint)}


class _Pooling(Layer):
    """A pool over ``pool_size`` windows moved by ``strides`` (default: the pool size), over
    ``rank`` spatial axes."""

    rank = None
    _pool = None  # fw.nn.max_pool1d, avg_pool1d, max_pool2d or avg_pool2d

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        _check_format(data_format, name)
        self.pool_size = _sizes(pool_size, self.rank, "pool_size", name)
        self.strides = self.pool_size if strides is None else _sizes(strides, self.rank,
                                                                     "strides", name)
        self.padding = _padding(padding, name)

    def call(self, inputs):
        return type(self)._pool(inputs, self.pool_size, self.strides, self.padding.upper())

    def compute_output_shape(self, input_shape):
        batch, *sizes, channels = input_shape
        return (batch, *(_out_size(n, k, s, self.padding) for n, k, s in zip(
            sizes, self.pool_size, self.strides)), channels)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last"}


@LAYERS.register
class MaxPooling1D(_Pooling):
    """The maximum of each window of steps."""

    rank, _pool = 1, fw.nn.max_pool1d


@LAYERS.register
class AveragePooling1D(_Pooling):
    """The mean of each window of steps (with "same" padding, over the steps inside)."""

    rank, _pool = 1, fw.nn.avg_pool1d


@LAYERS.register
class MaxPooling2D(_Pooling):
    """The maximum of each window."""

    rank, _pool = 2, fw.nn.max_pool2d


@LAYERS.register
class AveragePooling2D(_Pooling):
    """The mean of each window (with "same" padding, over the cells inside the input)."""

    rank, _pool = 2, fw.nn.avg_pool2d


class _GlobalPooling(Layer):
    """A reduction over the ``rank`` spatial axes (kept as 1s with ``keepdims``)."""

    rank = None
    _reduce = None  # fw.reduce_mean or fw.reduce_max

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        _check_format(data_format, type(self).__name__)
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        return type(self)._reduce(inputs, axis=tuple(range(1, self.rank + 1)),
                                  keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        batch, channels = input_shape[0], input_shape[-1]
        return (batch, *(1,) * self.rank, channels) if self.keepdims else (batch, channels)

    def get_config(self):
        return {**super().get_config(), "data_format": "channels_last",
                "keepdims": self.keepdims}


@LAYERS.register
class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over the steps; with a padding mask (Keras's), over the unmasked steps only."""

    rank, _reduce = 1, fw.reduce_mean

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        weights = fw.expand_dims(fw.cast(mask, inputs.dtype), -1)
        return (fw.reduce_sum(inputs * weights, axis=1, keepdims=self.keepdims)
                / fw.reduce_sum(weights, axis=1, keepdims=self.keepdims))

    def compute_mask(self, inputs, previous_mask=None):
        return None


@LAYERS.register
class GlobalMaxPooling1D(_GlobalPooling):
    rank, _reduce = 1, fw.reduce_max


@LAYERS.register
class GlobalAveragePooling2D(_GlobalPooling):
    rank, _reduce = 2, fw.reduce_mean


@LAYERS.register
class GlobalMaxPooling2D(_GlobalPooling):
    rank, _reduce = 2, fw.reduce_max
