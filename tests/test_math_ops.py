"""fw.math's elementwise functions, reductions, scans, sorting and fw.nn's activations:
forward vs NumPy, first and second derivatives vs float64 finite differences, and the
vectorized Jacobian equal to the row-by-row one (tests/op_checks.py)."""
import math

import numpy as np
import pytest
from scipy import special

import framework as fw
from op_checks import check_gradients, table_tests

_rng = np.random.default_rng(16)


def normal(*shape):
    return _rng.standard_normal(shape)


def uniform(lo, hi, *shape):
    return _rng.uniform(lo, hi, shape)


def away(*shape, margin=0.2):
    return _rng.choice([-1.0, 1.0], shape) * _rng.uniform(margin, 2.0, shape)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


X = normal(3, 4)
POS = uniform(0.5, 2.0, 3, 4)
UNIT = uniform(-0.8, 0.8, 3, 4)
T = normal(2, 3, 4)
NONZERO = away(2, 3, 4, margin=0.3)
_erfc = np.vectorize(math.erfc)
_SELU = (1.0507009873554804934193349852946, 1.6732632423543772848170429916717)

ELEMENTWISE = [
    ("log1p", fw.math.log1p, np.log1p, [POS]),
    ("expm1", fw.math.expm1, np.expm1, [X]),
    ("rsqrt", fw.math.rsqrt, lambda x: 1 / np.sqrt(x), [POS]),
    ("reciprocal", fw.math.reciprocal, np.reciprocal, [away(3, 4, margin=0.5)]),
    ("tan", fw.math.tan, np.tan, [UNIT]),
    ("asin", fw.math.asin, np.arcsin, [UNIT]),
    ("acos", fw.math.acos, np.arccos, [UNIT]),
    ("atan", fw.math.atan, np.arctan, [X]),
    ("sinh", fw.math.sinh, np.sinh, [X]),
    ("cosh", fw.math.cosh, np.cosh, [X]),
    ("asinh", fw.math.asinh, np.arcsinh, [X]),
    ("acosh", fw.math.acosh, np.arccosh, [POS + 1.2]),
    ("atanh", fw.math.atanh, np.arctanh, [UNIT]),
    ("atan2", fw.math.atan2, np.arctan2, [X, away(3, 4)]),
    ("log_sigmoid", fw.math.log_sigmoid, lambda x: np.log(np_sigmoid(x)), [X]),
    ("erfc", fw.math.erfc, _erfc, [X]),
    ("squared_difference", fw.math.squared_difference, lambda x, y: (x - y) ** 2,
     [X, normal(4)]),
    ("floormod", fw.math.floormod, np.mod, [X * 3, uniform(0.7, 1.3, 3, 4)]),
    ("divide_no_nan", fw.math.divide_no_nan, lambda x, y: x / y, [X, POS]),
    ("multiply_no_nan", fw.math.multiply_no_nan, np.multiply, [X, normal(3, 4)]),
    ("xlogy", fw.math.xlogy, lambda x, y: x * np.log(y), [X, POS]),
    ("xlog1py", fw.math.xlog1py, lambda x, y: x * np.log1p(y), [X, POS]),
    ("xdivy", fw.math.xdivy, lambda x, y: x / y, [X, POS]),
    ("truediv", fw.math.truediv, np.divide, [X, POS]),
    ("reciprocal_no_nan", fw.math.reciprocal_no_nan, np.reciprocal, [POS]),
    ("add_n", lambda x, y: fw.math.add_n([x, y, x]), lambda x, y: 2 * x + y, [X, normal(3, 4)]),
    ("scalar_mul", lambda x: fw.math.scalar_mul(2.5, x), lambda x: 2.5 * x, [X]),
    ("softsign", fw.math.softsign, lambda x: x / (1 + np.abs(x)), [away(3, 4)]),
]

