"""Keras 3's preprocessing layers: outputs, dtypes, configs and what ``adapt`` learns against
Keras's own (recorded by tests/reference/make_keras_preprocessing_reference.py; no TensorFlow
needed), float64 finite differences at orders 1 and 2 where differentiable, ``fw.function``
replays, a model with ``Normalization`` that saves, loads and trains, the augmentations'
statistics and exact geometry, and one-line errors for bad arguments."""
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
                        "keras_preprocessing_reference.json").read_text())
CLASSES = {"normalization": "Normalization", "category_encoding": "CategoryEncoding",
           "discretization": "Discretization", "integer_lookup": "IntegerLookup",
           "string_lookup": "StringLookup"}
CASES = {f"{group}/{name}": (group, case) for group in (*CLASSES, "images")
         for name, case in REFERENCE[group].items()}


IMAGE_CLASSES = {"resizing": "Resizing", "center_crop": "CenterCrop",
                 "random_flip": "RandomFlip", "random_contrast": "RandomContrast"}


def class_of(group, key):
    if group != "images":
        return CLASSES[group]
    name = key.split("/")[1]
    return next(c for prefix, c in IMAGE_CLASSES.items() if name.startswith(prefix))


def adapt_data(case):
    data = case["adapt"]
    if case["keras_config"].get("axis") == [-1] and isinstance(data[0][0], list):
        return [np.array(batch, np.float32) for batch in data]  # (a list of batches)
    return np.array(data)


def made(key, adapted=True):
    """The layer of ``key`` from Keras's config (what adapt learned left out), adapted to the
    recorded data when Keras's was."""
    group, case = CASES[key]
    config = {k: v for k, v in case["keras_config"].items() if k not in ("name", "dtype")}
    if "adapt" in case:
        for learned in ("bin_boundaries", "vocabulary"):
            if learned in config:
                config[learned] = None
    layer = getattr(layers, class_of(group, key))(**config)
    if "adapt" in case and adapted:
        layer.adapt(adapt_data(case))
    return layer


def x_of(case):
    return np.array(case["x"], str if case["x_dtype"] == "str" else case["x_dtype"])


def kwargs_of(case):
    return {k: np.array(v, np.float32) for k, v in case["call_kwargs"].items()}


def close(actual, expected, **tolerance):
    if np.asarray(expected).dtype.kind == "U":  # (tokens: equal, not close)
        np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected))
        return
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected),
                               **(tolerance or {"rtol": 1e-5, "atol": 1e-5}))


def dtype_name(tensor):
    return "string" if tensor.dtype.kind == "U" else tensor.dtype.name


@pytest.mark.parametrize("key", sorted(CASES))
def test_outputs_and_dtypes_match_keras(key):
    _, case = CASES[key]
    y = made(key)(x_of(case), **kwargs_of(case))
    assert dtype_name(y) == case["y_dtype"]
    close(y, case["y"])


@pytest.mark.parametrize("key", sorted(k for k, (_, c) in CASES.items() if "adapt" in c))
def test_adapt_learns_what_keras_learns(key):
    group, case = CASES[key]
    layer = made(key)
    if group == "normalization":
        weights = {w.name: w.numpy() for w in layer.weights}
        assert list(weights) == list(case["weights"]) == ["mean", "variance", "count"]
        assert all(not w.trainable for w in layer.weights)
        for name, value in case["weights"].items():
            close(weights[name], value, rtol=2e-6, atol=1e-6)
    elif group == "discretization":
        close(layer.bin_boundaries, case["keras_config"]["bin_boundaries"], rtol=1e-6, atol=0)
    else:
        assert layer.get_vocabulary() == case["vocabulary"]
        assert layer.vocabulary_size() == case["keras_config"]["vocabulary_size"]


