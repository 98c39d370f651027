"""Keras's reshaping layers beside ``Flatten`` and ``Reshape``: ``Permute``, ``RepeatVector``,
``ZeroPadding1D/2D``, ``Cropping1D/2D`` and ``UpSampling1D/2D``, with Keras 3's arguments,
defaults and config keys, over ``fw.transpose``, ``fw.pad``, slicing, ``fw.repeat`` and
``fw.image.resize`` (so tapes differentiate them and ``fw.function`` traces them).

The spatial axes are those after the batch axis ("channels_last", the default) or after the
channels ("channels_first"); a size may be None in a functional model's ``Input``.
"""
import framework as fw
from framework.image import _resized  # (fw.image.resize in the images' own float dtype)

from .base import LAYERS, Layer


def _ints(value, count, what, layer):
    """An int, or ``count`` of them, as a ``count``-tuple of non-negative ints (Keras's
    ``standardize_tuple(..., allow_zero=True)``)."""
    values = (value,) * count if isinstance(value, int) else value
    try:
        values = tuple(values)
    except TypeError:
        values = None
    if values is None or len(values) != count or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise ValueError(f"{layer}: {what} must be a non-negative int or a tuple of {count} of "
                         f"them, got {value!r}")
    return values


def _pairs(value, what, layer):
    """Keras's 2-D padding or cropping: an int, ``(height, width)`` or
    ``((top, bottom), (left, right))``, as the last."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (_ints(value, 2, what, layer),) * 2
    if not hasattr(value, "__len__") or len(value) != 2:
        raise ValueError(f"{layer}: {what} must be an int, a tuple of 2 ints or a tuple of 2 "
                         f"tuples of 2 ints, got {value!r}")
    return tuple(_ints(v, 2, what, layer) for v in value)


def _data_format(data_format, layer):
    if data_format is None:
        return "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"{layer}: data_format must be 'channels_last' or 'channels_first', "
                         f"got {data_format!r}")
    return data_format


def _check_rank(layer, shape, rank):
    """Keras's ``InputSpec(ndim=rank)``, as one line naming the layer."""
    if len(shape) != rank:
        raise ValueError(f"{type(layer).__name__} '{layer.name}' takes inputs of rank {rank}, "
                         f"got shape {tuple(shape)}")


def _positive_int(value, what):
    """Keras's check: a TypeError for a non-integer, a ValueError for one below 1."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")


def _grown(size, change):
    return None if size is None else size + change


class _Spatial(Layer):
    """A layer acting on ``rank`` spatial axes: where they are, by ``data_format``."""

    rank = None

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format, type(self).__name__)

    @property
    def _first_axis(self):
        """The first spatial axis."""
        return 2 if self.data_format == "channels_first" else 1

    def _map_spatial(self, shape, change):
        """``shape`` with ``change(size, i)`` for each spatial axis ``i``."""
        _check_rank(self, shape, self.rank + 2)
        out, first = list(shape), self._first_axis
        for i in range(self.rank):
            out[first + i] = change(shape[first + i], i)
        return tuple(out)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


@LAYERS.register
class Permute(Layer):
    """The axes after the batch axis reordered by ``dims`` (counted from 1): ``(2, 1)`` swaps
    the two axes of a sequence's ``(steps, features)``."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(dims, (list, tuple)) or not all(isinstance(d, int) for d in dims) or \
                sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(f"Permute: dims must be a permutation of 1..n (the axes after the "
                             f"batch axis, counted from 1), got {dims!r}")
        self.dims = tuple(dims)

    def call(self, inputs):
        _check_rank(self, inputs.shape, len(self.dims) + 1)
        return fw.transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, len(self.dims) + 1)
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}