_AXES = [None, 0, -1, (0, 2)]
REDUCTIONS = [
    (f"{name}_axis{axis}_keep{keep}".replace(" ", ""),
     lambda x, name=name, axis=axis, keep=keep: getattr(fw.math, name)(x, axis=axis,
                                                                        keepdims=keep),
     lambda x, ref=ref, axis=axis, keep=keep: ref(x, axis=axis, keepdims=keep), [data])
    for name, ref, data in [
        ("reduce_prod", np.prod, NONZERO),
        ("reduce_logsumexp", lambda x, axis, keepdims: np.log(np.sum(
            np.exp(x), axis=axis, keepdims=keepdims)), T),
        ("reduce_variance", np.var, T),
        ("reduce_std", np.std, T),
        ("reduce_euclidean_norm", lambda x, axis, keepdims: np.sqrt(np.sum(
            x * x, axis=axis, keepdims=keepdims)), T),
    ]
    for axis in _AXES for keep in (False, True)
]
REDUCTIONS += [
    ("l2_normalize_axis", lambda x: fw.math.l2_normalize(x, axis=1),
     lambda x: x / np.sqrt((x * x).sum(1, keepdims=True)), [X]),
    ("l2_normalize_all", fw.math.l2_normalize, lambda x: x / np.sqrt((x * x).sum()), [X]),
    ("moments", lambda x: fw.nn.moments(x, axes=[0, 1]),
     lambda x: (x.mean((0, 1)), x.var((0, 1))), [T]),
    ("moments_keepdims", lambda x: fw.nn.moments(x, axes=[1], keepdims=True),
     lambda x: (x.mean(1, keepdims=True), x.var(1, keepdims=True)), [T]),
]


def _np_scan(x, axis, exclusive, reverse, product):
    op, identity = (np.cumprod, 1.0) if product else (np.cumsum, 0.0)
    x = np.flip(x, axis) if reverse else x
    out = op(x, axis=axis)
    if exclusive:
        out = np.concatenate([np.full_like(np.take(out, [0], axis), identity),
                              np.take(out, range(out.shape[axis] - 1), axis)], axis)
    return np.flip(out, axis) if reverse else out


SCANS = [
    (f"{name}_axis{axis}{'_exclusive' if ex else ''}{'_reverse' if rev else ''}",
     lambda x, name=name, axis=axis, ex=ex, rev=rev: getattr(fw.math, name)(
         x, axis=axis, exclusive=ex, reverse=rev),
     lambda x, axis=axis, ex=ex, rev=rev, prod=name == "cumprod": _np_scan(x, axis, ex, rev,
                                                                           prod),
     [NONZERO])
    for name in ("cumsum", "cumprod") for axis in (0, -1)
    for ex in (False, True) for rev in (False, True)
]
SCANS.append(("cumulative_logsumexp", lambda x: fw.math.cumulative_logsumexp(x, axis=1),
              lambda x: np.log(np.cumsum(np.exp(x), axis=1)), [X]))

DISTINCT = _rng.permutation(24).reshape(2, 3, 4) * 0.25 - 3.0  # no ties: sorting is smooth
SORTS = [
    ("sort", fw.sort, lambda x: np.sort(x, -1), [DISTINCT]),
    ("sort_axis0_descending", lambda x: fw.sort(x, axis=0, direction="DESCENDING"),
     lambda x: -np.sort(-x, 0), [DISTINCT]),
    ("top_k_values", lambda x: fw.math.top_k(x, k=2).values,
     lambda x: -np.sort(-x, -1)[..., :2], [DISTINCT]),
    ("approx_max_k_axis0", lambda x: fw.math.approx_max_k(x, 1, reduction_dimension=0).values,
     lambda x: x.max(0, keepdims=True), [DISTINCT]),
    ("approx_min_k", lambda x: fw.nn.approx_min_k(x, 2)[0], lambda x: np.sort(x, -1)[..., :2],
     [DISTINCT]),
]

