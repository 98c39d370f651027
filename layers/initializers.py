"""Weight initializers with Keras's names, defaults and formulas.

Each is callable as ``init(shape, dtype=None)`` and returns a tensor. Random ones take ``seed``:
with a seed, every call returns the same values (as Keras 3's seeded initializers do); without
one, they draw from ``fw.random``'s global generator, so ``fw.random.set_seed`` makes a whole
model's initial weights reproducible. The numbers come from NumPy's generator, not
TensorFlow's, so a ported model copies its initial weights rather than re-drawing them.
"""
import math

import framework as fw
from framework.registry import Registry

__all__ = ["INITIALIZERS", "Constant", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform", "Initializer",
           "LecunNormal", "LecunUniform", "Ones", "RandomNormal", "RandomUniform",
           "TruncatedNormal", "VarianceScaling", "Zeros", "compute_fans", "get"]

# The standard deviation of a unit normal truncated to [-2, 2], as Keras divides by it.
_TRUNCATION_STDDEV = 0.87962566103423978


INITIALIZERS = Registry("initializer")


class Initializer:
    """Base class: ``__call__(shape, dtype=None)`` returns a tensor of that shape."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError(f"{type(self).__name__} must define __call__(shape, dtype)")

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


def _shape(shape):
    return (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)


def _float_dtype(dtype, initializer):
    dtype = fw.as_dtype(dtype) or fw.float32
    if dtype.kind != "f":
        raise ValueError(f"{type(initializer).__name__} draws floating values; it cannot "
                         f"initialize a weight of dtype {dtype.name}")
    return dtype


@INITIALIZERS.register
class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return fw.zeros(_shape(shape), dtype=fw.as_dtype(dtype) or fw.float32)


@INITIALIZERS.register
class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return fw.ones(_shape(shape), dtype=fw.as_dtype(dtype) or fw.float32)


@INITIALIZERS.register
class Constant(Initializer):
    """Every element equal to ``value`` (a scalar, or an array that broadcasts to the shape)."""

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        dtype = fw.as_dtype(dtype) or fw.float32
        value = fw.cast(fw.convert_to_tensor(self.value), dtype)
        return fw.constant(value, shape=_shape(shape))


class _Random(Initializer):
    def __init__(self, seed=None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed must be an integer or None, got {seed!r}")
        self.seed = seed


@INITIALIZERS.register
class RandomNormal(_Random):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return fw.random.normal(_shape(shape), self.mean, self.stddev,
                                dtype=_float_dtype(dtype, self), seed=self.seed)


@INITIALIZERS.register(aliases=("uniform",))
class RandomUniform(_Random):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None):
        return fw.random.uniform(_shape(shape), self.minval, self.maxval,
                                 dtype=_float_dtype(dtype, self), seed=self.seed)


@INITIALIZERS.register
class TruncatedNormal(_Random):
    """Normal values redrawn until within two standard deviations of the mean."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return fw.random.truncated_normal(_shape(shape), self.mean, self.stddev,
                                          dtype=_float_dtype(dtype, self), seed=self.seed)


def compute_fans(shape):
    """Keras's (fan_in, fan_out): a kernel's input and output sizes times its receptive field."""
    shape = _shape(shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


@INITIALIZERS.register
class VarianceScaling(_Random):
    """Values with variance ``scale / fan``; the family behind Glorot, He and LeCun."""

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        super().__init__(seed)
        if scale <= 0:
            raise ValueError(f"VarianceScaling: scale must be positive, got {scale}")
        if mode not in self._MODES:
            raise ValueError(f"VarianceScaling: mode must be one of {self._MODES}, got {mode!r}")
        distribution = "truncated_normal" if distribution == "normal" else distribution
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(f"VarianceScaling: distribution must be one of "
                             f"{self._DISTRIBUTIONS} (or 'normal'), got {distribution!r}")
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def __call__(self, shape, dtype=None):
        shape, dtype = _shape(shape), _float_dtype(dtype, self)
        fan_in, fan_out = compute_fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        scale = self.scale / max(1.0, fan)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * scale)
            return fw.random.uniform(shape, -limit, limit, dtype=dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return fw.random.normal(shape, 0.0, math.sqrt(scale), dtype=dtype, seed=self.seed)
        stddev = math.sqrt(scale) / _TRUNCATION_STDDEV
        return fw.random.truncated_normal(shape, 0.0, stddev, dtype=dtype, seed=self.seed)


@INITIALIZERS.register
class GlorotUniform(VarianceScaling):
    """Uniform in [-limit, limit] with limit = sqrt(6 / (fan_in + fan_out)); Dense's default."""

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "uniform", seed)


@INITIALIZERS.register
class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev = sqrt(2 / (fan_in + fan_out)) / 0.8796..."""

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)


@INITIALIZERS.register
class HeNormal(VarianceScaling):
    """Truncated normal with stddev = sqrt(2 / fan_in) / 0.8796..., for ReLU layers."""

    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed)


@INITIALIZERS.register
class HeUniform(VarianceScaling):
    """Uniform in [-limit, limit] with limit = sqrt(6 / fan_in)."""

    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "uniform", seed)


@INITIALIZERS.register
class LecunNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed)


@INITIALIZERS.register
class LecunUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "uniform", seed)


def get(identifier):
    """An initializer from a name (``"glorot_uniform"`` or ``"GlorotUniform"``), a class, an
    instance, or any callable ``(shape, dtype)``."""
    return INITIALIZERS.get(identifier)
