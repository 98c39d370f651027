"""Convolution and pooling, TensorFlow's ``tf.nn.conv2d``, ``max_pool2d`` and ``avg_pool2d``
(NHWC), composed of the framework's own differentiable ops, and their one-dimensional forms
(``conv1d``, ``max_pool1d``, ``avg_pool1d`` on NWC), which TensorFlow too computes as the
two-dimensional ones on an image one row high.

Each window of the (padded) input is gathered into a patch (``_windows``: one integer-array
index for a whole batch); a convolution is then one matrix product of the patches with the
flattened filters, a max pool the maximum over each patch, an average pool its mean over the
cells inside the input. Being compositions (pad, windows, reshape, matmul, reductions), their
derivatives of every order are those ops' own; the windows' derivative adds each cotangent back
where its window read it (``_overlap_add``, one strided addition per kernel cell), and the two
are each other's VJP. TensorFlow's padding is kept: "VALID" (no padding), "SAME" (the output is
``ceil(size / stride)``, the padding split with the extra cell after), or explicit
``[[0, 0], [top, bottom], [left, right], [0, 0]]``; a max pool pads with -inf and an average
pool counts only the input's cells, as TensorFlow does.
"""
import math

import numpy as np

from ..engine import backend
from ..engine.primitive import primitive
from ..engine.tensor import convert_to_tensor
from .array import pad
from .linalg import matmul
from .reduce import reduce_max, reduce_sum
from .shape import expand_dims, reshape, squeeze

__all__ = ["avg_pool", "avg_pool1d", "avg_pool2d", "conv1d", "conv2d", "conv2d_transpose",
           "max_pool", "max_pool1d", "max_pool2d"]


def _sizes(value, rank, what, op):
    """An int, ``rank`` ints, or TensorFlow's form with a 1 for the batch and the channels
    around them ([1, h, w, 1], [1, w, 1]), as a ``rank``-tuple of positive ints."""
    values = [int(v) for v in np.atleast_1d(np.asarray(value))]
    if len(values) == rank + 2 and values[0] == values[-1] == 1:
        values = values[1:-1]
    elif len(values) == 1:
        values *= rank
    if len(values) != rank or min(values) < 1:
        form = "a pair or [1, h, w, 1]" if rank == 2 else "[w] or [1, w, 1]"
        raise ValueError(f"{op}: {what} must be a positive int, {form}, got {value!r}")
    return tuple(values)


