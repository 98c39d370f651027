"""Activation functions by Keras's names: ``Dense(10, activation="relu")``.

The functions are the framework's own differentiable ops (``fw.nn`` where one exists), so
nothing here has a gradient of its own.
"""
import framework as fw

__all__ = ["elu", "exponential", "gelu", "get", "linear", "log_softmax", "relu", "selu", "sigmoid",
           "silu", "softmax", "softplus", "softsign", "swish", "tanh"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def linear(x):
    """The identity: what ``activation=None`` means."""
    return x


def relu(x):
    return fw.nn.relu(x)


def sigmoid(x):
    return fw.nn.sigmoid(x)


def tanh(x):
    return fw.nn.tanh(x)


def softmax(x, axis=-1):
    return fw.nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    return fw.nn.log_softmax(x, axis=axis)


def softplus(x):
    return fw.nn.softplus(x)


def softsign(x):
    return x / (fw.abs(x) + 1.0)


def elu(x, alpha=1.0):
    """x where x > 0, else alpha * (exp(x) - 1); exp only sees non-positive values."""
    return fw.where(x > 0, x, (fw.exp(fw.minimum(x, 0.0)) - 1.0) * alpha)


def selu(x):
    return elu(x, _SELU_ALPHA) * _SELU_SCALE


def silu(x):
    """x * sigmoid(x), also called swish."""
    return x * fw.nn.sigmoid(x)


swish = silu


def gelu(x, approximate=False):
    return fw.nn.gelu(x, approximate=approximate)


def exponential(x):
    return fw.exp(x)


_BY_NAME = {f.__name__: f for f in (linear, relu, sigmoid, tanh, softmax, log_softmax,
                                    softplus, softsign, elu, selu, silu, gelu, exponential)}
_BY_NAME["swish"] = silu


def get(identifier):
    """The activation function for a name, a callable (returned as is), or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"unknown activation {identifier!r}; known names: "
                             f"{', '.join(sorted(_BY_NAME))}")
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise TypeError(f"an activation must be a name, a callable or None, got {identifier!r}")

