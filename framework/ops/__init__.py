"""Every op of the framework, and the Python operators of ``Tensor`` that call them."""
from ..engine.tensor import Tensor
from .linalg import einsum, matmul
from .math import (abs, add, cast, cos, divide, equal, erf, exp, greater, greater_equal,
                   identity, less, less_equal, log, logical_and, logical_not, logical_or,
                   maximum, minimum, multiply, negative, not_equal, pow, sigmoid, sign, sin,
                   sqrt, square, stop_gradient, subtract, tanh)
from .reduce import reduce_max, reduce_mean, reduce_min, reduce_sum
from .shape import (argmax, argmin, broadcast_to, concat, expand_dims, gather, getitem,
                    one_hot, reshape, squeeze, stack, transpose, where)
# TensorFlow's other top-level ops (the rest of tf.math and tf.linalg: framework.math, .linalg)
from .array import (boolean_mask, broadcast_dynamic_shape, broadcast_static_shape, ensure_shape,
                    gather_nd, get_static_value, identity_n, is_tensor, linspace, meshgrid,
                    newaxis, pad, parallel_stack, rank, repeat, reverse, roll, saturate_cast,
                    scatter_nd, sequence_mask, shape, shape_n, size, slice, split,
                    tensor_scatter_nd_add, tensor_scatter_nd_update, tile, unstack)
from .indexing import (reverse_sequence, strided_slice, tensor_scatter_nd_max,
                       tensor_scatter_nd_min, tensor_scatter_nd_sub, unique_with_counts,
                       unravel_index)
from .segment import searchsorted, unique
from .functional import foldl, foldr, map_fn, scan, vectorized_map
from .elementwise import (acos, acosh, add_n, asin, asinh, atan, atan2, atanh, cosh, floor,
                          floordiv, floormod, realdiv, round, scalar_mul, sinh, tan, truediv,
                          truncatediv, truncatemod)
from .matrix import norm, tensordot
from .scan import cumsum
from .sort import argsort, sort
from .stats import reduce_all, reduce_any, reduce_logsumexp, reduce_prod


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """``t`` limited to [min, max]; the gradient flows where ``t`` lies inside the range."""
    return minimum(maximum(t, clip_value_min), clip_value_max)


def _logical_xor(x, y):
    from .elementwise import logical_xor
    return logical_xor(x, y)


def _reflected(op):
    return lambda self, other: op(other, self)


def _install_operators():
    """Give ``Tensor`` its arithmetic, comparison and indexing operators."""
    binary = {"add": add, "sub": subtract, "mul": multiply, "truediv": divide, "pow": pow,
              "matmul": matmul, "floordiv": floordiv, "mod": floormod}
    for name, op in binary.items():
        setattr(Tensor, f"__{name}__", op)  # the ops are plain functions: they bind as methods
        setattr(Tensor, f"__r{name}__", _reflected(op))
    compare = {"eq": equal, "ne": not_equal, "lt": less, "le": less_equal, "gt": greater,
               "ge": greater_equal}
    compare.update({"and": logical_and, "or": logical_or, "xor": _logical_xor})
    for name, op in compare.items():
        setattr(Tensor, f"__{name}__", op)
    Tensor.__getitem__ = lambda self, key: getitem(self, key)
    Tensor.__neg__ = lambda self: negative(self)
    Tensor.__abs__ = lambda self: abs(self)
    Tensor.__pos__ = lambda self: identity(self)
    Tensor.__invert__ = lambda self: logical_not(self)


_install_operators()

__all__ = [
    "abs", "add", "argmax", "argmin", "broadcast_to", "cast", "clip_by_value", "concat", "cos",
    "divide", "einsum", "equal", "erf", "exp", "expand_dims", "gather", "getitem", "greater",
    "greater_equal", "identity", "less", "less_equal", "log", "logical_and", "logical_not",
    "logical_or", "matmul", "maximum", "minimum", "multiply", "negative", "not_equal", "one_hot",
    "pow", "reduce_max", "reduce_mean", "reduce_min", "reduce_sum", "reshape", "sigmoid", "sign",
    "sin", "sqrt", "square", "squeeze", "stack", "stop_gradient", "subtract", "tanh",
    "transpose", "where",
    # TensorFlow's other top-level ops
    "acos", "acosh", "add_n", "argsort", "asin", "asinh", "atan", "atan2", "atanh",
    "boolean_mask", "cosh", "cumsum", "floor", "floordiv", "floormod", "gather_nd", "is_tensor",
    "linspace", "meshgrid", "newaxis", "norm", "pad", "rank", "realdiv", "reduce_all",
    "reduce_any", "reduce_logsumexp", "reduce_prod", "repeat", "reverse", "roll", "round",
    "scalar_mul", "scatter_nd", "sequence_mask", "shape", "sinh", "size", "slice", "sort",
    "searchsorted", "split", "tan", "tensor_scatter_nd_add", "tensor_scatter_nd_update",
    "tensordot", "tile", "truediv", "truncatediv", "truncatemod", "unique", "unstack",
    "broadcast_dynamic_shape", "broadcast_static_shape", "ensure_shape", "get_static_value",
    "identity_n", "parallel_stack", "reverse_sequence", "saturate_cast", "shape_n",
    "strided_slice", "tensor_scatter_nd_max", "tensor_scatter_nd_min", "tensor_scatter_nd_sub",
    "unique_with_counts", "unravel_index", "foldl", "foldr", "map_fn", "scan", "vectorized_map"]
