"""``tf.nn``'s other activations, dropout, moments and the sigmoid cross-entropy.

ELU, leaky ReLU, ReLU6 and the sigmoid cross-entropy are primitives (short closed-form VJPs);
SELU, SiLU/swish and dropout are compositions of primitives. Each is TensorFlow's formula, so
the numbers, and the gradients at any order, are TensorFlow's.
"""
import numpy as np

from ..engine import backend
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor, wrap
from ..engine.context import replayed
from .elementwise import add_n, divide_no_nan, log1p, rsqrt, softsign
from .math import abs, cast, exp, floats_only, log, maximum, sigmoid, square
from .reduce import reduce_sum
from .array import shape
from .shape import concat, gather, squeeze, where
from .segment import in_top_k, zero_fraction
from .sort import approx_max_k, approx_min_k, top_k
from .stats import l2_normalize, moments, reduce_prod

__all__ = ["approx_max_k", "approx_min_k", "batch_normalization", "compute_average_loss", "crelu", "dropout", "elu", "in_top_k",
           "l2_loss", "l2_normalize", "leaky_relu", "log_poisson_loss", "moments",
           "normalize_moments", "relu6", "scale_regularization_loss", "selu",
           "sigmoid_cross_entropy_with_logits", "silu", "softsign", "sufficient_statistics",
           "swish", "top_k", "weighted_cross_entropy_with_logits", "weighted_moments",
           "zero_fraction"]


def _ones_where(condition, other):
    """1 where ``condition`` holds, else ``other`` (a tensor): a VJP's local slope."""
    return where(condition, 1, other)


elu = define("elu", floats_only(lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))
                                .astype(x.dtype, copy=False)),
             lambda g, out, x: g * _ones_where(x > 0, out + 1))
elu.__doc__ = "Exponential linear unit: ``x`` if ``x > 0`` else ``exp(x) - 1``."

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(features, name=None):
    """Scaled ELU: ``scale * x`` for ``x > 0``, else ``scale * alpha * (exp(x) - 1)``."""
    x = convert_to_tensor(features)
    scale = convert_to_tensor(_SELU_SCALE, x.dtype)
    return elu(x) * where(x > 0, scale, convert_to_tensor(_SELU_SCALE * _SELU_ALPHA, x.dtype))


def _leaky(x, alpha):
    return np.where(x > 0, x, x * x.dtype.type(alpha))


_leaky_relu = define("leaky_relu", floats_only(_leaky),
                     lambda g, out, x, alpha: g * _ones_where(
                         x > 0, convert_to_tensor(alpha, x.dtype)))


def leaky_relu(features, alpha=0.2, name=None):
    """``x`` for ``x > 0``, else ``alpha * x``; integers are taken as float32, as in TF."""
    x = convert_to_tensor(features)
    if x.dtype.kind in "iu":
        x = cast(x, "float32")
    return _leaky_relu(x, alpha=float(alpha))


def _relu6_vjp(g, out, x):
    inside = (x > 0) & (x < 6)
    return g * cast(inside, g.dtype)


relu6 = define("relu6", floats_only(lambda x: np.clip(x, 0, 6).astype(x.dtype, copy=False)),
               _relu6_vjp)
relu6.__doc__ = "``min(max(x, 0), 6)``; the gradient is 0 outside (0, 6), as in TensorFlow."


def silu(features, beta=1.0, name=None):
    """``x * sigmoid(beta * x)`` (also called swish)."""
    x = convert_to_tensor(features)
    return x * sigmoid(x * beta) if beta != 1.0 else x * sigmoid(x)


swish = silu


def _sigmoid_xent_forward(labels, logits):
    # max(x, 0) - x * z + log(1 + exp(-|x|)): TensorFlow's stable form
    return (np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))).astype(
        logits.dtype, copy=False)


_sigmoid_xent = define("sigmoid_cross_entropy_with_logits", floats_only(_sigmoid_xent_forward),
                       lambda g, out, labels, logits: -g * logits,
                       lambda g, out, labels, logits: g * (sigmoid(logits) - labels),
                       same_dtype=True)


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise ``-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x))``, computed stably."""
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits: both labels and logits are needed")
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, logits.dtype)
    if labels.shape != logits.shape:
        raise ValueError(f"sigmoid_cross_entropy_with_logits: logits and labels must have the "
                         f"same shape, got {logits.shape} and {labels.shape}")
    return _sigmoid_xent(labels, logits)


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zero each entry with probability ``rate`` and scale the rest by ``1 / (1 - rate)``
    (a mask shaped ``noise_shape`` broadcasts, as in TensorFlow)."""
    x = convert_to_tensor(x)
    if x.dtype.kind not in "fc":
        raise TypeError(f"dropout: x must be a floating-point tensor, got {x.dtype.name}")
    rate = float(rate)
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be in [0, 1), got {rate}")
    if rate == 0:
        return x
    shape = x.shape if noise_shape is None else tuple(
        x.shape[i] if d is None else int(d) for i, d in enumerate(noise_shape))
    return x * _dropout_scale(shape, rate, x.dtype, seed)


