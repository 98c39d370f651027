"""The fused LSTM sequence (framework/ops/recurrent.py) equals its definition, the composite of
framework ops: outputs and first-order gradients (the hand-written backpropagation through
time), finite differences at orders 1 and 2, fw.function on a second call, and LSTM's fast
path equals the same cell looped by RNN."""
import numpy as np
import pytest

import framework as fw
import layers
from framework.ops.recurrent import lstm_sequence, lstm_sequence_composite
from framework.test import check_gradients

RNG = np.random.default_rng(3)


def _arguments(batch=3, steps=4, features=2, units=3, dtype=np.float64):
    shapes = [(batch, steps, features), (batch, units), (batch, units),
              (features, 4 * units), (units, 4 * units), (4 * units,)]
    return [fw.constant(RNG.normal(size=s).astype(dtype)) for s in shapes]


MASK = fw.constant(np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 0]], dtype=bool))


@pytest.mark.parametrize("mask", [None, MASK])
def test_the_primitive_equals_the_composite_with_its_gradients(mask):
    args = _arguments()
    cotangent = fw.constant(RNG.normal(size=(3, 4, 6)))
    results = []
    for fn in (lstm_sequence, lstm_sequence_composite):
        with fw.GradientTape() as tape:
            tape.watch(args)
            out = fn(*args, mask=mask)
        results.append([out, *tape.gradient(out, args, output_gradients=cotangent)])
    for fused, composite in zip(*results, strict=True):
        np.testing.assert_allclose(fused.numpy(), composite.numpy(), rtol=1e-12, atol=1e-12)


def test_finite_differences_orders_1_and_2():
    check_gradients(lstm_sequence, *_arguments(batch=2, steps=3, units=2), order=2)
    mask = fw.constant(np.array([[1, 0, 1], [0, 1, 1]], dtype=bool))
    check_gradients(lambda *args: lstm_sequence(*args, mask=mask),
                    *_arguments(batch=2, steps=3, units=2), order=2)


def test_fw_function_gives_eager_answers_on_a_second_call():
    step = fw.function(lstm_sequence)
    step(*_arguments(dtype=np.float32))
    other = _arguments(dtype=np.float32)
    np.testing.assert_array_equal(step(*other).numpy(), lstm_sequence(*other).numpy())

    def loss_and_grads(*args):
        with fw.GradientTape() as tape:
            tape.watch(list(args))
            loss = fw.reduce_sum(fw.square(lstm_sequence(*args)))
        return [loss, *tape.gradient(loss, list(args))]
    traced = fw.function(loss_and_grads)
    traced(*_arguments(dtype=np.float32))
    for got, want in zip(traced(*other), loss_and_grads(*other), strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_lstm_fast_path_equals_the_cell_loop():
    x = fw.constant(RNG.normal(size=(2, 5, 3)).astype(np.float32))
    mask = fw.constant(np.array([[0, 1, 1, 0, 1], [1, 1, 0, 0, 0]], dtype=bool))
    for options in ({}, {"go_backwards": True, "return_sequences": True, "return_state": True},
                    {"use_bias": False, "return_state": True},
                    {"mask": mask, "return_sequences": True, "return_state": True},
                    {"mask": mask, "go_backwards": True, "return_state": True},
                    {"mask": mask, "return_sequences": True, "zero_output_for_mask": True}):
        call = {"mask": options.pop("mask")} if "mask" in options else {}
        fast = layers.LSTM(4, **options)
        loop = layers.RNN(layers.LSTMCell(4, use_bias=options.get("use_bias", True)),
                          **{k: v for k, v in options.items() if k != "use_bias"})
        fast(x)
        loop(x)
        loop.set_weights(fast.get_weights())
        with fw.GradientTape(persistent=True) as tape:
            tape.watch(x)
            got, want = fast(x, **call), loop(x, **call)
        for a, b in zip(fw.nest.flatten(got), fw.nest.flatten(want), strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
        for a, b in zip(tape.gradient(got, [x, *fast.weights]),
                        tape.gradient(want, [x, *loop.weights]), strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


def test_jacobians_through_the_primitive_equal_the_composites():
    args = _arguments(batch=2, steps=3, units=2)
    for fn in (lstm_sequence, lstm_sequence_composite):
        with fw.GradientTape(persistent=True) as outer:
            outer.watch(args)
            with fw.GradientTape() as tape:
                tape.watch(args)
                out = fn(*args)
            jacobian = tape.jacobian(out, args[0])
        found = [jacobian, outer.gradient(jacobian, args[4])]
        if fn is lstm_sequence:
            fused = found
    for a, b in zip(fused, found, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
