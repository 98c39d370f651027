"""``fw.math`` (tf.math): a view of ops declared once in ``framework/ops`` and ``framework.nn``;
each name is the same object as its top-level or ``fw.nn`` alias."""
import sys as _sys

from .namespaces import suggest_close_names as _suggest_close_names
from .ops.nn import log_softmax, softmax, softplus
from .ops import (abs, add, argmax, argmin, cos, divide, equal, erf, exp, greater,
                  greater_equal, less, less_equal, log, logical_and, logical_not, logical_or,
                  maximum, minimum, multiply, negative, not_equal, pow, reduce_max, reduce_mean,
                  reduce_min, reduce_sum, sigmoid, sign, sin, sqrt, square, subtract, tanh)
from .ops.elementwise import (acos, acosh, add_n, asin, asinh, atan, atan2, atanh, ceil, cosh,
                              divide_no_nan, erfc, expm1, floor, floordiv, floormod, is_finite,
                              is_inf, is_nan, log1p, log_sigmoid, logical_xor, mod,
                              multiply_no_nan, reciprocal, reciprocal_no_nan, rint, round,
                              rsqrt, scalar_mul, sinh, softsign, squared_difference, tan,
                              truediv, xdivy, xlog1py, xlogy)
from .ops.elementwise import accumulate_n, conj, imag, nextafter, polyval, real
from .ops.scan import cumprod, cumsum, cumulative_logsumexp
from .ops.segment import (bincount, confusion_matrix, in_top_k, invert_permutation,
                          is_non_decreasing, is_strictly_increasing, segment_max, segment_mean,
                          segment_min, segment_prod, segment_sum, unsorted_segment_max,
                          unsorted_segment_mean, unsorted_segment_min, unsorted_segment_prod,
                          unsorted_segment_sqrt_n, unsorted_segment_sum, zero_fraction)
from .ops.sort import approx_max_k, approx_min_k, top_k
from .ops.special import (angle, bessel_i0, bessel_i0e, bessel_i1, bessel_i1e, digamma, erfcinv,
                          erfinv, lbeta, lgamma, ndtri, polygamma, zeta)
from .ops.stats import (count_nonzero, l2_normalize, reduce_all, reduce_any,
                        reduce_euclidean_norm, reduce_logsumexp, reduce_prod, reduce_std,
                        reduce_variance)

_suggest_close_names(_sys.modules[__name__], "fw.math")
