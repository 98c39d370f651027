"""``fw.config`` and ``fw.device``: TensorFlow's device and execution settings, where they mean
something for a framework with two places for arrays, the host (NumPy) and the GPU (CuPy).

What TF2 scripts do with them, and what happens here:

- ``fw.config.list_physical_devices("GPU")`` (the usual first line): the GPUs CuPy sees, none
  without CuPy or a GPU, so ``if gpus:`` takes the same branch as TensorFlow's would.
- ``fw.config.experimental.set_memory_growth(gpu, True)``: CuPy's memory pool already grows on
  demand; the setting is kept (``get_memory_growth``) and refused for a CPU, as in TensorFlow.
- ``fw.config.run_functions_eagerly(True)``: every ``fw.function`` runs its Python function
  eagerly (to debug it with prints and ``.numpy()``), until set back.
- ``with fw.device("/GPU:0"):`` / ``"/CPU:0"``: tensors created inside (constants, variables,
  initializers) are created there; ops run where their inputs are. A GPU that is not there
  falls back to the host, as TensorFlow's soft placement does. The placement is the backend's
  (``fw.set_backend``), process-wide for the block.
"""
import re
from contextlib import contextmanager
from types import SimpleNamespace
from typing import NamedTuple

from .engine import backend
from .engine.context import settings

__all__ = ["LogicalDevice", "PhysicalDevice", "experimental", "functions_run_eagerly",
           "list_logical_devices", "list_physical_devices", "run_functions_eagerly"]


class PhysicalDevice(NamedTuple):
    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    name: str
    device_type: str


def _gpu_count():
    try:
        return backend.cupy_module().cuda.runtime.getDeviceCount()
    except RuntimeError:  # no CuPy, or no GPU it can see
        return 0


def _devices(kind, prefix, device_type):
    found = [kind(f"/{prefix}:CPU:0", "CPU")]
    found += [kind(f"/{prefix}:GPU:{i}", "GPU") for i in range(_gpu_count())]
    if device_type is None:
        return found
    return [d for d in found if d.device_type == str(device_type).upper()]


def list_physical_devices(device_type=None):
    """The host, then each GPU CuPy sees; only those of ``device_type`` ("CPU", "GPU") if given."""
    return _devices(PhysicalDevice, "physical_device", device_type)


def list_logical_devices(device_type=None):
    return _devices(LogicalDevice, "device", device_type)


def run_functions_eagerly(run_eagerly):
    """Make every ``fw.function`` call its Python function directly (True) or replay (False)."""
    settings.run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    return settings.run_functions_eagerly


_memory_growth = {}


def _set_memory_growth(device, enable):
    if getattr(device, "device_type", None) != "GPU":
        raise ValueError(f"Cannot set memory growth on non-GPU devices: {device!r}")
    _memory_growth[device.name] = bool(enable)


def _get_memory_growth(device):
    if getattr(device, "device_type", None) != "GPU":
        raise ValueError(f"Cannot get memory growth on non-GPU devices: {device!r}")
    return _memory_growth.get(device.name, False)


experimental = SimpleNamespace(
    list_physical_devices=list_physical_devices, list_logical_devices=list_logical_devices,
    set_memory_growth=_set_memory_growth, get_memory_growth=_get_memory_growth)

_DEVICE = re.compile(r"(?:^|/)(?:device:)?(cpu|gpu|tpu)(?::(\d+))?$", re.IGNORECASE)


@contextmanager
def device(device_name):
    """``tf.device``: create the block's new tensors on the host ("/CPU:0") or the GPU
    ("/GPU:0"; the host when there is none, and for a TPU); ``None`` changes nothing."""
    if device_name is None:
        yield
        return
    match = _DEVICE.search(str(device_name).strip())
    if match is None:
        raise ValueError(f"fw.device: cannot parse device name {device_name!r}; expected "
                         f"TensorFlow's names: '/CPU:0', '/GPU:<n>', '/device:GPU:<n>'")
    gpu = match.group(1).lower() == "gpu" and int(match.group(2) or 0) < _gpu_count()
    previous = backend.get_backend()
    backend.set_backend("cupy" if gpu else "numpy")
    try:
        yield
    finally:
        backend.set_backend(previous)
