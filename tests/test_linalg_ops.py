"""fw.linalg and TensorFlow's top-level array ops (split, tile, pad, gather_nd, ...): forward
vs NumPy, derivatives of orders 1 and 2 vs finite differences, vectorized Jacobian equal to
the row-by-row one (tests/op_checks.py); then the dtypes and errors TensorFlow gives."""
import numpy as np
import pytest
from scipy import linalg  # (SciPy comes with scikit-learn, a test dependency)

import framework as fw
from op_checks import table_tests

_rng = np.random.default_rng(1616)


def normal(*shape):
    return _rng.standard_normal(shape)


def well_conditioned(*shape):
    """Matrices near the identity: invertible, with a positive determinant."""
    n = shape[-1]
    return np.eye(n) * 2 + 0.3 * _rng.standard_normal(shape)


def spd(x):
    """A symmetric positive definite matrix made from any square ``x`` (a tensor), so that
    finite differences along any direction stay within what cholesky reads."""
    n = x.shape[-1]
    return fw.matmul(x, x, transpose_b=True) + fw.constant(np.eye(n) * n)


def np_spd(x):
    return x @ np.swapaxes(x, -1, -2) + np.eye(x.shape[-1]) * x.shape[-1]


A = well_conditioned(3, 3)
BANDS = normal(3, 4) + np.array([[3.0], [0.0], [0.0]])  # a diagonal first, then two more
DIAGONALS = normal(3, 4) + np.array([[0.0], [4.0], [0.0]])  # tridiagonal, diagonally dominant
SEPARATED = np.diag([1.0, 3.0, 6.0]) + 0.3 * _rng.standard_normal((3, 3))  # distinct eigenvalues
BATCH = well_conditioned(2, 3, 3)

