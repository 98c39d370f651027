"""Record TensorFlow's own numbers for the TF surface of ``framework`` (``tf_reference.json``).

Run with the TensorFlow environment, from the repository root:

    /work/tfenv/bin/python tests/reference/make_tf_reference.py

Each op case names a function by its path under ``tf`` (``"math.log1p"``, ``"linalg.inv"``),
which is its path under ``fw`` too (ports rename ``tf`` to ``fw`` and nothing else), with
fixed float32 inputs. The script stores the inputs, TensorFlow's outputs and their dtypes, the
gradient of ``sum(w * output)`` for fixed weights ``w`` with respect to each floating input,
and the second-order term (the gradient of ``sum(v * first_gradient)``). Cases whose inputs
TensorFlow refuses store that it raised. Then the tensor behaviours: the dtypes that Python
values convert to, and what ``format`` makes of tensors. ``tests/test_tf_reference.py``
replays every entry on ``framework`` and needs no TensorFlow.
"""
import json
import os
import tempfile

import numpy as np
import tensorflow as tf

import replay  # (this folder: the script's own)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_reference.json")
rng = np.random.default_rng(2021)


def t(values, dtype="float32"):
    return {"tensor": np.asarray(values).astype(dtype).tolist(), "dtype": dtype}


def normal(*shape):
    return t(rng.standard_normal(shape))


def uniform(lo, hi, *shape):
    return t(rng.uniform(lo, hi, shape))


def away(*shape):
    return t(rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 2.0, shape))


def spd(n):
    a = rng.standard_normal((n, n))
    return t(a @ a.T + n * np.eye(n))


def distinct(*shape):
    return t(rng.permutation(int(np.prod(shape))).reshape(shape) * 0.25 - 2.0)


def ints(values):
    return t(values, "int32")


X, POS, UNIT = normal(3, 4), uniform(0.5, 2.0, 3, 4), uniform(-0.8, 0.8, 3, 4)
T3 = normal(2, 3, 4)
M = t(np.eye(3) * 2 + 0.3 * rng.standard_normal((3, 3)))

