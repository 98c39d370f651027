"""fw.TensorArray: a recurrent loop's stacked outputs and gradients as recorded from TensorFlow
2.21 (tests/reference/make_tfpieces_reference.py), gather/scatter/unstack/concat/growth, float64
finite differences at orders 1 and 2 through write/read/stack/gather/concat, Python loops and
fw.while_loop under fw.function on a second, different input, and TensorFlow's own errors."""
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw
from framework.test import check_gradients
from reference.tensor_array_misuses import misuses

REFERENCE = json.loads((Path(__file__).parent / "reference" /
                        "tfpieces_reference.json").read_text())
RECORDED = REFERENCE["tensor_array"]
MESSAGES = REFERENCE["messages"]


def close(got, expected):
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=2e-6, atol=2e-6)


def recurrent(xs, ws, steps):
    """``state = tanh(w * x[t] + state)`` written at each step, then stacked."""
    ta = fw.TensorArray(xs.dtype, size=0, dynamic_size=True)
    state = fw.zeros(xs.shape[1:], xs.dtype)
    for t in range(steps):
        state = fw.tanh(ws * xs[t] + state)
        ta = ta.write(t, state)
    return ta.stack()


def test_recurrent_loop_and_its_gradients_match_tensorflow():
    xs, ws = fw.constant(RECORDED["x"]), fw.constant(RECORDED["w"])
    with fw.GradientTape() as tape:
        tape.watch([xs, ws])
        stacked = recurrent(xs, ws, 5)
        total = fw.reduce_sum(stacked * fw.range(1.0, 4.0))
    close(stacked.numpy(), RECORDED["stacked"])
    gx, gw = tape.gradient(total, [xs, ws])
    close(gx.numpy(), RECORDED["grad_x"])
    close(gw.numpy(), RECORDED["grad_w"])


def test_readers_and_growth_match_tensorflow():
    xs = fw.constant(RECORDED["x"])
    ta = fw.TensorArray(fw.float32, size=5, clear_after_read=False).unstack(xs)
    close(ta.gather([4, 0, 2]).numpy(), RECORDED["gathered"])
    close(ta.gather(fw.constant([4, 0, 2])).numpy(), RECORDED["gathered"])
    scattered = fw.TensorArray(fw.float32, size=4).scatter([3, 0], xs[:2]).stack()
    close(scattered.numpy(), RECORDED["scattered"])
    grown = fw.TensorArray(fw.float32, size=0, dynamic_size=True).write(3, [1.0, 2.0])
    assert int(grown.size()) == RECORDED["grown_size"] and grown.size().dtype == fw.int32
    assert grown.element_shape == [2]
    close(grown.stack().numpy(), RECORDED["grown"])
    concat = fw.TensorArray(fw.float32, size=2, infer_shape=False).write(0, [1.0]).write(
        1, [2.0, 3.0]).concat()
    close(concat.numpy(), RECORDED["concat"])
    empty = fw.TensorArray(fw.float32, size=0, element_shape=[2]).stack()
    assert list(empty.shape) == RECORDED["empty_known"]
    assert fw.TensorArray(fw.float32, size=2).element_shape is None


def test_read_clears_unless_told_and_split_cuts():
    ta = fw.TensorArray(fw.float64, size=2, clear_after_read=False).write(0, [1.0]).write(
        1, [2.0])
    assert float(ta.read(0)[0]) == float(ta.read(0)[0]) == 1.0
    parts = fw.TensorArray(fw.float32, size=2).split(fw.constant([1.0, 2.0, 3.0]), [1, 2])
    close(parts.read(1).numpy(), [2.0, 3.0])
    unwritten = fw.TensorArray(fw.float32, size=2, element_shape=[3])
    close(unwritten.read(1).numpy(), [0.0, 0.0, 0.0])


def _through_every_reader(x):
    ta = fw.TensorArray(x.dtype, size=3, clear_after_read=False)
    for t in range(3):
        ta = ta.write(t, fw.sin(x[t]) * x[(t + 1) % 3])
    other = fw.TensorArray(x.dtype, size=3).unstack(x * x)
    return (ta.stack(), ta.gather(fw.constant([2, 0])), ta.concat(), ta.read(1) * other.read(2),
            fw.TensorArray(x.dtype, size=3).scatter([2, 0], x[:2]).stack())


def test_gradients_orders_1_and_2_through_every_reader():
    x = np.random.default_rng(0).standard_normal((3, 2))
    check_gradients(_through_every_reader, x, order=2)


@fw.function
def traced_recurrent(xs, ws):
    return recurrent(xs, ws, xs.shape[0])


@fw.function
def traced_while(xs):
    ta = fw.TensorArray(fw.float32, size=xs.shape[0], element_shape=xs.shape[1:])

    def body(i, state, ta):
        state = fw.tanh(xs[i] + 0.5 * state)
        return i + 1, state, ta.write(i, state)

    _, _, ta = fw.while_loop(lambda i, state, ta: i < xs.shape[0], body,
                             [fw.constant(0), fw.zeros(xs.shape[1:]), ta])
    return ta.stack()


@fw.function
def traced_gradient(xs, ws):
    with fw.GradientTape() as tape:
        tape.watch(ws)
        total = fw.reduce_sum(recurrent(xs, ws, xs.shape[0]) ** 2)
    return tape.gradient(total, ws)


def test_loops_under_fw_function_equal_eager_on_a_second_input():
    rng = np.random.default_rng(1)
    for _ in range(3):
        xs = fw.constant(rng.standard_normal((4, 3)).astype(np.float32))
        ws = fw.constant(rng.standard_normal(3).astype(np.float32))
        np.testing.assert_array_equal(traced_recurrent(xs, ws).numpy(),
                                      recurrent(xs, ws, 4).numpy())
        np.testing.assert_array_equal(traced_while(xs).numpy(),
                                      traced_while.python_function(xs).numpy())
        with fw.GradientTape() as tape:
            tape.watch(ws)
            total = fw.reduce_sum(recurrent(xs, ws, 4) ** 2)
        np.testing.assert_allclose(traced_gradient(xs, ws).numpy(),
                                   tape.gradient(total, ws).numpy(), rtol=1e-6, atol=1e-7)
    assert traced_recurrent.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("key", [k for k in MESSAGES if k != "read_unwritten_unknown_shape"])
def test_errors_give_tensorflows_messages(key):
    with pytest.raises((IndexError, ValueError, TypeError)) as error:
        misuses(fw)[key]()
    assert str(error.value) == MESSAGES[key]["message"]


def test_a_refused_write_leaves_the_array_as_it_was():
    ta = fw.TensorArray(fw.float32, size=1, dynamic_size=True).write(0, [1.0, 2.0])
    with pytest.raises(ValueError, match="Incompatible shape"):
        ta.write(4, [1.0])
    with pytest.raises(TypeError, match="write dtype int32"):
        ta.write(3, fw.constant([1, 2]))
    assert int(ta.size()) == 1 and ta.element_shape == [2]
    with pytest.raises(ValueError, match="never written and the element shape"):
        fw.TensorArray(fw.float32, size=2).stack()
