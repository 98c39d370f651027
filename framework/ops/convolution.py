"""Convolution and pooling, TensorFlow's ``tf.nn.conv2d``, ``max_pool2d`` and ``avg_pool2d``
(NHWC), and their one-dimensional forms (``conv1d``, ``max_pool1d``, ``avg_pool1d`` on NWC),
which TensorFlow too computes as the two-dimensional ones on an image one row high.

Each window of the (padded) input is gathered into a patch (``_windows``: one integer-array
index for a whole batch on any array, a strided view copied once on the host); its derivative
adds each cotangent back where its window read it (``_overlap_add``, one strided addition per
kernel cell), and the two are each other's VJP. A convolution is one primitive
(``_convolve``; with a Conv2D layer's bias and ReLU, ``_convolve_biased``): the patches as the
rows of a matrix times the flattened filters, the rows kept so that the filters' gradient is
one product, the input's gradient one product per kernel cell added back. A max pool whose
windows tile the image (``_tile_max``, a Keras MaxPooling2D's default) is the maximum of
strided views of the tiles; any other max pool is the maximum over each patch, an average pool
the mean over the cells inside the input. The primitives' tensor VJPs are the compositions of
the windows' ops, matmul and the reductions, so every order of derivative is theirs; their
array VJPs, what a training step runs, are the fast forms, tested equal.

TensorFlow's padding is kept: "VALID" (no padding), "SAME" (the output is
``ceil(size / stride)``, the padding split with the extra cell after), or explicit
``[[0, 0], [top, bottom], [left, right], [0, 0]]``; a max pool pads with -inf and an average
pool counts only the input's cells, as TensorFlow does.
"""
import math

import numpy as np

from ..engine import backend
from ..engine.primitive import define, primitive
from ..engine.tensor import convert_to_tensor, dims
from ..tuning.host import matmul as _product
from .array import pad
from .linalg import matmul
from .math import multiply
from .nn import _bias_vjp, _dense_masked, _relu_grad_array, _sum_batch_array
from .reduce import _extreme_vjp, reduce_max, reduce_mean, reduce_sum
from .shape import expand_dims, reshape, squeeze

__all__ = ["avg_pool", "avg_pool1d", "avg_pool2d", "conv1d", "conv2d", "conv2d_bias",
           "conv2d_transpose", "depthwise_conv2d", "max_pool", "max_pool1d", "max_pool2d",
           "separable_conv2d"]


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


def _padded(op, x, window, strides, dilations, padding, fill):
    """``x`` (NHWC) padded with ``fill`` as ``padding`` asks: (that tensor, the paddings, the
    output size of the windows over it)."""
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
    return x, pads, (out_h, out_w)