@pytest.mark.parametrize("key", sorted(CASES))
def test_config_has_keras_keys_and_round_trips(key):
    _, case = CASES[key]
    layer = made(key)
    config = layer.get_config()
    assert set(config) == set(case["keras_config"])
    for name, value in case["keras_config"].items():
        learned = "adapt" in case and name in ("vocabulary", "bin_boundaries")
        if name not in ("name", "dtype") and not learned:
            assert json.loads(json.dumps(config[name])) == value, name
    again = type(layer).from_config(json.loads(json.dumps(config)))
    assert json.loads(json.dumps(again.get_config())) == json.loads(json.dumps(config))
    if "mean" in case["keras_config"] and case["keras_config"]["mean"] is None:
        again.build(x_of(case).shape)
        again.set_weights(layer.get_weights())  # (Normalization's state is weights, not config)
    close(again(x_of(case), **kwargs_of(case)), case["y"])


@pytest.mark.parametrize("key", sorted(k for k, (_, c) in CASES.items()
                                 if np.ndim(c["x"]) > 1 and np.ndim(c["y"]) > 1))
def test_output_shapes_symbolic_and_computed(key):
    _, case = CASES[key]
    x = x_of(case)
    expected = list(np.shape(case["y"]))
    if x.dtype.kind != "U":  # (the framework's Input has no string dtype)
        symbolic = made(key)(layers.Input(x.shape[1:], dtype=x.dtype))
        assert list(symbolic.shape) == [None, *expected[1:]]
    assert list(made(key).compute_output_shape((None, *x.shape[1:]))) == [None, *expected[1:]]
    assert list(made(key).compute_output_shape(x.shape)) == expected


@pytest.mark.parametrize("key", sorted(CASES))
def test_a_traced_function_gives_eager_values_on_a_second_call(key):
    _, case = CASES[key]
    layer, x = made(key), x_of(case)
    kwargs = kwargs_of(case)
    traced = fw.function(lambda t: layer(t, **kwargs))
    close(traced(x), case["y"])
    rng = np.random.default_rng(5)
    if x.dtype.kind == "f":
        second = (rng.normal(size=x.shape) * 2).astype(x.dtype)
    else:
        second = rng.permutation(x.reshape(-1)).reshape(x.shape)
    close(traced(second), layer(second, **kwargs), rtol=1e-6, atol=1e-6)


DIFFERENTIABLE = ["normalization/given", "normalization/adapt_array",
                  "normalization/adapt_invert", "normalization/adapt_images_axis_12",
                  "images/center_crop", "images/center_crop_odd"]


@pytest.mark.parametrize("key", DIFFERENTIABLE)
def test_gradients_equal_finite_differences_at_orders_1_and_2(key):
    group, case = CASES[key]
    config = {k: v for k, v in case["keras_config"].items() if k not in ("name", "dtype")}
    layer = getattr(layers, class_of(group, key))(**config, dtype="float64")
    if "adapt" in case:
        layer.adapt(adapt_data(case))
    x = np.random.default_rng(3).normal(size=np.shape(case["x"]))
    check_gradients(lambda t: layer(t), x, order=2)


# --- Normalization in a model ------------------------------------------------------------------
def normalization_model():
    ref = REFERENCE["normalization_model"]
    norm = layers.Normalization()
    norm.adapt(np.array(ref["adapt"], np.float32))
    model = layers.Sequential([layers.Input((4,)), norm, layers.Dense(2)])
    model.build((None, 4))
    model.layers[1].set_weights([np.array(w, np.float32) for w in ref["dense"]])
    return model, np.array(ref["x"], np.float32)


def test_a_model_with_normalization_matches_keras_and_has_its_weight_names():
    model, x = normalization_model()
    ref = REFERENCE["normalization_model"]
    close(model(x), ref["y"])
    assert [w.name for w in model.weights] == [p.rsplit("/", 1)[1] for p in ref["weight_paths"]]
    assert [w.path.split("/")[-2].rstrip("_0123456789") for w in model.weights] == \
        [p.split("/")[-2].rstrip("_0123456789") for p in ref["weight_paths"]]


