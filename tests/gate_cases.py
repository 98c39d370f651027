"""Arguments for every public function of the framework's namespaces, for the one-gate test
(``tests/test_gate.py``): each function is called eagerly and under ``fw.function`` on two
inputs of one signature, and the second call must give eager's answer.

A function found in a namespace is called with the first of ``GENERIC`` that it accepts
eagerly, unless ``CASES`` gives it arguments of its own (indices, segment ids, permutations:
values a generic tensor cannot be). ``NOT_COMPUTATIONS`` lists what is no computation on
tensors (decorators, settings, type queries), each with the reason. A new function of a
namespace is therefore covered without an edit here, or the test says it found no arguments.

A case is ``make(rng)``: the positional arguments, drawn from ``rng``. Both calls use the same
Python values (axes, sizes) and different tensors.
"""
import numpy as np

import framework as fw


def _f(rng, *shape, low=None):
    a = rng.standard_normal(shape)
    if low is not None:
        a = np.abs(a) + low
    return fw.constant(a.astype(np.float32))


def _i(rng, *shape, high=4, low=0):
    return fw.constant(rng.integers(low, high, shape).astype(np.int32))


def _spd(rng, n=3):
    a = rng.standard_normal((n, n))
    return fw.constant((a @ a.T + n * np.eye(n)).astype(np.float32))


def _perm(rng, n=5):
    return fw.constant(rng.permutation(n).astype(np.int32))


def _sorted_ids(rng, n=6, segments=3):
    ids = np.sort(rng.integers(0, segments, n))
    ids[0], ids[-1] = 0, segments - 1
    return fw.constant(ids.astype(np.int32))


def _low_rank(rng, n=4):
    rank = int(rng.integers(1, n))
    return fw.matmul(_f(rng, n, rank), _f(rng, rank, n))


# Tried in order; the first that the function accepts eagerly for both draws is used.
GENERIC = [
    lambda r: (_f(r, 3, 4),),
    lambda r: (_f(r, 3, 4), _f(r, 3, 4)),
    lambda r: (_f(r, 3, 4, low=0.5),),
    lambda r: (_f(r, 3, 4, low=0.5), _f(r, 3, 4, low=0.5)),
    lambda r: (_spd(r),),
    lambda r: (_spd(r), _f(r, 3, 2)),
    lambda r: (_spd(r), _spd(r)),
    lambda r: (_f(r, 4),),
    lambda r: (_f(r, 3, 4), 1),
    lambda r: (_f(r, 3, 4), [1]),
    lambda r: ([_f(r, 3, 4), _f(r, 3, 4)],),
    lambda r: (_i(r, 6),),
    lambda r: (_i(r, 6, high=2).__ne__(0),),
    lambda r: (_i(r, 6, high=2).__ne__(0), _i(r, 6, high=2).__ne__(0)),
]