def _paddings(padding, size, window, stride, op):
    """((top, bottom), (left, right)) for TensorFlow's ``padding`` over ``size`` (h, w)."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return (0, 0), (0, 0)
        if mode != "SAME":
            raise ValueError(f"{op}: padding must be 'SAME', 'VALID' or explicit pairs, got "
                             f"{padding!r}")
        pairs = []
        for n, k, s in zip(size, window, stride):
            total = max((math.ceil(n / s) - 1) * s + k - n, 0)
            pairs.append((total // 2, total - total // 2))
        return tuple(pairs)
    pairs = np.asarray(padding, dtype=np.int64).reshape(-1, 2)
    if pairs.shape != (4, 2) or pairs[0].any() or pairs[3].any() or (pairs < 0).any():
        raise ValueError(f"{op}: explicit padding needs [[0, 0], [top, bottom], [left, right], "
                         f"[0, 0]] with no negative entry, got {padding!r}")
    return tuple(map(tuple, pairs[1:3].tolist()))


def _patches(op, x, window, strides, dilations, padding, fill):
    """``x`` (NHWC) padded with ``fill`` and cut into windows: (patches of shape
    (n, out_h, out_w, kh, kw, c), the paddings, the output size)."""
    x = convert_to_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"{op}: input must be 4-D (batch, height, width, channels), got shape "
                         f"{x.shape}")
    extent = tuple((k - 1) * d + 1 for k, d in zip(window, dilations))
    (top, bottom), (left, right) = pads = _paddings(padding, x.shape[1:3], extent, strides, op)
    height, width = x.shape[1] + top + bottom, x.shape[2] + left + right
    out_h, out_w = ((n - e) // s + 1 for n, e, s in zip((height, width), extent, strides))
    if out_h < 1 or out_w < 1:
        raise ValueError(f"{op}: a window of {extent[0]}x{extent[1]} does not fit an input of "
                         f"{x.shape[1]}x{x.shape[2]} padded by {pads}")
    if top or bottom or left or right:
        x = pad(x, [[0, 0], [top, bottom], [left, right], [0, 0]], constant_values=fill)
    geometry = (tuple(window), tuple(strides), tuple(dilations))
    return _windows(x, geometry=geometry), pads, (out_h, out_w)


# --- the windows and their adjoint ---------------------------------------------------------------
# ``_windows`` gathers every window of an NHWC image (any leading axes) into (..., out_h, out_w,
# kh, kw, c); ``_overlap_add`` adds such windows back into an image. They are each other's
# transpose, so each one's VJP is the other: every order of derivative stays within the pair.
def _window_index(height, width, geometry):
    """The window's rows and columns as two broadcasting index arrays (out_h, out_w, kh, kw)."""
    (kh, kw), (sh, sw), (dh, dw) = geometry
    out_h, out_w = (height - (kh - 1) * dh - 1) // sh + 1, (width - (kw - 1) * dw - 1) // sw + 1
    rows = (np.arange(out_h) * sh)[:, None, None, None] + (np.arange(kh) * dh)[None, None, :, None]
    cols = (np.arange(out_w) * sw)[None, :, None, None] + (np.arange(kw) * dw)[None, None, None, :]
    return rows, cols


def _windows_array(x, geometry):
    rows, cols = _window_index(x.shape[-3], x.shape[-2], geometry)
    return x[..., rows, cols, :]


def _overlap_add_array(g, height, width, geometry):
    """The windows ``g`` (..., out_h, out_w, kh, kw, c) added into a (..., height, width, c)
    image: one strided slice addition per kernel cell (no scattered adds)."""
    (kh, kw), (sh, sw), (dh, dw) = geometry
    out_h, out_w = g.shape[-5], g.shape[-4]
    xp = backend.array_module(g)
    image = xp.zeros(g.shape[:-5] + (height, width, g.shape[-1]), dtype=g.dtype)
    for i in range(kh):
        for j in range(kw):
            image[..., i * dh:i * dh + (out_h - 1) * sh + 1:sh,
                  j * dw:j * dw + (out_w - 1) * sw + 1:sw, :] += g[..., i, j, :]
    return image


@primitive(lambda g, out, x, geometry: _overlap_add(g, height=x.shape[-3], width=x.shape[-2],
                                                    geometry=geometry),
           array_vjp=lambda g, out, needs, x, geometry: (
               _overlap_add_array(g, x.shape[-3], x.shape[-2], geometry),))
def _windows(x, geometry):
    return _windows_array(x, geometry)


@primitive(lambda g, out, windows, height, width, geometry: _windows(g, geometry=geometry),
           array_vjp=lambda g, out, needs, windows, height, width, geometry: (
               _windows_array(g, geometry),))
def _overlap_add(windows, height, width, geometry):
    return _overlap_add_array(windows, height, width, geometry)