@replayed(draws=True)  # (a traced fw.function draws a fresh mask on every call)
def _dropout_scale(shape, rate, dtype, seed):
    """The mask, scaled: ``1 / (1 - rate)`` where kept, 0 where dropped."""
    from ..random import generator
    keep = generator(seed).random(shape) >= rate
    return wrap(backend.to_backend((keep / (1 - rate)).astype(dtype)))


def crelu(features, axis=-1, name=None):
    """``concat([relu(x), relu(-x)], axis)``."""
    x = convert_to_tensor(features)
    return concat([maximum(x, 0), maximum(-x, 0)], axis=axis)


def l2_loss(t, name=None):
    """``sum(t ** 2) / 2``."""
    return reduce_sum(square(t)) / 2


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``(x - mean) * scale / sqrt(variance + epsilon) + offset`` (offset, scale may be None),
    in TensorFlow's order of operations."""
    x = convert_to_tensor(x)
    inv = rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    return x * inv + ((offset - mean * inv) if offset is not None else -mean * inv)


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """The sigmoid cross-entropy with the positive term weighted by ``pos_weight``."""
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, logits.dtype)
    log_weight = (pos_weight - 1) * labels + 1
    return (1 - labels) * logits + log_weight * (log1p(exp(-abs(logits))) + maximum(-logits, 0))


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """The sum of the (weighted) per-example losses over the global batch size (the batch's
    own size by default, ``fw.shape(loss)[0]``: one replica), 0 for an empty batch, as
    TensorFlow's ``div_no_nan``."""
    loss = convert_to_tensor(per_example_loss)
    if sample_weight is not None:
        loss = loss * sample_weight
    if global_batch_size is None:
        size = cast(shape(loss)[0], loss.dtype) if loss.ndim else 1.0
    else:
        size = cast(global_batch_size, loss.dtype)
    return divide_no_nan(reduce_sum(loss), size)


def scale_regularization_loss(regularization_loss):
    """The regularization loss divided by the replica count (one here)."""
    if isinstance(regularization_loss, (list, tuple)):
        return add_n(regularization_loss)
    return convert_to_tensor(regularization_loss)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """``exp(log_input) - log_input * targets``, plus Stirling's approximation of
    ``log(targets!)`` (for targets > 1) with ``compute_full_loss``."""
    log_input = convert_to_tensor(log_input)
    targets = convert_to_tensor(targets, log_input.dtype)
    loss = exp(log_input) - log_input * targets
    if not compute_full_loss:
        return loss
    safe = where(targets > 1, targets, 1)
    stirling = safe * log(safe) - safe + 0.5 * log(safe * (2 * np.pi))
    return loss + where(targets > 1, stirling, 0)


def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None):
    """``(count, sum(x - shift), sum((x - shift) ** 2), shift)`` over ``axes``; the count
    from ``shape(x)``, a value of each call under ``fw.function``."""
    x = convert_to_tensor(x)
    axes = [axes] if np.ndim(axes) == 0 else list(axes)
    count = reduce_prod(gather(shape(x, out_type=x.dtype), axes))
    m = x - shift if shift is not None else x
    return (count, reduce_sum(m, axis=axes, keepdims=keepdims),
            reduce_sum(square(m), axis=axes, keepdims=keepdims), shift)


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """``(mean, variance)`` from ``sufficient_statistics``' sums."""
    divisor = 1 / convert_to_tensor(counts)
    shifted_mean = mean_ss * divisor
    mean = shifted_mean + shift if shift is not None else shifted_mean
    return mean, variance_ss * divisor - square(shifted_mean)


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """The mean and variance over ``axes`` with each entry counted ``frequency_weights`` times."""
    x = convert_to_tensor(x)
    weights = convert_to_tensor(frequency_weights, x.dtype)
    total = reduce_sum(weights * x, axis=axes, keepdims=True)
    weight_sum = reduce_sum(weights + x * 0, axis=axes, keepdims=True)
    mean = divide_no_nan(total, weight_sum)
    variance = divide_no_nan(reduce_sum(weights * square(x - mean), axis=axes,
                                             keepdims=True), weight_sum)
    if not keepdims:
        mean, variance = squeeze(mean, axes), squeeze(variance, axes)
    return mean, variance
