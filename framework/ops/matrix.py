"""``tf.linalg``: inverses, solves, determinants, Cholesky, and the matrix helpers around them.

Batched over leading axes as TensorFlow's are. The primitives (``inv``, ``solve``, ``det``,
the log-determinant and ``cholesky``) have VJPs written with these same ops, so higher orders
work; a Jacobian's extra leading axes on the cotangent broadcast through the batched products.
The rest are compositions (``tensordot`` and ``trace`` are ``einsum``s, ``diag_part`` an
advanced index, ``logdet`` TensorFlow's sum of the Cholesky factor's log-diagonal).
"""
import collections
import string

import numpy as np

from ..engine import backend
from ..engine.primitive import define, primitive
from ..engine.tensor import convert_to_tensor, wrap_constant
from .array import pad
from .elementwise import add_n
from .linalg import einsum, matmul
from .math import abs, floats_only, log, sqrt, square
from .reduce import reduce_max, reduce_sum
from .shape import (concat, expand_dims, getitem, reshape, squeeze, stack, transpose,
                    where)


def _square(name, value):
    """``value`` as a tensor of square matrices, or a ValueError naming ``name``."""
    t = convert_to_tensor(value)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError(f"{name}: expected a square matrix (or a batch of them), got "
                         f"shape {t.shape}")
    return t


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """``a`` with its last two axes swapped (a batch of transposes)."""
    a = convert_to_tensor(a)
    if a.ndim < 2:
        raise ValueError(f"matrix_transpose: expected rank >= 2, got shape {a.shape}")
    perm = list(range(a.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(a, perm)


adjoint = matrix_transpose  # real tensors: the conjugate transpose is the transpose


def _inv_vjp(g, out, x):
    t = matrix_transpose(out)
    return -matmul(t, matmul(g, t))


@primitive(_inv_vjp)
@floats_only
def _inv(x):
    return np.linalg.inv(x)


def inv(input, adjoint=False, name=None):  # noqa: A002 - TensorFlow's argument name
    """The inverse of each square matrix in ``input``."""
    x = _square("inv", input)
    return _inv(matrix_transpose(x) if adjoint else x)


def _solve_vjp_a(g, out, a, b):
    return -matmul(_solve(matrix_transpose(a), g), out, transpose_b=True)


@primitive(_solve_vjp_a, lambda g, out, a, b: _solve(matrix_transpose(a), g), same_dtype=True)
@floats_only
def _solve(a, b):
    return backend.array_module(a).linalg.solve(a, b)


def solve(matrix, rhs, adjoint=False, name=None):
    """``X`` with ``matrix @ X = rhs`` (``rhs`` of shape (..., M, K))."""
    a, b = _square("solve", matrix), convert_to_tensor(rhs)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve: rhs of shape {b.shape} does not fit a matrix of shape "
                         f"{a.shape}; it needs shape (..., {a.shape[-1]}, K)")
    return _solve(matrix_transpose(a) if adjoint else a, b)


def _det_vjp(g, out, x):
    return expand_dims(expand_dims(g * out, -1), -1) * matrix_transpose(_inv(x))


_det = define("det", floats_only(np.linalg.det), _det_vjp)


def det(input, name=None):  # noqa: A002
    """The determinant of each square matrix."""
    return _det(_square("det", input))


@primitive(lambda g, out, x: expand_dims(expand_dims(g, -1), -1) * matrix_transpose(_inv(x)))
@floats_only
def _logabsdet(x):
    return np.linalg.slogdet(x)[1]


LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant",
                                              ["sign", "log_abs_determinant"])


def slogdet(input, name=None):  # noqa: A002
    """``(sign, log_abs_determinant)`` of each square matrix; the sign has no gradient."""
    x = _square("slogdet", input)
    return LogMatrixDeterminant(_det_sign(x), _logabsdet(x))


def _det_sign_array(x):
    return backend.array_module(x).linalg.slogdet(x)[0].astype(x.dtype)


_det_sign = define("determinant_sign", _det_sign_array)