ACTIVATIONS = [
    ("elu", fw.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), [away(3, 4)]),
    ("selu", fw.nn.selu, lambda x: _SELU[0] * np.where(x > 0, x, _SELU[1] * np.expm1(x)),
     [away(3, 4)]),
    ("leaky_relu", fw.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), [away(3, 4)]),
    ("leaky_relu_alpha", lambda x: fw.nn.leaky_relu(x, alpha=0.01),
     lambda x: np.where(x > 0, x, 0.01 * x), [away(3, 4)]),
    ("relu6", fw.nn.relu6, lambda x: np.clip(x, 0, 6), [away(3, 4) * 4 + 0.1]),
    ("silu", fw.nn.silu, lambda x: x * np_sigmoid(x), [X]),
    ("silu_beta", lambda x: fw.nn.silu(x, beta=1.5), lambda x: x * np_sigmoid(1.5 * x), [X]),
    ("sigmoid_cross_entropy_with_logits",
     lambda z, x: fw.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
     lambda z, x: -z * np.log(np_sigmoid(x)) - (1 - z) * np.log(1 - np_sigmoid(x)),
     [uniform(0, 1, 3, 4), X]),
    ("l2_normalize_nn", lambda x: fw.nn.l2_normalize(x, axis=-1),
     lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True), [X]),
    ("crelu", fw.nn.crelu, lambda x: np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], -1),
     [away(3, 4)]),
    ("l2_loss", fw.nn.l2_loss, lambda x: (x * x).sum() / 2, [X]),
    ("batch_normalization", lambda x, m, v, o, s: fw.nn.batch_normalization(x, m, v, o, s, 1e-3),
     lambda x, m, v, o, s: (x - m) / np.sqrt(v + 1e-3) * s + o,
     [X, normal(4), uniform(0.5, 2, 4), normal(4), normal(4)]),
    ("weighted_cross_entropy_with_logits",
     lambda z, x: fw.nn.weighted_cross_entropy_with_logits(z, x, pos_weight=2.5),
     lambda z, x: -2.5 * z * np.log(np_sigmoid(x)) - (1 - z) * np.log(1 - np_sigmoid(x)),
     [uniform(0, 1, 3, 4), X]),
    ("log_poisson_loss", lambda z, x: fw.nn.log_poisson_loss(z, x, compute_full_loss=True),
     lambda z, x: np.exp(x) - x * z + np.where(z > 1, _stirling(np.maximum(z, 1)), 0),
     [np.array([0.0, 0.5, 1.5, 3.0, 7.0]), normal(5)]),
    ("weighted_moments", lambda x, w: fw.nn.weighted_moments(x, [1], w),
     lambda x, w: ((w * x).sum(1) / w.sum(1),
                   (w * (x - ((w * x).sum(1) / w.sum(1))[:, None]) ** 2).sum(1) / w.sum(1)),
     [X, uniform(0.5, 2.0, 3, 4)]),
    ("sufficient_statistics_normalized", lambda x: fw.nn.normalize_moments(
        *fw.nn.sufficient_statistics(x, [0], shift=fw.constant(0.5, fw.float64))),
     lambda x: (x.mean(0), x.var(0)), [X]),
    ("compute_average_loss", lambda x, w: fw.nn.compute_average_loss(x, sample_weight=w),
     lambda x, w: (x * w).sum() / 3, [normal(3), normal(3)]),
]

SPECIAL = [  # (SciPy comes with scikit-learn, a test dependency)
    ("lgamma", fw.math.lgamma, special.gammaln,
     [np.array([0.3, 1.0, 2.5, 7.0, 25.0, -0.5, -2.3, -7.6])]),
    ("digamma", fw.math.digamma, special.digamma,
     [np.array([0.3, 1.0, 2.5, 7.0, 25.0, -0.5, -2.3, -7.6])]),
    ("polygamma_1", lambda x: fw.math.polygamma(1.0, x), lambda x: special.polygamma(1, x),
     [uniform(0.2, 14.0, 6)]),
    ("polygamma_3", lambda x: fw.math.polygamma(3.0, x), lambda x: special.polygamma(3, x),
     [uniform(0.2, 14.0, 6)]),
    ("erfinv", fw.math.erfinv, special.erfinv, [uniform(-0.95, 0.95, 3, 4)]),
    ("lbeta", fw.math.lbeta, lambda x: special.gammaln(x).sum(-1) - special.gammaln(x.sum(-1)),
     [uniform(0.3, 4.0, 3, 4)]),
    ("ndtri", fw.math.ndtri, special.ndtri, [uniform(0.05, 0.95, 3, 4)]),
    ("erfcinv", fw.math.erfcinv, special.erfcinv, [uniform(0.05, 1.95, 3, 4)]),
    ("bessel_i0e", fw.math.bessel_i0e, special.i0e,  # (a kink at 0: not checked there)
     [np.array([-30.0, -3.0, -0.5, 0.7, 4.0, 24.5, 26.0])]),
    ("bessel_i1e", fw.math.bessel_i1e, special.i1e,
     [np.array([-30.0, -3.0, -0.5, 0.7, 4.0, 24.5, 26.0])]),
    ("bessel_i0", fw.math.bessel_i0, special.i0, [np.array([-3.0, -0.5, 0.0, 0.7, 4.0])]),
    ("bessel_i1", fw.math.bessel_i1, special.i1, [np.array([-3.0, -0.5, 0.0, 0.7, 4.0])]),
    ("zeta_in_q", lambda q: fw.math.zeta(fw.constant(np.array([2.0, 3.0, 4.5])), q),
     lambda q: special.zeta([2.0, 3.0, 4.5], q), [np.array([1.0, 0.5, 3.0])]),
]


