"""The GPU backend: fused kernels against the unfused NumPy path, moves between devices, the
mixing error, a short training and the runner on CuPy; and, with no GPU at all, the errors that
say what is missing and a host path that never touches a kernel.

Tests taking ``device_backend`` run twice (conftest.py): on the real CuPy (marked ``gpu``, and
skipped with the reason, "CuPy is not installed" or "CuPy is installed but no GPU is visible:
...") and on the CuPy emulator (tests/cupy_emulator.py: the kernels' C++ run on the CPU). Every
op's forward and gradients run on both too, in test_ops_gradients.py's one parametrised table;
test_kernel_sources.py compiles the kernels for the GPU with nvcc.
"""
import importlib.machinery
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import framework as fw
from framework.ops import nn as nn_ops
from framework.engine import backend
from framework.tuning import host, kernels
from layers import Dense, Flatten, Model
from optimizers import SGD, Adam, AdamW
from training.cli import main as tape_train

ROOT = Path(__file__).resolve().parents[1]
rng = np.random.default_rng(7)
F32 = {"rtol": 1e-5, "atol": 1e-6}  # a fused kernel against the NumPy path, in float32
# The real CuPy, found on sys.path (a session may have put the emulator in sys.modules).
CUPY_INSTALLED = importlib.machinery.PathFinder.find_spec("cupy") is not None


def on(device, array):
    """``array`` as a tensor on ``"cpu"`` or ``"gpu"``, whatever the backend."""
    return fw.to_device(fw.constant(array), device)


@pytest.fixture
def launched(monkeypatch):
    """The fused kernels launched during the test, in order (``sum_rows``: a cuBLAS bias sum)."""
    names, build, build_rows, sum_rows = [], kernels._kernel, kernels._row_kernel, kernels.sum_rows
    monkeypatch.setattr(kernels, "_kernel", lambda name: names.append(name) or build(name))
    monkeypatch.setattr(kernels, "_row_kernel",
                        lambda name, *dtypes: names.append(name) or build_rows(name, *dtypes))
    monkeypatch.setattr(kernels, "sum_rows",
                        lambda x, axes: names.append("sum_rows") or sum_rows(x, axes))
    return names


def value_and_grads(f, inputs, cotangent):
    """``f(*inputs)`` and the gradients of <cotangent, f> for the float inputs, as host arrays."""
    sources = [x for x in inputs if x.dtype.kind == "f"]
    with fw.GradientTape() as tape:
        tape.watch(sources)
        y = f(*inputs)
        total = fw.reduce_sum(y * fw.to_device(fw.constant(cotangent), y.device))
    return [y.numpy()] + [g.numpy() for g in tape.gradient(total, sources)]


def assert_same_on_both(f, arrays, tolerance=F32):
    """``f``'s value and gradients on GPU tensors equal those on host tensors."""
    host = [on("cpu", a) for a in arrays]
    cotangent = rng.standard_normal(f(*host).shape).astype(host[0].dtype)
    expected = value_and_grads(f, host, cotangent)
    actual = value_and_grads(f, [on("gpu", a) for a in arrays], cotangent)
    for e, a in zip(expected, actual, strict=True):
        np.testing.assert_allclose(a, e, **tolerance)


def xent(logits, labels):
    return fw.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


