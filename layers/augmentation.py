"""Keras 3's image preprocessing layers: ``Resizing`` and ``CenterCrop`` (deterministic, in
training and inference), and the augmentations ``RandomFlip``, ``RandomContrast``,
``RandomRotation``, ``RandomZoom`` and ``RandomTranslation``, which draw when training and are
the identity at inference (``predict``, ``evaluate``, or a call with ``training=False``). As
in Keras 3, their ``training`` defaults to True: a direct call ``layer(images)``, or a
model's ``model(images)`` that does not say, augments. Images are ``[batch,] height, width,
channels`` (``channels_last``, the only layout here); outputs are in the layer's dtype
(float32), as Keras.

The augmentations draw with ``fw.random`` (the global generator, which ``fw.random.set_seed``
drives, or with ``seed`` a ``fw.random.Generator`` of the layer's own), so a traced
``fw.function`` draws afresh on every call; their random numbers are not Keras's (the
distributions are). Given one transform, the geometric ones give Keras's pixels exactly:
TensorFlow's projective transform, written with ops (``_transformed``).
"""
import numpy as np

import framework as fw

from .base import LAYERS, Layer


def _image_rank(layer, shape):
    if len(shape) not in (3, 4):
        raise ValueError(f"{type(layer).__name__} '{layer.name}' takes images of rank 3 or 4 "
                         f"(height, width, channels, with an optional batch axis first), got "
                         f"shape {tuple(shape)}")


def _channels_last(data_format, layer):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{layer}: data_format must be 'channels_last' (the only layout "
                         f"supported), got {data_format!r}")
    return "channels_last"


def _size(value, what, layer):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{layer}: {what} must be a positive integer, got {value!r}")
    return value


def _crop(images, top, left, height, width):
    """The window ``[top:top+height, left:left+width]`` of each image (a slice: an op)."""
    window = (slice(top, top + height), slice(left, left + width), slice(None))
    return images[window if images.shape.rank == 3 else (slice(None),) + window]


def _aspect_crop(images, height, width):
    """Keras's ``smart_resize`` crop: the largest central window of the target's aspect
    ratio."""
    in_height, in_width = images.shape[-3], images.shape[-2]
    crop_height = max(min(in_height, int(float(in_width * height) / width)), 1)
    crop_width = max(min(in_width, int(float(in_height * width) / height)), 1)
    return _crop(images, int(float(in_height - crop_height) / 2),
                 int(float(in_width - crop_width) / 2), crop_height, crop_width)


