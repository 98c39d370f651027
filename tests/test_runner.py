"""End-to-end tests of ``tape-train`` on tiny data: a run and its files, determinism, resume
equivalence (also after a crash), run-folder protection, overrides, the other tasks, the MNIST
config on a few generated IDX images, and the module entry point with and without progress."""

import gzip
import json
import os
import re
import shlex
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import training.loop
from training.build import build_training
from training.checkpoint import restore_checkpoint
from training.cli import main
from training.config.reading import load_config, tomllib
from training.data import load_dataset
from tiny_config import tiny_config

ROOT = Path(__file__).resolve().parents[1]



@pytest.fixture
def config_path(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_config())
    return path


def run(config_path, output, *args):
    """``tape-train`` in-process; returns its exit status."""
    return main([str(config_path), "--no-progress", "--output", str(output), *args])


def final_weights(run_dir):
    """The weights in a run's checkpoint, restored into a model built from its saved config."""
    config, source = load_config(run_dir / "config.toml")
    built = build_training(config, load_dataset(config["data"], config["seed"]), source)
    restore_checkpoint(run_dir / "checkpoint.npz", built.model, built.optimizers)
    return built.model.get_weights()


def assert_same_weights(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_run_trains_evaluates_and_writes_its_folder(config_path, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(config_path, out) == 0
    printed = capsys.readouterr().out
    assert "epoch 2/2" in printed
    accuracy = float(printed.split("test accuracy: ")[1].split()[0])
    assert accuracy > 0.6
    assert {p.name for p in out.iterdir()} >= {"config.toml", "metrics.jsonl", "checkpoint.npz"}
    history = records(out / "metrics.jsonl")
    assert [r["epoch"] for r in history] == [1, 2] and [r["step"] for r in history] == [8, 16]
    assert set(history[0]) == {"epoch", "step", "loss", "accuracy", "lr/hidden", "lr/out",
                               "test_loss", "test_accuracy"}
    assert history[1]["test_accuracy"] == pytest.approx(accuracy, abs=5e-5)
    assert history[1]["lr/out"] == pytest.approx(0.1 * 0.9 ** (15 / 5))
    saved = tomllib.loads((out / "config.toml").read_text())
    assert saved["output_dir"] == str(out) and saved["optimizers"][1]["momentum"] == 0.9


def test_the_default_training_beats_095(tmp_path, capsys):
    """README's first command: the layer-wise MLP on digits."""
    assert run(ROOT / "configs/layerwise_mlp.toml", tmp_path / "run",
               "--set", "output.plot=false") == 0
    out = capsys.readouterr().out
    assert float(re.search(r"^test accuracy: (\S+)$", out, re.M).group(1)) > 0.95


def test_same_seed_gives_identical_metrics_and_weights(config_path, tmp_path):
    assert run(config_path, tmp_path / "a") == 0
    assert run(config_path, tmp_path / "b") == 0
    metrics = {run_dir: (tmp_path / run_dir / "metrics.jsonl").read_bytes() for run_dir in "ab"}
    assert metrics["a"] == metrics["b"]
    assert_same_weights(final_weights(tmp_path / "a"), final_weights(tmp_path / "b"))
    assert run(config_path, tmp_path / "c", "--set", "seed=6") == 0
    assert (tmp_path / "c/metrics.jsonl").read_bytes() != metrics["a"]


def test_resume_ends_with_the_weights_of_an_uninterrupted_run(config_path, tmp_path):
    assert run(config_path, tmp_path / "whole") == 0
    assert run(config_path, tmp_path / "halves", "--set", "epochs=1") == 0
    assert len(records(tmp_path / "halves/metrics.jsonl")) == 1
    assert run(config_path, tmp_path / "halves", "--resume") == 0
    assert_same_weights(final_weights(tmp_path / "whole"), final_weights(tmp_path / "halves"))
    assert ((tmp_path / "whole/metrics.jsonl").read_bytes()
            == (tmp_path / "halves/metrics.jsonl").read_bytes())


def test_resume_after_a_crash_while_checkpointing(config_path, tmp_path, monkeypatch, capsys):
    """A disk failing while epoch 2's checkpoint is written: one line, epoch 1's files kept
    whole; the resumed run redoes epoch 2 from epoch 1's checkpoint and matches a clean run."""
    assert run(config_path, tmp_path / "clean", "--set", "epochs=3") == 0
    save = training.loop.save_checkpoint
    calls = []

    def crash_on_second_checkpoint(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        save(*args, **kwargs)

    monkeypatch.setattr(training.loop, "save_checkpoint", crash_on_second_checkpoint)
    capsys.readouterr()
    assert run(config_path, tmp_path / "crashed", "--set", "epochs=3") == 2
    assert "cannot write" in capsys.readouterr().err
    assert len(records(tmp_path / "crashed/metrics.jsonl")) == 1
    monkeypatch.setattr(training.loop, "save_checkpoint", save)
    assert run(config_path, tmp_path / "crashed", "--set", "epochs=3", "--resume") == 0
    assert_same_weights(final_weights(tmp_path / "clean"), final_weights(tmp_path / "crashed"))
    assert ((tmp_path / "clean/metrics.jsonl").read_bytes()
            == (tmp_path / "crashed/metrics.jsonl").read_bytes())


def test_an_existing_run_is_not_overwritten_without_being_told(config_path, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(config_path, out) == 0
    before = (out / "metrics.jsonl").read_bytes()
    capsys.readouterr()
    assert run(config_path, out, "--set", "seed=1") == 2
    error = capsys.readouterr().err
    assert "already holds a run" in error and "--resume" in error and "--overwrite" in error
    assert (out / "metrics.jsonl").read_bytes() == before
    (out / "notes.txt").write_text("mine")
    assert run(config_path, out, "--overwrite") == 0
    assert (out / "metrics.jsonl").read_bytes() == before  # same seed: the same run again
    assert (out / "notes.txt").read_text() == "mine"  # only the runner's own files are replaced


def test_resume_refuses_a_changed_config_and_a_missing_checkpoint(config_path, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(config_path, out, "--resume") == 2
    assert "no checkpoint.npz to resume from" in capsys.readouterr().err
    assert run(config_path, out, "--set", "epochs=1") == 0
    assert run(config_path, out, "--resume", "--set", "optimizers[0].learning_rate=0.5") == 2
    error = capsys.readouterr().err
    assert "optimizers[0].learning_rate is 0.01 in the run but 0.5 now" in error
    command = re.search(r"to continue the run: (.*?); to start", error).group(1)
    assert "optimizers.0.learning_rate=0.01" in command and "=0.5" not in command
    args = shlex.split(command)
    assert args[0] == "tape-train" and args[-1] == "--resume"
    assert main(args[1:]) == 0


def test_overrides_change_the_run(config_path, tmp_path):
    out = tmp_path / "run"
    assert run(config_path, out, "--set", "epochs=1", "--set", 'output.format="csv"',
               "--set", "output.step_metrics=true", "--set", "batch_size=40") == 0
    assert (out / "metrics.csv").read_text().splitlines()[0].startswith("epoch,step,loss,accuracy")
    assert len((out / "metrics.csv").read_text().splitlines()) == 2
    steps = (out / "steps.csv").read_text().splitlines()
    assert steps[0] == "epoch,step,loss,lr/hidden,lr/out" and len(steps) == 1 + 3
    saved = tomllib.loads((out / "config.toml").read_text())
    assert saved["epochs"] == 1 and saved["batch_size"] == 40


@pytest.mark.parametrize("text, keys", [
    ("""epochs = 2\nbatch_size = 32\nmetrics = ["accuracy"]
        [data]\nname = "moons"\nn_samples = 200\nnoise = 0.1
        [[model.layers]]\ntype = "dense"\nunits = 8\nactivation = "tanh"
        [[model.layers]]\ntype = "dense"\nunits = 1
        [loss]\nname = "binary_crossentropy"
        [optimizer]\ntype = "adam"\nlearning_rate = 0.05""", {"accuracy", "lr"}),
    ("""epochs = 2\nbatch_size = 32\nmetrics = ["mae", "mse"]
        [data]\nname = "regression"\nn_samples = 200\nn_features = 3\nstandardize = true
        [[model.layers]]\ntype = "dense"\nunits = 1
        [loss]\nname = "mean_squared_error"
        [optimizer]\ntype = "rmsprop"\nlearning_rate = 0.01\nclipnorm = 1.0""",
     {"mae", "mse", "lr"}),
], ids=["binary", "regression"])
def test_binary_and_regression_tasks(tmp_path, text, keys):
    path = tmp_path / "task.toml"
    lines = [line.strip() for line in text.splitlines()] + ["[output]", "plot = false"]
    path.write_text("\n".join(lines) + "\n")
    assert run(path, tmp_path / "run") == 0
    history = records(tmp_path / "run/metrics.jsonl")
    assert keys | {"loss", "test_loss"} <= set(history[-1])
    assert history[-1]["loss"] < history[0]["loss"]


def write_idx(path, array):
    """An unsigned-byte IDX file, gzip'd, as MNIST is distributed."""
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    path.write_bytes(gzip.compress(header + array.tobytes()))


def test_the_mnist_config_on_a_few_generated_idx_images(tmp_path, capsys):
    rng = np.random.default_rng(0)
    for prefix, count in (("train", 60), ("t10k", 20)):
        write_idx(tmp_path / f"{prefix}-images-idx3-ubyte.gz",
                  rng.integers(0, 256, (count, 28, 28), dtype=np.uint8))
        write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte.gz",
                  np.arange(count, dtype=np.uint8) % 10)
    assert run(ROOT / "configs/layerwise_mlp_mnist.toml", tmp_path / "run",
               "--set", f"data.path={str(tmp_path)!r}", "--set", "epochs=1",
               "--set", "output.plot=false") == 0
    assert "60 train / 20 test examples" in capsys.readouterr().out


def test_missing_matplotlib_costs_one_line(config_path, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert run(config_path, tmp_path / "run", "--set", "output.plot=true") == 0
    assert 'matplotlib is not installed; pip install ".[plot]"' in capsys.readouterr().out
    assert not (tmp_path / "run/curves.png").exists()


def test_curves_are_drawn_when_matplotlib_is_there(config_path, tmp_path):
    pytest.importorskip("matplotlib")
    assert run(config_path, tmp_path / "run", "--set", "output.plot=true") == 0
    assert (tmp_path / "run/curves.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("progress", [True, False], ids=["progress", "no-progress"])
def test_python_dash_m_training(config_path, tmp_path, progress):
    """Progress bars are drawn on a terminal only: in a log or a pipe they leave no ``\\r``."""
    fcntl, pty, termios = (pytest.importorskip(name) for name in ("fcntl", "pty", "termios"))
    command = [sys.executable, "-m", "training", str(config_path), "--output", str(tmp_path / "r"),
               "--set", "epochs=1"] + ([] if progress else ["--no-progress"])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "test accuracy: " in result.stdout
    assert "\r" not in result.stdout + result.stderr and "it/s" not in result.stderr
    assert all(line.startswith(("training ", "epoch ", "test ")) for line in
               result.stdout.splitlines())
    leader, follower = pty.openpty()  # stderr on a terminal (100 columns): the bar is drawn
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    with os.fdopen(leader, "rb", buffering=0) as terminal:
        process = subprocess.Popen(command + ["--overwrite"], stdout=subprocess.DEVNULL,
                                   stderr=follower, env=env, cwd=tmp_path)
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = terminal.read(4096)
            except OSError:  # the terminal closes with the process
                break
            if not chunk:
                break
            drawn += chunk
    assert process.wait(timeout=120) == 0
    assert (b"step/s" in drawn or b"lr=" in drawn) == progress


def test_a_closed_stdout_stops_the_run_in_one_line(config_path, tmp_path):
    """``tape-train ... | head -0``: stdout's reader is gone before the first line; the run
    says so in one line and Python's own flush at the exit adds nothing."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        process = subprocess.run([sys.executable, "-m", "training", str(config_path),
                                  "--no-progress", "--output", str(tmp_path / "r")],
                                 stdout=writer, stderr=subprocess.PIPE, timeout=120,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(writer)
    err = process.stderr.decode()
    assert process.returncode == 141 and len(err.splitlines()) == 1, err
    assert err.startswith("tape-train: error: stdout was closed (broken pipe), so the run "
                          "stopped before this run's first checkpoint; start it again with ")


BINARY = """epochs = 1\nbatch_size = 32\nseed = 1
[data]\nname = "moons"\nn_samples = 100\nnoise = 0.1
[[model.layers]]\ntype = "dense"\nunits = 8\nactivation = "tanh"
[[model.layers]]\ntype = "dense"\nunits = 1
[loss]\nname = "binary_crossentropy"
[optimizer]\ntype = "adam"\nlearning_rate = 0.05
[output]\nplot = false
"""
REGRESSION = """epochs = 1\nbatch_size = 32\nseed = 1
[data]\nname = "regression"\nn_samples = 100\nn_features = 3\nstandardize = true
[[model.layers]]\ntype = "dense"\nunits = 1
[loss]\nname = "mean_squared_error"
[optimizer]\ntype = "sgd"\nlearning_rate = 0.01
[output]\nplot = false
"""
FITTING = {
    "classification": {"accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
                       "sparse_top_k_categorical_accuracy", "top_k_categorical_accuracy"},
    "binary": {"accuracy", "auc", "binary_accuracy", "precision", "recall"},
    "regression": {"mean_absolute_error", "mean_squared_error", "root_mean_squared_error"},
}


@pytest.mark.parametrize("task", sorted(FITTING))
def test_every_registered_metric_works_or_is_refused_at_validation(tmp_path, capsys, task):
    """Each name of ``fw.metrics.METRICS`` on each task: a finite value on both splits, or one
    line at validation naming ``metrics[0]``, before the run folder is made."""
    import framework as fw
    path = tmp_path / "task.toml"
    path.write_text({"classification": tiny_config(), "binary": BINARY,
                     "regression": REGRESSION}[task])
    accepted = set()
    for name in fw.metrics.METRICS.names():
        out = tmp_path / name
        status = run(path, out, "--set", f'metrics=["{name}"]', "--set", "epochs=1")
        err = capsys.readouterr().err
        if status == 0:
            record = records(out / "metrics.jsonl")[-1]
            assert all(np.isfinite(record[key]) for key in (name, f"test_{name}")), record
            accepted.add(name)
        else:
            assert status == 2 and len(err.splitlines()) == 1 and ": metrics[0]: " in err, err
            assert not out.exists()
    assert accepted == FITTING[task]


def test_binary_metrics_of_a_model_ending_in_logits_see_probabilities():
    """Precision and recall threshold probabilities at 0.5: the runner gives them the sigmoid
    of logits (1.0 here), where raw logits of 0.2 and 0.3 would count as negatives (0.0)."""
    from training.build import _metric
    y, logits = np.array([[1.0], [0.0], [1.0]]), np.array([[0.2], [-1.0], [0.3]], np.float32)
    for name in ("precision", "recall"):
        metric = _metric(name, {"name": "binary_crossentropy", "from_logits": True})
        metric.update_state(y, logits)
        assert float(metric.result()) == 1.0 and metric.name == name
        plain = _metric(name, {"name": "binary_crossentropy", "from_logits": False})
        plain.update_state(y, logits)
        assert float(plain.result()) == 0.0
