"""The functional API, predict, losses and regularizers, batch-norm state, the normalization
ops' gradients (float64 finite differences, orders 1 and 2), and the errors of the new layers."""
import numpy as np
import pytest

import framework as fw
from framework import keras
from framework.test import check_gradients
from layers import (LAYERS, Activation, Add, BatchNormalization, Dense, Dropout, Embedding, Input,
                    Lambda, Layer, LayerNormalization, LeakyReLU, Model, ReLU, Sequential, Softmax,
                    regularizers)
from layers.normalization import moments, normalize


def batch(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


# --- gradients of the normalization maths ------------------------------------------------------
@pytest.mark.parametrize("axes", [[1], [0], [1, 2], [0, 2]])
def test_normalization_gradients_match_finite_differences_to_second_order(axes):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4, 2))
    shape = [x.shape[a] if a in axes else 1 for a in range(3)]
    gamma, beta = rng.normal(size=shape), rng.normal(size=shape)

    def layer_norm(x, gamma, beta):
        mean, variance = moments(x, axes)
        return normalize(x, mean, variance, beta, gamma, 1e-3)

    check_gradients(layer_norm, x, gamma, beta, order=2)


def test_layers_in_float64_pass_the_gradient_check():
    x = batch(4, 3).astype(np.float64)
    for make in (lambda: LayerNormalization(dtype="float64"),
                 lambda: ReLU(max_value=2.0, negative_slope=0.2, threshold=0.1, dtype="float64"),
                 lambda: LeakyReLU(dtype="float64"), lambda: Softmax(dtype="float64"),
                 lambda: Activation("elu", dtype="float64")):
        layer = make()
        check_gradients(lambda t: layer(t), x + 0.05, order=2)
    norm = BatchNormalization(dtype="float64")
    check_gradients(lambda t: norm(t, training=True), x, order=2)


# --- ReLU's threshold and BatchNormalization's state ------------------------------------------
def test_relu_is_zero_at_the_threshold():
    out = ReLU(threshold=1.0)(np.array([0.5, 1.0, 1.5], np.float32)).numpy()
    np.testing.assert_array_equal(out, [0.0, 0.0, 1.5])


def test_batch_norm_moves_its_statistics_only_in_training_with_the_biased_variance():
    norm = BatchNormalization(momentum=0.5)
    x = batch(8, 3)
    norm(x)  # inference: the moving statistics stay
    np.testing.assert_array_equal(norm.moving_mean.numpy(), 0.0)
    out = norm(x, training=True).numpy()
    np.testing.assert_allclose(norm.moving_mean.numpy(), 0.5 * x.mean(0), rtol=1e-6)
    np.testing.assert_allclose(norm.moving_variance.numpy(), 0.5 + 0.5 * x.var(0), rtol=1e-6)
    np.testing.assert_allclose(out, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3), atol=1e-5)
    assert norm.trainable_variables == [norm.gamma, norm.beta]
    assert norm.non_trainable_variables == [norm.moving_mean, norm.moving_variance]
    norm.trainable = False  # frozen: inference mode even with training=True, as Keras 3
    before = norm.moving_mean.numpy()
    norm(x * 3, training=True)
    np.testing.assert_array_equal(norm.moving_mean.numpy(), before)


