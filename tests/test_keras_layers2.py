"""Keras 3's reshaping, merging, rescaling, normalization and noise layers: outputs, input
gradients, configs and symbolic shapes against Keras's own (recorded by
tests/reference/make_keras_layers2_reference.py; no TensorFlow needed), float64 finite
differences at orders 1 and 2, ``fw.function`` replays, functional models that save, load and
clone, the noise layers' statistics, and one-line errors for bad arguments."""
import json
import pathlib

import numpy as np
import pytest

import framework as fw
import layers
from framework import keras
from framework.test import check_gradients
from one_line import raises_one_line

REFERENCE = json.loads((pathlib.Path(__file__).parent / "reference" /
                        "keras_layers2_reference.json").read_text())
CASES = REFERENCE["layers"]
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def close(actual, expected, **tolerance):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected, dtype=np.float32),
                               **(tolerance or TOLERANCE))


def make(case, **kwargs):
    return getattr(layers, case["class"])(**case["config"], **kwargs)


def inputs_of(case):
    return [np.array(x, dtype=case["dtype"]) for x in case["x"]]


def call(layer, xs, **kwargs):
    return layer(xs if len(xs) > 1 else xs[0], **kwargs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_and_input_gradients_match_keras(name):
    case = CASES[name]
    layer = make(case)
    xs = [fw.constant(x) for x in inputs_of(case)]
    floats = [x for x in xs if x.dtype.is_floating]
    with fw.GradientTape() as tape:
        tape.watch(floats)
        y = call(layer, xs)
        loss = fw.reduce_sum(y * np.array(case["cotangent"], np.float32))
    assert y.dtype.name == case["y_dtype"]
    close(y, case["y"])
    grads = tape.gradient(loss, floats) if floats else []
    assert len(grads) == len(case["grads"])
    for grad, expected in zip(grads, case["grads"]):
        close(grad, expected, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize("name", sorted(CASES))
def test_config_has_keras_keys_and_round_trips(name):
    case = CASES[name]
    layer = make(case)
    config = layer.get_config()
    assert set(config) == set(case["keras_config"])
    for key, value in case["keras_config"].items():
        if key not in ("name", "dtype"):
            assert json.loads(json.dumps(config[key])) == value, key
    again = type(layer).from_config(config)
    assert again.get_config() == config
    xs = inputs_of(case)
    close(call(again, xs), case["y"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_symbolic_output_shape_matches_keras(name):
    case = CASES[name]
    xs = inputs_of(case)
    symbolic = [layers.Input(x.shape[1:], dtype=case["dtype"]) for x in xs]
    assert list(call(make(case), symbolic).shape) == case["symbolic_shape"]
    shapes = [(None, *x.shape[1:]) for x in xs]
    assert list(make(case).compute_output_shape(shapes if len(xs) > 1 else shapes[0])) == \
        case["symbolic_shape"]


DIFFERENTIABLE = sorted(name for name, case in CASES.items() if case["dtype"] != "uint8")


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_equal_finite_differences_at_orders_1_and_2(name):
    case = CASES[name]
    layer = make(case, dtype="float64")
    rng = np.random.default_rng(3)  # (away from ties and zero rows: differentiable there)
    xs = [rng.normal(size=np.shape(x)) for x in case["x"]]
    check_gradients(lambda *ts: call(layer, list(ts)), *xs, order=2)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_traced_function_gives_eager_values_on_a_second_call(name):
    case = CASES[name]
    layer = make(case)
    first = inputs_of(case)
    rng = np.random.default_rng(5)
    second = [(x * 0 + rng.integers(0, 256, size=x.shape)).astype(x.dtype) if x.dtype == np.uint8
              else rng.normal(size=x.shape).astype(x.dtype) for x in first]
    traced = fw.function(lambda *ts: call(layer, list(ts)))
    close(traced(*first), case["y"])
    close(traced(*second), call(layer, second), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_plan_of_a_none_batch_signature_serves_every_batch_size(name):
    case = CASES[name]
    layer = make(case)
    xs = inputs_of(case)
    signature = [fw.TensorSpec([None, *x.shape[1:]], x.dtype) for x in xs]
    traced = fw.function(lambda *ts: call(layer, list(ts)), input_signature=signature)
    for repeats in (1, 3, 2):
        batch = [np.concatenate([x] * repeats) for x in xs]
        close(traced(*batch), call(layer, batch), rtol=1e-6, atol=1e-6)


def test_activity_regularization_adds_keras_loss_and_passes_inputs():
    ref = REFERENCE["activity_regularization"]
    layer = layers.ActivityRegularization(l1=0.1, l2=0.02)
    x = np.array(ref["x"], np.float32)
    close(layer(x), ref["y"])
    close([float(v) for v in layer.losses], ref["losses"])
    config = layer.get_config()
    assert set(config) == set(ref["keras_config"]) and (config["l1"], config["l2"]) == (0.1, 0.02)
    assert layers.ActivityRegularization.from_config(config).get_config() == config


def merge_model():
    a, b = layers.Input((6,), name="a"), layers.Input((6,), name="b")
    x = layers.Rescaling(2.0, offset=0.5)(a)
    d1, d2 = layers.Dense(4)(x), layers.Dense(4)(b)
    mixed = layers.Average()([layers.maximum([layers.multiply([d1, d2]),
                                              layers.subtract([d1, d2])]),
                              layers.minimum([d1, d2]), d2])
    mixed = layers.GaussianNoise(0.5)(layers.GaussianDropout(0.3)(mixed))
    seq = layers.RepeatVector(3)(layers.UnitNormalization()(mixed))
    seq = layers.Permute((2, 1))(layers.ActivityRegularization(0.01, 0.01)(seq))
    seq = layers.UpSampling1D(2)(layers.Cropping1D((0, 1))(layers.ZeroPadding1D(1)(seq)))
    seq = layers.SpatialDropout1D(0.4)(seq)
    pairs = layers.dot([seq, seq], axes=(1, 1))
    flat = layers.concatenate([layers.Flatten()(pairs), layers.Identity()(d1)])
    return layers.Model([a, b], layers.Dense(2)(flat))


def image_model():
    pixels = layers.Input((5, 5, 3), dtype="uint8")
    x = layers.Rescaling(1 / 255.0)(pixels)
    x = layers.Conv2D(2, 3)(layers.ZeroPadding2D(((1, 0), (1, 2)))(x))
    x = layers.UpSampling2D((2, 1))(x)
    x = layers.UpSampling2D(2, interpolation="bilinear")(x)
    x = layers.SpatialDropout2D(0.3)(layers.Cropping2D(((1, 2), (0, 1)))(x))
    return layers.Model(pixels, layers.Dense(3)(layers.Flatten()(x)))


MODELS = {"merge_model": (merge_model, np.float32), "image_model": (image_model, np.uint8)}


def loaded(kind, ref):
    model = MODELS[kind][0]()
    model.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    xs = [np.array(x, MODELS[kind][1]) for x in ref["x"]]
    return model, xs if len(xs) > 1 else xs[0]


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_functional_models_match_keras_outputs_losses_and_weight_gradients(kind):
    ref = REFERENCE[kind]
    model, xs = loaded(kind, ref)
    assert list(model.output_shape) == ref["output_shape"]
    with fw.GradientTape() as tape:
        y = model(xs, training=False)
        loss = fw.reduce_sum(y * np.array(ref["cotangent"], np.float32))
        loss = fw.math.add_n([loss, *model.losses]) if model.losses else loss
    close(y, ref["y"])
    close([float(v) for v in model.losses], ref["losses"])
    grads = tape.gradient(loss, model.trainable_variables)
    assert len(grads) == len(ref["grads"])
    for grad, expected in zip(grads, ref["grads"]):
        close(grad, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_functional_models_save_load_and_clone(kind, tmp_path):
    ref = REFERENCE[kind]
    model, xs = loaded(kind, ref)
    model.save(tmp_path / "m.keras")
    again = keras.models.load_model(tmp_path / "m.keras")
    close(again(xs), ref["y"])
    clone = keras.models.clone_model(model)
    assert [type(layer) for layer in clone.layers] == [type(layer) for layer in model.layers]
    clone.set_weights(model.get_weights())
    close(clone(xs), ref["y"])
    rebuilt = keras.Model.from_config(model.get_config())  # (Keras's own spelling)
    rebuilt.set_weights(model.get_weights())
    close(rebuilt(xs), ref["y"])


# --- the random layers ------------------------------------------------------------------------
NOISE = {"GaussianNoise": lambda: layers.GaussianNoise(0.3),
         "GaussianDropout": lambda: layers.GaussianDropout(0.2),
         "SpatialDropout1D": lambda: layers.SpatialDropout1D(0.3),
         "SpatialDropout2D": lambda: layers.SpatialDropout2D(0.3)}


def noise_input(name, shape_2d=(64, 6, 5, 40), shape_1d=(64, 30, 40)):
    shape = shape_2d if name == "SpatialDropout2D" else shape_1d
    return np.random.default_rng(0).uniform(1.0, 2.0, size=shape).astype(np.float32)


@pytest.mark.parametrize("name", sorted(NOISE))
def test_noise_layers_are_the_identity_at_inference(name):
    layer, x = NOISE[name](), noise_input(name)
    for kwargs in ({}, {"training": False}):
        np.testing.assert_array_equal(layer(x, **kwargs), x)
    model = layers.Sequential([layer])
    np.testing.assert_array_equal(model(x), x)


@pytest.mark.parametrize("name", sorted(NOISE))
def test_a_model_called_in_training_passes_training_to_the_noise(name):
    x = noise_input(name)
    model = layers.Sequential([NOISE[name]()])
    assert not np.array_equal(model(x, training=True), x)


def test_fit_trains_through_the_noise_layers_and_predict_is_deterministic():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 6, 4)).astype(np.float32)
    y = x.sum(axis=(1, 2))[:, None]
    model = layers.Sequential([layers.Input((6, 4)), layers.SpatialDropout1D(0.1),
                               layers.GaussianNoise(0.05), layers.GaussianDropout(0.05),
                               layers.Flatten(), layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(x, y, epochs=5, batch_size=16, verbose=0).history["loss"]
    assert np.isfinite(history).all() and history[-1] < history[0] / 2
    np.testing.assert_array_equal(model.predict(x, verbose=0), model.predict(x, verbose=0))


def test_gaussian_noise_adds_noise_of_its_standard_deviation():
    x = np.full((200, 500), 3.0, np.float32)
    noise = (layers.GaussianNoise(0.3)(x, training=True) - x).numpy()
    assert abs(noise.mean()) < 0.005 and abs(noise.std() - 0.3) < 0.005


def test_gaussian_dropout_multiplies_by_noise_of_mean_one():
    x = np.full((200, 500), 2.0, np.float32)
    factor = (layers.GaussianDropout(0.2)(x, training=True) / x).numpy()
    assert abs(factor.mean() - 1.0) < 0.005 and abs(factor.std() - np.sqrt(0.2 / 0.8)) < 0.005


@pytest.mark.parametrize("name", ["SpatialDropout1D", "SpatialDropout2D"])
def test_spatial_dropout_drops_whole_channels_and_scales_the_rest(name):
    x = noise_input(name)
    y = NOISE[name]()(x, training=True).numpy()
    flat_x, flat_y = x.reshape(x.shape[0], -1, x.shape[-1]), y.reshape(x.shape[0], -1,
                                                                       x.shape[-1])
    dropped = (flat_y == 0).all(axis=1)  # (example, channel): the whole feature map
    assert ((flat_y == 0).any(axis=1) == dropped).all()
    assert abs(dropped.mean() - 0.3) < 0.04
    kept = ~dropped[:, None, :].repeat(flat_x.shape[1], axis=1)
    np.testing.assert_allclose(flat_y[kept], flat_x[kept] / 0.7, rtol=1e-6)


def test_spatial_dropout_2d_channels_first_shares_the_mask_over_rows_and_columns():
    x = np.ones((32, 20, 4, 3), np.float32)
    y = layers.SpatialDropout2D(0.5, data_format="channels_first")(x, training=True).numpy()
    per_map = y.reshape(32, 20, -1)
    assert (per_map == per_map[:, :, :1]).all() and 0.3 < (per_map[:, :, 0] == 0).mean() < 0.7


@pytest.mark.parametrize("name", sorted(NOISE))
def test_a_traced_function_draws_fresh_noise_on_every_call(name):
    layer, x = NOISE[name](), noise_input(name)
    step = fw.function(lambda t: layer(t, training=True))
    first, second = step(x).numpy(), step(x).numpy()
    assert not np.array_equal(first, second)
    assert not np.array_equal(first, x)


@pytest.mark.parametrize("name", ["GaussianNoise", "GaussianDropout"])
def test_a_seed_gives_a_reproducible_sequence_of_draws(name):
    x = noise_input(name)
    one, two = (getattr(layers, name)(0.2, seed=7) for _ in range(2))
    draws = [(one(x, training=True).numpy(), two(x, training=True).numpy()) for _ in range(2)]
    np.testing.assert_array_equal(*draws[0])
    np.testing.assert_array_equal(*draws[1])
    assert not np.array_equal(draws[0][0], draws[1][0])
    assert one.get_config()["seed"] == 7


@pytest.mark.parametrize("name", sorted(NOISE))
def test_noise_layers_pass_gradients_through_their_draws(name):
    layer, x = NOISE[name](), fw.constant(noise_input(name))
    fw.random.set_seed(11)
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, training=True)
    grad = tape.gradient(y, x).numpy()
    if name == "GaussianNoise":
        np.testing.assert_array_equal(grad, np.ones_like(grad))
    else:  # y = x * factor, with the factor drawn: its gradient is the factor itself
        np.testing.assert_allclose(grad, y.numpy() / x.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(NOISE))
def test_noise_layer_configs_have_keras_keys_and_round_trip(name):
    layer = NOISE[name]()
    config = layer.get_config()
    keys = {"GaussianNoise": {"stddev", "seed"}, "GaussianDropout": {"rate", "seed"},
            "SpatialDropout1D": {"rate", "seed"},
            "SpatialDropout2D": {"rate", "seed", "data_format"}}[name]
    assert set(config) == keys | {"name", "trainable", "dtype"}
    assert type(layer).from_config(config).get_config() == config


# --- bad arguments ----------------------------------------------------------------------------
BAD = [
    (lambda: layers.Rescaling("big"), ValueError, "Rescaling: scale"),
    (lambda: layers.Rescaling(1.0, offset=[1, "x"]), ValueError, "Rescaling: offset"),
    (lambda: layers.Rescaling(None), ValueError, "Rescaling: scale"),
    (lambda: layers.Permute((1, 3)), ValueError, "Permute: dims"),
    (lambda: layers.Permute(2), ValueError, "Permute: dims"),
    (lambda: layers.RepeatVector(2.5), TypeError, "RepeatVector: n"),
    (lambda: layers.RepeatVector(0), ValueError, "RepeatVector: n"),
    (lambda: layers.ZeroPadding1D(-1), ValueError, "ZeroPadding1D: padding"),
    (lambda: layers.ZeroPadding1D((1, 2, 3)), ValueError, "ZeroPadding1D: padding"),
    (lambda: layers.ZeroPadding2D((1, 2, 3)), ValueError, "ZeroPadding2D: padding"),
    (lambda: layers.ZeroPadding2D(((1, 2), "a")), ValueError, "ZeroPadding2D: padding"),
    (lambda: layers.ZeroPadding2D(data_format="nhwc"), ValueError, "ZeroPadding2D: data_format"),
    (lambda: layers.Cropping1D((1,)), ValueError, "Cropping1D: cropping"),
    (lambda: layers.Cropping2D(-2), ValueError, "Cropping2D: cropping"),
    (lambda: layers.UpSampling1D("2"), TypeError, "UpSampling1D: size"),
    (lambda: layers.UpSampling1D(0), ValueError, "UpSampling1D: size"),
    (lambda: layers.UpSampling2D((2, 0)), ValueError, "UpSampling2D: size"),
    (lambda: layers.UpSampling2D(interpolation="cubic"), ValueError,
     "UpSampling2D: interpolation"),
    (lambda: layers.Dot("last"), TypeError, "Dot: axes"),
    (lambda: layers.Dot((1, 2, 3)), ValueError, "Dot: axes"),
    (lambda: layers.Dot((1, 1.5)), ValueError, "Dot: axes"),
    (lambda: layers.GaussianNoise(1.5), ValueError, "GaussianNoise: stddev"),
    (lambda: layers.GaussianDropout(-0.1), ValueError, "GaussianDropout: rate"),
    (lambda: layers.SpatialDropout1D(1.5), ValueError, "SpatialDropout1D: rate"),
    (lambda: layers.SpatialDropout2D(0.1, data_format="x"), ValueError,
     "SpatialDropout2D: data_format"),
    (lambda: layers.ActivityRegularization(l1=-1.0), ValueError, "ActivityRegularization: l1"),
    (lambda: layers.ActivityRegularization(l2="a"), ValueError, "ActivityRegularization: l2"),
    (lambda: layers.UnitNormalization(axis="last"), TypeError, "UnitNormalization: axis"),
]


@pytest.mark.parametrize("make_it, error, start", BAD, ids=[b[2] for b in BAD])
def test_bad_arguments_raise_one_line_naming_the_layer_and_argument(make_it, error, start):
    raises_one_line(make_it, error, start)


X3 = np.ones((2, 3, 4), np.float32)
BAD_CALLS = [
    (lambda: layers.Permute((2, 1))(np.ones((2, 3, 4, 5))), "Permute 'p' takes inputs of rank 3"),
    (lambda: layers.RepeatVector(2)(X3), "RepeatVector 'p' takes inputs of rank 2"),
    (lambda: layers.ZeroPadding2D()(X3), "ZeroPadding2D 'p' takes inputs of rank 4"),
    (lambda: layers.Cropping1D((2, 1))(X3), "Cropping1D 'p': cropping (2, 1) leaves nothing"),
    (lambda: layers.Cropping2D(1)(np.ones((1, 2, 5, 1))), "Cropping2D 'p': cropping (1, 1)"),
    (lambda: layers.UpSampling1D()(X3[0]), "UpSampling1D 'p' takes inputs of rank 3"),
    (lambda: layers.SpatialDropout2D(0.5)(X3, training=True),
     "SpatialDropout2D 'p' takes inputs of rank 4"),
    (lambda: layers.Subtract()([X3, X3, X3]), "Subtract 'p' takes a list of exactly 2"),
    (lambda: layers.Multiply()([X3]), "Multiply 'p' takes a list of at least 2"),
    (lambda: layers.Maximum()([X3, np.ones((2, 3, 5))]), "Maximum 'p': inputs of shapes"),
    (lambda: layers.Dot(2)([X3, np.ones((2, 4, 3))]), "Dot 'p': axis 2 of the first input"),
    (lambda: layers.Dot(0)([X3, X3]), "Dot 'p': axes 0 do not fit"),
    (lambda: layers.UnitNormalization(3)(X3), "UnitNormalization 'p': axis 3 is out of bounds"),
]


@pytest.mark.parametrize("call_it, start", BAD_CALLS, ids=[b[1][:24] for b in BAD_CALLS])
def test_bad_inputs_raise_one_line_naming_the_layer(call_it, start, monkeypatch):
    monkeypatch.setattr(layers.Layer, "name", property(lambda self: "p"))
    raises_one_line(call_it, ValueError, start)


def test_an_image_tutorial_model_starts_with_rescaling_and_declares_its_input_shape():
    model = keras.Sequential([keras.layers.Rescaling(1.0 / 255, input_shape=(6, 6, 3)),
                              keras.layers.Conv2D(2, 3), keras.layers.UpSampling2D(),
                              keras.layers.Flatten(), keras.layers.Dense(2)])
    lines = []
    model.summary(print_fn=lines.append)
    assert any("rescaling" in line and "(None, 6, 6, 3)" in line for line in lines)
    assert model.count_params() == 2 * 27 + 2 + 2 * 128 + 2
    pixels = np.random.default_rng(0).integers(0, 256, size=(3, 6, 6, 3)).astype(np.uint8)
    np.testing.assert_allclose(model(pixels), model(pixels.astype(np.float32)), rtol=1e-5,
                               atol=1e-6)


def test_the_new_names_are_in_fw_keras_layers():
    names = ["Identity", "Rescaling", "Permute", "RepeatVector", "ZeroPadding1D",
             "ZeroPadding2D", "Cropping1D", "Cropping2D", "UpSampling1D", "UpSampling2D",
             "Multiply", "Subtract", "Average", "Maximum", "Minimum", "Dot", "GaussianNoise",
             "GaussianDropout", "SpatialDropout1D", "SpatialDropout2D", "ActivityRegularization",
             "UnitNormalization", "add", "subtract", "multiply", "average", "maximum", "minimum",
             "concatenate", "dot"]
    for name in names:
        assert getattr(keras.layers, name) is getattr(layers, name)
        if name[0].isupper():
            assert layers.LAYERS.lookup(name) is getattr(layers, name)