# (path, args, kwargs[, max gradient order])
CASES = [(f"math.{name}", [arg], {}) for name, arg in [
    ("log1p", POS), ("expm1", X), ("rsqrt", POS), ("reciprocal", away(3, 4)), ("tan", UNIT),
    ("asin", UNIT), ("acos", UNIT), ("atan", X), ("sinh", X), ("cosh", X), ("asinh", X),
    ("acosh", uniform(1.3, 3.0, 3, 4)), ("atanh", UNIT), ("log_sigmoid", X), ("erfc", X),
    ("sign", away(3, 4)), ("floor", X), ("ceil", X), ("round", X), ("rint", X),
    ("is_finite", X), ("softsign", away(3, 4)), ("sin", X), ("sqrt", POS), ("exp", X),
    ("log", POS), ("sigmoid", X), ("tanh", X), ("abs", away(3, 4)), ("square", X),
    ("reciprocal_no_nan", t([[0.0, 2.0, -0.5]])),
]] + [(f"math.{name}", args, {}) for name, args in [
    ("atan2", [X, away(3, 4)]), ("squared_difference", [X, normal(4)]),
    ("floormod", [t([[7.5, -7.5, 2.25, -1.0]]), t([[2.0, 2.0, -0.5, 0.75]])]),
    ("floordiv", [t([[7.5, -7.5, 2.25, -1.0]]), t([[2.0, 2.0, -0.5, 0.75]])]),
    ("floordiv", [ints([7, -7, 7, -7]), ints([2, 2, -2, -2])]),
    ("floormod", [ints([7, -7, 7, -7]), ints([2, 2, -2, -2])]),
    ("truediv", [ints([1, 7]), ints([2, 2])]),
    ("divide_no_nan", [t([1.0, 2.0, 3.0]), t([0.0, 4.0, -2.0])]),
    ("multiply_no_nan", [t([np.inf, 2.0]), t([0.0, 4.0])]),
    ("xlogy", [t([0.0, 2.0, 1.5]), t([0.0, 3.0, 0.5])]),
    ("xdivy", [t([0.0, 2.0]), t([0.0, 3.0])]),
    ("xlog1py", [t([0.0, 2.0]), t([-1.0, 3.0])]),
    ("maximum", [X, normal(3, 4)]), ("pow", [POS, normal(3, 4)]),
    ("divide", [X, POS]), ("logical_xor", [t([True, False, True], "bool"),
                                            t([True, True, False], "bool")]),
    ("round", [ints([3, -2])]),
]] + [
    ("math.add_n", [[X, normal(3, 4), normal(3, 4)]], {}),
    ("math.scalar_mul", [2.5, X], {}),
    ("math.reduce_sum", [[1, 2, 3]], {}), ("math.reduce_prod", [[1, 2, 3]], {}),
    ("math.cumsum", [[1, 2, 3]], {}), ("math.argmin", [X], {"axis": 1}),
    ("math.argmax", [X], {}), ("math.count_nonzero", [t([[1.0, 0.0], [2.0, 3.0]])], {"axis": 0}),
    ("math.count_nonzero", [t([[1, 0], [2, 3]], "int32")], {}),
    ("math.reduce_any", [t([[True, False], [False, False]], "bool")], {"axis": 1}),
    ("math.reduce_all", [t([[True, False], [True, True]], "bool")], {"axis": 1}),
    ("math.top_k", [distinct(2, 5)], {"k": 3}),
    ("math.top_k", [t([[3.0, 1.0, 3.0, 2.0]])], {"k": 2}),
    ("math.approx_max_k", [distinct(2, 5), 2], {}),
    ("argsort", [t([[3.0, 1.0, 3.0, 2.0]])], {}),
    ("argsort", [t([[3.0, 1.0, 3.0, 2.0]])], {"direction": "DESCENDING"}),
    ("sort", [distinct(2, 5)], {"direction": "DESCENDING"}),
    ("sort", [distinct(3, 2)], {"axis": 0}),
    ("math.l2_normalize", [X], {"axis": 1}),
    ("math.cumulative_logsumexp", [X], {"axis": 1}),
    ("nn.moments", [T3], {"axes": [0, 1]}, 1),  # (TF's variance holds the mean constant)
    ("nn.moments", [T3], {"axes": [2], "keepdims": True}, 1),
] + [(f"math.{name}", [arg], kw) for name, arg in [
    ("reduce_prod", away(2, 3, 4)), ("reduce_logsumexp", T3), ("reduce_variance", T3),
    ("reduce_std", T3), ("reduce_euclidean_norm", T3), ("reduce_mean", T3), ("reduce_max", T3),
] for kw in [{}, {"axis": 1}, {"axis": [0, 2], "keepdims": True}]] + [
    (f"math.{name}", [away(2, 3, 4)], {"axis": axis, "exclusive": ex, "reverse": rev})
    for name in ("cumsum", "cumprod") for axis in (0, -1)
    for ex in (False, True) for rev in (False, True)
] + [(f"nn.{name}", [away(3, 4)], kw) for name, kw in [
    ("elu", {}), ("selu", {}), ("leaky_relu", {}), ("leaky_relu", {"alpha": 0.01}),
    ("relu6", {}), ("silu", {}), ("swish", {}), ("silu", {"beta": 1.5}), ("softplus", {}),
    ("relu", {}), ("gelu", {}), ("softmax", {}), ("log_softmax", {}), ("l2_normalize", {}),
    ("softsign", {}),
]] + [
    ("nn.relu6", [t([[-1.0, 0.5, 7.0, 5.5]])], {}),
    ("nn.leaky_relu", [ints([-2, 3])], {}),
    ("nn.sigmoid_cross_entropy_with_logits", [], {"labels": uniform(0, 1, 3, 4), "logits": X}),
] + [(f"linalg.{name}", args, kw) for name, args, kw in [
    ("inv", [M], {}), ("inv", [M], {"adjoint": True}), ("det", [M], {}),
    ("solve", [M, normal(3, 2)], {}), ("solve", [M, normal(3, 1)], {"adjoint": True}),
    ("slogdet", [M], {}), ("logdet", [spd(3)], {}), ("cholesky", [spd(3)], {}),
    ("cholesky_solve", [t(np.linalg.cholesky(np.asarray(spd(3)["tensor"]))), normal(3, 2)],
     {}),
    ("triangular_solve", [M, normal(3, 2)], {}),
    ("triangular_solve", [M, normal(3, 2)], {"lower": False}),
    ("trace", [normal(2, 3, 3)], {}), ("diag", [normal(2, 3)], {}),
    ("diag_part", [normal(3, 4)], {}), ("matrix_transpose", [T3], {}),
    ("band_part", [normal(4, 4), 1, 0], {}), ("tensordot", [normal(2, 3), normal(3, 4), 1], {}),
    ("tensordot", [T3, normal(4, 2, 5), [[0, 2], [1, 0]]], {}),
    ("matvec", [normal(3, 4), normal(4)], {}), ("cross", [normal(2, 3), normal(2, 3)], {}),
    ("norm", [X], {}), ("norm", [X], {"axis": 1, "keepdims": True}),
    ("norm", [X], {"ord": 1, "axis": 0}), ("norm", [X], {"ord": 3, "axis": -1}),
    ("norm", [X], {"ord": np.inf, "axis": -1}), ("norm", [T3], {"axis": [-2, -1]}),
    ("norm", [X], {"ord": 1, "axis": [0, 1]}), ("norm", [X], {"ord": np.inf, "axis": [0, 1]}),
    ("normalize", [X], {"axis": 1}), ("global_norm", [[normal(3), normal(2, 2)]], {}),
    ("l2_normalize", [X], {"axis": 0}), ("adjoint", [X], {}), ("eye", [3], {}),
]] + [
    ("linspace", [t(-1.5), t(2.0), 5], {}), ("linspace", [0, 1, 5], {}),
    ("linspace", [normal(2), normal(2), 4], {"axis": 1}),
    ("split", [X, 2], {"axis": 1}), ("split", [X, [1, -1, 1]], {"axis": 1}),
    ("unstack", [T3], {"axis": 1}), ("tile", [T3, [2, 1, 3]], {}),
    ("pad", [X, [[1, 0], [2, 1]]], {"constant_values": 0.5}),
    ("pad", [X, [[1, 2], [2, 1]]], {"mode": "REFLECT"}),
    ("pad", [X, [[0, 3], [1, 1]]], {"mode": "SYMMETRIC"}),
    ("reverse", [T3, [0, -1]], {}), ("roll", [T3, [1, -2], [0, 2]], {}),
    ("repeat", [X, [1, 0, 2]], {"axis": 0}), ("repeat", [X, 2], {}),
    ("slice", [T3, [1, 0, 1], [1, -1, 2]], {}),
    ("boolean_mask", [X, t(np.asarray(X["tensor"]) > 0, "bool")], {}),
    ("boolean_mask", [T3, [True, False, True]], {"axis": 1}),
    ("gather_nd", [T3, [[0, 1], [1, 2], [0, 1]]], {}),
    ("scatter_nd", [[[1], [3], [1]], normal(3, 2), [5, 2]], {}),
    ("meshgrid", [normal(3), normal(4)], {}),
    ("meshgrid", [normal(2), normal(3)], {"indexing": "ij"}),
    ("broadcast_to", [normal(3, 1), [2, 3, 4]], {}),
    ("shape", [T3], {}), ("size", [T3], {}), ("rank", [T3], {}),
    ("reduce_logsumexp", [X], {"axis": 0}), ("norm", [T3], {}),
    ("truncatediv", [ints([-7, 7]), ints([2, -2])], {}),
    ("truncatemod", [ints([-7, 7]), ints([2, -2])], {}),
    ("sequence_mask", [[1, 3, 0]], {"maxlen": 4}),
    ("tensor_scatter_nd_add", [X, [[0, 1], [2, 3]], normal(2)], {}),
    ("tensor_scatter_nd_update", [X, [[0, 1], [2, 3]], normal(2)], {}),
    ("unique", [ints([3, 1, 3, 2, 1])], {}), ("unique_with_counts", [ints([3, 1, 3, 2, 1])], {}),
    ("strided_slice", [T3, [0, 1, 0], [2, 3, 4], [1, 1, 2]], {"shrink_axis_mask": 1}),
    ("strided_slice", [T3, [1, 0, 3], [0, 2, 0], [1, 1, -1]],
     {"begin_mask": 1, "end_mask": 5, "new_axis_mask": 2}),
    ("reverse_sequence", [X, ints([2, 4, 0])], {"seq_axis": 1, "batch_axis": 0}),
    ("tensor_scatter_nd_sub", [X, [[0, 1], [2, 3]], normal(2)], {}),
    ("tensor_scatter_nd_max", [X, [[0, 1], [2, 3]], normal(2)], {}),
    ("tensor_scatter_nd_min", [X, [[0, 1], [2, 3]], normal(2)], {}),
    ("unravel_index", [ints([5, 7]), ints([2, 4])], {}),
    ("saturate_cast", [t([300.0, -5.0, 7.6])], {"dtype": "uint8"}),
    ("identity_n", [[X, normal(2)]], {}), ("shape_n", [[X, T3]], {}),
    ("searchsorted", [t([[1.0, 3.0, 5.0], [0.0, 2.0, 4.0]]), t([[3.0, 6.0], [-1.0, 2.0]])],
     {"side": "right"}),
    ("math.unsorted_segment_sum", [X, ints([0, 2, 0]), 4], {}),
    ("math.unsorted_segment_mean", [X, ints([1, 1, 0]), 3], {}),
    ("math.segment_sum", [X, ints([0, 0, 2])], {}),
    ("math.segment_mean", [X, ints([0, 1, 1])], {}),
    ("math.polyval", [[t(1.5), t(-2.0), t(0.5)], X], {}),
    ("math.bincount", [ints([1, 1, 3])], {"minlength": 5}),
    ("math.bincount", [ints([0, 2, 2])], {"weights": t([0.5, 1.5, 1.0])}),
    ("math.confusion_matrix", [ints([0, 1, 1, 2]), ints([0, 1, 0, 2])], {"num_classes": 3}),
    ("math.in_top_k", [ints([1, 0]), t([[0.1, 0.9, 0.0], [0.5, 0.5, 0.0]]), 1], {}),
    ("math.invert_permutation", [ints([2, 0, 1])], {}), ("math.zero_fraction", [X], {}),
    ("nn.crelu", [away(3, 4)], {}), ("nn.l2_loss", [X], {}),
    ("nn.batch_normalization", [X, normal(4), uniform(0.5, 2, 4), normal(4), normal(4), 1e-3],
     {}),
    ("nn.weighted_cross_entropy_with_logits", [uniform(0, 1, 3, 4), X, 2.5], {}),
    ("nn.compute_average_loss", [normal(3)], {"sample_weight": normal(3)}),
    ("math.lgamma", [t([0.3, 1.0, 2.5, 7.0, 25.0, -0.5, -2.3])], {}),
    ("math.digamma", [t([0.3, 1.0, 2.5, 7.0, 25.0, -0.5, -2.3])], {}),
    ("math.polygamma", [t([1.0] * 5), t([0.3, 1.0, 2.5, -1.5, 12.0])], {}),
    ("math.polygamma", [t([2.0] * 3), t([0.3, 2.5, 12.0])], {}),
    ("math.erfinv", [uniform(-0.95, 0.95, 3, 4)], {}), ("math.ndtri", [uniform(0.05, 0.95, 6)], {}),
    ("math.erfcinv", [uniform(0.05, 1.95, 6)], {}),
    ("math.bessel_i0e", [t([-30.0, -3.0, -0.5, 0.7, 4.0, 24.5, 26.0])], {}),  # (a kink at 0)
    ("math.bessel_i1e", [t([-30.0, -3.0, -0.5, 0.7, 4.0, 24.5, 26.0])], {}),
    # (not at 0: TensorFlow's derivative of bessel_i1 there is 1, the true one 1/2)
    ("math.bessel_i0", [t([-3.0, -0.5, 0.7, 4.0])], {}),
    ("math.bessel_i1", [t([-3.0, -0.5, 0.7, 4.0])], {}),
    ("math.zeta", [t([2.0, 3.0, 4.5]), t([1.0, 0.5, 3.0])], {}),
    ("math.angle", [t([-2.0, 0.0, 3.0])], {}),
    ("math.unsorted_segment_max", [X, ints([0, 2, 0]), 3], {}),
    ("math.unsorted_segment_min", [X, ints([1, 1, 0]), 2], {}),
    ("math.unsorted_segment_prod", [X, ints([1, 1, 0]), 3], {}),
    ("math.unsorted_segment_sqrt_n", [X, ints([1, 1, 0]), 2], {}),
    ("math.segment_max", [X, ints([0, 0, 1])], {}), ("math.segment_min", [X, ints([0, 1, 1])], {}),
    ("math.segment_prod", [X, ints([0, 1, 1])], {}),
    ("math.lbeta", [uniform(0.3, 4.0, 3, 4)], {}), ("math.accumulate_n", [[X, X]], {}),
    ("math.nextafter", [t([1.0, -1.0]), t([2.0, -2.0])], {}),
    ("math.real", [X], {}), ("math.imag", [X], {}), ("math.conj", [X], {}),
    ("math.is_non_decreasing", [ints([1, 2, 2])], {}),
    ("math.is_strictly_increasing", [ints([1, 2, 2])], {}),
    ("nn.in_top_k", [ints([2, 0]), t([[0.1, 0.9, 0.0], [0.5, 0.5, 0.0]]), 2], {}),
    ("nn.log_poisson_loss", [t([0.2, 0.5, 1.5, 3.0, 7.0]), normal(5)],
     {"compute_full_loss": True}),
    ("nn.weighted_moments", [X, [1], uniform(0.5, 2.0, 3, 4)], {}),
    ("nn.sufficient_statistics", [X, [0]], {"shift": t(0.5)}),
    ("nn.normalize_moments", [t(3.0), normal(4), uniform(2.0, 3.0, 4), t(0.5)], {}),
    ("linalg.eigvalsh", [t(np.diag([1.0, 3.0, 6.0]) + 0.3 * rng.standard_normal((3, 3)))], {}),
    ("linalg.svd", [normal(4, 3)], {"compute_uv": False}),
    ("linalg.svd", [normal(2, 3, 5)], {"compute_uv": False}),
    ("linalg.qr", [normal(4, 3)], {}), ("linalg.qr", [normal(3, 3)], {}),
    ("linalg.tridiagonal_matmul", [normal(2, 3, 4), normal(2, 4, 2)], {}),
    ("linalg.tridiagonal_solve", [t(rng.standard_normal((3, 4)) + [[0.0], [4.0], [0.0]]),
                                  normal(4, 2)], {}),
    ("linalg.lu", [normal(4, 4)], {}), ("linalg.lu", [normal(2, 3, 3)], {}),
    ("linalg.sqrtm", [t(np.eye(3) * 2 + 0.3 * rng.standard_normal((3, 3)))], {}),
    ("linalg.banded_triangular_solve", [t(rng.standard_normal((3, 4)) + [[3.0], [0.0], [0.0]]),
                                        normal(4, 2)], {}),
    # (values only: TF's eigh_tridiagonal bisects, and its gradient is not the eigenvalues')
    ("linalg.eigh_tridiagonal", [t([1.0, 3.0, 6.0, 9.0]), normal(3)], {}, 0),
    ("linalg.expm", [normal(3, 3)], {}), ("linalg.expm", [t(4 * rng.standard_normal((2, 3, 3)))],
                                           {}),
    ("linalg.pinv", [normal(4, 3)], {}), ("linalg.pinv", [normal(2, 3)], {}),
    ("linalg.lstsq", [normal(5, 3), normal(5, 2)], {}),
    ("linalg.lstsq", [normal(2, 4), normal(2, 3)], {"l2_regularizer": 0.5}),
    ("linalg.set_diag", [normal(4, 3), normal(3)], {}),
    ("linalg.set_diag", [normal(2, 2, 3), normal(2, 2)], {}),
    ("linalg.tensor_diag", [normal(2, 2)], {}),
    ("linalg.tensor_diag_part", [normal(2, 2, 2, 2)], {}),
    ("linalg.matrix_rank", [t([[1.0, 2.0], [2.0, 4.0]])], {}),
    ("math.reduce_variance", [ints([1, 3])], {}),
    ("sqrt", [ints([4, 9])], {}), ("nn.softmax", [ints([1, 2])], {}),
    ("math.log1p", [ints([1])], {}), ("math.is_nan", [ints([1])], {}),
    ("nn.elu", [ints([1])], {}), ("math.reduce_any", [ints([1, 0])], {}),
    ("exp", [ints([1])], {}), ("math.floor", [ints([1])], {}),
]