def _cholesky_vjp(g, out, x):
    """TensorFlow's (Murray's) rule: ``L^-T Phi(L^T g) L^-1``, symmetrised, where ``Phi``
    keeps the lower triangle and halves the diagonal."""
    n = out.shape[-1]
    phi = wrap_constant(backend.array_module(out._value).asarray(
        np.tril(np.ones((n, n)), -1) + np.eye(n) * 0.5, dtype=out.dtype))
    l_inverse = _inv(out)
    middle = matmul(out, g, transpose_a=True) * phi
    grad = matmul(matmul(l_inverse, middle, transpose_a=True), l_inverse)
    return (grad + matrix_transpose(grad)) * 0.5


_cholesky = define("cholesky", floats_only(np.linalg.cholesky), _cholesky_vjp)


def cholesky(input, name=None):  # noqa: A002
    """The lower-triangular ``L`` with ``L @ L^T = input`` (symmetric positive definite)."""
    return _cholesky(_square("cholesky", input))


def logdet(matrix, name=None):
    """``log(det(matrix))`` of a symmetric positive definite matrix, through its Cholesky
    factor as TensorFlow computes it."""
    return 2 * reduce_sum(log(diag_part(cholesky(matrix))), axis=-1)


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """The band of each matrix: ``num_lower`` subdiagonals and ``num_upper`` superdiagonals
    kept (negative: all of them), every other entry 0."""
    x = convert_to_tensor(input)
    m, n = x.shape[-2:]
    rows, cols = np.arange(m)[:, None], np.arange(n)[None, :]
    keep = ((num_lower < 0) | (rows - cols <= num_lower)) & (
        (num_upper < 0) | (cols - rows <= num_upper))
    return where(wrap_constant(backend.to_backend(keep)), x, 0)


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """``solve`` with only the lower (or upper) triangle of ``matrix`` read."""
    triangle = band_part(matrix, -1, 0) if lower else band_part(matrix, 0, -1)
    return solve(triangle, rhs, adjoint=adjoint)


def cholesky_solve(chol, rhs, name=None):
    """``X`` with ``A @ X = rhs``, given ``chol``, the Cholesky factor of ``A``."""
    y = triangular_solve(chol, rhs, lower=True)
    return triangular_solve(chol, y, lower=True, adjoint=True)


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The main diagonal of each matrix (of length min(M, N))."""
    x = convert_to_tensor(input)
    if k:
        raise ValueError("diag_part: only the main diagonal (k=0) is supported")
    r = backend.array_module(x._value).arange(min(x.shape[-2:]))
    return getitem(x, (Ellipsis, r, r))


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT"):
    """Square matrices with ``diagonal`` (..., N) on their main diagonal."""
    d = convert_to_tensor(diagonal)
    if k or num_rows not in (-1, None) or num_cols not in (-1, None):
        raise ValueError("diag: only the main diagonal of square matrices (k=0) is supported")
    eye = wrap_constant(backend.array_module(d._value).eye(d.shape[-1], dtype=d.dtype))
    return expand_dims(d, -1) * eye


def trace(x, name=None):
    """The sum of each matrix's main diagonal."""
    x = convert_to_tensor(x)
    return reduce_sum(diag_part(x), axis=-1)


