"""Keras's model helpers: a ``Model`` subclass built functionally, ``Model.save("m.keras")`` /
``fw.keras.models.load_model``, ``clone_model`` (shapes and ``get_layer`` are replayed from
Keras in tests/test_keras_namespace.py)."""
import zipfile

import numpy as np
import pytest

import framework as fw
from framework import keras

X = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


class CustomModel(keras.Model):
    """What Keras's guides subclass to override ``train_step`` and still build functionally."""

    def twice(self, x):
        return self(x) * 2.0


def _functional():
    inputs = keras.Input((4,), name="features")
    a = keras.layers.Dense(3, activation="relu", name="a")(inputs)
    b = keras.layers.Dense(3, kernel_constraint="non_neg", name="b")(inputs)
    merged = keras.layers.Concatenate(name="merge")([a, b])
    merged = keras.layers.Dropout(0.3, name="drop")(merged)
    return inputs, [keras.layers.Dense(1, name="out")(merged), a]


@pytest.mark.parametrize("by_keyword", [False, True])
def test_a_model_subclass_built_from_inputs_and_outputs(by_keyword):
    inputs, outputs = _functional()
    model = (CustomModel(inputs=inputs, outputs=outputs[0]) if by_keyword
             else CustomModel(inputs, outputs[0]))
    assert isinstance(model, CustomModel) and isinstance(model, keras.Model)
    assert type(model).__name__ == "CustomModel" and model.name.startswith("custom_model")
    assert [layer.name for layer in model.layers] == ["features", "a", "b", "merge", "drop",
                                                      "out"]
    np.testing.assert_allclose(model.twice(X).numpy(), 2 * model(X).numpy())
    assert model.output_shape == (None, 1) and model.input_shape == (None, 4)


def test_a_subclass_with_its_own_init_passes_inputs_and_outputs_on():
    class Named(keras.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.note = "built"

    inputs, outputs = _functional()
    model = Named(inputs, outputs, name="named")
    assert model.note == "built" and model.name == "named" and len(model(X)) == 2


def test_a_subclassed_model_without_functional_arguments_is_unchanged():
    class Plain(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    model = Plain()
    assert type(model) is Plain and model(X).shape == (5, 2)


@pytest.mark.parametrize("kind", ["sequential", "functional", "subclass"])
def test_save_and_load_model_round_trip(tmp_path, kind):
    if kind == "sequential":
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="tanh"),
                                  keras.layers.Dropout(0.5, seed=3), keras.layers.Dense(2)])
    else:
        inputs, outputs = _functional()
        model = (keras.Model if kind == "functional" else CustomModel)(inputs, outputs)
    path = tmp_path / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["config.json", "metadata.json",
                                              "model.weights.ckpt"]
    loaded = keras.models.load_model(path, custom_objects={"CustomModel": CustomModel})
    assert type(loaded).__name__ == type(model).__name__
    assert isinstance(loaded, CustomModel) == (kind == "subclass")
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    assert [v.path for v in loaded.variables] == [v.path for v in model.variables]
    for got, want in zip(fw.nest.flatten(loaded.predict(X, verbose=0)),
                         fw.nest.flatten(model.predict(X, verbose=0))):
        np.testing.assert_array_equal(got, want)
    assert loaded.get_config() == model.get_config()


def test_a_constraint_survives_the_round_trip(tmp_path):
    inputs, outputs = _functional()
    keras.Model(inputs, outputs).save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    assert isinstance(loaded.get_layer("b").kernel.constraint, keras.constraints.NonNeg)


def test_save_and_load_refuse_what_they_cannot_do_in_one_line(tmp_path):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="`.keras` extension"):
        model.save(tmp_path / "m.h5")
    model.save(tmp_path / "m.keras")
    with pytest.raises(FileExistsError, match="overwrite=False"):
        model.save(tmp_path / "m.keras", overwrite=False)

    class Plain(keras.Model):
        def call(self, x):
            return x

    with pytest.raises(ValueError, match="subclassed model.*save_weights"):
        Plain().save(tmp_path / "p.keras")
    inputs, outputs = _functional()
    CustomModel(inputs, outputs).save(tmp_path / "c.keras")
    with pytest.raises(ValueError, match="custom_objects=\\{'CustomModel': CustomModel\\}"):
        keras.models.load_model(tmp_path / "c.keras")
    with pytest.raises(FileNotFoundError, match="no such file"):
        keras.models.load_model(tmp_path / "missing.keras")
    (tmp_path / "bad.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable .keras file"):
        keras.models.load_model(tmp_path / "bad.keras")
    unbuilt = keras.Sequential([keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="not built yet"):
        unbuilt.save(tmp_path / "u.keras")
    assert not (tmp_path / "u.keras").exists()


def test_clone_model_gives_the_same_architecture_with_new_weights():
    inputs, outputs = _functional()
    model = CustomModel(inputs, outputs)
    clone = keras.models.clone_model(model)
    assert type(clone) is type(model) and clone is not model
    assert [layer.name for layer in clone.layers] == [layer.name for layer in model.layers]
    assert all(a is not b for a, b in zip(clone.variables, model.variables))
    clone.set_weights(model.get_weights())
    np.testing.assert_array_equal(clone(X)[0].numpy(), model(X)[0].numpy())
    sequential = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
    assert keras.models.clone_model(sequential).count_params() == 10
    with pytest.raises(ValueError, match="subclassed"):
        keras.models.clone_model(type("Sub", (keras.Model,), {})())
