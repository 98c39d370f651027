"""Host tuning (``framework.tuning.host``) gives the numbers of the op definitions it stands in for.

Every op that registers a host form is checked here: its forward, and its first-order VJP on
arrays for each subset of the arguments asked for, against the definition on the same NumPy
arrays, in float32 and float64, on shapes on both sides of the host forms' own thresholds
(short and long rows, few and many classes, batches of more than one axis).
"""
import itertools

import numpy as np
import pytest

import framework as fw
from framework.ops import fused, nn as nn_ops

rng = np.random.default_rng(7)
DTYPES = [np.float32, np.float64]
TOLERANCE = {np.float32: 1e-5, np.float64: 1e-12}


def normal(shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def labels(rows, classes):
    return rng.integers(0, classes, rows)


# name: (op, a function of the dtype giving the op's arrays and parameters)
CASES = {
    "relu short rows": (fw.nn.relu, lambda t: ((normal((5, 7), t),), {})),
    "relu long rows": (fw.nn.relu, lambda t: ((normal((6, 40), t),), {})),
    "relu integers": (fw.nn.relu, lambda t: ((rng.integers(-3, 3, (4, 50)),), {})),
    "bias_add_relu": (nn_ops._bias_add_relu, lambda t: ((normal((6, 40), t), normal(40, t)), {})),
    "dense": (nn_ops._dense, lambda t: ((normal((6, 5), t), normal((5, 40), t), normal(40, t)),
                                       {"relu": False})),
    "dense relu": (nn_ops._dense, lambda t: ((normal((6, 5), t), normal((5, 3), t),
                                             normal(3, t)), {"relu": True})),
    "dense of a 3-d batch": (nn_ops._dense, lambda t: (
        (normal((2, 6, 5), t), normal((5, 40), t), normal(40, t)), {"relu": True})),
    "sum_batch rows": (nn_ops._sum_batch, lambda t: ((normal((9, 4), t),), {"axes": (0,)})),
    "sum_batch 3-d": (nn_ops._sum_batch, lambda t: ((normal((2, 9, 4), t),), {"axes": (0, 1)})),
    "bias_add": (nn_ops._bias_add, lambda t: ((normal((2, 9, 4), t), normal(4, t)), {})),
    "softmax few classes": (nn_ops._softmax, lambda t: ((normal((6, 10), t),), {"axis": -1})),
    "softmax few classes, large values": (nn_ops._softmax, lambda t: (
        (normal((6, 10), t) * 400,), {"axis": -1})),
    "softmax many classes": (nn_ops._softmax, lambda t: ((normal((6, 40), t),), {"axis": -1})),
    "softmax long rows": (nn_ops._softmax, lambda t: ((normal((2, 3, 80), t),), {"axis": -1})),
    "softmax long rows, large values": (nn_ops._softmax, lambda t: (
        (normal((3, 80), t) * 400,), {"axis": -1})),
    "layer_normalization long rows": (fused._layer_norm, lambda t: (
        (normal((2, 5, 80), t), normal(80, t), normal(80, t)), {"axes": (-1,), "epsilon": 1e-3})),
    "layer_normalization short rows": (fused._layer_norm, lambda t: (
        (normal((5, 8), t), normal(8, t), normal(8, t)), {"axes": (-1,), "epsilon": 1e-3})),
    "layer_normalization two axes": (fused._layer_norm, lambda t: (
        (normal((3, 4, 70), t), normal((4, 70), t), normal((4, 70), t)),
        {"axes": (-2, -1), "epsilon": 1e-3})),
    "sparse_xent few classes": (nn_ops._sparse_xent, lambda t: (
        (labels(50, 10), normal((50, 10), t)), {})),
    "sparse_xent many classes": (nn_ops._sparse_xent, lambda t: (
        (labels(20, 70), normal((20, 70), t)), {})),
    "sparse_xent 3-d": (nn_ops._sparse_xent, lambda t: (
        (labels(12, 5).reshape(3, 4), normal((3, 4, 5), t)), {})),
}
WITH_HOST_FORWARD = [name for name, (op, _) in CASES.items() if op.host_forward is not op.forward]
WITH_HOST_VJP = [name for name, (op, _) in CASES.items()
                 if op.primitive.host_array_vjp is not op.primitive.array_vjp]


def _close(got, expected, dtype):
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


def _fit(gradient, shape):
    """A gradient with broadcast leading axes summed away."""
    return gradient.reshape((-1,) + tuple(shape)).sum(axis=0, dtype=gradient.dtype)


def _loss_and_softmax(result):
    """A forward's output, and what it saves: for the cross-entropy its softmax, rows first,
    for the layer normalization the normalized values and inverse deviations."""
    if isinstance(result, tuple) and len(result[1]) == 2:
        return [result[0], *result[1]]
    if isinstance(result, tuple):
        loss, (probabilities, _, classes_first) = result
        return [loss, probabilities.T if classes_first else probabilities]
    return [result]


def test_every_host_form_is_checked():
    assert set(WITH_HOST_FORWARD) | set(WITH_HOST_VJP) == set(CASES)
    ops = {id(op) for op, _ in CASES.values()}
    # relu, bias_add_relu, dense, sum_batch, bias_add, softmax, sparse_xent, layer_normalization
    assert len(ops) == 8


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", WITH_HOST_FORWARD)
def test_host_forward_equals_the_definition(name, dtype):
    op, make = CASES[name]
    arrays, params = make(dtype)
    frozen = [a.copy() for a in arrays]
    got = _loss_and_softmax(op.host_forward(*arrays, **params))
    expected = _loss_and_softmax(op.forward(*arrays, **params))
    for g, e in zip(got, expected, strict=True):
        if e.dtype.kind == "f":
            _close(g, e, dtype)
        else:
            np.testing.assert_array_equal(g, e)
    for a, f in zip(arrays, frozen):
        np.testing.assert_array_equal(a, f)  # neither writes into its inputs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", WITH_HOST_VJP)
def test_host_array_vjp_equals_the_definition(name, dtype):
    op, make = CASES[name]
    arrays, params = make(dtype)
    prim = op.primitive
    differentiable = [k for k, v in enumerate(prim.vjps) if v is not None]
    forms = {}
    for form, forward in (("on_host", op.host_forward), ("definition", op.forward)):
        out = forward(*arrays, **params)
        if isinstance(out, tuple):  # (the cross-entropy's saved softmax, per form)
            out, saved = out
            forms[form] = (out, dict(params, saved=saved))
        else:
            forms[form] = (out, params)
    g = normal(forms["definition"][0].shape, dtype)
    for count in range(1, len(differentiable) + 1):
        for asked in itertools.combinations(differentiable, count):
            needs = tuple(k in asked for k in range(len(arrays)))
            got = prim.host_array_vjp(g, forms["on_host"][0], needs, *arrays,
                                          **forms["on_host"][1])
            expected = prim.array_vjp(g, forms["definition"][0], needs, *arrays,
                                      **forms["definition"][1])
            for k, (a, b) in enumerate(zip(got, expected, strict=True)):
                assert (a is None) == (b is None) == (k not in asked)
                if a is not None:  # (summed to the argument's shape, as the tape does)
                    _close(_fit(a, arrays[k].shape), _fit(b, arrays[k].shape), dtype)


def test_a_training_step_on_numpy_arrays_runs_the_host_forms(monkeypatch, each_backend):
    """The loss of a step is a NumPy scalar, not an array: the pass must still take the host
    forms (and on the GPU, or its emulation, the definitions)."""
    calls = []
    for op in (nn_ops._dense, nn_ops._sparse_xent):
        prim = op.primitive
        for form in ("array_vjp", "host_array_vjp"):
            vjp = getattr(prim, form)
            monkeypatch.setattr(prim, form, lambda *a, vjp=vjp, form=form, **k: (
                calls.append(form), vjp(*a, **k))[1])
    x = fw.constant(normal((6, 5), np.float32))
    w, b = fw.Variable(normal((5, 3), np.float32)), fw.Variable(normal(3, np.float32))
    with fw.GradientTape() as tape:
        logits = fw.nn.dense(x, w, b, relu=True)
        loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(
            fw.constant(labels(6, 3)), logits))
    tape.gradient(loss, [w, b])
    expected = "host_array_vjp" if each_backend == "numpy" else "array_vjp"
    assert calls == [expected, expected]


@pytest.mark.parametrize("dtype", DTYPES + [np.int64])
def test_host_matmul_is_the_at_operator_bit_for_bit(dtype):
    """The host's products of two matrices go through ``ndarray.dot``: the same result as
    ``@`` to the last bit, for every memory layout a training step hands it (a transposed
    weight, a transposed batch, a row of ones); other ranks fall back to ``@`` itself."""
    from framework.tuning import host
    a, b = normal((37, 23), dtype), normal((23, 11), dtype)
    layouts = [(a, b), (np.asfortranarray(a), b), (a, np.ascontiguousarray(b.T).T),
               (np.ascontiguousarray(a.T).T, np.asfortranarray(b)), (a[::2], b[:, ::3]),
               (np.ones((1, 37), dtype), a)]
    for x, y in layouts:
        got = host.matmul(x, y)
        assert got.dtype == (x @ y).dtype and got.shape == (x @ y).shape
        np.testing.assert_array_equal(got, x @ y)
    for x, y in ((normal((2, 37, 23), dtype), b), (a, normal(23, dtype)),
                 (normal(37, dtype), a)):
        np.testing.assert_array_equal(host.matmul(x, y), x @ y)