def tensordot(a, b, axes, name=None):
    """Sum products over ``axes``: an int N (the last N of ``a`` with the first N of ``b``) or
    a pair of axis lists."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes = {n} is out of range for shapes {a.shape} "
                             f"and {b.shape}")
        axes_a, axes_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if np.ndim(axes_a) == 0 else list(axes_a)
        axes_b = [axes_b] if np.ndim(axes_b) == 0 else list(axes_b)
        axes_a = [int(x) % a.ndim for x in axes_a]
        axes_b = [int(x) % b.ndim for x in axes_b]
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j]
                                         for i, j in zip(axes_a, axes_b)):
        raise ValueError(f"tensordot: axes {axes_a} of shape {a.shape} do not match axes "
                         f"{axes_b} of shape {b.shape}")
    letters = iter(string.ascii_letters)
    sub_a = [next(letters) for _ in range(a.ndim)]
    sub_b = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(axes_a, axes_b):
        sub_b[j] = sub_a[i]
    out = [c for i, c in enumerate(sub_a) if i not in axes_a] + [
        c for j, c in enumerate(sub_b) if j not in axes_b]
    return einsum(f"{''.join(sub_a)},{''.join(sub_b)}->{''.join(out)}", a, b)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """``a @ b`` for a (batch of) vector ``b``."""
    b = convert_to_tensor(b)
    return squeeze(matmul(a, expand_dims(b, -1), transpose_a=transpose_a or adjoint_a), -1)


def cross(a, b, name=None):
    """The cross product of 3-vectors along the last axis."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if a.shape[-1:] != (3,) or b.shape[-1:] != (3,):
        raise ValueError(f"cross: both inputs need a last axis of size 3, got {a.shape}, "
                         f"{b.shape}")
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _vector_norm(x, ord, axis, keepdims):
    if ord in ("euclidean", "fro", 2, 2.0):
        return sqrt(reduce_sum(square(x), axis=axis, keepdims=keepdims))
    if ord in (1, 1.0):
        return reduce_sum(abs(x), axis=axis, keepdims=keepdims)
    if ord == np.inf:
        return reduce_max(abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, (int, float)) and ord > 0:
        return reduce_sum(abs(x) ** float(ord), axis=axis, keepdims=keepdims) ** (1 / ord)
    raise ValueError(f"norm: ord must be 'euclidean', 'fro', 1, 2, np.inf or a positive "
                     f"number, got {ord!r}")


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """Vector norms (over all entries, or ``axis``) and matrix norms (a pair of axes):
    ``"euclidean"``/``"fro"``, 1, ``np.inf``, and other p for vectors."""
    x = convert_to_tensor(tensor)
    if x.dtype.kind not in "fc":
        raise TypeError(f"norm: expected a floating-point tensor, got {x.dtype.name}")
    keepdims = bool(keepdims)
    if axis is None:
        out = _vector_norm(reshape(x, (-1,)), ord, 0, False)
        return reshape(out, (1,) * x.ndim) if keepdims else out
    if np.ndim(axis) == 0 or len(axis) == 1:
        return _vector_norm(x, ord, int(np.reshape(axis, -1)[0]), keepdims)
    rows, cols = (int(a) % x.ndim for a in axis)
    if ord in ("euclidean", "fro"):
        return sqrt(reduce_sum(square(x), axis=(rows, cols), keepdims=keepdims))
    if ord in (1, np.inf):  # the largest column (1) or row (inf) sum of absolute values
        summed, peak = (rows, cols) if ord == 1 else (cols, rows)
        sums = reduce_sum(abs(x), axis=summed, keepdims=True)
        out = reduce_max(sums, axis=peak, keepdims=True)
        return out if keepdims else squeeze(out, (rows, cols))
    raise ValueError(f"norm: matrix norms support ord 'euclidean', 'fro', 1 and np.inf, "
                     f"got {ord!r}")


def normalize(tensor, ord="euclidean", axis=None, name=None):
    """``(tensor / norm, norm)``, the norm kept with its reduced axes."""
    n = norm(tensor, ord=ord, axis=axis, keepdims=True)
    return tensor / n, n


def global_norm(t_list, name=None):
    """``sqrt(sum of every tensor's squared entries)``."""
    return sqrt(add_n([reduce_sum(square(convert_to_tensor(t))) for t in t_list if t is not None]))


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """``input`` with the main diagonal of each matrix replaced by ``diagonal``."""
    x, d = convert_to_tensor(input), convert_to_tensor(diagonal)
    if k:
        raise ValueError("set_diag: only the main diagonal (k=0) is supported")
    m, n = x.shape[-2:]
    if d.shape[-1:] != (min(m, n),):
        raise ValueError(f"set_diag: a diagonal of shape {d.shape} does not fit matrices of "
                         f"shape {(m, n)}; it needs {min(m, n)} entries")
    xp = backend.array_module(x._value)
    on = wrap_constant(xp.eye(m, n, dtype=bool))
    spread = expand_dims(d, -1) * wrap_constant(xp.eye(min(m, n), n, dtype=x.dtype))  # rows of d
    if m > n:
        spread = _concat_rows(spread, m - n)
    return where(on, spread, x)


def _concat_rows(x, count):
    zeros = wrap_constant(backend.array_module(x._value).zeros(x.shape[:-2] + (count, x.shape[-1]),
                                                      dtype=x.dtype))
    return concat([x, zeros], axis=x.ndim - 2)


def tensor_diag(diagonal, name=None):
    """The tensor of rank 2k with ``diagonal`` (rank k) on its diagonal."""
    d = convert_to_tensor(diagonal)
    return reshape(diag(reshape(d, (-1,))), d.shape + d.shape)


