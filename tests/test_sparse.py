"""Sparse gradients (``fw.IndexedSlices``) and clipping by norm.

What TensorFlow 2.21 returns was checked by hand (a gather of a variable gives IndexedSlices,
two gathers concatenate, a gather plus a dense use is dense, gather on axis 1 and jacobians are
dense); the numbers here are compared with the dense computation of the same gradient.
"""
import warnings

import numpy as np
import pytest

import framework as fw
import optimizers
from framework.test import check_gradients

TABLE = np.arange(24, dtype=np.float32).reshape(6, 4) / 10


def _table():
    return fw.Variable(TABLE.copy(), name="table")


def _dense_gather(v, ids):
    """The same rows by a one-hot product: a dense gradient to compare with."""
    return fw.matmul(fw.one_hot(ids, v.shape[0], dtype=v.dtype), v)


def test_gather_gradient_is_indexed_slices_proportional_to_rows():
    v = _table()
    with fw.GradientTape() as tape:
        y = fw.reduce_sum(fw.gather(v, [1, 3, 3]) ** 2)
    g = tape.gradient(y, v)
    assert isinstance(g, fw.IndexedSlices)
    assert g.values.shape == (3, 4)  # the rows looked up, not the (6, 4) table
    assert g.indices.numpy().tolist() == [1, 3, 3]
    assert g.shape == (6, 4) and g.dense_shape.numpy().tolist() == [6, 4]
    assert g.dtype == fw.float32
    with fw.GradientTape() as tape:
        y = fw.reduce_sum(_dense_gather(v, [1, 3, 3]) ** 2)
    np.testing.assert_allclose(fw.convert_to_tensor(g).numpy(), tape.gradient(y, v).numpy(),
                               rtol=1e-6)


def test_embedding_lookup_flattens_ids_of_any_shape():
    v = _table()
    ids = [[0, 5], [2, 2]]
    with fw.GradientTape() as tape:
        weights = fw.constant(np.arange(16.0, dtype=np.float32).reshape(2, 2, 4))
        y = fw.reduce_sum(fw.nn.embedding_lookup(v, ids) * weights)
    g = tape.gradient(y, v)
    assert isinstance(g, fw.IndexedSlices) and g.values.shape == (4, 4)
    assert g.indices.numpy().tolist() == [0, 5, 2, 2]
    dense = fw.convert_to_tensor(g).numpy()
    np.testing.assert_array_equal(dense[2], np.arange(8, 12) + np.arange(12, 16))
    np.testing.assert_array_equal(dense[[1, 3, 4]], 0)


def test_sums_follow_tensorflow():
    v = _table()
    with fw.GradientTape(persistent=True) as tape:
        two = fw.reduce_sum(fw.gather(v, [0, 2])) + fw.reduce_sum(fw.gather(v, [1]))
        mixed = fw.reduce_sum(fw.gather(v, [0, 2])) + fw.reduce_sum(v * 2.0)
        axis1 = fw.reduce_sum(fw.gather(v, [0, 2], axis=1))
    sparse = tape.gradient(two, v)  # two sparse parts: still sparse, rows concatenated
    assert isinstance(sparse, fw.IndexedSlices)
    assert sorted(sparse.indices.numpy().tolist()) == [0, 1, 2]
    dense = tape.gradient(mixed, v)  # a dense part makes the sum dense
    assert isinstance(dense, fw.Tensor)
    expected = np.full((6, 4), 2.0, np.float32)
    expected[[0, 2]] += 1
    np.testing.assert_array_equal(dense.numpy(), expected)
    assert isinstance(tape.gradient(axis1, v), fw.Tensor)  # only axis 0 is sparse


def test_recorded_pass_gives_the_same_sparse_gradient():
    v = _table()
    with fw.GradientTape(persistent=True) as tape:
        y = fw.reduce_sum(fw.gather(v, [4, 1, 4]) ** 3)
    raw = tape.gradient(y, v)
    with fw.GradientTape():  # recording: the tensor VJPs
        recorded = tape.gradient(y, v)
    assert isinstance(raw, fw.IndexedSlices) and isinstance(recorded, fw.IndexedSlices)
    np.testing.assert_allclose(raw.values.numpy(), recorded.values.numpy(), rtol=1e-6)


