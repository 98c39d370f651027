"""Weight initializers with Keras's names, defaults and formulas, and TensorFlow's aliases.

Each is callable as ``init(shape, dtype=None)`` and returns a tensor. Random ones take ``seed``:
with a seed, every call returns the same values (as Keras 3's seeded initializers do); without
one, they draw from ``fw.random``'s global generator, so ``fw.random.set_seed`` makes a whole
model's initial weights reproducible. The numbers come from NumPy's generator, not
TensorFlow's, so a ported model copies its initial weights rather than re-drawing them; their
distributions are Keras's (``TruncatedNormal``'s samples have a standard deviation of 0.88
``stddev``, ``VarianceScaling``'s truncated normal is rescaled to its nominal one).

They live in ``framework`` so that TensorFlow's ``fw.zeros_initializer()``,
``fw.random_normal_initializer(...)``, ... are these very classes; ``layers.initializers`` is
the Keras view of the same objects. ``INITIALIZERS`` is their one registry.
"""
import math

import numpy as np

from . import random
from .creation import eye, ones, zeros
from .engine.dtypes import numpy_dtype, float32
from .ops import broadcast_to, cast
from .registry import Configurable, Registry
from .engine.tensor import constant, convert_to_tensor

__all__ = ["INITIALIZERS", "Constant", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform",
           "Identity", "Initializer", "LecunNormal", "LecunUniform", "Ones", "Orthogonal",
           "RandomNormal", "RandomUniform", "TruncatedNormal", "VarianceScaling", "Zeros",
           "compute_fans", "get"]

# The standard deviation of a unit normal truncated to [-2, 2], as Keras divides by it.
_TRUNCATION_STDDEV = 0.87962566103423978

INITIALIZERS = Registry("initializer")


class Initializer(Configurable):
    """Base class: ``__call__(shape, dtype=None)`` returns a tensor of that shape; a subclass
    keeps each constructor argument as the attribute of the same name (``get_config``)."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError(f"{type(self).__name__} must define __call__(shape, dtype)")


def _shape(shape):
    return (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)


def _float_dtype(dtype, initializer):
    dtype = numpy_dtype(dtype) or float32
    if dtype.kind != "f":
        raise ValueError(f"{type(initializer).__name__} draws floating values; it cannot "
                         f"initialize a weight of dtype {dtype.name}")
    return dtype


@INITIALIZERS.register(aliases=("zero",))
class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return zeros(_shape(shape), dtype=numpy_dtype(dtype) or float32)


@INITIALIZERS.register(aliases=("one",))
class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return ones(_shape(shape), dtype=numpy_dtype(dtype) or float32)


@INITIALIZERS.register
class Constant(Initializer):
    """Every element equal to ``value`` (a scalar, or an array that broadcasts to the shape)."""

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        value = cast(convert_to_tensor(self.value), numpy_dtype(dtype) or float32)
        return constant(broadcast_to(value, _shape(shape)))  # (constant(shape=) reshapes)


@INITIALIZERS.register
class Identity(Initializer):
    """``gain`` times the identity matrix (ones on the main diagonal of a 2-D shape)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        shape = _shape(shape)
        if len(shape) != 2:
            raise ValueError(f"Identity can only initialize a 2-D weight, got shape {shape}")
        return eye(*shape, dtype=numpy_dtype(dtype) or float32) * self.gain


class _Random(Initializer):
    def __init__(self, seed=None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed must be an integer or None, got {seed!r}")
        self.seed = seed


@INITIALIZERS.register(aliases=("normal",))
class RandomNormal(_Random):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return random.normal(_shape(shape), self.mean, self.stddev,
                             dtype=_float_dtype(dtype, self), seed=self.seed)


@INITIALIZERS.register(aliases=("uniform",))
class RandomUniform(_Random):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None):
        return random.uniform(_shape(shape), self.minval, self.maxval,
                              dtype=_float_dtype(dtype, self), seed=self.seed)


@INITIALIZERS.register
class TruncatedNormal(_Random):
    """Normal values redrawn until within two ``stddev`` of the mean: their own standard
    deviation is about 0.88 ``stddev`` (Keras does not rescale them)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return random.truncated_normal(_shape(shape), self.mean, self.stddev,
                                       dtype=_float_dtype(dtype, self), seed=self.seed)


@INITIALIZERS.register(aliases=("OrthogonalInitializer",))
class Orthogonal(_Random):
    """A random orthogonal matrix (orthonormal rows or columns, whichever are fewer) times
    ``gain``: the Q of a normal matrix's QR factorization, its signs fixed by R's diagonal so
    that it is uniformly distributed. A shape of rank above 2 is its leading axes flattened."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape, dtype=None):
        shape, dtype = _shape(shape), _float_dtype(dtype, self)
        if len(shape) < 2:
            raise ValueError(f"Orthogonal can only initialize a weight of rank 2 or more, got "
                             f"shape {shape}")
        rows, columns = math.prod(shape[:-1]), shape[-1]
        drawn = random.generator(self.seed).normal(size=(max(rows, columns),
                                                         min(rows, columns)))
        q, r = np.linalg.qr(drawn)
        q *= np.sign(np.diag(r))
        if rows < columns:
            q = q.T
        return constant((self.gain * q).reshape(shape), dtype=dtype)


