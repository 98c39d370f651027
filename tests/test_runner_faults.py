"""Fault injection for ``tape-train``: every bad input is one line and exit status 2, a run
killed, interrupted or out of disk in the middle of a write loses nothing, a diverging run stops
before it trains on NaN, and ``--overwrite`` deletes nothing before the new run is known good.

Runs are in-process (``main``) on the tiny iris config, except a ``kill -9`` in the middle of a
checkpoint write, which needs a process of its own. The full and read-only disk tests mount a
small tmpfs where the machine allows it (root on Linux) and are skipped otherwise; the same
failure is then still covered by ``test_a_write_failing_with_enospc_is_one_line_simulated``,
which makes the writes raise ENOSPC.
"""

import errno
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import training.loop
import training.step
import training.records
import training.runfolder
import training.runlock
from framework.checkpoint_file import TEMP_SUFFIX
from training.cli import main
from test_runner import config_path, run, write_idx  # noqa: F401 (config_path: a fixture)
from tiny_config import tiny_config

ROOT = Path(__file__).resolve().parents[1]


def fails(capsys, status, config_path, output, *args):
    """Run, expect ``status`` and a single line on stderr; return that line. A refusal (2)
    comes before any epoch is trained."""
    capsys.readouterr()
    assert run(config_path, output, *args) == status
    out, err = capsys.readouterr()
    assert status != 2 or "epoch 1/" not in out, out
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("tape-train: error: ")
    return err.strip()


def snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(Path(folder).iterdir()) if p.is_file()}


def weights(folder):
    with np.load(Path(folder) / "checkpoint.npz") as archive:
        return {k: archive[k] for k in archive.files if k.startswith(("model/", "optimizers/"))}


def assert_same_run(a, b):
    wa, wb = weights(a), weights(b)
    assert wa.keys() == wb.keys() and all(np.array_equal(wa[k], wb[k]) for k in wa)
    assert (Path(a) / "metrics.jsonl").read_bytes() == (Path(b) / "metrics.jsonl").read_bytes()


def strict_json(path):
    """Every line parsed by a JSON reader that refuses NaN and Infinity."""
    def refuse(token):
        raise ValueError(f"not JSON: {token}")
    return [json.loads(line, parse_constant=refuse) for line in Path(path).read_text().splitlines()]


@pytest.fixture
def finished(config_path, tmp_path):
    """A finished 1-epoch run and the bytes of its files."""
    out = tmp_path / "run"
    assert run(config_path, out, "--set", "epochs=1") == 0
    return out, snapshot(out)


# --- --overwrite: nothing is lost before the new run is known good --------------------------

@pytest.mark.parametrize("override, culprit", [
    ("model.layers.out.units=11", "model.layers[2].units"),
    ("data.standardize=2", "data.standardize"),
    ("optimizers.0.typo=1", "optimizers[0].typo"),
])
def test_overwrite_with_a_bad_config_keeps_the_old_run(capsys, config_path, finished, override,
                                                       culprit):
    out, before = finished
    assert culprit in fails(capsys, 2, config_path, out, "--set", "epochs=1", "--overwrite",
                            "--set", override)
    assert snapshot(out) == before


def test_overwrite_keeps_the_old_run_whole_until_its_first_new_checkpoint(capsys, config_path,
                                                                          finished, monkeypatch):
    out, before = finished
    (out / "steps.csv").write_text("from an older run\n")  # a file the new run does not write
    before = snapshot(out)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(training.loop, "save_checkpoint", interrupted)
    capsys.readouterr()
    new_run = ["--set", "epochs=1", "--set", "seed=9", "--set", "output.step_metrics=true"]
    assert run(config_path, out, *new_run, "--overwrite") == 130
    err = capsys.readouterr().err
    assert "before this run's first checkpoint" in err and err.strip().endswith("--overwrite")
    after = snapshot(out)
    assert after.pop("steps.jsonl.new")  # the new run's steps, staged beside the old run
    assert after == before
    monkeypatch.undo()
    assert run(config_path, out, *new_run, "--overwrite") == 0
    after = snapshot(out)
    assert set(after) == {"config.toml", "checkpoint.npz", "metrics.jsonl", "steps.jsonl"}
    assert all(after[name] != before[name] for name in ("config.toml", "checkpoint.npz"))
    assert len(strict_json(out / "steps.jsonl")) == 8


