"""configs/normalized_mlp.toml, built through the layer registry with the Python API (each
table's type is a ``layers.LAYERS`` name, its other keys the constructor's arguments) and
trained by hand on digits: batch and layer normalization with dropout learn the task."""
import pathlib
import tomllib

import numpy as np
from sklearn.datasets import load_digits

import framework as fw
from layers import LAYERS, BatchNormalization, Sequential
from optimizers import OPTIMIZERS

CONFIG = pathlib.Path(__file__).parents[1] / "configs" / "normalized_mlp.toml"


def build(config):
    return Sequential([LAYERS.lookup(table["type"])(**{k: v for k, v in table.items()
                                                        if k != "type"})
                       for table in config["model"]["layers"]])


def digits(seed):
    x, y = load_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order].astype(np.float32), y[order]
    train, test = slice(0, 1437), slice(1437, None)
    mean, std = x[train].mean(0), x[train].std(0) + 1e-7
    return (x[train] - mean) / std, y[train], (x[test] - mean) / std, y[test]


def test_the_normalized_config_builds_from_the_registry_and_trains():
    config = tomllib.loads(CONFIG.read_text())
    fw.random.set_seed(config["seed"])
    x, y, x_test, y_test = digits(config["seed"])
    model = build(config)
    settings = {k: v for k, v in config["optimizer"].items() if k != "type"}
    optimizer = OPTIMIZERS.lookup(config["optimizer"]["type"])(**settings)
    rng, size = np.random.default_rng(0), config["batch_size"]
    for _ in range(config["epochs"]):
        order = rng.permutation(len(x))
        for start in range(0, len(x), size):
            rows = order[start:start + size]
            with fw.GradientTape() as tape:
                logits = model(x[rows], training=True)
                loss = fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(
                    y[rows], logits, from_logits=True))
            variables = model.trainable_variables
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    norm = next(layer for layer in model.layers if isinstance(layer, BatchNormalization))
    assert np.any(norm.moving_mean.numpy() != 0)  # the moving statistics were learned
    accuracy = np.mean(model.predict(x_test, verbose=0).argmax(-1) == y_test)
    assert accuracy > 0.9
