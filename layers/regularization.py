"""Keras's regularization layers beside ``Dropout``: ``GaussianNoise``, ``GaussianDropout``,
``SpatialDropout1D``, ``SpatialDropout2D`` and ``ActivityRegularization``, with Keras 3's
arguments, defaults and config keys.

The noise layers act only when called with ``training=True`` (inside ``fit``'s step, or a
model called so) and are the identity otherwise, as in Keras. Their draws are ``fw.random``
ops: the global generator (``fw.random.set_seed`` drives it), or with ``seed`` a
``fw.random.Generator`` of the layer's own, so a traced ``fw.function`` draws fresh noise on
every call.
"""
import math

import framework as fw

from . import regularizers
from .base import LAYERS, Layer
from .core import Dropout
from .reshaping import _check_rank, _data_format


def _rate(value, what, layer):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{layer}: {what} must be a number in [0, 1], got {value!r}")
    return value


class _Noise(Layer):
    """A layer drawing normal numbers of its input's shape while training."""

    supports_masking = True

    def __init__(self, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self._generator = None if seed is None else fw.random.Generator.from_seed(seed)

    def _normal(self, inputs, mean, stddev):
        draw = fw.random.normal if self._generator is None else self._generator.normal
        return draw(inputs.shape, mean=mean, stddev=stddev, dtype=inputs.dtype)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


@LAYERS.register
class GaussianNoise(_Noise):
    """In training, ``inputs + noise`` with zero-mean normal noise of ``stddev``."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(seed, **kwargs)
        self.stddev = _rate(stddev, "stddev", "GaussianNoise")

    def call(self, inputs, training=False):
        if training and self.stddev > 0:
            return inputs + self._normal(inputs, 0.0, self.stddev)
        return inputs

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


@LAYERS.register
class GaussianDropout(_Noise):
    """In training, ``inputs * noise`` with noise of mean 1 and standard deviation
    ``sqrt(rate / (1 - rate))``: Dropout's variance without zeros."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(seed, **kwargs)
        self.rate = _rate(rate, "rate", "GaussianDropout")

    def call(self, inputs, training=False):
        if training and self.rate > 0:
            return inputs * self._normal(inputs, 1.0, math.sqrt(self.rate / (1.0 - self.rate)))
        return inputs

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class _SpatialDropout(Dropout):
    """Dropout of whole feature maps: one draw per example and channel, shared along the
    spatial axes (Dropout with those axes of ``noise_shape`` at 1)."""

    rank = None

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        data_format = _data_format(data_format, type(self).__name__)
        spatial = (1,) * self.rank
        shared = (None, None, *spatial) if data_format == "channels_first" else \
            (None, *spatial, None)
        super().__init__(rate, noise_shape=shared, seed=seed, **kwargs)
        self.data_format = data_format

    def call(self, inputs, training=False):
        _check_rank(self, inputs.shape, self.rank + 2)
        return super().call(inputs, training=training)

    def get_config(self):
        """Keras's keys (no ``noise_shape``: the layer fixes it)."""
        config = super().get_config()
        del config["noise_shape"]
        return config


@LAYERS.register
class SpatialDropout1D(_SpatialDropout):
    """Whole channels of ``(batch, steps, channels)`` zeroed with probability ``rate`` in
    training, the rest scaled by ``1 / (1 - rate)``."""

    rank = 1

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, None, seed, **kwargs)


@LAYERS.register
class SpatialDropout2D(_SpatialDropout):
    """Whole feature maps of images zeroed with probability ``rate`` in training, the rest
    scaled by ``1 / (1 - rate)``."""

    rank = 2

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


@LAYERS.register
class ActivityRegularization(Layer):
    """Its inputs unchanged, adding to ``losses`` the penalty ``l1 * sum(|x|) + l2 *
    sum(x ** 2)`` of them over the batch size (Keras's activity regularization)."""

    supports_masking = True

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        for what, value in (("l1", l1), ("l2", l2)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"ActivityRegularization: {what} must be a non-negative "
                                 f"number, got {value!r}")
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.pop("activity_regularizer", None)
        return {**config, "l1": self.l1, "l2": self.l2}
