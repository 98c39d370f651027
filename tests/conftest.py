"""Which array backend the tests run on.

``--backend`` (or the environment variable ``FRAMEWORK_TEST_BACKEND``) switches the whole suite:

- ``numpy`` (the default): host arrays;
- ``cupy``: the framework's backend is CuPy for every test, so every tensor a test creates
  lives on the GPU. Without CuPy or without a GPU, every test is skipped, and the reason says
  which of the two is missing;
- ``emulated-cupy``: the same on ``tests/cupy_emulator.py``, a NumPy-backed stand-in for CuPy
  that refuses host/device mixing as CuPy does and runs the fused kernels' C++ on the CPU. It
  checks the GPU code paths' logic on any machine with g++; only ``cupy`` checks CUDA.

``--free-sizes`` (or ``FRAMEWORK_TEST_FREE_SIZES=1``) runs the suite with the first axis of
every tensor argument of every ``fw.function`` free, as under an ``input_signature`` of a None
batch: each trace also makes the shadow runs and sees its batch as a size of each call
(``framework/tracing/sizes.py``), so every numeric assertion of the suite checks that path. The
tests whose trace counts that changes are marked ``trace_counts`` and skipped there.

Tests that compare the GPU path with the host path take the ``device_backend`` fixture (or
``each_backend``, which adds NumPy): one test body, run once per backend, with the real CuPy
marked ``gpu`` and skipped with a reason where it cannot run.
"""
import os
import shutil
import sys

import pytest

import cupy_emulator
import framework as fw
import free_sizes
from framework.engine import backend
from framework.tracing.function import Function
from framework.tuning import kernels

BACKENDS = ("numpy", "cupy", "emulated-cupy")
DEVICE_BACKENDS = [pytest.param("cupy", marks=pytest.mark.gpu), "emulated-cupy"]


def pytest_addoption(parser):
    parser.addoption("--backend", choices=BACKENDS,
                     default=os.environ.get("FRAMEWORK_TEST_BACKEND") or "numpy",
                     help="array backend for the whole suite (default: $FRAMEWORK_TEST_BACKEND "
                          "or numpy)")
    parser.addoption("--free-sizes", action="store_true",
                     default=bool(os.environ.get("FRAMEWORK_TEST_FREE_SIZES")),
                     help="trace every fw.function with its tensors' batch axis free")


class _BatchAxes:
    """Free axes for every tensor argument of a function: the first (see ``--free-sizes``)."""

    def __iter__(self):
        while True:
            yield (0,)


def _free_batches(patch):
    init = Function.__init__

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if self._free_axes is None:
            self._free_axes = _BatchAxes()
    patch.setattr(Function, "__init__", __init__)
    free_sizes.FORCED = True


def activate(name, patch):
    """Switch the framework to the device backend ``name`` through the MonkeyPatch ``patch``
    (whose undo switches back); None, or why that backend cannot run here."""
    emulated = name == "emulated-cupy"
    if emulated and shutil.which("g++") is None:
        return "g++ is not installed (the CuPy emulator compiles the kernels' C++ with it)"
    session_emulator = sys.modules.get("cupy") is cupy_emulator
    for module_name, module in cupy_emulator.modules().items():
        if emulated:
            patch.setitem(sys.modules, module_name, module)
        elif session_emulator:  # the real CuPy asked for inside an emulated session
            patch.delitem(sys.modules, module_name, raising=False)
    patch.setattr(backend, "_cupy", None)  # import CuPy afresh: the real one or the emulator
    patch.setattr(kernels, "_cache", {})  # kernel objects belong to one CuPy module
    patch.setattr(backend, "_current", dict(backend._current))
    try:
        fw.set_backend("cupy")
    except RuntimeError as error:  # says whether CuPy or a GPU is missing
        return str(error)
    return None


def pytest_configure(config):
    name = config.getoption("--backend")
    if name not in BACKENDS:  # argparse checks --backend, not the environment variable
        raise pytest.UsageError(f"FRAMEWORK_TEST_BACKEND={name!r}: expected one of "
                                f"{', '.join(BACKENDS)}")
    config.fw_backend_skip = None
    if name != "numpy" or config.getoption("--free-sizes"):
        config.fw_backend_patch = pytest.MonkeyPatch()
    if name != "numpy":
        config.fw_backend_skip = activate(name, config.fw_backend_patch)
    if config.getoption("--free-sizes"):
        _free_batches(config.fw_backend_patch)


def pytest_unconfigure(config):
    if getattr(config, "fw_backend_patch", None) is not None:
        config.fw_backend_patch.undo()


def pytest_collection_modifyitems(config, items):
    if config.getoption("--free-sizes"):
        skip = pytest.mark.skip(reason="--free-sizes changes the trace counts this test checks")
        for item in items:
            if item.get_closest_marker("trace_counts"):
                item.add_marker(skip)
    reason = config.fw_backend_skip
    if reason:
        skip = pytest.mark.skip(reason=f"--backend {config.getoption('--backend')}: {reason}")
        for item in items:
            item.add_marker(skip)


def pytest_report_header(config):
    return f"framework backend: {config.getoption('--backend')}"


@pytest.fixture(autouse=True)
def _restore_backend(monkeypatch):
    """A test that switches the backend (fw.set_backend) leaves the next test the session's."""
    monkeypatch.setattr(backend, "_current", dict(backend._current))


@pytest.fixture(params=DEVICE_BACKENDS)
def device_backend(request, monkeypatch):
    """The framework on a device backend for this test: real CuPy, then the emulator."""
    reason = activate(request.param, monkeypatch)
    if reason:
        pytest.skip(reason)
    return request.param


@pytest.fixture(params=["numpy"] + DEVICE_BACKENDS)
def each_backend(request, monkeypatch):
    """One test body run on NumPy, on CuPy and on the emulator (not a copied GPU suite)."""
    if request.param == "numpy":
        fw.set_backend("numpy")
    else:
        reason = activate(request.param, monkeypatch)
        if reason:
            pytest.skip(reason)
    return request.param