LINALG = [
    ("inv", fw.linalg.inv, np.linalg.inv, [A]),
    ("inv_batch", fw.linalg.inv, np.linalg.inv, [BATCH]),
    ("inv_adjoint", lambda a: fw.linalg.inv(a, adjoint=True),
     lambda a: np.linalg.inv(a.T), [A]),
    ("solve", fw.linalg.solve, np.linalg.solve, [A, normal(3, 2)]),
    ("solve_batch", fw.linalg.solve, np.linalg.solve, [BATCH, normal(2, 3, 2)]),
    ("solve_adjoint", lambda a, b: fw.linalg.solve(a, b, adjoint=True),
     lambda a, b: np.linalg.solve(a.T, b), [A, normal(3, 1)]),
    ("det", fw.linalg.det, np.linalg.det, [A]),
    ("det_batch", fw.linalg.det, np.linalg.det, [BATCH]),
    ("slogdet", lambda a: fw.linalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1],
     [BATCH]),
    ("cholesky", lambda a: fw.linalg.cholesky(spd(a)), lambda a: np.linalg.cholesky(np_spd(a)),
     [normal(3, 3)]),
    ("cholesky_batch", lambda a: fw.linalg.cholesky(spd(a)),
     lambda a: np.linalg.cholesky(np_spd(a)), [normal(2, 3, 3)]),
    ("logdet", lambda a: fw.linalg.logdet(spd(a)), lambda a: np.linalg.slogdet(np_spd(a))[1],
     [normal(3, 3)]),
    ("cholesky_solve", lambda a, b: fw.linalg.cholesky_solve(fw.linalg.cholesky(spd(a)), b),
     lambda a, b: np.linalg.solve(np_spd(a), b), [normal(3, 3), normal(3, 2)]),
    ("triangular_solve", fw.linalg.triangular_solve,
     lambda a, b: np.linalg.solve(np.tril(a), b), [A, normal(3, 2)]),
    ("triangular_solve_upper", lambda a, b: fw.linalg.triangular_solve(a, b, lower=False),
     lambda a, b: np.linalg.solve(np.triu(a), b), [A, normal(3, 2)]),
    ("trace", fw.linalg.trace, lambda a: np.trace(a, axis1=-2, axis2=-1), [normal(2, 3, 3)]),
    ("diag", fw.linalg.diag, lambda d: d[..., None] * np.eye(d.shape[-1]), [normal(2, 3)]),
    ("diag_part", fw.linalg.diag_part, lambda a: np.diagonal(a, axis1=-2, axis2=-1),
     [normal(2, 3, 4)]),
    ("matrix_transpose", fw.linalg.matrix_transpose, lambda a: np.swapaxes(a, -1, -2),
     [normal(2, 3, 4)]),
    ("band_part", lambda a: fw.linalg.band_part(a, 1, 0),
     lambda a: np.tril(np.triu(a, -1)), [normal(4, 4)]),
    ("tensordot_int", lambda a, b: fw.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1),
     [normal(2, 3), normal(3, 4)]),
    ("tensordot_pairs", lambda a, b: fw.tensordot(a, b, [[0, 2], [1, 0]]),
     lambda a, b: np.tensordot(a, b, [[0, 2], [1, 0]]), [normal(2, 3, 4), normal(4, 2, 5)]),
    ("tensordot_zero", lambda a, b: fw.tensordot(a, b, 0), lambda a, b: np.tensordot(a, b, 0),
     [normal(2), normal(3)]),
    ("matvec", fw.linalg.matvec, lambda a, b: a @ b, [normal(3, 4), normal(4)]),
    ("cross", fw.linalg.cross, np.cross, [normal(2, 3), normal(2, 3)]),
    ("norm", fw.norm, np.linalg.norm, [normal(3, 4)]),
    ("norm_axis", lambda x: fw.norm(x, axis=1, keepdims=True),
     lambda x: np.linalg.norm(x, axis=1, keepdims=True), [normal(3, 4)]),
    ("norm_ord1", lambda x: fw.norm(x, ord=1, axis=0), lambda x: np.abs(x).sum(0),
     [normal(3, 4)]),
    ("norm_ord3", lambda x: fw.norm(x, ord=3, axis=-1),
     lambda x: np.linalg.norm(x, ord=3, axis=-1), [normal(3, 4)]),
    ("norm_inf", lambda x: fw.norm(x, ord=np.inf, axis=-1), lambda x: np.abs(x).max(-1),
     [normal(3, 4)]),
    ("norm_matrix_fro", lambda x: fw.norm(x, axis=[-2, -1]),
     lambda x: np.linalg.norm(x, axis=(-2, -1)), [normal(2, 3, 4)]),
    ("norm_matrix_1", lambda x: fw.norm(x, ord=1, axis=[0, 1]),
     lambda x: np.linalg.norm(x, ord=1), [normal(3, 4)]),
    ("norm_matrix_inf", lambda x: fw.norm(x, ord=np.inf, axis=[0, 1]),
     lambda x: np.linalg.norm(x, ord=np.inf), [normal(3, 4)]),
    ("normalize", lambda x: fw.linalg.normalize(x, axis=1),
     lambda x: (x / np.linalg.norm(x, axis=1, keepdims=True),
                np.linalg.norm(x, axis=1, keepdims=True)), [normal(3, 4)]),
    ("eigvalsh", fw.linalg.eigvalsh, lambda a: np.linalg.eigvalsh(a), [SEPARATED]),
    ("eigh_vectors_squared", lambda a: fw.linalg.eigh(a).v ** 2,
     lambda a: np.linalg.eigh(a)[1] ** 2, [SEPARATED]),
    ("eigh_batch", lambda a: fw.linalg.eigh(a)[0] * 2 + fw.reduce_sum(fw.linalg.eigh(a)[1] ** 4),
     lambda a: np.linalg.eigh(a)[0] * 2 + (np.linalg.eigh(a)[1] ** 4).sum(),
     [np.stack([SEPARATED, SEPARATED.T])]),
    ("svd_values_tall", lambda a: fw.linalg.svd(a, compute_uv=False),
     lambda a: np.linalg.svd(a, compute_uv=False), [normal(4, 3)]),
    ("svd_vectors_squared_wide", lambda a: [t ** 2 for t in fw.linalg.svd(a)[1:]],
     lambda a: [np.linalg.svd(a, full_matrices=False)[0] ** 2,
                np.linalg.svd(a, full_matrices=False)[2].T ** 2], [normal(3, 5)]),
    ("svd_vectors_squared_batch", lambda a: [t ** 2 for t in fw.linalg.svd(a)[1:]],
     lambda a: [np.linalg.svd(a, full_matrices=False)[0] ** 2,
                np.swapaxes(np.linalg.svd(a, full_matrices=False)[2], -1, -2) ** 2],
     [normal(2, 4, 3)]),
    ("svd_reconstructs", lambda a: fw.einsum("...ik,...k,...jk->...ij", *[
        fw.linalg.svd(a)[i] for i in (1, 0, 2)]), lambda a: a, [normal(3, 3)]),
    ("qr_square", lambda a: list(fw.linalg.qr(a)), lambda a: list(np.linalg.qr(a)),
     [normal(3, 3)]),
    ("qr_tall_batch", lambda a: list(fw.linalg.qr(a)), lambda a: list(np.linalg.qr(a)),
     [normal(2, 4, 3)]),
    ("tridiagonal_matmul", fw.linalg.tridiagonal_matmul,
     lambda d, b: _tridiagonal(d) @ b, [normal(2, 3, 4), normal(2, 4, 2)]),
    ("tridiagonal_solve", fw.linalg.tridiagonal_solve,
     lambda d, b: np.linalg.solve(_tridiagonal(d), b), [DIAGONALS, normal(4, 2)]),
    ("tridiagonal_solve_sequence_vector", lambda u, m, l, b: fw.linalg.tridiagonal_solve(
        [u, m, l], b, diagonals_format="sequence"),
     lambda u, m, l, b: np.linalg.solve(np.diag(m) + np.diag(u, 1) + np.diag(l, -1), b),
     [normal(3), DIAGONALS[1], normal(3), normal(4)]),
    ("lu_packed", lambda a: fw.linalg.lu(a).lu, lambda a: _np_lu(a), [normal(2, 4, 4)]),
    ("lu_solve", lambda a, b: fw.linalg.lu_solve(*fw.linalg.lu(a), b), np.linalg.solve,
     [normal(2, 4, 4), normal(2, 4, 3)]),
    ("lu_matrix_inverse", lambda a: fw.linalg.lu_matrix_inverse(*fw.linalg.lu(a)),
     np.linalg.inv, [normal(4, 4)]),
    ("lu_reconstruct", lambda a: fw.linalg.lu_reconstruct(*fw.linalg.lu(a)), lambda a: a,
     [normal(3, 3)]),
    ("sqrtm", fw.linalg.sqrtm, lambda a: np.real(linalg.sqrtm(a)), [well_conditioned(3, 3)]),
    ("sqrtm_batch", fw.linalg.sqrtm, lambda a: np.stack([np.real(linalg.sqrtm(m)) for m in a]),
     [well_conditioned(2, 3, 3)]),
    ("banded_triangular_solve_lower", fw.linalg.banded_triangular_solve,
     lambda b, r: np.linalg.solve(np.diag(b[0]) + np.diag(b[1, 1:], -1) + np.diag(b[2, 2:], -2),
                                  r), [BANDS, normal(4, 2)]),
    ("banded_triangular_solve_upper", lambda b, r: fw.linalg.banded_triangular_solve(
        b, r, lower=False),
     lambda b, r: np.linalg.solve(np.diag(b[1]) + np.diag(b[0, :3], 1), r),
     [BANDS[1::-1].copy(), normal(4, 2)]),
    ("eigh_tridiagonal", fw.linalg.eigh_tridiagonal,
     lambda a, b: np.linalg.eigvalsh(np.diag(a) + np.diag(b, 1) + np.diag(b, -1)),
     [np.array([1.0, 3.0, 6.0, 9.0]), normal(3) * 0.5]),
    ("expm", fw.linalg.expm, lambda a: linalg.expm(a), [normal(3, 3)]),
    ("expm_scaled_batch", fw.linalg.expm, lambda a: np.stack([linalg.expm(m) for m in a]),
     [normal(2, 3, 3) * 4]),
    ("pinv_tall", fw.linalg.pinv, np.linalg.pinv, [normal(4, 3)]),
    ("pinv_wide", fw.linalg.pinv, np.linalg.pinv, [normal(2, 3)]),
    ("lstsq_tall", fw.linalg.lstsq, lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0],
     [normal(5, 3), normal(5, 2)]),
    ("lstsq_wide_regularized", lambda a, b: fw.linalg.lstsq(a, b, l2_regularizer=0.5),
     lambda a, b: a.T @ np.linalg.solve(a @ a.T + 0.5 * np.eye(2), b),
     [normal(2, 4), normal(2, 3)]),
    ("set_diag_tall", fw.linalg.set_diag,
     lambda x, d: x * (1 - np.eye(4, 3)) + np.pad(np.diag(d), [[0, 1], [0, 0]]),
     [normal(4, 3), normal(3)]),
    ("set_diag_wide_batch", fw.linalg.set_diag,
     lambda x, d: x * (1 - np.eye(2, 3)) + np.pad(d[..., :, None] * np.eye(2), [[0, 0], [0, 0],
                                                                                 [0, 1]]),
     [normal(2, 2, 3), normal(2, 2)]),
    ("tensor_diag", fw.linalg.tensor_diag,
     lambda d: np.diag(d.reshape(-1)).reshape(d.shape + d.shape), [normal(2, 2)]),
    ("tensor_diag_part", fw.linalg.tensor_diag_part,
     lambda x: np.diag(x.reshape(4, 4)).reshape(2, 2), [normal(2, 2, 2, 2)]),
    ("global_norm", lambda x, y: fw.linalg.global_norm([x, y]),
     lambda x, y: np.sqrt((x ** 2).sum() + (y ** 2).sum()), [normal(3), normal(2, 2)]),
]