# --- each fused kernel against the unfused NumPy path ---------------------------------------------
@pytest.mark.parametrize("shape", [(64, 33), (2, 5, 7), (9,)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bias_add_relu_and_its_gradients(device_backend, launched, shape, dtype):
    value = rng.standard_normal(shape).astype(dtype)
    bias = rng.standard_normal(shape[-1]).astype(dtype)
    assert_same_on_both(fw.nn.bias_add_relu, [value, bias])
    assert launched == ["fw_bias_add_relu", "fw_relu_grad", "sum_rows"]  # masked once


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dense_with_relu_is_one_product_and_one_kernel_each_way(device_backend, launched, dtype):
    x, w = rng.standard_normal((64, 20)).astype(dtype), rng.standard_normal((20, 33)).astype(dtype)
    b = rng.standard_normal(33).astype(dtype)
    assert_same_on_both(lambda x, w, b: fw.nn.dense(x, w, b, relu=True), [x, w, b])
    assert launched == ["fw_bias_add_relu", "fw_relu_grad", "sum_rows"]


def test_relu_gradient_under_a_jacobians_leading_axis(device_backend, launched):
    """The cotangent carries the Jacobian's rows as a leading axis: the kernels broadcast it."""
    value, bias = rng.standard_normal((3, 4)), rng.standard_normal(4)
    jacobians = []
    for device in ("cpu", "gpu"):
        x, b = on(device, value), on(device, bias)
        with fw.GradientTape(persistent=True) as tape:
            tape.watch([x, b])
            y = fw.nn.bias_add_relu(x, b)
        jacobians.append([j.numpy() for j in tape.jacobian(y, [x, b])])
    for expected, actual in zip(*jacobians, strict=True):
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)
    assert {"fw_relu_grad", "sum_rows"} <= set(launched)


def test_the_relu_backward_is_one_kernel(device_backend, launched):
    assert_same_on_both(fw.nn.relu, [rng.standard_normal((32, 10)).astype(np.float32)])
    assert launched == ["fw_relu_grad"]


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape", [(256, 10), (3, 4, 7), (5, kernels.XENT_THREAD_CLASSES)])
def test_sparse_cross_entropy_and_its_gradient(device_backend, launched, shape, label_dtype):
    logits = (rng.standard_normal(shape) * 3).astype(np.float32)
    labels = rng.integers(0, shape[-1], shape[:-1]).astype(label_dtype)
    assert_same_on_both(xent, [logits, labels])
    assert launched == ["fw_sparse_xent", "fw_sparse_xent_grad"]


ROW_KERNELS = ["fw_sparse_xent_rows", "fw_sparse_xent_grad_rows"]


@pytest.mark.parametrize("shape, dtype, thread_classes, kernels_run", [
    ((6, 10), np.float32, kernels.XENT_THREAD_CLASSES, ["fw_sparse_xent", "fw_sparse_xent_grad"]),
    ((6, 10), np.float64, 0, ROW_KERNELS),  # fewer classes than a block's threads
    ((2, 3, kernels.XENT_THREAD_CLASSES + 1), np.float32, kernels.XENT_THREAD_CLASSES,
     ROW_KERNELS),
    ((3, 50_000), np.float32, kernels.XENT_THREAD_CLASSES, ROW_KERNELS),
    ((2, 50_000), np.float64, kernels.XENT_THREAD_CLASSES, ROW_KERNELS),
], ids=["10 classes", "10 classes by blocks", "257 classes", "50000 classes", "50000 float64"])
def test_cross_entropy_takes_any_number_of_classes(device_backend, launched, monkeypatch, shape,
                                                   dtype, thread_classes, kernels_run):
    """Up to XENT_THREAD_CLASSES classes a thread per row, beyond a block per row with its
    reductions in shared memory: both give the NumPy path's loss and gradient."""
    monkeypatch.setattr(kernels, "XENT_THREAD_CLASSES", thread_classes)
    logits = (rng.standard_normal(shape) * 4).astype(dtype)
    labels = rng.integers(0, shape[-1], shape[:-1]).astype(np.int64)
    labels.reshape(-1)[:2] = [0, shape[-1] - 1]  # the row's two ends
    tolerance = F32 if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-13}
    assert_same_on_both(xent, [logits, labels], tolerance)
    assert launched == kernels_run