def _stirling(z):
    return z * np.log(z) - z + 0.5 * np.log(2 * np.pi * z)


SEGMENTS = [
    ("unsorted_segment_sum", lambda x: fw.math.unsorted_segment_sum(x, [0, 2, 0], 4),
     lambda x: np.stack([x[0] + x[2], 0 * x[0], x[1], 0 * x[0]]), [X]),
    ("unsorted_segment_sum_2d_ids", lambda x: fw.math.unsorted_segment_sum(
        x, [[0, 1, 1, 5], [1, 0, 0, 0], [2, 2, 0, -1]], 3),
     lambda x: np.array([x[0, 0] + x[1, 1:].sum() + x[2, 2], x[0, 1:3].sum() + x[1, 0],
                         x[2, :2].sum()]), [X]),
    ("unsorted_segment_mean", lambda x: fw.math.unsorted_segment_mean(x, [1, 1, 0], 3),
     lambda x: np.stack([x[2], (x[0] + x[1]) / 2, 0 * x[0]]), [X]),
    ("segment_sum", lambda x: fw.math.segment_sum(x, [0, 0, 2]),
     lambda x: np.stack([x[0] + x[1], 0 * x[0], x[2]]), [X]),
    ("segment_mean", lambda x: fw.math.segment_mean(x, [0, 1, 1]),
     lambda x: np.stack([x[0], (x[1] + x[2]) / 2]), [X]),
    ("unsorted_segment_max", lambda x: fw.math.unsorted_segment_max(x, [0, 1, 0], 2),
     lambda x: np.stack([np.maximum(x[0], x[2]), x[1]]), [X]),
    ("segment_min", lambda x: fw.math.segment_min(x, [0, 0, 1]),
     lambda x: np.stack([np.minimum(x[0], x[1]), x[2]]), [X]),
    ("unsorted_segment_prod", lambda x: fw.math.unsorted_segment_prod(x, [1, 1, 0], 3),
     lambda x: np.stack([x[2], x[0] * x[1], np.ones(4)]), [X]),
    ("segment_prod", lambda x: fw.math.segment_prod(x, [0, 1, 1]),
     lambda x: np.stack([x[0], x[1] * x[2]]), [X]),
    ("unsorted_segment_sqrt_n", lambda x: fw.math.unsorted_segment_sqrt_n(x, [1, 1, 0], 2),
     lambda x: np.stack([x[2], (x[0] + x[1]) / np.sqrt(2)]), [X]),
    ("polyval", lambda x: fw.math.polyval([1.5, -2.0, 0.5], x), lambda x: 1.5 * x * x - 2 * x + 0.5,
     [X]),
]

CASES = ELEMENTWISE + REDUCTIONS + SCANS + SORTS + ACTIVATIONS + SEGMENTS + SPECIAL
(test_forward_matches_numpy, test_first_and_second_order_gradients,
 test_vectorized_jacobian_equals_the_loop, test_on_the_device_backend) = table_tests(
    CASES, ELEMENTWISE + ACTIVATIONS + SEGMENTS)


