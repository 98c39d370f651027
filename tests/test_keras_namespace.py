"""``fw.keras`` mirrors ``tf.keras``: the lines recorded from Keras 3 through tf.keras
(tests/reference/make_keras_namespace_reference.py) run here with ``tf`` bound to ``framework``;
the namespace is a lazy view (the same objects, nothing above the engine imported with it);
``backend``, ``utils`` and ``datasets`` behave as Keras's."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import framework as fw
import layers
import optimizers
from framework import keras

REFERENCE = json.loads(
    (Path(__file__).parent / "reference" / "keras_namespace_reference.json").read_text())
ERRORS = {"ValueError": ValueError, "AttributeError": AttributeError}


def compare(got, expected):
    if isinstance(expected, dict) and "dtype" in expected and "values" not in expected:
        assert fw.as_dtype(got).name == expected["dtype"]
    elif isinstance(expected, dict):
        got = np.asarray(got)
        assert got.dtype.name == expected["dtype"] and list(got.shape) == expected["shape"]
        np.testing.assert_allclose(got, np.asarray(expected["values"]), rtol=1e-6, atol=1e-7)
    elif isinstance(expected, list):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            compare(g, e)
    else:
        assert got == expected


@pytest.mark.parametrize("name", sorted(REFERENCE["cases"]))
def test_the_recorded_line_gives_keras_answer(name):
    case = REFERENCE["cases"][name]
    scope = {"tf": fw, "np": np}
    exec(REFERENCE["setup"], scope)  # noqa: S102 - the recorded TF2 lines, renamed
    if "error" in case:
        with pytest.raises(ERRORS[case["error"]]) as raised:
            eval(case["line"], scope)  # noqa: S307
        assert str(raised.value) == case["message"]
    else:
        compare(eval(case["line"], scope), case["result"])  # noqa: S307


def test_the_views_hold_the_packages_own_objects():
    assert keras.layers.Dense is layers.Dense and fw.keras.Model is layers.Model
    assert keras.Sequential is layers.Sequential and keras.Input is layers.Input
    assert keras.models.Model is layers.Model and keras.models.Sequential is layers.Sequential
    assert keras.optimizers.Adam is optimizers.Adam
    assert keras.optimizers.schedules.ExponentialDecay is optimizers.schedules.ExponentialDecay
    assert keras.losses.MeanSquaredError is fw.losses.MeanSquaredError
    assert keras.metrics.Mean is fw.metrics.Mean
    assert keras.initializers.GlorotUniform is layers.initializers.GlorotUniform
    assert keras.regularizers.L2 is layers.regularizers.L2
    assert keras.activations.relu is layers.activations.relu
    from framework.keras.layers import Dense
    from framework.keras.optimizers.schedules import ExponentialDecay
    import framework.keras.backend as K
    assert Dense is layers.Dense and K is keras.backend
    assert ExponentialDecay is optimizers.schedules.ExponentialDecay
    assert "Dense" in dir(keras.layers) and "backend" in dir(keras)


def test_importing_the_engine_or_the_namespace_imports_nothing_above_it():
    code = ("import sys, framework, framework.keras.backend, framework.keras.layers, "
            "framework.keras.models, framework.keras.utils, framework.keras.datasets; "
            "print(sorted({'layers', 'optimizers'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=dict(os.environ, PYTHONPATH=os.getcwd()))
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("where, name, close", [
    (lambda: keras, "bakcend", "fw.keras.backend"),
    (lambda: keras.layers, "Dens", "fw.keras.layers.Dense"),
    (lambda: keras.backend, "meen", "fw.keras.backend.mean"),
    (lambda: keras.utils, "to_categorial", "fw.keras.utils.to_categorical"),
    (lambda: keras.models, "load_modle", "fw.keras.models.load_model"),
    (lambda: keras.datasets, "mnst", "fw.keras.datasets.mnist")])
def test_an_unknown_name_suggests_the_close_ones(where, name, close):
    with pytest.raises(AttributeError, match=f"did you mean {close}"):
        getattr(where(), name)


def test_set_floatx_sets_the_dtype_of_layers_and_variables_made_afterwards():
    before = layers.Dense(2)
    keras.backend.set_floatx("float64")
    try:
        dense = layers.Dense(2)
        out = dense(np.ones((1, 3), np.float32))
        assert out.dtype == fw.float64 and dense.kernel.dtype == fw.float64
        assert keras.backend.variable([1, 2]).dtype == fw.float64
        assert keras.backend.random_normal((2,)).dtype == fw.float64
    finally:
        keras.backend.set_floatx("float32")
    assert before(np.ones((1, 3))).dtype == fw.float32
    with pytest.raises(ValueError, match="Unknown `floatx` value: 'float8'"):
        keras.backend.set_floatx("float8")
    assert keras.backend.floatx() == "float32"


def test_set_epsilon_and_clear_session():
    keras.backend.set_epsilon(1e-5)
    try:
        assert keras.backend.epsilon() == 1e-5
    finally:
        keras.backend.set_epsilon(1e-7)
    keras.mixed_precision.set_global_policy("mixed_float16")
    keras.backend.clear_session()
    assert layers.Dense(1).name == "dense" and layers.Dense(1).name == "dense_1"
    assert keras.mixed_precision.global_policy().name == "float32"  # (Keras 3 resets it too)


def test_set_random_seed_repeats_every_generator():
    draws = []
    for _ in range(2):
        keras.utils.set_random_seed(7)
        draws.append((np.random.rand(), keras.backend.random_normal((3,)).numpy(),
                      layers.Dense(2)(np.ones((1, 2))).numpy()))
    for first, second in zip(*draws):
        np.testing.assert_array_equal(first, second)


def test_random_bernoulli_draws_with_probability_p():
    keras.utils.set_random_seed(0)
    draws = keras.backend.random_bernoulli((4000,), p=0.3).numpy()
    assert set(np.unique(draws)) == {0.0, 1.0} and abs(draws.mean() - 0.3) < 0.03


def test_the_tensor_helpers_under_fw_function_replay_eagers_numbers():
    K = keras.backend

    def step(x, y):
        return (K.mean(K.square(x - y), axis=-1) + K.sum(K.clip(x, 0.0, 1.0))
                + K.sum(keras.utils.normalize(x)) + K.sum(K.dot(x, K.transpose(y))))

    traced = fw.function(step)
    rng = np.random.default_rng(1)
    for _ in range(2):  # (the second call: new inputs, the traced plan)
        x, y = (fw.constant(rng.standard_normal((3, 4)).astype(np.float32)) for _ in "xy")
        np.testing.assert_allclose(traced(x, y).numpy(), step(x, y).numpy(), rtol=1e-6)


def test_the_tensor_helpers_differentiate_at_orders_one_and_two():
    K = keras.backend
    x = fw.constant(np.random.default_rng(2).uniform(0.5, 2.0, (2, 3)))
    fw.test.check_gradients(lambda x: K.mean(K.log(K.square(x)) * K.sqrt(x), axis=0), x,
                            order=2)
    fw.test.check_gradients(lambda x: keras.utils.normalize(x), x, order=2)
    fw.test.check_gradients(lambda x: keras.utils.normalize(x, order=1), x, order=2)


# --- datasets: Keras's cached files, read; never downloaded ---------------------------------------
@pytest.fixture
def keras_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KERAS_HOME", raising=False)
    folder = tmp_path / ".keras" / "datasets"
    folder.mkdir(parents=True)
    return folder


def test_a_missing_dataset_names_the_file_to_put_there(keras_home):
    with pytest.raises(FileNotFoundError) as raised:
        keras.datasets.mnist.load_data()
    message = str(raised.value)
    assert str(keras_home / "mnist.npz") in message and "never downloads" in message
    assert "\n" not in message


def test_mnist_reads_the_cached_npz(keras_home):
    rng = np.random.default_rng(0)
    arrays = {"x_train": rng.integers(0, 256, (4, 28, 28), dtype=np.uint8),
              "y_train": np.array([1, 2, 3, 4], np.uint8),
              "x_test": rng.integers(0, 256, (2, 28, 28), dtype=np.uint8),
              "y_test": np.array([5, 6], np.uint8)}
    np.savez(keras_home / "mnist.npz", **arrays)
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
    for got, key in zip((x_train, y_train, x_test, y_test), arrays):
        np.testing.assert_array_equal(got, arrays[key])
        assert got.dtype == np.uint8


def test_fashion_mnist_reads_the_cached_idx_files(keras_home):
    import gzip
    folder = keras_home / "fashion-mnist"
    folder.mkdir()
    images = np.arange(3 * 28 * 28, dtype=np.uint64).astype(np.uint8).reshape(3, 28, 28)
    for prefix, count in (("train", 3), ("t10k", 3)):
        with gzip.open(folder / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(bytes(8) + bytes([7, 8, 9][:count]))
        with gzip.open(folder / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(bytes(16) + images.tobytes())
    (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
    np.testing.assert_array_equal(x_train, images)
    np.testing.assert_array_equal(y_test, [7, 8, 9])


def test_cifar10_reads_the_extracted_batches(keras_home):
    import pickle
    folder = keras_home / "cifar-10-batches-py"
    folder.mkdir()
    rng = np.random.default_rng(1)
    batches = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, (2, 3072), dtype=np.uint8)
        batches[name] = data
        with open(folder / name, "wb") as f:
            pickle.dump({b"data": data, b"labels": [3, 4]}, f)
    (x_train, y_train), (x_test, y_test) = keras.datasets.cifar10.load_data()
    assert x_train.shape == (10, 32, 32, 3) and y_train.shape == (10, 1)
    np.testing.assert_array_equal(x_test[1], batches["test_batch"][1].reshape(3, 32, 32)
                                  .transpose(1, 2, 0))
    with open(folder / "test_batch", "wb") as f:
        pickle.dump({b"data": os.system}, f)  # (a batch that would run code when unpickled)
    with pytest.raises(pickle.UnpicklingError, match="may not hold"):
        keras.datasets.cifar10.load_data()


def test_boston_housing_and_imdb_split_as_keras(keras_home):
    recorded = REFERENCE["datasets"]
    x = np.array(recorded["boston_x"])
    np.savez(keras_home / "boston_housing.npz", x=x, y=np.arange(11.0))
    (x_train, y_train), (x_test, y_test) = keras.datasets.boston_housing.load_data(
        test_split=recorded["boston_test_split"])
    for got, expected in zip((x_train, y_train, x_test, y_test), recorded["boston"]):
        np.testing.assert_allclose(got, expected)
    reviews = np.empty(5, dtype=object)
    for i, review in enumerate(recorded["imdb_reviews"]):
        reviews[i] = review
    np.savez(keras_home / "imdb.npz", x_train=reviews[:3], y_train=np.array([0, 1, 0]),
             x_test=reviews[3:], y_test=np.array([1, 1]))
    got = keras.datasets.imdb.load_data(num_words=10, maxlen=6)
    expected = recorded["imdb"]
    assert [list(r) for r in got[0][0]] == expected[0] and got[0][1].tolist() == expected[1]
    assert [list(r) for r in got[1][0]] == expected[2] and got[1][1].tolist() == expected[3]
