"""fw.distributed: one-process semantics here; MPI semantics in ranks launched with mpiexec.

The multi-process tests run tests/mpi_scripts/dp_worker.py under ``mpiexec -n 2`` on this machine
(loopback only) and compare with the same training run in this process on the combined batch.
They skip, saying why, where mpi4py or mpiexec is missing (``pip install ".[test]"`` brings both:
the mpi4py wheel and MPICH's); every launch has a timeout, so a hang fails instead of stalling.
"""
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import framework as fw
from framework import distributed
from mpi_launch import find_mpiexec

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().parent / "mpi_scripts" / "dp_worker.py"
TIMEOUT = 120


def _load_worker():
    spec = importlib.util.spec_from_file_location("dp_worker", WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


worker = _load_worker()


# --- one process: rank 0 of 1, every call a cheap no-op ---------------------------------------
def test_one_process_is_rank_0_of_1():
    assert (distributed.rank(), distributed.size(), distributed.local_rank()) == (0, 1, 0)
    assert distributed.is_root()
    x = np.arange(6)
    assert distributed.shard(x) is x
    assert distributed.allreduce_mean({"loss": fw.constant(2.5), "acc": np.ones(2)}) == \
        {"loss": 2.5, "acc": pytest.approx(np.ones(2))}
    distributed.barrier()
    state = {"epoch": 3}
    assert distributed.broadcast_object(state) is state
    assert distributed.communication_stats()["calls"] == 0


def test_importing_framework_does_not_import_mpi4py():
    env = {k: v for k, v in os.environ.items() if k not in distributed._LAUNCH_VARS}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    code = ("import sys, framework as fw; fw.distributed.size(); "
            "assert 'mpi4py' not in sys.modules, 'mpi4py was imported'")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=TIMEOUT)


def test_gradient_equals_the_plain_tapes_and_keeps_structure_and_none():
    w, b, unused = fw.Variable([[1.0, 2.0]]), fw.Variable([0.5]), fw.Variable([3.0])
    sources = {"w": w, "pair": (b, unused)}
    with distributed.DistributedGradientTape(fw.GradientTape(persistent=True)) as tape:
        loss = fw.reduce_sum(fw.square(w * 3.0 + b))
    plain = tape._tape.gradient(loss, sources)
    averaged = tape.gradient(loss, sources)
    assert set(averaged) == {"w", "pair"} and isinstance(averaged["pair"], tuple)
    np.testing.assert_array_equal(averaged["w"].numpy(), plain["w"].numpy())
    np.testing.assert_array_equal(averaged["pair"][0].numpy(), plain["pair"][0].numpy())
    assert averaged["pair"][1] is None
    assert tape.watched_variables() == (w, b)  # the rest of the tape's API passes through


def test_wrapping_after_the_with_block_as_horovod_users_write_it():
    v = fw.Variable(2.0)
    with fw.GradientTape() as tape:
        y = v * v
    tape = distributed.DistributedGradientTape(tape)
    assert float(tape.gradient(y, v)) == 4.0


def test_broadcast_variables_expands_models_and_rejects_other_things():
    class Model:
        def __init__(self):
            self.variables = [fw.Variable(1.0), fw.Variable(2.0)]

    distributed.broadcast_variables([Model(), fw.Variable(3.0)])
    with pytest.raises(TypeError, match="takes variables"):
        distributed.broadcast_variables([np.ones(3)])


def test_shard_splits_the_batch_axis_like_horovod(monkeypatch):
    x = np.arange(10).reshape(5, 2)
    parts = []
    for r in range(2):
        monkeypatch.setattr(distributed._w, "rank", r)
        monkeypatch.setattr(distributed._w, "size", 2)
        xs, ys = distributed.shard(x, fw.constant(np.arange(5.0)))
        assert len(xs) == len(ys)
        parts.append(xs)
    np.testing.assert_array_equal(np.concatenate(parts), x)
    assert [len(p) for p in parts] == [2, 3]


def test_launched_by_mpiexec_without_mpi4py_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(distributed, "_w", distributed._World())
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # import fails as if not installed
    monkeypatch.setenv("PMI_SIZE", "2")
    monkeypatch.setenv("PMI_RANK", "0")
    with pytest.raises(RuntimeError, match=r"mpi4py is not installed.*tape-framework\[mpi\]"):
        distributed.size()