def test_jacobian_through_gather_is_dense():
    v = _table()
    with fw.GradientTape() as tape:
        y = fw.gather(v, [3, 0]) * 2.0
    jac = tape.jacobian(y, v)
    assert isinstance(jac, fw.Tensor) and jac.shape == (2, 4, 6, 4)
    assert float(jac[0, 1, 3, 1]) == 2.0 and float(jac[0, 1, 0, 1]) == 0.0


def test_second_order_through_gather():
    """Values of TensorFlow 2.21 for this computation (a repeated row counts twice)."""
    v = fw.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
    with fw.GradientTape() as outer:
        with fw.GradientTape() as inner:
            y = fw.reduce_sum(fw.gather(v, [0, 2, 2]) ** 3)
        g = inner.gradient(y, v)
        z = fw.reduce_sum(fw.convert_to_tensor(g) ** 2)
    h = outer.gradient(z, v)
    assert isinstance(h, fw.IndexedSlices)
    np.testing.assert_allclose(h.values.numpy(), [[0, 36, 288], [15552, 24696, 36864],
                                                  [15552, 24696, 36864]])
    x = np.random.default_rng(0).standard_normal((5, 3))
    check_gradients(lambda t: fw.gather(t, [4, 0, 4]) ** 2, x, order=2)


def _optimizer_cases():
    return [optimizers.OPTIMIZERS.get(name, learning_rate=0.1, **extra)
            for name in optimizers.OPTIMIZERS.names()
            for extra in ({}, {"clipnorm": 1.0}, {"global_clipnorm": 0.5}, {"clipvalue": 0.3})]


@pytest.mark.parametrize("make", range(len(_optimizer_cases())))
def test_every_optimizer_gives_the_dense_numbers(make):
    """Without repeated rows, a sparse step equals the dense one, clipping included (Keras
    clips a sparse gradient through its values, which then equal the dense rows)."""
    ids = [4, 1, 0]
    tables = []
    for sparse in (True, False):
        opt = _optimizer_cases()[make]
        v = _table()
        for _ in range(3):
            with fw.GradientTape() as tape:
                rows = fw.gather(v, ids) if sparse else _dense_gather(v, ids)
                loss = fw.reduce_sum(rows ** 2) * 0.1
            (g,) = tape.gradient(loss, [v])
            assert isinstance(g, fw.IndexedSlices) is sparse
            opt.apply_gradients([(g, v)])
        tables.append(v.numpy())
    np.testing.assert_allclose(tables[0], tables[1], rtol=1e-6, atol=1e-7)


def test_repeated_rows_clip_through_values_as_keras():
    """Keras 3.15: SGD(0.1, clipvalue=0.5) on rows [[1, 2], [3, 4]] at index 0 and
    [0.5, 0.5] at index 2 clips each row before adding them: row 0 moves by 0.1, not 0.05."""
    v = fw.Variable(np.ones((4, 2), np.float32))
    s = fw.IndexedSlices(fw.constant([[1.0, 2.0], [3.0, 4.0], [0.5, 0.5]]), fw.constant([0, 0, 2]),
                         [4, 2])
    optimizers.SGD(0.1, clipvalue=0.5).apply_gradients([(s, v)])
    np.testing.assert_allclose(v.numpy(), [[0.9, 0.9], [1, 1], [0.95, 0.95], [1, 1]], rtol=1e-6)
    w = fw.Variable(np.ones((4, 2), np.float32))
    optimizers.SGD(0.1, clipnorm=1.0).apply_gradients([(s, w)])
    np.testing.assert_allclose(w.numpy(), [[0.92757136, 0.8913571], [1, 1],
                                           [0.9909464, 0.9909464], [1, 1]], rtol=1e-6)