def test_a_model_with_normalization_saves_and_loads(tmp_path):
    model, x = normalization_model()
    expected = model(x).numpy()
    model.save(tmp_path / "m.keras")
    again = keras.models.load_model(tmp_path / "m.keras")
    close(again(x), expected, rtol=1e-6, atol=1e-6)
    model.save_weights(tmp_path / "m.weights.h5")
    fresh = layers.Sequential([layers.Input((4,)), layers.Normalization(), layers.Dense(2)])
    fresh.load_weights(tmp_path / "m.weights.h5")
    close(fresh(x), expected, rtol=1e-6, atol=1e-6)


def test_a_keras_weights_file_of_a_model_with_normalization_has_our_layout_and_loads(tmp_path):
    from layers.saving import keras_layout
    ref = REFERENCE["normalization_model"]
    model, x = normalization_model()
    recorded = {key.rsplit("/vars/", 1)[0] for key in ref["datasets"]}
    assert {path for path, variables in keras_layout(model).items() if variables} == recorded
    h5py = pytest.importorskip("h5py", reason="reading Keras .weights.h5 files needs h5py")
    with h5py.File(tmp_path / "keras.weights.h5", "w") as f:
        for key, value in ref["datasets"].items():
            f.create_dataset(key, data=np.asarray(value, np.int64 if key.endswith("/2") and
                                                  "normalization" in key else np.float32))
    fresh = layers.Sequential([layers.Input((4,)), layers.Normalization(), layers.Dense(2)])
    fresh.build((None, 4))
    fresh.load_weights(tmp_path / "keras.weights.h5")
    close(fresh(x), ref["y"])


