"""The newer optimizers' fused GPU kernels against their NumPy path: on a GPU, and on the CuPy
emulator (which compiles the same kernel sources for the CPU). Each update of a float32 or
float64 variable on the device is one kernel launch; the numbers are the host path's."""
import numpy as np
import pytest

import framework as fw
from framework.tuning import kernels
from optimizers import Adadelta, Adamax, Ftrl, Lion, Nadam

rng = np.random.default_rng(18)
TOLERANCE = {np.float32: {"rtol": 1e-5, "atol": 1e-6}, np.float64: {"rtol": 1e-12, "atol": 1e-13}}


@pytest.fixture
def launched(monkeypatch):
    names, build = [], kernels._kernel
    monkeypatch.setattr(kernels, "_kernel", lambda name: names.append(name) or build(name))
    return names


CASES = {
    "nadam": (lambda: Nadam(0.01, use_ema=True), "fw_nadam"),
    "adamax": (lambda: Adamax(0.01, weight_decay=0.1), "fw_adamax"),
    "adadelta": (lambda: Adadelta(1.0), "fw_adadelta"),
    "lion": (lambda: Lion(0.001), "fw_lion"),
    "ftrl": (lambda: Ftrl(0.1, l1_regularization_strength=0.05, l2_regularization_strength=0.1,
                          l2_shrinkage_regularization_strength=0.02, beta=0.3), "fw_ftrl"),
    "ftrl_power": (lambda: Ftrl(0.1, learning_rate_power=-0.7), "fw_ftrl"),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("make, kernel", CASES.values(), ids=CASES.keys())
def test_one_kernel_per_variable_gives_the_host_paths_numbers(device_backend, launched, make,
                                                              kernel, dtype):
    start = [rng.standard_normal(shape).astype(dtype) for shape in ((7, 5), (5,))]
    grads = [[rng.standard_normal(w.shape).astype(dtype) for w in start] for _ in range(4)]
    results = []
    for device in ("cpu", "gpu"):
        variables = [fw.Variable(fw.to_device(fw.constant(w), device)) for w in start]
        optimizer = make()
        for step in grads:
            optimizer.apply_gradients(zip(
                [fw.to_device(fw.constant(g), device) for g in step], variables))
        results.append([v.numpy() for v in variables + optimizer.variables[1:]])
    for expected, actual in zip(*results, strict=True):
        np.testing.assert_allclose(actual, expected, **TOLERANCE[dtype])
    assert launched == [kernel] * 8  # 4 steps of 2 variables