def conv2d(input, filters, strides=1, padding="VALID", data_format="NHWC",  # noqa: A002
           dilations=None, name=None):
    """``tf.nn.conv2d``: ``filters`` of shape (kh, kw, in_channels, out_channels) slid over
    ``input`` (NHWC) with ``strides`` and ``dilations``; ``padding`` as TensorFlow's."""
    if data_format != "NHWC":
        raise ValueError(f"conv2d: only data_format='NHWC' is supported, got {data_format!r}")
    x, w = convert_to_tensor(input), convert_to_tensor(filters)
    if w.ndim != 4:
        raise ValueError(f"conv2d: filters must be 4-D (height, width, in, out), got shape "
                         f"{w.shape}")
    if x.ndim == 4 and x.shape[3] != w.shape[2]:
        raise ValueError(f"conv2d: input of shape {x.shape} has {x.shape[3]} channels but the "
                         f"filters of shape {w.shape} expect {w.shape[2]}")
    stride = _sizes(strides, 2, "strides", "conv2d")
    dilation = _sizes(1 if dilations is None else dilations, 2, "dilations", "conv2d")
    if stride != (1, 1) and dilation != (1, 1):
        raise ValueError("conv2d: strides and dilations cannot both exceed 1 (TensorFlow's rule)")
    patches, _, (out_h, out_w) = _patches("conv2d", x, w.shape[:2], stride, dilation, padding, 0)
    rows = reshape(patches, (-1, w.shape[0] * w.shape[1] * w.shape[2]))
    out = matmul(rows, reshape(w, (-1, w.shape[3])))
    return reshape(out, (x.shape[0], out_h, out_w, w.shape[3]))


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NHWC", dilations=None, name=None):
    """``tf.nn.conv2d_transpose``: the transpose of ``conv2d`` for an input of ``output_shape``
    (its gradient with respect to that input): each input cell's channels times the filters
    (of shape (kh, kw, out_channels, in_channels)) added over its window of the output."""
    if data_format != "NHWC":
        raise ValueError(f"conv2d_transpose: only data_format='NHWC' is supported, got "
                         f"{data_format!r}")
    x, w = convert_to_tensor(input), convert_to_tensor(filters)
    if x.ndim != 4 or w.ndim != 4 or x.shape[3] != w.shape[3]:
        raise ValueError(f"conv2d_transpose: input of shape {x.shape} and filters of shape "
                         f"{w.shape} need (batch, h, w, c) and (kh, kw, out_channels, c)")
    shape = [int(d) for d in (output_shape.numpy() if hasattr(output_shape, "numpy")
                              else output_shape)]
    if len(shape) != 4 or shape[0] != x.shape[0] or shape[3] != w.shape[2]:
        raise ValueError(f"conv2d_transpose: output_shape {shape} needs the input's batch "
                         f"{x.shape[0]} and the filters' {w.shape[2]} output channels")
    stride = _sizes(strides, 2, "strides", "conv2d_transpose")
    dilation = _sizes(1 if dilations is None else dilations, 2, "dilations", "conv2d_transpose")
    window = w.shape[:2]
    extent = tuple((k - 1) * d + 1 for k, d in zip(window, dilation))
    (top, bottom), (left, right) = _paddings(padding, shape[1:3], extent, stride,
                                             "conv2d_transpose")
    height, width = shape[1] + top + bottom, shape[2] + left + right
    if ((height - extent[0]) // stride[0] + 1, (width - extent[1]) // stride[1] + 1) != tuple(
            x.shape[1:3]):
        raise ValueError(f"conv2d_transpose: an input of {x.shape[1]}x{x.shape[2]} does not "
                         f"come from a convolution of an output_shape {shape} input with these "
                         f"filters, strides and padding")
    kernel = reshape(w, (-1, w.shape[3]))  # (kh * kw * out_channels, in_channels)
    windows = reshape(matmul(reshape(x, (-1, x.shape[3])), kernel, transpose_b=True),
                      tuple(x.shape[:3]) + tuple(window) + (w.shape[2],))
    image = _overlap_add(windows, height=height, width=width,
                         geometry=(tuple(window), stride, dilation))
    return image[:, top:top + shape[1], left:left + shape[2], :]


