"""Keras 3's DepthwiseConv2D, SeparableConv2D, grouped Conv1D/Conv2D, Conv1DTranspose,
GroupNormalization and PReLU, and ``fw.nn.depthwise_conv2d`` / ``separable_conv2d``: outputs
and the gradients of inputs and weights against Keras's own (recorded by
tests/reference/make_keras_conv2_reference.py; no TensorFlow needed), float64 finite
differences at orders 1 and 2, the depthwise primitive's array VJP and Jacobians,
``fw.function`` replays (a second call, and one plan for a None batch), configs, a functional
model against Keras, ``fit``, and one-line errors for bad arguments."""
import json
import pathlib

import numpy as np
import pytest

import framework as fw
import layers
from framework import keras
from framework.test import check_gradients
from free_sizes import traces
from one_line import raises_one_line

REFERENCE = json.loads((pathlib.Path(__file__).parent / "reference" /
                        "keras_conv2_reference.json").read_text())
CASES = REFERENCE["layers"]
NAMES = sorted(CASES)


def close(actual, expected, rtol=1e-5, atol=1e-5):
    expected = np.asarray(expected, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol,
                               atol=atol * max(1.0, np.abs(expected).max()))


def built(case, dtype="float32"):
    """The case's layer, built for its input and given Keras's weights."""
    layer = getattr(layers, case["class"])(**case["config"], dtype=dtype)
    x = np.array(case["x"], dtype)
    layer(x)
    layer.set_weights([np.array(w, dtype) for w in case["weights"]])
    return layer, x


def other_input(x, seed=5):
    return np.random.default_rng(seed).normal(size=x.shape).astype(x.dtype)


# --- against Keras --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_outputs_and_input_and_weight_gradients_match_keras(name):
    case = CASES[name]
    layer, x = built(case)
    assert [w.name for w in layer.weights] == case["weight_names"]
    x = fw.constant(x)
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        loss = fw.reduce_sum(y * np.array(case["cotangent"], np.float32))
    close(y, case["y"])
    grads = tape.gradient(loss, [x] + layer.trainable_weights)
    close(grads[0], case["grad_x"])
    assert len(grads) == 1 + len(case["grad_weights"])
    for grad, expected in zip(grads[1:], case["grad_weights"]):
        close(grad, expected, rtol=1e-4)


SKIPPED_KEYS = {"activity_regularizer", "beta_constraint", "gamma_constraint"}


@pytest.mark.parametrize("name", NAMES)
def test_config_has_keras_keys_and_values_and_round_trips(name):
    case = CASES[name]
    layer, x = built(case)
    config = layer.get_config()
    assert set(config) == set(case["keras_config"]) - SKIPPED_KEYS
    for key, value in case["keras_config"].items():
        if key in config and key not in ("name", "dtype") and not isinstance(value, dict):
            assert json.loads(json.dumps(config[key])) == value, key
    again = type(layer).from_config(config)
    assert again.get_config() == config
    again(x)
    again.set_weights(layer.get_weights())
    close(again(x), case["y"])


@pytest.mark.parametrize("name", NAMES)
def test_symbolic_and_computed_output_shapes_match_keras(name):
    case = CASES[name]
    shape = np.shape(case["x"])[1:]
    layer = getattr(layers, case["class"])(**case["config"])
    assert list(layer(layers.Input(shape)).shape) == case["symbolic_shape"]
    assert list(layer.compute_output_shape((None, *shape))) == case["symbolic_shape"]


MODEL = REFERENCE["model"]