def _scatter_ref(u):
    out = np.zeros((5, 2))
    np.add.at(out, [1, 3, 1], u)
    return out


def _tridiagonal(d):
    """The dense matrices of compact diagonals (..., 3, M)."""
    m, i = d.shape[-1], np.arange(d.shape[-1])
    out = np.zeros(d.shape[:-2] + (m, m))
    out[..., i, i] = d[..., 1, :]
    out[..., i[:-1], i[1:]] = d[..., 0, :-1]
    out[..., i[1:], i[:-1]] = d[..., 2, 1:]
    return out


def _np_lu(a):
    """SciPy's factors, packed as TensorFlow packs them (unit lower below the diagonal)."""
    packed = [np.tril(lower, -1) + upper for _, lower, upper in map(linalg.lu, a)]
    return np.stack(packed)


def _scatter_2d(u, shape):
    out = np.zeros(shape)
    out[[0, 2], [1, 3]] = u
    return out


X = normal(3, 4)
T = normal(2, 3, 4)
ARRAY = [
    ("linspace", lambda a, b: fw.linspace(a, b, 5), lambda a, b: np.linspace(a, b, 5),
     [np.array(-1.5), np.array(2.0)]),
    ("linspace_batched_axis1", lambda a, b: fw.linspace(a, b, 4, axis=1),
     lambda a, b: np.linspace(a, b, 4, axis=1), [normal(2), normal(2)]),
    ("split_equal", lambda x: fw.split(x, 2, axis=1), lambda x: np.split(x, 2, axis=1), [X]),
    ("split_sizes", lambda x: fw.split(x, [1, -1, 1], axis=1),
     lambda x: np.split(x, [1, 3], axis=1), [X]),
    ("unstack", lambda x: fw.unstack(x, axis=1), lambda x: list(np.moveaxis(x, 1, 0)), [T]),
    ("tile", lambda x: fw.tile(x, [2, 1, 3]), lambda x: np.tile(x, [2, 1, 3]), [T]),
    ("pad_constant", lambda x: fw.pad(x, [[1, 0], [2, 1]], constant_values=0.5),
     lambda x: np.pad(x, [[1, 0], [2, 1]], constant_values=0.5), [X]),
    ("pad_reflect", lambda x: fw.pad(x, [[1, 2], [2, 1]], mode="REFLECT"),
     lambda x: np.pad(x, [[1, 2], [2, 1]], mode="reflect"), [X]),
    ("pad_symmetric", lambda x: fw.pad(x, [[0, 3], [1, 1]], mode="SYMMETRIC"),
     lambda x: np.pad(x, [[0, 3], [1, 1]], mode="symmetric"), [X]),
    ("reverse", lambda x: fw.reverse(x, [0, -1]), lambda x: np.flip(x, (0, 2)), [T]),
    ("roll", lambda x: fw.roll(x, [1, -2], [0, 2]), lambda x: np.roll(x, [1, -2], [0, 2]),
     [T]),
    ("repeat", lambda x: fw.repeat(x, [1, 0, 2], axis=0),
     lambda x: np.repeat(x, [1, 0, 2], axis=0), [X]),
    ("repeat_flat", lambda x: fw.repeat(x, 2), lambda x: np.repeat(x, 2), [X]),
    ("slice", lambda x: fw.slice(x, [1, 0, 1], [1, -1, 2]), lambda x: x[1:2, :, 1:3], [T]),
    ("boolean_mask", lambda x: fw.boolean_mask(x, X > 0), lambda x: x[X > 0], [X]),
    ("boolean_mask_axis1", lambda x: fw.boolean_mask(x, [True, False, True], axis=1),
     lambda x: x[:, [0, 2]], [T]),
    ("gather_nd", lambda x: fw.gather_nd(x, [[0, 1], [1, 2], [0, 1]]),
     lambda x: x[[0, 1, 0], [1, 2, 1]], [T]),
    ("gather_nd_full", lambda x: fw.gather_nd(x, [[[1, 0, 3]], [[0, 2, 2]]]),
     lambda x: x[[[1], [0]], [[0], [2]], [[3], [2]]], [T]),
    ("scatter_nd", lambda u: fw.scatter_nd([[1], [3], [1]], u, [5, 2]),
     lambda u: _scatter_ref(u), [normal(3, 2)]),
    ("meshgrid_xy", lambda a, b: fw.meshgrid(a, b), lambda a, b: np.meshgrid(a, b),
     [normal(3), normal(4)]),
    ("meshgrid_ij", lambda a, b, c: fw.meshgrid(a, b, c, indexing="ij"),
     lambda a, b, c: np.meshgrid(a, b, c, indexing="ij"), [normal(2), normal(3), normal(2)]),
    ("tensor_scatter_nd_add", lambda x, u: fw.tensor_scatter_nd_add(x, [[0, 1], [2, 3]], u),
     lambda x, u: x + _scatter_2d(u, x.shape),
     [X, normal(2)]),
    ("tensor_scatter_nd_update", lambda x, u: fw.tensor_scatter_nd_update(x, [[0, 1], [2, 3]], u),
     lambda x, u: np.where(_scatter_2d(np.ones(2), x.shape) > 0, _scatter_2d(u, x.shape), x),
     [X, normal(2)]),
    ("strided_slice", lambda x: fw.strided_slice(x, [0, 1, 0], [2, 3, 4], [1, 1, 2],
                                                 shrink_axis_mask=1),
     lambda x: x[0, 1:3, 0:4:2], [T]),
    ("strided_slice_masks", lambda x: fw.strided_slice(x, [1, 0, 3], [0, 2, 0], [1, 1, -1],
                                                       begin_mask=1, end_mask=5, new_axis_mask=2),
     lambda x: x[:, None, 3::-1], [T]),
    ("reverse_sequence", lambda x: fw.reverse_sequence(x, [2, 4, 0], seq_axis=1),
     lambda x: np.stack([np.r_[x[0, 1::-1], x[0, 2:]], x[1, ::-1], x[2]]), [X]),
    ("tensor_scatter_nd_sub", lambda x, u: fw.tensor_scatter_nd_sub(x, [[0, 1], [2, 3]], u),
     lambda x, u: x - _scatter_2d(u, x.shape), [X, normal(2)]),
    ("tensor_scatter_nd_max", lambda x, u: fw.tensor_scatter_nd_max(x, [[0, 1], [2, 3]], u),
     lambda x, u: np.where(_scatter_2d(np.ones(2), x.shape) > 0,
                           np.maximum(x, _scatter_2d(u, x.shape)), x),
     [X, X[[0, 2], [1, 3]] + np.array([0.5, -0.5])]),
    ("identity_n", lambda x, y: fw.identity_n([x, y]), lambda x, y: [x, y], [X, normal(2)]),
    ("broadcast_to", lambda x: fw.broadcast_to(x, [2, 3, 4]),
     lambda x: np.broadcast_to(x, (2, 3, 4)), [normal(3, 1)]),
]


