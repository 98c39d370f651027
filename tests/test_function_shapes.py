"""None dimensions of an ``input_signature``: one trace serves every size, as TensorFlow's
shape-polymorphic graph, where the traced Python reads no size (``framework.tracing.sizes``:
sizes that ops take are computed on every call). Where it reads one, two traces at two batch
sizes prove one plan (``plan.generalize``), or each size keeps its own. Every size gives
eager's numbers either way."""
import numpy as np
import pytest

import framework as fw
from framework import keras
from free_sizes import traces


def _calls(f, eager, inputs):
    """Call ``f`` and ``eager`` on each input tuple; their results must be equal."""
    for args in inputs:
        args = [fw.constant(a) for a in args]
        for got, want in zip(fw.nest.flatten(f(*args)), fw.nest.flatten(eager(*args))):
            assert got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def _training_step(model, x_spec):
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(x, y):
        with fw.GradientTape() as tape:
            logits = model(x)
            loss = loss_fn(y, logits) + fw.add_n([0.0] + model.losses)
        grads = tape.gradient(loss, model.trainable_variables)
        return [loss, logits] + [fw.convert_to_tensor(g) for g in grads]
    return fw.function(step, input_signature=[x_spec, fw.TensorSpec([None], fw.int32)]), step


def _batches(rng, shapes, make):
    return [(make(shape), rng.integers(0, 3, shape[0]).astype(np.int32)) for shape in shapes]


@pytest.mark.parametrize("name", ["dense", "cnn", "lstm", "gru-sequences", "causal-attention",
                                  "activity-penalty"])
def test_one_plan_serves_every_batch_size(name):
    fw.random.set_seed(1)
    rng = np.random.default_rng(0)
    floats = lambda shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
    ids = lambda shape: rng.integers(1, 20, shape).astype(np.int32)  # noqa: E731
    if name == "dense":
        model = keras.Sequential([keras.layers.Dense(4, activation="relu"), keras.layers.Dense(3)])
        spec, make, rest = [None, 6], floats, (6,)
    elif name == "activity-penalty":  # (its loss is divided by each call's batch size)
        model = keras.Sequential([keras.layers.Dense(4, activation="relu",
                                                     activity_regularizer="l2"),
                                  keras.layers.Dense(3)])
        spec, make, rest = [None, 6], floats, (6,)
    elif name == "cnn":
        model = keras.Sequential([keras.layers.Conv2D(2, 3, activation="relu"),
                                  keras.layers.MaxPooling2D(), keras.layers.Flatten(),
                                  keras.layers.Dense(3)])
        spec, make, rest = [None, 8, 8, 1], floats, (8, 8, 1)
    elif name == "lstm":
        model = keras.Sequential([keras.layers.Embedding(20, 4), keras.layers.LSTM(5),
                                  keras.layers.Dense(3)])
        spec, make, rest = [None, 6], ids, (6,)
    elif name == "gru-sequences":
        model = keras.Sequential([keras.layers.Embedding(20, 4),
                                  keras.layers.GRU(5, return_sequences=True),
                                  keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(3)])
        spec, make, rest = [None, 6], ids, (6,)
    else:
        inputs = keras.Input((6, 4))
        attended = keras.layers.MultiHeadAttention(2, 4)(inputs, inputs, use_causal_mask=True)
        model = keras.Model(inputs, keras.layers.Dense(3)(
            keras.layers.GlobalAveragePooling1D()(attended)))
        spec, make, rest = [None, 6, 4], floats, (6, 4)
    dtype = fw.int32 if make is ids else fw.float32
    f, eager = _training_step(model, fw.TensorSpec(spec, dtype))
    sizes = [8, 5, 7, 3, 11, 2]
    _calls(f, eager, _batches(rng, [(n,) + rest for n in sizes], make))
    assert traces(f, 1, 2)  # the trace at 8 serves them all (on a device: 8 and 5 prove one)


def test_variable_length_sequences_take_one_trace():
    """Batch and time both None (padded text: a mask, causal attention, an LSTM): one trace
    serves every batch and length; the causal mask's ``range`` of the length and the
    reshapes of the batch are computed on every call."""
    fw.random.set_seed(2)
    rng = np.random.default_rng(1)
    tokens = keras.Input((None,), dtype="int32")
    embedded = keras.layers.Embedding(20, 8, mask_zero=True)(tokens)
    attended = keras.layers.MultiHeadAttention(2, 4)(embedded, embedded, use_causal_mask=True)
    summary = keras.layers.LSTM(5)(attended)
    model = keras.Model(tokens, keras.layers.Dense(3)(summary))
    f, eager = _training_step(model, fw.TensorSpec([None, None], fw.int32))
    shapes = [(8, 6), (5, 6), (7, 6), (3, 6), (4, 9), (6, 9), (2, 9)]
    _calls(f, eager, _batches(rng, shapes, lambda s: rng.integers(0, 20, s).astype(np.int32)))
    assert traces(f, 1, 4)


def test_sizes_of_one_and_zero_are_classes_of_their_own():
    """Broadcasting and emptiness decide otherwise at 1 and 0: those sizes trace apart."""
    f = fw.function(lambda x: fw.reduce_mean(x, axis=0) + fw.reduce_sum(x),
                    input_signature=[fw.TensorSpec([None, 3], fw.float32)])
    inputs = [(np.full((n, 3), n, np.float32),) for n in (4, 6, 1, 0, 9, 1)]
    _calls(f, f.python_function, inputs)
    assert traces(f, 3, 4)  # {4, 6, 9}, 1, 0


