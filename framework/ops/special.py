"""Special functions of ``tf.math``: ``lgamma``, ``digamma``, ``polygamma``, ``lbeta``,
``erfinv``, ``erfcinv``, ``ndtri``, ``zeta``, ``bessel_i0(e)``, ``bessel_i1(e)``, ``angle``.

The forwards are computed with array methods only (no SciPy), so they run on either backend:
the gamma family shifts its argument up past 10 with the recurrences (which hold for
negative arguments too), then sums the asymptotic (Stirling) series, exact to about 1e-14 in
float64. ``erfinv`` refines a starting guess with Newton's method on ``erf``; the Bessel
functions sum their power series below 25 and their asymptotic expansion above; ``zeta`` is
Euler-Maclaurin. Each VJP is written with the family's
own functions, so any order works.
"""
import math

import numpy as np

from ..engine import backend
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor
from .math import exp, floats_only, sign
from .shape import where

# Bernoulli numbers B_2, B_4, ..., B_14 for the asymptotic series
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)
_LARGE = 10.0


def _shift_up(x, xp):  # (the recurrences hold for negative non-integers too)
    """``x`` moved to at least ``_LARGE`` by whole steps, and the steps taken (per element)."""
    steps = xp.maximum(xp.ceil(_LARGE - x), 0)
    return x + steps, steps


def _lgamma_shifted(x, xp):
    y, steps = _shift_up(x, xp)
    series = sum(b / ((2 * k + 2) * (2 * k + 1) * y ** (2 * k + 1))
                 for k, b in enumerate(_BERNOULLI))
    stirling = (y - 0.5) * xp.log(y) - y + 0.5 * math.log(2 * math.pi) + series
    correction = xp.zeros_like(x)  # log(x (x + 1) ... (x + steps - 1)), one step at a time
    for k in range(int(steps.max()) if steps.size else 0):
        correction = correction + xp.where(k < steps, xp.log(xp.abs(x + k)), 0)
    return stirling - correction


def _polygamma_shifted(n, x, xp):
    """psi^(n)(x) (n = 0: digamma)."""
    y, steps = _shift_up(x, xp)
    if n == 0:
        series = xp.log(y) - 0.5 / y - sum(b / ((2 * k + 2) * y ** (2 * k + 2))
                                            for k, b in enumerate(_BERNOULLI))
    else:
        sign = (-1) ** (n + 1)
        series = math.factorial(n - 1) / y ** n + math.factorial(n) / (2 * y ** (n + 1))
        series = series + sum(b * math.factorial(2 * k + 1 + n) / (
            math.factorial(2 * k + 2) * y ** (2 * k + 2 + n)) for k, b in enumerate(_BERNOULLI))
        series = sign * series
    correction = xp.zeros_like(x)
    for k in range(int(steps.max()) if steps.size else 0):
        # psi^(n)(x) = psi^(n)(x + 1) - (-1)^n n! / x^(n + 1)
        term = (-1) ** n * math.factorial(n) / (x + k) ** (n + 1)
        correction = correction + xp.where(k < steps, term, 0)
    return series - correction


