"""``mpiexec -n 2 python -m training CONFIG``: the runner data-parallel over two ranks.

Each test launches the runner under MPICH's ``mpiexec`` on this machine and compares with the
same config run in this process, without MPI: the same final weights and metrics (to float32
rounding: the ranks sum their gradients in another order), also when the batch splits unevenly
or leaves a rank an empty shard; files written by rank 0 alone; a resume under MPI that ends
bit-identical to the uninterrupted MPI run, dropout included. They skip, saying why, where
mpi4py or mpiexec is missing (``pip install ".[test]"`` brings both), and every launch has a
timeout, so a hang fails instead of stalling the suite.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from framework import distributed
from training.cli import main
from mpi_launch import find_mpiexec
from tiny_config import tiny_config

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_config(dropout=False, step_metrics=True))
    return path


def launch(config, output, *args, ranks=2, check=True):
    """``mpiexec -n ranks python -m training config``; the completed process."""
    env = {k: v for k, v in os.environ.items() if k not in distributed._LAUNCH_VARS}
    env.update({"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                "OMP_NUM_THREADS": "1"})
    command = [find_mpiexec(), "-n", str(ranks), sys.executable, "-m", "training", str(config),
               "--no-progress", "--output", str(output), *args]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT,
                          check=False, cwd=config.parent)
    if check and proc.returncode:
        pytest.fail(f"mpiexec failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def alone(config, output, *args):
    """The same run in this process, without MPI."""
    assert main([str(config), "--no-progress", "--output", str(output), *args]) == 0


def arrays(run_dir):
    """The checkpoint's weights and optimizer state, by name."""
    with np.load(run_dir / "checkpoint.npz") as archive:
        return {key: archive[key] for key in archive.files if not key.startswith("__")}


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def assert_close_records(got, expected):
    assert [list(r) for r in got] == [list(r) for r in expected]  # same keys, same order
    for g, e in zip(got, expected, strict=True):
        assert g == pytest.approx(e, rel=1e-5, abs=1e-6)


@pytest.mark.mpi
@pytest.mark.parametrize("batch_size", [16, 15, 17],
                         ids=["even", "uneven-7-8", "last-batch-of-1-row"])