def test_row_kernels_give_nan_for_labels_out_of_range(device_backend, monkeypatch):
    monkeypatch.setattr(kernels, "XENT_THREAD_CLASSES", 0)
    logits = on("gpu", np.zeros((3, 3), np.float32))
    labels = on("gpu", np.array([0, 3, -1]))
    with fw.GradientTape() as tape:
        tape.watch(logits)
        loss = fw.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
    np.testing.assert_allclose(loss.numpy(), [np.log(3), np.nan, np.nan])
    grad = tape.gradient(loss, logits).numpy()
    np.testing.assert_allclose(grad[0], [-2 / 3, 1 / 3, 1 / 3], rtol=1e-6)
    assert np.isnan(grad[1:]).all()


def test_cross_entropy_of_extreme_logits_stays_finite(device_backend, launched):
    logits = np.array([[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, 1000.0]], np.float32)
    assert_same_on_both(xent, [logits, np.array([1, 2], np.int32)])
    assert launched == ["fw_sparse_xent", "fw_sparse_xent_grad"]


def test_out_of_range_labels_give_nan_on_the_gpu(device_backend):
    """As in TensorFlow's GPU kernel: the CPU path's range check would cost a sync per step."""
    loss = fw.nn.sparse_softmax_cross_entropy_with_logits(on("gpu", np.array([0, 3, -1])),
                                                          on("gpu", np.zeros((3, 3), np.float32)))
    np.testing.assert_allclose(loss.numpy(), [np.log(3), np.nan, np.nan])


def test_what_the_kernels_do_not_take_runs_unfused(device_backend, launched):
    logits = rng.standard_normal((4, 5)).astype(np.float16)
    labels = rng.integers(0, 5, 4).astype(np.int32)
    assert_same_on_both(xent, [logits, labels], {"rtol": 2e-3, "atol": 2e-3})
    assert launched == []


def test_a_jacobians_cotangent_takes_the_unfused_gradient(device_backend, launched):
    logits, labels = rng.standard_normal((4, 5)), np.array([0, 4, 2, 2], np.int32)
    rows = []
    for device in ("cpu", "gpu"):
        x = on(device, logits)
        with fw.GradientTape() as tape:
            tape.watch(x)
            y = xent(x, on(device, labels))
        rows.append(tape.jacobian(y, x).numpy())
    np.testing.assert_allclose(rows[1], rows[0], rtol=1e-12, atol=1e-12)
    assert launched == ["fw_sparse_xent"]  # the gradient's cotangent has a leading axis


@pytest.mark.parametrize("make, kernel", [
    (lambda: Adam(0.01), "fw_adam"), (lambda: Adam(0.01, amsgrad=True), "fw_adam_amsgrad"),
    (lambda: AdamW(0.01), "fw_adam"), (lambda: SGD(0.1), "fw_sgd"),
    (lambda: SGD(0.1, momentum=0.9), "fw_sgd_momentum"),
    (lambda: SGD(0.1, momentum=0.9, nesterov=True), "fw_sgd_momentum"),
], ids=["adam", "amsgrad", "adamw", "sgd", "momentum", "nesterov"])
def test_optimizer_updates_in_one_kernel_per_variable(device_backend, launched, make, kernel):
    start = [rng.standard_normal(shape).astype(np.float32) for shape in ((7, 5), (5,))]
    grads = [[rng.standard_normal(w.shape).astype(np.float32) for w in start] for _ in range(3)]
    results = []
    for device in ("cpu", "gpu"):
        variables = [fw.Variable(on(device, w)) for w in start]
        optimizer = make()
        for step in grads:
            optimizer.apply_gradients(zip([on(device, g) for g in step], variables))
        results.append([v.numpy() for v in variables + optimizer.variables[1:]])
    for expected, actual in zip(*results, strict=True):
        np.testing.assert_allclose(actual, expected, **F32)
    assert launched == [kernel] * 6  # 3 steps of 2 variables