def build(spec):
    return replay.build(spec, tf.constant)


def random_like(tensors):
    return [tf.constant(rng.standard_normal(x.shape.as_list()), x.dtype) for x in tensors]


def record_case(path, args, kwargs, order):
    entry = {"op": path, "args": args, "kwargs": kwargs, "order": order}
    op = replay.resolve(tf, path)
    built_args, built_kwargs = [build(a) for a in args], {k: build(v) for k, v in kwargs.items()}
    try:
        while True:
            try:
                result, outs, weights, grads, vs, grads2 = replay.run(
                    tf, op, built_args, built_kwargs, random_like, random_like, order)
                break
            except LookupError:  # no gradient rule of this order in TensorFlow: one less
                entry["order"] = order = order - 1
    except (tf.errors.OpError, TypeError, ValueError) as error:
        entry["raises"] = type(error).__name__
        return entry
    entry["outputs"] = [{"value": o.numpy().tolist(), "dtype": o.dtype.name,
                         "shape": o.shape.as_list()} for o in outs]
    entry["structure"] = type(result).__name__
    entry["weights"] = [w.numpy().tolist() for w in weights]
    entry["grads"] = [g.numpy().tolist() for g in grads]
    entry["directions"] = [v.numpy().tolist() for v in vs]
    entry["grads2"] = [g.numpy().tolist() for g in grads2]
    return entry