CASES = {
    "constant": lambda r: (_f(r, 3, 4),),
    "concat": lambda r: ([_f(r, 3, 4), _f(r, 2, 4)], 0),
    "eye": lambda r: (3,),
    "ones": lambda r: ([2, 3],),
    "zeros": lambda r: ([2, 3],),
    "linspace": lambda r: (_f(r), _f(r), 5),
    # indices, segment ids, permutations, sizes
    "gather": lambda r: (_f(r, 5, 3), _i(r, 4, high=5)),
    "gather_nd": lambda r: (_f(r, 4, 3), _i(r, 5, 2, high=3)),
    "scatter_nd": lambda r: (_i(r, 3, 1, high=6), _f(r, 3), [6]),
    "tensor_scatter_nd_update": lambda r: (_f(r, 6), _i(r, 3, 1, high=6), _f(r, 3)),
    "tensor_scatter_nd_add": lambda r: (_f(r, 6), _i(r, 3, 1, high=6), _f(r, 3)),
    "tensor_scatter_nd_sub": lambda r: (_f(r, 6), _i(r, 3, 1, high=6), _f(r, 3)),
    "tensor_scatter_nd_max": lambda r: (_f(r, 6), _i(r, 3, 1, high=6), _f(r, 3)),
    "tensor_scatter_nd_min": lambda r: (_f(r, 6), _i(r, 3, 1, high=6), _f(r, 3)),
    "one_hot": lambda r: (_i(r, 5), 4),
    "embedding_lookup": lambda r: (_f(r, 5, 3), _i(r, 4, high=5)),
    "boolean_mask": lambda r: (_f(r, 6), _i(r, 6, high=2).__ne__(0)),
    "where": lambda r: (_i(r, 3, 4, high=2).__ne__(0), _f(r, 3, 4), _f(r, 3, 4)),
    "fill": lambda r: ([2, 3], _f(r)),
    "searchsorted": lambda r: (fw.sort(_f(r, 6)), _f(r, 4)),
    "invert_permutation": lambda r: (_perm(r),),
    "unravel_index": lambda r: (_i(r, 4, high=12), [3, 4]),
    "bincount": lambda r: (_i(r, 8, high=5),),
    "confusion_matrix": lambda r: (_i(r, 8), _i(r, 8), 4),
    "in_top_k": lambda r: (_i(r, 3), _f(r, 3, 4), 2),
    "top_k": lambda r: (_f(r, 3, 6), 2),
    "approx_max_k": lambda r: (_f(r, 3, 6), 2),
    "approx_min_k": lambda r: (_f(r, 3, 6), 2),
    "sequence_mask": lambda r: (_i(r, 4, high=5), 5),
    "reverse_sequence": lambda r: (_f(r, 3, 5), _i(r, 3, high=6), 1, 0),
    "repeat": lambda r: (_f(r, 3, 2), _i(r, 3, low=1, high=4), 0),
    "segment_sum": lambda r: (_f(r, 6, 2), _sorted_ids(r)),
    "segment_mean": lambda r: (_f(r, 6, 2), _sorted_ids(r)),
    "segment_max": lambda r: (_f(r, 6, 2), _sorted_ids(r)),
    "segment_min": lambda r: (_f(r, 6, 2), _sorted_ids(r)),
    "segment_prod": lambda r: (_f(r, 6, 2), _sorted_ids(r)),
    "unsorted_segment_sum": lambda r: (_f(r, 6, 2), _i(r, 6, high=3), 3),
    "unsorted_segment_mean": lambda r: (_f(r, 6, 2), _i(r, 6, high=3), 3),
    "unsorted_segment_max": lambda r: (_f(r, 6, 2), _i(r, 6, high=3), 3),
    "unsorted_segment_min": lambda r: (_f(r, 6, 2), _i(r, 6, high=3), 3),
    "unsorted_segment_prod": lambda r: (_f(r, 6, 2), _i(r, 6, high=3), 3),
    "unsorted_segment_sqrt_n": lambda r: (_f(r, 6, 2), _i(r, 6, high=3), 3),
    # sizes and positions given as tensors, which TF traces
    "roll": lambda r: (_f(r, 3, 4), fw.constant(int(r.integers(1, 4)), fw.int32), 1),
    "slice": lambda r: (_f(r, 4, 5), fw.constant(r.integers(0, 2, 2).astype(np.int32)),
                        [2, 3]),
    "range": lambda r: (fw.constant(int(r.integers(0, 3)), fw.int32), 5),
    "strided_slice": lambda r: (_f(r, 4, 5), [0, 1], [3, 4], [1, 2]),
    "split": lambda r: (_f(r, 4, 6), 2, 1),
    "tile": lambda r: (_f(r, 2, 3), [2, 1]),
    "pad": lambda r: (_f(r, 2, 3), [[1, 0], [0, 2]]),
    "reshape": lambda r: (_f(r, 3, 4), [4, 3]),
    "broadcast_to": lambda r: (_f(r, 1, 4), [3, 4]),
    "expand_dims": lambda r: (_f(r, 3, 4), 1),
    "ensure_shape": lambda r: (_f(r, 3, 4), [3, 4]),
    "getitem": lambda r: (_f(r, 3, 4), (slice(1, None), 2)),
    "clip_by_value": lambda r: (_f(r, 3, 4), -0.5, 0.5),
    "clip_by_norm": lambda r: (_f(r, 3, 4), 1.0),
    "clip_by_global_norm": lambda r: ([_f(r, 3, 4), _f(r, 2)], 1.0),
    "cast": lambda r: (_f(r, 3, 4), fw.int32),
    "saturate_cast": lambda r: (_f(r, 3, 4) * 200.0, fw.int8),
    "einsum": lambda r: ("ij,jk->ik", _f(r, 3, 4), _f(r, 4, 2)),
    "tensordot": lambda r: (_f(r, 3, 4), _f(r, 4, 2), 1),
    "scalar_mul": lambda r: (2.0, _f(r, 3, 4)),
    "polyval": lambda r: ([_f(r), _f(r), _f(r)], _f(r, 4)),
    "zeta": lambda r: (_f(r, 4, low=1.5), _f(r, 4, low=0.5)),
    "polygamma": lambda r: (fw.constant(np.float32(1.0)) + 0.0 * _f(r, 4), _f(r, 4, low=0.5)),
    "lbeta": lambda r: (_f(r, 3, 4, low=0.5),),
    "l2_loss": lambda r: (_f(r, 3, 4),),
    "bias_add": lambda r: (_f(r, 3, 4), _f(r, 4)),
    "dropout": lambda r: (_f(r, 3, 4), 0.0),
    "batch_normalization": lambda r: (_f(r, 3, 4), _f(r, 4), _f(r, 4, low=0.5), _f(r, 4),
                                      _f(r, 4), 1e-3),
    "moments": lambda r: (_f(r, 3, 4), [0]),
    "weighted_moments": lambda r: (_f(r, 3, 4), [0], _f(r, 3, 4, low=0.5)),
    "sufficient_statistics": lambda r: (_f(r, 3, 4), [0]),
    "normalize_moments": lambda r: (_f(r, 4, low=2.0), _f(r, 4), _f(r, 4, low=3.0), None),
    "conv1d": lambda r: (_f(r, 2, 7, 3), _f(r, 3, 3, 4), 1, "SAME"),
    "conv2d": lambda r: (_f(r, 2, 5, 5, 3), _f(r, 3, 3, 3, 4), 1, "SAME"),
    "depthwise_conv2d": lambda r: (_f(r, 2, 5, 5, 3), _f(r, 3, 3, 3, 2), [1, 1, 1, 1], "SAME"),
    "separable_conv2d": lambda r: (_f(r, 2, 5, 5, 3), _f(r, 3, 3, 3, 2), _f(r, 1, 1, 6, 4),
                                   [1, 2, 2, 1], "SAME"),
    "conv2d_transpose": lambda r: (_f(r, 2, 3, 3, 4), _f(r, 3, 3, 2, 4), [2, 3, 3, 2], 1,
                                   "SAME"),
    "bias_add_relu": lambda r: (_f(r, 3, 4), _f(r, 4)),
    "dense": lambda r: (_f(r, 3, 4), _f(r, 4, 2), _f(r, 2)),
    "max_pool": lambda r: (_f(r, 2, 4, 4, 3), 2, 2, "VALID"),
    "avg_pool": lambda r: (_f(r, 2, 4, 4, 3), 2, 2, "VALID"),
    "max_pool1d": lambda r: (_f(r, 2, 6, 3), 2, 2, "VALID"),
    "avg_pool1d": lambda r: (_f(r, 2, 6, 3), 2, 2, "VALID"),
    "max_pool2d": lambda r: (_f(r, 2, 4, 4, 3), 2, 2, "VALID"),
    "avg_pool2d": lambda r: (_f(r, 2, 4, 4, 3), 2, 2, "VALID"),
    "sparse_softmax_cross_entropy_with_logits": lambda r: (_i(r, 3), _f(r, 3, 4)),
    "softmax_cross_entropy_with_logits": lambda r: (fw.nn.softmax(_f(r, 3, 4)), _f(r, 3, 4)),
    "sigmoid_cross_entropy_with_logits": lambda r: (fw.sigmoid(_f(r, 3, 4)), _f(r, 3, 4)),
    "weighted_cross_entropy_with_logits": lambda r: (fw.sigmoid(_f(r, 3, 4)), _f(r, 3, 4),
                                                     2.0),
    "log_poisson_loss": lambda r: (_f(r, 3, 4, low=0.1), _f(r, 3, 4)),
    "compute_average_loss": lambda r: (_f(r, 4),),
    "scale_regularization_loss": lambda r: (_f(r),),
    "crelu": lambda r: (_f(r, 3, 4),),
    # values that change the answer's integer part between the two draws
    "slogdet": lambda r: (_f(r, 3, 3),),
    "lu": lambda r: (_f(r, 3, 3),),
    "matrix_rank": lambda r: (_low_rank(r),),
    "zero_fraction": lambda r: (fw.nn.relu(_f(r, 3, 4)),),
    "expm": lambda r: (_f(r, 3, 3) * float(r.integers(1, 20)),),
    # linear algebra on the shapes it needs
    "cholesky_solve": lambda r: (fw.linalg.cholesky(_spd(r)), _f(r, 3, 2)),
    "triangular_solve": lambda r: (fw.linalg.cholesky(_spd(r)), _f(r, 3, 2)),
    "banded_triangular_solve": lambda r: (_f(r, 2, 3, low=1.0), _f(r, 3, 2)),
    "tridiagonal_solve": lambda r: (_f(r, 3, 3, low=2.0), _f(r, 3, 2)),
    "tridiagonal_matmul": lambda r: (_f(r, 3, 3), _f(r, 3, 2)),
    "eigh_tridiagonal": lambda r: (_f(r, 4), _f(r, 3)),
    "lu_solve": lambda r: (*fw.linalg.lu(_spd(r)), _f(r, 3, 2)),
    "lu_matrix_inverse": lambda r: fw.linalg.lu(_spd(r)),
    "lu_reconstruct": lambda r: fw.linalg.lu(_spd(r)),
    "set_diag": lambda r: (_f(r, 3, 3), _f(r, 3)),
    "band_part": lambda r: (_f(r, 4, 4), 1, 1),
    "cross": lambda r: (_f(r, 2, 3), _f(r, 2, 3)),
    "matvec": lambda r: (_f(r, 3, 4), _f(r, 4)),
    "lstsq": lambda r: (_f(r, 4, 3), _f(r, 4, 2)),
    "sqrtm": lambda r: (_spd(r),),
    # map_fn and friends take a function
    "map_fn": lambda r: (fw.square, _f(r, 3, 4)),
    "vectorized_map": lambda r: (fw.square, _f(r, 3, 4)),
    "scan": lambda r: (lambda a, x: a + x, _f(r, 3, 4)),
    "foldl": lambda r: (lambda a, x: a + x, _f(r, 3, 4)),
    "foldr": lambda r: (lambda a, x: a + x, _f(r, 3, 4)),
    # the stateless random ops: the seed is the tensor that changes
    "stateless_uniform": lambda r: ([3, 4], _i(r, 2, high=1000)),
    "stateless_normal": lambda r: ([3, 4], _i(r, 2, high=1000)),
    "stateless_truncated_normal": lambda r: ([3, 4], _i(r, 2, high=1000)),
    "stateless_categorical": lambda r: (_f(r, 2, 4), 5, _i(r, 2, high=1000)),
    "stateless_split": lambda r: (_i(r, 2, high=1000),),
    "stateless_fold_in": lambda r: (_i(r, 2, high=1000), _i(r, high=1000)),
    # losses and metrics on labels and predictions
    "sparse_categorical_crossentropy": lambda r: (_i(r, 3), fw.nn.softmax(_f(r, 3, 4))),
    "sparse_categorical_accuracy": lambda r: (_i(r, 6), _f(r, 6, 4)),
    "sparse_top_k_categorical_accuracy": lambda r: (_i(r, 6), _f(r, 6, 4)),
    "categorical_crossentropy": lambda r: (fw.one_hot(_i(r, 3), 4), fw.nn.softmax(_f(r, 3, 4))),
    "categorical_hinge": lambda r: (fw.one_hot(_i(r, 3), 4), _f(r, 3, 4)),
    "categorical_accuracy": lambda r: (fw.one_hot(_i(r, 6), 4), _f(r, 6, 4)),
    "top_k_categorical_accuracy": lambda r: (fw.one_hot(_i(r, 6), 4), _f(r, 6, 4)),
    "binary_crossentropy": lambda r: (fw.cast(_i(r, 3, 4, high=2), fw.float32),
                                      fw.sigmoid(_f(r, 3, 4))),
    "binary_accuracy": lambda r: (fw.cast(_i(r, 3, 4, high=2), fw.float32),
                                  fw.sigmoid(_f(r, 3, 4))),
    "accuracy": lambda r: (_i(r, 6), _i(r, 6)),
    "hinge": lambda r: (fw.cast(_i(r, 3, 4, high=2), fw.float32), _f(r, 3, 4)),
    "squared_hinge": lambda r: (fw.cast(_i(r, 3, 4, high=2), fw.float32), _f(r, 3, 4)),
    "reduce_weighted": lambda r: (_f(r, 3, 4), _f(r, 3, 4, low=0.1)),
    # Python functions, called on every call with its values
    "numpy_function": lambda r: (np.sort, [_f(r, 5)], fw.float32),
    "py_function": lambda r: (fw.sort, [_f(r, 5)], fw.float32),
    # image
    "resize": lambda r: (_f(r, 2, 4, 4, 3), [6, 5]),
    "resize_with_pad": lambda r: (_f(r, 2, 4, 6, 3), 5, 5),
    "flip_left_right": lambda r: (_f(r, 2, 4, 5, 3),),
    "flip_up_down": lambda r: (_f(r, 2, 4, 5, 3),),
    "per_image_standardization": lambda r: (_f(r, 2, 4, 5, 3),),
    "stateless_random_flip_left_right": lambda r: (_f(r, 2, 4, 5, 3), _i(r, 2, high=1000)),
    "stateless_random_flip_up_down": lambda r: (_f(r, 2, 4, 5, 3), _i(r, 2, high=1000)),
    "central_crop": lambda r: (_f(r, 6, 6, 3), 0.5),
    "convert_image_dtype": lambda r: (_f(r, 4, 4, 3, low=0.0) * 0.1, fw.uint8),
}

