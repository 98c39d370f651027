"""Keras's convolution layers on channels-last inputs: ``Conv2D``, ``Conv2DTranspose``, the 2-D
pools and global pools on NHWC images, and ``Conv1D``, the 1-D pools and global pools on NWC
sequences, over ``fw.nn``'s convolutions and pools.

Keras's arguments, defaults and config keys; ``padding`` is "valid" or "same" (either case), and
for ``Conv1D`` also "causal" (the sequence padded on the left only: no output sees a later
step). A kernel has shape ``(kh, kw, in_channels, filters)`` (``(kw, in_channels, filters)`` in
1-D) and is created on the first call from the input's channels (Glorot-uniform over fans that
count the receptive field, as Keras's).
"""
import framework as fw

from . import activations
from .base import LAYERS, Layer
from .core import KernelLayer


def _pair(value, what, layer):
    values = (value, value) if isinstance(value, int) else tuple(value)
    if len(values) != 2 or not all(isinstance(v, int) and v > 0 for v in values):
        raise ValueError(f"{layer}: {what} must be a positive int or a pair of them, got "
                         f"{value!r}")
    return values


def _single(value, what, layer):
    values = (value,) if isinstance(value, int) else tuple(value)
    if len(values) != 1 or not all(isinstance(v, int) and v > 0 for v in values):
        raise ValueError(f"{layer}: {what} must be a positive int or a 1-tuple, got {value!r}")
    return values


def _padding(padding, layer, modes=("valid", "same")):
    mode = str(padding).lower()
    if mode not in modes:
        raise ValueError(f"{layer}: padding must be {' or '.join(map(repr, modes))}, got "
                         f"{padding!r}")
    return mode


def _check_format(data_format, layer):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{layer}: only data_format='channels_last' (NHWC) is supported, got "
                         f"{data_format!r}")


