"""The runner's config reads the library's registries and the library's own checks: what the
library accepts, a config accepts; what it refuses, the config refuses in one line naming the
key; and a class registered by a user is usable from TOML with no edit to the runner."""

import numpy as np
import pytest

import framework as fw
import layers
import optimizers
from layers.activations import ACTIVATIONS
from training.build import build_training
from training.config.reading import ConfigError, load_config
from training.data import load_dataset
from training.loop import train

from tiny_config import tiny_config

BASE = tiny_config(dropout=True)


def write(tmp_path, text):
    path = tmp_path / "run.toml"
    path.write_text(text)
    return path


def edited(old, new, text=BASE):
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize("activation", ACTIVATIONS.names())
def test_every_registered_activation_is_accepted(tmp_path, activation):
    config, _ = load_config(write(tmp_path, edited('activation = "relu"',
                                                   f'activation = "{activation}"')))
    assert config["model"]["layers"][0]["activation"] == activation


@pytest.mark.parametrize("old, new", [
    ("momentum = 0.9", "momentum = 1.0"),  # SGD takes [0, 1]
    ('type = "adam"\nlearning_rate = 0.01', 'type = "adam"\nlearning_rate = 0.01\nepsilon = 0'),
    ('type = "adam"', 'type = "Adam"'),  # a class name, as Keras's get accepts
])
def test_settings_the_library_accepts_are_accepted(tmp_path, old, new):
    config, _ = load_config(write(tmp_path, edited(old, new)))
    assert config["optimizers"][0]["type"] == "adam"


@pytest.mark.parametrize("old, new, message", [
    ("momentum = 0.9", "momentum = 1.5",
     "optimizers[1].momentum: optimizer 'sgd' rejects this: SGD: momentum must be"),
    ('type = "adam"\nlearning_rate = 0.01', 'type = "adam"\nlearning_rate = 0.01\nbeta_1 = 1',
     "optimizers[0].beta_1: optimizer 'adam' rejects this"),
    ("decay_steps = 5", "decay_steps = 0", "optimizers[1].schedule.decay_steps: schedule "
                                           "'exponential_decay' rejects this"),
    ("rate = 0.25", "rate = 1.0", "model.layers[1].rate: layer type 'dropout' rejects this: "
                                  "Dropout: rate must be in [0, 1)"),
    ("units = 16", "units = -2", "model.layers[0].units: layer type 'dense' rejects this"),
    ('activation = "relu"', 'activation = "swsh"',
     "model.layers[0].activation: expected one of"),
    ('type = "dense"', 'type = "dens"', "model.layers[0].type: expected one of "
                                        + ", ".join(map(repr, layers.LAYERS.names()))),
    ('layers = ["out"]', 'layers = ["dropout1"]',
     "optimizers[1].layers: layer 'dropout1' has no variables to train"),
])
def test_settings_the_library_refuses_are_one_line_naming_the_key(tmp_path, old, new, message):
    path = write(tmp_path, edited(old, new))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.fixture
def scratch_registries(monkeypatch):
    """Registries that forget what a test registers once it ends."""
    for registry in (layers.LAYERS, optimizers.OPTIMIZERS, fw.losses.LOSSES):
        monkeypatch.setattr(registry, "_by_name", dict(registry._by_name))
        monkeypatch.setattr(registry, "_canonical", dict(registry._canonical))


def _register_user_classes():
    """A user's layer (a dense layer with a learned output scale) and optimizer (SGD whose
    steps shrink), registered where they are defined, as the library's own are."""
    @layers.LAYERS.register
    class ScaledDense(layers.Dense):
        def __init__(self, units, scale=1.0, **kwargs):
            super().__init__(units, **kwargs)
            if not scale > 0:
                raise ValueError(f"ScaledDense: scale must be positive, got {scale!r}")
            self.initial_scale = float(scale)

        def build(self, input_shape):
            super().build(input_shape)
            self.scale = self.add_weight("scale", (),
                                         layers.initializers.Constant(self.initial_scale))

        def call(self, inputs):
            return super().call(inputs) * self.scale

    @optimizers.OPTIMIZERS.register(name="shrinking_sgd")
    class ShrinkingSGD(optimizers.SGD):
        def __init__(self, learning_rate=0.1, shrink=0.5, **kwargs):
            super().__init__(learning_rate, **kwargs)
            if not 0 < shrink <= 1:
                raise ValueError(f"ShrinkingSGD: shrink must be in (0, 1], got {shrink!r}")
            self.shrink = shrink

    return ScaledDense, ShrinkingSGD


