"""Keras 3's image preprocessing layers: ``Resizing`` and ``CenterCrop`` (deterministic, in
training and inference), and the augmentations ``RandomFlip`` and ``RandomContrast``, which
draw when training and are the identity at inference (``predict``, ``evaluate``, or a call
with ``training=False``). As in Keras 3, their ``training`` defaults to True: a direct call
``layer(images)``, or a model's ``model(images)`` that does not say, augments. Images are ``[batch,] height, width, channels``
(``channels_last``, the only layout here); outputs are float32 (the layer's dtype), as Keras.

The augmentations draw with ``fw.random`` (the global generator, which ``fw.random.set_seed``
drives, or with ``seed`` a ``fw.random.Generator`` of the layer's own), so a traced
``fw.function`` draws afresh on every call; their random numbers are not Keras's (the
distributions are).
"""
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
