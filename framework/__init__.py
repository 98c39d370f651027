"""A TensorFlow-2-style autodiff framework on NumPy (and CuPy): ``import framework as fw``.

The floors, bottom up: ``engine/`` (tensors and variables, dtypes, the NumPy/CuPy backend,
primitives, the recording interface, the tape and its Jacobians, sparse gradients, custom
gradients: what a newcomer reads first), ``ops/`` (every op, forward and VJP side by side;
``fw.nn``, ``fw.math`` and ``fw.linalg`` are views of them), ``tracing/`` (``fw.function``: the
tracer and the plan it replays), ``tuning/`` (host forms and GPU kernels, registered beside the
ops they speed up), and around them TensorFlow's surface: ``losses``, ``metrics``, ``data``,
``train`` (checkpoints over one atomic file format, ``checkpoint_file``), ``summary``,
``distributed`` (MPI; mpi4py imported only when launched under it), ``random``, ``module``.
"""
from . import config, data, distributed, losses, metrics, nn, random, summary, test, train
from .clip import clip_by_global_norm, clip_by_norm
from .config import device
from .creation import eye, fill, ones, ones_like, range, zeros, zeros_like
from .engine import backend, dtypes, nest  # (fw.dtypes and fw.nest: tf.dtypes, tf.nest)
from .engine.backend import get_backend, set_backend, to_device as _to_device_array
from .engine.custom_gradient import custom_gradient
from .engine.dtypes import (DType, as_dtype, bool, complex64, complex128, float16, float32,
                            float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64)
from .engine.indexed_slices import IndexedSlices
from . import initializers
from .tracing.function import Function, TensorSpec, cond, function, while_loop
from .initializers import (constant_initializer, glorot_uniform_initializer, ones_initializer,
                           random_normal_initializer, random_uniform_initializer,
                           zeros_initializer)
from .module import Module, name_scope
from .ops import *  # noqa: F401,F403 - the public ops
from .ops import __all__ as _ops_all
from .engine.tape import GradientTape, UnconnectedGradients
from .engine.tensor import Tensor, TensorShape, Variable, constant, convert_to_tensor

# TensorFlow's wider surface: the tf.math and tf.linalg namespaces, the version, and an
# unknown name's AttributeError that suggests the closest existing ones
from . import linalg, math  # noqa: E402 - after nn and ops, whose objects they re-export
from . import keras  # noqa: E402 - tf.keras: views over layers/ and optimizers/, reached lazily
from .namespaces import suggest_close_names as _suggest_close_names
from .printing import print  # noqa: A001 - tf.print
from .version import __version__
from . import image  # noqa: E402 - tf.image
from .python_function import numpy_function, py_function  # noqa: E402
from .tensor_array import TensorArray  # noqa: E402


def to_device(tensor, device):
    """A copy of ``tensor`` on ``"cpu"`` or ``"gpu"`` (variables: ``var.to_device`` moves in place)."""
    from .engine.tensor import wrap
    return wrap(_to_device_array(convert_to_tensor(tensor)._value, device))


__all__ = sorted(set(_ops_all) | {
    "IndexedSlices", "clip_by_global_norm", "clip_by_norm", "config", "data", "device", "train",
    "summary",
    "GradientTape", "Module", "Tensor", "UnconnectedGradients", "Variable", "as_dtype", "backend",
    "bool", "DType", "complex64", "complex128", "int8", "int16", "uint8", "uint16", "uint32",
    "uint64",
    "constant", "convert_to_tensor", "custom_gradient", "distributed", "eye", "fill", "float16",
    "float32", "float64", "get_backend", "int32", "int64", "losses", "metrics", "nn", "ones",
    "ones_like", "random", "range", "set_backend", "test", "to_device", "zeros", "zeros_like"} | {
    "linalg", "math", "print", "TensorShape", "__version__", "dtypes", "nest", "keras", "name_scope"} | {
    "Function", "TensorSpec", "cond", "function", "while_loop"} | {
    "TensorArray", "image", "numpy_function", "py_function"})

for _module, _label in ((nn, "fw.nn"), (random, "fw.random"), (__import__(__name__), "fw")):
    _suggest_close_names(_module, _label)
del _module, _label
