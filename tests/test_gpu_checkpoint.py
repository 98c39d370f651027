"""Checkpoints cross devices: a training state saved on the GPU restores on the CPU and back.

A checkpoint holds host arrays, so the round trip itself is exact: every weight, slot and
counter restored on the other backend has the bits it was saved with, on that backend's
device. Training resumed on the other backend goes on bit for bit where both run the same
arithmetic. On the CuPy emulator that is matmuls, the fused bias+ReLU, the optimizers' fused
updates (Adam's in the NumPy path's order) and the mean squared error; not the softmax
cross-entropy, whose kernel sums a row's exponentials in another order than NumPy's pairwise
sum, with the C library's exp rather than NumPy's vectorised one (it agrees to rounding). On
a real GPU nothing is promised bit for bit beyond the round trip: CUDA contracts products and
sums into FMAs and has its own exp and log, so there resumed runs agree to rounding.

Each test runs on the real CuPy (marked ``gpu``, skipped without one) and on the emulator.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw
from layers import Dense, Sequential
from optimizers import Adam
from training.cli import main as tape_train

ROOT = Path(__file__).resolve().parents[1]
rng = np.random.default_rng(3)
X = rng.standard_normal((32, 6)).astype(np.float32)
LABELS = rng.integers(0, 3, 32).astype(np.int32)
DEVICES = {"numpy": "cpu", "cupy": "gpu"}


def build(backend_name):
    """The model and optimizer, made on ``backend_name``, weights from seed 0."""
    fw.set_backend(backend_name)
    fw.random.set_seed(0)
    model = Sequential([Dense(8, activation="relu"), Dense(3)])
    model(fw.constant(X[:1]))
    return model, Adam(0.01)


def train(model, optimizer, steps, loss):
    x, labels = fw.constant(X), fw.constant(LABELS)  # on the current backend
    for _ in range(steps):
        with fw.GradientTape() as tape:
            logits = model(x)
            if loss == "cross-entropy":
                value = fw.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
            else:
                value = fw.square(logits - fw.one_hot(labels, 3))
            value = fw.reduce_mean(value)
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(value, variables), variables))


def state(model, optimizer):
    """Every array of the training state, as host arrays, and the devices of the weights and
    slots (the optimizer's step counter lives on the host on either backend)."""
    variables = model.variables + optimizer.variables
    return ([v.numpy() for v in variables],
            {v.device for v in model.variables + optimizer.variables[1:]})


def moved_run(first, second, loss, tmp_path, steps=(3, 3)):
    """``steps[0]`` steps on ``first``, a checkpoint, restored on ``second`` for the rest."""
    model, optimizer = build(first)
    train(model, optimizer, steps[0], loss)
    path = fw.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / first))
    saved, _ = state(model, optimizer)
    model, optimizer = build(second)
    fw.train.Checkpoint(model=model, optimizer=optimizer).restore(path).assert_consumed()
    restored, devices = state(model, optimizer)
    assert devices == {DEVICES[second]}
    assert all(np.array_equal(a, b) for a, b in zip(restored, saved, strict=True))
    train(model, optimizer, steps[1], loss)
    return state(model, optimizer)[0]


@pytest.mark.parametrize("loss", ["squared error", "cross-entropy"])
@pytest.mark.parametrize("first, second", [("cupy", "numpy"), ("numpy", "cupy")],
                         ids=["gpu to cpu", "cpu to gpu"])
def test_training_resumed_on_the_other_device(device_backend, tmp_path, loss, first, second):
    straight = build(first)
    train(*straight, 6, loss)
    expected = state(*straight)[0]
    actual = moved_run(first, second, loss, tmp_path)
    if device_backend == "emulated-cupy" and loss == "squared error":
        for a, e in zip(actual, expected, strict=True):
            np.testing.assert_array_equal(a, e)
    else:  # the cross-entropy's sum, or a real GPU's FMAs: equal to rounding
        for a, e in zip(actual, expected, strict=True):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


def test_weights_files_load_on_the_other_device_bit_for_bit(device_backend, tmp_path):
    model, optimizer = build("cupy")
    train(model, optimizer, 2, "cross-entropy")
    model.save_weights(str(tmp_path / "gpu.weights.npz"))
    for backend_name in ("numpy", "cupy"):
        other, _ = build(backend_name)
        other.load_weights(str(tmp_path / "gpu.weights.npz"))
        assert {v.device for v in other.variables} == {DEVICES[backend_name]}
        for a, b in zip(other.get_weights(), model.get_weights(), strict=True):
            np.testing.assert_array_equal(a, b)


def runner(tmp_path, folder, backend_name, epochs, *args):
    """The runner on configs/regression.toml (mean squared error): its metrics per epoch."""
    assert tape_train([str(ROOT / "configs" / "regression.toml"), "--no-progress", "--output",
                       str(tmp_path / folder), "--set", f"backend={backend_name}", "--set",
                       "output.plot=false", "--set", f"epochs={epochs}", *args]) == 0
    lines = (tmp_path / folder / "metrics.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_run_trained_on_the_gpu_resumes_on_the_cpu_and_back(device_backend, tmp_path):
    """``--resume --set backend=...`` moves a run: GPU for 2 epochs, CPU for 2, GPU for 2 end
    where 6 epochs on the CPU end (bit for bit on the emulator: the same arithmetic)."""
    expected = runner(tmp_path, "cpu", "numpy", 6)
    runner(tmp_path, "moved", "cupy", 2)
    runner(tmp_path, "moved", "numpy", 4, "--resume")
    moved = runner(tmp_path, "moved", "cupy", 6, "--resume")
    assert [m.keys() for m in moved] == [m.keys() for m in expected]
    if device_backend == "emulated-cupy":
        assert moved == expected
    else:
        for epoch, expected_epoch in zip(moved, expected, strict=True):
            assert epoch == pytest.approx(expected_epoch, rel=1e-4, abs=1e-5)
    assert 'backend = "cupy"' in (tmp_path / "moved" / "config.toml").read_text()
