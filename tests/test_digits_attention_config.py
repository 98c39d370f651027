"""configs/digits_attention.toml through the runner: digits' rows as 8-step sequences through a
Transformer encoder block (MultiHeadAttention inside), by registered names, with no edit under
training/; compiled (the default) and eager give the same run."""
import json
import pathlib

import numpy as np

from training.cli import main

CONFIG = pathlib.Path(__file__).parents[1] / "configs" / "digits_attention.toml"


def _run(folder, *overrides):
    args = [str(CONFIG), "--no-progress", "--output", str(folder), "--set", "output.plot=false"]
    for override in overrides:
        args += ["--set", override]
    assert main(args) == 0
    return [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]


def test_the_attention_config_trains_through_the_runner(tmp_path):
    records = _run(tmp_path / "run")
    assert records[-1]["test_accuracy"] > 0.95  # (0.9778 with this config's seed)
    weights = np.load(tmp_path / "run" / "checkpoint.npz")
    shapes = {weights[key].shape for key in weights.files}
    assert {(16, 2, 8), (2, 8, 16)} <= shapes  # the attention's query and output kernels


def test_the_attention_config_gives_the_same_run_eagerly(tmp_path):
    compiled = _run(tmp_path / "compiled", "epochs=2")
    eager = _run(tmp_path / "eager", "epochs=2", "compile=false")
    assert compiled == eager
