"""fw.numpy_function and fw.py_function: function and decorator forms, Tout as one dtype or a
list, outputs held to Tout; numpy_function opaque to the tape and py_function differentiable
through its ops (TensorFlow 2.21's gradient, recorded by tests/reference/
make_tfpieces_reference.py, and finite differences at orders 1 and 2); under fw.function the
Python function is called on every call with that call's values."""
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw
from framework.test import check_gradients

RECORDED = json.loads((Path(__file__).parent / "reference" /
                       "tfpieces_reference.json").read_text())["python_function"]


def test_numpy_function_forms_and_outputs():
    x = fw.constant([1.0, 2.0, 3.0])
    doubled = fw.numpy_function(lambda a: a * 2, [x], fw.float32)
    assert isinstance(doubled, fw.Tensor) and doubled.dtype == fw.float32
    np.testing.assert_array_equal(doubled.numpy(), RECORDED["decorated"])
    pair = fw.numpy_function(lambda a: (a * 2, np.int32(a.size)), [x], [fw.float32, fw.int32])
    assert isinstance(pair, list) and pair[1].dtype == fw.int32 and int(pair[1]) == 3
    one = fw.numpy_function(lambda a: [a], [x], [fw.float32])
    assert isinstance(one, list) and len(one) == 1

    @fw.numpy_function(Tout=fw.float32)
    def halve(a):
        return a / 2

    np.testing.assert_array_equal(halve(x).numpy(), [0.5, 1.0, 1.5])
    wrapped = fw.numpy_function(lambda a, b: a + b, Tout=fw.float32)
    np.testing.assert_array_equal(wrapped(x, x).numpy(), [2.0, 4.0, 6.0])
    assert wrapped.__name__ == "<lambda>"
    converted = fw.py_function(lambda a: 3, [x], fw.float32)
    assert converted.dtype == fw.float32 and float(converted) == RECORDED["python_value_out"]


def test_py_function_forms_and_its_gradient_match_tensorflow():
    x = fw.constant(RECORDED["x"])
    with fw.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = fw.py_function(lambda a: a * a * fw.sin(a), [x], fw.float32)
        z = fw.numpy_function(lambda a: a * a, [x], fw.float32)
    np.testing.assert_allclose(y.numpy(), RECORDED["py_out"], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), RECORDED["py_grad"], rtol=1e-6)
    assert RECORDED["numpy_grad_is_none"] and tape.gradient(z, x) is None

    @fw.py_function(Tout=[fw.float32, fw.float32])
    def both(a):
        return a + 1.0, a * 2.0

    assert [t.numpy().tolist() for t in both(x)] == [[2.0, 3.0, 4.0], [2.0, 4.0, 6.0]]


def test_py_function_gradients_orders_1_and_2():
    x = np.random.default_rng(0).standard_normal(4)
    check_gradients(lambda t: fw.py_function(lambda a: fw.exp(fw.sin(a)) * a, [t], fw.float64),
                    x, order=2)


def test_under_fw_function_the_python_function_runs_on_every_call_with_its_values():
    seen = []

    def note(a):
        seen.append(a.copy())
        return a * 2, np.float32(a.sum())

    def step(x):
        doubled, total = fw.numpy_function(note, [x + 1.0], [fw.float32, fw.float32])
        fw.numpy_function(lambda a: seen.append("unused") or a, [x], fw.float32)  # an effect
        return doubled * total

    traced = fw.function(step)
    rng = np.random.default_rng(1)
    for call in range(3):
        x = fw.constant(rng.standard_normal(3).astype(np.float32))
        before = len(seen)
        np.testing.assert_array_equal(traced(x).numpy(), step(x).numpy())
        assert len(seen) == before + 4  # traced (or replayed) once, eager once: both functions
        np.testing.assert_array_equal(seen[before], x.numpy() + 1.0)
    assert traced.experimental_get_tracing_count() == 1


def test_py_function_under_fw_function_runs_every_call_and_differentiates():
    calls = []

    def square(a):
        calls.append(1)
        return a * a

    @fw.function
    def forward(x):
        return fw.py_function(square, [x], fw.float32) + 1.0

    @fw.function
    def gradient(x):
        with fw.GradientTape() as tape:
            tape.watch(x)
            y = fw.py_function(lambda a: fw.sin(a) * a, [x], fw.float32)
        return tape.gradient(y, x)

    for values in ([1.0, 2.0], [3.0, -1.0], [0.5, 0.25]):
        x = fw.constant(values)
        np.testing.assert_allclose(forward(x).numpy(), np.float32(values) ** 2 + 1, rtol=1e-6)
        v = np.float32(values)
        np.testing.assert_allclose(gradient(x).numpy(), np.cos(v) * v + np.sin(v), rtol=1e-6)
    assert len(calls) == 3


@pytest.mark.parametrize("call, error, message", [
    (lambda x: fw.numpy_function(lambda a: (a, a), [x], fw.float32), ValueError,
     "returns 2 values, but Tout expects 1"),
    (lambda x: fw.numpy_function(lambda a: a, [x], [fw.float32] * 2), ValueError,
     "returns 1 values, but Tout expects 2"),
    (lambda x: fw.numpy_function(lambda a: a * 2, [x], fw.float64), TypeError,
     "value 0 returned is float32, but Tout expects float64"),
    (lambda x: fw.py_function(lambda a: a * 2, [x], fw.float64), TypeError,
     "value 0 returned is float32, but Tout expects float64"),
    (lambda x: fw.py_function(lambda a: 3.5, [x], fw.int32), TypeError, "cannot convert 3.5"),
    (lambda x: fw.numpy_function(lambda a: a, [x]), TypeError, "missing required argument"),
    (lambda x: fw.numpy_function(lambda a: a, [x], "text"), TypeError, "Tout must be a dtype"),
])
def test_refusals_name_the_culprit(call, error, message):
    with pytest.raises(error, match=message):
        call(fw.constant([1.0, 2.0]))