def test_nccl_collectives_of_one_rank_keep_the_buffer(device_backend):
    """The NCCL calls fw.distributed makes, on a one-rank communicator: the buffer's values
    stay, and the returned event says when the GPU is done."""
    try:
        communicator = backend.nccl_communicator(1, backend.nccl_unique_id(), 0)
    except RuntimeError as error:  # CuPy without its NCCL library
        pytest.skip(str(error))
    for dtype in (np.float32, np.int64, np.uint8):
        array = on("gpu", np.arange(6, dtype=dtype))._value
        for kind in ("allreduce", "broadcast"):
            event = backend.nccl_collective(communicator, kind, array)
            event.synchronize()
            assert event.done
        np.testing.assert_array_equal(backend.to_host(array), np.arange(6))


# --- moving between host and device, and mixing them ----------------------------------------------
def test_tensors_move_and_come_back(device_backend):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    gpu = on("gpu", host)
    assert gpu.device == "gpu" and isinstance(gpu.numpy(), np.ndarray)
    np.testing.assert_array_equal(gpu.numpy(), host)
    back = fw.to_device(gpu * 2.0, "cpu")
    assert back.device == "cpu" and isinstance(back._value, np.ndarray)
    np.testing.assert_array_equal(back.numpy(), host * 2)
    assert fw.constant(host).device == "gpu" and fw.zeros((2,)).device == "gpu"  # the backend


def test_a_model_moves_in_place_and_its_optimizer_follows(device_backend):
    """Two steps on the host, a move, two on the GPU: the weights of four host steps."""
    x = rng.standard_normal((16, 6)).astype(np.float32)
    y = rng.integers(0, 3, 16).astype(np.int32)
    runs = []
    for move in (False, True):
        fw.set_backend("numpy")
        fw.random.set_seed(1)
        model, optimizer = MLP(units=8, classes=3), Adam(0.05)
        model(x)
        variables = model.variables
        for step in range(4):
            device = "gpu" if move and step >= 2 else "cpu"
            if move and step == 2:
                assert model.to_device("gpu") is model
                assert all(a is b for a, b in zip(model.variables, variables, strict=True))
            train_step(model, [optimizer], on(device, x), on(device, y))
        runs.append(model.get_weights())
        if move:
            assert all(v.device == "gpu" for v in model.variables + optimizer.variables[1:])
            model.to_device("cpu")
            assert all(v.device == "cpu" for v in model.variables)
    for expected, actual in zip(*runs, strict=True):
        np.testing.assert_allclose(actual, expected, **F32)


def test_mixing_host_and_device_tensors_is_an_error_naming_op_and_devices(device_backend):
    host, gpu = on("cpu", np.ones((2, 3), np.float32)), on("gpu", np.ones((2, 3), np.float32))
    cases = [(lambda: host + gpu, "add"), (lambda: gpu * host, "multiply"),
             (lambda: fw.matmul(gpu, fw.transpose(host)), "matmul"),
             (lambda: fw.nn.bias_add_relu(gpu, host[0]), "bias_add_relu"),
             (lambda: fw.nn.sparse_softmax_cross_entropy_with_logits(on("cpu", [0, 1]), gpu),
              "sparse_softmax_cross_entropy_with_logits")]
    for mix, name in cases:
        with pytest.raises(ValueError, match=rf"^{name}: inputs live on different devices "
                                             rf"\(.* on (cpu|gpu), .* on (gpu|cpu)\)") as info:
            mix()
        assert " on cpu" in str(info.value) and " on gpu" in str(info.value)
    variable = fw.Variable(gpu)
    with pytest.raises(ValueError, match="cannot assign a cpu value to variable .* on gpu"):
        variable.assign(np.zeros((2, 3), np.float32))
    variable.assign_add(1.0)  # Python numbers are no arrays: they go where the variable is
    variable.assign([[0.0, 1.0, 2.0]] * 2)
    np.testing.assert_array_equal(variable.numpy(), [[0, 1, 2]] * 2)


# --- a short training, and the runner ------------------------------------------------------------
class MLP(Model):
    """The seed's layer-wise model (relu hidden layer, logits out)."""

    def __init__(self, units=100, classes=10):
        super().__init__()
        self.flatten = Flatten()
        self.dense1 = Dense(units, activation="relu")
        self.dense2 = Dense(classes)

    def call(self, inputs):
        return self.dense2(self.dense1(self.flatten(inputs)))


