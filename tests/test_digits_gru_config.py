"""configs/digits_gru.toml through the runner: a GRU over the digits' 8x8 rows as 8-step
sequences, by registered names alone (reshape, gru, dense), with no edit under training/."""
import json
import pathlib

import numpy as np

from training.cli import main

CONFIG = pathlib.Path(__file__).parents[1] / "configs" / "digits_gru.toml"


def test_the_gru_config_trains_through_the_runner(tmp_path):
    assert main([str(CONFIG), "--no-progress", "--output", str(tmp_path / "run"),
                 "--set", "output.plot=false"]) == 0
    last = json.loads((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()[-1])
    assert last["test_accuracy"] > 0.95  # (0.9722 with this config's seed)
    weights = np.load(tmp_path / "run" / "checkpoint.npz")
    shapes = {weights[key].shape for key in weights.files}
    assert {(8, 96), (32, 96), (2, 96)} <= shapes  # Keras's GRU layout (reset_after)


def test_a_bad_gru_setting_is_one_line_naming_the_key(tmp_path, capsys):
    assert main([str(CONFIG), "--no-progress", "--output", str(tmp_path / "run"),
                 "--set", "model.layers.gru.dropout=1.5"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "dropout" in error
