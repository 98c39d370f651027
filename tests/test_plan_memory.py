"""A replay of fw.function lets go of each array once its last reader has run, as eager code
does, so a long chain of large intermediates never holds them all at once."""
import tracemalloc

import numpy as np

import framework as fw

SIZE = 1 << 20  # float64: 8 MiB an array


def _chain(x):
    for k in range(8):
        x = fw.tanh(x * 0.5 + float(k))
    return fw.reduce_sum(x)


def _peak(fn, x):
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fn(x)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_replay_holds_no_more_arrays_than_eager_code():
    compiled = fw.function(_chain)
    first, second = (fw.constant(np.random.default_rng(k).standard_normal(SIZE))
                     for k in (0, 1))
    compiled(first)  # the trace
    np.testing.assert_allclose(float(compiled(second)), float(_chain(second)), rtol=1e-12)
    array = SIZE * 8
    assert _peak(compiled, second) < 4 * array  # (24 arrays if none were let go)
    assert _peak(_chain, second) < 4 * array  # (eager code, for comparison)


def test_a_replay_keeps_what_its_outputs_and_later_steps_read():
    @fw.function
    def f(x):
        y = x * 2.0
        z = fw.exp(y)
        return y, z + y  # y read again after z, and returned

    for value in ([0.0, 1.0], [2.0, -1.0]):
        y, w = f(fw.constant(value))
        np.testing.assert_allclose(y.numpy(), 2 * np.asarray(value))
        np.testing.assert_allclose(w.numpy(), np.exp(2 * np.asarray(value)) + 2 * np.asarray(value))
