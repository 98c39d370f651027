"""A TensorFlow-2-style autodiff framework on NumPy (and CuPy): ``import framework as fw``.

The pieces, bottom up: ``tensor`` (Tensor, Variable), ``primitive`` (how an op runs and is
recorded), ``ops`` and ``nn`` (every op, forward and VJP side by side), ``tape``
(GradientTape and the backward walk), ``backend`` (NumPy or CuPy), ``distributed``
(data-parallel training over MPI; mpi4py is imported only when launched under MPI), ``losses``
(Keras's loss functions).
"""
from . import backend, distributed, losses, nn, random, test
from .backend import get_backend, set_backend, to_device as _to_device_array
from .creation import eye, fill, ones, ones_like, range, zeros, zeros_like
from .custom_gradient import custom_gradient
from .dtypes import as_dtype, bool, float16, float32, float64, int32, int64
from .function import Function, TensorSpec, cond, function, while_loop
from .ops import *  # noqa: F401,F403 - the public ops
from .ops import __all__ as _ops_all
from .tape import GradientTape, UnconnectedGradients
from .tensor import Tensor, Variable, constant, convert_to_tensor


def to_device(tensor, device):
    """A copy of ``tensor`` on ``"cpu"`` or ``"gpu"`` (variables: ``var.to_device`` moves in place)."""
    from .tensor import wrap
    return wrap(_to_device_array(convert_to_tensor(tensor)._value, device))


__all__ = sorted(set(_ops_all) | {
    "GradientTape", "Tensor", "UnconnectedGradients", "Variable", "as_dtype", "backend", "bool",
    "constant", "convert_to_tensor", "custom_gradient", "distributed", "eye", "fill", "float16",
    "float32", "float64", "Function", "function", "TensorSpec", "cond", "while_loop", "get_backend", "int32", "int64", "losses", "nn", "ones", "ones_like",
    "random", "range", "set_backend", "test", "to_device", "zeros", "zeros_like"})
