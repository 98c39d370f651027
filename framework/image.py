"""``fw.image`` (tf.image): resizing, dtype conversion, flips, crops and standardisation.

Every resize method of TensorFlow is linear in the pixels and separable: the output is
``A_h @ image @ A_w^T`` for each image and channel, where ``A_h`` and ``A_w`` depend only on the
sizes. So ``resize`` builds those interpolation matrices once per (method, sizes), with
TensorFlow's kernels' own arithmetic (float32 sampling positions, half-pixel centres, the
bicubic coefficient table, area overlaps, the scale-and-translate spans), and applies them
by their nonzeros ("taps": two per output for bilinear, four for bicubic, the overlapped cells
for area): one gather and one multiply-add per tap and axis, framework ops whose gradients
(scatter-adds of the weighted cotangent) are exact at every order. Under ``fw.function`` the
taps are constants of the shapes, never of the values.
``nearest`` takes one row and one column per output and keeps the images' dtype; every other method
returns float32, as TensorFlow's.
"""
import functools as _functools
import math as _math
import operator as _operator
import sys as _sys

import numpy as _np

from . import random as _random
from .engine.dtypes import float32 as _float32
from .engine.dtypes import numpy_dtype as _numpy_dtype
from .namespaces import suggest_close_names as _suggest_close_names
from .ops import cast as _cast
from .ops import expand_dims as _expand_dims
from .ops import floordiv as _floordiv
from .ops import gather as _gather
from .ops import getitem as _getitem
from .ops import identity as _identity
from .ops import maximum as _maximum
from .ops import pad as _pad
from .ops import reduce_mean as _reduce_mean
from .ops import reshape as _reshape
from .ops import reverse as _reverse
from .ops import round as _round
from .ops import saturate_cast as _saturate_cast
from .ops import tensordot as _tensordot
from .ops import where as _where
from .ops.elementwise import rsqrt as _rsqrt
from .ops.stats import reduce_std as _reduce_std
from .engine.tensor import convert_to_tensor as _convert_to_tensor
from .engine.tensor import scalar_like as _scalar_like