def _pool_args(op, ksize, strides, data_format):
    if data_format != "NHWC":
        raise ValueError(f"{op}: only data_format='NHWC' is supported, got {data_format!r}")
    return _sizes(ksize, 2, "ksize", op), _sizes(strides, 2, "strides", op)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.max_pool2d``: the maximum of each window (padding cells never win)."""
    window, stride = _pool_args("max_pool2d", ksize, strides, data_format)
    patches, _, _ = _patches("max_pool2d", input, window, stride, (1, 1), padding, -np.inf)
    return reduce_max(patches, axis=(3, 4))


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.avg_pool2d``: the mean of each window over the input's cells it covers (with
    "SAME" padding, an edge window averages fewer cells, as TensorFlow's)."""
    x = convert_to_tensor(input)
    window, stride = _pool_args("avg_pool2d", ksize, strides, data_format)
    patches, pads, (out_h, out_w) = _patches("avg_pool2d", x, window, stride, (1, 1), padding,
                                             0)
    total = reduce_sum(patches, axis=(3, 4))
    if pads == ((0, 0), (0, 0)):
        return total / float(window[0] * window[1])
    inside = np.pad(np.ones(x.shape[1:3]), pads)  # (a constant: how many real cells a window sees)
    counts = np.lib.stride_tricks.sliding_window_view(inside, window)[::stride[0], ::stride[1]]
    counts = counts.sum(axis=(2, 3))[:out_h, :out_w, None].astype(x.dtype)
    return total / counts


def _one_row(op, x, data_format):
    """An NWC input as an NHWC image one row high."""
    if data_format != "NWC":
        raise ValueError(f"{op}: only data_format='NWC' is supported, got {data_format!r}")
    x = convert_to_tensor(x)
    if x.ndim != 3:
        raise ValueError(f"{op}: input must be 3-D (batch, width, channels), got shape "
                         f"{x.shape}")
    return expand_dims(x, 1)


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None,  # noqa: A002
           name=None):
    """``tf.nn.conv1d``: ``filters`` of shape (kw, in_channels, out_channels) slid over
    ``input`` (batch, width, channels) with ``stride`` and ``dilations``; ``padding`` "SAME"
    or "VALID" (as TensorFlow's, which takes no explicit padding here)."""
    image = _one_row("conv1d", input, data_format)
    w = convert_to_tensor(filters)
    if w.ndim != 3:
        raise ValueError(f"conv1d: filters must be 3-D (width, in, out), got shape {w.shape}")
    if not isinstance(padding, str):
        raise ValueError(f"conv1d: padding must be 'SAME' or 'VALID', got {padding!r}")
    out = conv2d(image, expand_dims(w, 0), (1,) + _sizes(stride, 1, "stride", "conv1d"),
                 padding, dilations=(1,) + _sizes(1 if dilations is None else dilations, 1,
                                                   "dilations", "conv1d"))
    return squeeze(out, 1)


def _pool_one_row(pool, op, x, ksize, strides, padding, data_format):
    """The 2-D ``pool`` over an NWC input's width, as TensorFlow's 1-D pools compute it."""
    image = _one_row(op, x, data_format)
    return squeeze(pool(image, (1,) + _sizes(ksize, 1, "ksize", op),
                        (1,) + _sizes(strides, 1, "strides", op), padding), 1)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """``tf.nn.max_pool1d``: the maximum of each window of the width axis."""
    return _pool_one_row(max_pool2d, "max_pool1d", input, ksize, strides, padding,
                         data_format)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """``tf.nn.avg_pool1d``: the mean of each window of the width axis (with "SAME" padding,
    over the input's cells it covers)."""
    return _pool_one_row(avg_pool2d, "avg_pool1d", input, ksize, strides, padding,
                         data_format)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """``tf.nn.max_pool``: the 1-D pool on a 3-D input, else the 2-D pool."""
    if convert_to_tensor(input).ndim == 3:
        return max_pool1d(input, ksize, strides, padding, data_format or "NWC")
    return max_pool2d(input, ksize, strides, padding, data_format or "NHWC")


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """``tf.nn.avg_pool``: the 1-D pool on a 3-D input, else the 2-D pool."""
    if convert_to_tensor(input).ndim == 3:
        return avg_pool1d(input, ksize, strides, padding, data_format or "NWC")
    return avg_pool2d(input, ksize, strides, padding, data_format or "NHWC")
