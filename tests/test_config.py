"""Tests for run configs: loading, defaults, overrides, the resolved TOML, and one test per
validation error, each checking that the message names the file, the key and what was wanted."""

import re
from pathlib import Path

import pytest

from layers import LAYERS
from optimizers import OPTIMIZERS
from training.build import build_training
from training.cli import main
from training.config.reading import ConfigError, apply_override, dump_toml, load_config, parse_key, tomllib
from training.data import DataError, load_dataset

ROOT = Path(__file__).resolve().parents[1]

# A small, valid config: iris, two dense layers, one optimizer per layer.
BASE = """
seed = 3
epochs = 2
batch_size = 16
metrics = ["accuracy"]

[data]
name = "iris"
standardize = true

[[model.layers]]
name = "hidden"
type = "dense"
units = 8
activation = "relu"

[[model.layers]]
name = "out"
type = "dense"
units = 3

[loss]
name = "sparse_categorical_crossentropy"

[[optimizers]]
layers = ["hidden"]
type = "adam"
learning_rate = 0.01

[[optimizers]]
layers = ["out"]
type = "sgd"
learning_rate = 0.1
"""


def write(tmp_path, text, name="run.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def edited(old, new):
    assert old in BASE, old
    return BASE.replace(old, new, 1)


def test_defaults_are_filled_in(tmp_path):
    config, _ = load_config(write(tmp_path, BASE))
    assert config["name"] == "run"
    assert config["output_dir"] == str(Path("runs") / "run")
    assert config["output"] == {"format": "jsonl", "step_metrics": False, "plot": True}
    assert config["loss"] == {"name": "sparse_categorical_crossentropy", "from_logits": True}
    assert config["model"]["layers"][1] == {
        "name": "out", "type": "dense", "units": 3, "use_bias": True,
        "kernel_initializer": "glorot_uniform", "bias_initializer": "zeros"}
    assert [group["name"] for group in config["optimizers"]] == ["hidden", "out"]


def test_from_logits_defaults_to_false_after_a_softmax(tmp_path):
    text = edited('units = 3\n', 'units = 3\nactivation = "softmax"\n')
    config, _ = load_config(write(tmp_path, text))
    assert config["loss"]["from_logits"] is False


def test_resolved_config_round_trips_through_toml(tmp_path):
    config, _ = load_config(write(tmp_path, BASE), ["optimizers[0].learning_rate=0.5"])
    text = dump_toml(config)
    assert tomllib.loads(text) == config
    again, _ = load_config(write(tmp_path, text, "again.toml"))
    assert again == {**config, "name": "run"}


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_configs_are_valid(path, tmp_path):
    overrides = [f"data.path={str(tmp_path)!r}"] if "mnist" in path.name else []
    config, _ = load_config(path, overrides)
    assert config["name"] == path.stem
    assert path.read_text().lstrip().startswith("#"), "each config documents itself"


# ---- overrides --------------------------------------------------------------------------------

@pytest.mark.parametrize("assignment, path, value", [
    ("epochs=7", ["epochs"], 7),
    ("optimizers[1].learning_rate=0.25", ["optimizers", 1, "learning_rate"], 0.25),
    ("optimizers.0.learning_rate=1e-4", ["optimizers", 0, "learning_rate"], 1e-4),
    ("model.layers.hidden.units=32", ["model", "layers", 0, "units"], 32),
    ("data.name=wine", ["data", "name"], "wine"),
    ('data.name="wine"', ["data", "name"], "wine"),
    ("output.plot=false", ["output", "plot"], False),
    ("metrics=[]", ["metrics"], []),
    ('optimizers[0].layers=["hidden", "out"]', ["optimizers", 0, "layers"], ["hidden", "out"]),
])
def test_override_replaces_the_files_value(assignment, path, value):
    raw = tomllib.loads(BASE)
    apply_override(raw, assignment)
    for token in path:
        raw = raw[token]
    assert raw == value


def test_override_reaches_the_resolved_config_and_the_optimizer(tmp_path):
    config, source = load_config(write(tmp_path, BASE), ["optimizers[1].learning_rate=0.5",
                                                         "optimizers[1].momentum=0.9"])
    assert config["optimizers"][1]["learning_rate"] == 0.5
    training = build_training(config, load_dataset(config["data"], 0), source)
    optimizer = training.groups[1].optimizer
    assert training.groups[1].learning_rate() == pytest.approx(0.5)
    assert optimizer.momentum == pytest.approx(0.9)


@pytest.mark.parametrize("key, tokens", [
    ("a.b", ["a", "b"]), ("a[2].b", ["a", 2, "b"]), ("a.2.b", ["a", 2, "b"]),
    ("a[0][1]", ["a", 0, 1]),
])
def test_parse_key(key, tokens):
    assert parse_key(key) == tokens


@pytest.mark.parametrize("assignment, message", [
    ("epochs", "expected KEY=VALUE"),
    ("a..b=1", "not a dotted key"),
    ("optimizers[9].learning_rate=1", "optimizers has 2 entries, no [9]"),
    ("model.layers.nope.units=1", "no entry named 'nope'; names are hidden, out"),
    ("seed.x=1", "seed is a value, not a table"),
    ("data[0]=1", "data is a table"),
])
def test_bad_overrides(assignment, message):
    with pytest.raises(ConfigError, match=r"--set .*" + re.escape(message)):
        apply_override(tomllib.loads(BASE), assignment)


# ---- validation errors ------------------------------------------------------------------------

ERRORS = {
    "unknown top-level key": (edited("epochs = 2", "epocs = 2"),
                              "epocs: unknown key (did you mean 'epochs'?)"),
    "missing key": (edited("epochs = 2\n", ""),
                    "epochs: missing required key (a positive integer)"),
    "wrong type": (edited("batch_size = 16", 'batch_size = "16"'),
                   "batch_size: expected a positive integer, got '16' (a string)"),
    "negative seed": (edited("seed = 3", "seed = -1"), "seed: expected a non-negative integer"),
    "unknown metric": (edited('["accuracy"]', '["acc"]'), "metrics[0]: expected one of"),
    "no data": (edited('[data]\nname = "iris"\nstandardize = true\n', ""),
                "data: missing required table"),
    "missing data file": (edited('name = "iris"\nstandardize = true',
                                 'name = "csv"\npath = "nope.csv"'),
                          "data.path: no such file or folder: 'nope.csv'"),
    "unknown layer key": (edited("units = 8", "unit = 8"), "model.layers[0].unit: unknown key"),
    "unknown layer type": (edited('type = "dense"', 'type = "hypernet"'),
                           "model.layers[0].type: expected one of "
                           + ", ".join(map(repr, LAYERS.names()))),
    "layer name twice": (edited('name = "out"', 'name = "hidden"'),
                         "model.layers[1].name: layer name 'hidden' is used twice"),
    "bad activation": (edited('"relu"', '"rectified"'),
                       "model.layers[0].activation: expected one of"),
    "unknown loss": (edited('"sparse_categorical_crossentropy"', '"hinj"'),
                     "loss.name: expected one of"),
    "from_logits on mse": (edited('name = "sparse_categorical_crossentropy"',
                                  'name = "mean_squared_error"\nfrom_logits = true'),
                           "loss.from_logits: unknown key"),
    "no optimizer": (BASE[:BASE.index("[[optimizers]]")], "optimizer: missing required table"),
    "two kinds of optimizer": (BASE + '\n[optimizer]\ntype = "adam"\n',
                               "optimizer: give either one [optimizer] table"),
    "unknown optimizer": (edited('type = "sgd"', 'type = "lbfgs"'),
                          "optimizers[1].type: expected one of "
                          + ", ".join(map(repr, OPTIMIZERS.names()))),
    "unknown optimizer key": (edited("learning_rate = 0.01", "lerning_rate = 0.01"),
                              "optimizers[0].lerning_rate: unknown key "
                              "(did you mean 'learning_rate'?)"),
    "wrong optimizer type": (edited("learning_rate = 0.01", 'learning_rate = "fast"'),
                             "optimizers[0].learning_rate: expected a number, got 'fast'"),
    "no such layer": (edited('layers = ["hidden"]', 'layers = ["hiden"]'),
                      "optimizers[0].layers: no layer named 'hiden' in the model; its layers are "
                      "hidden, out"),
    "layer claimed twice": (edited('layers = ["out"]', 'layers = ["hidden"]'),
                            "optimizers[1].layers: layer 'hidden' is already updated by "
                            "optimizers[0]"),
    "layer left out": (BASE[:BASE.rindex("[[optimizers]]")],
                       "optimizers: no optimizer updates out"),
    "unknown schedule": (BASE + '[optimizers.schedule]\ntype = "linear"\n',
                         "optimizers[1].schedule.type: expected one of"),
    "schedule without decay_steps": (BASE + '[optimizers.schedule]\ntype = "cosine_decay"\n',
                                     "optimizers[1].schedule.decay_steps: missing required key"),
    "bad output format": (BASE + '[output]\nformat = "xml"\n', "output.format: expected one of"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_validation_errors_name_file_key_and_expectation(name, tmp_path):
    text, message = ERRORS[name]
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_errors_from_an_override_say_so(tmp_path):
    expected = r"batch_size \(from --set\): expected a positive integer"
    with pytest.raises(ConfigError, match=expected):
        load_config(write(tmp_path, BASE), ["batch_size=0"])


def test_invalid_toml_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match=r"run.toml: invalid TOML: .*line"):
        load_config(write(tmp_path, BASE + "\nepochs = = 3\n"))
    with pytest.raises(ConfigError, match=r"missing.toml: config file not found"):
        load_config(tmp_path / "missing.toml")


@pytest.mark.parametrize("old, new, message", [
    ("units = 3", "units = 4",
     "model.layers[1].units: expected 3 (one output per class: 3 classes"),
    ('name = "iris"', 'name = "diabetes"',
     "loss.name: 'sparse_categorical_crossentropy' takes integer class ids, one per example, so "
     "it does not suit the data: data 'diabetes' is a regression task; use one of cosine_similarity, "
     "huber, log_cosh, mean_absolute_error"),
])
def test_config_that_does_not_fit_the_data(tmp_path, old, new, message):
    config, source = load_config(write(tmp_path, edited(old, new)))
    with pytest.raises(ConfigError) as caught:
        build_training(config, load_dataset(config["data"], 0), source)
    assert str(caught.value).startswith(f"{source.path}: ") and message in str(caught.value)


def test_accuracy_on_regression_is_refused(tmp_path):
    text = (edited('name = "iris"', 'name = "diabetes"')
            .replace("units = 3", "units = 1")
            .replace('"sparse_categorical_crossentropy"', '"mean_squared_error"'))
    config, source = load_config(write(tmp_path, text))
    with pytest.raises(ConfigError, match=r"metrics\[0\]: 'accuracy' needs class labels"):
        build_training(config, load_dataset(config["data"], 0), source)


def test_distance_metrics_on_classes_are_refused(tmp_path):
    config, source = load_config(write(tmp_path, edited('["accuracy"]', '["mae"]')))
    with pytest.raises(ConfigError, match=r"metrics\[0\]: 'mae' compares the outputs with real-valued targets"):
        build_training(config, load_dataset(config["data"], 0), source)


def test_data_key_errors_name_the_config_file(tmp_path):
    config, _ = load_config(write(tmp_path, edited("standardize = true", "nosie = 0.1")))
    with pytest.raises(DataError, match=r"run.toml: data.nosie: unknown key"):
        load_dataset(config["data"], 0, where=f"{tmp_path / 'run.toml'}: data")


# ---- the command line -------------------------------------------------------------------------

def test_print_config_shows_overrides_and_defaults(tmp_path, capsys):
    path = write(tmp_path, BASE)
    assert main([str(path), "--print-config", "--set", "epochs=9", "--output", "elsewhere"]) == 0
    printed = tomllib.loads(capsys.readouterr().out)
    assert printed["epochs"] == 9 and printed["output_dir"] == "elsewhere"
    assert printed["output"]["format"] == "jsonl"


def test_cli_reports_config_errors_in_one_line(tmp_path, capsys):
    path = write(tmp_path, edited("epochs = 2", "epochs = 0"))
    assert main([str(path), "--no-progress"]) == 2
    error = capsys.readouterr().err.strip()
    assert error == (f"tape-train: error: {path}: epochs: expected a positive integer, "
                     f"got 0 (an integer)")
