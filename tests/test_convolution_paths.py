"""The fast paths of convolution and max pooling give the numbers of the forms they stand in for.

``conv2d`` is one primitive (``_convolve``) whose forward keeps the windows' matrix for the
filters' gradient; its host forms cut the windows as a strided view instead of a gather. A max
pool whose windows tile the image (stride == window, no padding) is ``_tile_max`` on a view of
the tiles. Each is checked here against the general composition (the windows gathered, a
product, a ``reduce_max``), at first order on arrays and through the tensor VJPs at second
order, with a Jacobian's stacked rows, under ``fw.function`` on a second call with new inputs,
and on each backend.
"""
import itertools

import numpy as np
import pytest

import framework as fw
import layers
from framework.ops import convolution as conv_ops
from framework.ops.linalg import matmul
from framework.ops.reduce import reduce_max
from framework.ops.shape import reshape
from optimizers import Adam

rng = np.random.default_rng(11)
GEOMETRIES = [((3, 3), (1, 1), (1, 1)), ((2, 3), (2, 1), (1, 1)), ((3, 2), (1, 1), (2, 1))]


def _composed_conv(x, w, geometry):
    """The convolution as the windows' gather times the filters (the general composition)."""
    windows = conv_ops._windows(x, geometry=geometry)
    rows = reshape(windows, (-1, w.shape[0] * w.shape[1] * w.shape[2]))
    return reshape(matmul(rows, reshape(w, (-1, w.shape[3]))),
                   tuple(windows.shape[:3]) + (w.shape[3],))


