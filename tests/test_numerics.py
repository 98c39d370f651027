"""Extreme logits: the fused, stable forms give finite values and finite, correct gradients.

Logits of +-1000 overflow a naive ``exp`` in float32 and float64 alike; softmax, log_softmax,
both cross-entropies, sigmoid and softplus must not. The references below are written in
float64 with the max-subtraction trick, independently of the framework.
"""
import warnings

import numpy as np
import pytest

import framework as fw
from framework.test import check_gradients

LOGITS = np.array([[1000.0, -1000.0, 0.0],
                   [-1000.0, -1000.0, -1000.0],
                   [1000.0, 1000.0, -1000.0],
                   [-1000.0, 1000.0, 999.0]])
LABELS = np.array([1, 0, 2, 2], dtype=np.int32)  # several pick a logit 2000 below the max
WEIGHTS = np.array([[0.3, -1.2, 2.0], [1.0, 0.5, -0.5], [-2.0, 0.1, 0.7], [0.4, 0.4, -1.0]])
SOFT = np.array([[0.2, 0.5, 0.3], [1.0, 0.0, 0.0], [0.0, 0.25, 0.75], [0.1, 0.1, 0.8]])

DTYPES = [fw.float32, fw.float64]


def ref_log_softmax(x):
    s = x - x.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


def ref_softmax(x):
    return np.exp(ref_log_softmax(x))


def tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == fw.float32 else {"rtol": 1e-12,
                                                                      "atol": 1e-12}


def first_and_second(f, x, weights):
    """f(x), d<w, f>/dx and d(sum of that gradient)/dx, with no NumPy warning raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow or invalid value in exp/log fails the test
        with fw.GradientTape() as outer:
            outer.watch(x)
            with fw.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
                total = fw.reduce_sum(y * fw.constant(weights, dtype=x.dtype))
            g = inner.gradient(total, x)
            g_sum = fw.reduce_sum(g)
        gg = outer.gradient(g_sum, x)
    for t in (y, g, gg):
        assert np.all(np.isfinite(t.numpy())), t
    return y.numpy(), g.numpy(), gg


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_at_1000(dtype):
    x = fw.constant(LOGITS, dtype=dtype)
    p = ref_softmax(LOGITS)
    y, g, _ = first_and_second(fw.nn.softmax, x, WEIGHTS)
    np.testing.assert_allclose(y, p, **tol(dtype))
    np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-6)
    expected = p * (WEIGHTS - (WEIGHTS * p).sum(-1, keepdims=True))
    np.testing.assert_allclose(g, expected, **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_log_softmax_at_1000(dtype):
    x = fw.constant(LOGITS, dtype=dtype)
    y, g, _ = first_and_second(fw.nn.log_softmax, x, WEIGHTS)
    np.testing.assert_allclose(y, ref_log_softmax(LOGITS), **tol(dtype))
    assert y.min() < -1999.0  # a real -2000, not -inf
    expected = WEIGHTS - ref_softmax(LOGITS) * WEIGHTS.sum(-1, keepdims=True)
    np.testing.assert_allclose(g, expected, **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sparse_softmax_cross_entropy_at_1000(dtype):
    x = fw.constant(LOGITS, dtype=dtype)
    labels = fw.constant(LABELS)
    w = WEIGHTS[:, 0]
    loss, g, _ = first_and_second(
        lambda z: fw.nn.sparse_softmax_cross_entropy_with_logits(labels, z), x, w)
    expected = -ref_log_softmax(LOGITS)[np.arange(4), LABELS]
    np.testing.assert_allclose(loss, expected, **tol(dtype))
    np.testing.assert_allclose(loss[0], 2000.0, rtol=1e-6)
    hot = np.eye(3)[LABELS]
    np.testing.assert_allclose(g, w[:, None] * (ref_softmax(LOGITS) - hot), **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_cross_entropy_at_1000(dtype):
    x = fw.constant(LOGITS, dtype=dtype)
    labels = fw.constant(SOFT, dtype=dtype)
    w = WEIGHTS[:, 1]
    loss, g, _ = first_and_second(
        lambda z: fw.nn.softmax_cross_entropy_with_logits(labels, z), x, w)
    np.testing.assert_allclose(loss, -(SOFT * ref_log_softmax(LOGITS)).sum(-1), **tol(dtype))
    expected = w[:, None] * (ref_softmax(LOGITS) * SOFT.sum(-1, keepdims=True) - SOFT)
    np.testing.assert_allclose(g, expected, **tol(dtype))
    with fw.GradientTape() as tape:  # the labels' gradient is -log_softmax: large but finite
        tape.watch(labels)
        total = fw.reduce_sum(fw.nn.softmax_cross_entropy_with_logits(labels, x))
    dlabels = tape.gradient(total, labels).numpy()
    np.testing.assert_allclose(dlabels, -ref_log_softmax(LOGITS), **tol(dtype))


EXTREMES = np.array([-1000.0, -100.0, -20.0, 0.0, 20.0, 100.0, 1000.0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [fw.sigmoid, fw.nn.sigmoid], ids=["fw.sigmoid", "nn.sigmoid"])
def test_sigmoid_at_1000(f, dtype):
    x = fw.constant(EXTREMES, dtype=dtype)
    y, g, gg = first_and_second(f, x, np.ones_like(EXTREMES))
    s = 0.5 * (1 + np.tanh(EXTREMES / 2))
    np.testing.assert_allclose(y, s, **tol(dtype))
    assert y[0] == 0.0 and y[-1] == 1.0
    np.testing.assert_allclose(g, s * (1 - s), **tol(dtype))
    np.testing.assert_allclose(gg.numpy(), s * (1 - s) * (1 - 2 * s), **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_softplus_at_1000(dtype):
    x = fw.constant(EXTREMES, dtype=dtype)
    y, g, gg = first_and_second(fw.nn.softplus, x, np.ones_like(EXTREMES))
    np.testing.assert_allclose(y, np.logaddexp(EXTREMES, 0), **tol(dtype))
    assert y[-1] == 1000.0 and y[0] == 0.0
    s = 0.5 * (1 + np.tanh(EXTREMES / 2))
    np.testing.assert_allclose(g, s, **tol(dtype))
    np.testing.assert_allclose(gg.numpy(), s * (1 - s), **tol(dtype))


@pytest.mark.parametrize("f", [
    fw.nn.softmax, fw.nn.log_softmax,
    lambda z: fw.nn.sparse_softmax_cross_entropy_with_logits(fw.constant(LABELS), z),
    lambda z: fw.nn.softmax_cross_entropy_with_logits(fw.constant(SOFT), z),
], ids=["softmax", "log_softmax", "sparse_xent", "xent"])
def test_gradients_at_large_logits_match_finite_differences(f):
    check_gradients(f, LOGITS / 20.0, order=2)  # +-50: exp overflows nothing, gradients tiny
    check_gradients(f, LOGITS, order=1)