def reference_model():
    pixels = layers.Input((8, 8, 3))
    x = layers.SeparableConv2D(8, 3, padding="same", depth_multiplier=2)(pixels)
    x = layers.GroupNormalization(groups=4)(x)
    x = layers.PReLU(shared_axes=[1, 2])(x)
    x = layers.DepthwiseConv2D(3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(4, 1, groups=2)(x)
    seq = layers.Reshape((16, 4))(x)
    seq = layers.Conv1DTranspose(2, 3, strides=2, padding="same")(seq)
    seq = layers.Conv1D(2, 3, groups=2)(seq)
    model = layers.Model(pixels, layers.Dense(2)(layers.Flatten()(seq)))
    model.set_weights([np.array(w, np.float32) for w in MODEL["weights"]])
    return model


def test_a_functional_model_of_the_new_layers_matches_keras():
    model, x = reference_model(), np.array(MODEL["x"], np.float32)
    assert list(model.output_shape) == MODEL["output_shape"]
    with fw.GradientTape() as tape:
        y = model(x)
        loss = fw.reduce_sum(y * np.array(MODEL["cotangent"], np.float32))
    close(y, MODEL["y"])
    grads = tape.gradient(loss, model.trainable_variables)
    assert len(grads) == len(MODEL["grads"])
    for grad, expected in zip(grads, MODEL["grads"]):
        close(grad, expected, rtol=1e-4)


def test_the_functional_model_saves_loads_and_rebuilds_from_its_config(tmp_path):
    model, x = reference_model(), np.array(MODEL["x"], np.float32)
    model.save(tmp_path / "m.keras")
    close(keras.models.load_model(tmp_path / "m.keras")(x), MODEL["y"])
    rebuilt = keras.Model.from_config(model.get_config())
    rebuilt.set_weights(model.get_weights())
    close(rebuilt(x), MODEL["y"])


def test_fit_trains_a_sequential_model_of_the_new_layers():
    fw.random.set_seed(1)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 8, 8, 3)).astype(np.float32)
    y = x.mean(axis=(1, 2, 3))[:, None] * 4.0
    model = layers.Sequential([
        layers.Input((8, 8, 3)), layers.SeparableConv2D(8, 3, padding="same"),
        layers.GroupNormalization(4), layers.PReLU(shared_axes=[1, 2]),
        layers.DepthwiseConv2D(3, strides=2, depth_multiplier=2), layers.Conv2D(4, 1, groups=4),
        layers.Reshape((9, 4)), layers.Conv1DTranspose(2, 2, strides=2),
        layers.Conv1D(2, 3, groups=2), layers.Flatten(), layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(x, y, epochs=8, batch_size=8, verbose=0).history["loss"]
    assert np.isfinite(history).all() and history[-1] < 0.7 * history[0]


# --- derivatives ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_input_gradients_equal_finite_differences_at_orders_1_and_2(name):
    case = CASES[name]
    layer, x = built(case, "float64")
    check_gradients(layer, other_input(x[:1], seed=3), order=2)


DEPTHWISE = [
    ((1, 5, 6, 3), (3, 2, 3, 2), {"strides": 1, "padding": "VALID"}),
    ((2, 5, 5, 2), (2, 2, 2, 1), {"strides": [1, 2, 2, 1], "padding": "SAME"}),
    ((1, 6, 5, 2), (3, 3, 2, 2), {"strides": (2, 1), "padding": "SAME"}),
    ((1, 6, 6, 2), (2, 3, 2, 1), {"strides": 1, "padding": "SAME", "dilations": (2, 1)}),
    ((1, 4, 4, 2), (2, 2, 2, 1), {"strides": 1,
                                  "padding": [[0, 0], [1, 0], [0, 2], [0, 0]]}),
]


def draws(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) for s in shapes]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", DEPTHWISE)
def test_depthwise_conv2d_is_each_channel_convolved_alone(x_shape, w_shape, kwargs):
    x, w = draws(x_shape, w_shape)
    y = fw.nn.depthwise_conv2d(x, w, **kwargs).numpy()
    per_channel = [fw.nn.conv2d(x[..., c:c + 1], w[:, :, c:c + 1, :], **kwargs).numpy()
                   for c in range(x_shape[3])]
    np.testing.assert_allclose(y, np.concatenate(per_channel, axis=-1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x_shape, w_shape, kwargs", DEPTHWISE)
def test_depthwise_conv2d_gradients_equal_finite_differences(x_shape, w_shape, kwargs):
    check_gradients(lambda x, w: fw.nn.depthwise_conv2d(x, w, **kwargs),
                    *draws(x_shape, w_shape), order=2)


def test_separable_conv2d_gradients_equal_finite_differences():
    check_gradients(lambda x, d, p: fw.nn.separable_conv2d(x, d, p, [1, 2, 2, 1], "SAME"),
                    *draws((1, 5, 4, 2), (2, 3, 2, 2), (1, 1, 4, 3)), order=2)


@pytest.mark.parametrize("x_shape, w_shape, kwargs", DEPTHWISE[:4])
def test_depthwise_array_vjps_equal_the_tensor_vjps(x_shape, w_shape, kwargs):
    """A gradient no tape records runs the array VJP; under an outer tape, the tensor VJPs
    (the windows' compositions); each argument alone, and both."""
    x, w = (fw.constant(a) for a in draws(x_shape, w_shape))
    g = fw.constant(draws(fw.nn.depthwise_conv2d(x, w, **kwargs).shape, seed=2)[0])
    for sources in ([x], [w], [x, w]):
        with fw.GradientTape(persistent=True) as tape:
            tape.watch([x, w])
            y = fw.nn.depthwise_conv2d(x, w, **kwargs)
        on_arrays = tape.gradient(y, sources, g)
        with fw.GradientTape():
            on_tensors = tape.gradient(y, sources, g)
        for a, t in zip(on_arrays, on_tensors):
            np.testing.assert_allclose(a.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def test_depthwise_jacobians_equal_the_gradients_row_by_row():
    x, w = (fw.constant(a) for a in draws((1, 4, 3, 2), (2, 2, 2, 2)))
    with fw.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        y = fw.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME")
        rows = [y[0, i, j, k] for i in range(4) for j in range(3) for k in range(4)]
    jacobians = tape.jacobian(y, [x, w])
    for source, jacobian in zip([x, w], jacobians):
        expected = np.stack([tape.gradient(r, source).numpy() for r in rows])
        np.testing.assert_allclose(jacobian.numpy(), expected.reshape(jacobian.shape),
                                   rtol=1e-12, atol=1e-12)


# --- fw.function ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_a_traced_function_gives_eager_values_on_a_second_call(name):
    case = CASES[name]
    layer, x = built(case)
    traced = fw.function(lambda t: layer(t))
    close(traced(x), case["y"])
    second = other_input(x)
    close(traced(second), layer(second), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_one_plan_of_a_none_batch_training_step_serves_every_batch_size(name):
    layer, x = built(CASES[name])

    def step(t):
        with fw.GradientTape() as tape:
            tape.watch(t)
            loss = fw.reduce_sum(fw.square(layer(t)))
        return [loss] + tape.gradient(loss, [t] + layer.trainable_weights)

    traced = fw.function(step, input_signature=[fw.TensorSpec([None, *x.shape[1:]],
                                                              fw.float32)])
    for size in (4, 3, 5, 2, 6):
        batch = fw.constant(other_input(np.concatenate([x] * 3)[:size], seed=size))
        for got, want in zip(traced(batch), step(batch)):
            close(got, want.numpy(), rtol=1e-5, atol=1e-5)
    assert traces(traced, 1, 2)


# --- arguments ------------------------------------------------------------------------------------
BAD = [
    (lambda: layers.DepthwiseConv2D(0), ValueError, "DepthwiseConv2D: kernel_size"),
    (lambda: layers.DepthwiseConv2D(3, depth_multiplier=0), ValueError,
     "DepthwiseConv2D: depth_multiplier"),
    (lambda: layers.DepthwiseConv2D(3, padding="full"), ValueError, "DepthwiseConv2D: padding"),
    (lambda: layers.DepthwiseConv2D(3, strides=2, dilation_rate=2), ValueError,
     "DepthwiseConv2D: strides and dilation_rate"),
    (lambda: layers.DepthwiseConv2D(3, data_format="channels_first"), ValueError,
     "DepthwiseConv2D: only data_format"),
    (lambda: layers.SeparableConv2D(0, 3), ValueError, "SeparableConv2D: filters"),
    (lambda: layers.SeparableConv2D(2, (3, 3, 3)), ValueError, "SeparableConv2D: kernel_size"),
    (lambda: layers.Conv2D(4, 3, groups=3), ValueError, "Conv2D: groups"),
    (lambda: layers.Conv1D(4, 3, groups=0), ValueError, "Conv1D: groups"),
    (lambda: layers.Conv1DTranspose(2, 3, strides=2, output_padding=2), ValueError,
     "Conv1DTranspose: output_padding"),
    (lambda: layers.Conv1DTranspose(2, 3, padding="causal"), ValueError,
     "Conv1DTranspose: padding"),
    (lambda: layers.GroupNormalization(0), ValueError, "GroupNormalization: groups"),
    (lambda: layers.GroupNormalization(2, axis=[1]), TypeError, "GroupNormalization: axis"),
    (lambda: layers.GroupNormalization(2, epsilon=0), ValueError, "GroupNormalization: epsilon"),
    (lambda: layers.PReLU(shared_axes=[0]), ValueError, "PReLU: shared_axes"),
    (lambda: layers.PReLU(shared_axes="1"), ValueError, "PReLU: shared_axes"),
]


@pytest.mark.parametrize("make_it, error, start", BAD, ids=[b[2] for b in BAD])
def test_bad_arguments_raise_one_line_naming_the_layer_and_argument(make_it, error, start):
    raises_one_line(make_it, error, start)


IMAGE = np.ones((2, 5, 5, 6), np.float32)
BAD_CALLS = [
    (lambda: layers.Conv2D(4, 3, groups=4)(IMAGE), "Conv2D 'p': groups=4 does not divide"),
    (lambda: layers.DepthwiseConv2D(3)(IMAGE[:, 0]), "DepthwiseConv2D 'p' needs inputs"),
    (lambda: layers.SeparableConv2D(2, 3)(IMAGE[:, 0]), "SeparableConv2D 'p' needs inputs"),
    (lambda: layers.GroupNormalization(4)(IMAGE), "GroupNormalization 'p': groups=4 must"),
    (lambda: layers.PReLU(shared_axes=4)(IMAGE), "PReLU 'p': shared axis 4"),
]


@pytest.mark.parametrize("call_it, start", BAD_CALLS, ids=[b[1][:30] for b in BAD_CALLS])
def test_bad_inputs_raise_one_line_naming_the_layer(call_it, start, monkeypatch):
    monkeypatch.setattr(layers.Layer, "name", property(lambda self: "p"))
    raises_one_line(call_it, ValueError, start)


def test_a_failed_build_leaves_no_weights():
    layer = layers.GroupNormalization(4)
    with pytest.raises(ValueError):
        layer(IMAGE)
    assert layer.weights == [] and layer.groups == 4


@pytest.mark.parametrize("op, args, start", [
    (fw.nn.depthwise_conv2d, (IMAGE, np.ones((3, 3, 4, 1), np.float32), 1, "SAME"),
     "depthwise_conv2d: input of shape (2, 5, 5, 6) has 6 channels"),
    (fw.nn.depthwise_conv2d, (IMAGE, np.ones((3, 3, 6), np.float32), 1, "SAME"),
     "depthwise_conv2d: filters must be 4-D"),
    (fw.nn.depthwise_conv2d, (IMAGE, np.ones((3, 3, 6, 1), np.float32), [1, 2, 2], "SAME"),
     "depthwise_conv2d: strides"),
    (fw.nn.separable_conv2d, (IMAGE, np.ones((3, 3, 6, 1), np.float32),
                              np.ones((2, 2, 6, 3), np.float32), 1, "SAME"),
     "separable_conv2d: pointwise_filter"),
    (fw.nn.separable_conv2d, (IMAGE, np.ones((3, 3, 6, 2), np.float32),
                              np.ones((1, 1, 6, 3), np.float32), 1, "SAME"),
     "separable_conv2d: pointwise_filter must have shape (1, 1, in * multiplier, out) for a "
     "depthwise_filter of shape (3, 3, 6, 2)"),
])
def test_the_ops_refuse_bad_arguments_in_one_line(op, args, start):
    raises_one_line(lambda: op(*args), ValueError, start)


def test_the_new_names_are_in_fw_keras_layers_and_fw_nn():
    for name in ["DepthwiseConv2D", "SeparableConv2D", "Conv1DTranspose", "GroupNormalization",
                 "PReLU"]:
        assert getattr(keras.layers, name) is getattr(layers, name)
        assert layers.LAYERS.lookup(name) is getattr(layers, name)
    assert callable(fw.nn.depthwise_conv2d) and callable(fw.nn.separable_conv2d)
    assert layers.DepthwiseConv2D(3).name.startswith("depthwise_conv2d")
    assert layers.SeparableConv2D(2, 3).name.startswith("separable_conv2d")
    assert layers.Conv1DTranspose(2, 3).name.startswith("conv1d_transpose")
    assert layers.GroupNormalization().name.startswith("group_normalization")
    assert layers.PReLU().name.startswith("p_re_lu")
