"""One trace for every size: ``fw.function`` with an ``input_signature`` of None dimensions
serves every size of them from one plan where the traced Python read no size
(``framework.tracing.sizes``), and gives eager's answer at every size either way.

Trace counts are TensorFlow's, recorded (``reduce_retracing`` too). The sweep takes every
public function of the one-gate test (``tests/test_gate.py``, arguments
from ``tests/gate_cases.py``) and calls it under a signature whose every dimension is None, at
the case's sizes and at larger ones (every axis of 2 or more grown, its rows repeated); the
answers must be eager's at both sizes."""
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw
from free_sizes import host_only, on_host, traces
from test_gate import FUNCTIONS, _as_arrays, computed_arguments


def _grown(value):
    """A tensor argument with every axis of size 2 or more one and a half times as long (its
    rows over and over, so indices and labels stay valid)."""
    if not isinstance(value, fw.Tensor):
        return value
    array = value.numpy()
    for axis, n in enumerate(array.shape):
        if n > 1:
            array = np.take(array, np.arange(n + n // 2 + 1) % n, axis=axis)
    return fw.constant(array)


@pytest.mark.parametrize("label, name, fn", FUNCTIONS,
                         ids=[f"{label}.{name}" for label, name, _ in FUNCTIONS])
def test_every_size_of_a_none_signature_gives_eagers_answer(label, name, fn):
    draws, _ = computed_arguments(label, name, fn)
    if draws is None:
        pytest.skip("no arguments (tests/test_gate.py says why)")
    args = draws[0]
    grown = tuple(_grown(a) for a in args)
    try:
        answers = [fn(*args), fn(*grown)]
    except Exception:  # noqa: BLE001 - arguments whose sizes are tied (a permutation, SPD)
        pytest.skip("its arguments cannot grow apart")
    where = [i for i, a in enumerate(args) if isinstance(a, fw.Tensor)]
    if not where:
        pytest.skip("no tensor arguments")

    def call(*tensors):
        full = list(args)
        for i, t in zip(where, tensors):
            full[i] = t
        return fn(*full)
    specs = [fw.TensorSpec([None] * args[i].ndim, args[i].dtype) for i in where]
    compiled = fw.function(call, input_signature=specs)
    for given, want in zip((args, grown, args), answers + answers[:1]):
        got = compiled(*[given[i] for i in where])
        for g, w in zip(_as_arrays(got), _as_arrays(want), strict=True):
            assert g.shape == w.shape, f"{label}.{name}: shape {g.shape} != eager's {w.shape}"
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, equal_nan=True,
                                       err_msg=f"{label}.{name} under a None signature")


from framework import keras  # noqa: E402
from framework.keras import layers  # noqa: E402

# Each layer, its input's shape after the batch, and whether the input is token ids.
LAYERS = {
    "dense": (lambda: layers.Dense(4, activation="relu"), (6,), False),
    "batch_normalization": (lambda: layers.BatchNormalization(), (6,), False),
    "layer_normalization": (lambda: layers.LayerNormalization(), (5, 6), False),
    "conv1d": (lambda: layers.Conv1D(3, 3, padding="causal"), (7, 2), False),
    "conv2d": (lambda: layers.Conv2D(2, 3, strides=2, padding="same"), (7, 7, 1), False),
    "conv2d_transpose": (lambda: layers.Conv2DTranspose(2, 3, strides=2), (4, 4, 1), False),
    "max_pooling2d": (lambda: layers.MaxPooling2D(), (6, 6, 2), False),
    "average_pooling1d": (lambda: layers.AveragePooling1D(), (6, 2), False),
    "global_average_pooling2d": (lambda: layers.GlobalAveragePooling2D(), (4, 4, 2), False),
    "flatten": (lambda: layers.Flatten(), (3, 4), False),
    "reshape": (lambda: layers.Reshape((4, 3)), (12,), False),
    "simple_rnn": (lambda: layers.SimpleRNN(3), (4, 2), False),
    "lstm": (lambda: layers.LSTM(3, return_sequences=True), (5, 2), False),
    "gru": (lambda: layers.GRU(3), (5, 2), False),
    "bidirectional": (lambda: layers.Bidirectional(layers.LSTM(2)), (5, 2), False),
    "time_distributed": (lambda: layers.TimeDistributed(layers.Dense(3)), (4, 2), False),
    "multi_head_attention": (lambda: _SelfAttention(), (5, 4), False),
    "embedding": (lambda: keras.Sequential([layers.Embedding(10, 3, mask_zero=True),
                                            layers.LSTM(2)]), (6,), True),
    "softmax": (lambda: layers.Softmax(), (5,), False),
    "masking": (lambda: keras.Sequential([layers.Masking(), layers.GRU(2)]), (4, 3), False),
}


class _SelfAttention(layers.Layer):
    def __init__(self):
        super().__init__()
        self.attention = layers.MultiHeadAttention(2, 3)

    def call(self, x):
        return self.attention(x, x, use_causal_mask=True)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_a_layers_training_step_takes_one_trace_for_every_batch_size(name):
    make, rest, ids = LAYERS[name]
    fw.random.set_seed(5)
    rng = np.random.default_rng(5)
    layer = make()

    def step(t):
        with fw.GradientTape() as tape:
            if not ids:
                tape.watch(t)
            loss = fw.reduce_sum(fw.square(layer(t, training=True)))
        sources = layer.trainable_weights + ([] if ids else [t])
        return [loss] + [fw.convert_to_tensor(g) for g in tape.gradient(loss, sources)]
    dtype = fw.int32 if ids else fw.float32
    traced = fw.function(step, input_signature=[fw.TensorSpec((None,) + rest, dtype)])
    for size in (4, 3, 5, 2, 6):
        shape = (size,) + rest
        x = fw.constant(rng.integers(0, 10, shape).astype(np.int32) if ids
                        else rng.normal(size=shape).astype(np.float32))
        for got, want in zip(traced(x), step(x), strict=True):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    assert traces(traced, 1, 2), traced._size_read


@host_only
def test_a_layer_built_inside_a_none_signature_sees_a_none_batch():
    """As in a Keras graph, ``build`` gets None for a size of each call."""
    layer = layers.Dense(2)
    fw.function(lambda x: layer(x), input_signature=[fw.TensorSpec([None, 3])])(
        fw.zeros([4, 3]))
    assert layer._build_input_shape == (None, 3)


@host_only
def test_a_comparison_that_every_size_answers_alike_keeps_one_trace():
    f = fw.function(lambda x: x * 2.0 if x.shape[0] > 1 and x.shape[1] == 3 else x,
                    input_signature=[fw.TensorSpec([None, 3])])
    for n in (4, 7, 2):
        np.testing.assert_array_equal(f(fw.ones([n, 3])).numpy(), np.full((n, 3), 2.0))
    assert f.experimental_get_tracing_count() == 1


@host_only
def test_a_size_that_decides_a_branch_serves_its_own_size():
    f = fw.function(lambda x: x * 2.0 if x.shape[0] == 4 else x * 3.0,
                    input_signature=[fw.TensorSpec([None])])
    for n, scale in ((4, 2.0), (5, 3.0), (4, 2.0), (6, 3.0)):
        np.testing.assert_array_equal(f(fw.ones([n])).numpy(), np.full(n, scale))
    assert f._size_read is not None


@host_only
def test_sizes_in_arithmetic_and_tensors_are_values_of_each_call():
    """``x / x.shape[0]``, ``fw.range(x.shape[1])``, ``fw.zeros((x.shape[0], 2))``, a
    reshape by ``x.shape[0] * x.shape[1]`` and slices to ``x.shape[1] - 1`` and to
    ``fw.shape(x)[1] - 1`` (the TF tutorials' ``pos_encoding[:, :length]``): computed on every
    call, from one trace."""
    def f(x):
        flat = fw.reshape(x, [x.shape[0] * x.shape[1]])
        return (fw.reduce_sum(x) / x.shape[0], fw.range(x.shape[1]), flat,
                fw.zeros((x.shape[0], 2)), x[:, : x.shape[1] - 1],
                x[:, : fw.shape(x)[1] - 1] * 2.0)
    traced = fw.function(f, input_signature=[fw.TensorSpec([None, None])])
    for n, m in ((3, 4), (5, 2), (2, 6)):
        x = fw.constant(np.arange(n * m, dtype=np.float32).reshape(n, m))
        for got, want in zip(traced(x), f(x), strict=True):
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert traced.experimental_get_tracing_count() == 1


@host_only
def test_what_a_trace_returns_holds_plain_arrays():
    """The first call's results are the traced values: plain arrays, sizes as ints."""
    f = fw.function(lambda x: (x * 2.0, x.shape[0]), input_signature=[fw.TensorSpec([None])])
    y, n = f(fw.ones([3]))
    assert type(y._value) is np.ndarray and y.shape == (3,) and int(n) == 3
    assert isinstance(y.shape[0], int)


@host_only
def test_a_shape_with_a_size_of_each_call_is_not_fully_defined():
    seen = []
    f = fw.function(lambda x: seen.append(x.shape.is_fully_defined()) or x + 1.0,
                    input_signature=[fw.TensorSpec([None, 2])])
    f(fw.zeros([3, 2]))
    assert seen == [False] and fw.zeros([3, 2]).shape.is_fully_defined()


TRACING = json.loads((Path(__file__).parent / "reference" / "tracing_reference.json").read_text())


@pytest.mark.trace_counts
@pytest.mark.parametrize("case", TRACING["cases"], ids=[c["name"] for c in TRACING["cases"]])
def test_trace_counts_are_tensorflows(case):
    """As many traces as TensorFlow 2.21 took (tests/reference/make_tracing_reference.py), for
    ``reduce_retracing`` and for ``input_signature``s of None dimensions, with eager's answers.
    (No case has a size of 0 or 1 where others are larger: those trace apart here.)"""
    fn = eval(case["source"], {"tf": fw})  # noqa: S307 - the recorded lines
    if "input_signature" in case:
        signature = [fw.TensorSpec(shape, fw.float32) for shape in case["input_signature"]]
        traced = fw.function(fn, input_signature=signature)
    else:
        traced = fw.function(fn, reduce_retracing=case["reduce_retracing"])
    rng = np.random.default_rng(0)
    counts = []
    for shapes in case["calls"]:
        args = [fw.constant(rng.normal(size=shape).astype(np.float32)) for shape in shapes]
        np.testing.assert_array_equal(traced(*args).numpy(), fn(*args).numpy())
        counts.append(traced.experimental_get_tracing_count())
    if on_host():
        assert counts == case["counts"]


class _PositionalEmbedding(layers.Layer):
    """The TensorFlow transformer tutorial's, by ``tf`` -> ``fw``: an embedding scaled by
    ``sqrt(d_model)`` plus ``pos_encoding[tf.newaxis, :length, :]``, ``length`` from
    ``tf.shape``."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.d_model = d_model
        self.embedding = layers.Embedding(vocab_size, d_model, mask_zero=True)
        self.pos_encoding = fw.constant(
            np.random.default_rng(0).normal(size=(64, d_model)).astype(np.float32))

    def call(self, x):
        length = fw.shape(x)[1]
        x = self.embedding(x)
        x *= fw.math.sqrt(fw.cast(self.d_model, fw.float32))
        return x + self.pos_encoding[fw.newaxis, :length, :]


def test_a_slice_to_a_length_of_each_call_takes_one_trace():
    layer, dense = _PositionalEmbedding(20, 8), layers.Dense(3)

    def step(tokens):
        with fw.GradientTape() as tape:
            loss = fw.reduce_sum(fw.square(dense(layer(tokens))))
        weights = layer.trainable_weights + dense.trainable_weights
        return [loss] + [fw.convert_to_tensor(g) for g in tape.gradient(loss, weights)]
    traced = fw.function(step, input_signature=[fw.TensorSpec([None, None], fw.int32)])
    rng = np.random.default_rng(1)
    for batch, length in ((4, 6), (3, 9), (5, 2), (2, 7)):
        tokens = fw.constant(rng.integers(0, 20, (batch, length)).astype(np.int32))
        for got, want in zip(traced(tokens), step(tokens), strict=True):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert traces(traced, 1, 4)


@pytest.mark.parametrize("seed", [None, 3])
def test_dropout_in_training_takes_one_trace_with_eagers_masks(seed):
    """Dropout draws its mask from each call's shape (a replayed draw, run on the shadows from
    copies of the generators): one trace, and the same masks as eager, from the layer's own
    generator or the global one."""
    def run(compiled):
        fw.random.set_seed(7)
        layer = layers.Dropout(0.5, seed=seed)
        f = lambda x: layer(x, training=True) * 1.0  # noqa: E731
        if compiled:
            f = fw.function(f, input_signature=[fw.TensorSpec([None, 4])])
        return [f(fw.ones([n, 4])).numpy() for n in (5, 7, 3, 5)], f
    eager, _ = run(False)
    traced, f = run(True)
    for got, want in zip(traced, eager, strict=True):
        np.testing.assert_array_equal(got, want)
    assert traces(f, 1, 2)  # (on a device: 5 and 7 prove one plan for the batch)


def test_tensorflow_idioms_of_a_dynamic_batch_give_eagers_answers():
    """What TF2 training steps write with ``tf.shape``: an accuracy, a one-hot, a concat, a
    tile by ``[tf.shape(x)[0], 1]`` (a TraceError before: its multiples were read with
    ``.numpy()``), a gather over ``tf.range(tf.shape(x)[0])``."""
    def f(x, y):
        logits = x[:, :4]
        return (fw.reduce_mean(fw.cast(fw.equal(fw.argmax(logits, 1), y), fw.float32)),
                fw.one_hot(y, 4), fw.concat([x, x], axis=0),
                fw.tile(x[:1], [fw.shape(x)[0], 1]),
                fw.gather(x, fw.range(fw.shape(x)[0])))
    traced = fw.function(f, input_signature=[fw.TensorSpec([None, 6]),
                                             fw.TensorSpec([None], fw.int64)])
    rng = np.random.default_rng(2)
    for n in (6, 3, 6, 8):
        args = (fw.constant(rng.normal(size=(n, 6)).astype(np.float32)),
                fw.constant(rng.integers(0, 4, n)))
        for got, want in zip(traced(*args), f(*args), strict=True):
            np.testing.assert_array_equal(got.numpy(), want.numpy())
