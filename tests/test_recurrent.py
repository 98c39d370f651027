"""The recurrent layers beyond the recorded Keras numbers (tests/test_recurrent_keras.py):
float64 finite differences at orders 1 and 2 through masks and initial states, fw.function
on a second call with other inputs, masks through functional models, a user-written cell,
dropout in training only, configs, and the one-line errors."""
import numpy as np
import pytest

import framework as fw
import layers
from framework.test import check_gradients

RNG = np.random.default_rng(0)
MASK = np.array([[1, 1, 0, 1], [0, 1, 1, 1]], dtype=bool)


def _layer_function(layer, x, mask, states):
    """``f(x, *states, *weights)``: the layer's outputs with its weights given as tensors."""
    kwargs = {"mask": fw.constant(mask)} if mask is not None else {}
    layer(x, initial_state=list(states), **kwargs)  # builds
    cell = layer.cell
    names = [name for name in ("kernel", "recurrent_kernel", "bias") if getattr(cell, name)
             is not None]
    count = len(states)

    def f(x, *args):
        held = {name: getattr(cell, name) for name in names}
        try:
            for name, value in zip(names, args[count:], strict=True):
                object.__setattr__(cell, name, value)
            return layer(x, initial_state=list(args[:count]), **kwargs)
        finally:
            for name, value in held.items():
                object.__setattr__(cell, name, value)
    return f, [v.numpy() for v in layer.weights]


@pytest.mark.parametrize("make, states", [
    (lambda: layers.SimpleRNN(2, return_sequences=True, dtype="float64"), 1),
    (lambda: layers.GRU(2, return_state=True, dtype="float64"), 1),
    (lambda: layers.GRU(2, reset_after=False, go_backwards=True, return_sequences=True,
                        dtype="float64"), 1),
    (lambda: layers.LSTM(2, return_sequences=True, return_state=True, dtype="float64"), 2),
])
@pytest.mark.parametrize("masked", [False, True])
def test_finite_differences_orders_1_and_2(make, states, masked):
    x = RNG.normal(size=(2, 4, 3))
    initial = [RNG.normal(size=(2, 2)) for _ in range(states)]
    f, weights = _layer_function(make(), fw.constant(x), MASK if masked else None,
                                 [fw.constant(s) for s in initial])
    check_gradients(f, x, *initial, *weights, order=2)


def test_stacked_and_bidirectional_finite_differences():
    x = RNG.normal(size=(2, 4, 3))
    stacked = layers.RNN([layers.LSTMCell(2, dtype="float64"), layers.GRUCell(2, dtype="float64")],
                         return_sequences=True, dtype="float64")
    both = layers.Bidirectional(layers.SimpleRNN(2, return_sequences=True, dtype="float64"),
                                merge_mode="mul", dtype="float64")
    mask = fw.constant(MASK)
    for layer in (stacked, both):
        check_gradients(lambda x: layer(x, mask=mask), x, order=2)


def _lstm_model():
    return layers.Sequential([layers.Embedding(10, 4, mask_zero=True),
                              layers.Bidirectional(layers.LSTM(3, return_sequences=True)),
                              layers.GlobalAveragePooling1D(), layers.Dense(2)])


TOKENS = np.array([[3, 4, 0, 0], [0, 7, 2, 9]], dtype=np.int32)