def test_fit_trains_a_model_starting_with_normalization_and_random_flip():
    rng = np.random.default_rng(0)
    images = rng.normal(3.0, 2.0, size=(64, 4, 4, 1)).astype(np.float32)
    y = 4 * (images.mean(axis=(1, 2, 3))[:, None] - 3.0)  # (unchanged by flips)
    norm = layers.Normalization(axis=None)
    norm.adapt(images)
    model = layers.Sequential([layers.Input((4, 4, 1)), norm, layers.RandomFlip(seed=1),
                               layers.Rescaling(0.5), layers.Flatten(), layers.Dense(8, "relu"),
                               layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    history = model.fit(images, y, epochs=20, batch_size=16, verbose=0).history["loss"]
    assert np.isfinite(history).all() and history[-1] < history[0] / 2
    np.testing.assert_array_equal(model.predict(images, verbose=0),
                                  model.predict(images, verbose=0))


def test_normalization_adapts_from_a_dataset_with_labels_and_in_batches():
    ref = REFERENCE["normalization"]["adapt_dataset"]
    data = np.array(ref["adapt"], np.float32)
    expected = ref["weights"]
    dataset = fw.data.Dataset.from_tensor_slices((data, data[:, 0])).batch(4)
    for adapt in (lambda n: n.adapt(dataset), lambda n: n.adapt(data, batch_size=4),
                  lambda n: n.adapt(fw.constant(data)), lambda n: n.adapt(dataset, steps=100)):
        norm = layers.Normalization()
        adapt(norm)
        close(norm.adapt_mean, expected["mean"], rtol=2e-6, atol=1e-6)
        close(norm.adapt_variance, expected["variance"], rtol=2e-6, atol=1e-6)
    norm = layers.Normalization()
    norm.adapt(dataset, steps=1)
    close(norm.adapt_mean, data[:4].mean(axis=0), rtol=1e-6)


def test_normalization_passes_the_gradient_to_its_input_not_its_state():
    norm = layers.Normalization()
    norm.adapt(np.array([[0.0, 1.0], [2.0, 5.0]], np.float32))
    x = fw.constant(np.ones((3, 2), np.float32))
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = fw.reduce_sum(norm(x))
    close(tape.gradient(y, x), np.tile(1 / np.sqrt([1.0, 4.0]), (3, 1)))
    assert norm.trainable_weights == []


# --- the augmentations -------------------------------------------------------------------------
IMAGES = np.random.default_rng(0).normal(size=(64, 5, 6, 3)).astype(np.float32)


@pytest.mark.parametrize("mode, axes", [("horizontal", (1,)), ("vertical", (0,)),
                                        ("horizontal_and_vertical", (0, 1))])
def test_random_flip_mirrors_about_half_of_the_images_exactly(mode, axes):
    y = layers.RandomFlip(mode)(IMAGES, training=True).numpy()
    flipped = np.array([np.array_equal(out, np.flip(x, axes)) for x, out in zip(IMAGES, y)])
    kept = np.array([np.array_equal(out, x) for x, out in zip(IMAGES, y)])
    assert (flipped | kept).all() and 16 < flipped.sum() < 48


@pytest.mark.parametrize("name", ["RandomFlip", "RandomContrast"])
def test_augmentations_are_the_identity_at_inference_and_draw_by_default(name):
    layer = layers.RandomFlip() if name == "RandomFlip" else layers.RandomContrast(0.5)
    np.testing.assert_array_equal(layer(IMAGES, training=False), IMAGES)
    model = layers.Sequential([layers.Input((5, 6, 3)), layer])
    np.testing.assert_array_equal(model.predict(IMAGES, verbose=0), IMAGES)
    assert not np.array_equal(layer(IMAGES), IMAGES)  # (Keras 3: training defaults to True)


@pytest.mark.parametrize("name", ["RandomFlip", "RandomContrast"])
def test_a_traced_function_draws_afresh_on_every_call(name):
    layer = layers.RandomFlip() if name == "RandomFlip" else layers.RandomContrast(0.5)
    step = fw.function(lambda t: layer(t, training=True))
    first, second = step(IMAGES).numpy(), step(IMAGES).numpy()
    assert not np.array_equal(first, second)


def test_a_seed_gives_a_reproducible_sequence_of_flips():
    one, two = layers.RandomFlip(seed=3), layers.RandomFlip(seed=3)
    draws = [(one(IMAGES).numpy(), two(IMAGES).numpy()) for _ in range(2)]
    np.testing.assert_array_equal(*draws[0])
    np.testing.assert_array_equal(*draws[1])
    assert not np.array_equal(draws[0][0], draws[1][0])


def test_random_contrast_scales_around_each_channel_mean_within_its_factor_range():
    x = np.random.default_rng(1).uniform(50, 200, size=(400, 4, 4, 2)).astype(np.float32)
    y = layers.RandomContrast((0.2, 0.4))(x, training=True).numpy()
    mean = x.mean(axis=(1, 2), keepdims=True)
    factor = ((y - mean) / (x - mean)).reshape(400, -1)
    np.testing.assert_allclose(factor, factor[:, :1].repeat(factor.shape[1], 1), rtol=1e-3)
    assert factor.min() >= 0.8 - 1e-4 and factor.max() <= 1.4 + 1e-4
    assert abs(factor[:, 0].mean() - 1.1) < 0.03
    clipped = layers.RandomContrast(1.0, value_range=(0, 120))(x, training=True).numpy()
    assert clipped.min() >= 0 and clipped.max() <= 120


def test_random_flip_passes_gradients_through_the_flip():
    x = fw.constant(IMAGES)
    fw.random.set_seed(2)
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = layers.RandomFlip("horizontal")(x, training=True)
        loss = fw.reduce_sum(y * IMAGES)
    grad = tape.gradient(loss, x).numpy()
    flipped = np.array([not np.array_equal(out, x) for x, out in zip(IMAGES, y.numpy())])
    np.testing.assert_allclose(grad[flipped], np.flip(IMAGES[flipped], 2))
    np.testing.assert_allclose(grad[~flipped], IMAGES[~flipped])


# --- the geometric augmentations, at fixed factors: Keras's own outputs ------------------------
TRANSFORMS = REFERENCE["transforms"]
TRANSFORM_CLASSES = {"rotation": "RandomRotation", "zoom": "RandomZoom",
                     "translation": "RandomTranslation"}


def transform(name, **kwargs):
    case = TRANSFORMS[name]
    config = {k: v for k, v in case["keras_config"].items() if k not in ("name", "dtype")}
    return getattr(layers, TRANSFORM_CLASSES[name.split("_")[0]])(**config, **kwargs)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_geometric_augmentations_at_a_fixed_factor_match_keras(name):
    case = TRANSFORMS[name]
    layer, x = transform(name), np.array(case["x"], np.float32)
    close(layer(x, training=True), case["y"])
    np.testing.assert_array_equal(layer(x, training=False), x)
    config = layer.get_config()
    assert set(config) == set(case["keras_config"])
    for key, value in case["keras_config"].items():
        if key not in ("name", "dtype"):
            assert json.loads(json.dumps(config[key])) == value, key
    assert type(layer).from_config(config).get_config() == config
    assert list(layer.compute_output_shape(x.shape)) == list(x.shape)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_geometric_augmentations_trace_and_replay_with_new_images(name):
    layer, x = transform(name), np.array(TRANSFORMS[name]["x"], np.float32)
    traced = fw.function(lambda t: layer(t, training=True))
    close(traced(x), TRANSFORMS[name]["y"])
    second = np.random.default_rng(7).normal(size=x.shape).astype(np.float32)
    close(traced(second), layer(second, training=True), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["rotation", "zoom_out_constant", "translation_wrap",
                                  "translation_nearest"])
def test_geometric_augmentations_gradients_equal_finite_differences(name):
    layer = transform(name, dtype="float64")
    x = np.random.default_rng(3).normal(size=np.shape(TRANSFORMS[name]["x"]))
    check_gradients(lambda t: layer(t, training=True), x, order=2)


@pytest.mark.parametrize("make", [lambda: layers.RandomRotation(0.0),
                                  lambda: layers.RandomZoom(0.0),
                                  lambda: layers.RandomTranslation(0.0, 0.0)])
def test_a_factor_range_of_zero_is_the_identity(make):
    close(make()(IMAGES, training=True), IMAGES, rtol=0, atol=1e-5)


def test_a_quarter_turn_of_a_square_image_is_rot90():
    x = np.random.default_rng(2).normal(size=(3, 5, 5, 2)).astype(np.float32)
    turned = layers.RandomRotation((0.25, 0.25))(x, training=True).numpy()
    close(turned, np.rot90(x, axes=(1, 2)), rtol=0, atol=1e-5)  # (counter-clockwise)


def test_an_integer_translation_shifts_the_pixels_exactly():
    x = np.random.default_rng(2).normal(size=(2, 5, 5, 1)).astype(np.float32)
    moved = layers.RandomTranslation((0.4, 0.4), (-0.2, -0.2), fill_mode="constant")(
        x, training=True).numpy()
    close(moved[:, 2:, :4], x[:, :3, 1:], rtol=0, atol=1e-6)  # (2 rows down, 1 column left)
    assert (moved[:, :2] == 0).all() and (moved[:, :, 4] == 0).all()


@pytest.mark.parametrize("make", [lambda: layers.RandomRotation(0.2),
                                  lambda: layers.RandomZoom(0.3),
                                  lambda: layers.RandomTranslation(0.2, 0.2)])
def test_geometric_augmentations_draw_one_transform_per_image_afresh_each_call(make):
    layer = make()
    step = fw.function(lambda t: layer(t, training=True))
    x = np.repeat(IMAGES[:1], 8, axis=0)
    first, second = step(x).numpy(), step(x).numpy()
    assert not np.array_equal(first, second)
    assert len({first[i].tobytes() for i in range(8)}) == 8  # (a draw per image)
    np.testing.assert_array_equal(layer(x, training=False), x)


def test_a_lookup_adapted_to_special_tokens_only_maps_everything_out_of_vocabulary():
    layer = layers.IntegerLookup(mask_token=0)
    layer.adapt(np.array([0, -1, 0]))
    assert layer.get_vocabulary() == [0, -1]
    np.testing.assert_array_equal(layer(np.array([[0, 5], [-1, 0]])), [[0, 1], [1, 0]])
    strings = layers.StringLookup(output_mode="count")
    strings.adapt(np.array(["[UNK]"]))
    np.testing.assert_array_equal(strings(np.array([["a", "b"]])), [[2]])


def test_the_new_names_are_in_fw_keras_layers():
    for name in ["Normalization", "CategoryEncoding", "Discretization", "IntegerLookup",
                 "Resizing", "CenterCrop", "RandomFlip", "RandomContrast", "RandomRotation",
                 "RandomZoom", "RandomTranslation", "StringLookup"]:
        assert getattr(keras.layers, name) is getattr(layers, name)
        assert layers.LAYERS.lookup(name) is getattr(layers, name)


# --- bad arguments ----------------------------------------------------------------------------
BAD = [
    (lambda: layers.Normalization(axis="last"), "Normalization: axis"),
    (lambda: layers.Normalization(mean=1.0), "Normalization: mean and variance"),
    (lambda: layers.Normalization(mean=[1.0, 2.0], variance=[1.0]),
     "Normalization: mean and variance"),
    (lambda: layers.Normalization()(np.ones((2, 3))), "Normalization 'p' was called before"),
    (lambda: layers.Normalization(axis=3).adapt(np.ones((2, 3))),
     "Normalization 'p': axis (3,) is out of bounds"),
    (lambda: layers.Normalization(mean=0.0, variance=1.0).adapt(np.ones((2, 3))),
     "Normalization 'p': adapt() needs"),
    (lambda: layers.Normalization().adapt([]), "Normalization 'p'.adapt: data has no batches"),
    (lambda: layers.Normalization().adapt([np.ones((2, 3)), np.ones((2, 4))]),
     "Normalization 'p'.adapt: a batch of shape (2, 4)"),
    (lambda: layers.CategoryEncoding(0), "CategoryEncoding: num_tokens"),
    (lambda: layers.CategoryEncoding(3, output_mode="int"), "CategoryEncoding: output_mode"),
    (lambda: layers.CategoryEncoding(3, sparse=True), "CategoryEncoding: sparse"),
    (lambda: layers.CategoryEncoding(3)(np.array([1]), count_weights=np.ones(1)),
     "CategoryEncoding 'p': count_weights"),
    (lambda: layers.Discretization(), "Discretization: give exactly one"),
    (lambda: layers.Discretization([1.0, 0.0]), "Discretization: bin_boundaries"),
    (lambda: layers.Discretization(num_bins=1), "Discretization: num_bins"),
    (lambda: layers.Discretization(num_bins=3, epsilon=0), "Discretization: epsilon"),
    (lambda: layers.Discretization([0.0]).adapt(np.ones(3)), "Discretization 'p': adapt()"),
    (lambda: layers.Discretization(num_bins=3)(np.ones(3)),
     "Discretization 'p' was called before"),
    (lambda: layers.IntegerLookup(vocabulary=[1, 1]), "IntegerLookup: vocabulary"),
    (lambda: layers.IntegerLookup(vocabulary=[1, -1]), "IntegerLookup: vocabulary"),
    (lambda: layers.IntegerLookup(num_oov_indices=-1), "IntegerLookup: num_oov_indices"),
    (lambda: layers.IntegerLookup(output_mode="tf_idf"), "IntegerLookup: output_mode"),
    (lambda: layers.IntegerLookup(mask_token="x"), "IntegerLookup: mask_token"),
    (lambda: layers.IntegerLookup(invert=True, output_mode="count"), "IntegerLookup: invert"),
    (lambda: layers.IntegerLookup(sparse=True), "IntegerLookup: sparse"),
    (lambda: layers.IntegerLookup()(np.ones(3, np.int64)), "IntegerLookup 'p' was called"),
    (lambda: layers.IntegerLookup(max_tokens=1), "IntegerLookup: max_tokens"),
    (lambda: layers.IntegerLookup().adapt(np.array(["a"])), "IntegerLookup 'p'.adapt: data"),
    (lambda: layers.StringLookup(num_oov_indices=2), "StringLookup: num_oov_indices"),
    (lambda: layers.StringLookup(vocabulary=["a", 3]), "StringLookup: vocabulary"),
    (lambda: layers.StringLookup(vocabulary=["a", "[UNK]"]), "StringLookup: vocabulary"),
    (lambda: layers.StringLookup(oov_token=0), "StringLookup: oov_token"),
    (lambda: layers.StringLookup(encoding="latin-1"), "StringLookup: encoding"),
    (lambda: layers.StringLookup(vocabulary=["a"])(np.array([1, 2])),
     "StringLookup 'p' takes string tensors"),
    (lambda: layers.Resizing(0, 3), "Resizing: height"),
    (lambda: layers.Resizing(3, 3, interpolation="cubic"), "Resizing: interpolation"),
    (lambda: layers.Resizing(3, 3, data_format="channels_first"), "Resizing: data_format"),
    (lambda: layers.Resizing(3, 3)(np.ones((3, 3))), "Resizing 'p' takes images of rank 3"),
    (lambda: layers.CenterCrop(2, "3"), "CenterCrop: width"),
    (lambda: layers.RandomFlip("diagonal"), "RandomFlip: mode"),
    (lambda: layers.RandomContrast(1.5), "RandomContrast: factor"),
    (lambda: layers.RandomContrast(0.5, value_range=(1, 0)), "RandomContrast: value_range"),
    (lambda: layers.RandomRotation(1.5), "RandomRotation: factor"),
    (lambda: layers.RandomRotation(0.1, fill_mode="mirror"), "RandomRotation: fill_mode"),
    (lambda: layers.RandomRotation(0.1, interpolation="bicubic"),
     "RandomRotation: interpolation"),
    (lambda: layers.RandomZoom((-1.0, 0.2)), "RandomZoom: height_factor"),
    (lambda: layers.RandomZoom(0.2, "a"), "RandomZoom: width_factor"),
    (lambda: layers.RandomTranslation(0.1, (0.1, 0.2, 0.3)), "RandomTranslation: width_factor"),
    (lambda: layers.RandomTranslation(0.1, 0.1, fill_value="x"), "RandomTranslation: fill_value"),
    (lambda: layers.RandomZoom(0.1)(np.ones((4, 4)), training=True),
     "RandomZoom 'p' takes images of rank 3"),
]


@pytest.mark.parametrize("make_it, start", BAD, ids=[b[1] for b in BAD])
def test_bad_arguments_raise_one_line_naming_the_layer_and_argument(make_it, start,
                                                                    monkeypatch):
    monkeypatch.setattr(layers.Layer, "name", property(lambda self: "p"))
    raises_one_line(make_it, (ValueError, TypeError), start)


def test_a_failed_adapt_leaves_the_layer_as_it_was():
    fresh = layers.Normalization()
    with pytest.raises(ValueError, match="does not fit the first"):
        fresh.adapt([np.ones((2, 2)), np.ones((2, 3))])
    assert fresh.weights == [] and not hasattr(fresh, "adapt_mean")
    norm = layers.Normalization()
    norm.adapt(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32))
    before = [w.numpy().copy() for w in norm.weights]
    with pytest.raises(ValueError):
        norm.adapt([np.ones((2, 2)), np.ones((2, 3))])
    with pytest.raises(ValueError, match="do not fit the layer's axes"):
        norm.adapt(np.ones((4, 3)))
    for w, value in zip(norm.weights, before):
        np.testing.assert_array_equal(w.numpy(), value)