def test_training_reaches_batch_norm_inside_a_sequential_and_gradients_skip_moving_stats():
    model = Sequential([Dense(4), BatchNormalization(), Dense(1)])
    x = batch(16, 3)
    with fw.GradientTape() as tape:
        loss = fw.reduce_mean(model(x, training=True) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    assert len(grads) == 6 and all(g is not None for g in grads)
    assert np.any(model.layers[1].moving_mean.numpy() != 0)


# --- losses --------------------------------------------------------------------------------------
def test_add_loss_and_losses_of_sublayers_are_cleared_by_each_outer_call():
    class Penalized(Layer):
        def call(self, x):
            self.add_loss(fw.reduce_sum(x))
            return x

    class Outer(Model):
        def __init__(self):
            super().__init__()
            self.inner = Penalized()
            self.dense = Dense(2, kernel_regularizer="l2")

        def call(self, x):
            return self.dense(self.inner(x))

    model = Outer()
    model(np.ones((2, 3), np.float32))
    assert len(model.losses) == 2 and float(model.losses[0]) == 6.0
    model(np.ones((1, 3), np.float32))
    assert len(model.losses) == 2 and float(model.losses[0]) == 3.0
    expected = 0.01 * np.sum(model.dense.kernel.numpy() ** 2)
    np.testing.assert_allclose(float(model.losses[1]), expected, rtol=1e-6)


def test_regularization_losses_are_differentiable_and_follow_trainability():
    dense = Dense(2, kernel_regularizer=regularizers.L2(0.5))
    dense.build((None, 3))
    with fw.GradientTape() as tape:
        penalty = fw.add_n(dense.losses) if hasattr(fw, "add_n") else dense.losses[0]
    np.testing.assert_allclose(tape.gradient(penalty, dense.kernel).numpy(),
                               dense.kernel.numpy(), rtol=1e-6)  # d(0.5 * sum w^2) = w
    dense.trainable = False
    assert dense.losses == []


def test_regularizers_by_name_config_round_trip_and_bad_factors():
    assert isinstance(regularizers.get("l2"), regularizers.L2)
    assert regularizers.get("l1_l2").get_config() == {"l1": 0.0, "l2": 0.0}
    assert regularizers.l2 is regularizers.L2 and regularizers.get(None) is None
    original = regularizers.L1L2(l1=0.1, l2=0.2)
    again = regularizers.get(regularizers.serialize(original))
    assert again.get_config() == original.get_config()
    with pytest.raises(ValueError, match="l2 must be a non-negative float"):
        regularizers.L2(-1.0)
    with pytest.raises(ValueError, match="unknown regularizer 'l3'"):
        regularizers.get("l3")


# --- functional models and predict ---------------------------------------------------------------
def test_a_functional_model_runs_its_graph_on_dicts_and_nested_outputs():
    a, b = Input((3,), name="a"), Input((3,), name="b")
    shared = Dense(2, name="shared")
    total = Add(name="add")([shared(a), shared(b)])
    model = Model({"a": a, "b": b}, {"sum": total, "first": shared(a)})
    x, y = batch(4, 3), batch(4, 3, seed=1)
    out = model({"b": y, "a": x})
    expected = x @ shared.kernel.numpy() + y @ shared.kernel.numpy() + 2 * shared.bias.numpy()
    np.testing.assert_allclose(out["sum"].numpy(), expected, rtol=1e-5, atol=1e-6)
    assert model.trainable_variables == [shared.kernel, shared.bias]
    predicted = model.predict({"a": x, "b": y}, batch_size=3, verbose=0)
    assert set(predicted) == {"sum", "first"} and predicted["sum"].shape == (4, 2)


def test_functional_models_take_integer_inputs_training_flags_and_nest():
    ids = Input((5,), dtype="int32")
    hidden = Dropout(0.5)(Embedding(10, 4)(ids))
    inner = Model(ids, Dense(1)(hidden))
    outer_input = Input((5,), dtype="int32")
    outer = Model(outer_input, inner(outer_input))
    tokens = np.array([[1, 2, 3, 4, 5], [0, 0, 9, 9, 1]])
    assert outer(tokens).shape == (2, 5, 1)
    np.testing.assert_array_equal(outer(tokens).numpy(), outer(tokens).numpy())  # no dropout
    fw.random.set_seed(0)
    assert not np.allclose(outer(tokens, training=True).numpy(), outer(tokens).numpy())
    assert len(outer.variables) == 3


def test_predict_batches_and_returns_numpy_like_keras(capsys):
    inputs = Input((3,))
    model = Model(inputs, Softmax()(Dense(4)(inputs)))
    x = batch(70, 3)
    out = model.predict(x, verbose=0)
    assert isinstance(out, np.ndarray) and out.shape == (70, 4)
    np.testing.assert_allclose(out, model(x).numpy(), rtol=1e-6)
    assert capsys.readouterr().out == ""
    model.predict(x, batch_size=32)
    assert capsys.readouterr().out.startswith("3/3 ")
    batches = iter([(x[:5], None), (x[5:7], None)])  # an iterable of (x, y) batches
    assert model.predict(batches, verbose=0).shape == (7, 4)


def test_symbolic_tensors_and_functional_errors_name_the_culprit():
    inputs = Input((3,), name="pixels")
    with pytest.raises(TypeError, match="pixels is a symbolic tensor .* no value"):
        np.asarray(inputs)
    other = Input((3,), name="stray")
    out = Add()([Dense(3)(inputs), other])
    with pytest.raises(ValueError, match="Graph disconnected.*stray"):
        Model(inputs, out)
    model = Model(inputs, Dense(2)(inputs))
    with pytest.raises(ValueError, match=r"input 'pixels' expects shape \(None, 3\)"):
        model(np.zeros((2, 4), np.float32))
    with pytest.raises(TypeError, match="symbolic tensors of Input"):
        Model(inputs, np.zeros(3))
    twin = Input((3,))
    with pytest.raises(ValueError, match="used more than once"):
        Model(twin, Dense(2, name="same")(Dense(3, name="same")(twin)))


def test_functional_checkpoint_paths_and_summary():
    inputs = Input((3,))
    model = Model(inputs, Dense(1)(LayerNormalization()(inputs)))
    assert list(model.named_variables()) == ["layers/1/gamma", "layers/1/beta", "layers/2/kernel",
                                             "layers/2/bias"]
    lines = []
    model.summary(print_fn=lines.append)
    assert any("(None, 1)" in line for line in lines) and "Total params: 10" in lines


# --- the new layers' arguments -------------------------------------------------------------------
def test_new_layers_register_under_keras_names_and_round_trip_their_config():
    for name in ("activation", "re_lu", "leaky_re_lu", "elu", "softmax", "layer_normalization",
                 "batch_normalization", "embedding", "input_layer", "concatenate", "add"):
        assert name in LAYERS
    for layer in (LeakyReLU(), ReLU(max_value=6.0), LayerNormalization(axis=[1], epsilon=0.1),
                  BatchNormalization(momentum=0.9), Embedding(5, 2),
                  Dense(3, kernel_regularizer="l1")):
        config = layer.get_config()
        del config["name"]  # a copy gets a name of its own
        again = type(layer).from_config(config).get_config()
        assert again == {**config, "name": again["name"]}
    assert LeakyReLU().negative_slope == 0.3


@pytest.mark.parametrize("make, message", [
    (lambda: ReLU(max_value=-1.0), "max_value cannot be negative"),
    (lambda: LeakyReLU(negative_slope=-0.1), "negative_slope cannot be negative"),
    (lambda: BatchNormalization(momentum=1.5), "momentum must be in"),
    (lambda: LayerNormalization(epsilon=0), "epsilon must be positive"),
    (lambda: LayerNormalization(axis="last"), "axis must be an int"),
    (lambda: Embedding(0, 3), "input_dim must be a positive integer"),
])
def test_bad_arguments_raise_one_clear_error(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()


def test_bad_inputs_name_the_layer():
    with pytest.raises(ValueError, match=r"Embedding 'embedding.*\[0, 4\)"):
        Embedding(4, 2)(np.array([[1, 4]]))
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        LayerNormalization(axis=3)(batch(2, 3))


def test_sequential_takes_an_input_first_and_builds_from_it():
    model = Sequential([Input((4,)), Dense(3, name="d1"), Dense(2, name="d2")], name="stack")
    assert [layer.name for layer in model.layers] == ["d1", "d2"]
    lines = []
    model.summary(print_fn=lines.append)  # builds from the declared shape, without data
    assert [v.path for v in model.variables] == ["stack/d1/kernel", "stack/d1/bias",
                                                 "stack/d2/kernel", "stack/d2/bias"]
    with pytest.raises(ValueError, match="an Input can only come first"):
        Sequential([Dense(2), Input((4,))])
    renamed = Dense(2)
    renamed.name = "head"
    assert renamed.name == "head"


def test_operators_on_symbolic_tensors_are_operations_not_layers_as_keras():
    inputs = Input((3,))
    dense = Dense(3)
    hidden = inputs + dense(inputs)
    outputs = 1.0 - (-hidden[:, :2] * 2.0)
    doubled = Lambda(lambda t, factor: t * factor, arguments={"factor": 2.0})(outputs)
    model = Model(inputs, [outputs, doubled])
    assert [layer.name for layer in model.layers][1:] == [dense.name, model.layers[2].name]
    assert isinstance(model.layers[2], Lambda) and model.output[0] is outputs
    x = batch(2, 3)
    expected = 1.0 + 2.0 * (x + x @ dense.kernel.numpy() + dense.bias.numpy())[:, :2]
    first, second = model(x)
    np.testing.assert_allclose(first.numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(second.numpy(), 2 * expected, rtol=1e-5)
    assert list(model.named_variables()) == ["layers/1/kernel", "layers/1/bias"]


def test_model_from_config_rebuilds_a_functional_model_as_keras():
    """``keras.Model.from_config(model.get_config())``: the graph again (it raised on the
    layers key), as a subclass where the subclass asks; a Sequential's config stays its own."""
    inputs = keras.Input((4,))
    outputs = keras.layers.Dense(2)(keras.layers.Dense(3, activation="relu")(inputs))
    model = keras.Model(inputs, outputs)
    rebuilt = keras.Model.from_config(model.get_config())
    rebuilt.set_weights(model.get_weights())
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(rebuilt(x).numpy(), model(x).numpy())
    assert [layer.get_config()["units"] for layer in rebuilt.layers[1:]] == [3, 2]

    class Custom(keras.Model):
        pass
    assert isinstance(Custom.from_config(model.get_config()), Custom)
    sequential = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    assert type(keras.Sequential.from_config(sequential.get_config())) is keras.Sequential