CASES = LINALG + ARRAY
(test_forward_matches_numpy, test_first_and_second_order_gradients,
 test_vectorized_jacobian_equals_the_loop, test_on_the_device_backend) = table_tests(
    CASES, ARRAY)


def test_shape_size_rank_are_int32_tensors():
    x = fw.zeros((2, 3))
    assert fw.shape(x).dtype == fw.int32 and fw.shape(x).numpy().tolist() == [2, 3]
    assert fw.size(x).dtype == fw.int32 and int(fw.size(x)) == 6
    assert fw.rank(x).dtype == fw.int32 and int(fw.rank(x)) == 2
    assert fw.shape(x, out_type=fw.int64).dtype == fw.int64
    assert fw.reshape(fw.ones(6), fw.shape(x)).shape == (2, 3)


def test_linspace_dtypes_follow_tensorflow():
    assert fw.linspace(0, 1, 5).dtype == fw.float64  # integer ends: float64, as in TF
    assert fw.linspace(0.0, 1.0, 5).dtype == fw.float32
    np.testing.assert_array_equal(fw.linspace(0.0, 1.0, 1).numpy(), [0.0])
    assert fw.linspace(0.0, 1.0, 5).numpy()[-1] == 1.0


def test_shape_op_errors_name_the_culprit():
    x = fw.zeros((2, 3))
    with pytest.raises(ValueError, match="split: a dimension of size 3 .* 2 equal parts"):
        fw.split(x, 2, axis=1)
    with pytest.raises(ValueError, match=r"split: sizes \[1, 1\] do not add up to .* 3"):
        fw.split(x, [1, 1], axis=1)
    with pytest.raises(ValueError, match="tile: multiples"):
        fw.tile(x, [2])
    with pytest.raises(ValueError, match="pad: paddings"):
        fw.pad(x, [[1, 1]])
    with pytest.raises(ValueError, match="REFLECT"):
        fw.pad(x, [[0, 0], [3, 0]], mode="REFLECT")
    with pytest.raises(ValueError, match=r"boolean_mask: a mask of shape \(3,\)"):
        fw.boolean_mask(x, [True, False, True])
    with pytest.raises(TypeError, match="gather_nd: indices must be integers"):
        fw.gather_nd(x, [[0.5]])
    with pytest.raises(ValueError, match=r"inv: expected a square matrix .* \(2, 3\)"):
        fw.linalg.inv(x)
    with pytest.raises(ValueError, match=r"solve: rhs of shape \(2,\)"):
        fw.linalg.solve(fw.eye(2), fw.ones(2))
    with pytest.raises(TypeError, match="inv: expected a floating-point tensor.*int32"):
        fw.linalg.inv(fw.constant([[1, 0], [0, 1]]))
    with pytest.raises(ValueError, match="tensordot: axes"):
        fw.tensordot(x, x, [[0], [1]])
    with pytest.raises(ValueError, match="matrix norms support"):
        fw.norm(fw.eye(2), ord=2, axis=[0, 1])