def test_a_size_read_into_python_another_way_keeps_a_trace_per_size():
    """A size read into Python (here ``int(n) - 1`` in a slice) makes a trace serve its own
    size; a constant that no proportional rule explains proves nothing: each size keeps its own
    trace, with eager's numbers."""
    f = fw.function(lambda x: x[: int(x.shape[0]) - 1] * 2.0,
                    input_signature=[fw.TensorSpec([None], fw.float32)])
    inputs = [(np.arange(n, dtype=np.float32),) for n in (4, 6, 9, 4)]
    _calls(f, f.python_function, inputs)
    assert f.experimental_get_tracing_count() == 3


def test_a_loop_over_a_none_dimension_traces_per_length():
    """A Python loop over the time steps (``RNN`` over a cell) unrolls into plans of other
    lengths; ``SimpleRNN`` (one primitive, as LSTM and GRU) takes one trace for them all."""
    for layer, counts in ((lambda: keras.layers.RNN(keras.layers.SimpleRNNCell(5)), (4, 4)),
                          (lambda: keras.layers.SimpleRNN(5), (1, 4))):
        fw.random.set_seed(3)
        rng = np.random.default_rng(2)
        model = keras.Sequential([keras.layers.Embedding(20, 4), layer(),
                                  keras.layers.Dense(3)])
        f, eager = _training_step(model, fw.TensorSpec([None, None], fw.int32))
        shapes = [(4, 5), (6, 5), (3, 7), (5, 7), (2, 5)]
        _calls(f, eager, _batches(rng, shapes,
                                  lambda s: rng.integers(0, 20, s).astype(np.int32)))
        assert traces(f, *counts)  # the loop: {4, 6 -> 2} at 5 steps, 3 and 5 at 7


def test_two_inputs_keep_sizes_of_their_own():
    """Traced where both inputs had one batch size, the one-trace plan still takes each
    call's own sizes, equal or not."""
    f = fw.function(lambda x, y: fw.reduce_sum(x, axis=1) * 2.0 + fw.reduce_mean(y),
                    input_signature=[fw.TensorSpec([None, 3], fw.float32),
                                     fw.TensorSpec([None], fw.float32)])
    inputs = [(np.full((n, 3), n, np.float32), np.arange(m, dtype=np.float32))
              for n, m in ((4, 4), (6, 6), (3, 5), (5, 5), (7, 2))]
    _calls(f, f.python_function, inputs)
    assert traces(f, 1, 4)


def test_batches_equal_in_both_proving_traces_are_checked_at_every_call():
    """A size read into Python (``int``) leaves the proof to two traces; traced where both
    inputs had one batch size, the proved plan reads one for the other: a call where they
    differ traces again."""
    f = fw.function(lambda x, y: fw.reduce_sum(fw.reshape(x, [int(x.shape[0]) * 3])) * 2.0
                    + fw.reduce_mean(y),
                    input_signature=[fw.TensorSpec([None, 3], fw.float32),
                                     fw.TensorSpec([None], fw.float32)])
    inputs = [(np.full((n, 3), n, np.float32), np.arange(m, dtype=np.float32))
              for n, m in ((4, 4), (6, 6), (3, 5), (5, 5), (7, 2))]
    _calls(f, f.python_function, inputs)
    assert f.experimental_get_tracing_count() == 4  # {4, 6 -> 5}, 3 and 5, 7 and 2


def test_training_under_a_none_signature_matches_eager():
    """Updates too: the same model trained eagerly and through one general plan."""
    def run(compiled):
        fw.random.set_seed(4)
        rng = np.random.default_rng(3)
        model = keras.Sequential([keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
        optimizer = keras.optimizers.Adam(0.01)
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(x, y):
            with fw.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        if compiled:
            step = fw.function(step, input_signature=[fw.TensorSpec([None, 4], fw.float32),
                                                      fw.TensorSpec([None], fw.int32)])
        losses = [step(fw.constant(rng.normal(size=(n, 4)).astype(np.float32)),
                       fw.constant(rng.integers(0, 3, n).astype(np.int32))).numpy()
                  for n in (16, 9, 13, 16, 5, 7)]
        return losses, [v.numpy() for v in model.trainable_variables], step
    want, want_weights, _ = run(False)
    got, got_weights, step = run(True)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for g, w in zip(got_weights, want_weights):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)
    assert traces(step, 1, 2)  # (the first also built the slots)


def test_shape_and_size_are_values_of_each_call():
    """``fw.shape`` and ``fw.size`` are ops (TensorFlow's dynamic shape): the general plan
    answers each call's own."""
    f = fw.function(lambda x: (fw.shape(x), fw.size(x, out_type=fw.int64)),
                    input_signature=[fw.TensorSpec([None, 3], fw.float32)])
    for n in (4, 6, 9, 2):
        shape, size = f(fw.zeros((n, 3)))
        assert shape.dtype == fw.int32 and size.dtype == fw.int64
        np.testing.assert_array_equal(shape.numpy(), [n, 3])
        assert int(size) == 3 * n
    assert traces(f, 1, 2)
