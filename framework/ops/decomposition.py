"""Symmetric eigendecomposition and least squares (``tf.linalg.eigh``, ``eigvalsh``, ``lstsq``,
``matrix_rank``).

``eigh`` reads the lower triangle, as NumPy's and TensorFlow's do, so its gradient is
TensorFlow's: the symmetric formula ``V (diag(g_w) + F * (V^T g_V)) V^T`` with
``F_ij = 1 / (w_j - w_i)`` off the diagonal, folded onto the lower triangle (the entries the
forward read). It needs distinct eigenvalues, as TensorFlow's does. The eigenvalues and the
eigenvectors are two primitives, each VJP written with both, so higher orders work.
``lstsq`` is TensorFlow's fast path: the regularised normal equations, solved through Cholesky.
"""
import collections

import numpy as np

from .. import backend
from ..primitive import define
from ..tensor import convert_to_tensor, wrap
from .linalg import matmul
from .math import floats_only
from .matrix import (_square, band_part, cholesky, cholesky_solve, diag_part, matrix_transpose,
                     set_diag)
from .shape import expand_dims

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
    off = wrap(backend.array_module(out._value).asarray(1 - np.eye(n), dtype=out.dtype))
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
    eye = wrap(backend.array_module(a._value).eye(min(m, n), dtype=a.dtype))
    if m >= n:
        gram = matmul(a, a, transpose_a=True) + eye * l2_regularizer
        return cholesky_solve(cholesky(gram), matmul(a, b, transpose_a=True))
    gram = matmul(a, a, transpose_b=True) + eye * l2_regularizer
    return matmul(a, cholesky_solve(cholesky(gram), b), transpose_a=True)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above ``tol`` (NumPy's default tolerance), as int32."""
    x = convert_to_tensor(a)
    rank = np.linalg.matrix_rank(backend.to_host(x._value), tol=tol)
    return wrap(backend.to_backend(np.asarray(rank, dtype=np.int32)))