@LAYERS.register
class RepeatVector(Layer):
    """Each ``(batch, features)`` row repeated ``n`` times: ``(batch, n, features)``."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        _positive_int(n, "RepeatVector: n")
        self.n = n

    def call(self, inputs):
        _check_rank(self, inputs.shape, 2)
        return fw.repeat(fw.expand_dims(inputs, 1), self.n, axis=1)

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, 2)
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}


class _ZeroPadding(_Spatial):
    """Zeros added before and after each spatial axis: ``padding[i] = (before, after)``."""

    def call(self, inputs):
        _check_rank(self, inputs.shape, self.rank + 2)
        widths = [(0, 0)] * (self.rank + 2)
        widths[self._first_axis:self._first_axis + self.rank] = self.padding
        return fw.pad(inputs, widths)

    def compute_output_shape(self, input_shape):
        return self._map_spatial(input_shape, lambda size, i: _grown(size, sum(self.padding[i])))

    def get_config(self):
        padding = self.padding[0] if self.rank == 1 else self.padding
        return {**super().get_config(), "padding": padding}


@LAYERS.register
class ZeroPadding1D(_ZeroPadding):
    """Zeros before and after the steps of ``(batch, steps, features)``: ``padding`` is an
    int or ``(before, after)``."""

    rank = 1

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(data_format, **kwargs)
        self.padding = (_ints(padding, 2, "padding", "ZeroPadding1D"),)


@LAYERS.register
class ZeroPadding2D(_ZeroPadding):
    """Rows and columns of zeros around images: ``padding`` is an int, ``(rows, columns)`` on
    both sides, or ``((top, bottom), (left, right))``."""

    rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(data_format, **kwargs)
        self.padding = _pairs(padding, "padding", "ZeroPadding2D")


class _Cropping(_Spatial):
    """Entries removed at the start and end of each spatial axis: ``cropping[i] = (start,
    end)``; at least one must remain."""

    def _cropped(self, shape):
        def remaining(size, i):
            if size is not None and sum(self.cropping[i]) >= size:
                raise ValueError(f"{type(self).__name__} '{self.name}': cropping "
                                 f"{self.cropping[i]} leaves nothing of an axis of size {size} "
                                 f"(input shape {tuple(shape)})")
            return _grown(size, -sum(self.cropping[i]))
        return self._map_spatial(shape, remaining)

    def call(self, inputs):
        self._cropped(inputs.shape)
        index = [slice(None)] * inputs.ndim
        for i, (start, end) in enumerate(self.cropping):
            index[self._first_axis + i] = slice(start, inputs.shape[self._first_axis + i] - end)
        return inputs[tuple(index)]

    def compute_output_shape(self, input_shape):
        return self._cropped(input_shape)

    def get_config(self):
        cropping = self.cropping[0] if self.rank == 1 else self.cropping
        return {**super().get_config(), "cropping": cropping}


@LAYERS.register
class Cropping1D(_Cropping):
    """Steps removed from the start and end of ``(batch, steps, features)``: ``cropping`` is
    an int or ``(start, end)``."""

    rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(None, **kwargs)
        self.cropping = (_ints(cropping, 2, "cropping", "Cropping1D"),)

    def get_config(self):  # (Keras's Cropping1D has no data_format)
        config = super().get_config()
        del config["data_format"]
        return config


@LAYERS.register
class Cropping2D(_Cropping):
    """Rows and columns removed from images: ``cropping`` is an int, ``(rows, columns)`` on
    both sides, or ``((top, bottom), (left, right))``."""

    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(data_format, **kwargs)
        self.cropping = _pairs(cropping, "cropping", "Cropping2D")


@LAYERS.register
class UpSampling1D(Layer):
    """Each step of ``(batch, steps, features)`` repeated ``size`` times."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        _positive_int(size, "UpSampling1D: size")
        self.size = size

    def call(self, inputs):
        _check_rank(self, inputs.shape, 3)
        return fw.repeat(inputs, self.size, axis=1)

    def compute_output_shape(self, input_shape):
        _check_rank(self, input_shape, 3)
        steps = input_shape[1]
        return (input_shape[0], None if steps is None else steps * self.size, input_shape[2])

    def get_config(self):
        return {**super().get_config(), "size": self.size}


@LAYERS.register
class UpSampling2D(_Spatial):
    """Images enlarged by ``size = (rows, columns)`` factors: each pixel repeated
    (``interpolation="nearest"``) or interpolated as ``fw.image.resize`` does ("bilinear",
    "bicubic", "lanczos3", "lanczos5", "area"), as Keras's ``ops.image.resize``, keeping a
    float64 layer's dtype."""

    rank = 2
    _INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "lanczos3", "lanczos5", "area")

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(data_format, **kwargs)
        self.size = _ints(size, 2, "size", "UpSampling2D")
        if 0 in self.size:
            raise ValueError(f"UpSampling2D: size must be a positive int or a tuple of 2 of "
                             f"them, got {size!r}")
        interpolation = str(interpolation).lower()
        if interpolation not in self._INTERPOLATIONS:
            raise ValueError(f"UpSampling2D: interpolation must be one of "
                             f"{', '.join(self._INTERPOLATIONS)}, got {interpolation!r}")
        self.interpolation = interpolation

    def call(self, inputs):
        _check_rank(self, inputs.shape, 4)
        channels_first = self.data_format == "channels_first"
        x = fw.transpose(inputs, (0, 2, 3, 1)) if channels_first else inputs
        if self.interpolation == "nearest":
            x = fw.repeat(fw.repeat(x, self.size[0], axis=1), self.size[1], axis=2)
        else:
            size = (x.shape[1] * self.size[0], x.shape[2] * self.size[1])
            x = _resized(x, *size, self.interpolation)
        return fw.transpose(x, (0, 3, 1, 2)) if channels_first else x

    def compute_output_shape(self, input_shape):
        return self._map_spatial(
            input_shape, lambda size, i: None if size is None else size * self.size[i])

    def get_config(self):
        return {**super().get_config(), "size": self.size, "interpolation": self.interpolation}