def test_two_ranks_train_like_one_process(config, tmp_path, batch_size):
    """16 splits 8/8; 15 splits 7/8 every step; 17 leaves a last batch of 1 row (120 = 7 x 17
    + 1), so rank 0's shard is empty: each rank's loss is weighted by its rows (train_step)."""
    setting = f"batch_size={batch_size}"
    proc = launch(config, tmp_path / "mpi", "--set", setting)
    alone(config, tmp_path / "one", "--set", setting)
    mpi, one = arrays(tmp_path / "mpi"), arrays(tmp_path / "one")
    assert sorted(mpi) == sorted(one)
    for key, value in one.items():
        np.testing.assert_allclose(mpi[key], value, rtol=1e-5, atol=1e-7, err_msg=key)
    # Train and test metrics are the whole sets', combined over the ranks' rows.
    assert_close_records(records(tmp_path / "mpi/metrics.jsonl"),
                         records(tmp_path / "one/metrics.jsonl"))
    assert_close_records(records(tmp_path / "mpi/steps.jsonl"),
                         records(tmp_path / "one/steps.jsonl"))
    # Rank 0 alone prints and writes: one line per epoch, one file of each kind.
    assert proc.stdout.count("test accuracy: ") == 1 and proc.stdout.count("epoch 2/2") == 1
    assert "2 MPI ranks" in proc.stdout
    assert ("does not split evenly" in proc.stdout) == (batch_size % 2 == 1)
    assert sorted(p.name for p in (tmp_path / "mpi").iterdir()) == \
        ["checkpoint.npz", "config.toml", "metrics.jsonl", "steps.jsonl"]
    steps = -(-120 // batch_size)
    assert [r["step"] for r in records(tmp_path / "mpi/metrics.jsonl")] == [steps, 2 * steps]


@pytest.mark.mpi
def test_a_resume_under_mpi_continues_identically(tmp_path):
    """With dropout, whose masks each rank draws from its own stream: every rank's stream state
    is in the checkpoint, and only rank 0 reads it."""
    config = tmp_path / "dropout.toml"
    config.write_text(tiny_config(step_metrics=True))
    launch(config, tmp_path / "whole", "--set", "epochs=3")
    launch(config, tmp_path / "parts", "--set", "epochs=1")
    launch(config, tmp_path / "parts", "--set", "epochs=3", "--resume")
    whole, parts = arrays(tmp_path / "whole"), arrays(tmp_path / "parts")
    for key, value in whole.items():
        np.testing.assert_array_equal(parts[key], value, err_msg=key)
    for name in ("metrics.jsonl", "steps.jsonl"):
        assert (tmp_path / "whole" / name).read_bytes() == (tmp_path / "parts" / name).read_bytes()
    # The MPI checkpoint resumes in one process too (rank 0's random stream goes on).
    alone(config, tmp_path / "parts", "--set", "epochs=4", "--resume")
    assert len(records(tmp_path / "parts/metrics.jsonl")) == 4


@pytest.mark.mpi
def test_refusals_stop_every_rank_with_one_clear_line(config, tmp_path):
    """The root's refusal of the run folder reaches the other ranks, which stop quietly; a
    batch smaller than the number of ranks is a config error; the root alone prints. The root
    holds the folder's lock for the job: a folder in use is refused once, by the root."""
    assert launch(config, tmp_path / "run", "--print-config").stdout.count("seed = 5") == 1
    alone(config, tmp_path / "run", "--set", "epochs=1")
    proc = launch(config, tmp_path / "run", check=False)
    assert proc.returncode != 0
    assert proc.stderr.count("already holds a run") == 1, proc.stderr
    proc = launch(config, tmp_path / "other", "--set", "batch_size=1", check=False)
    assert proc.returncode != 0
    assert "batch_size (from --set): 1 is smaller than the 2 MPI ranks" in proc.stderr
    assert not (tmp_path / "other").exists()
    from training.runlock import FolderLock
    holder = FolderLock(tmp_path / "run")  # the folder in use by this process: rank 0 looks
    holder.acquire()
    try:
        proc = launch(config, tmp_path / "run", "--resume", check=False)
    finally:
        holder.release()
    assert proc.returncode == 2
    assert proc.stderr.count(f"is in use by another tape-train run (process {os.getpid()} ") \
        == 1 and "(rank 0)" in proc.stderr, proc.stderr
    assert not (tmp_path / "run/.tape-train.lock").exists()
    launch(config, tmp_path / "run", "--resume", "--set", "epochs=2")  # rank 0 locks, unlocks
    assert not (tmp_path / "run/.tape-train.lock").exists()


@pytest.mark.mpi
def test_a_diverging_run_stops_every_rank_at_the_same_step(tmp_path):
    """The ranks decide on the averaged gradients, the same everywhere: all stop at one step,
    the root alone says so, and the exit status is the divergence's."""
    proc = launch(ROOT / "configs/regression.toml", tmp_path / "run", "--set",
                  "optimizer.learning_rate=1e6", "--set", "output.plot=false", check=False)
    assert proc.returncode == 3, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("tape-train")]
    assert len(lines) == 1 and "(rank 0)" in lines[0] and "Traceback" not in proc.stderr
    assert "the run diverged at epoch 1, step" in lines[0]
    assert not (tmp_path / "run/checkpoint.npz").exists()


def test_started_by_mpiexec_without_mpi4py_is_one_clear_line(config, tmp_path, monkeypatch,
                                                             capsys):
    monkeypatch.setattr(distributed, "_w", distributed._World())
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # import fails as if not installed
    monkeypatch.setenv("PMI_SIZE", "2")
    monkeypatch.setenv("PMI_RANK", "0")
    assert main([str(config), "--output", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("tape-train: error: this process was started by an MPI launcher")
    assert "pip install 'tape-framework[mpi]'" in error and not (tmp_path / "run").exists()