# --- ops without a gradient: values and dtypes ---------------------------------------------------
def test_rounding_and_tests_follow_tensorflow():
    x = fw.constant([0.5, 1.5, 2.5, -0.5, -1.7])
    assert fw.round(x).numpy().tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]  # half to even
    assert fw.math.floor(x).numpy().tolist() == [0.0, 1.0, 2.0, -1.0, -2.0]
    assert fw.math.ceil(x).numpy().tolist() == [1.0, 2.0, 3.0, -0.0, -1.0]
    assert fw.round(fw.constant([3])).dtype == fw.int32
    y = fw.constant([1.0, np.nan, np.inf, -np.inf])
    assert fw.math.is_nan(y).numpy().tolist() == [False, True, False, False]
    assert fw.math.is_inf(y).numpy().tolist() == [False, False, True, True]
    assert fw.math.is_finite(y).numpy().tolist() == [True, False, False, False]
    a, b = fw.constant([True, True, False]), fw.constant([True, False, False])
    assert fw.math.logical_xor(a, b).numpy().tolist() == [False, True, False]
    assert (a ^ b).numpy().tolist() == [False, True, False]


def test_floor_division_and_modulo_have_floor_semantics():
    a, b = np.array([7, -7, 7, -7], np.int32), np.array([2, 2, -2, -2], np.int32)
    assert (fw.constant(a) // fw.constant(b)).numpy().tolist() == (a // b).tolist()
    assert (fw.constant(a) % fw.constant(b)).numpy().tolist() == (a % b).tolist()
    assert (fw.constant(a) // b).dtype == fw.int32
    assert float(fw.constant(7.5) % -2.0) == -0.5
    assert float(fw.constant(-7.5) // 2.0) == -4.0
    assert (7 // fw.constant(2)).numpy() == 3 and (7 % fw.constant(4)).numpy() == 3
    assert fw.math.mod is fw.math.floormod and fw.floormod is fw.math.floormod
    assert fw.truncatediv(fw.constant(-7), fw.constant(2)).numpy() == -3
    assert fw.truncatemod(fw.constant(-7), fw.constant(2)).numpy() == -1


def test_floordiv_has_no_gradient_and_floormod_one():
    x, y = fw.constant([3.5, -2.5]), fw.constant([2.0, 2.0])
    with fw.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        q, r = x // y, x % y
    assert tape.gradient(q, x) is None
    assert tape.gradient(r, x).numpy().tolist() == [1.0, 1.0]
    assert tape.gradient(r, y).numpy().tolist() == [-1.0, 2.0]  # -floor(x / y)


def test_sign_has_a_zero_gradient_as_in_tensorflow():
    x = fw.constant([-2.0, 3.0])
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = fw.sign(x)
    assert tape.gradient(y, x).numpy().tolist() == [0.0, 0.0]


def test_boolean_reductions_and_counts():
    m = fw.constant([[True, False], [True, True]])
    assert fw.reduce_any(m, axis=1).numpy().tolist() == [True, True]
    assert fw.reduce_all(m, axis=1).numpy().tolist() == [False, True]
    assert fw.math.reduce_all(m).numpy() == np.False_
    with pytest.raises(TypeError, match="reduce_any.*bool.*int32"):
        fw.reduce_any(fw.constant([1, 0]))
    count = fw.math.count_nonzero(fw.constant([[1.0, 0.0], [2.0, 3.0]]), axis=0)
    assert count.dtype == fw.int64 and count.numpy().tolist() == [2, 1]
    assert fw.math.count_nonzero(m, dtype=fw.int32).dtype == fw.int32


def test_sorting_orders_and_tie_breaks():
    x = fw.constant([[3.0, 1.0, 3.0, 2.0]])
    top = fw.math.top_k(x, k=3)
    assert type(top).__name__ == "TopKV2" and top._fields == ("values", "indices")
    assert top.values.numpy().tolist() == [[3.0, 3.0, 2.0]]
    assert top.indices.numpy().tolist() == [[0, 2, 3]] and top.indices.dtype == fw.int32
    assert fw.math.approx_max_k(x, 2).indices.numpy().tolist() == [[0, 2]]
    assert type(fw.math.approx_min_k(x, 1)).__name__ == "ApproxTopK"
    values, indices = fw.nn.top_k(x)
    assert indices.numpy().tolist() == [[0]] and values.numpy().tolist() == [[3.0]]
    assert fw.argsort(x).numpy().tolist() == [[1, 3, 0, 2]]
    assert fw.argsort(x, direction="DESCENDING").numpy().tolist() == [[0, 2, 3, 1]]
    assert fw.argsort(x).dtype == fw.int32
    assert fw.sort(fw.constant([3, 1, 2]), direction="DESCENDING").numpy().tolist() == [3, 2, 1]
    assert fw.argmin(fw.constant([3.0, 1.0])).dtype == fw.int64
    with pytest.raises(ValueError, match="top_k: k = 5"):
        fw.math.top_k(x, k=5)
    with pytest.raises(ValueError, match="direction"):
        fw.sort(x, direction="UP")


def test_counting_and_grouping_follow_tensorflow():
    y, idx = fw.unique(fw.constant([3, 1, 3, 2, 1]))
    assert y.numpy().tolist() == [3, 1, 2] and idx.numpy().tolist() == [0, 1, 0, 2, 1]
    assert type(fw.unique(fw.constant([1]))).__name__ == "Unique"
    assert fw.math.bincount([1, 1, 3], minlength=5).numpy().tolist() == [0, 2, 0, 1, 0]
    assert fw.math.bincount([0, 2], weights=[0.5, 1.5]).dtype == fw.float32
    matrix = fw.math.confusion_matrix([0, 1, 1, 2], [0, 1, 0, 2], num_classes=3)
    assert matrix.numpy().tolist() == [[1, 0, 0], [1, 1, 0], [0, 0, 1]]
    hits = fw.math.in_top_k([1, 0], fw.constant([[0.1, 0.9, 0.0], [0.5, 0.5, 0.0]]), 1)
    assert hits.numpy().tolist() == [True, True]  # a tie on the boundary counts in
    assert fw.searchsorted([1.0, 3.0, 5.0], [3.0, 6.0], side="right").numpy().tolist() == [2, 3]
    assert fw.math.invert_permutation([2, 0, 1]).numpy().tolist() == [1, 2, 0]
    assert float(fw.math.zero_fraction([0.0, 1.0, 0.0, 2.0])) == 0.5
    empty = fw.math.unsorted_segment_max(fw.ones((2, 2)), [0, 0], 2).numpy()[1]
    assert empty.tolist() == [np.finfo(np.float32).min] * 2  # an empty segment, as in TF
    assert fw.math.is_non_decreasing([1, 2, 2]) and not fw.math.is_strictly_increasing([1, 2, 2])
    assert fw.math.angle(fw.constant([-2.0, 0.0, 3.0])).numpy().tolist() == [
        np.float32(np.pi), 0.0, 0.0]
    with pytest.raises(ValueError, match="segment_sum: segment_ids must be sorted"):
        fw.math.segment_sum(fw.ones((3,)), [1, 0, 1])
    with pytest.raises(ValueError, match="invert_permutation"):
        fw.math.invert_permutation([0, 0])


def test_top_k_gradient_goes_to_the_selected_entries():
    x = fw.constant([[3.0, 1.0, 2.0]])
    with fw.GradientTape() as tape:
        tape.watch(x)
        values = fw.math.top_k(x, k=2).values
    grad = tape.gradient(values, x, output_gradients=fw.constant([[10.0, 20.0]]))
    assert grad.numpy().tolist() == [[10.0, 0.0, 20.0]]


def test_bessel_i1_slope_at_zero_is_one_half():
    """TensorFlow imputes 1 there; the derivative of I1 at 0 is 1/2 (finite differences too)."""
    x = fw.constant(0.0, fw.float64)
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = fw.math.bessel_i1(x)
    assert float(tape.gradient(y, x)) == 0.5


def test_reduce_prod_gradient_at_a_zero_is_the_product_of_the_others():
    """First order only: the second goes through cumprod's VJP, which divides by the input,
    as TensorFlow's does."""
    x = fw.constant([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]], fw.float64)
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = fw.reduce_prod(x, axis=1)
    assert tape.gradient(y, x).numpy().tolist() == [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0]]
    check_gradients(lambda t: fw.reduce_prod(t * fw.constant(np.array([1.0, 0.0, 1.0])),
                                             axis=1), normal(2, 3), order=1)


def test_dropout_scales_what_it_keeps_and_is_seeded():
    x = fw.ones((200, 50))
    y = fw.nn.dropout(x, rate=0.25, seed=3)
    kept = y.numpy() != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.75, rtol=1e-6)
    np.testing.assert_array_equal(fw.nn.dropout(x, rate=0.25, seed=3).numpy(), y.numpy())
    rows = fw.nn.dropout(x, rate=0.5, noise_shape=[200, 1], seed=1).numpy()
    assert all(len(set(row)) == 1 for row in rows)  # one draw per row, broadcast
    assert fw.nn.dropout(x, rate=0.0) is x
    with pytest.raises(ValueError, match="rate must be in"):
        fw.nn.dropout(x, rate=1.0)
    with fw.GradientTape() as tape:
        tape.watch(x)
        z = fw.nn.dropout(x, rate=0.5, seed=0)
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), z.numpy())