def test_linalg_aliases_are_the_same_objects():
    assert fw.linalg.matmul is fw.matmul and fw.linalg.einsum is fw.einsum
    assert fw.linalg.eye is fw.eye and fw.linalg.norm is fw.norm
    assert fw.linalg.tensordot is fw.tensordot and fw.linalg.adjoint is fw.linalg.matrix_transpose


def test_lu_permutation_is_tensorflows():
    a = fw.constant([[1.0, 2.0], [3.0, 4.0]])
    lower_upper, perm = fw.linalg.lu(a)
    assert perm.dtype == fw.int32 and perm.numpy().tolist() == [1, 0]  # a[perm] = L @ U
    np.testing.assert_allclose(lower_upper.numpy(), [[3.0, 4.0], [1 / 3, 2 - 4 / 3]], rtol=1e-6)
    assert type(fw.linalg.lu(a)).__name__ == "Lu"


def test_eye_batch_shape_and_int_gradients_from_slogdet():
    batch = fw.eye(2, batch_shape=[3])
    assert batch.shape == (3, 2, 2)
    sign, logdet = fw.linalg.slogdet(fw.constant([[-2.0, 0.0], [0.0, 1.0]]))
    assert float(sign) == -1.0 and abs(float(logdet) - np.log(2.0)) < 1e-6