def test_optimizer_names_the_variable_of_a_misfit_sparse_gradient():
    v = _table()
    s = fw.IndexedSlices(fw.ones((1, 4)), fw.constant([0]), [7, 4])
    with pytest.raises(ValueError, match="'table' has shape \\(7, 4\\)"):
        optimizers.SGD().apply_gradients([(s, v)])
    np.testing.assert_array_equal(v.numpy(), TABLE)


def test_accumulation_takes_sparse_gradients():
    v = _table()
    optimizer = optimizers.SGD(1.0, gradient_accumulation_steps=2)
    for ids in ([0], [0, 5]):
        with fw.GradientTape() as tape:
            y = fw.reduce_sum(fw.gather(v, ids))
        optimizer.apply_gradients([(tape.gradient(y, v), v)])
    expected = TABLE.copy()
    expected[0] -= 1.0
    expected[5] -= 0.5
    np.testing.assert_allclose(v.numpy(), expected, rtol=1e-6)


def test_indexed_slices_checks_its_parts():
    with pytest.raises(TypeError, match="indices must be a rank-1 integer"):
        fw.IndexedSlices(fw.ones((2, 3)), fw.constant([0.0, 1.0]), [4, 3])
    with pytest.raises(ValueError, match="one row per index"):
        fw.IndexedSlices(fw.ones((2, 3)), fw.constant([0, 1, 2]), [4, 3])
    with pytest.raises(ValueError, match="do not fit dense_shape"):
        fw.IndexedSlices(fw.ones((2, 3)), fw.constant([0, 1]), [4, 2])


# --- clipping --------------------------------------------------------------------------------
def test_clip_by_norm_as_tensorflow():
    t = fw.constant([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(fw.clip_by_norm(t, 1.0).numpy(), [[0.6, 0.8], [0, 0]], rtol=1e-6)
    np.testing.assert_allclose(fw.clip_by_norm(t, 10.0).numpy(), t.numpy())
    rows = fw.clip_by_norm(t, 1.0, axes=[1]).numpy()
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0, 0]], rtol=1e-6)
    s = fw.IndexedSlices(fw.ones((2, 3)), fw.constant([0, 0]), [4, 3])
    clipped = fw.clip_by_norm(s, 1.0)  # TensorFlow 2.21: the values' norm, sqrt(6)
    assert isinstance(clipped, fw.IndexedSlices)
    np.testing.assert_allclose(clipped.values.numpy(), np.full((2, 3), 0.40824828), rtol=1e-6)
    with pytest.raises(TypeError, match="floating"):
        fw.clip_by_norm(fw.constant([1, 2]), 1.0)


def test_clip_by_global_norm_as_tensorflow():
    s = fw.IndexedSlices(fw.ones((2, 3)), fw.constant([0, 0]), [4, 3])
    clipped, norm = fw.clip_by_global_norm([s, fw.ones(2), None], 1.0)
    np.testing.assert_allclose(float(norm), 2.8284270763397217, rtol=1e-6)
    assert isinstance(clipped[0], fw.IndexedSlices) and clipped[2] is None
    np.testing.assert_allclose(clipped[1].numpy(), [0.35355338] * 2, rtol=1e-6)
    small, _ = fw.clip_by_global_norm([fw.constant([0.1])], 1.0)
    np.testing.assert_allclose(small[0].numpy(), [0.1], rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nan, _ = fw.clip_by_global_norm([fw.constant([np.inf, 1.0])], 1.0)
    assert np.isnan(nan[0].numpy()).all()


def test_clipping_is_differentiable():
    check_gradients(lambda t: fw.clip_by_norm(t, 1.0), np.array([[0.9, -1.2], [0.3, 2.0]]),
                    order=2)
    check_gradients(lambda a, b: fw.clip_by_global_norm([a, b], 1.0)[0],
                    np.array([0.9, -1.2]), np.array([[0.3], [2.0]]), order=2)