def test_swish_is_silu_and_aliases_are_one_object():
    assert fw.nn.swish is fw.nn.silu
    assert fw.nn.l2_normalize is fw.math.l2_normalize is fw.linalg.l2_normalize
    assert fw.math.softplus is fw.nn.softplus and fw.math.softmax is fw.nn.softmax
    assert fw.math.sin is fw.sin and fw.math.reduce_prod is fw.reduce_prod
    assert fw.math.cumsum is fw.cumsum and fw.math.floordiv is fw.floordiv
    assert fw.nn.top_k is fw.math.top_k and fw.nn.softsign is fw.math.softsign
    assert fw.nn.leaky_relu(fw.constant(-2)).dtype == fw.float32  # TF takes ints as float32


def test_float_only_ops_refuse_integers_by_name():
    ints = fw.constant([1, 2])
    for op, label in [(fw.sqrt, "sqrt"), (fw.math.log1p, "log1p"), (fw.exp, "exp"),
                      (fw.math.floor, "floor"), (fw.math.is_nan, "is_nan"),
                      (fw.nn.elu, "elu"), (fw.sigmoid, "sigmoid"), (fw.math.tan, "tan"),
                      (fw.nn.softmax, "softmax"), (fw.nn.log_softmax, "log_softmax")]:
        with pytest.raises(TypeError, match=rf"^{label}: expected a floating-point tensor.*"
                                            rf"got int32"):
            op(ints)
    with pytest.raises(TypeError, match="reduce_variance: input must be either real"):
        fw.math.reduce_variance(ints)


