"""Decompositions and least squares: ``tf.linalg.eigh``, ``eigvalsh``, ``svd``, ``pinv``,
``qr``, ``expm``, ``lstsq``, ``matrix_rank``.

``eigh`` reads the lower triangle, as NumPy's and TensorFlow's do, so its gradient is
TensorFlow's: the symmetric formula ``V (diag(g_w) + F * (V^T g_V)) V^T`` with
``F_ij = 1 / (w_j - w_i)`` off the diagonal, folded onto the lower triangle (the entries the
forward read). It needs distinct eigenvalues, as TensorFlow's does. The eigenvalues and the
eigenvectors are two primitives, each VJP written with both, so higher orders work.
``svd`` likewise: three primitives (values, left and right vectors) whose VJPs are the parts
of TensorFlow's SVD gradient, and ``qr`` two. ``lstsq`` is TensorFlow's fast path: the
regularised normal equations, solved through Cholesky.
"""
import collections
import operator

import numpy as np

from ..engine import backend
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor, wrap_constant
from .linalg import matmul
from .math import floats_only
from .matrix import (_inv, _square, band_part, cholesky, cholesky_solve, diag, diag_part,
                     matrix_transpose, set_diag, solve)
from .reduce import reduce_max
from .shape import expand_dims, where

Eigh = collections.namedtuple("Eigh", ["e", "v"])


def _fold_lower(grad):
    """The gradient with respect to the lower triangle that the forward read: ``G + G^T``
    below the diagonal, ``G``'s symmetric part on it."""
    full = grad + matrix_transpose(grad)
    return set_diag(band_part(full, -1, 0), diag_part(full) * 0.5)


def _eigvals_vjp(g, out, x):
    v = _eigenvectors(x)
    return _fold_lower(matmul(v * expand_dims(g, -2), v, transpose_b=True))


def _eigenvectors_vjp(g, out, x):
    w = _eigenvalues(x)
    gaps = expand_dims(w, -2) - expand_dims(w, -1)
    n = out.shape[-1]
    off = wrap_constant(backend.array_module(out._value).asarray(1 - np.eye(n), dtype=out.dtype))
    f = off / (gaps + (1 - off))  # 1 / (w_j - w_i) off the diagonal, 0 on it
    inner = f * matmul(out, g, transpose_a=True)
    return _fold_lower(matmul(matmul(out, inner), out, transpose_b=True))


_eigenvalues = define("eigvalsh", floats_only(lambda x: np.linalg.eigh(x)[0]), _eigvals_vjp)
_eigenvectors = define("eigh", floats_only(lambda x: np.linalg.eigh(x)[1]), _eigenvectors_vjp)


def eigh(tensor, name=None):
    """``(e, v)``: the eigenvalues (ascending) and eigenvectors (columns) of each symmetric
    matrix, from its lower triangle."""
    x = _square("eigh", tensor)
    return Eigh(_eigenvalues(x), _eigenvectors(x))