@LAYERS.register
class Resizing(Layer):
    """Images resized to ``height`` x ``width`` by ``fw.image.resize`` with
    ``interpolation``; with ``crop_to_aspect_ratio=True``, first cropped to the largest
    central window of the target's aspect ratio (Keras's ``smart_resize``), so nothing is
    stretched. ``pad_to_aspect_ratio`` and ``antialias`` are not supported."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0,
                 antialias=False, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height, self.width = (_size(v, w, "Resizing") for v, w in
                                   ((height, "height"), (width, "width")))
        if interpolation not in ("bilinear", "nearest", "bicubic", "area", "lanczos3",
                                 "lanczos5", "gaussian", "mitchellcubic"):
            raise ValueError(f"Resizing: interpolation {interpolation!r} is not one of "
                             f"bilinear, nearest, bicubic, area, lanczos3, lanczos5")
        for what, value in (("pad_to_aspect_ratio", pad_to_aspect_ratio),
                            ("antialias", antialias)):
            if value:
                raise ValueError(f"Resizing: {what}=True is not supported")
        self.interpolation, self.crop_to_aspect_ratio = interpolation, bool(crop_to_aspect_ratio)
        self.fill_mode, self.fill_value = fill_mode, fill_value
        self.data_format = _channels_last(data_format, "Resizing")

    def call(self, inputs):
        _image_rank(self, inputs.shape)
        images = fw.cast(inputs, self.dtype)
        if self.crop_to_aspect_ratio:
            images = _aspect_crop(images, self.height, self.width)
        return fw.cast(fw.image.resize(images, (self.height, self.width),
                                       method=self.interpolation), self.dtype)

    def compute_output_shape(self, input_shape):
        return (*tuple(input_shape)[:-3], self.height, self.width, input_shape[-1])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "height": self.height,
                "width": self.width, "interpolation": self.interpolation,
                "crop_to_aspect_ratio": self.crop_to_aspect_ratio, "pad_to_aspect_ratio": False,
                "fill_mode": self.fill_mode, "fill_value": self.fill_value, "antialias": False}


@LAYERS.register
class CenterCrop(Layer):
    """The central ``height`` x ``width`` window of each image (the extra row or column of an
    odd difference left at the bottom or right, as Keras); an image smaller than the target
    along either axis is instead cropped to its aspect ratio and resized up (Keras's
    ``smart_resize``)."""

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height, self.width = (_size(v, w, "CenterCrop") for v, w in
                                   ((height, "height"), (width, "width")))
        self.data_format = _channels_last(data_format, "CenterCrop")

    def call(self, inputs):
        _image_rank(self, inputs.shape)
        images = fw.cast(inputs, self.dtype)
        h_diff, w_diff = images.shape[-3] - self.height, images.shape[-2] - self.width
        if h_diff >= 0 and w_diff >= 0:
            return _crop(images, h_diff // 2, w_diff // 2, self.height, self.width)
        return fw.cast(fw.image.resize(_aspect_crop(images, self.height, self.width),
                                       (self.height, self.width)), self.dtype)

    def compute_output_shape(self, input_shape):
        return (*tuple(input_shape)[:-3], self.height, self.width, input_shape[-1])

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "height": self.height,
                "width": self.width}


class _Augmentation(Layer):
    """A layer that draws while training (Keras 3's default for a call that does not say) and
    is the identity (its input cast to its dtype) at inference."""

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.data_format = _channels_last(data_format, type(self).__name__)
        self._generator = None if seed is None else fw.random.Generator.from_seed(seed)

    def _uniform(self, images, low, high):
        """One uniform draw in ``[low, high)`` per image, shaped to broadcast over it."""
        shape = [images.shape[0], 1, 1, 1] if images.shape.rank == 4 else [1, 1, 1]
        if self._generator is None:
            return fw.random.uniform(shape, low, high, dtype=self.dtype)
        return self._generator.uniform(shape, low, high, dtype=self.dtype)

    def call(self, inputs, training=True):
        _image_rank(self, inputs.shape)
        images = fw.cast(inputs, self.dtype)
        return self._augment(images) if training else images

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "seed": self.seed}


MODES = ("horizontal", "vertical", "horizontal_and_vertical")


@LAYERS.register
class RandomFlip(_Augmentation):
    """In training, each image mirrored with probability 1/2: across its width
    (``horizontal``), its height (``vertical``), or, with ``horizontal_and_vertical`` (the
    default), both at once on one draw per image (a half turn), as Keras 3 does."""

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        if mode not in MODES:
            raise ValueError(f"RandomFlip: mode must be one of {', '.join(MODES)}, got {mode!r}")
        super().__init__(seed, data_format, **kwargs)
        self.mode = mode

    def _augment(self, images):
        axes = {"horizontal": [-2], "vertical": [-3], "horizontal_and_vertical": [-3, -2]}
        flips = self._uniform(images, 0.0, 1.0) <= 0.5
        return fw.where(flips, fw.reverse(images, axes[self.mode]), images)

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}


@LAYERS.register
class RandomContrast(_Augmentation):
    """In training, each image's contrast scaled by a factor drawn uniformly in ``[1 - lower,
    1 + upper]`` (``factor`` a number ``f`` in [0, 1] gives Keras 3's ``(0, f)``, or a pair):
    ``(x - mean) * factor + mean``, the mean per channel over the image, then clipped to
    ``value_range``."""

    def __init__(self, factor, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        bad = f"RandomContrast: factor must be a number or a pair of numbers in [0, 1], got " \
              f"{factor!r}"
        if isinstance(factor, (list, tuple)):
            if len(factor) != 2 or not all(isinstance(f, (int, float)) for f in factor) or \
                    factor[0] > 1 or factor[1] < 0:
                raise ValueError(bad)
            lower, upper = sorted(factor)
        elif isinstance(factor, (int, float)) and not isinstance(factor, bool) and \
                0 <= factor <= 1:
            lower, upper = 0, factor  # (Keras 3's: max(-f, 0), f)
        else:
            raise ValueError(bad)
        if not isinstance(value_range, (list, tuple)) or len(value_range) != 2 or \
                value_range[0] >= value_range[1]:
            raise ValueError(f"RandomContrast: value_range must be a pair (low, high) with low "
                             f"< high, got {value_range!r}")
        super().__init__(seed, data_format, **kwargs)
        self.factor, self.value_range = (lower, upper), tuple(value_range)

    def _augment(self, images):
        factor = self._uniform(images, 1.0 - self.factor[0], 1.0 + self.factor[1])
        mean = fw.reduce_mean(images, axis=[-3, -2], keepdims=True)
        return fw.clip_by_value((images - mean) * factor + mean, self.value_range[0],
                                self.value_range[1])

    def get_config(self):
        return {**super().get_config(), "factor": list(self.factor),
                "value_range": list(self.value_range)}


# --- the geometric augmentations: TensorFlow's projective transform, as ops ------------------
FILL_MODES = ("reflect", "wrap", "constant", "nearest")


def _floor_int(x):
    return fw.cast(fw.floor(x), fw.int64)


def _mapped(coordinate, size, fill_mode):
    """TensorFlow's ``MapCoordinate``: a source coordinate outside ``[0, size - 1]`` brought
    inside by ``fill_mode`` (``constant`` keeps it: such reads give ``fill_value``)."""
    if fill_mode == "constant":
        return coordinate
    top = float(size - 1)
    if fill_mode == "nearest" or size <= 1:
        return fw.clip_by_value(coordinate, 0.0, top) if size > 1 else coordinate * 0.0
    if fill_mode == "reflect":  # (d c b a | a b c d | d c b a)
        period = 2.0 * size
        low = fw.where(coordinate < -period,
                       period * fw.floor(-coordinate / period) + coordinate, coordinate)
        low = fw.where(low < -size, low + period, -low - 1.0)
        high = coordinate - period * fw.floor(coordinate / period)
        high = fw.where(high >= size, period - high - 1.0, high)
    else:  # wrap: (a b c d | a b c d | a b c d)
        low = coordinate + size * (fw.floor(-coordinate / top) + 1.0)
        high = coordinate - size * fw.floor(coordinate / top)
    inside = fw.where(coordinate > top, high, coordinate)
    return fw.clip_by_value(fw.where(coordinate < 0.0, low, inside), 0.0, top)


def _transformed(images, matrix, interpolation, fill_mode, fill_value):
    """``ImageProjectiveTransformV3`` for affine maps, built from ops: output pixel ``(x, y)``
    (column, row) reads the input at ``(a0 x + a1 y + a2, b0 x + b1 y + b2)``, each of
    ``matrix``'s six entries one per image (shape ``[batch, 1, 1]``), mapped inside by
    ``fill_mode`` and read bilinearly (the four neighbours, those outside reading
    ``fill_value``) or at the nearest pixel (halves away from zero). The gradient reaches
    ``images`` through the gathers."""
    batch, height, width, channels = images.shape
    xs = fw.constant(np.arange(width, dtype=np.float32).reshape(1, 1, width))
    ys = fw.constant(np.arange(height, dtype=np.float32).reshape(1, height, 1))
    a0, a1, a2, b0, b1, b2 = matrix
    x = _mapped(a0 * xs + a1 * ys + a2, width, fill_mode)
    y = _mapped(b0 * xs + b1 * ys + b2, height, fill_mode)
    flat = fw.reshape(images, [batch * height * width, channels])
    first = fw.constant((np.arange(batch) * height * width).reshape(batch, 1, 1))
    fill = fw.constant(fill_value, images.dtype)

    def read(row, col):
        inside = (row >= 0) & (row < height) & (col >= 0) & (col < width)
        at = first + fw.clip_by_value(row, 0, height - 1) * width + \
            fw.clip_by_value(col, 0, width - 1)
        return fw.where(fw.expand_dims(inside, -1), fw.gather(flat, at), fill)

    if interpolation == "nearest":
        return read(*(fw.cast(fw.where(c < 0.0, -fw.floor(0.5 - c), fw.floor(c + 0.5)),
                              fw.int64) for c in (y, x)))
    y0, x0 = fw.floor(y), fw.floor(x)
    row, col = _floor_int(y), _floor_int(x)

    def weight(w):
        return fw.expand_dims(fw.cast(w, images.dtype), -1)

    wx1, wx0, wy1, wy0 = (weight(w) for w in (x - x0, x0 + 1.0 - x, y - y0, y0 + 1.0 - y))
    upper = wx0 * read(row, col) + wx1 * read(row, col + 1)
    lower = wx0 * read(row + 1, col) + wx1 * read(row + 1, col + 1)
    return wy0 * upper + wy1 * lower


def _factor_pair(value, what, layer, low, high, closed_low=True):
    """Keras's factor: a number ``f`` (the range ``(-|f|, |f|)``) or a pair, sorted."""
    def fits(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool) and \
            (low <= v if closed_low else low < v) and v <= high
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(fits(v) for v in value):
        return tuple(sorted(value))
    if fits(value):
        return -abs(value), abs(value)
    raise ValueError(f"{layer}: {what} must be a number or a pair of numbers in "
                     f"{'[' if closed_low else '('}{low}, {high}], got {value!r}")


class _Transform(_Augmentation):
    """A geometric augmentation: ``fill_mode`` (``reflect``, ``wrap``, ``constant`` with
    ``fill_value``, ``nearest``) says what the pixels from outside the image are, and
    ``interpolation`` (``bilinear``, ``nearest``) how the image is read between pixels."""

    def __init__(self, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        name = type(self).__name__
        checks = {"fill_mode": (fill_mode, FILL_MODES),
                   "interpolation": (interpolation, ("bilinear", "nearest"))}
        for what, (value, allowed) in checks.items():
            if value not in allowed:
                raise ValueError(f"{name}: {what} must be one of {', '.join(allowed)}, got "
                                 f"{value!r}")
        if isinstance(fill_value, bool) or not isinstance(fill_value, (int, float)):
            raise ValueError(f"{name}: fill_value must be a number, got {fill_value!r}")
        super().__init__(seed, data_format, **kwargs)
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, \
            fill_value

    def _augment(self, images):
        batched = images.shape.rank == 4
        images = images if batched else fw.expand_dims(images, 0)
        out = _transformed(images, self._matrix(images.shape[0], images.shape[1],
                                                images.shape[2]),
                           self.interpolation, self.fill_mode, self.fill_value)
        return out if batched else out[0]

    def _draw(self, batch, low, high):
        """One float32 draw per image in ``[low, high)``, shaped ``[batch, 1, 1]``."""
        if self._generator is None:
            return fw.random.uniform([batch, 1, 1], low, high)
        return self._generator.uniform([batch, 1, 1], low, high)

    def get_config(self):
        return {**super().get_config(), "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "interpolation": self.interpolation}


@LAYERS.register
class RandomRotation(_Transform):
    """In training, each image turned about its centre by an angle drawn uniformly in
    ``factor`` (fractions of a full turn, counter-clockwise positive; a number ``f`` means
    ``(-f, f)``), as Keras 3's matrix."""

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        self.factor = _factor_pair(factor, "factor", "RandomRotation", -1, 1)
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)

    def _matrix(self, batch, height, width):
        angle = self._draw(batch, self.factor[0] * 360.0, self.factor[1] * 360.0) * \
            np.float32(np.pi / 180.0)
        cos, sin = fw.cos(angle), fw.sin(angle)
        cx, cy = 0.5 * (width - 1), 0.5 * (height - 1)
        return cos, -sin, cx - cx * cos + cy * sin, sin, cos, cy - cx * sin - cy * cos

    def get_config(self):
        return {**super().get_config(), "factor": list(self.factor)}


@LAYERS.register
class RandomZoom(_Transform):
    """In training, each image zoomed about its centre by ``1 + z``, ``z`` drawn uniformly in
    ``height_factor`` (negative: zoom in, positive: zoom out; a number ``f`` means ``(-f,
    f)``), its width by ``width_factor``'s draw, or, when None, the same as its height."""

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        self._height = _factor_pair(height_factor, "height_factor", "RandomZoom", -1, 1,
                                    closed_low=False)
        self._width = None if width_factor is None else \
            _factor_pair(width_factor, "width_factor", "RandomZoom", -1, 1, closed_low=False)
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor

    def _matrix(self, batch, height, width):
        zy = self._draw(batch, 1.0 + self._height[0], 1.0 + self._height[1])
        zx = zy if self._width is None else \
            self._draw(batch, 1.0 + self._width[0], 1.0 + self._width[1])
        zero = zx * 0.0
        return zx, zero, (width - 1) / 2.0 * (1.0 - zx), zero, zy, \
            (height - 1) / 2.0 * (1.0 - zy)

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}


@LAYERS.register
class RandomTranslation(_Transform):
    """In training, each image shifted down by a fraction of its height drawn uniformly in
    ``height_factor`` and right by one of its width in ``width_factor`` (negative: up, left;
    a number ``f`` means ``(-f, f)``)."""

    def __init__(self, height_factor, width_factor, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        self._height = _factor_pair(height_factor, "height_factor", "RandomTranslation", -1, 1,
                                    closed_low=False)
        self._width = _factor_pair(width_factor, "width_factor", "RandomTranslation", -1, 1,
                                   closed_low=False)
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor

    def _matrix(self, batch, height, width):
        dy = self._draw(batch, self._height[0], self._height[1]) * float(height)
        dx = self._draw(batch, self._width[0], self._width[1]) * float(width)
        one, zero = dx * 0.0 + 1.0, dx * 0.0
        return one, zero, -dx, zero, one, -dy

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}