USER_CONFIG = (BASE.replace('type = "dense"\nunits = 3', 'type = "scaled_dense"\nunits = 3\n'
                                                         'scale = 0.5')
               .replace('type = "sgd"', 'type = "shrinking_sgd"\nshrink = 0.9'))


def test_a_registered_layer_and_optimizer_are_usable_from_a_config(tmp_path,
                                                                  scratch_registries):
    scaled_dense, shrinking_sgd = _register_user_classes()
    config, source = load_config(write(tmp_path, f'output_dir = "{tmp_path / "run"}"\n'
                                                 + USER_CONFIG))
    assert config["model"]["layers"][2]["scale"] == 0.5
    assert config["optimizers"][1]["shrink"] == 0.9
    training = build_training(config, load_dataset(config["data"], config["seed"]), source)
    out = training.model.layers[-1]
    assert isinstance(out, scaled_dense) and len(out.trainable_variables) == 3
    assert isinstance(training.groups[1].optimizer, shrinking_sgd)
    assert training.groups[1].variables == out.trainable_variables  # its scale too
    assert float(out.scale.numpy()) == 0.5
    final = train(config, source, progress=False)
    assert 0.0 <= final["test_accuracy"] <= 1.0 and np.isfinite(final["test_loss"])


def test_a_registered_class_refuses_through_its_own_checks(tmp_path, scratch_registries):
    _register_user_classes()
    path = write(tmp_path, USER_CONFIG.replace("shrink = 0.9", "shrink = 2"))
    with pytest.raises(ConfigError, match=r"optimizers\[1\].shrink: optimizer 'shrinking_sgd' "
                                          r"rejects this: ShrinkingSGD: shrink must be"):
        load_config(path)
    path = write(tmp_path, USER_CONFIG.replace("scale = 0.5", "scale = -1.0"))
    with pytest.raises(ConfigError, match=r"model.layers\[2\].scale: layer type 'scaled_dense'"):
        load_config(path)


MLP_CONFIG = """
epochs = 1
batch_size = 16

[data]
name = "iris"

[[model.layers]]
type = "mlp"
hidden_units = [8]
output_units = 3

[loss]
name = "sparse_categorical_crossentropy"

[[optimizers]]
layers = ["mlp1"]
type = "adam"
"""


def test_any_layer_type_with_variables_joins_an_optimizer_group(tmp_path):
    config, source = load_config(write(tmp_path, MLP_CONFIG))
    assert config["loss"]["from_logits"] is True  # the MLP's output_activation is unset
    training = build_training(config, load_dataset(config["data"], 0), source)
    assert len(training.groups[0].variables) == 4  # both Dense layers inside the MLP


def test_a_layer_that_cannot_run_in_the_stack_is_one_line_at_build(tmp_path):
    """``add`` merges a list of inputs: valid on its own, it cannot follow a Dense layer."""
    config, source = load_config(write(tmp_path, edited('type = "dropout"\nrate = 0.25',
                                                        'type = "add"')))
    with pytest.raises(ConfigError, match=r"model.layers: the model cannot run on the data"):
        build_training(config, load_dataset(config["data"], 0), source)


REGRESSION = (BASE.replace('name = "iris"', 'name = "diabetes"')
              .replace('units = 3', 'units = 1')
              .replace('metrics = ["accuracy"]', 'metrics = ["mae"]'))


@pytest.mark.parametrize("loss, regression", [
    ("mean_absolute_error", True), ("huber", True), ("log_cosh", True),
    ("categorical_crossentropy", False),  # one-hot rows made from the class ids
    ("user_absolute_error", True),  # registered in the test, by the labels it declares
])
def test_a_loss_trains_from_its_declared_labels_with_no_edit_to_the_runner(
        tmp_path, scratch_registries, loss, regression):
    @fw.losses.LOSSES.register
    @fw.losses.expects("values")
    def user_absolute_error(y_true, y_pred):
        return fw.reduce_mean(fw.abs(fw.cast(y_true, y_pred.dtype) - y_pred), axis=-1)

    text = (REGRESSION if regression else BASE).replace(
        'name = "sparse_categorical_crossentropy"', f'name = "{loss}"')
    config, source = load_config(write(tmp_path, f'output_dir = "{tmp_path / "run"}"\n' + text))
    final = train(config, source, progress=False)
    assert np.isfinite(final["test_loss"])
    assert ("test_mae" if regression else "test_accuracy") in final
