"""The fused ops of framework/ops/fused.py against the compositions they replace: the masked
softmax against Keras's three steps (where, softmax, where), layer normalization against
layers.normalization's moments and normalize; their array VJPs (first-order training steps)
against their tensor VJPs; finite differences at orders 1 and 2; fw.function on a second call
with other inputs."""
import numpy as np
import pytest

import framework as fw
from framework.ops.fused import layer_normalization, masked_softmax
from framework.test import check_gradients
from layers.normalization import moments, normalize

RNG = np.random.default_rng(0)


def composite_masked_softmax(x, mask, axis, fill):
    """Keras's Softmax layer's three steps (``fill``), or its Attention layers' two."""
    if fill:
        return fw.where(mask, fw.nn.softmax(fw.where(mask, x, -1e9), axis=axis), 0.0)
    return fw.nn.softmax(fw.where(mask, x, x - 1e9), axis=axis)


def composite_layer_norm(x, gamma, beta, axes, epsilon):
    mean, variance = moments(x, list(axes))
    return normalize(x, mean, variance, beta, gamma, epsilon)


def _mask(shape):
    m = RNG.random(shape) < 0.6
    m[..., 0] = True
    return m


def _both_passes(f, args):
    """The gradients of sum(w * f(*args)) (w fixed by the output's shape) from an array pass
    (a plain tape) and from the tensor VJPs (the same gradient recorded by an outer tape)."""
    tensors = [fw.constant(a) for a in args]
    shape = f(*tensors).shape
    w = np.random.default_rng(len(shape)).normal(size=shape)
    with fw.GradientTape() as tape:
        tape.watch(tensors)
        array_pass = tape.gradient(fw.reduce_sum(f(*tensors) * w), tensors)
    with fw.GradientTape() as outer:
        outer.watch(tensors)
        with fw.GradientTape() as tape:
            tape.watch(tensors)
            y = fw.reduce_sum(f(*tensors) * w)
        tensor_pass = tape.gradient(y, tensors)
    return array_pass, tensor_pass


@pytest.mark.parametrize("fill", [True, False])
def test_masked_softmax_equals_the_composition_and_its_vjps_agree(fill):
    x, mask = RNG.normal(size=(2, 3, 5)) * 4, _mask((2, 1, 5))
    fused = masked_softmax(fw.constant(x), mask, (-1,), fill=fill)
    np.testing.assert_allclose(fused.numpy(), composite_masked_softmax(
        fw.constant(x), fw.constant(mask), -1, fill).numpy(), rtol=1e-12, atol=1e-15)
    fast, slow = _both_passes(lambda t: masked_softmax(t, mask, (-1,), fill=fill), [x])
    np.testing.assert_allclose(fast[0].numpy(), slow[0].numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape,axes,weight_shape", [
    ((6, 8), (-1,), (8,)), ((2, 3, 4), (-1,), (4,)), ((2, 3, 4), (1, 2), (1, 3, 4))])
def test_layer_normalization_equals_the_composition(shape, axes, weight_shape):
    x = RNG.normal(size=shape) * 3 + 1
    gamma, beta = 1 + RNG.normal(size=weight_shape), RNG.normal(size=weight_shape)
    args = [fw.constant(a) for a in (x, gamma, beta)]
    np.testing.assert_allclose(layer_normalization(*args, axes, 1e-3).numpy(),
                               composite_layer_norm(*args, axes, 1e-3).numpy(), rtol=1e-12,
                               atol=1e-12)
    fast, slow = _both_passes(lambda *t: layer_normalization(*t, axes, 1e-3), [x, gamma, beta])
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
    _, composite = _both_passes(lambda *t: composite_layer_norm(*t, axes, 1e-3), [x, gamma, beta])
    for a, b in zip(fast, composite, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
    check_gradients(lambda *t: layer_normalization(*t, axes, 1e-3), x, gamma, beta, order=2)


def test_fused_ops_under_fw_function_follow_their_inputs():
    gamma, beta = fw.Variable(np.ones(4, np.float32)), fw.Variable(np.zeros(4, np.float32))
    mask = fw.constant(_mask((3, 4)))

    def step(x):
        with fw.GradientTape() as tape:
            y = masked_softmax(layer_normalization(x, gamma, beta, (-1,), 1e-3), mask, (-1,))
            loss = fw.reduce_sum(y * y * x)
        return [y, *tape.gradient(loss, [gamma, beta])]
    compiled = fw.function(step)
    for seed in (1, 2):  # the second call: other inputs, the same trace
        x = fw.constant(np.random.default_rng(seed).normal(size=(3, 4)).astype(np.float32))
        for got, want in zip(compiled(x), step(x), strict=True):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