# --- divergence ------------------------------------------------------------------------------

def test_a_diverging_regression_stops_with_one_line(capsys, tmp_path):
    line = fails(capsys, 3, ROOT / "configs/regression.toml", tmp_path / "r",
                 "--set", "optimizer.learning_rate=1e6", "--set", "output.plot=false")
    assert re.search(r"diverged at epoch 1, step \d+: the (loss is nan|gradient of .* is not "
                     r"finite)", line)
    assert "on_nonfinite" in line
    assert not (tmp_path / "r/checkpoint.npz").exists()


def poison_from(monkeypatch, first, last=None, where="weights"):
    """Make the steps from ``first`` to ``last`` (counted from 1 in this process) see NaN: in
    the weights (every later step too) or in the batch (those steps only)."""
    real, count = training.step.train_step, [0]

    def step(training_, x, y, rows, check_finite=False):
        count[0] += 1
        if count[0] >= first and (last is None or count[0] <= last):
            if where == "weights":
                kernel = training_.model.layers[0].kernel
                kernel.assign(kernel * float("nan"))
            else:
                x = np.full_like(x, np.nan)
        return real(training_, x, y, rows, check_finite)

    monkeypatch.setattr(training.step, "train_step", step)
    # A step whose Python counts calls must run as Python: fw.function would run it once.
    monkeypatch.setattr(training.loop.fw, "function", lambda f: f)


def test_divergence_keeps_the_last_good_checkpoint(capsys, config_path, finished, monkeypatch):
    out, before = finished
    poison_from(monkeypatch, first=3)
    line = fails(capsys, 3, config_path, out, "--set", "epochs=2", "--resume")
    assert "diverged at epoch 2, step 11: the loss is nan" in line
    assert "checkpoint.npz keeps epoch 1" in line
    assert snapshot(out)["checkpoint.npz"] == before["checkpoint.npz"]
    assert all(np.isfinite(v).all() for v in weights(out).values())


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_skip_skips_the_bad_steps_and_the_records_stay_valid(capsys, config_path, tmp_path,
                                                             monkeypatch, fmt):
    poison_from(monkeypatch, first=3, last=4, where="batch")
    out = tmp_path / "run"
    assert run(config_path, out, "--set", "on_nonfinite=skip", "--set",
               f"output.format={fmt!r}", "--set", "output.step_metrics=true") == 0
    assert "skipped 2 of 8 steps" in capsys.readouterr().out
    assert all(np.isfinite(v).all() for v in weights(out).values())
    if fmt == "jsonl":
        steps = strict_json(out / "steps.jsonl")
        assert [s["loss"] is None for s in steps[:5]] == [False, False, True, True, False]
        assert all(r["loss"] is not None for r in strict_json(out / "metrics.jsonl"))
    else:
        rows = (out / "steps.csv").read_text().splitlines()
        assert rows[3].split(",")[2] == "" and "nan" not in (out / "steps.csv").read_text()


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_continue_trains_on_but_never_saves_nan_weights(capsys, config_path, tmp_path,
                                                        monkeypatch, fmt):
    out = tmp_path / "run"
    poison_from(monkeypatch, first=12)  # epoch 2
    assert run(config_path, out, "--set", "on_nonfinite=continue",
               "--set", f"output.format={fmt!r}") == 0
    assert "the weights are not finite, so checkpoint.npz was not replaced (it keeps epoch 1)" \
        in capsys.readouterr().out
    assert all(np.isfinite(v).all() for v in weights(out).values())
    text = (out / f"metrics.{fmt}").read_text()
    assert "NaN" not in text and "nan" not in text
    if fmt == "jsonl":
        assert strict_json(out / "metrics.jsonl")[1]["loss"] is None
    else:
        assert text.splitlines()[2].split(",")[2] == ""