CONVERSIONS = [[1, 3.0], [True, False], [1, 2], 1, 1.5, True, [[1, 2], [3.5, 4]], 2 ** 40,
               [1, 2 ** 40], [], (1, 2.5), [[True], [False]]]
FORMATS = [(1.23456, "float32", ".4f"), (2.5, "float32", ".3f"), (7, "int32", "d"),
           (7, "int32", ">4"), (2.5, "float32", ""), ([2.5, 1.0], "float32", ""),
           (0.125, "float64", ".2e"), (True, "bool", ""), ([[1, 2], [3, 4]], "int32", ""),
           (3.0, "float32", "+.1f"), (1e-8, "float32", "g"), (-0.5, "float32", "%")]
PRINTS = [  # (inputs, kwargs) of tf.print
    ([t([1.5, 2.0])], {}), ([t(3.0)], {}), (["loss:", t(0.6931472), "step", 3], {}),
    ([ints([[1, 2], [3, 4]])], {}), ([ints(list(range(10)))], {}),
    ([t([0.1, 1e-8, 12345678.0, -2.5e10])], {}), ([t([True, False], "bool")], {}),
    ([t(np.arange(20.0).reshape(4, 5))], {}), ([ints(np.arange(12).reshape(2, 2, 3))], {}),
    ([ints(np.arange(64).reshape(8, 8))], {}), ([t(np.arange(24.0).reshape(2, 3, 4))],
                                                 {"summarize": 1}),
    ([ints(list(range(10)))], {"summarize": -1}), ([t([1.5, 2.0]), t(2.0)], {"sep": "|",
                                                                           "end": "!\n"}),
    ([t(1 / 3, "float64"), t(1 / 3)], {}), ([t([np.nan, np.inf, -np.inf])], {}),
    ([t(-0.0)], {}), ([t(1.1, "float16")], {}), ([t([], "float32")], {}),
    ([["a", 1, t(2.5)], {"k": ints([1, 2])}, None, True, 2.5], {}),
]
OPERATORS = [("floordiv", 7, -2), ("mod", 7, -2), ("floordiv", 7.5, -2.0), ("mod", 7.5, -2.0),
             ("mod", -7.5, 2.0), ("floordiv", -7, 2), ("mod", -7, 3)]


