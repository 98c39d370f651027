"""Activation functions by Keras's names: ``Dense(10, activation="relu")``.

The functions are the framework's own differentiable ops (``fw.nn`` where one exists), so
nothing here has a gradient of its own.
"""
import framework as fw
from framework.registry import Registry

__all__ = ["ACTIVATIONS", "elu", "exponential", "gelu", "get", "linear", "log_softmax", "relu", "selu", "sigmoid",
           "silu", "softmax", "softplus", "softsign", "swish", "tanh"]

ACTIVATIONS = Registry("activation")
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@ACTIVATIONS.register
def linear(x):
    """The identity: what ``activation=None`` means."""
    return x


@ACTIVATIONS.register
def relu(x):
    return fw.nn.relu(x)


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