def test_small_top_level_helpers_follow_tensorflow():
    assert fw.saturate_cast(fw.constant([300.0, -5.0, 7.6]), fw.dtypes.DType("uint8")).numpy(
    ).tolist() == [255, 0, 7]
    assert fw.saturate_cast(fw.constant([1e6], fw.float64), fw.float16).numpy()[0] == 65504
    y, idx, count = fw.unique_with_counts(fw.constant([3, 1, 3, 3]))
    assert y.numpy().tolist() == [3, 1] and count.numpy().tolist() == [3, 1]
    assert fw.unravel_index([5, 7], [2, 4]).numpy().tolist() == [[1, 1], [1, 3]]
    assert fw.broadcast_static_shape((2, 1), (3,)) == (2, 3)
    assert fw.broadcast_dynamic_shape([2, 1], [3]).numpy().tolist() == [2, 3]
    assert [s.numpy().tolist() for s in fw.shape_n([fw.zeros((2,)), fw.zeros((1, 3))])] == [
        [2], [1, 3]]
    assert fw.parallel_stack([fw.ones(2), fw.zeros(2)]).shape == (2, 2)
    x = fw.zeros((2, 3))
    assert fw.ensure_shape(x, [None, 3]) is x
    with pytest.raises(ValueError, match="ensure_shape"):
        fw.ensure_shape(x, [3, 3])
    assert fw.get_static_value(x).tolist() == [[0.0] * 3] * 2
    with pytest.raises(ValueError, match="Incompatible shapes"):
        fw.broadcast_static_shape((2,), (3,))
    with pytest.raises(ValueError, match="reverse_sequence: seq_lengths"):
        fw.reverse_sequence(x, [4, 0], seq_axis=1)