def train_step(model, optimizers, x, y):
    """The layer-wise step: one persistent tape, every gradient, then every update."""
    layers = [model.dense1, model.dense2] if len(optimizers) == 2 else [model]
    with fw.GradientTape(persistent=True) as tape:
        loss = fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(
            y, model(x), from_logits=True))
    grads = [tape.gradient(loss, layer.variables) for layer in layers]
    for optimizer, layer, g in zip(optimizers, layers, grads, strict=True):
        optimizer.apply_gradients(zip(g, layer.variables))
    return float(loss)


def test_the_layerwise_mlp_trains_on_the_gpu_like_on_the_host(device_backend):
    datasets = pytest.importorskip("sklearn.datasets")
    images, labels = datasets.load_digits(return_X_y=True)
    images = (images / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    batches = np.random.default_rng(0).integers(0, len(images), (30, 50))
    curves = []
    for device, backend_name in (("cpu", "numpy"), ("gpu", "cupy")):
        fw.set_backend(backend_name)  # where the weights are created
        fw.random.set_seed(0)
        model = MLP()
        model(on(device, images[:1]))
        optimizers = [Adam(1e-3), Adam(1e-2)]
        curves.append([train_step(model, optimizers, on(device, images[b]),
                                  on(device, labels[b].astype(np.int32))) for b in batches])
    np.testing.assert_allclose(curves[1], curves[0], rtol=1e-3)
    assert curves[1][-1] < 0.5 * curves[1][0]


def test_the_runner_trains_and_resumes_on_cupy_like_on_numpy(device_backend, tmp_path):
    """``--set backend=cupy`` trains the default config as NumPy does, checkpoints included:
    a run resumed on the GPU after one epoch ends where the uninterrupted runs end."""
    def run(name, out, *args):
        assert tape_train([str(ROOT / "configs/layerwise_mlp.toml"), "--no-progress", "--output",
                           str(tmp_path / out), "--set", f"backend={name}",
                           "--set", "output.plot=false", *args]) == 0
        return [json.loads(line) for line in (tmp_path / out / "metrics.jsonl").read_text()
                .splitlines()]

    expected = run("numpy", "numpy", "--set", "epochs=2")
    run("cupy", "resumed", "--set", "epochs=1")
    for metrics in (run("cupy", "cupy", "--set", "epochs=2"),
                    run("cupy", "resumed", "--set", "epochs=2", "--resume")):
        assert [m.keys() for m in metrics] == [m.keys() for m in expected]
        for epoch, expected_epoch in zip(metrics, expected, strict=True):
            for key, value in expected_epoch.items():
                assert epoch[key] == pytest.approx(value, rel=1e-3, abs=1e-4), key
    assert 'backend = "cupy"' in (tmp_path / "cupy" / "config.toml").read_text()


# --- with no GPU: clear errors, and a host path that never touches a kernel ----------------------
def fake_cupy(count):
    """A module that imports as CuPy, whose CUDA runtime reports ``count`` GPUs or fails."""
    def device_count():
        if isinstance(count, Exception):
            raise count
        return count
    return types.SimpleNamespace(cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=device_count)))