def tensor_diag_part(input, name=None):  # noqa: A002
    """The diagonal of a tensor of shape ``s + s``: the inverse of ``tensor_diag``."""
    x = convert_to_tensor(input)
    half = x.ndim // 2
    if x.ndim % 2 or x.shape[:half] != x.shape[half:]:
        raise ValueError(f"tensor_diag_part: expected a shape s + s, got {x.shape}")
    size = int(np.prod(x.shape[:half]))
    return reshape(diag_part(reshape(x, (size, size))), x.shape[:half])


# --- tridiagonal systems (TensorFlow's "compact" layout: superdiagonal, diagonal, subdiagonal) ---
def _tridiagonal_parts(name, diagonals, diagonals_format):
    """``(superdiagonal, diagonal, subdiagonal)``, each of M entries (compact layout)."""
    if diagonals_format == "sequence":
        super_, main, sub = (convert_to_tensor(d) for d in diagonals)
    elif diagonals_format == "matrix":
        d = convert_to_tensor(diagonals)
        r = backend.array_module(d._value).arange(d.shape[-1])
        super_, main, sub = (getitem(d, (Ellipsis, r[:-1], r[1:])), diag_part(d),
                             getitem(d, (Ellipsis, r[1:], r[:-1])))
    else:
        d = convert_to_tensor(diagonals)
        if diagonals_format != "compact" or d.ndim < 2 or d.shape[-2] != 3:
            raise ValueError(f"{name}: diagonals of shape {d.shape} in format "
                             f"{diagonals_format!r}; expected 'compact' (..., 3, M), "
                             f"'sequence' or 'matrix'")
        return tuple(d[..., i, :] for i in range(3))
    if super_.shape[-1] == main.shape[-1] - 1:  # off-diagonals of M - 1 entries: padded to M
        edge = [[0, 0]] * (main.ndim - 1)
        super_, sub = pad(super_, edge + [[0, 1]]), pad(sub, edge + [[1, 0]])
    return super_, main, sub


def _tridiagonal_dense(super_, main, sub):
    """The square matrices of three diagonals (in TF's compact layout the superdiagonal's last
    entry and the subdiagonal's first are unused), built with differentiable ops."""
    outer = [[0, 0]] * (main.ndim - 1)
    upper = pad(diag(super_[..., :-1]), outer + [[0, 1], [1, 0]])
    lower = pad(diag(sub[..., 1:]), outer + [[1, 0], [0, 1]])
    return diag(main) + upper + lower


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """The tridiagonal matrices given by ``diagonals`` times ``rhs`` (..., M, N)."""
    parts = _tridiagonal_parts("tridiagonal_matmul", diagonals, diagonals_format)
    return matmul(_tridiagonal_dense(*parts), rhs)


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True,
                      perturb_singular=False):
    """``X`` with ``T @ X = rhs`` for the tridiagonal ``T`` given by ``diagonals`` (solved as
    a dense system: exact, and differentiable in the diagonals and ``rhs``)."""
    rhs = convert_to_tensor(rhs)
    b = matrix_transpose(rhs) if transpose_rhs else rhs
    parts = _tridiagonal_parts("tridiagonal_solve", diagonals, diagonals_format)
    squeeze_after = b.ndim == parts[1].ndim
    if squeeze_after:  # a vector right-hand side: (..., M)
        b = expand_dims(b, -1)
    x = solve(_tridiagonal_dense(*parts), b)
    return squeeze(x, -1) if squeeze_after else x


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None):
    """``triangular_solve`` for a matrix given by its ``K`` bands (..., K, M) in TensorFlow's
    LEFT_RIGHT layout: the diagonal first and subdiagonals right-aligned when ``lower``, else
    superdiagonals left-aligned and the diagonal last."""
    b = convert_to_tensor(bands)
    count, m = b.shape[-2:]
    edge = [[0, 0]] * (b.ndim - 2)
    dense = 0
    for k in range(count):
        if lower:  # row k: the k-th subdiagonal, A[i, i - k] = bands[k, i]
            band = pad(diag(b[..., k, k:]), edge + [[k, 0], [0, k]])
        else:  # row count - 1 - k: the k-th superdiagonal, A[i, i + k] = bands[.., i]
            band = pad(diag(b[..., count - 1 - k, :m - k]), edge + [[0, k], [k, 0]])
        dense = band if k == 0 else dense + band
    return triangular_solve(dense, rhs, lower=lower, adjoint=adjoint)
