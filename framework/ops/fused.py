"""Ops that Keras layers compose from several, fused into one: the softmax with a mask over
one or several axes (``layers.Softmax``, the attention layers) and layer normalization
(``layers.LayerNormalization``).

Keras's masked softmax is ``where(mask, x, -1e9)``, the softmax, then ``where(mask, p, 0)``
(``fill``); its ``Attention`` layers' is ``where(mask, x - 1e9, x)`` and the softmax, without
the last step. As one op it takes one pass over the scores instead of three and its VJP is the
softmax's own, ``p * (g - sum(g * p))``: at a masked entry ``p`` is 0 (``exp`` of -1e9
underflows), so the masked entries get no gradient, as through the ``where``s. The VJP is
written with the framework's ops, so higher orders come from the tape.

Layer normalization, ``(x - mean) / sqrt(variance + epsilon) * gamma + beta`` over some axes,
is a dozen ops composed (``layers.normalization``'s ``moments`` and ``normalize``) and twice as
many in their backward pass; as one op the forward keeps the normalized ``x`` and ``1 / sqrt(
variance + epsilon)`` for its array VJP, which gives all three gradients in a few passes. Its
tensor VJPs recompute them with the framework's ops (higher orders). Both forms serve NumPy
and CuPy arrays alike.
"""
import numpy as np

from ..engine import backend
from ..engine.primitive import define
from ..engine.tensor import convert_to_tensor
from ..tuning import host
from .math import floats_only
from .elementwise import rsqrt
from .reduce import reduce_mean, reduce_sum

__all__ = ["layer_normalization", "masked_softmax"]

# What Keras puts at masked-out logits (float16: -3e4, which its exp still takes to 0).
_LARGE_NEGATIVE = {np.dtype(np.float16): -3e4}


def _large_negative(dtype):
    return _LARGE_NEGATIVE.get(dtype, -1e9)


def _normalized(e, axes, shifted=False):
    """``exp`` of ``e`` (shifted by its maximum over ``axes`` unless ``shifted``) over its sum,
    in place."""
    if not shifted:
        e -= e.max(axis=axes, keepdims=True)
    backend.array_module(e).exp(e, out=e)
    e /= e.sum(axis=axes, keepdims=True)
    return e


def _softmax_forward(x, axes):
    return _normalized(x - x.max(axis=axes, keepdims=True), axes, shifted=True)


def _masked_forward(x, mask, axes, fill):
    xp = backend.array_module(x)
    negative = x.dtype.type(_large_negative(x.dtype))
    if fill:
        p = _normalized(xp.where(mask, x, negative), axes)
        return xp.multiply(p, mask, out=p)
    return _normalized(xp.where(mask, x, x + negative), axes)


def _vjp(g, out, x, *rest, axes, **params):
    return out * (g - reduce_sum(g * out, axis=axes, keepdims=True))


def _array_vjp(g, out, needs, x, *rest, axes, **params):
    grad = g * out
    total = grad.sum(axis=axes, keepdims=True)
    backend.array_module(g).subtract(g, total, out=grad)
    grad *= out
    return (grad,) + (None,) * len(rest)


_softmax = define("softmax_over_axes", floats_only(_softmax_forward), _vjp,
                  array_vjp=_array_vjp)
_masked = define("masked_softmax", floats_only(_masked_forward), _vjp, None,
                 array_vjp=_array_vjp)


def masked_softmax(x, mask, axes, fill=True):
    """The softmax of ``x`` over ``axes`` (a tuple), where ``mask`` (booleans broadcasting to
    ``x``, or None) is False an entry takes no part: Keras's ``Softmax`` layer's form with
    ``fill`` (masked entries' probability exactly 0), its attention layers' without."""
    x = convert_to_tensor(x)
    axes = tuple(sorted(a % x.ndim - x.ndim for a in axes))  # from the end, for the VJPs
    if mask is None:
        return _softmax(x, axes=axes)
    return _masked(x, convert_to_tensor(mask), axes=axes, fill=bool(fill))


# --- layer normalization --------------------------------------------------------------------------
def _layer_norm_forward(x, gamma, beta, axes, epsilon, means=None):
    """``means``: the mean over ``axes`` of an array like ``x`` (None: NumPy's reduction; the
    host form passes BLAS's row products, ``host.last_axis_means``)."""
    xp = backend.array_module(x)
    means = means or _means_over(axes)
    normed = x - means(x)
    inv = means(normed * normed)
    inv += epsilon
    xp.sqrt(inv, out=inv)
    xp.divide(1, inv, out=inv)
    normed *= inv
    out = normed * gamma
    out += beta
    return out, (normed, inv)


def _normalized_parts(x, axes, epsilon):
    """The normalized ``x`` and ``1 / sqrt(variance + epsilon)``, from the framework's ops."""
    centered = x - reduce_mean(x, axis=axes, keepdims=True)
    inv = rsqrt(reduce_mean(centered * centered, axis=axes, keepdims=True) + epsilon)
    return centered * inv, inv


def _layer_norm_vjp_x(g, out, x, gamma, beta, axes, epsilon, saved=None):
    normed, inv = _normalized_parts(x, axes, epsilon)
    dn = g * gamma
    return inv * (dn - reduce_mean(dn, axis=axes, keepdims=True)
                  - normed * reduce_mean(dn * normed, axis=axes, keepdims=True))


def _layer_norm_vjp_gamma(g, out, x, gamma, beta, axes, epsilon, saved=None):
    return g * _normalized_parts(x, axes, epsilon)[0]  # (the tape sums it to gamma's shape)


def _layer_norm_array_vjp(g, out, needs, x, gamma, beta, axes, epsilon, saved, means=None):
    normed, inv = saved
    dx = dgamma = None
    if needs[0]:
        means = means or _means_over(axes)
        dn = g * gamma
        dx = dn - means(dn)
        dn *= normed
        dx -= normed * means(dn)
        dx *= inv
    if needs[1]:
        dgamma = g * normed
    return dx, dgamma, g if needs[2] else None


def _means_over(axes):
    return lambda a: a.mean(axis=axes, keepdims=True)


def _layer_norm_host(x, gamma, beta, axes, epsilon):
    return _layer_norm_forward(x, gamma, beta, axes, epsilon, host.last_axis_means(axes, x))


def _layer_norm_host_array_vjp(g, out, needs, x, gamma, beta, axes, epsilon, saved):
    return _layer_norm_array_vjp(g, out, needs, x, gamma, beta, axes, epsilon, saved,
                                 host.last_axis_means(axes, g))


_layer_norm = define("layer_normalization", floats_only(_layer_norm_forward),
                     _layer_norm_vjp_x, _layer_norm_vjp_gamma,
                     lambda g, out, x, gamma, beta, axes, epsilon, saved=None: g,
                     array_vjp=_layer_norm_array_vjp, saves=True, same_dtype=True,
                     host_forward=floats_only(_layer_norm_host),
                     host_array_vjp=_layer_norm_host_array_vjp)


def layer_normalization(x, gamma, beta, axes, epsilon):
    """``(x - mean) / sqrt(variance + epsilon) * gamma + beta``, the mean and (biased) variance
    over ``axes``; ``gamma`` and ``beta`` broadcast against ``x``."""
    x = convert_to_tensor(x)
    axes = tuple(sorted(a % x.ndim - x.ndim for a in axes))
    return _layer_norm(x, gamma, beta, axes=axes, epsilon=float(epsilon))