class ResizeMethod:
    """The names ``resize`` takes for ``method`` (``tf.image.ResizeMethod``)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_F = _np.float32


# --- the 1-D interpolation matrices (out_size, in_size), float64 holding float32 weights -------
def _bilinear(n_in, n_out):
    """ResizeBilinear with half-pixel centres: two neighbours, the positions clamped."""
    scale, w = _F(n_in) / _F(n_out), _np.zeros((n_out, n_in))
    for i in range(n_out):
        position = (_F(i) + _F(0.5)) * scale - _F(0.5)
        low = _math.floor(position)
        lerp = float(position - _F(low))
        w[i, max(low, 0)] += 1 - lerp
        w[i, min(_math.ceil(position), n_in - 1)] += lerp
    return w


def _nearest(n_in, n_out):
    """ResizeNearestNeighbor with half-pixel centres: the index each output reads."""
    scale = _F(n_in) / _F(n_out)
    return _np.array([max(0, min(_math.floor((_F(i) + _F(0.5)) * scale), n_in - 1))
                     for i in range(n_out)], dtype=_np.int64)


def _area(n_in, n_out):
    """ResizeArea: each output averages the inputs its cell overlaps, by overlap length."""
    scale, w = _F(n_in) / _F(n_out), _np.zeros((n_out, n_in))
    for i in range(n_out):
        start, end = _F(i) * scale, _F(i + 1) * scale
        for v in range(_math.floor(start), _math.ceil(end)):
            overlap = min(_F(v + 1), end) - max(_F(v), start)
            w[i, min(v, n_in - 1)] += float(overlap) / float(scale)
    return w


@_functools.lru_cache(maxsize=None)
def _cubic_table():
    """ResizeBicubic's Keys (a = -0.5) coefficients at 1025 points, as TensorFlow tabulates
    them (float32 entries computed in double)."""
    a, x = -0.5, _np.arange(1025) / 1024.0
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + 1.0
    far = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return near.astype(_np.float32), far.astype(_np.float32)


def _bicubic(n_in, n_out):
    """ResizeBicubic with half-pixel centres: four taps from the table, those outside the
    image dropped and the rest renormalised."""
    near, far = _cubic_table()
    scale, w = _F(n_in) / _F(n_out), _np.zeros((n_out, n_in))
    for i in range(n_out):
        position = (_F(i) + _F(0.5)) * scale - _F(0.5)
        base = _math.floor(position)
        offset = int(_np.rint((position - _F(base)) * _F(1024)))
        taps = [far[offset], near[offset], near[1024 - offset], far[1024 - offset]]
        taps = [t if 0 <= base - 1 + k < n_in else _F(0) for k, t in enumerate(taps)]
        total = _F(sum(taps, _F(0)))
        if abs(total) >= 1000 * _np.finfo(_np.float32).tiny:
            taps = [t * (_F(1) / total) for t in taps]
        for k, t in enumerate(taps):
            if t:
                w[i, base - 1 + k] += float(t)
    return w


def _keys(x):
    return ((_F(1.5) * x - _F(2.5)) * x) * x + _F(1) if x < 1 else \
        ((_F(-0.5) * x + _F(2.5)) * x - _F(4)) * x + _F(2) if x < 2 else _F(0)


def _mitchell(x):
    return (((_F(7 / 6) * x - _F(2)) * x) * x + _F(8 / 9)) if x < 1 else \
        ((((_F(-7 / 18) * x + _F(2)) * x - _F(10 / 3)) * x + _F(16 / 9)) if x < 2 else _F(0))


def _lanczos(radius):
    def kernel(x):
        if x > radius:
            return _F(0)
        if x <= 1e-3:
            return _F(1)
        pi = _F(3.14159265359)
        return _F(radius * _np.sin(pi * x) * _np.sin(pi * x / _F(radius)) / (pi * pi * x * x))
    return kernel


_KERNELS = {  # ScaleAndTranslate's kernels: (function of |x|, radius)
    "triangle": (lambda x: max(_F(0), _F(1) - x), 1.0),
    "keyscubic": (_keys, 2.0),
    "mitchellcubic": (_mitchell, 2.0),
    "lanczos3": (_lanczos(3), 3.0),
    "lanczos5": (_lanczos(5), 5.0),
    "gaussian": (lambda x: _F(_np.exp(-x * x / (2.0 * 0.5 * 0.5))) if x < 1.5 else _F(0), 1.5),
}


def _scale_and_translate(kernel_name, antialias, n_in, n_out):
    """ScaleAndTranslate (translation 0): the kernel at each source pixel's centre around the
    sampling point, widened by the down-scaling factor when ``antialias``, renormalised."""
    kernel, radius = _KERNELS[kernel_name]
    inv_scale = _F(1) / (_F(n_out) / _F(n_in))
    kernel_scale = max(inv_scale, _F(1)) if antialias else _F(1)
    reach = _F(radius) * kernel_scale
    w = _np.zeros((n_out, n_in))
    for i in range(n_out):
        sample = (_F(i) + _F(0.5)) * inv_scale
        start = min(max(_math.ceil(sample - reach - _F(0.5)), 0), n_in - 1)
        end = min(max(_math.floor(sample + reach - _F(0.5)), 0), n_in - 1) + 1
        taps = [kernel(abs((_F(s) + _F(0.5) - sample) * (_F(1) / kernel_scale)))
                for s in range(start, end)]
        total = _F(sum(taps, _F(0)))
        if abs(total) >= 1000 * _np.finfo(_np.float32).tiny:
            taps = [t * (_F(1) / total) for t in taps]
        w[i, start:end] = taps
    return w


@_functools.lru_cache(maxsize=256)
def _matrix(method, antialias, n_in, n_out):
    """The (n_out, n_in) matrix of ``method`` along one axis (read only: it is shared)."""
    if method == "area":
        w = _area(n_in, n_out)
    elif method in ("bilinear", "bicubic") and antialias:
        w = _scale_and_translate("triangle" if method == "bilinear" else "keyscubic", True,
                                 n_in, n_out)
    elif method == "bilinear":
        w = _bilinear(n_in, n_out)
    elif method == "bicubic":
        w = _bicubic(n_in, n_out)
    else:
        w = _scale_and_translate(method, antialias, n_in, n_out)
    w.setflags(write=False)
    return w


@_functools.lru_cache(maxsize=256)
def _taps(method, antialias, n_in, n_out):
    """``_matrix`` as taps: (indices, weights), each (taps, n_out), row ``k`` the ``k``-th
    nonzero of every output row (index 0 and weight 0 where a row has fewer)."""
    matrix = _matrix(method, antialias, n_in, n_out)
    count = max(1, int((matrix != 0).sum(axis=1).max()))
    indices = _np.zeros((count, n_out), _np.int64)
    weights = _np.zeros((count, n_out))
    for i, row in enumerate(matrix):
        nonzero = _np.flatnonzero(row)
        indices[:len(nonzero), i], weights[:len(nonzero), i] = nonzero, row[nonzero]
    return indices, weights


# --- resize --------------------------------------------------------------------------------------
_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian",
            "mitchellcubic")


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False,
           antialias=False, name=None):
    """``images`` (``[batch,] height, width, channels``) resized to ``size`` (new height,
    new width), as ``tf.image.resize``: float32 out, except ``nearest``, which keeps the dtype."""
    images, batched = _batch_of_images(images, "resize")
    height, width = _size(size)
    if preserve_aspect_ratio:
        height, width = _fitting(images.shape[1], images.shape[2], height, width)
    method = _method(method)
    if method == "nearest":
        out = _nearest_resized(images, height, width)
    else:
        out = _resized(images, height, width, method, antialias)
        out = out if out.dtype == _np.float32 else _cast(out, _float32)
    return out if batched else _getitem(out, 0)


def _resized(images, height, width, method, antialias=False):
    """The interpolating resize of a batch in the images' own float dtype (float32 for
    integers and float16): ``resize`` casts the result to float32; the gradient tests use
    float64 through here."""
    if images.dtype.kind != "f" or images.dtype == _np.float16:
        images = _cast(images, _float32)
    dtype = images.dtype
    rows = _convert_to_tensor(_matrix(method, bool(antialias), images.shape[1], height), dtype)
    cols = _convert_to_tensor(_matrix(method, bool(antialias), images.shape[2], width), dtype)
    out = _interpolated(images, _taps(method, bool(antialias), images.shape[1], height), 1)
    return _interpolated(out, _taps(method, bool(antialias), images.shape[2], width), 2)


def _interpolated(images, taps, axis):
    """The product of an interpolation matrix with ``images`` along ``axis``, tap by tap:
    each output row is a few input rows (the matrix's nonzeros) times their weights, so the
    work is the taps' count times the output, not a dense product."""
    indices, weights = taps
    shape = [-1] + [1] * (images.ndim - 1 - axis)
    out = None
    for index, weight in zip(indices, weights):
        term = _gather(images, index, axis=axis) * _convert_to_tensor(
            weight.reshape(shape), images.dtype)
        out = term if out is None else out + term
    return out


def _nearest_resized(images, height, width):
    rows = _gather(images, _nearest(images.shape[1], height), axis=1)
    return _gather(rows, _nearest(images.shape[2], width), axis=2)


def _method(method):
    method = str(method).lower()
    if method not in _METHODS:
        raise ValueError(f"resize: method {method!r} is not one of {', '.join(_METHODS)}")
    return method


def _size(size, op="resize"):
    try:
        height, width = (_operator.index(s) for s in size)  # (traced: a guard on each)
    except (TypeError, ValueError):
        raise ValueError(f"{op}: size must be two integers (height, width), got "
                         f"{size!r}") from None
    if height <= 0 or width <= 0:
        raise ValueError(f"{op}: size must be positive, got {[height, width]}")
    return height, width


def _fitting(height, width, max_height, max_width):
    """``preserve_aspect_ratio``'s size: TensorFlow's float32 scale and round-half-even."""
    factor = min(_F(max_height) / _F(height), _F(max_width) / _F(width))
    return int(_np.round(factor * _F(height))), int(_np.round(factor * _F(width)))


def _batch_of_images(images, op):
    """``images`` as a 4-D batch, and whether it was one already."""
    images = _convert_to_tensor(images)
    if images.ndim == 3:
        return _expand_dims(images, 0), False
    if images.ndim != 4:
        raise ValueError(f"{op}: 'images' must have either 3 or 4 dimensions, got shape "
                         f"{tuple(images.shape)}")
    return images, True


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR,
                    antialias=False):
    """``image`` resized to fit ``target_height`` x ``target_width`` with its aspect ratio
    kept, then padded with zeros to that size, centred (``tf.image.resize_with_pad``)."""
    images, batched = _batch_of_images(image, "resize_with_pad")
    target_height, target_width = _size((target_height, target_width), "resize_with_pad")
    height, width = _F(images.shape[1]), _F(images.shape[2])
    ratio = max(width / _F(target_width), height / _F(target_height))
    new_height, new_width = height / ratio, width / ratio
    top = max(0, int(_np.floor((_F(target_height) - new_height) / _F(2))))
    left = max(0, int(_np.floor((_F(target_width) - new_width) / _F(2))))
    resized = resize(images, [int(_np.floor(new_height)), int(_np.floor(new_width))], method,
                     antialias=antialias)
    rows, cols = resized.shape[1], resized.shape[2]
    padded = _pad(resized, [[0, 0], [top, target_height - rows - top],
                            [left, target_width - cols - left], [0, 0]])
    return padded if batched else _getitem(padded, 0)