def eigvalsh(tensor, name=None):
    """The eigenvalues (ascending) of each symmetric matrix, from its lower triangle."""
    return _eigenvalues(_square("eigvalsh", tensor))


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """``X`` minimising ``|matrix @ X - rhs|^2 + l2_regularizer |X|^2`` (TensorFlow's fast
    path: the normal equations through Cholesky; full rank needed without regularisation)."""
    a, b = convert_to_tensor(matrix), convert_to_tensor(rhs)
    if a.ndim < 2 or b.ndim < 2 or a.shape[-2] != b.shape[-2]:
        raise ValueError(f"lstsq: matrix of shape {a.shape} and rhs of shape {b.shape} do not "
                         f"fit; they need (..., M, N) and (..., M, K)")
    m, n = a.shape[-2:]
    eye = wrap_constant(backend.array_module(a._value).eye(min(m, n), dtype=a.dtype))
    if m >= n:
        gram = matmul(a, a, transpose_a=True) + eye * l2_regularizer
        return cholesky_solve(cholesky(gram), matmul(a, b, transpose_a=True))
    gram = matmul(a, a, transpose_b=True) + eye * l2_regularizer
    return matmul(a, cholesky_solve(cholesky(gram), b), transpose_a=True)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above ``tol`` (NumPy's default tolerance), as int32."""
    return _matrix_rank(convert_to_tensor(a), tol=tol)


def _matrix_rank_array(x, *, tol):
    rank = np.linalg.matrix_rank(backend.to_host(x), tol=tol)
    return backend.to_backend(np.asarray(rank, dtype=np.int32))


_matrix_rank = define("matrix_rank", _matrix_rank_array)


# --- singular value decomposition -----------------------------------------------------------------
def _svd_parts(x):
    """``(s, u, v)`` of ``x`` (thin) as tensors, through the three primitives below."""
    return _singular_values(x), _left_vectors(x), _right_vectors(x)


def _svd_grad(x, gs=None, gu=None, gv=None):
    """TensorFlow's SVD gradient (thin factors, distinct singular values) for the cotangents
    given; a wide matrix is handled as its transpose."""
    s, u, v = _svd_parts(x)
    m, n = x.shape[-2:]
    if m > n:  # tall: the formula below is for m <= n; swap the roles of u and v
        u, v, gu, gv = v, u, gv, gu
        m, n = n, m
    s_mat, s2 = diag(s), s * s
    off = wrap_constant(backend.array_module(x._value).asarray(1 - np.eye(m), dtype=x.dtype))
    f = off / (expand_dims(s2, -2) - expand_dims(s2, -1) + (1 - off))  # 1 / (s_j^2 - s_i^2)
    inner = 0
    if gs is not None:
        inner = inner + diag(gs)
    if gu is not None:
        f_u = f * matmul(u, gu, transpose_a=True)
        inner = inner + matmul(f_u + matrix_transpose(f_u), s_mat)
    if gv is not None:
        f_v = f * matmul(v, gv, transpose_a=True)
        inner = inner + matmul(s_mat, f_v + matrix_transpose(f_v))
    grad = matmul(u, matmul(inner, v, transpose_b=True))
    if gv is not None and m != n:  # the part of gv outside v's span
        gvt = matrix_transpose(gv)
        outside = gvt - matmul(matmul(gvt, v), v, transpose_b=True)
        grad = grad + matmul(u / expand_dims(s, -2), outside)
    return matrix_transpose(grad) if x.shape[-2] > x.shape[-1] else grad


def _thin_svd(x):
    return np.linalg.svd(x, full_matrices=False)


_singular_values = define("svd_values", floats_only(lambda x: _thin_svd(x)[1]),
                          lambda g, out, x: _svd_grad(x, gs=g))
_left_vectors = define("svd_u", floats_only(lambda x: _thin_svd(x)[0]),
                       lambda g, out, x: _svd_grad(x, gu=g))
_right_vectors = define("svd_v", floats_only(lambda x: np.swapaxes(_thin_svd(x)[2], -1, -2)),
                        lambda g, out, x: _svd_grad(x, gv=g))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """``(s, u, v)`` with ``tensor = u @ diag(s) @ v^T`` (thin factors; singular values in
    descending order), or ``s`` alone without ``compute_uv``. Differentiable where the
    singular values are distinct, as TensorFlow's."""
    x = convert_to_tensor(tensor)
    if x.ndim < 2:
        raise ValueError(f"svd: expected a matrix (or a batch of them), got shape {x.shape}")
    if full_matrices and x.shape[-1] != x.shape[-2]:
        raise ValueError("svd: full_matrices=True is supported for square matrices only")
    if not compute_uv:
        return _singular_values(x)
    return _svd_parts(x)


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse ``v @ diag(1 / s) @ u^T``, singular values below
    ``rcond * max(s)`` (default ``10 * max(M, N) * eps``) taken as 0, as TensorFlow does."""
    x = convert_to_tensor(a)
    s, u, v = _svd_parts(x)
    if rcond is None:
        rcond = 10 * max(x.shape[-2:]) * np.finfo(x.dtype).eps
    cutoff = reduce_max(s, axis=-1, keepdims=True) * rcond
    kept = s > cutoff
    inverse = where(kept, 1 / where(kept, s, 1), 0)
    return matmul(v * expand_dims(inverse, -2), u, transpose_b=True)


# --- QR -------------------------------------------------------------------------------------------
Qr = collections.namedtuple("Qr", ["q", "r"])


def _qr_grad(x, gq=None, gr=None):
    """TensorFlow's QR gradient (reduced factors of a matrix with M >= N)."""
    q, r = _qr_q(x), _qr_r(x)
    r_inv_t = matrix_transpose(_inv(r))
    gq = q * 0 if gq is None else gq
    gr = r * 0 if gr is None else gr
    qdq = matmul(q, gq, transpose_a=True)
    rdr = matmul(r, gr, transpose_b=True)
    tril = band_part(qdq - matrix_transpose(qdq) + rdr - matrix_transpose(rdr), -1, 0)
    return (matmul(q, gr + matmul(tril, r_inv_t))
            + matmul(gq - matmul(q, qdq), r_inv_t))


_qr_q = define("qr_q", floats_only(lambda x: np.linalg.qr(x)[0]),
               lambda g, out, x: _qr_grad(x, gq=g))
_qr_r = define("qr_r", floats_only(lambda x: np.linalg.qr(x)[1]),
               lambda g, out, x: _qr_grad(x, gr=g))


def qr(input, full_matrices=False, name=None):  # noqa: A002 - TensorFlow's argument name
    """``(q, r)`` with ``input = q @ r``, ``q`` with orthonormal columns and ``r`` upper
    triangular (reduced factors). Differentiable for M >= N with ``r`` invertible, as TF."""
    x = convert_to_tensor(input)
    if x.ndim < 2:
        raise ValueError(f"qr: expected a matrix (or a batch of them), got shape {x.shape}")
    if full_matrices and x.shape[-2] != x.shape[-1]:
        raise ValueError("qr: full_matrices=True is supported for square matrices only")
    return Qr(_qr_q(x), _qr_r(x))


# --- matrix exponential ---------------------------------------------------------------------------
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)