# --- the windows and their adjoint ---------------------------------------------------------------
# ``_windows`` gathers every window of an NHWC image (any leading axes) into (..., out_h, out_w,
# kh, kw, c); ``_overlap_add`` adds such windows back into an image. They are each other's
# transpose, so each one's VJP is the other: every order of derivative stays within the pair.
def _out_size(shape, geometry):
    """(out_h, out_w) of the windows of ``geometry`` over an image of ``shape`` (..., h, w, c)."""
    return tuple((n - (k - 1) * d - 1) // s + 1 for n, k, s, d in zip(shape[-3:-1], *geometry))


def _window_index(height, width, geometry):
    """The window's rows and columns as two broadcasting index arrays (out_h, out_w, kh, kw)."""
    (kh, kw), (sh, sw), (dh, dw) = geometry
    out_h, out_w = _out_size((height, width, None), geometry)
    rows = (np.arange(out_h) * sh)[:, None, None, None] + (np.arange(kh) * dh)[None, None, :, None]
    cols = (np.arange(out_w) * sw)[None, :, None, None] + (np.arange(kw) * dw)[None, None, None, :]
    return rows, cols


def _windows_array(x, geometry):
    rows, cols = _window_index(x.shape[-3], x.shape[-2], geometry)
    return x[..., rows, cols, :]


def _windows_host(x, geometry):
    """``_windows_array`` on the host: the windows as a strided view of ``x`` (no index
    arrays), copied once; about ten times faster than the integer-array gather."""
    (kh, kw), (sh, sw), (dh, dw) = geometry
    out_h, out_w = _out_size(x.shape, geometry)
    st = x.strides
    view = np.lib.stride_tricks.as_strided(
        x, x.shape[:-3] + (out_h, out_w, kh, kw, x.shape[-1]),
        st[:-3] + (st[-3] * sh, st[-2] * sw, st[-3] * dh, st[-2] * dw, st[-1]), writeable=False)
    return view.copy()


def _add_cells(image, cell, geometry, out_size):
    """Add ``cell(i, j)`` (..., out_h, out_w, c), what kernel cell (i, j) of every window
    read, back into ``image`` where it read it: one strided slice addition per kernel cell
    (no scattered adds)."""
    (kh, kw), (sh, sw), (dh, dw) = geometry
    out_h, out_w = out_size
    for i in range(kh):
        for j in range(kw):
            image[..., i * dh:i * dh + (out_h - 1) * sh + 1:sh,
                  j * dw:j * dw + (out_w - 1) * sw + 1:sw, :] += cell(i, j)
    return image


def _overlap_add_array(g, height, width, geometry):
    """The windows ``g`` (..., out_h, out_w, kh, kw, c) added into a (..., height, width, c)
    image."""
    image = backend.array_module(g).zeros(g.shape[:-5] + (height, width, g.shape[-1]),
                                          dtype=g.dtype)
    return _add_cells(image, lambda i, j: g[..., i, j, :], geometry, g.shape[-5:-3])


@primitive(lambda g, out, x, geometry: _overlap_add(g, height=x.shape[-3], width=x.shape[-2],
                                                    geometry=geometry),
           array_vjp=lambda g, out, needs, x, geometry: (
               _overlap_add_array(g, x.shape[-3], x.shape[-2], geometry),),
           host_forward=_windows_host)
def _windows(x, geometry):
    return _windows_array(x, geometry)


@primitive(lambda g, out, windows, height, width, geometry: _windows(g, geometry=geometry),
           array_vjp=lambda g, out, needs, windows, height, width, geometry: (
               _windows_array(g, geometry),),
           host_array_vjp=lambda g, out, needs, windows, height, width, geometry: (
               _windows_host(g, geometry),))
def _overlap_add(windows, height, width, geometry):
    return _overlap_add_array(windows, height, width, geometry)


# --- the convolution: one product of the windows with the filters --------------------------------
# ``_convolve`` is the convolution of an already padded NHWC image: its windows as the rows of
# a matrix (kept for the backward pass: the filters' gradient is one product of them with the
# cotangent), times the filters as a (kh * kw * in, out) matrix. The input's gradient is the
# cotangent times the filters' transpose, added back where each window read it. The tensor
# VJPs say the same with the windows' ops and serve every higher order.
def _convolve_with(windows, x, w, geometry):
    """The output and the windows' matrix, the windows cut by ``windows`` (a gather on any
    array, a strided copy on the host)."""
    rows = windows(x, geometry).reshape(-1, w.shape[0] * w.shape[1] * w.shape[2])
    out = _product(rows, w.reshape(-1, w.shape[3]))
    return out.reshape((x.shape[0],) + _out_size(x.shape, geometry) + (w.shape[3],)), rows


def _convolve_array_vjp(g, out, needs, x, w, geometry, saved):
    """Both gradients from the windows the forward kept: the filters' as one product; the
    input's as one product per kernel cell (stacked), each a contiguous block added to the
    cells that cell of the windows read (a Jacobian's leading axes of ``g`` go through)."""
    lead, (kh, kw, cin, cout) = g.shape[:g.ndim - 4], w.shape
    rows = g.reshape(lead + (-1, cout))
    g_x = g_w = None
    if needs[0]:
        xp = backend.array_module(g)
        blocks = xp.matmul(rows[..., None, :, :], w.transpose(0, 1, 3, 2).reshape(-1, cout, cin))
        blocks = blocks.reshape(lead + (kh, kw) + g.shape[-4:-1] + (cin,))
        g_x = _add_cells(xp.zeros(lead + x.shape, dtype=g.dtype),
                         lambda i, j: blocks[..., i, j, :, :, :, :], geometry, g.shape[-3:-1])
    if needs[1]:
        g_w = _product(saved.T, rows).reshape(lead + w.shape)
    return g_x, g_w


def _convolve_vjp_x(g, out, x, w, geometry, saved):
    windows = matmul(reshape(g, (-1, w.shape[3])), reshape(w, (-1, w.shape[3])),
                     transpose_b=True)
    return _overlap_add(reshape(windows, tuple(g.shape[:-1]) + tuple(w.shape[:3])),
                        height=x.shape[1], width=x.shape[2], geometry=geometry)


def _convolve_vjp_w(g, out, x, w, geometry, saved):
    lead = tuple(g.shape[:g.ndim - 4])
    rows = reshape(_windows(x, geometry=geometry), (-1, w.shape[0] * w.shape[1] * w.shape[2]))
    product = matmul(rows, reshape(g, lead + (-1, w.shape[3])), transpose_a=True)
    return reshape(product, lead + tuple(w.shape))


_convolve = define("convolve", lambda x, w, geometry: _convolve_with(_windows_array, x, w,
                                                                      geometry),
                   _convolve_vjp_x, _convolve_vjp_w, array_vjp=_convolve_array_vjp, saves=True,
                   same_dtype=True,
                   host_forward=lambda x, w, geometry: _convolve_with(_windows_host, x, w,
                                                                      geometry))


def _biased_forward(windows):
    """The convolution's forward (with ``windows``), then the bias and the ReLU in place."""
    def forward(x, w, b, geometry, relu):
        out, rows = _convolve_with(windows, x, w, geometry)
        out += b
        if relu:
            backend.array_module(out).maximum(out, 0, out=out)
        return out, rows
    return forward


def _biased_array_vjp(g, out, needs, x, w, b, geometry, relu, saved):
    """The three gradients from the cotangent masked once by the ReLU."""
    if relu:
        g = _relu_grad_array(g, out)
    g_x, g_w = _convolve_array_vjp(g, out, needs[:2], x, w, geometry, saved)
    batch = tuple(range(g.ndim - 4, g.ndim - 1))  # (a Jacobian's leading axes stay)
    return g_x, g_w, _sum_batch_array(g, batch) if needs[2] else None


# ``conv2d`` and a bias (and a ReLU) as one op: a Conv2D layer's forward, one record and one
# backward step, the bias and the ReLU applied in place on the product's fresh output.
_convolve_biased = define(
    "convolve_biased", _biased_forward(_windows_array),
    lambda g, out, x, w, b, geometry, relu, saved: _convolve_vjp_x(
        _dense_masked(g, out, relu), out, x, w, geometry, saved),
    lambda g, out, x, w, b, geometry, relu, saved: _convolve_vjp_w(
        _dense_masked(g, out, relu), out, x, w, geometry, saved),
    lambda g, out, x, w, b, geometry, relu, saved: _bias_vjp(
        _dense_masked(g, out, relu), out, x, b),
    array_vjp=_biased_array_vjp, saves=True, host_forward=_biased_forward(_windows_host))


def _conv2d_operands(op, input, filters, strides, padding, data_format,  # noqa: A002
                     dilations):
    """The padded input, the filters and the windows' geometry of a checked ``conv2d``."""
    if data_format != "NHWC":
        raise ValueError(f"{op}: only data_format='NHWC' is supported, got {data_format!r}")
    x, w = convert_to_tensor(input), convert_to_tensor(filters)
    if w.ndim != 4:
        raise ValueError(f"{op}: filters must be 4-D (height, width, in, out), got shape "
                         f"{w.shape}")
    if x.ndim == 4 and x.shape[3] != w.shape[2]:
        raise ValueError(f"{op}: input of shape {x.shape} has {x.shape[3]} channels but the "
                         f"filters of shape {w.shape} expect {w.shape[2]}")
    if x.dtype != w.dtype:
        raise TypeError(f"{op}: input and filters must have one dtype, got {x.dtype.name} and "
                        f"{w.dtype.name}; use fw.cast to convert")
    stride = _sizes(strides, 2, "strides", op)
    dilation = _sizes(1 if dilations is None else dilations, 2, "dilations", op)
    if stride != (1, 1) and dilation != (1, 1):
        raise ValueError(f"{op}: strides and dilations cannot both exceed 1 (TensorFlow's rule)")
    x, _, _ = _padded(op, x, w.shape[:2], stride, dilation, padding, 0)
    return x, w, (tuple(w.shape[:2]), stride, dilation)


def conv2d(input, filters, strides=1, padding="VALID", data_format="NHWC",  # noqa: A002
           dilations=None, name=None):
    """``tf.nn.conv2d``: ``filters`` of shape (kh, kw, in_channels, out_channels) slid over
    ``input`` (NHWC) with ``strides`` and ``dilations``; ``padding`` as TensorFlow's."""
    x, w, geometry = _conv2d_operands("conv2d", input, filters, strides, padding, data_format,
                                      dilations)
    return _convolve(x, w, geometry=geometry)


def conv2d_bias(input, filters, bias, strides=1, padding="VALID", dilations=None,  # noqa: A002
                relu=False):
    """``conv2d``, then ``bias`` (one per output channel) added, then the ReLU when ``relu``,
    as one op: a Conv2D layer's forward (as ``fw.nn.dense`` is a Dense layer's)."""
    x, w, geometry = _conv2d_operands("conv2d_bias", input, filters, strides, padding, "NHWC",
                                      dilations)
    b = convert_to_tensor(bias)
    if b.shape != (w.shape[3],) or b.dtype != w.dtype:
        raise ValueError(f"conv2d_bias: bias of shape {b.shape} and dtype {b.dtype.name} does "
                         f"not fit filters of shape {w.shape} and dtype {w.dtype.name}")
    return _convolve_biased(x, w, b, geometry=geometry, relu=bool(relu))


# --- the depthwise convolution: each channel convolved with its own filters ----------------------
# ``_depthwise`` convolves each channel of an already padded NHWC image with its
# ``depth_multiplier`` filters (kh, kw, c, m): one strided multiply-add per kernel cell, with no
# windows gathered. Its array VJP is the same loop backwards (each cell's cotangent times its
# filters added back where the cell read; each cell's reads times the cotangent summed into
# that cell's filters); the tensor VJPs say the same with the windows' ops, for every order.
def _cell(x, i, j, geometry, out_size):
    """What kernel cell (i, j) of every window reads: (..., out_h, out_w, c), a strided view."""
    (_, (sh, sw), (dh, dw)), (out_h, out_w) = geometry, out_size
    return x[..., i * dh:i * dh + (out_h - 1) * sh + 1:sh,
             j * dw:j * dw + (out_w - 1) * sw + 1:sw, :]


def _depthwise_forward(x, w, geometry):
    (kh, kw), size = geometry[0], _out_size(x.shape, geometry)
    out = backend.array_module(x).zeros(x.shape[:-3] + size + w.shape[2:], dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            out += _cell(x, i, j, geometry, size)[..., None] * w[i, j]
    return out.reshape(out.shape[:-2] + (-1,))


def _depthwise_array_vjp(g, out, needs, x, w, geometry):
    """Both gradients, a kernel cell at a time (a Jacobian's leading axes of ``g`` go
    through)."""
    (kh, kw), (cin, mult) = geometry[0], w.shape[2:]
    g = g.reshape(g.shape[:-1] + (cin, mult))
    size, lead = g.shape[-4:-2], g.shape[:g.ndim - 5]
    xp = backend.array_module(g)
    g_x = g_w = None
    if needs[0]:
        g_x = _add_cells(xp.zeros(lead + x.shape, dtype=g.dtype),
                         lambda i, j: xp.einsum("...cm,cm->...c", g, w[i, j]), geometry, size)
    if needs[1]:
        g_w = xp.zeros(lead + w.shape, dtype=g.dtype)
        for i in range(kh):
            for j in range(kw):
                g_w[..., i, j, :, :] = xp.einsum("nhwc,...nhwcm->...cm",
                                                 _cell(x, i, j, geometry, size), g)
    return g_x, g_w


def _depthwise_cotangent(g, w):
    """The cotangent ``g`` (..., out_h, out_w, c * m) as (..., out_h, out_w, 1, 1, c, m)."""
    g = reshape(g, tuple(g.shape[:-1]) + tuple(w.shape[2:]))
    return expand_dims(expand_dims(g, -3), -3)


def _depthwise_vjp_x(g, out, x, w, geometry):
    windows = reduce_sum(multiply(_depthwise_cotangent(g, w), w), axis=-1)
    return _overlap_add(windows, height=x.shape[1], width=x.shape[2], geometry=geometry)


def _depthwise_vjp_w(g, out, x, w, geometry):
    windows = expand_dims(_windows(x, geometry=geometry), -1)  # (n, oh, ow, kh, kw, c, 1)
    return reduce_sum(multiply(windows, _depthwise_cotangent(g, w)), axis=(-7, -6, -5))


_depthwise = define("depthwise", _depthwise_forward, _depthwise_vjp_x, _depthwise_vjp_w,
                    array_vjp=_depthwise_array_vjp, same_dtype=True)


def depthwise_conv2d(input, filter, strides, padding, data_format=None,  # noqa: A002
                     dilations=None, name=None):
    """``tf.nn.depthwise_conv2d``: each input channel ``k`` convolved with its own filters
    ``filter[:, :, k, :]`` (shape (kh, kw, in_channels, channel_multiplier)), output channel
    ``k * channel_multiplier + q``; ``strides`` [1, sh, sw, 1] (or a pair), ``padding`` and
    ``dilations`` as ``conv2d``'s."""
    x, w, geometry = _conv2d_operands("depthwise_conv2d", input, filter, strides, padding,
                                      data_format or "NHWC", dilations)
    return _depthwise(x, w, geometry=geometry)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     data_format=None, dilations=None, name=None):
    """``tf.nn.separable_conv2d``: ``depthwise_conv2d`` with ``depthwise_filter`` (kh, kw, in,
    m), then a 1x1 ``conv2d`` with ``pointwise_filter`` (1, 1, in * m, out) mixing the
    channels."""
    d, p = convert_to_tensor(depthwise_filter), convert_to_tensor(pointwise_filter)
    if p.ndim != 4 or p.shape[:2] != (1, 1) or (d.ndim == 4 and p.shape[2] != d.shape[2] *
                                                 d.shape[3]):
        raise ValueError(f"separable_conv2d: pointwise_filter must have shape (1, 1, in * "
                         f"multiplier, out) for a depthwise_filter of shape {d.shape}, got "
                         f"{p.shape}")
    depthwise = depthwise_conv2d(input, d, strides, padding, data_format, dilations)
    return conv2d(depthwise, p, 1, "VALID")


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
    shape = list(dims(output_shape.numpy() if hasattr(output_shape, "numpy")
                      else output_shape))
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


# --- a max pool whose windows tile the image ------------------------------------------------------
# When the stride is the window and no padding is needed (a Keras MaxPooling2D's default), the
# windows are the tiles of the image's first out_h * kh rows and out_w * kw columns, seen as
# (n, out_h, kh, out_w, kw, c): a view, not a copy. The pool is the maximum of kh * kw strided
# views of it, and its gradient goes to each tile's maximum (ties share it equally, as
# ``reduce_max``'s), with neither windows gathered nor added back.
def _tiles(x, window):
    """The tiles of the NHWC image ``x`` (a view; the rows and columns past the last whole
    tile are left out): (n, out_h, kh, out_w, kw, c)."""
    (kh, kw), (n, h, w, c) = window, x.shape
    return x[:, :h - h % kh, :w - w % kw].reshape(n, h // kh, kh, w // kw, kw, c)


def _tile_max_array(x, window):
    tiles = _tiles(x, window)
    cells = [tiles[:, :, i, :, j] for i in range(window[0]) for j in range(window[1])]
    if len(cells) == 1:
        return cells[0].copy()
    xp = backend.array_module(x)
    out = xp.maximum(cells[0], cells[1])
    for cell in cells[2:]:
        xp.maximum(out, cell, out=out)
    return out


def _tile_max_array_vjp(g, out, needs, x, window):
    """``g`` to each tile's maxima, divided by their count (a Jacobian's leading axes of ``g``
    go through)."""
    hit = _tiles(x, window) == out[:, :, None, :, None]
    count = hit[:, :, 0, :, 0].astype(g.dtype)
    for i in range(window[0]):
        for j in range(window[1]):
            if i or j:
                count += hit[:, :, i, :, j]
    share = (g / count)[..., None, :, None, :]
    lead, (kh, kw), (n, h, w, c) = g.shape[:g.ndim - 4], window, x.shape
    grad = (hit * share).reshape(lead + (n, h - h % kh, w - w % kw, c))
    if h % kh or w % kw:  # the rows and columns past the last whole tile get none
        whole = backend.array_module(g).zeros(lead + x.shape, dtype=g.dtype)
        whole[..., :h - h % kh, :w - w % kw, :] = grad
        grad = whole
    return (grad,)


def _tile_max_vjp(g, out, x, window):
    lead, (kh, kw), (n, h, w, c) = tuple(g.shape[:g.ndim - 4]), window, x.shape
    tiles = reshape(x[:, :h - h % kh, :w - w % kw], (n, h // kh, kh, w // kw, kw, c))
    spread = reshape(_extreme_vjp(g, out, tiles, axis=(2, 4), keepdims=False),
                     lead + (n, h - h % kh, w - w % kw, c))
    if h % kh or w % kw:
        spread = pad(spread, [[0, 0]] * (len(lead) + 1) + [[0, h % kh], [0, w % kw], [0, 0]])
    return spread


_tile_max = define("tile_max", _tile_max_array, _tile_max_vjp, array_vjp=_tile_max_array_vjp)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.max_pool2d``: the maximum of each window (padding cells never win)."""
    window, stride = _pool_args("max_pool2d", ksize, strides, data_format)
    x, pads, _ = _padded("max_pool2d", input, window, stride, (1, 1), padding,
                                      -np.inf)
    if window == stride and pads == ((0, 0), (0, 0)):  # the windows tile the image
        return _tile_max(x, window=window)
    patches = _windows(x, geometry=(window, stride, (1, 1)))
    return reduce_max(patches, axis=(3, 4))


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.avg_pool2d``: the mean of each window over the input's cells it covers (with
    "SAME" padding, an edge window averages fewer cells, as TensorFlow's)."""
    x = convert_to_tensor(input)
    window, stride = _pool_args("avg_pool2d", ksize, strides, data_format)
    padded, pads, (out_h, out_w) = _padded("avg_pool2d", x, window, stride, (1, 1), padding, 0)
    if window == stride and pads == ((0, 0), (0, 0)):  # the windows tile the image: a reshape
        (kh, kw), (n, h, w, c) = window, x.shape
        if (h, w) != (out_h * kh, out_w * kw):
            x = x[:, :out_h * kh, :out_w * kw]
        return reduce_mean(reshape(x, (n, out_h, kh, out_w, kw, c)), axis=(2, 4))
    patches = _windows(padded, geometry=(window, stride, (1, 1)))
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
