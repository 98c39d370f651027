"""Activation functions by Keras's names: ``Dense(10, activation="relu")``.

The functions are the framework's own differentiable ops (``fw.nn`` where one exists), so
nothing here has a gradient of its own.
"""
import framework as fw
from framework.registry import Registry

__all__ = ["ACTIVATIONS", "elu", "exponential", "gelu", "get", "hard_sigmoid", "leaky_relu", "linear", "log_softmax", "relu",
           "relu6", "selu", "sigmoid", "silu", "softmax", "softplus", "softsign", "swish", "tanh"]

ACTIVATIONS = Registry("activation")
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@ACTIVATIONS.register
def linear(x):
    """The identity: what ``activation=None`` means."""
    return x


@ACTIVATIONS.register
def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0), with Keras's options: values at or below ``threshold`` give 0 (or
    ``negative_slope * (x - threshold)``), and outputs are clipped at ``max_value``."""
    if not negative_slope and max_value is None and not threshold:
        return fw.nn.relu(x)
    x = fw.convert_to_tensor(x)
    if threshold:
        outputs = x * fw.cast(x > threshold, x.dtype)  # 0 at x == threshold, as Keras
    else:
        outputs = fw.nn.relu(x)
    if max_value is not None:
        outputs = fw.clip_by_value(outputs, 0.0, float(max_value))
    if negative_slope:
        outputs = outputs - fw.nn.relu(threshold - x) * negative_slope
    return outputs


@ACTIVATIONS.register
def leaky_relu(x, negative_slope=0.2):
    """x where x > 0, else negative_slope * x (Keras's function default slope is 0.2; the
    LeakyReLU layer's is 0.3)."""
    x = fw.convert_to_tensor(x)
    return fw.where(x > 0, x, x * negative_slope)


@ACTIVATIONS.register
def relu6(x):
    return fw.clip_by_value(fw.nn.relu(x), 0.0, 6.0)


@ACTIVATIONS.register
def hard_sigmoid(x):
    """Keras 3's: ``relu6(x + 3) / 6`` (Keras 2's slope was 0.2)."""
    return relu6(fw.convert_to_tensor(x) + 3.0) / 6.0


@ACTIVATIONS.register
def sigmoid(x):
    return fw.nn.sigmoid(x)


@ACTIVATIONS.register
def tanh(x):
    return fw.nn.tanh(x)


@ACTIVATIONS.register
def softmax(x, axis=-1):
    return fw.nn.softmax(x, axis=axis)


@ACTIVATIONS.register
def log_softmax(x, axis=-1):
    return fw.nn.log_softmax(x, axis=axis)


@ACTIVATIONS.register
def softplus(x):
    return fw.nn.softplus(x)


@ACTIVATIONS.register
def softsign(x):
    return x / (fw.abs(x) + 1.0)


@ACTIVATIONS.register
def elu(x, alpha=1.0):
    """x where x > 0, else alpha * (exp(x) - 1); exp only sees non-positive values."""
    return fw.where(x > 0, x, (fw.exp(fw.minimum(x, 0.0)) - 1.0) * alpha)


@ACTIVATIONS.register
def selu(x):
    return elu(x, _SELU_ALPHA) * _SELU_SCALE


@ACTIVATIONS.register(aliases=("swish",))
def silu(x):
    """x * sigmoid(x), also called swish."""
    return x * fw.nn.sigmoid(x)


swish = silu


@ACTIVATIONS.register
def gelu(x, approximate=False):
    return fw.nn.gelu(x, approximate=approximate)


@ACTIVATIONS.register
def exponential(x):
    return fw.exp(x)


def get(identifier):
    """The activation function for a name, a callable (returned as is), or None (linear)."""
    if identifier is None:
        return linear
    return ACTIVATIONS.get(identifier)