def test_divide_no_nan_is_zero_where_the_divisor_is_zero_with_its_gradients():
    """0 where ``y`` is 0 even for a NaN or infinite ``x``, and 0 gradients there (TensorFlow's
    DivNoNan); integers divide into floats; compiled, a second call on other values agrees."""
    x = fw.constant([1.0, np.nan, np.inf, -3.0])
    y = fw.constant([0.0, 0.0, 0.0, 2.0])
    with fw.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = fw.math.divide_no_nan(x, y)
    np.testing.assert_array_equal(z, [0, 0, 0, -1.5])
    np.testing.assert_array_equal(tape.gradient(z, x), [0, 0, 0, 0.5])
    np.testing.assert_array_equal(tape.gradient(z, y), [0, 0, 0, 0.75])
    assert fw.math.divide_no_nan(fw.constant([3, 4]), fw.constant([2, 0])).dtype == fw.float64
    check_gradients(fw.math.divide_no_nan, np.array([[1.5, -2.0]]), np.array([0.7, -1.3]),
                    order=2)  # (broadcast over the rows)
    compiled = fw.function(fw.math.divide_no_nan)
    for a, b in (([1.0, 2.0], [0.0, 4.0]), ([6.0, -1.0], [3.0, 0.0])):
        np.testing.assert_array_equal(compiled(fw.constant(a), fw.constant(b)),
                                      fw.math.divide_no_nan(fw.constant(a), fw.constant(b)))


def test_compute_average_loss_of_an_empty_batch_is_zero():
    """TensorFlow divides by the batch's own size with ``div_no_nan`` (checked with TF 2.21:
    ``tf.nn.compute_average_loss(tf.zeros([0]))`` is 0.0)."""
    assert float(fw.nn.compute_average_loss(fw.zeros([0]))) == 0.0
    assert float(fw.nn.compute_average_loss(fw.constant([1.0, 2.0, 3.0]),
                                            global_batch_size=6)) == 1.0
