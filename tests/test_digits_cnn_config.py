"""configs/digits_cnn.toml through the runner: Keras's image layers by their registered names
(reshape, conv2d, max_pooling2d; and conv1d with the 1-D pools on rows as sequences), with no
edit under training/, learn digits; the Reshape layer as Keras's."""
import json
import pathlib

import numpy as np
import pytest

import framework as fw
from layers import Reshape
from training.cli import main

CONFIG = pathlib.Path(__file__).parents[1] / "configs" / "digits_cnn.toml"


def test_the_cnn_config_trains_through_the_runner(tmp_path):
    assert main([str(CONFIG), "--no-progress", "--output", str(tmp_path / "run"),
                 "--set", "output.plot=false"]) == 0
    last = json.loads((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()[-1])
    assert last["test_accuracy"] > 0.95  # (0.9806 with this config's seed)
    weights = np.load(tmp_path / "run" / "checkpoint.npz")
    assert any(weights[key].shape == (3, 3, 1, 16) for key in weights.files)


def test_reshape_keeps_the_batch_and_infers_one_size():
    x = fw.constant(np.arange(24, dtype=np.float32).reshape(2, 12))
    out = Reshape((3, -1))(x)
    assert out.shape == (2, 3, 4) and out.numpy().ravel().tolist() == list(range(24))
    assert Reshape((3, -1)).compute_output_shape((None, 12)) == (None, 3, 4)
    assert Reshape((2, 2, 3)).get_config()["target_shape"] == (2, 2, 3)
    with pytest.raises(ValueError, match="at most one -1"):
        Reshape((-1, -1))


SEQUENCE_CONFIG = """
seed = 0
epochs = 6
batch_size = 32
metrics = ["accuracy"]

[data]
name = "digits"
standardize = true

[[model.layers]]
type = "reshape"
target_shape = [8, 8]   # each image's rows as a sequence of 8 steps of 8 values

[[model.layers]]
type = "conv1d"
filters = 16
kernel_size = 3
padding = "causal"
activation = "relu"

[[model.layers]]
type = "max_pooling1d"

[[model.layers]]
type = "global_average_pooling1d"

[[model.layers]]
type = "dense"
units = 10

[loss]
name = "sparse_categorical_crossentropy"

[optimizer]
type = "adam"
learning_rate = 1e-2
"""


def test_the_1d_layers_train_from_a_config_by_their_registered_names(tmp_path):
    config = tmp_path / "rows.toml"
    config.write_text(SEQUENCE_CONFIG)
    assert main([str(config), "--no-progress", "--output", str(tmp_path / "run"),
                 "--set", "output.plot=false"]) == 0
    last = json.loads((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()[-1])
    assert last["test_accuracy"] > 0.8  # (0.8611 with this seed)
    weights = np.load(tmp_path / "run" / "checkpoint.npz")
    assert any(weights[key].shape == (3, 8, 16) for key in weights.files)