def _squarings_array(a):
    """How many squarings bring ``a``'s 1-norm under the [13/13] Padé approximant's bound."""
    norm = float(np.abs(backend.to_host(a)).sum(axis=-2).max())
    return np.asarray(max(0, int(np.ceil(np.log2(norm / 5.371920351148152)))) if norm else 0)


_squarings = define("expm_squarings", _squarings_array)


def expm(input, name=None):  # noqa: A002 - TensorFlow's argument name
    """``exp`` of each square matrix: Higham's scaling and squaring with the [13/13] Padé
    approximant, as TensorFlow computes it, written with matmul and solve so that its
    gradient (any order) comes from theirs."""
    a = _square("expm", input)
    # how often to square depends on the values: traced, operator.index checks it every call
    squarings = operator.index(_squarings(a)) if a.shape[-1] else 0
    a = a * (0.5 ** squarings)
    b = _PADE13
    eye = wrap_constant(backend.array_module(a._value).eye(a.shape[-1], dtype=a.dtype))
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    u = matmul(a, matmul(a6, a6 * b[13] + a4 * b[11] + a2 * b[9])
               + a6 * b[7] + a4 * b[5] + a2 * b[3] + eye * b[1])
    v = (matmul(a6, a6 * b[12] + a4 * b[10] + a2 * b[8])
         + a6 * b[6] + a4 * b[4] + a2 * b[2] + eye * b[0])
    result = solve(v - u, u + v)
    for _ in range(squarings):
        result = matmul(result, result)
    return result


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None,
                     tol=None, name=None):
    """The eigenvalues (and with ``eigvals_only=False`` the eigenvectors) of the symmetric
    tridiagonal matrix with diagonal ``alpha`` and off-diagonal ``beta`` (all of them)."""
    from .array import pad
    if select != "a":
        raise ValueError(f"eigh_tridiagonal: only select='a' (all eigenvalues) is supported, "
                         f"got {select!r}")
    alpha, beta = convert_to_tensor(alpha), convert_to_tensor(beta)
    off = pad(diag(beta), [[0, 0]] * (beta.ndim - 1) + [[1, 0], [0, 1]])
    dense = diag(alpha) + off + matrix_transpose(off)
    return eigvalsh(dense) if eigvals_only else eigh(dense)