# --- several processes under mpiexec ----------------------------------------------------------
def launch(mode, out, n=2, *args, env=None, check=True):
    """Run ``n`` ranks of the worker; returns the completed process and its wall time."""
    run_env = {k: v for k, v in os.environ.items() if k not in distributed._LAUNCH_VARS}
    run_env.update({"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                    "OMP_NUM_THREADS": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1",
                    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", **(env or {})})
    cmd = [find_mpiexec(), "-n", str(n), sys.executable, str(WORKER), mode, str(out), *args]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=TIMEOUT)
    took = time.monotonic() - start
    if check and proc.returncode:
        pytest.fail(f"mpiexec failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc, took


def one_process_reference(steps):
    """The same training in this process, without MPI, on the combined (global) batches, on
    the host like the workers (whatever backend the session runs on)."""
    fw.set_backend("numpy")
    x, y = worker.make_data()
    params = worker.make_params(seed=1000)  # rank 0's initial weights, which the broadcast sends
    state = worker.make_adam_state(params)
    losses = worker.train(params, state, x, y, 0, steps)
    return {v.path: v.numpy() for v in params}, np.array(losses)


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [1, 2])
def test_ranks_train_like_one_process_on_the_combined_batch(tmp_path, ranks):
    launch("train", tmp_path, ranks, "--steps", "6")
    weights, losses = one_process_reference(6)
    results = [np.load(tmp_path / f"rank{r}.npz") for r in range(ranks)]
    for r, res in enumerate(results):
        assert (int(res["size"]), int(res["local_rank"]), int(res["t"])) == (ranks, r, 6)
        for name, value in weights.items():
            np.testing.assert_allclose(res[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
            np.testing.assert_array_equal(res[name], results[0][name])  # ranks agree exactly
        np.testing.assert_allclose(res["losses"], losses, rtol=1e-5)  # mean of the shard losses
        assert float(res["mean_rank"]) == pytest.approx((ranks - 1) / 2)
        assert int(res["from_root"]) == 0
        weighted = sum(q * (q + 1) for q in range(ranks)) / sum(q + 1 for q in range(ranks))
        assert float(res["weighted"]) == pytest.approx(weighted)


@pytest.mark.mpi
def test_layers_and_optimizers_train_like_one_process(tmp_path):
    pytest.importorskip("layers")
    pytest.importorskip("optimizers")
    launch("keras", tmp_path, 2, "--steps", "4")
    expected = worker.keras_run(seed=0, steps=4)  # rank 0's initial weights, the whole batch
    for r in range(2):
        got = np.load(tmp_path / f"rank{r}.npz")
        for i, value in enumerate(expected):
            np.testing.assert_allclose(got[f"arr_{i}"], value, rtol=1e-5, atol=1e-6)


@pytest.mark.mpi
def test_resume_under_mpi_continues_identically(tmp_path):
    first, resumed = tmp_path / "first", tmp_path / "resumed"
    first.mkdir()
    resumed.mkdir()
    launch("train", first, 2, "--steps", "6", "--save-at", "3")
    # Rank 1 starts from other random weights and zero Adam state; only rank 0 reads the file.
    launch("train", resumed, 2, "--steps", "6", "--save-at", "3",
           "--resume", str(first / "ckpt.npz"))
    whole, again = np.load(first / "rank0.npz"), np.load(resumed / "rank1.npz")
    for name in ("w1", "b1", "w2", "b2", "t"):
        np.testing.assert_array_equal(again[name], whole[name], err_msg=name)
    np.testing.assert_array_equal(again["losses"], whole["losses"][3:])


def _assert_stopped(proc, took, *needles):
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert took < 60, f"took {took:.0f} s to stop"
    for needle in needles:
        assert needle in output, output


@pytest.mark.mpi
def test_a_rank_that_raises_stops_every_rank_naming_it(tmp_path):
    proc, took = launch("raise", tmp_path, check=False)
    _assert_stopped(proc, took, "rank 1 failed: RuntimeError: injected failure on purpose")


@pytest.mark.mpi
def test_a_rank_that_exits_early_stops_every_rank_naming_it(tmp_path):
    proc, took = launch("exit", tmp_path, check=False)
    _assert_stopped(proc, took, "rank 1 stopped early", "rank 0 waited for it")


@pytest.mark.mpi
def test_a_killed_rank_stops_every_rank(tmp_path):
    proc, took = launch("kill", tmp_path, check=False)
    _assert_stopped(proc, took)


@pytest.mark.mpi
def test_mismatched_model_is_caught_at_the_first_broadcast_naming_the_variable(tmp_path):
    proc, took = launch("mismatch", tmp_path, check=False)
    _assert_stopped(proc, took, "variable 2 'w2:0' differs across ranks (rank 0: shape (16, 3), "
                                "float32, cpu; rank 1: shape (17, 3), float32, cpu)")


@pytest.mark.mpi
def test_a_rank_with_fewer_variables_is_caught_at_the_first_broadcast(tmp_path):
    proc, took = launch("fewer", tmp_path, check=False)
    _assert_stopped(proc, took, "variable 12 't:0' differs across ranks", "rank 1: missing")


@pytest.mark.mpi
def test_a_gradient_none_on_some_ranks_only_is_an_error(tmp_path):
    proc, took = launch("none", tmp_path, check=False)
    _assert_stopped(proc, took, "gradient of variable 3 'b2' is None on 1 of 2 ranks")


# --- the GPU path: NCCL on device buffers -----------------------------------------------------
class _DeviceArray(np.ndarray):
    """Stands in for a CuPy array in the routing test below (``get`` is CuPy's way home)."""

    def get(self):
        return np.asarray(self)


class _FakeXp:
    """The array module of ``_DeviceArray``s, as ``backend.array_module`` gives CuPy for them."""

    def __getattr__(self, name):
        make = getattr(np, name)
        return lambda *args, **kwargs: np.asarray(make(*args, **kwargs)).view(_DeviceArray)


def test_device_buffers_go_to_nccl_and_never_through_mpi(monkeypatch):
    """Without a GPU: a fake device array and fake NCCL check the routing in fw.distributed
    (the NCCL id over MPI once, then one NCCL call per step, the host only for the metadata)."""
    fw.set_backend("numpy")  # the fake device arrays below stand in for the GPU's
    calls = []

    class Request:
        Test = staticmethod(lambda: True)

    class Comm:  # MPI, size 1: carries the NCCL id and the host-side metadata only
        def bcast(self, obj, root):
            calls.append(("mpi bcast", len(obj)))
            return obj

        def Iallreduce(self, _, buf, op):
            assert not isinstance(buf, _DeviceArray), "a device buffer went through MPI"
            return Request()

        def Iprobe(self, **_):
            return False

    class Event:
        done = True

    def nccl_collective(comm, kind, array, root=0):
        assert comm == "nccl communicator" and isinstance(array, _DeviceArray)
        calls.append((kind, array.dtype.name, array.size))
        return Event()

    class MPI:
        Status, ANY_SOURCE, SUM, MAX, IN_PLACE = object, -1, 0, 1, None

    world = distributed._World()
    world.ready, world.comm, world.mpi = True, Comm(), MPI
    monkeypatch.setattr(distributed, "_w", world)
    monkeypatch.setattr(fw.backend, "is_device_array", lambda a: isinstance(a, _DeviceArray))
    monkeypatch.setattr(fw.backend, "array_module",
                        lambda a: _FakeXp() if isinstance(a, _DeviceArray) else np)
    monkeypatch.setattr(fw.backend, "nccl_unique_id", lambda: (7,) * 128)
    monkeypatch.setattr(fw.backend, "nccl_communicator", lambda n, uid, r: "nccl communicator")
    monkeypatch.setattr(fw.backend, "nccl_collective", nccl_collective)
    w, b = fw.Variable(np.ones((2, 3), np.float32)), fw.Variable(np.zeros(3, np.float32))
    unused = fw.Variable(np.zeros(1, np.float32))
    for v in (w, b, unused):
        v._value = v._value.view(_DeviceArray)
    with fw.GradientTape(persistent=True) as tape:
        loss = fw.reduce_sum(fw.square(fw.constant(np.ones((4, 2), np.float32)) @ w + b))
    plain = tape.gradient(loss, [w, b, unused])
    averaged = distributed.DistributedGradientTape(tape).gradient(loss, [w, b, unused])
    distributed.broadcast_variables([w, b])
    assert calls == [("mpi bcast", 128), ("allreduce", "float32", 6 + 3 + 1 + 3),
                     ("broadcast", "float32", 9)]
    assert averaged[2] is None and all(g.device == "gpu" for g in averaged[:2])
    for p, a in zip(plain[:2], averaged[:2], strict=True):
        np.testing.assert_array_equal(np.asarray(p._value), np.asarray(a._value))


@pytest.mark.gpu
@pytest.mark.mpi
@pytest.mark.parametrize("device_backend", ["cupy"], indirect=True)  # skips saying what is missing
def test_gpu_gradients_and_broadcasts_go_through_nccl(tmp_path, device_backend):
    launch("gpu", tmp_path, 1, env={"FRAMEWORK_BACKEND": "cupy"})
    assert int(np.load(tmp_path / "rank0.npz")["nccl_calls"]) >= 2
