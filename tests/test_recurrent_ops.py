"""The fused LSTM, GRU and SimpleRNN sequences (framework/ops/recurrent.py) equal their
definitions, the
composites of framework ops: outputs and first-order gradients (the hand-written
backpropagation through time), with and without a mask; finite differences at orders 1 and 2;
Jacobians; fw.function on a second call; and the layers' fast paths equal the same cells
looped by RNN."""
import numpy as np
import pytest

import framework as fw
import layers
from framework.ops.recurrent import (gru_sequence, gru_sequence_composite, lstm_sequence,
                                     lstm_sequence_composite, simple_rnn_sequence,
                                     simple_rnn_sequence_composite)
from framework.test import check_gradients

RNG = np.random.default_rng(3)


def _arguments(batch=3, steps=4, features=2, units=3, dtype=np.float64):
    shapes = [(batch, steps, features), (batch, units), (batch, units),
              (features, 4 * units), (units, 4 * units), (4 * units,)]
    return [fw.constant(RNG.normal(size=s).astype(dtype)) for s in shapes]


MASK = fw.constant(np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 0]], dtype=bool))


def _gru_arguments(batch=3, steps=4, features=2, units=3, dtype=np.float64):
    shapes = [(batch, steps, features), (batch, units), (features, 3 * units),
              (units, 3 * units), (2, 3 * units)]
    return [fw.constant(RNG.normal(size=s).astype(dtype)) for s in shapes]


def _simple_arguments(batch=3, steps=4, features=2, units=3, dtype=np.float64):
    shapes = [(batch, steps, features), (batch, units), (features, units), (units, units),
              (units,)]
    return [fw.constant(RNG.normal(size=s).astype(dtype)) for s in shapes]


PAIRS = {"lstm": (lstm_sequence, lstm_sequence_composite, _arguments, 6),
         "gru": (gru_sequence, gru_sequence_composite, _gru_arguments, 3),
         "simple_rnn": (simple_rnn_sequence, simple_rnn_sequence_composite, _simple_arguments,
                        3)}


@pytest.mark.parametrize("mask", [None, MASK])
@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_the_primitive_equals_the_composite_with_its_gradients(kind, mask):
    fused_fn, composite_fn, arguments, width = PAIRS[kind]
    args = arguments()
    cotangent = fw.constant(RNG.normal(size=(3, 4, width)))
    results = []
    for fn in (fused_fn, composite_fn):
        with fw.GradientTape() as tape:
            tape.watch(args)
            out = fn(*args, mask=mask)
        results.append([out, *tape.gradient(out, args, output_gradients=cotangent)])
    for fused, composite in zip(*results, strict=True):
        np.testing.assert_allclose(fused.numpy(), composite.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_finite_differences_orders_1_and_2(kind):
    fused_fn, _, arguments, _ = PAIRS[kind]
    mask = fw.constant(np.array([[1, 0, 1], [0, 1, 1]], dtype=bool))
    for kwargs in ({}, {"mask": mask}):
        check_gradients(lambda *args: fused_fn(*args, **kwargs),
                        *arguments(batch=2, steps=3, units=2), order=2)


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


FAST_PATH_OPTIONS = (
    {}, {"go_backwards": True, "return_sequences": True, "return_state": True},
    {"use_bias": False, "return_state": True},
    {"mask": True, "return_sequences": True, "return_state": True},
    {"mask": True, "go_backwards": True, "return_state": True},
    {"mask": True, "go_backwards": True, "return_sequences": True, "zero_output_for_mask": True})


@pytest.mark.parametrize("layer, cell", [(layers.LSTM, layers.LSTMCell),
                                         (layers.GRU, layers.GRUCell),
                                         (layers.SimpleRNN, layers.SimpleRNNCell)])
def test_the_fast_path_equals_the_cell_loop(layer, cell):
    x = fw.constant(RNG.normal(size=(2, 5, 3)).astype(np.float32))
    mask = fw.constant(np.array([[0, 1, 1, 0, 1], [1, 1, 0, 0, 0]], dtype=bool))
    for options in FAST_PATH_OPTIONS:
        options = dict(options)
        call = {"mask": mask} if options.pop("mask", False) else {}
        fast = layer(4, **options)
        loop = layers.RNN(cell(4, use_bias=options.get("use_bias", True)),
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