def _out_size(size, window, stride, padding, dilation=1):
    if size is None:
        return None
    if padding in ("same", "causal"):
        return -(-size // stride)
    return (size - (window - 1) * dilation - 1) // stride + 1


@LAYERS.register
class Conv2D(KernelLayer):
    """``activation(conv2d(inputs, kernel) + bias)`` with ``filters`` output channels."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, **kwargs)
        if isinstance(filters, bool) or int(filters) != filters or filters <= 0:
            raise ValueError(f"Conv2D: filters must be a positive integer, got {filters!r}")
        if groups != 1:
            raise ValueError(f"Conv2D: only groups=1 is supported, got {groups!r}")
        _check_format(data_format, "Conv2D")
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size", "Conv2D")
        self.strides = _pair(strides, "strides", "Conv2D")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate", "Conv2D")
        if self.strides != (1, 1) and self.dilation_rate != (1, 1):
            raise ValueError("Conv2D: strides and dilation_rate cannot both exceed 1")
        self.padding = _padding(padding, "Conv2D")

    def build(self, input_shape):
        if len(input_shape) != 4 or input_shape[-1] is None:
            raise ValueError(f"Conv2D '{self.name}' needs inputs (batch, height, width, "
                             f"channels) with known channels, got input shape {input_shape}")
        self._add_kernel_and_bias(self.kernel_size + (input_shape[-1], self.filters))

    def call(self, inputs):
        outputs = fw.nn.conv2d(inputs, self.kernel, self.strides, self.padding.upper(),
                               dilations=self.dilation_rate)
        if self.bias is not None:
            outputs = fw.nn.bias_add(outputs, self.bias)
        return outputs if self.activation is activations.linear else self.activation(outputs)

    def compute_output_shape(self, input_shape):
        batch, height, width, _ = input_shape
        return (batch, *(_out_size(n, k, s, self.padding, d) for n, k, s, d in zip(
            (height, width), self.kernel_size, self.strides, self.dilation_rate)), self.filters)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate, "groups": 1}


def _transposed_size(size, kernel, stride, padding, output_padding, dilation):
    """Keras's output length of a transposed convolution."""
    if size is None:
        return None
    kernel = (kernel - 1) * dilation + 1
    if output_padding is None:
        return size * stride + (max(kernel - stride, 0) if padding == "valid" else 0)
    pad = kernel // 2 if padding == "same" else 0
    return (size - 1) * stride + kernel - 2 * pad + output_padding


@LAYERS.register
class Conv2DTranspose(Conv2D):
    """The transpose of ``Conv2D`` (``fw.nn.conv2d_transpose``): each input cell spreads over a
    ``kernel_size`` window of the output, windows ``strides`` apart (upsampling, as in a
    GAN's generator). The kernel has shape ``(kh, kw, filters, in_channels)``."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         1, activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, **kwargs)
        self.output_padding = None
        if output_padding is not None:
            pads = (output_padding,) * 2 if isinstance(output_padding, int) else tuple(
                output_padding)
            if len(pads) != 2 or not all(isinstance(p, int) and 0 <= p < s
                                         for p, s in zip(pads, self.strides)):
                raise ValueError(f"Conv2DTranspose: output_padding must be an int or a pair, "
                                 f"each below its stride {self.strides}, got {output_padding!r}")
            self.output_padding = pads

    def build(self, input_shape):
        if len(input_shape) != 4 or input_shape[-1] is None:
            raise ValueError(f"Conv2DTranspose '{self.name}' needs inputs (batch, height, "
                             f"width, channels) with known channels, got {input_shape}")
        self._add_kernel_and_bias(self.kernel_size + (self.filters, input_shape[-1]),
                                  outputs=self.filters)

    def call(self, inputs):
        shape = self.compute_output_shape(inputs.shape)
        outputs = fw.nn.conv2d_transpose(inputs, self.kernel, shape, self.strides,
                                         self.padding.upper(), dilations=self.dilation_rate)
        if self.bias is not None:
            outputs = fw.nn.bias_add(outputs, self.bias)
        return outputs if self.activation is activations.linear else self.activation(outputs)

    def compute_output_shape(self, input_shape):
        batch, height, width, _ = input_shape
        paddings = self.output_padding or (None, None)
        return (batch, *(_transposed_size(n, k, s, self.padding, p, d) for n, k, s, p, d in zip(
            (height, width), self.kernel_size, self.strides, paddings, self.dilation_rate)),
            self.filters)

    def get_config(self):
        config = super().get_config()
        del config["groups"]
        return {**config, "output_padding": self.output_padding}


class _Pooling2D(Layer):
    """A pool over ``pool_size`` windows moved by ``strides`` (default: the pool size)."""

    _pool = None  # fw.nn.max_pool2d or fw.nn.avg_pool2d

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        _check_format(data_format, name)
        self.pool_size = _pair(pool_size, "pool_size", name)
        self.strides = self.pool_size if strides is None else _pair(strides, "strides", name)
        self.padding = _padding(padding, name)

    def call(self, inputs):
        return type(self)._pool(inputs, self.pool_size, self.strides, self.padding.upper())

    def compute_output_shape(self, input_shape):
        batch, height, width, channels = input_shape
        return (batch, *(_out_size(n, k, s, self.padding) for n, k, s in zip(
            (height, width), self.pool_size, self.strides)), channels)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last"}


@LAYERS.register
class MaxPooling2D(_Pooling2D):
    """The maximum of each window."""

    _pool = fw.nn.max_pool2d


@LAYERS.register
class AveragePooling2D(_Pooling2D):
    """The mean of each window (with "same" padding, over the cells inside the input)."""

    _pool = fw.nn.avg_pool2d


class _GlobalPooling2D(Layer):
    """A reduction over the height and width axes (kept as 1s with ``keepdims``)."""

    _reduce = None  # fw.reduce_mean or fw.reduce_max

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        _check_format(data_format, type(self).__name__)
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        return type(self)._reduce(inputs, axis=(1, 2), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        batch, _, _, channels = input_shape
        return (batch, 1, 1, channels) if self.keepdims else (batch, channels)

    def get_config(self):
        return {**super().get_config(), "data_format": "channels_last",
                "keepdims": self.keepdims}


@LAYERS.register
class GlobalAveragePooling2D(_GlobalPooling2D):
    _reduce = fw.reduce_mean


@LAYERS.register
class GlobalMaxPooling2D(_GlobalPooling2D):
    _reduce = fw.reduce_max


@LAYERS.register
class Conv1D(KernelLayer):
    """``activation(conv1d(inputs, kernel) + bias)`` over (batch, steps, channels) inputs."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, **kwargs)
        if isinstance(filters, bool) or int(filters) != filters or filters <= 0:
            raise ValueError(f"Conv1D: filters must be a positive integer, got {filters!r}")
        if groups != 1:
            raise ValueError(f"Conv1D: only groups=1 is supported, got {groups!r}")
        _check_format(data_format, "Conv1D")
        self.filters = int(filters)
        self.kernel_size = _single(kernel_size, "kernel_size", "Conv1D")
        self.strides = _single(strides, "strides", "Conv1D")
        self.dilation_rate = _single(dilation_rate, "dilation_rate", "Conv1D")
        if self.strides != (1,) and self.dilation_rate != (1,):
            raise ValueError("Conv1D: strides and dilation_rate cannot both exceed 1")
        self.padding = _padding(padding, "Conv1D", ("valid", "same", "causal"))

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(f"Conv1D '{self.name}' needs inputs (batch, steps, channels) with "
                             f"known channels, got input shape {input_shape}")
        self._add_kernel_and_bias(self.kernel_size + (input_shape[-1], self.filters))

    def call(self, inputs):
        padding = self.padding.upper()
        if padding == "CAUSAL":  # every step's window ends at that step, as Keras pads it
            left = (self.kernel_size[0] - 1) * self.dilation_rate[0]
            inputs, padding = fw.pad(inputs, [[0, 0], [left, 0], [0, 0]]), "VALID"
        outputs = fw.nn.conv1d(inputs, self.kernel, self.strides[0], padding,
                               dilations=self.dilation_rate[0])
        if self.bias is not None:
            outputs = fw.nn.bias_add(outputs, self.bias)
        return outputs if self.activation is activations.linear else self.activation(outputs)

    def compute_output_shape(self, input_shape):
        batch, steps, _ = input_shape
        return (batch, _out_size(steps, self.kernel_size[0], self.strides[0], self.padding,
                                 self.dilation_rate[0]), self.filters)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate, "groups": 1}