@pytest.mark.parametrize("installed, message", [
    (None, r"CuPy is not installed \(pip install 'tape-framework\[gpu\]'"),
    (fake_cupy(RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")),
     "CuPy is installed but no GPU is visible: cudaErrorNoDevice: no CUDA-capable device"),
    (fake_cupy(0), "CuPy is installed but no GPU is visible: CUDA reports 0 devices"),
])
def test_asking_for_cupy_without_it_or_without_a_gpu_says_which(monkeypatch, installed, message):
    monkeypatch.setitem(sys.modules, "cupy", installed)  # None: the import fails
    monkeypatch.setattr(backend, "_cupy", None)
    fw.set_backend("numpy")
    for ask in (lambda: fw.set_backend("cupy"), lambda: fw.to_device(fw.ones(2), "gpu"),
                lambda: fw.Variable([1.0]).to_device("gpu")):
        with pytest.raises(RuntimeError, match=message):
            ask()
    assert fw.get_backend() == "numpy" and fw.ones(2).device == "cpu"  # no silent fall-back
    dense = Dense(2)
    dense(np.ones((1, 3), np.float32))
    with pytest.raises(RuntimeError, match=message):
        dense.to_device("gpu")
    assert all(v.device == "cpu" for v in dense.variables)
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        dense.to_device("tpu")


@pytest.mark.skipif(CUPY_INSTALLED, reason="CuPy is installed here")
def test_framework_backend_cupy_without_cupy_fails_at_import():
    result = subprocess.run([sys.executable, "-c", "import framework"], cwd=ROOT,
                            env={"FRAMEWORK_BACKEND": "cupy", "PATH": ""},
                            capture_output=True, text=True)
    assert result.returncode != 0 and "CuPy is not installed" in result.stderr


def test_an_unbuilt_layer_says_how_to_build_before_moving():
    with pytest.raises(ValueError, match=r"to_device\(\) needs the weights.*build"):
        Dense(3).to_device("cpu")


def test_the_host_path_never_touches_a_kernel(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a fused GPU kernel was reached on the host path")
    for name in ("_kernel", "_row_kernel", "fits", "fits_xent", "sum_rows"):
        monkeypatch.setattr(kernels, name, refuse)
    fw.set_backend("numpy")
    x, y = rng.standard_normal((20, 8, 8, 1)).astype(np.float32), rng.integers(0, 10, 20)
    model = MLP(units=16)
    for optimizers in ([Adam(1e-3), SGD(0.1, momentum=0.9, nesterov=True)],
                       [Adam(1e-3, amsgrad=True)], [SGD(0.1)]):
        assert np.isfinite(train_step(model, optimizers, fw.constant(x), fw.constant(y)))
    with fw.GradientTape() as tape:
        h = fw.constant(x.reshape(20, 64))
        tape.watch(h)
        out = fw.nn.relu(h)
    assert tape.jacobian(out, h).shape == (20, 64, 20, 64)


def test_a_training_backward_masks_each_fused_relu_once(monkeypatch):
    """The first-order backward on arrays of a fused op computes the ReLU-masked cotangent once and
    derives every argument's gradient from it, so fusing costs nothing in the backward pass."""
    masks = []
    for module, name in ((nn_ops, "_relu_grad_array"), (host, "relu_grad")):  # (the host form)
        mask = getattr(module, name)
        monkeypatch.setattr(module, name, lambda g, y, mask=mask: masks.append(g) or mask(g, y))
    x, w = fw.Variable(rng.standard_normal((4, 3))), fw.Variable(rng.standard_normal((3, 3)))
    b = fw.Variable(rng.standard_normal(3))
    with fw.GradientTape(persistent=True) as tape:
        y = fw.nn.bias_add_relu(x, b)
        z = fw.nn.dense(x, w, b, relu=True)
    grads = tape.gradient(y, [x, b])
    assert len(masks) == 1
    np.testing.assert_allclose(grads[1].numpy(), grads[0].numpy().sum(axis=0))
    assert len(tape.gradient(z, [x, w, b])) == 3 and len(masks) == 2


def test_the_runner_says_what_is_missing_in_one_line(tmp_path, capsys, monkeypatch):
    config = str(ROOT / "configs/layerwise_mlp.toml")
    assert tape_train([config, "--set", "backend=gpu", "--output", str(tmp_path / "a")]) == 2
    assert "backend (from --set): expected one of 'numpy', 'cupy', got 'gpu'" in \
        capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "cupy", None)  # as if CuPy were not installed
    monkeypatch.setattr(backend, "_cupy", None)
    assert tape_train([config, "--set", "backend=cupy", "--no-progress",
                       "--output", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "backend (from --set)" in err and "CuPy is not installed" in err