def _in_float64(series):
    """A raw forward that evaluates ``series(z, xp)`` in float64 and returns ``x``'s dtype."""
    def forward(x, **params):
        xp = backend.array_module(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return series(x.astype(np.float64), xp, **params).astype(x.dtype)
    return forward


def _lgamma_series(z, xp):
    return _lgamma_shifted(z, xp)


def _digamma_series(z, xp):
    out = _polygamma_shifted(0, z, xp)
    return xp.where((z <= 0) & (z == xp.floor(z)), np.nan, out)  # the poles, as in TF


def _polygamma_series(z, xp, n):
    return _polygamma_shifted(n, z, xp)


lgamma = define("lgamma", floats_only(_in_float64(_lgamma_series)),
                lambda g, out, x: g * digamma(x))
digamma = define("digamma", floats_only(_in_float64(_digamma_series)),
                 lambda g, out, x: g * _polygamma(x, n=1))
_polygamma = define("polygamma", floats_only(_in_float64(_polygamma_series)),
                    lambda g, out, x, n: g * _polygamma(x, n=n + 1))


def polygamma(a, x, name=None):
    """The ``a``-th derivative of ``digamma`` at ``x`` (``a`` a whole number)."""
    a = convert_to_tensor(a)
    orders = set(np.asarray(backend.to_host(a._value)).reshape(-1).tolist())
    if len(orders) != 1 or int(next(iter(orders))) != next(iter(orders)) or min(orders) < 0:
        raise ValueError(f"polygamma: the order a must be one whole number >= 0, got "
                         f"{sorted(orders)}")
    n = int(next(iter(orders)))
    return digamma(x) if n == 0 else _polygamma(x, n=n)


def _erfinv_forward(y):
    """Giles's single-precision approximation, then Newton steps on ``erf`` in float64."""
    xp = backend.array_module(y)
    z = y.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -xp.log((1 - z) * (1 + z))
        central, tail = w - 2.5, xp.sqrt(w) - 3.0
        p_c = sum(c * central ** i for i, c in enumerate((
            1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087,
            -4.39150654e-06, -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)))
        p_t = sum(c * tail ** i for i, c in enumerate((
            2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773,
            -0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257)))
        x = xp.where(w < 5, p_c, p_t) * z
        for _ in range(3):
            step = (backend.erf(x) - z) / (2 / math.sqrt(math.pi) * xp.exp(-x * x))
            x = xp.where(xp.isfinite(x) & (xp.abs(z) < 1), x - step, x)
        x = xp.where(xp.abs(z) == 1, z * np.inf, xp.where(xp.abs(z) > 1, np.nan, x))
    return x.astype(y.dtype)


erfinv = define("erfinv", floats_only(_erfinv_forward),
                lambda g, out, y: g * exp(out * out) * (math.sqrt(math.pi) / 2))


def erfcinv(x, name=None):
    """The inverse of ``erfc``: ``erfinv(1 - x)``."""
    return erfinv(1 - convert_to_tensor(x))


def ndtri(x, name=None):
    """The inverse of the standard normal CDF: ``sqrt(2) * erfinv(2 x - 1)``."""
    x = convert_to_tensor(x)
    return erfinv(x * 2 - 1) * math.sqrt(2)


def lbeta(x, name=None):
    """``log(|Beta(x)|)`` over the last axis: ``sum(lgamma(x)) - lgamma(sum(x))``."""
    from .reduce import reduce_sum
    x = convert_to_tensor(x)
    return reduce_sum(lgamma(x), axis=-1) - lgamma(reduce_sum(x, axis=-1))


# --- modified Bessel functions of orders 0 and 1, exponentially scaled --------------------------
_SERIES_LIMIT = 25.0  # below: the power series; above: the asymptotic expansion


def _bessel_scaled(order, z, xp):
    """``I_order(|z|) exp(-|z|)`` in float64, for order 0 or 1."""
    a = xp.abs(z)
    small = xp.minimum(a, _SERIES_LIMIT)
    quarter = (small / 2) ** 2
    term = xp.ones_like(small) if order == 0 else small / 2
    total = term
    for k in range(1, 80):
        term = term * quarter / (k * (k + order))
        total = total + term
    series = total * xp.exp(-small)
    large = xp.maximum(a, _SERIES_LIMIT)
    mu, coefficient, expansion = 4.0 * order * order, 1.0, xp.ones_like(large)
    for k in range(1, 12):
        coefficient *= -(mu - (2 * k - 1) ** 2) / (k * 8)
        expansion = expansion + coefficient / large ** k
    asymptotic = expansion / xp.sqrt(2 * math.pi * large)
    return xp.where(a < _SERIES_LIMIT, series, asymptotic)


def _i0e_series(z, xp):
    return _bessel_scaled(0, z, xp)


def _i1e_series(z, xp):
    return xp.sign(z) * _bessel_scaled(1, z, xp)


def _i1e_vjp(g, out, x):
    """``i0e(x) - i1e(x) (sign(x) + 1 / x)``, and 1/2 at 0 (its limit)."""
    nonzero = x != 0
    safe = where(nonzero, x, 1)
    return g * where(nonzero, bessel_i0e(x) - out * (sign(x) + 1 / safe), 0.5)


bessel_i0e = define("bessel_i0e", floats_only(_in_float64(_i0e_series)),
                    lambda g, out, x: g * (bessel_i1e(x) - sign(x) * out))
bessel_i1e = define("bessel_i1e", floats_only(_in_float64(_i1e_series)), _i1e_vjp)


def _i1_vjp(g, out, x):
    """``i0(x) - i1(x) / x``, and 1/2 at 0 (its limit)."""
    nonzero = x != 0
    return g * where(nonzero, bessel_i0(x) - out / where(nonzero, x, 1), 0.5)


# the unscaled functions: the scaled ones times exp(|x|), with TensorFlow's own gradients
bessel_i0 = define("bessel_i0", floats_only(_in_float64(
    lambda z, xp: _bessel_scaled(0, z, xp) * xp.exp(xp.abs(z)))),
    lambda g, out, x: g * bessel_i1(x))
bessel_i1 = define("bessel_i1", floats_only(_in_float64(
    lambda z, xp: _i1e_series(z, xp) * xp.exp(xp.abs(z)))), _i1_vjp)


# --- Hurwitz zeta ---------------------------------------------------------------------------------
def _zeta_series(s, q, xp):
    """``sum_k (q + k)^-s`` by Euler-Maclaurin: ten terms summed, the rest integrated."""
    total = xp.zeros(np.broadcast_shapes(s.shape, q.shape))
    for k in range(10):
        total = total + (q + k) ** -s
    a = q + 10
    total = total + a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    rising = s.copy()  # s (s + 1) ... (s + 2j - 2)
    for j, b in enumerate(_BERNOULLI, start=1):
        total = total + b / math.factorial(2 * j) * rising * a ** (-s - 2 * j + 1)
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
    return xp.where(s == 1, np.inf, total)


def _zeta_forward(x, q):
    xp = backend.array_module(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _zeta_series(x.astype(np.float64), q.astype(np.float64), xp).astype(x.dtype)


# TensorFlow differentiates zeta in q only: d/dq zeta(x, q) = -x zeta(x + 1, q)
zeta = define("zeta", floats_only(_zeta_forward), None,
              lambda g, out, x, q: -g * x * zeta(x + 1, q), same_dtype=True)


def angle(input, name=None):  # noqa: A002 - TensorFlow's argument name
    """The argument of a real number: pi for negatives, 0 otherwise (no gradient)."""
    return _angle(convert_to_tensor(input))


_angle = define("angle", floats_only(lambda x: np.where(x < 0, math.pi, 0).astype(x.dtype)))