class _Pooling1D(Layer):
    """A pool over windows of ``pool_size`` steps moved by ``strides`` (default: the pool
    size)."""

    _pool = None  # fw.nn.max_pool1d or fw.nn.avg_pool1d

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        _check_format(data_format, name)
        self.pool_size = _single(pool_size, "pool_size", name)
        self.strides = self.pool_size if strides is None else _single(strides, "strides", name)
        self.padding = _padding(padding, name)

    def call(self, inputs):
        return type(self)._pool(inputs, self.pool_size[0], self.strides[0],
                                self.padding.upper())

    def compute_output_shape(self, input_shape):
        batch, steps, channels = input_shape
        return (batch, _out_size(steps, self.pool_size[0], self.strides[0], self.padding),
                channels)

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": "channels_last"}


@LAYERS.register
class MaxPooling1D(_Pooling1D):
    """The maximum of each window."""

    _pool = fw.nn.max_pool1d


@LAYERS.register
class AveragePooling1D(_Pooling1D):
    """The mean of each window (with "same" padding, over the steps inside the input)."""

    _pool = fw.nn.avg_pool1d


class _GlobalPooling1D(_GlobalPooling2D):
    """A reduction over the steps axis (kept as 1 with ``keepdims``)."""

    def call(self, inputs):
        return type(self)._reduce(inputs, axis=1, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        batch, _, channels = input_shape
        return (batch, 1, channels) if self.keepdims else (batch, channels)


@LAYERS.register
class GlobalAveragePooling1D(_GlobalPooling1D):
    _reduce = fw.reduce_mean


@LAYERS.register
class GlobalMaxPooling1D(_GlobalPooling1D):
    _reduce = fw.reduce_max
