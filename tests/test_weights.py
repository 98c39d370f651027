"""``save_weights`` / ``load_weights``: our format, and Keras 3 ``.weights.h5`` files.

The Keras files are written here with h5py in the layout that Keras 3.15 itself wrote
(``tests/reference/make_weights_reference.py`` recorded every dataset of its files and the
models' predictions), so the tests need neither TensorFlow nor Keras.
"""
import json
import os

import numpy as np
import pytest

import framework as fw
import layers
from framework import checkpoint_file
from layers.saving import keras_layout

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "reference", "weights_reference.json")) as _f:
    REFERENCE = json.load(_f)


class Subclassed(layers.Model):
    """The reference script's subclassed Keras model, ported."""

    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(5, activation="tanh")  # (assignment order matters: the
        self.blocks = [layers.Dense(units, activation=activation)  # ``layers`` list numbers
                       for units, activation in ((5, "relu"), (4, None))]  # Keras's names)
        self.out = layers.Dense(2)

    def call(self, x):
        for layer in [self.hidden, *self.blocks, self.out]:
            x = layer(x)
        return x


def _sequential():
    return layers.Sequential([layers.Dense(4, activation="relu"), layers.Dense(2)])


MODELS = {"sequential": _sequential, "subclassed": Subclassed}


def _built(kind):
    model = MODELS[kind]()
    model(np.zeros((1, 3), np.float32))
    return model


def test_our_format_round_trips(tmp_path):
    model = _built("subclassed")
    path = tmp_path / "model.weights.h5"  # a Keras-style name holding our format works too
    model.save_weights(path)
    other = _built("subclassed")
    other.load_weights(path)
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    x = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
    np.testing.assert_array_equal(model(x).numpy(), other(x).numpy())
    with pytest.raises(FileExistsError, match="overwrite=False"):
        model.save_weights(path, overwrite=False)


def test_mismatches_name_the_variable_and_load_nothing(tmp_path):
    small = layers.Sequential([layers.Dense(4), layers.Dense(2)])
    small(np.zeros((1, 3), np.float32))
    small.save_weights(tmp_path / "w")
    wide = layers.Sequential([layers.Dense(5), layers.Dense(2)])
    wide(np.zeros((1, 3), np.float32))
    before = wide.get_weights()
    with pytest.raises(ValueError, match="model/layers/0/kernel.*\\[3, 5\\].*\\[3, 4\\]"):
        wide.load_weights(tmp_path / "w")
    deeper = layers.Sequential([layers.Dense(4), layers.Dense(2), layers.Dense(1)])
    deeper(np.zeros((1, 3), np.float32))
    with pytest.raises(ValueError, match="objects with no value.*layers/2/kernel"):
        deeper.load_weights(tmp_path / "w")
    for a, b in zip(before, wide.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="not built yet"):
        layers.Sequential([layers.Dense(2)]).load_weights(tmp_path / "w")


def test_failed_save_keeps_the_old_file_and_corruption_is_named(tmp_path, monkeypatch):
    model = _built("sequential")
    path = tmp_path / "w.npz"
    model.save_weights(path)
    saved = path.read_bytes()

    def fail(f, **arrays):
        f.write(b"PK\x03\x04half")
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(checkpoint_file.np, "savez", fail)
    with pytest.raises(OSError):
        model.save_weights(path)
    monkeypatch.undo()
    assert path.read_bytes() == saved and os.listdir(tmp_path) == ["w.npz"]
    path.write_bytes(saved[:len(saved) // 3])
    with pytest.raises(fw.train.CheckpointError, match="w.npz.*truncated or corrupted"):
        model.load_weights(path)


# --- Keras 3 .weights.h5 -------------------------------------------------------------------------
def _write_keras_file(path, datasets):
    h5py = pytest.importorskip("h5py", reason="reading Keras .weights.h5 files needs h5py")
    with h5py.File(path, "w") as f:
        for key, value in datasets.items():
            f.create_dataset(key, data=np.asarray(value, np.float32))


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_our_walk_gives_keras_layout(kind):
    recorded = {key.rsplit("/vars/", 1)[0] if "/vars/" in key else "" for key in
                REFERENCE[kind]["datasets"] if not key.startswith("optimizer/")}
    layout = {path for path, variables in keras_layout(_built(kind)).items() if variables}
    assert layout == recorded


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_keras_weights_file_loads_and_predicts_as_keras(tmp_path, kind):
    reference = REFERENCE[kind]
    path = tmp_path / "model.weights.h5"
    _write_keras_file(path, reference["datasets"])
    model = _built(kind)
    model.load_weights(path)
    x = np.asarray(reference["x"], np.float32)
    np.testing.assert_allclose(model(x).numpy(), reference["predictions"], rtol=1e-5, atol=1e-6)


def test_keras_file_that_does_not_fit_names_the_variable(tmp_path):
    datasets = dict(REFERENCE["sequential"]["datasets"])
    datasets["layers/dense/vars/0"] = np.zeros((3, 7))
    path = tmp_path / "bad.weights.h5"
    _write_keras_file(path, datasets)
    model = _built("sequential")
    before = model.get_weights()
    with pytest.raises(ValueError, match="'layers/dense/vars/0' in the file \\(3, 7\\)"):
        model.load_weights(path)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)
    extra = dict(REFERENCE["sequential"]["datasets"], **{"layers/dense_2/vars/0": [1.0]})
    _write_keras_file(path, extra)
    with pytest.raises(ValueError, match="no variable for: \\['layers/dense_2/vars/0'\\]"):
        model.load_weights(path)
