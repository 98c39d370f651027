"""``LayerNormalization``, ``BatchNormalization``, ``GroupNormalization`` and
``UnitNormalization`` with Keras 3's arguments and numbers.

Both normalize as ``x * inv + (beta - mean * inv)`` with ``inv = gamma / sqrt(variance +
epsilon)``, Keras's (and ``tf.nn.batch_normalization``'s) arrangement, written with the
framework's differentiable ops, so the gradients (and higher orders) come from the tape.
The variance is the biased (1/n) one, as Keras's ``moments``. ``LayerNormalization`` with both
weights runs the same maths as one op (``framework.ops.fused.layer_normalization``, tested
equal to this composition).
"""
import framework as fw
from framework.ops.fused import layer_normalization
from framework.engine.context import replayed

from . import initializers, regularizers
from .base import LAYERS, Layer, serialized

__all__ = ["BatchNormalization", "GroupNormalization", "LayerNormalization",
           "UnitNormalization"]


def moments(x, axes):
    """Mean and biased variance of ``x`` over ``axes``, kept as broadcastable axes of size 1."""
    mean = fw.reduce_mean(x, axis=axes, keepdims=True)
    centered = x - mean
    return mean, fw.reduce_mean(centered * centered, axis=axes, keepdims=True)


def normalize(x, mean, variance, offset, scale, epsilon):
    """``tf.nn.batch_normalization``: ``(x - mean) * scale / sqrt(variance + epsilon) + offset``."""
    inv = 1.0 / fw.sqrt(variance + epsilon)
    if scale is not None:
        inv = inv * scale
    shift = -mean * inv if offset is None else offset - mean * inv
    return x * inv + shift


def _axes(axis, rank, layer):
    """``axis`` (an int or a list) as sorted non-negative axes of an input of ``rank``."""
    axes = [axis] if isinstance(axis, int) else list(axis)
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"{layer}: axis {a} is out of range for inputs of rank {rank}")
    return sorted({a % rank for a in axes})


def _broadcast_shape(axes, input_shape):
    """The shape a per-feature weight of ``axes`` takes to broadcast against the inputs."""
    return tuple(input_shape[a] if a in axes else 1 for a in range(len(input_shape)))


class _Normalization(Layer):
    """What both layers share: the axis, epsilon, and the gamma and beta weights."""

    def __init__(self, axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                 beta_regularizer, gamma_regularizer, **kwargs):
        super().__init__(**kwargs)
        if not (isinstance(axis, int) or (isinstance(axis, (list, tuple)) and axis and all(
                isinstance(a, int) for a in axis))):
            raise TypeError(f"{type(self).__name__}: axis must be an int or a list of ints, "
                            f"got {axis!r}")
        if not epsilon > 0:
            raise ValueError(f"{type(self).__name__}: epsilon must be positive, got {epsilon!r}")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.epsilon = float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.gamma = self.beta = None
        self._axes = None

    def _build_scale_and_offset(self, input_shape, with_scale, with_offset):
        axes = _axes(self.axis, len(input_shape), type(self).__name__)
        shape = tuple(input_shape[a] for a in axes)
        if any(d is None for d in shape):
            raise ValueError(f"{type(self).__name__} '{self.name}' needs the size of axis "
                             f"{self.axis} known, got input shape {input_shape}")
        self._axes = axes
        if with_scale:
            self.gamma = self.add_weight("gamma", shape, self.gamma_initializer,
                                         regularizer=self.gamma_regularizer)
        if with_offset:
            self.beta = self.add_weight("beta", shape, self.beta_initializer,
                                        regularizer=self.beta_regularizer)
        return shape

    def _reshaped(self, weight, inputs):
        """A per-feature weight shaped to broadcast against ``inputs``."""
        if weight is None or self._axes == [inputs.ndim - 1]:
            return weight
        return fw.reshape(weight, _broadcast_shape(self._axes, inputs.shape))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale,
                "beta_initializer": serialized(initializers.INITIALIZERS, self.beta_initializer),
                "gamma_initializer": serialized(initializers.INITIALIZERS,
                                                self.gamma_initializer),
                "beta_regularizer": regularizers.serialize(self.beta_regularizer),
                "gamma_regularizer": regularizers.serialize(self.gamma_regularizer)}