def _composed_max_pool(x, window):
    (kh, kw), (n, h, w, c) = window, x.shape
    windows = conv_ops._windows(x[:, :h - h % kh, :w - w % kw], geometry=(window, window, (1, 1)))
    return reduce_max(windows, axis=(3, 4))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_host_windows_and_convolution_equal_the_definitions(geometry, dtype):
    x = rng.standard_normal((2, 7, 6, 3)).astype(dtype)
    w = rng.standard_normal(geometry[0] + (3, 4)).astype(dtype)
    windows = conv_ops._windows
    np.testing.assert_array_equal(windows.host_forward(x, geometry=geometry),
                                  windows.forward(x, geometry=geometry))
    adjoint = conv_ops._overlap_add.primitive  # (its VJP windows an image's cotangent)
    g = rng.standard_normal((3,) + x.shape).astype(dtype)  # (a Jacobian's rows, too)
    np.testing.assert_array_equal(adjoint.host_array_vjp(g, None, (True,), None, 0, 0, geometry)[0],
                                  adjoint.array_vjp(g, None, (True,), None, 0, 0, geometry)[0])
    convolve = conv_ops._convolve
    (out, saved), (host_out, host_saved) = (convolve.forward(x, w, geometry=geometry),
                                            convolve.host_forward(x, w, geometry=geometry))
    np.testing.assert_array_equal(host_saved, saved)
    np.testing.assert_allclose(host_out, out, rtol=1e-6)
    assert host_out.dtype == out.dtype == dtype


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_conv2d_gradients_on_arrays_equal_the_compositions_at_orders_one_and_two(geometry):
    x = fw.constant(rng.standard_normal((2, 7, 6, 3)))
    w = fw.constant(rng.standard_normal(geometry[0] + (3, 4)))
    results = []
    for conv in (lambda x, w: conv_ops._convolve(x, w, geometry=geometry),
                 lambda x, w: _composed_conv(x, w, geometry)):
        with fw.GradientTape() as outer:
            outer.watch([x, w])
            with fw.GradientTape() as inner:
                inner.watch([x, w])
                loss = fw.reduce_sum(fw.tanh(conv(x, w)) ** 2)
            first = inner.gradient(loss, [x, w])  # (recorded: the tensor VJPs)
            mixed = fw.reduce_sum(first[0] * first[0]) + fw.reduce_sum(first[1])
        second = outer.gradient(mixed, [x, w])
        with fw.GradientTape() as tape:  # (unrecorded: the array VJPs)
            tape.watch([x, w])
            loss = fw.reduce_sum(fw.tanh(conv(x, w)) ** 2)
        results.append([g.numpy() for g in first + second + tape.gradient(loss, [x, w])])
    for got, expected in zip(*results, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def _tile_input(shape, ties):
    """Distinct values, or small integers, so that windows hold tied maxima."""
    if ties:
        return fw.constant(rng.integers(0, 3, shape).astype(np.float64))
    return fw.constant(rng.permutation(np.prod(shape)).reshape(shape) / 7.0)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("shape, window", [((2, 6, 4, 3), (2, 2)), ((2, 7, 5, 2), (2, 2)),
                                           ((1, 6, 7, 2), (3, 2)), ((2, 4, 4, 1), (1, 1))])
def test_a_tiled_max_pool_equals_the_windows_reduce_max(shape, window, ties):
    x = _tile_input(shape, ties)
    g = fw.constant(rng.standard_normal((shape[0], shape[1] // window[0], shape[2] // window[1],
                                         shape[3])))
    results = []
    for pool in (lambda x: conv_ops._tile_max(x, window=window),
                 lambda x: _composed_max_pool(x, window)):
        with fw.GradientTape(persistent=True) as tape:
            tape.watch(x)
            out = pool(x)
            total = fw.reduce_sum(out * g)
        results.append([out.numpy(), tape.gradient(total, x).numpy(),
                        tape.jacobian(out, x).numpy(),
                        tape.jacobian(out, x, experimental_use_pfor=False).numpy()])
    for got, expected in zip(*results, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("padding, size", [("VALID", (7, 5)), ("SAME", (6, 4)), ("VALID", (6, 6))])
def test_tiled_max_pool_finite_differences_orders_one_and_two(padding, size):
    x = fw.constant(rng.permutation(2 * size[0] * size[1] * 2).reshape((2,) + size + (2,))
                    / 9.0)
    fw.test.check_gradients(lambda x: fw.nn.max_pool2d(fw.tanh(x), 2, 2, padding) ** 2, x,
                            order=2)


def test_max_pool2d_takes_the_tiled_path_exactly_where_the_windows_tile():
    taken = []
    for (ksize, strides, padding, size), expected in [
            ((2, 2, "VALID", 7), True), ((2, 2, "SAME", 6), True), ((2, 2, "SAME", 7), False),
            ((3, 2, "VALID", 7), False), (((2, 3), (2, 3), "VALID", 7), True)]:
        x = fw.constant(rng.standard_normal((1, size, size, 1)))
        with fw.GradientTape() as tape:
            tape.watch(x)
            fw.nn.max_pool2d(x, ksize, strides, padding)
        taken.append(any(r.op is conv_ops._tile_max.primitive for r in tape._records))
        assert taken[-1] == expected, (ksize, strides, padding, size)


def test_a_cnn_step_under_fw_function_gives_eagers_numbers_on_a_second_call():

    def run(compiled):
        fw.random.set_seed(3)
        model = layers.Sequential([layers.Conv2D(4, 3, activation="relu"), layers.MaxPooling2D(),
                                   layers.Conv2D(5, 2, activation="relu"), layers.MaxPooling2D(),
                                   layers.Flatten(), layers.Dense(3)])
        optimizer = Adam(1e-2)

        def step(x, y):
            with fw.GradientTape() as tape:
                loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(
                    y, model(x, training=True)))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        step = fw.function(step) if compiled else step
        data = np.random.default_rng(4)
        losses = [float(step(fw.constant(data.standard_normal((6, 11, 11, 2)).astype(np.float32)),
                             fw.constant(data.integers(0, 3, 6).astype(np.int32))))
                  for _ in range(3)]
        return losses, [v.numpy() for v in model.trainable_variables]

    (eager_losses, eager_weights), (losses, weights) = run(False), run(True)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-6)
    for got, expected in zip(weights, eager_weights, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_conv2d_refuses_mixed_dtypes_naming_both():
    x, w = np.zeros((1, 4, 4, 1), np.float32), np.zeros((2, 2, 1, 1))
    with pytest.raises(TypeError, match="conv2d: .*float32 and float64"):
        fw.nn.conv2d(x, w)


def test_every_geometry_pairs_with_each_padding():
    """The conv2d reference cases' geometries, through the one primitive: strides, dilations
    and every padding give the composition's outputs."""
    x = fw.constant(rng.standard_normal((2, 8, 7, 3)))
    w = fw.constant(rng.standard_normal((3, 2, 3, 2)))
    for padding, (strides, dilations) in itertools.product(
            ["VALID", "SAME", [[0, 0], [1, 2], [0, 1], [0, 0]]], [(1, 1), (2, 1), (1, 2)]):
        padded, _, _ = conv_ops._padded("conv2d", x, (3, 2), (strides,) * 2, (dilations,) * 2,
                                        padding, 0)
        geometry = ((3, 2), (strides,) * 2, (dilations,) * 2)
        np.testing.assert_allclose(fw.nn.conv2d(x, w, strides, padding,
                                                dilations=dilations).numpy(),
                                   _composed_conv(padded, w, geometry).numpy(), rtol=1e-12)


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("geometry", GEOMETRIES[:2])
def test_conv2d_bias_is_conv2d_then_the_bias_and_relu(geometry, relu):
    """The fused op against its composition: the forward (host form and definition), the
    gradients on arrays and through the tensor VJPs, and the second order."""
    x = fw.constant(rng.standard_normal((2, 7, 6, 3)))
    w = fw.constant(rng.standard_normal(geometry[0] + (3, 4)))
    b = fw.constant(rng.standard_normal(4))
    biased = conv_ops._convolve_biased
    params = {"geometry": geometry, "relu": relu}
    host_out, host_rows = biased.host_forward(x.numpy(), w.numpy(), b.numpy(), **params)
    out, rows = biased.forward(x.numpy(), w.numpy(), b.numpy(), **params)
    np.testing.assert_allclose(host_out, out, rtol=1e-12)
    np.testing.assert_array_equal(host_rows, rows)

    def composed(x, w, b):
        y = fw.nn.bias_add(conv_ops._convolve(x, w, geometry=geometry), b)
        return fw.nn.relu(y) if relu else y
    results = []
    for conv in (lambda x, w, b: biased(x, w, b, **params), composed):
        with fw.GradientTape() as outer:
            outer.watch([x, w, b])
            with fw.GradientTape() as inner:
                inner.watch([x, w, b])
                loss = fw.reduce_sum(fw.tanh(conv(x, w, b)) ** 2)
            first = inner.gradient(loss, [x, w, b])
            mixed = sum(fw.reduce_sum(g * g) for g in first)
        second = outer.gradient(mixed, [x, w, b])
        with fw.GradientTape() as tape:
            tape.watch([x, w, b])
            loss = fw.reduce_sum(fw.tanh(conv(x, w, b)) ** 2)
        results.append([g.numpy() for g in first + second + tape.gradient(loss, [x, w, b])])
    for got, expected in zip(*results, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_conv2d_bias_finite_differences_orders_one_and_two():
    x, w, b = (rng.standard_normal(s) for s in ((2, 5, 4, 2), (2, 3, 2, 3), (3,)))
    fw.test.check_gradients(lambda x, w, b: conv_ops.conv2d_bias(x, w, b, 1, "SAME"), x, w, b,
                            order=2)


def test_conv2d_bias_refuses_a_bias_that_does_not_fit():
    x, w = np.zeros((1, 4, 4, 1), np.float32), np.zeros((2, 2, 1, 3), np.float32)
    with pytest.raises(ValueError, match=r"conv2d_bias: bias of shape \(2,\)"):
        conv_ops.conv2d_bias(x, w, np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="dtype float64"):
        conv_ops.conv2d_bias(x, w, np.zeros(3))


def test_a_conv2d_layer_is_one_op_with_its_bias_and_relu():
    layer = layers.Conv2D(3, 2, activation="relu")
    x = fw.constant(rng.standard_normal((2, 5, 5, 2)).astype(np.float32))
    layer(x)
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
    assert [r.op for r in tape._records] == [conv_ops._convolve_biased.primitive]
    expected = np.maximum(fw.nn.conv2d(x, layer.kernel).numpy() + layer.bias.numpy(), 0)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("op, arity", [(conv_ops._convolve_biased, 3), (conv_ops._convolve, 2)])
def test_the_array_vjps_take_a_jacobians_stacked_rows(op, arity):
    """A cotangent with a leading axis of rows gives each row's gradients, stacked."""
    geometry = GEOMETRIES[1]
    arrays = [rng.standard_normal(s) for s in ((2, 7, 6, 3), geometry[0] + (3, 4), (4,))][:arity]
    params = {"geometry": geometry, **({"relu": True} if arity == 3 else {})}
    out, saved = op.forward(*arrays, **params)
    rows = rng.standard_normal((3,) + out.shape)
    needs = (True,) * arity
    stacked = op.primitive.array_vjp(rows, out, needs, *arrays, **params, saved=saved)
    for k, row in enumerate(rows):
        single = op.primitive.array_vjp(row, out, needs, *arrays, **params, saved=saved)
        for got, expected in zip(stacked, single, strict=True):
            np.testing.assert_allclose(got[k], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, window", [((2, 6, 4, 3), (2, 2)), ((2, 7, 5, 2), (2, 2)),
                                           ((1, 6, 7, 2), (3, 2))])
def test_a_tiled_avg_pool_is_a_reshape_and_equals_the_windows_mean(shape, window):
    x = fw.constant(rng.standard_normal(shape))
    (kh, kw), (n, h, w, c) = window, shape

    def windows_mean(x):
        cropped = x[:, :h - h % kh, :w - w % kw]
        patches = conv_ops._windows(cropped, geometry=(window, window, (1, 1)))
        return fw.reduce_sum(patches, axis=(3, 4)) / float(kh * kw)
    results = []
    for pool in (lambda x: fw.nn.avg_pool2d(x, window, window, "VALID"), windows_mean):
        with fw.GradientTape(persistent=True) as tape:
            tape.watch(x)
            out = pool(x)
            total = fw.reduce_sum(out * out)
        results.append([out.numpy(), tape.gradient(total, x).numpy(),
                        tape.jacobian(out, x).numpy()])
        if len(results) == 1:
            assert conv_ops._windows.primitive not in [r.op for r in tape._records]
    for got, expected in zip(*results, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    fw.test.check_gradients(lambda x: fw.nn.avg_pool2d(fw.tanh(x), window, window, "VALID") ** 2,
                            x, order=2)