# No computation on tensors: what the function is instead.
NOT_COMPUTATIONS = {  # by name, or "namespace.name" where the name means more
    "as_dtype": "a dtype lookup",
    "broadcast_static_shape": "a shape computation on Python shapes",
    "cond": "control flow: the plan's guards check its predicate (tests/test_function.py)",
    "while_loop": "control flow: the plan's guards check its count (tests/test_function.py)",
    "custom_gradient": "a decorator",
    "device": "a placement context",
    "expects": "a decorator declaring a loss's labels",
    "name_scope": "a naming context",
    "function": "fw.function itself",
    "get_backend": "a setting",
    "set_backend": "a setting",
    "get_static_value": "a value read outside any trace (TF returns None for traced values)",
    "is_tensor": "a type query",
    "print": "an effect, replayed on every call (tests/test_function.py)",
    "to_device": "a copy between devices",
    "fw.random.set_seed": "a setting",
    "fw.random.get_state": "reads the global generator's state",
    "fw.random.set_state": "a setting",
    "fw.random.generator": "the global generator",
    "fw.random.get_global_generator": "the global generator",
    "fw.random.set_global_generator": "a setting",
    "deserialize": "a registry lookup",
    "serialize": "a registry lookup",
    "get": "a registry lookup",
    # stateful random draws are replayed effects, drawn afresh on every call: their own tests
    "fw.random.normal": "a random draw (tests/test_function.py: fresh numbers on every call)",
    "fw.random.uniform": "a random draw",
    "fw.random.truncated_normal": "a random draw",
    "fw.random.categorical": "a random draw",
    "fw.random.shuffle": "a random draw",
    "fw.random.gamma": "a random draw",
    "fw.random.poisson": "a random draw",
    "fw.image.random_flip_left_right": "a random draw",
    "fw.image.random_flip_up_down": "a random draw",
    "fw.image.random_brightness": "a random draw",
    "fw.image.random_contrast": "a random draw",
}