def test_nan_and_inf_features_are_refused_naming_file_and_column(capsys, config_path, tmp_path):
    rows = ["a,b,label"] + [f"{i % 7},{i % 5},{i % 3}" for i in range(60)]
    rows[8] = "1,inf,2"
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    line = fails(capsys, 2, config_path, tmp_path / "r", "--set", 'data={name="csv", '
                 f'path="{tmp_path / "d.csv"}"}}')
    assert f"{tmp_path / 'd.csv'}:9: column b: 'inf' is not a finite number" in line
    x = np.ones((60, 4))
    x[7, 2] = np.nan
    np.savez(tmp_path / "d.npz", x=x, y=np.arange(60) % 3)
    line = fails(capsys, 2, config_path, tmp_path / "r", "--set", 'data={name="npz", '
                 f'path="{tmp_path / "d.npz"}"}}')
    assert "d.npz: array 'x': feature column #2, row 7: nan is not a finite number" in line
    assert not (tmp_path / "r").exists()


# --- one line, exit status 2 -----------------------------------------------------------------

@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "not a zip"])
def test_a_damaged_checkpoint_on_resume(capsys, config_path, finished, damage):
    out, before = finished
    data = before["checkpoint.npz"]
    damaged = {"truncated": data[:len(data) // 2], "empty": b"", "not a zip": b"hello",
               "flipped": data[:200] + bytes(b ^ 0xFF for b in data[200:-200]) + data[-200:]}
    (out / "checkpoint.npz").write_bytes(damaged[damage])
    line = fails(capsys, 2, config_path, out, "--set", "epochs=2", "--resume")
    assert f"{out / 'checkpoint.npz'}" in line and "--overwrite" in line
    assert snapshot(out)["metrics.jsonl"] == before["metrics.jsonl"]


def test_a_checkpoint_of_another_model(capsys, config_path, finished, tmp_path):
    out, _ = finished
    other = tmp_path / "other"
    assert run(config_path, other, "--set", "epochs=1",
               "--set", "model.layers.hidden.units=8") == 0
    shutil.copy(other / "checkpoint.npz", out / "checkpoint.npz")
    line = fails(capsys, 2, config_path, out, "--set", "epochs=2", "--resume")
    assert "model.layers[0].units is 8 in the run but 16 now" in line


def test_a_checkpoint_whose_arrays_are_another_models(capsys, config_path, finished):
    """The config in the checkpoint matches, its arrays do not: refused before anything moves."""
    from layers import MLP
    from training.checkpoint import read_extra, save_checkpoint
    out, before = finished
    other = MLP([5], 3)
    other.build((None, 4))
    save_checkpoint(out / "checkpoint.npz", other, extra=read_extra(out / "checkpoint.npz"))
    line = fails(capsys, 2, config_path, out, "--set", "epochs=2", "--resume")
    assert "holds another model than the config describes" in line and "--overwrite" in line
    assert snapshot(out)["metrics.jsonl"] == before["metrics.jsonl"]


def test_an_output_path_that_is_a_file(capsys, config_path, tmp_path):
    (tmp_path / "taken").write_text("mine")
    for output in (tmp_path / "taken", tmp_path / "taken/run"):
        assert "which is a file, not a folder" in fails(capsys, 2, config_path, output)
    assert (tmp_path / "taken").read_text() == "mine"


def test_a_catch_all_optimizer_left_without_layers(capsys, tmp_path):
    text = tiny_config().replace('layers = ["hidden"]\n', "", 1)
    path = tmp_path / "rest.toml"
    path.write_text(text.replace('layers = ["out"]', 'layers = ["hidden", "out"]', 1))
    for extra in ([], ["--print-config"]):  # refused by the config check, before any data
        line = fails(capsys, 2, path, tmp_path / "r", *extra)
        assert "optimizers[0].layers: missing, and the other optimizers already update" in line


@pytest.mark.parametrize("content, expected", [
    ('{"loss": 1.5}\n', "metrics.jsonl:1: not a record (no whole-number epoch and step)"),
    ("garbage\n", "metrics.jsonl:1: not a record"),
    ('[1, 2]\n', "metrics.jsonl:1: not a record"),
])
def test_a_corrupt_line_in_the_metrics_on_resume(capsys, config_path, finished, content,
                                                 expected):
    out, _ = finished
    (out / "metrics.jsonl").write_text(content)
    assert expected in fails(capsys, 2, config_path, out, "--set", "epochs=2", "--resume")


def test_a_line_cut_short_by_a_kill_is_dropped_on_resume(config_path, finished, tmp_path):
    out, before = finished
    assert run(config_path, tmp_path / "clean", "--set", "epochs=2") == 0
    with open(out / "metrics.jsonl", "a") as file:
        file.write('{"epoch": 2, "step": 16, "lo')
    assert run(config_path, out, "--set", "epochs=2", "--resume") == 0
    assert_same_run(out, tmp_path / "clean")


@pytest.mark.parametrize("labels, shown", [
    (["7"], "7"), (["-1"], "-1"), (["cat"], "'cat'"),
])
def test_labels_are_blamed_for_their_own_faults(capsys, config_path, tmp_path, labels, shown):
    names = "xyz" if labels[0] == "cat" else "012"  # class names, or class ids
    rows = ["a,b,label"] + [f"{i % 7},{i % 5},{names[i % 3]}" for i in range(60)]
    rows[5] = f"1,2,{labels[0]}"
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    line = fails(capsys, 2, config_path, tmp_path / "r", "--set",
                 f'data={{name="csv", path="{tmp_path / "d.csv"}"}}')
    assert f"d.csv: column label: only one example has label {shown}" in line
    assert "test_size:" not in line


def test_a_seed_past_2_to_the_32_is_blamed_on_the_seed(capsys, config_path, tmp_path):
    line = fails(capsys, 2, config_path, tmp_path / "r", "--set", "seed=4294967296")
    assert "seed (from --set): expected an integer below 2**32" in line


def test_an_idx_label_of_200_is_blamed_on_the_labels(capsys, tmp_path):
    rng = np.random.default_rng(0)
    for prefix, count in (("train", 30), ("t10k", 10)):
        write_idx(tmp_path / f"{prefix}-images-idx3-ubyte.gz",
                  rng.integers(0, 256, (count, 28, 28), dtype=np.uint8))
        labels = np.arange(count, dtype=np.uint8) % 10
        labels[3] = 200
        write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", labels)
    line = fails(capsys, 2, ROOT / "configs/layerwise_mlp_mnist.toml", tmp_path / "r",
                 "--set", f"data.path={str(tmp_path)!r}")
    assert "labels-idx1-ubyte: label 200 (2 examples with a label of 10 or more) is out of range "\
           "for model.layers[1].units = 10" in line
    assert "expected 201" not in line


# --- crashes, kills and full disks ------------------------------------------------------------

KILLED_SAVE = """
import os, signal, sys
import numpy as np
real, count = np.savez, [0]
def savez(file, **arrays):
    count[0] += 1
    if count[0] == 2:  # epoch 2's checkpoint: half an archive, then kill -9
        file.write(b"PK\\x03\\x04 half an archive")
        file.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    real(file, **arrays)
np.savez = savez
from training.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_kill_9_in_the_middle_of_a_checkpoint_write(config_path, tmp_path):
    out = tmp_path / "run"
    (tmp_path / "killed_save.py").write_text(KILLED_SAVE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    settings = ["--set", "epochs=3", "--set", 'backend="numpy"']  # as the process below
    process = subprocess.run([sys.executable, str(tmp_path / "killed_save.py"), str(config_path),
                              "--no-progress", "--output", str(out), *settings],
                             env=env, capture_output=True, timeout=120)
    assert process.returncode == -signal.SIGKILL
    holder = re.fullmatch(r"process (\d+) on .+\n", (out / ".tape-train.lock").read_text())
    assert holder and int(holder.group(1)) != os.getpid()  # the killed process's lock file
    leftovers = [p.name for p in out.iterdir() if p.name.endswith(TEMP_SUFFIX)]
    assert leftovers == [p.name for p in out.iterdir() if p.name.startswith(".checkpoint.npz.")]
    assert len(leftovers) == 1
    assert run(config_path, tmp_path / "clean", *settings) == 0
    assert run(config_path, out, *settings, "--resume") == 0  # the dead process's lock taken over
    assert not [p for p in out.iterdir() if p.name.endswith((".tmp", TEMP_SUFFIX, ".lock"))]
    assert_same_run(out, tmp_path / "clean")


def test_stale_temporary_files_are_removed_on_the_next_run(capsys, config_path, finished):
    out, _ = finished
    killed = [f".checkpoint.npz.{tag}{TEMP_SUFFIX}" for tag in ("abc", "x1y2")]
    for name in (*killed, "metrics.jsonl.tmp"):
        (out / name).write_bytes(b"\0" * 1000)
    (out / "keep.npz.tmp").write_text("not the runner's")
    assert run(config_path, out, "--set", "epochs=2", "--resume") == 0
    assert f"removed {killed[0]}, {killed[1]}, metrics.jsonl.tmp" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir() if "tmp" in p.name) == ["keep.npz.tmp"]


def test_ctrl_c_hint_is_the_exact_command(capsys, config_path, tmp_path, monkeypatch):
    out = tmp_path / "my run"
    real, calls = training.loop.save_checkpoint, []

    def interrupted_at_epoch_2(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(*args, **kwargs)

    monkeypatch.setattr(training.loop, "save_checkpoint", interrupted_at_epoch_2)
    capsys.readouterr()
    assert run(config_path, out, "--set", "epochs=3", "--set", "optimizers[1].momentum=0.5") == 130
    err = capsys.readouterr().err.strip()
    command = err.split("continue with ", 1)[1]
    args = shlex.split(command)
    assert args[0] == "tape-train" and args[-1] == "--resume"
    assert "optimizers[1].momentum=0.5" in args and str(out) in args
    monkeypatch.undo()
    assert main(args[1:]) == 0
    assert run(config_path, tmp_path / "clean", "--set", "epochs=3",
               "--set", "optimizers[1].momentum=0.5") == 0
    assert_same_run(out, tmp_path / "clean")


def test_a_shorter_epochs_on_resume_keeps_the_saved_config(capsys, config_path, tmp_path):
    out = tmp_path / "run"
    assert run(config_path, out, "--set", "epochs=2") == 0
    before = snapshot(out)
    assert run(config_path, out, "--set", "epochs=1", "--resume") == 0
    assert "nothing to train" in capsys.readouterr().out
    assert snapshot(out) == before


def test_a_write_failing_with_enospc_is_one_line_simulated(capsys, config_path, finished,
                                                           monkeypatch, tmp_path):
    """ENOSPC raised by the writers themselves: the checkpoint's archive and a metrics line."""
    out, before = finished

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(np, "savez", full)
    line = fails(capsys, 2, config_path, out, "--set", "epochs=2", "--resume")
    assert "No space left on device" in line and "checkpoint" in line
    after = snapshot(out)  # config.toml says epochs = 2 now: the run goes on to 2
    assert [after[name] == before[name] for name in ("checkpoint.npz", "metrics.jsonl")] \
        == [True, True]
    monkeypatch.undo()
    monkeypatch.setattr(training.records, "_write_all", full)  # appending a record
    line = fails(capsys, 2, config_path, out, "--set", "epochs=2", "--resume")
    assert "metrics.jsonl: No space left on device" in line
    assert snapshot(out)["metrics.jsonl"] == before["metrics.jsonl"]
    monkeypatch.undo()
    assert run(config_path, tmp_path / "clean", "--set", "epochs=2") == 0
    assert run(config_path, out, "--set", "epochs=2", "--resume") == 0
    assert_same_run(out, tmp_path / "clean")


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs at ``tmp_path / "disk"``, unmounted afterwards; skipped where mounting is
    not allowed (not root, or no Linux)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if sys.platform != "linux" or shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux; ENOSPC is simulated instead")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)],
                             capture_output=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()}); ENOSPC is "
                    f"simulated instead")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk(capsys, config_path, small_disk, tmp_path):
    out = small_disk / "run"
    assert run(config_path, out, "--set", "epochs=1") == 0
    before = snapshot(out)
    filler = os.open(small_disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:  # every byte left
        while os.write(filler, b"\0" * 4096):
            pass
    except OSError as error:
        assert error.errno == errno.ENOSPC
    finally:
        os.close(filler)
    line = fails(capsys, 2, config_path, out, "--set", "epochs=2", "--set", "output.plot=false",
                 "--resume")
    assert "No space left on device" in line
    assert snapshot(out) == before
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    (small_disk / "filler").unlink()
    assert run(config_path, out, "--set", "epochs=2", "--resume") == 0
    assert run(config_path, tmp_path / "clean", "--set", "epochs=2") == 0
    assert_same_run(out, tmp_path / "clean")


def test_a_read_only_disk(capsys, config_path, small_disk):
    out = small_disk / "run"
    assert run(config_path, out, "--set", "epochs=1") == 0
    before = snapshot(out)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    try:
        for mode in ("--resume", "--overwrite"):  # found before training: no epoch printed
            line = fails(capsys, 2, config_path, out, "--set", "epochs=2", mode)
            assert f"{out}: the run folder cannot be written (Read-only file system)" in line
        line = fails(capsys, 2, config_path, small_disk / "new")
        assert "Read-only file system" in line and "new" in line
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
    assert snapshot(out) == before


# --- one run at a time in a folder ------------------------------------------------------------

def test_a_second_run_in_a_locked_folder_is_refused_naming_the_holder(capsys, config_path,
                                                                      finished):
    """The lock is a ``flock``, which two open files conflict on in one process as in two; a
    holder killed outright leaves its file, which the next run takes over (see
    ``test_kill_9_in_the_middle_of_a_checkpoint_write``)."""
    from training.runlock import FolderLock
    out, before = finished
    holder = FolderLock(out)
    holder.acquire()
    try:
        for mode in ("--resume", "--overwrite"):  # the pair, and any other command
            line = fails(capsys, 2, config_path, out, "--set", "epochs=2", mode)
            assert line == (f"tape-train: error: {out} is in use by another tape-train run "
                            f"(process {os.getpid()} on {socket.gethostname()}); wait for it "
                            f"to end, or pass --output DIR for a run of its own")
        assert all(snapshot(out)[name] == before[name] for name in before)
    finally:
        holder.release()
    assert snapshot(out) == before  # the lock file is gone with the lock
    assert run(config_path, out, "--set", "epochs=2", "--resume") == 0


def test_a_new_folder_for_a_refused_run_is_removed_with_its_lock(capsys, config_path, tmp_path):
    out = tmp_path / "new/run"
    fails(capsys, 2, config_path, out, "--set", "model.layers.out.units=7")
    assert not (tmp_path / "new").exists()


# --- the history is whole after a resume -------------------------------------------------------

def test_a_resume_in_the_other_format_converts_the_records(capsys, config_path, tmp_path):
    csv = ["--set", "output.format='csv'", "--set", "output.step_metrics=true"]
    assert run(config_path, tmp_path / "clean", "--set", "epochs=2", *csv) == 0
    out = tmp_path / "run"
    assert run(config_path, out, "--set", "epochs=1", "--set", "output.step_metrics=true") == 0
    capsys.readouterr()
    assert run(config_path, out, "--set", "epochs=2", *csv, "--resume") == 0
    printed = capsys.readouterr().out
    assert "converted metrics.jsonl to metrics.csv (output.format is 'csv' now)" in printed
    assert "converted steps.jsonl to steps.csv" in printed
    for name in ("metrics.csv", "steps.csv"):
        assert (out / name).read_bytes() == (tmp_path / "clean" / name).read_bytes()
    assert not (out / "metrics.jsonl").exists() and not (out / "steps.jsonl").exists()
    assert run(config_path, out, "--set", "epochs=3", "--resume") == 0  # and back to jsonl
    assert [r["epoch"] for r in strict_json(out / "metrics.jsonl")] == [1, 2, 3]


def test_a_missing_metrics_file_is_rebuilt_from_the_checkpoint(capsys, config_path, tmp_path):
    assert run(config_path, tmp_path / "clean", "--set", "epochs=3") == 0
    out = tmp_path / "run"
    assert run(config_path, out, "--set", "epochs=2") == 0
    (out / "metrics.jsonl").unlink()
    capsys.readouterr()
    assert run(config_path, out, "--set", "epochs=3", "--resume") == 0
    assert "metrics.jsonl was missing: rebuilt from checkpoint.npz\n" in capsys.readouterr().out
    assert_same_run(out, tmp_path / "clean")


def test_a_missing_metrics_file_says_what_an_older_checkpoint_lost(capsys, config_path,
                                                                   tmp_path):
    """A checkpoint from before the history was kept holds its own epoch's record only."""
    from training.build import build_training
    from training.checkpoint import read_extra, restore_checkpoint, save_checkpoint
    from training.config.reading import load_config
    from training.data import load_dataset
    out = tmp_path / "run"
    assert run(config_path, out, "--set", "epochs=2") == 0
    config, source = load_config(out / "config.toml")
    built = build_training(config, load_dataset(config["data"], config["seed"]), source)
    for group in built.groups:
        group.optimizer.build(group.variables)
    extra = restore_checkpoint(out / "checkpoint.npz", built.model, built.optimizers)
    extra["record"] = extra.pop("history")[-1]
    save_checkpoint(out / "checkpoint.npz", built.model, built.optimizers, extra=extra)
    assert "history" not in read_extra(out / "checkpoint.npz")
    (out / "metrics.jsonl").unlink()
    capsys.readouterr()
    assert run(config_path, out, "--set", "epochs=3", "--resume") == 0
    assert ("metrics.jsonl was missing: rebuilt from checkpoint.npz; the records of epochs 1 "
            "to 1 are lost") in capsys.readouterr().out
    assert [r["epoch"] for r in strict_json(out / "metrics.jsonl")] == [2, 3]


# --- a folder without a checkpoint holds no run; names and paths -------------------------------

def test_a_run_that_stopped_before_its_first_checkpoint_is_no_run(capsys, tmp_path):
    config, out = ROOT / "configs/regression.toml", tmp_path / "r"
    fails(capsys, 3, config, out, "--set", "optimizer.learning_rate=1e6",
          "--set", "output.plot=false")
    left = sorted(p.name for p in out.iterdir())
    assert left and "checkpoint.npz" not in left
    line = fails(capsys, 2, config, out, "--set", "output.plot=false", "--resume")
    assert f"no checkpoint.npz to resume from (its {', '.join(left)} are of a run that " \
           f"stopped before its first checkpoint); start the run without --resume" in line
    assert run(config, out, "--set", "output.plot=false", "--set", "epochs=1") == 0
    assert "of a run that stopped before its first checkpoint: this run replaces them" \
        in capsys.readouterr().out
    assert (out / "checkpoint.npz").exists()


@pytest.mark.parametrize("name", ["/", ".", "..", "../x", "/abs", "a\\\\b"])
def test_a_run_name_is_one_folder_name(capsys, config_path, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main([str(config_path), "--no-progress", "--set", f'name="{name}"']) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "name (from --set): expected a run name: one " \
        "folder name" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.toml"]


def test_an_empty_output_is_refused(capsys, config_path):
    line = fails(capsys, 2, config_path, "")
    assert line == ("tape-train: error: --output '': an empty path; give the run folder, e.g. "
                    "--output runs/NAME (or leave --output out)")


# --- metrics that fit the task -----------------------------------------------------------------

@pytest.mark.parametrize("metric", ["auc", "precision", "recall", "binary_accuracy", "mae"])
def test_a_metric_that_does_not_fit_the_task_is_refused_at_validation(capsys, config_path,
                                                                      tmp_path, metric):
    line = fails(capsys, 2, config_path, tmp_path / "r", "--set", f'metrics=["{metric}"]')
    assert f"metrics[0]: {metric!r} " in line and "data 'iris' is a classification task" in line
    assert "use 'accuracy' or 'sparse_categorical_accuracy'" in line
    assert not (tmp_path / "r").exists()


def test_categorical_metrics_on_class_ids_take_the_sparse_form(config_path, tmp_path):
    assert run(config_path, tmp_path / "r", "--set", "epochs=1", "--set",
               'metrics=["accuracy", "categorical_accuracy", "top_k_categorical_accuracy", '
               '"sparse_top_k_categorical_accuracy"]') == 0
    record, = strict_json(tmp_path / "r/metrics.jsonl")
    for prefix in ("", "test_"):
        assert record[f"{prefix}categorical_accuracy"] == record[f"{prefix}accuracy"]
        assert record[f"{prefix}top_k_categorical_accuracy"] == \
            record[f"{prefix}sparse_top_k_categorical_accuracy"]


# --- one line each, before anything is trained -------------------------------------------------

def test_a_text_file_as_checkpoint(capsys, config_path, finished):
    out, before = finished
    (out / "checkpoint.npz").write_text("epoch,loss\n1,0.5\n")
    line = fails(capsys, 2, config_path, out, "--set", "epochs=2", "--resume")
    assert f"{out / 'checkpoint.npz'} is not a checkpoint (not an .npz archive: it is text, " \
           f"starting 'epoch,loss\\n1,0.5')" in line
    assert "pickle" not in line and snapshot(out)["metrics.jsonl"] == before["metrics.jsonl"]


def data_file(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return ["--set", f'data={{name="{name.split(".")[-1]}", path="{tmp_path / name}"}}']


def test_a_csv_given_as_npz_data(capsys, config_path, tmp_path):
    (tmp_path / "d.npz").write_text("a,b,label\n1,2,0\n")
    line = fails(capsys, 2, config_path, tmp_path / "r", "--set",
                 f'data={{name="npz", path="{tmp_path / "d.npz"}"}}')
    assert line.endswith('d.npz: not an .npz archive: a text file (a CSV? give it as [data] '
                         'name = "csv")') and "pickle" not in line


def test_a_csv_with_a_header_and_no_rows(capsys, config_path, tmp_path):
    line = fails(capsys, 2, config_path, tmp_path / "r",
                 *data_file(tmp_path, "d.csv", "a,b,label\n"))
    assert line.endswith("d.csv: a header row (a, b, label) and no data rows")


def test_one_fractional_label_among_class_ids_is_named(capsys, config_path, tmp_path):
    rows = ["a,b,label"] + [f"{i % 7},{i % 5},{i % 3}" for i in range(60)]
    rows[5] = "1,2,1.5"
    line = fails(capsys, 2, config_path, tmp_path / "r",
                 *data_file(tmp_path, "d.csv", "\n".join(rows) + "\n"))
    assert "d.csv: column label: label 1.5 (line 6) is fractional among whole-number labels " \
           "(3 values, 0 to 2)" in line and "loss" not in line


def test_a_toml_file_with_a_byte_order_mark_is_read(config_path, tmp_path):
    path = tmp_path / "bom.toml"
    path.write_text(config_path.read_text(), encoding="utf-8-sig")
    assert path.read_bytes()[:3] == b"\xef\xbb\xbf"
    assert run(path, tmp_path / "r", "--set", "epochs=1") == 0


def test_a_read_only_folder_is_found_before_training(capsys, config_path, finished, monkeypatch):
    out, before = finished
    real_open = os.open

    def read_only(path, *args, **kwargs):
        if str(path).endswith(".tape-train.lock"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(training.runlock.os, "open", read_only)
    capsys.readouterr()
    for mode in ("--resume", "--overwrite"):
        assert run(config_path, out, "--set", "epochs=2", mode) == 2
        printed = capsys.readouterr()
        assert printed.err == (f"tape-train: error: {out}: the run folder cannot be written "
                               f"(Read-only file system), so nothing was trained; free some "
                               f"space or make it writable, or pass --output DIR\n")
        assert "epoch" not in printed.out
    assert snapshot(out) == before


def test_a_disk_without_room_for_a_checkpoint_is_found_before_training(capsys, config_path,
                                                                       tmp_path, monkeypatch):
    real = os.statvfs

    def nearly_full(path):
        stats = real(path)
        return os.statvfs_result((stats.f_bsize, 1024, stats.f_blocks, 1, 1, *stats[5:]))

    monkeypatch.setattr(training.runfolder.os, "statvfs", nearly_full)
    line = fails(capsys, 2, config_path, tmp_path / "r")
    assert line.endswith(f"{tmp_path / 'r'}: 1.0 KiB free on its disk, but each checkpoint.npz "
                         f"of this model needs about 1.4 KiB; free some space or pass --output "
                         f"DIR")
    assert "epoch" not in capsys.readouterr().out and not (tmp_path / "r").exists()


def test_the_checkpoint_has_the_mode_of_the_run_s_other_files(finished):
    out, _ = finished
    modes = {p.name: p.stat().st_mode & 0o777 for p in out.iterdir()}
    assert modes["checkpoint.npz"] == modes["metrics.jsonl"] == modes["config.toml"]


@pytest.mark.skipif(not Path("/proc/sys/vm/overcommit_memory").exists()
                    or Path("/proc/sys/vm/overcommit_memory").read_text().strip() == "1",
                    reason="memory overcommitted without limit: the allocation would succeed")
def test_a_layer_too_large_for_memory_is_one_line(capsys, config_path, tmp_path):
    line = fails(capsys, 2, config_path, tmp_path / "r",
                 "--set", "model.layers.hidden.units=2000000000")
    assert "model.layers[0]: too large for this machine's memory: Unable to " \
           "allocate" in line
    assert not (tmp_path / "r").exists()
