"""``fw.linalg`` (tf.linalg): a view of ops declared once in ``framework/ops``; each name is the
same object as its top-level or ``fw.math`` alias."""
import sys as _sys

from .creation import eye
from .namespaces import suggest_close_names as _suggest_close_names
from .ops.decomposition import (eigh, eigh_tridiagonal, eigvalsh, expm, lstsq, matrix_rank, pinv,
                                qr, svd)
from .ops.linalg import einsum, matmul
from .ops.lu import lu, lu_matrix_inverse, lu_reconstruct, lu_solve, sqrtm
from .ops.matrix import (adjoint, band_part, banded_triangular_solve, cholesky, cholesky_solve,
                         cross, det, diag, diag_part, global_norm, inv, logdet, matrix_transpose,
                         matvec, norm, normalize, set_diag, slogdet, solve, tensor_diag,
                         tensor_diag_part, tensordot, trace, triangular_solve,
                         tridiagonal_matmul, tridiagonal_solve)
from .ops.stats import l2_normalize

_suggest_close_names(_sys.modules[__name__], "fw.linalg")