@LAYERS.register
class LayerNormalization(_Normalization):
    """Normalize each example over ``axis`` (the features), then scale by ``gamma`` and shift by
    ``beta``. ``rms_scaling`` is Keras's: divide by ``sqrt(variance + epsilon)`` with no
    centering and no beta."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         beta_regularizer, gamma_regularizer, **kwargs)
        self.rms_scaling = bool(rms_scaling)

    def build(self, input_shape):
        self._build_scale_and_offset(input_shape, self.scale or self.rms_scaling,
                                     self.center and not self.rms_scaling)

    def call(self, inputs):
        gamma = self._reshaped(self.gamma, inputs)
        if gamma is not None and self.beta is not None:  # the usual case, as one op
            return layer_normalization(inputs, gamma, self._reshaped(self.beta, inputs),
                                       self._axes, self.epsilon)
        mean, variance = moments(inputs, self._axes)
        if self.rms_scaling:  # Keras's: the variance, not the mean square
            outputs = inputs / fw.sqrt(variance + self.epsilon)
            return outputs if gamma is None else outputs * gamma
        return normalize(inputs, mean, variance, self._reshaped(self.beta, inputs), gamma,
                         self.epsilon)

    def get_config(self):
        return {**super().get_config(), "rms_scaling": self.rms_scaling}


@LAYERS.register
class BatchNormalization(_Normalization):
    """Normalize each feature (``axis``) over the batch and the other axes.

    With ``training=True`` it uses the batch's mean and biased variance and moves
    ``moving_mean``/``moving_variance`` (non-trainable variables) towards them:
    ``moving = moving * momentum + batch * (1 - momentum)``. Otherwise (and always when the
    layer is frozen, as in Keras 3) it uses the moving statistics and changes nothing.
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, **kwargs):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         beta_regularizer, gamma_regularizer, **kwargs)
        if not 0 <= momentum <= 1:
            raise ValueError(f"BatchNormalization: momentum must be in [0, 1], got {momentum!r}")
        self.momentum = float(momentum)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.moving_mean = self.moving_variance = None

    def build(self, input_shape):
        shape = self._build_scale_and_offset(input_shape, self.scale, self.center)
        self.moving_mean = self.add_weight("moving_mean", shape, self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape,
                                               self.moving_variance_initializer, trainable=False)

    def call(self, inputs, training=None):
        if training and self.trainable:
            reduced = [a for a in range(inputs.ndim) if a not in self._axes]
            mean, variance = moments(inputs, reduced)
            self._move(self.moving_mean, mean)
            self._move(self.moving_variance, variance)
        else:
            mean = self._reshaped(self.moving_mean, inputs)
            variance = self._reshaped(self.moving_variance, inputs)
        return normalize(inputs, mean, variance, self._reshaped(self.beta, inputs),
                         self._reshaped(self.gamma, inputs), self.epsilon)

    @replayed  # (a traced fw.function moves the averages on every call)
    def _move(self, moving, batch):
        """One step of the moving average, on the raw arrays: no gradient, no tape record."""
        value = batch._value.reshape(moving.shape)
        moving.assign(moving._value * self.momentum + value * (1.0 - self.momentum))

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum,
                "moving_mean_initializer": serialized(initializers.INITIALIZERS,
                                                      self.moving_mean_initializer),
                "moving_variance_initializer": serialized(initializers.INITIALIZERS,
                                                          self.moving_variance_initializer)}


@LAYERS.register
class GroupNormalization(_Normalization):
    """Normalize each example over each of ``groups`` groups of the channels of ``axis`` (and
    every other axis but the batch), then scale by ``gamma`` and shift by ``beta`` per
    channel, as Keras 3's: ``groups=1`` is a layer normalization over all axes, ``groups=-1``
    (one channel a group) an instance normalization."""

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, **kwargs):
        if isinstance(groups, bool) or not isinstance(groups, int) or groups == 0 or \
                groups < -1:
            raise ValueError(f"GroupNormalization: groups must be a positive int or -1, got "
                             f"{groups!r}")
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"GroupNormalization: axis must be an int, got {axis!r}")
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         beta_regularizer, gamma_regularizer, **kwargs)
        self.groups = groups

    def build(self, input_shape):
        (axis,) = _axes(self.axis, len(input_shape), "GroupNormalization")
        dim = input_shape[axis]
        groups = dim if self.groups == -1 else self.groups
        if axis == 0 or dim is None or dim % groups:
            raise ValueError(f"GroupNormalization '{self.name}': groups={self.groups} must "
                             f"divide the known channels of axis {self.axis} (not the batch "
                             f"axis), got input shape {input_shape}")
        self._build_scale_and_offset(input_shape, self.scale, self.center)
        self.groups = groups  # (Keras's: -1 becomes the channels)

    def call(self, inputs):
        inputs = fw.convert_to_tensor(inputs)
        (axis,), shape = self._axes, tuple(inputs.shape[1:])
        dim = shape[axis - 1]
        grouped = (-1,) + shape[:axis - 1] + (self.groups, dim // self.groups) + shape[axis:]
        x = fw.reshape(inputs, grouped)
        mean, variance = moments(x, [a for a in range(1, x.ndim) if a != axis])
        weight = (1,) * axis + (self.groups, dim // self.groups) + (1,) * (x.ndim - axis - 2)
        outputs = normalize(x, mean, variance,
                            None if self.beta is None else fw.reshape(self.beta, weight),
                            None if self.gamma is None else fw.reshape(self.gamma, weight),
                            self.epsilon)
        return fw.reshape(outputs, (-1,) + shape)

    def get_config(self):
        return {**super().get_config(), "groups": self.groups}


@LAYERS.register
class UnitNormalization(Layer):
    """Each input scaled to unit L2 norm along ``axis`` (an int or a list of them): Keras's
    ``x * min(rsqrt(sum(x ** 2)), 1 / epsilon)`` with ``epsilon = 1e-12``, so zeros stay
    zeros."""

    supports_masking = True

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)) and all(
                isinstance(a, int) and not isinstance(a, bool) for a in axis):
            self.axis = list(axis)
        elif isinstance(axis, int) and not isinstance(axis, bool):
            self.axis = axis
        else:
            raise TypeError(f"UnitNormalization: axis must be an int or a list of ints, got "
                            f"{axis!r}")

    def call(self, inputs):
        self.compute_output_shape(inputs.shape)
        # min(rsqrt(s), 1 / eps) is rsqrt(max(s, eps ** 2)): l2_normalize's form
        return fw.math.l2_normalize(inputs, axis=self.axis, epsilon=1e-24)

    def compute_output_shape(self, input_shape):
        for axis in (self.axis if isinstance(self.axis, list) else [self.axis]):
            if not -len(input_shape) <= axis < len(input_shape):
                raise ValueError(f"UnitNormalization '{self.name}': axis {axis} is out of "
                                 f"bounds for inputs of shape {tuple(input_shape)}")
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
