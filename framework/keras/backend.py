"""``fw.keras.backend`` (``import framework.keras.backend as K``): Keras's global float type and
fuzz factor, ``clear_session``, the random draws, and the tensor helpers TF2 programs call as
``K.mean``, ``K.square``..., each the framework op ``tf.keras.backend`` calls (Keras 3's legacy
backend), so they are recorded by tapes and traced by ``fw.function`` like any op.

``set_floatx`` changes the dtype of what is created afterwards with no dtype of its own: layers
(and so their variables), ``K.variable``, ``K.constant`` and the random draws, as in Keras.
"""
import sys

import numpy as np

import framework as fw
from framework.engine import dtypes

__all__ = ["abs", "cast", "clear_session", "clip", "concatenate", "constant", "dot", "epsilon",
           "eval", "exp", "expand_dims", "floatx", "get_value", "int_shape", "log", "max",
           "maximum", "mean", "min", "minimum", "ndim", "ones_like", "pow", "random_bernoulli",
           "random_normal", "random_uniform", "reshape", "set_epsilon", "set_floatx",
           "set_value", "shape", "sqrt", "square", "stack", "std", "stop_gradient", "sum",
           "transpose", "variable", "zeros_like"]

_FLOAT_TYPES = ("bfloat16", "float16", "float32", "float64")
_settings = {"floatx": "float32", "epsilon": 1e-7}


def floatx():
    """The default float type, as a string (``"float32"`` unless ``set_floatx`` said else)."""
    return _settings["floatx"]


def set_floatx(value):
    """Make ``value`` (``"float16"``, ``"float32"``, ``"float64"``) the default float type of
    layers, variables and constants created from now on."""
    name = getattr(value, "name", value)
    if name not in _FLOAT_TYPES:
        raise ValueError(f"Unknown `floatx` value: {value!r}. Expected one of {_FLOAT_TYPES}")
    _settings["floatx"] = str(name)


def epsilon():
    """Keras's fuzz factor (1e-7 unless ``set_epsilon`` said else)."""
    return _settings["epsilon"]


def set_epsilon(value):
    _settings["epsilon"] = float(value)


def clear_session(free_memory=True):
    """Forget Keras's global state: layer names start again at ``dense``, ``dense_1``... (the
    layers' own counters, reset only if the layers package is loaded: the engine never imports
    it) and the global dtype policy is floatx's again (floatx and epsilon stay, as in Keras)."""
    scope = sys.modules.get("layers.scope")
    if scope is not None:
        scope.reset_names()
    mixed_precision = sys.modules.get("framework.keras.mixed_precision")
    if mixed_precision is not None:
        mixed_precision.set_global_policy(None)


# --- random draws: fw.random's, in floatx by default ---------------------------------------------
def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return fw.random.normal(shape, mean=mean, stddev=stddev, dtype=dtype or floatx(), seed=seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return fw.random.uniform(shape, minval=minval, maxval=maxval, dtype=dtype or floatx(),
                             seed=seed)


def random_bernoulli(shape, p=0.0, dtype=None, seed=None):
    """1 with probability ``p``, else 0 (Keras's: a uniform draw ``<= p``)."""
    dtype = dtype or floatx()
    draw = fw.random.uniform(shape, dtype=dtype, seed=seed)
    return fw.cast(fw.less_equal(draw, fw.cast(p, dtype)), dtype)


# --- tensors --------------------------------------------------------------------------------------
def _floating(x):
    """Booleans become floatx for the reductions, as Keras's ``mean`` and ``std`` do."""
    x = fw.convert_to_tensor(x)
    return fw.cast(x, floatx()) if x.dtype == fw.bool else x


def mean(x, axis=None, keepdims=False):
    return fw.reduce_mean(_floating(x), axis, keepdims)


def std(x, axis=None, keepdims=False):
    return fw.math.reduce_std(_floating(x), axis=axis, keepdims=keepdims)


def sum(x, axis=None, keepdims=False):  # noqa: A001 - Keras's name
    return fw.reduce_sum(x, axis, keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001
    return fw.reduce_max(x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return fw.reduce_min(x, axis, keepdims)


def clip(x, min_value, max_value):
    """``x`` clipped to ``[min_value, max_value]``; a maximum below the minimum is raised to it,
    and None is no bound, as in Keras."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)) \
            and max_value < min_value:
        max_value = min_value
    return fw.clip_by_value(x, -np.inf if min_value is None else min_value,
                            np.inf if max_value is None else max_value)


def dot(x, y):
    """Keras's ``dot``: a matrix product, or for more axes the sum over ``x``'s last and
    ``y``'s second-to-last axis (shape ``x.shape[:-1] + y.shape[:-2] + y.shape[-1:]``)."""
    x, y = fw.convert_to_tensor(x), fw.convert_to_tensor(y)
    if x.ndim <= 2 and y.ndim <= 2:
        return fw.matmul(x, y)
    return fw.tensordot(x, y, axes=[[x.ndim - 1], [y.ndim - 2]])


def concatenate(tensors, axis=-1):
    return fw.concat(list(tensors), axis)


def int_shape(x):
    """The shape as a tuple of Python ints."""
    return tuple(x.shape if hasattr(x, "shape") else fw.convert_to_tensor(x).shape)


def ndim(x):
    return len(int_shape(x))


def cast(x, dtype):
    return fw.cast(x, dtype)


def variable(value, dtype=None, name=None, constraint=None):
    """A variable of ``value``, in floatx unless ``dtype`` says else."""
    return fw.Variable(value, dtype=dtype or floatx(), name=name, constraint=constraint)


def constant(value, dtype=None, shape=None, name=None):
    return fw.constant(value, dtype=dtype or floatx(), shape=shape)


def get_value(x):
    """The value of a tensor or variable as a NumPy array."""
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


eval = get_value  # noqa: A001 - Keras's name


def set_value(x, value):
    """Write ``value`` into the variable ``x``."""
    x.assign(np.asarray(value, dtype=dtypes.numpy_dtype(x.dtype)))


# The helpers that are one framework op under the same name as Keras's
abs = fw.abs  # noqa: A001
exp, log, sqrt, square = fw.exp, fw.math.log, fw.sqrt, fw.square
maximum, minimum, pow = fw.maximum, fw.minimum, fw.pow  # noqa: A001
ones_like, zeros_like, reshape, shape = fw.ones_like, fw.zeros_like, fw.reshape, fw.shape
expand_dims, stack, transpose, stop_gradient = fw.expand_dims, fw.stack, fw.transpose, \
    fw.stop_gradient

from ..namespaces import suggest_close_names as _suggest  # noqa: E402

_suggest(__import__("sys").modules[__name__], "fw.keras.backend")
