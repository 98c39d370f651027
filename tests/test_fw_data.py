"""``fw.data.Dataset``: tf.data's transformations, cardinalities and seeding."""
import subprocess
import sys

import numpy as np
import pytest

import framework as fw

D = fw.data.Dataset


def _values(ds):
    return [np.asarray(e).tolist() for e in ds.as_numpy_iterator()]


def test_from_tensor_slices_structures_and_dtypes():
    ds = D.from_tensor_slices(([1, 2, 3], {"a": np.arange(6.0).reshape(3, 2), "b": [0.5, 1, 2]}))
    first = next(iter(ds))
    assert isinstance(first, tuple) and isinstance(first[0], fw.Tensor)
    assert first[0].dtype == fw.int32 and first[1]["a"].dtype == fw.float64
    assert first[1]["b"].dtype == fw.float32  # a Python list mixing ints and floats
    assert first[1]["a"].numpy().tolist() == [0.0, 1.0]
    assert len(ds) == 3
    assert ds.element_spec[1]["a"] == fw.data.TensorSpec((2,), np.float64)
    nested = D.from_tensor_slices(((np.arange(4), np.ones((4, 2))), np.arange(4)))
    (a, b), c = next(nested.as_numpy_iterator())
    assert b.shape == (2,) and a == c == 0
    with pytest.raises(ValueError, match="different numbers of rows"):
        D.from_tensor_slices((np.ones(3), np.ones(4)))
    assert _values(D.from_tensors([1, 2])) == [[1, 2]]


def test_range_batch_unbatch_take_skip_enumerate_zip_concatenate():
    r = D.range(7)
    assert next(iter(r)).dtype == fw.int64
    assert _values(r.batch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert _values(r.batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert _values(r.batch(3).unbatch()) == list(range(7))
    assert _values(r.skip(2).take(3)) == [2, 3, 4]
    assert _values(D.range(1, 10, 4)) == [1, 5, 9]
    assert [(int(i), int(v)) for i, v in D.range(3, 6).enumerate(start=10)] == [
        (10, 3), (11, 4), (12, 5)]
    assert next(iter(D.range(2).enumerate()))[0].dtype == fw.int64
    assert _values(D.zip(D.range(3), D.range(10, 20))) == [[0, 10], [1, 11], [2, 12]]
    assert [sorted(e) for e in D.zip({"x": D.range(2), "y": D.range(2)}).as_numpy_iterator()] \
        == [["x", "y"]] * 2
    assert _values(D.range(2).concatenate(D.range(5, 7))) == [0, 1, 5, 6]
    assert _values(D.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert _values(D.range(3).repeat().take(5)) == [0, 1, 2, 0, 1]
    assert _values(D.range(5).prefetch(fw.data.AUTOTUNE).cache()) == list(range(5))
    with pytest.raises(ValueError, match="cannot stack"):
        list(D.from_tensor_slices(np.arange(3)).map(lambda x: fw.fill([x + 1], 1.0)).batch(3))


def test_map_unpacks_tuples_and_filter_keeps():
    ds = D.from_tensor_slices((np.arange(5.0, dtype=np.float32), np.arange(5)))
    mapped = ds.map(lambda x, y: (x * 2.0, y + 1), num_parallel_calls=fw.data.AUTOTUNE)
    assert [(float(a), int(b)) for a, b in mapped][:2] == [(0.0, 1), (2.0, 2)]
    kept = ds.filter(lambda x, y: y > 2)
    assert [int(y) for _, y in kept] == [3, 4]
    dicts = D.from_tensor_slices({"v": [1.0, 2.0]}).map(lambda d: d["v"] + 1.0)
    assert _values(dicts) == [2.0, 3.0]
    with pytest.raises(ValueError, match="scalar bool"):
        list(ds.filter(lambda x, y: x))


def test_cardinality_and_len_as_tensorflow():
    card = fw.data.experimental.cardinality
    assert int(card(D.range(10).batch(3))) == 4
    assert int(D.range(10).filter(lambda x: x > 3).cardinality()) == fw.data.UNKNOWN == -2
    assert int(D.range(3).repeat().cardinality()) == fw.data.INFINITE == -1
    assert int(D.range(3).repeat().take(7).cardinality()) == 7
    assert int(D.range(3).skip(5).cardinality()) == 0
    assert fw.data.experimental.INFINITE_CARDINALITY == -1
    assert fw.data.experimental.AUTOTUNE == fw.data.AUTOTUNE
    with pytest.raises(TypeError, match="infinite"):
        len(D.range(3).repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(D.range(3).filter(lambda x: x > 1))


def test_shuffle_is_a_permutation_and_buffer_one_keeps_order():
    ds = D.range(50).shuffle(10, seed=3)
    order = _values(ds)
    assert sorted(order) == list(range(50)) and order != list(range(50))
    assert order != _values(ds)  # reshuffled each iteration
    assert _values(D.range(50).shuffle(10, seed=3)) == order  # the same seed, the same order
    fixed = D.range(20).shuffle(20, seed=1, reshuffle_each_iteration=False)
    assert _values(fixed) == _values(fixed)
    assert _values(D.range(20).shuffle(1)) == list(range(20))
    # The buffer holds 10 elements: output i is one of the first i + 10 inputs.
    assert all(v <= i + 9 for i, v in enumerate(order))


def test_shuffle_is_seeded_by_the_global_seed_in_a_fresh_program():
    script = ("import framework as fw\nfw.random.set_seed(7)\n"
              "print([int(x) for x in fw.data.Dataset.range(30).shuffle(8)])")
    runs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)}
    assert len(runs) == 1


def test_shuffle_draws_from_a_given_generator_as_a_permutation():
    """The runner's form: a full buffer over rows is one ``permutation`` of its generator."""
    x = np.arange(10.0)
    got = [b.tolist() for b in D.from_tensor_slices(x).shuffle(10, seed=np.random.default_rng(
        5)).batch(4).as_numpy_iterator()]
    order = np.random.default_rng(5).permutation(10)
    assert got == [x[order[i:i + 4]].tolist() for i in range(0, 10, 4)]


def test_runner_batches_are_the_old_permutation_batches():
    """The runner's batches go through fw.data and stay bit-identical to indexing by one
    ``rng.permutation`` per epoch, leaving the generator in the same state (resume)."""
    from training.data import iterate_batches
    x = np.random.default_rng(1).standard_normal((23, 3)).astype(np.float32)
    y = np.arange(23)
    rng, old = np.random.default_rng(4), np.random.default_rng(4)
    for _ in range(2):  # two epochs
        order = old.permutation(23)
        got = list(iterate_batches(x, y, 5, rng))
        assert len(got) == 5 and isinstance(got[0][0], np.ndarray)
        for k, (xb, yb) in enumerate(got):
            np.testing.assert_array_equal(xb, x[order[k * 5:(k + 1) * 5]])
            np.testing.assert_array_equal(yb, y[order[k * 5:(k + 1) * 5]])
    assert rng.bit_generator.state == old.bit_generator.state
    assert list(iterate_batches(x[:0], y[:0], 5, rng)) == []