def compute_fans(shape, input_axes=None, output_axes=None):
    """Keras's (fan_in, fan_out): a kernel's input and output sizes times its receptive field,
    or, given both ``input_axes`` and ``output_axes``, the products of those axes' sizes."""
    shape = _shape(shape)
    if input_axes is not None and output_axes is not None:
        return (math.prod(shape[axis] for axis in input_axes),
                math.prod(shape[axis] for axis in output_axes))
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


@INITIALIZERS.register
class VarianceScaling(_Random):
    """Values with variance ``scale / fan`` (``mode``: fan_in, fan_out or their average), from
    a truncated normal rescaled to that variance (0.8796... is a truncated unit normal's
    standard deviation), an untruncated normal, or a uniform; the family behind Glorot, He and
    LeCun."""

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 input_axes=None, output_axes=None):
        super().__init__(seed)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
            raise ValueError(f"VarianceScaling: scale must be positive, got {scale!r}")
        if mode not in self._MODES:
            raise ValueError(f"VarianceScaling: mode must be one of {self._MODES}, got {mode!r}")
        distribution = "truncated_normal" if distribution == "normal" else distribution
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(f"VarianceScaling: distribution must be one of "
                             f"{self._DISTRIBUTIONS} (or 'normal'), got {distribution!r}")
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self.input_axes, self.output_axes = input_axes, output_axes

    def __call__(self, shape, dtype=None):
        shape, dtype = _shape(shape), _float_dtype(dtype, self)
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        scale = self.scale / max(1.0, fan)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * scale)
            return random.uniform(shape, -limit, limit, dtype=dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random.normal(shape, 0.0, math.sqrt(scale), dtype=dtype, seed=self.seed)
        stddev = math.sqrt(scale) / _TRUNCATION_STDDEV
        return random.truncated_normal(shape, 0.0, stddev, dtype=dtype, seed=self.seed)


class _Preset(VarianceScaling):
    """A ``VarianceScaling`` with fixed arguments but for the seed and the fans' axes."""

    _ARGUMENTS = (1.0, "fan_in", "truncated_normal")

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        super().__init__(*self._ARGUMENTS, seed, input_axes, output_axes)


@INITIALIZERS.register
class GlorotUniform(_Preset):
    """Uniform in [-limit, limit] with limit = sqrt(6 / (fan_in + fan_out)); Dense's default."""

    _ARGUMENTS = (1.0, "fan_avg", "uniform")


@INITIALIZERS.register
class GlorotNormal(_Preset):
    """Truncated normal with stddev = sqrt(2 / (fan_in + fan_out)) / 0.8796..."""

    _ARGUMENTS = (1.0, "fan_avg", "truncated_normal")


@INITIALIZERS.register
class HeNormal(_Preset):
    """Truncated normal with stddev = sqrt(2 / fan_in) / 0.8796..., for ReLU layers."""

    _ARGUMENTS = (2.0, "fan_in", "truncated_normal")


@INITIALIZERS.register
class HeUniform(_Preset):
    """Uniform in [-limit, limit] with limit = sqrt(6 / fan_in)."""

    _ARGUMENTS = (2.0, "fan_in", "uniform")


@INITIALIZERS.register
class LecunNormal(_Preset):
    """Truncated normal with stddev = sqrt(1 / fan_in) / 0.8796..., for SELU networks."""

    _ARGUMENTS = (1.0, "fan_in", "truncated_normal")


@INITIALIZERS.register
class LecunUniform(_Preset):
    """Uniform in [-limit, limit] with limit = sqrt(3 / fan_in)."""

    _ARGUMENTS = (1.0, "fan_in", "uniform")


def get(identifier):
    """An initializer from a name (``"glorot_uniform"`` or ``"GlorotUniform"``), a serialized
    dict, a class, an instance, or any callable ``(shape, dtype)``."""
    return INITIALIZERS.get(identifier)


# TensorFlow's names for the same classes (``tf.zeros_initializer()``, ...); the last one is
# TensorFlow 1's, kept because ported code still spells Glorot that way.
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
random_uniform_initializer = RandomUniform
glorot_uniform_initializer = GlorotUniform