def test_fw_function_gives_eager_answers_on_a_second_call():
    model = _lstm_model()
    model(TOKENS)
    step = fw.function(lambda t: model(t))
    step(TOKENS)
    other = np.array([[5, 0, 0, 0], [1, 2, 3, 4]], dtype=np.int32)
    np.testing.assert_array_equal(step(other).numpy(), model(other).numpy())
    lstm = layers.LSTM(3, return_state=True)
    first, second = (fw.constant(RNG.normal(size=(2, 5, 3)).astype(np.float32))
                     for _ in range(2))
    traced = fw.function(lambda x, m: lstm(x, mask=m))
    traced(first, fw.constant(np.ones((2, 5), bool)))
    mask = fw.constant(np.array([[1, 1, 0, 0, 0], [0, 1, 1, 1, 1]], bool))
    for got, want in zip(traced(second, mask), lstm(second, mask=mask), strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_the_mask_travels_through_sequential_and_functional_models():
    sequential = _lstm_model()
    sequential(TOKENS)
    inputs = layers.Input((4,), dtype="int32")
    x = layers.Embedding(10, 4, mask_zero=True)(inputs)
    x = layers.Bidirectional(layers.LSTM(3, return_sequences=True))(x)
    x = layers.GlobalAveragePooling1D()(x)
    functional = layers.Model(inputs, layers.Dense(2)(x))
    functional.set_weights(sequential.get_weights())
    np.testing.assert_allclose(functional(TOKENS).numpy(), sequential(TOKENS).numpy(),
                               rtol=1e-6)
    embedded = layers.Embedding(10, 4, mask_zero=True)(TOKENS)
    np.testing.assert_array_equal(embedded._keras_mask.numpy(), TOKENS != 0)
    dense = layers.Dense(3)(embedded)  # Dense passes a mask on, as in Keras
    assert dense._keras_mask is embedded._keras_mask
    last = layers.LSTM(3)(embedded)
    assert getattr(last, "_keras_mask", None) is None  # a last output carries no mask
    # masked trailing steps change nothing: the same as the sequence cut short (no mask)
    sequence = layers.Embedding(10, 4, mask_zero=True)(np.array([[3, 4, 0, 0]], np.int32))
    lstm = layers.LSTM(3)
    np.testing.assert_allclose(lstm(sequence).numpy(), lstm(sequence[:, :2]).numpy(),
                               rtol=1e-6)


class MinimalRNNCell(layers.Layer):
    """Keras's documentation's user-written cell."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units))
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, self.units))

    def call(self, inputs, states):
        output = fw.matmul(inputs, self.kernel) + fw.matmul(states[0], self.recurrent_kernel)
        return output, [output]


def test_a_user_written_cell_and_a_list_of_them():
    x = fw.constant(RNG.normal(size=(2, 3, 4)).astype(np.float32))
    layer = layers.RNN(MinimalRNNCell(5), return_sequences=True)
    out = layer(x)
    cell, h = layer.cell, np.zeros((2, 5), np.float32)
    for t in range(3):
        h = x.numpy()[:, t] @ cell.kernel.numpy() + h @ cell.recurrent_kernel.numpy()
        np.testing.assert_allclose(out.numpy()[:, t], h, rtol=1e-5, atol=1e-6)
    stacked = layers.RNN([MinimalRNNCell(5), MinimalRNNCell(2)], return_state=True)
    output, first, second = stacked(x)
    assert output.shape == (2, 2) and first.shape == (2, 5) and second.shape == (2, 2)
    assert [v.shape for v in stacked.weights] == [(4, 5), (5, 5), (5, 2), (2, 2)]


def test_dropout_applies_in_training_only_with_one_mask_per_sequence():
    x = fw.constant(RNG.normal(size=(4, 6, 3)).astype(np.float32))
    for make in (layers.SimpleRNN, layers.GRU, layers.LSTM):
        plain, dropped = make(4, return_sequences=True), make(4, dropout=0.5,
                                                              recurrent_dropout=0.3,
                                                              return_sequences=True)
        plain(x)
        dropped(x)
        dropped.set_weights(plain.get_weights())
        np.testing.assert_array_equal(dropped(x).numpy(), plain(x).numpy())
        trained = dropped(x, training=True).numpy()
        assert not np.allclose(trained, plain(x).numpy())
        assert dropped.cell._masks is None  # drawn for one sequence, then dropped
    inputs = fw.constant(np.ones((2, 4, 8), np.float32))
    cell = layers.SimpleRNNCell(3, dropout=0.5, recurrent_initializer="zeros",
                                kernel_initializer="ones")
    out = layers.RNN(cell, return_sequences=True)(inputs, training=True).numpy()
    np.testing.assert_allclose(out[:, 1:], np.broadcast_to(out[:, :1], out[:, 1:].shape),
                               rtol=1e-6)  # the same input mask at every step
    layer = layers.LSTM(4, dropout=0.5)
    layer(x)
    traced = fw.function(lambda x: layer(x, training=True))
    assert not np.array_equal(traced(x).numpy(), traced(x).numpy())  # fresh masks each call


def test_bidirectional_copies_and_weight_order():
    layer = layers.Bidirectional(layers.GRU(3, name="g"), merge_mode="ave")
    layer(np.zeros((2, 4, 2), np.float32))
    assert layer.forward_layer.name == "forward_g" and layer.backward_layer.name == "backward_g"
    assert layer.backward_layer.go_backwards and not layer.forward_layer.go_backwards
    assert [v.name for v in layer.weights] == ["kernel", "recurrent_kernel", "bias"] * 2
    copy = layers.Bidirectional.from_config(layer.get_config())
    assert copy.merge_mode == "ave" and copy.backward_layer.go_backwards


def test_configs_round_trip_and_registered_names():
    for layer in (layers.LSTM(3, unit_forget_bias=False, return_sequences=True),
                  layers.GRU(2, reset_after=False, go_backwards=True),
                  layers.SimpleRNN(4, activation="relu", unroll=True),
                  layers.RNN([layers.LSTMCell(2), layers.GRUCell(3)], return_state=True),
                  layers.TimeDistributed(layers.Dense(3)), layers.Masking(-1.0)):
        copy = type(layer).from_config(layer.get_config())
        assert copy.get_config() == layer.get_config()
    for name in ("simple_rnn", "gru", "lstm", "rnn", "simple_rnn_cell", "gru_cell",
                 "lstm_cell", "stacked_rnn_cells", "bidirectional", "time_distributed",
                 "masking"):
        assert name in layers.LAYERS
    lstm = layers.LSTM(3)
    lstm(np.zeros((1, 2, 2), np.float32))
    np.testing.assert_array_equal(lstm.cell.bias.numpy(), [0] * 3 + [1] * 3 + [0] * 6)
    q = lstm.cell.recurrent_kernel.numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-5)  # orthogonal rows


def test_stateful_needs_the_same_batch_and_a_refused_call_changes_nothing():
    layer = layers.GRU(2, stateful=True)
    x = np.ones((2, 3, 2), np.float32)
    layer(x)
    before = [v.numpy().copy() for v in layer.states]
    assert not np.allclose(before[0], 0)
    with pytest.raises(ValueError, match="stateful with batch size 2, got inputs of batch "
                                         "size 3"):
        layer(np.ones((3, 3, 2), np.float32))
    np.testing.assert_array_equal(layer.states[0].numpy(), before[0])
    layer.reset_states()
    assert not layer.states[0].numpy().any()


@pytest.mark.parametrize("call, message", [
    (lambda: layers.LSTM(2)(np.zeros((4, 3), np.float32)),
     r"LSTM 'lstm\w*' expects inputs of shape \(batch, timesteps, features\), got shape "
     r"\(4, 3\)"),
    (lambda: layers.GRU(2)(np.zeros((2, 3, 1), np.float32), mask=np.ones((2, 4), bool)),
     r"GRU 'gru\w*': the mask must have shape \(2, 3\) \(batch, timesteps\), got \(2, 4\)"),
    (lambda: layers.LSTM(2)(np.zeros((2, 3, 1), np.float32),
                            initial_state=[np.zeros((2, 2), np.float32)]),
     r"LSTM 'lstm\w*': initial_state expects 2 tensor\(s\) of shapes \[\(2, 2\), \(2, 2\)\], "
     r"got shapes \[\(2, 2\)\]"),
    (lambda: layers.RNN(layers.Dense(3)),
     r"RNN: the cell Dense has no state_size"),
    (lambda: layers.TimeDistributed(layers.Dense(2))(np.zeros((2, 3, 1), np.float32),
                                                     mask=np.ones((2, 2), bool)),
     r"TimeDistributed 'time_distributed\w*': the mask must have shape \(2, 3\)"),
    (lambda: layers.Bidirectional(layers.LSTM(2), merge_mode="max"),
     r"Bidirectional: merge_mode must be one of"),
])
def test_bad_input_is_one_line_naming_the_layer(call, message):
    with pytest.raises(ValueError, match=message) as error:
        call()
    assert "\n" not in str(error.value)


def test_an_encoder_decoder_passes_states_in_a_functional_model():
    encoder_inputs, decoder_inputs = layers.Input((None, 3)), layers.Input((None, 2))
    encoder = layers.LSTM(4, return_state=True)
    decoder = layers.LSTM(4, return_sequences=True)
    _, h, c = encoder(encoder_inputs)
    dense = layers.Dense(5)
    model = layers.Model([encoder_inputs, decoder_inputs],
                         dense(decoder(decoder_inputs, initial_state=[h, c])))
    a = RNG.normal(size=(2, 6, 3)).astype(np.float32)
    b = RNG.normal(size=(2, 4, 2)).astype(np.float32)
    _, h, c = encoder(a)
    np.testing.assert_array_equal(model([a, b]).numpy(),
                                  dense(decoder(b, initial_state=[h, c])).numpy())