def record_print(inputs, kwargs):
    """What ``tf.print`` writes (its eager kernel writes from C++: caught through a file)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "out.txt")
        tf.print(*[replay.build_nested(x, tf.constant) for x in inputs],
                 output_stream=f"file://{path}", **kwargs)
        with open(path) as f:
            text = f.read()
    return {"inputs": inputs, "kwargs": kwargs, "text": text}


def main():
    cases = [record_case(c[0], c[1], c[2], c[3] if len(c) > 3 else 2) for c in CASES]
    conversions = [{"value": v, "dtype": tf.constant(v).dtype.name} for v in CONVERSIONS]
    formats = [{"value": v, "dtype": d, "spec": s,
                "text": format(tf.constant(v, dtype=d), s)} for v, d, s in FORMATS]
    operators = []
    for name, a, b in OPERATORS:
        result = {"floordiv": lambda x, y: x // y, "mod": lambda x, y: x % y}[name](
            tf.constant(a), tf.constant(b))
        operators.append({"op": name, "a": a, "b": b, "value": result.numpy().item(),
                          "dtype": result.dtype.name})
    data = {"tensorflow": tf.__version__, "cases": cases, "conversions": conversions,
            "formats": formats, "operators": operators,
            "prints": [record_print(*p) for p in PRINTS]}
    with open(OUT, "w") as f:
        json.dump(data, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(cases)} op cases to {OUT}")


if __name__ == "__main__":
    main()