# --- dtypes --------------------------------------------------------------------------------------
def convert_image_dtype(image, dtype, saturate=False, name=None):
    """``image`` in ``dtype``, rescaled as TensorFlow does: integers span [0, MAX] of their
    dtype, floats [0, 1); between integer dtypes by a power-of-two factor; ``saturate`` clips
    before a cast that could overflow."""
    image = _convert_to_tensor(image)
    target = _numpy_dtype(dtype)
    if target.kind not in "fiu":
        raise AttributeError("dtype must be either floating point or integer")
    source = image.dtype
    if source.kind not in "fiu":
        raise AttributeError("image dtype must be either floating point or integer")
    if target == source:
        return _identity(image)
    if source.kind in "iu" and target.kind in "iu":
        scale_in, scale_out = int(_np.iinfo(source).max), int(_np.iinfo(target).max)
        if scale_in > scale_out:
            scaled = _floordiv(image, (scale_in + 1) // (scale_out + 1))
            return _saturate_cast(scaled, target) if saturate else _cast(scaled, target)
        converted = _saturate_cast(image, target) if saturate else _cast(image, target)
        return converted * ((scale_out + 1) // (scale_in + 1))
    if source.kind == "f" and target.kind == "f":
        return _cast(image, target)
    if source.kind in "iu":
        return _cast(image, target) * (1.0 / int(_np.iinfo(source).max))
    scaled = image * (int(_np.iinfo(target).max) + 0.5)
    return _saturate_cast(scaled, target) if saturate else _cast(scaled, target)


def rgb_to_grayscale(images, name=None):
    """The luma of RGB ``images`` (last axis 3), one channel, in the images' dtype."""
    images = _convert_to_tensor(images)
    if not images.ndim or images.shape[-1] != 3:
        raise ValueError(f"rgb_to_grayscale: the last axis must hold 3 channels, got shape "
                         f"{tuple(images.shape)}")
    floats = convert_image_dtype(images, _float32)
    weights = _convert_to_tensor([0.2989, 0.5870, 0.1140], _float32)
    gray = _expand_dims(_tensordot(floats, weights, [[-1], [-1]]), -1)
    return convert_image_dtype(gray, images.dtype)


def per_image_standardization(image):
    """Each image (the last three axes) less its mean, over its standard deviation (at least
    ``1 / sqrt(pixels)``, so a uniform image stays finite): float32."""
    image = _cast(_at_least_3d(image, "per_image_standardization"), _float32)
    axes = [-1, -2, -3]
    pixels = int(_np.prod(image.shape[-3:]))
    floor_ = _rsqrt(_convert_to_tensor(float(pixels), _float32))
    spread = _maximum(_reduce_std(image, axis=axes, keepdims=True), floor_)
    return (image - _reduce_mean(image, axis=axes, keepdims=True)) / spread


# --- geometry ------------------------------------------------------------------------------------
def flip_left_right(image):
    """``image`` mirrored across its width (``[batch,] height, width, channels``)."""
    return _reverse(_at_least_3d(image, "flip_left_right"), [-2])


def flip_up_down(image):
    """``image`` mirrored across its height."""
    return _reverse(_at_least_3d(image, "flip_up_down"), [-3])


def random_flip_left_right(image, seed=None):
    """``image`` mirrored across its width with probability 1/2 (each image of a batch on
    its own draw), drawn by ``fw.random.uniform``: fresh on every ``fw.function`` call."""
    return _random_flip(image, -2, lambda shape: _random.uniform(shape, 0, 1.0, seed=seed),
                        "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """``image`` mirrored across its height with probability 1/2 (see
    ``random_flip_left_right``)."""
    return _random_flip(image, -3, lambda shape: _random.uniform(shape, 0, 1.0, seed=seed),
                        "random_flip_up_down")


def stateless_random_flip_left_right(image, seed):
    """``random_flip_left_right`` for a ``seed`` of two integers: TensorFlow's own draw."""
    return _random_flip(image, -2, _stateless(seed), "stateless_random_flip_left_right")


def stateless_random_flip_up_down(image, seed):
    """``random_flip_up_down`` for a ``seed`` of two integers: TensorFlow's own draw."""
    return _random_flip(image, -3, _stateless(seed), "stateless_random_flip_up_down")


def _stateless(seed):
    return lambda shape: _random.stateless_uniform(shape, seed, 0, 1.0)


def _random_flip(image, axis, draw, op):
    """TensorFlow's rule: one image flips where its draw is below 1/2; a batch mixes each
    image with its mirror by the rounded draw, one per image."""
    image = _at_least_3d(image, op)
    if image.ndim == 3:
        return _where(draw([]) < 0.5, _reverse(image, [axis]), image)
    flips = _cast(_round(_reshape(draw([image.shape[0]]), [-1] + [1] * (image.ndim - 1))),
                  image.dtype)
    return flips * _reverse(image, [axis]) + (_scalar_like(1, image.dtype) - flips) * image


def central_crop(image, central_fraction):
    """The central ``central_fraction`` of each image's height and width."""
    image = _convert_to_tensor(image)
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError("central_crop: central_fraction must be within (0, 1], got "
                         f"{central_fraction}")
    if image.ndim not in (3, 4):
        raise ValueError(f"central_crop: `image` should either be a Tensor with rank = 3 or "
                         f"rank = 4. Had rank = {image.ndim}.")
    if central_fraction == 1.0:
        return image
    height, width = image.shape[-3], image.shape[-2]
    top = int((float(height) - float(height) * central_fraction) / 2)
    left = int((float(width) - float(width) * central_fraction) / 2)
    window = (slice(top, height - top), slice(left, width - left), slice(None))
    return _getitem(image, window if image.ndim == 3 else (slice(None),) + window)


def _at_least_3d(image, op):
    image = _convert_to_tensor(image)
    if image.ndim < 3:
        raise ValueError(f"{op}: 'image' (shape {tuple(image.shape)}) must be at least "
                         f"three-dimensional")
    return image


__all__ = ["ResizeMethod", "central_crop", "convert_image_dtype", "flip_left_right",
           "flip_up_down", "per_image_standardization", "random_flip_left_right",
           "random_flip_up_down", "resize", "resize_with_pad", "rgb_to_grayscale",
           "stateless_random_flip_left_right", "stateless_random_flip_up_down"]

_suggest_close_names(_sys.modules[__name__], "fw.image")
