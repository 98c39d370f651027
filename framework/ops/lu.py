"""LU factorisation with partial pivoting (``tf.linalg.lu``) and what uses it: ``lu_solve``,
``lu_reconstruct``, ``lu_matrix_inverse``; and the principal square root ``sqrtm``.

``lu`` returns TensorFlow's packed form: ``lower_upper`` holds the unit lower factor below the
diagonal and the upper factor on and above it, and ``perm`` the row order (``A[perm] = L @ U``),
pivots chosen as LAPACK chooses them (the first largest entry). Its VJP is TensorFlow's:
``P^T L^-T (tril(L^T g_L, -1) + triu(g_U U^T)) U^-T``. The functions that use a factorisation
are compositions (triangular solves, products, an advanced index), so all orders work.
``sqrtm`` runs Denman-Beavers iterations forward; its VJP solves the Sylvester equation
``X^T G + G X^T = g`` as one linear system (n^2 unknowns: meant for small matrices).
"""
import collections

import numpy as np

from ..engine import backend
from ..engine.dtypes import numpy_dtype
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor, wrap_constant
from .linalg import einsum, matmul
from .math import floats_only
from .matrix import (_inv, _square, band_part, matrix_transpose, set_diag, solve,
                     triangular_solve)
from .shape import broadcast_to, getitem, reshape
from .sort import argsort

Lu = collections.namedtuple("Lu", ["lu", "p"])


def _factor(a):
    """``(packed, perm)`` of a batch of square matrices, in float64 on the arrays' device."""
    xp = backend.array_module(a)
    n = a.shape[-1]
    packed = a.astype(np.float64).reshape((-1, n, n)).copy()
    rows = xp.arange(packed.shape[0])
    perm = xp.broadcast_to(xp.arange(n), (packed.shape[0], n)).copy()
    for k in range(n):
        pivot = k + xp.abs(packed[:, k:, k]).argmax(axis=-1)
        for target in (packed, perm):  # swap rows k and pivot, in every matrix at once
            held = target[rows, k].copy()
            target[rows, k] = target[rows, pivot]
            target[rows, pivot] = held
        with np.errstate(divide="ignore", invalid="ignore"):
            packed[:, k + 1:, k] /= packed[:, k, k][:, None]
        packed[:, k + 1:, k + 1:] -= packed[:, k + 1:, k, None] * packed[:, k, None, k + 1:]
    return packed.reshape(a.shape), perm.reshape(a.shape[:-1])


def _unpermute_rows(x, perm):
    """``y`` with ``y[..., perm[i], :] = x[..., i, :]`` (a Jacobian's leading axes of ``x``
    stay in front): the advanced index of the inverse permutation."""
    xp = backend.array_module(perm._value)
    inverse = argsort(perm, axis=-1)
    batch = perm.shape[:-1]
    key = tuple(xp.arange(d).reshape((d,) + (1,) * (len(batch) - a)) for a, d in enumerate(batch))
    lead = x.ndim - perm.ndim - 1
    return getitem(x, (slice(None),) * lead + key + (inverse,))


def _unit_lower(packed):
    ones = wrap_constant(backend.array_module(packed._value).ones(packed.shape[:-1], dtype=packed.dtype))
    return set_diag(band_part(packed, -1, 0), ones)


def _strictly_lower(m):
    return band_part(m, -1, 0) - band_part(m, 0, 0)


def _lu_vjp(g, out, x):
    lower, upper = _unit_lower(out), band_part(out, 0, -1)
    middle = (_strictly_lower(matmul(lower, _strictly_lower(g), transpose_a=True))
              + band_part(matmul(band_part(g, 0, -1), upper, transpose_b=True), 0, -1))
    permuted = matmul(matrix_transpose(_inv(lower)), matmul(middle, matrix_transpose(_inv(upper))))
    return _unpermute_rows(permuted, _lu_order(x, dtype=np.int32))


_lu_packed = define("lu", floats_only(lambda a: _factor(a)[0].astype(a.dtype)), _lu_vjp)
_lu_order = define("lu_order", lambda a, *, dtype: _factor(a)[1].astype(dtype))


def lu(input, output_idx_type="int32", name=None):  # noqa: A002 - TensorFlow's argument name
    """``(lu, p)``: the packed factors and the row order of each square matrix."""
    x = _square("lu", input)
    return Lu(_lu_packed(x), _lu_order(x, dtype=numpy_dtype(output_idx_type)))


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """The matrix ``lu`` factored: ``(L @ U)`` with its rows put back in place."""
    packed = convert_to_tensor(lower_upper)
    product = matmul(_unit_lower(packed), band_part(packed, 0, -1))
    return _unpermute_rows(product, convert_to_tensor(perm))


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """``X`` with ``A @ X = rhs`` from ``A``'s factorisation: two triangular solves."""
    packed, rhs = convert_to_tensor(lower_upper), convert_to_tensor(rhs)
    order = convert_to_tensor(perm)._value
    xp = backend.array_module(order)
    batch = order.shape[:-1]
    if rhs.shape[:-2] != batch:  # one right-hand side for every matrix of the batch
        rhs = broadcast_to(rhs, batch + rhs.shape[-2:])
    key = tuple(xp.arange(d).reshape((d,) + (1,) * (len(batch) - a)) for a, d in enumerate(batch))
    permuted = getitem(rhs, key + (order,))
    y = triangular_solve(_unit_lower(packed), permuted, lower=True)
    return triangular_solve(packed, y, lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """The inverse of the factored matrix: ``lu_solve`` of the identity."""
    packed = convert_to_tensor(lower_upper)
    eye = wrap_constant(backend.array_module(packed._value).broadcast_to(
        backend.array_module(packed._value).eye(packed.shape[-1], dtype=packed.dtype),
        packed.shape))
    return lu_solve(packed, perm, eye)


# --- principal square root --------------------------------------------------------------------------
def _sqrtm_forward(a):
    """Denman-Beavers: ``Y -> (Y + Z^-1) / 2``, ``Z -> (Z + Y^-1) / 2`` from ``(A, I)``."""
    xp = backend.array_module(a)
    y = a.astype(np.float64)
    z = xp.broadcast_to(xp.eye(a.shape[-1]), a.shape).copy()
    for _ in range(100 if a.size else 0):
        y, z, previous = (y + xp.linalg.inv(z)) / 2, (z + xp.linalg.inv(y)) / 2, y
        if float(xp.abs(y - previous).max()) <= 1e-14 * float(xp.abs(y).max()):
            break
    return y.astype(a.dtype)


def _sqrtm_vjp(g, out, x):
    n = out.shape[-1]
    eye = wrap_constant(backend.array_module(out._value).eye(n, dtype=out.dtype))
    # row-major vec: vec(X^T G) = (X^T kron I) vec(G), vec(G X^T) = (I kron X) vec(G)
    system = reshape(einsum("...ij,kl->...ikjl", matrix_transpose(out), eye)
                     + einsum("ij,...kl->...ikjl", eye, out), out.shape[:-2] + (n * n, n * n))
    grad = solve(system, reshape(g, g.shape[:-2] + (n * n, 1)))
    return reshape(grad, g.shape)


sqrtm = define("sqrtm", floats_only(_sqrtm_forward), _sqrtm_vjp)
