"""Data-parallel training over MPI, in Horovod's shape: ``fw.distributed``.

Every rank (``mpiexec -n 4 python train.py``) runs the same script on its own shard of each
batch; ``DistributedGradientTape`` averages the gradients so that all ranks take the same step,
and ``broadcast_variables`` makes them start from the same weights::

    fw.distributed.init()                                  # first thing, as hvd.init()
    fw.distributed.broadcast_variables(model.variables)    # after the model is built
    x, y = fw.distributed.shard(x, y)                      # this rank's rows of the batch
    with fw.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    tape = fw.distributed.DistributedGradientTape(tape)
    grads = tape.gradient(loss, model.trainable_variables)  # the same on every rank

mpi4py is imported only when an MPI launcher started the process (or mpi4py is loaded already):
otherwise this is rank 0 of 1 and every call is a cheap no-op, so the framework never needs MPI.
Device (CuPy) arrays are reduced with NCCL on the GPU, host arrays with MPI. With several GPUs
on a machine, give each rank its own (``CUDA_VISIBLE_DEVICES`` from ``local_rank()``).

No failure hangs the job: an uncaught exception prints ``rank N failed: ...`` and aborts every
rank; a rank that exits early (``sys.exit``, the end of its script) tells the others, which abort
naming it when they next wait for it; the launcher cleans up after a rank killed by a signal;
``FRAMEWORK_DISTRIBUTED_TIMEOUT`` (seconds) bounds each wait, for a rank that is alive but stuck.
"""
import atexit
import hashlib
import os
import pickle
import sys
import time
import traceback

import numpy as np

from .engine import backend, nest
from .engine.context import replayed
from .engine.dtypes import is_floating
from .engine.tape import UnconnectedGradients
from .engine.tensor import Tensor, Variable, convert_to_tensor, wrap

# Set by mpiexec/mpirun of MPICH, Intel MPI, Open MPI, and by PMIx launchers such as srun.
_LAUNCH_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")
_LOCAL_RANK_VARS = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "PMIX_LOCAL_RANK")
_BYE = 7101  # message tag of "this rank has left", on the framework's own communicator


class _World:
    """The job as this process sees it; ``comm`` is None for a plain (non-MPI) process."""

    def __init__(self):
        self.ready, self.comm, self.mpi, self.nccl = False, None, None, None
        self.rank, self.size, self.local_rank = 0, 1, 0
        self.calls = 0  # collectives completed: all ranks run the same sequence of them
        self.departed = {}  # rank -> how many collectives it completed before it exited
        self.stats = {"calls": 0, "bytes": 0, "seconds": 0.0, "nccl_calls": 0}


_w = _World()


def init():
    """Join the MPI job this process was launched in (idempotent; other calls do it lazily).

    Call it first, as ``hvd.init()``: it is collective when under MPI (every rank must reach it).
    """
    if _w.ready:
        return
    launched = any(v in os.environ for v in _LAUNCH_VARS)
    if launched or "mpi4py.MPI" in sys.modules:
        try:
            from mpi4py import MPI
        except ImportError:
            n = os.environ.get("PMI_SIZE") or os.environ.get("OMPI_COMM_WORLD_SIZE") or "several"
            if n != "1":
                raise RuntimeError(
                    f"this process was started by an MPI launcher ({n} processes) but mpi4py is "
                    f"not installed, so every process would train alone on all the data: "
                    f"pip install 'tape-framework[mpi]'") from None
        else:
            _w.mpi, _w.comm = MPI, MPI.COMM_WORLD.Dup()  # our own channel: user tags can't clash
            _w.rank, _w.size = _w.comm.Get_rank(), _w.comm.Get_size()
            local = next((os.environ[v] for v in _LOCAL_RANK_VARS if v in os.environ), None)
            _w.local_rank = int(local) if local is not None else \
                _w.comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
            if _w.size > 1:
                sys.excepthook = _excepthook
                atexit.register(_say_goodbye)
    _w.ready = True


def rank():
    """This process's index in the job, 0 without MPI."""
    init()
    return _w.rank


def size():
    """How many processes train together, 1 without MPI."""
    init()
    return _w.size


def local_rank():
    """This process's index among those on its machine (pick its GPU with it), 0 without MPI."""
    init()
    return _w.local_rank


def is_root():
    """Whether this is rank 0, the one that logs, evaluates and writes checkpoints."""
    return rank() == 0


def communication_stats(reset=False):
    """Collectives run so far: ``calls``, ``bytes`` sent into them, ``seconds`` spent waiting
    (which includes waiting for slower ranks), and ``nccl_calls`` (those run on the GPU)."""
    out = dict(_w.stats)
    if reset:
        _w.stats.update(calls=0, bytes=0, seconds=0.0, nccl_calls=0)
    return out


def shard(*arrays):
    """This rank's contiguous slice of each array's leading (batch) axis, Horovod-style.

    Every rank must see the same global batch (same data order, e.g. the same shuffle seed). With
    a batch size divisible by ``size()``, the averaged gradient equals the whole batch's.
    """
    r, n = rank(), size()

    def cut(a):
        if a is None or n == 1:
            return a
        rows = len(a)
        return a[r * rows // n:(r + 1) * rows // n]

    out = tuple(cut(a) for a in arrays)
    return out[0] if len(out) == 1 else out


def allreduce_mean(values, weight=None):
    """The mean over the ranks of a metric (a number, array, tensor, or nest of them).

    ``weight`` (e.g. this rank's sample count) makes it a weighted mean, for unequal shards.
    Scalars come back as Python floats, arrays as float64 NumPy arrays, in ``values``' structure.
    """
    flat = [np.asarray(backend.to_host(v._value) if isinstance(v, Tensor) else v, np.float64)
            for v in nest.flatten(values)]
    w = 1.0 if weight is None else float(weight)
    if _world() is not None:
        buf = np.concatenate([a.ravel() * w for a in flat] + [np.array([w])])
        _collective(buf, "allreduce", "allreduce_mean")
        if buf[-1] == 0:
            raise ValueError("allreduce_mean: the weights add up to 0 over all ranks")
        buf, at = buf[:-1] / buf[-1], 0
        for i, a in enumerate(flat):
            flat[i], at = buf[at:at + a.size].reshape(a.shape), at + a.size
    flat = [float(a) if a.ndim == 0 else a for a in flat]
    return nest.pack_sequence_as(values, flat) if nest.is_nested(values) else flat[0]


def broadcast_object(obj, root=0):
    """``root``'s ``obj`` on every rank: any picklable value (a resumed epoch, RNG states)."""
    if _world() is None:
        return obj
    data = pickle.dumps(obj) if _w.rank == root else b""
    length = np.array([len(data)], np.int64)
    _collective(length, "broadcast", "broadcast_object", root)
    buf = np.frombuffer(data, np.uint8).copy() if _w.rank == root \
        else np.empty(int(length[0]), np.uint8)
    _collective(buf, "broadcast", "broadcast_object", root)
    return obj if _w.rank == root else pickle.loads(buf.tobytes())


def barrier():
    """Wait until every rank gets here (e.g. before the others read what the root wrote)."""
    if _world() is not None:
        _wait(_w.comm.Ibarrier().Test, "barrier", 0)


class DistributedGradientTape:
    """Wraps a tape that has recorded a step; ``gradient`` averages over all ranks.

    The gradients are packed into one contiguous buffer per (device, dtype), with a count of the
    ranks that had each gradient appended, and reduced in one collective: one call per step, not
    per variable. A source whose gradient is None on every rank stays None; one that is None on
    some ranks only is an error (the ranks would step differently). Everything else (``watch``,
    ``jacobian``...) is the wrapped tape's, unaveraged.
    """

    def __init__(self, tape):
        self._tape = tape._tape if isinstance(tape, DistributedGradientTape) else tape

    def __getattr__(self, name):  # only called for what this class lacks: the tape's API
        if name == "_tape":
            raise AttributeError(name)
        return getattr(self._tape, name)

    def __enter__(self):
        self._tape.__enter__()
        return self

    def __exit__(self, *exc_info):
        return self._tape.__exit__(*exc_info)

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        grads = self._tape.gradient(target, sources, output_gradients, unconnected_gradients)
        if _world() is None:
            return grads
        flat_s = nest.flatten(sources)  # (an IndexedSlices is averaged dense)
        flat_g = [g if g is None else convert_to_tensor(g) for g in nest.flatten(grads)]
        return nest.pack_sequence_as(sources, _average(flat_s, flat_g))


@replayed  # traced by fw.function, it averages each call's gradients anew, never frozen
def average_gradients(grads, variables):
    """``grads`` (one tensor per variable of ``variables``) averaged over the ranks, as
    ``DistributedGradientTape.gradient`` averages them; a list of tensors. For an optimizer's
    ``apply_gradients`` inside a compiled step (``fw.keras.callbacks.DataParallel``)."""
    grads = [convert_to_tensor(g) for g in grads]
    return grads if _world() is None else _average(list(variables), grads)


def _average(sources, grads):
    """The gradients averaged over the ranks: one fused allreduce per (device, dtype) group."""
    out = list(grads)
    for (_, dtype), idx in _groups(sources):
        xp = backend.array_module(sources[idx[0]]._value)
        parts = [grads[i]._value.astype(dtype, copy=False).ravel() if grads[i] is not None
                 else xp.zeros(sources[i]._value.size, dtype) for i in idx]
        parts.append(xp.asarray([grads[i] is not None for i in idx], dtype=dtype))
        buf = xp.concatenate(parts)
        _collective(buf, "allreduce", "gradient")
        have = backend.to_host(buf[-len(idx):])  # a few bytes: the data stays where it is
        for i, n in zip(idx, have, strict=True):
            if n not in (0, _w.size):
                raise ValueError(
                    f"the gradient of {_describe(sources[i], i)} is None on {_w.size - int(n)} "
                    f"of {_w.size} ranks but not on the others (rank {_w.rank}: "
                    f"{'present' if grads[i] is not None else 'None'}); every rank must "
                    f"compute the same loss over the same variables")
        buf = buf[:-len(idx)]
        buf /= _w.size
        at = 0
        for i in idx:
            v = sources[i]._value
            if grads[i] is not None:
                out[i] = wrap(buf[at:at + v.size].reshape(v.shape))
            at += v.size
    return out


def broadcast_variables(variables, root=0):
    """Give every rank ``root``'s values of ``variables`` (weights, and optimizer state on resume).

    ``variables``: variables, nests of them, or objects with ``.variables`` (a model, an
    optimizer). All ranks first check that they hold the same number of variables with the same
    shapes, dtypes and devices, in the same order, and raise naming the first that differs.
    Names are not compared: they come from per-process counters that may legitimately differ.
    """
    flat = _variables(variables)
    if _world() is None:
        return
    if not 0 <= root < _w.size:
        raise ValueError(f"root {root} is not a rank of this job of {_w.size}")
    _check_same(flat)
    for _, idx in _groups(flat, floating_only=False):
        xp = backend.array_module(flat[idx[0]]._value)
        buf = xp.concatenate([flat[i]._value.ravel() for i in idx])
        _collective(buf, "broadcast", "broadcast_variables", root)
        if _w.rank != root:
            at = 0
            for i in idx:
                v = flat[i]
                v.assign(buf[at:at + v._value.size].reshape(v.shape))
                at += v._value.size


def _check_same(flat):
    """Raise the same error on every rank, naming the first variable that differs, if any does.

    One small collective when all agree (a digest of the shapes, dtypes and devices); the full
    lists are gathered only to word the error.
    """
    sigs = [(v.shape, v.dtype.name, v.device) for v in flat]
    digest = int.from_bytes(hashlib.blake2b(repr(sigs).encode(), digest_size=7).digest(), "little")
    probe = np.array([digest, -digest], np.int64)
    _collective(probe, "allreduce", "broadcast_variables check", op="max")
    if probe[0] == -probe[1]:
        return
    every = _w.comm.allgather([(v.name, *sig) for v, sig in zip(flat, sigs, strict=True)])
    k = next(k for k in range(max(map(len, every)))
             if len({e[k][1:] if k < len(e) else None for e in every}) > 1)
    name = next(e[k][0] for e in every if k < len(e))
    where = "; ".join(f"rank {r}: " + (f"shape {e[k][1]}, {e[k][2]}, {e[k][3]}" if k < len(e)
                                       else f"missing (it has {len(e)} variables)")
                      for r, e in enumerate(every))
    raise ValueError(f"broadcast_variables: variable {k} '{name}' differs across ranks ({where}); "
                     f"every rank must build the same model (and optimizer state) first")


def _variables(items):
    """The distinct variables in ``items``, in order, models and optimizers expanded."""
    out = []
    for item in nest.flatten(items):
        if isinstance(item, Variable):
            out.append(item)
        elif hasattr(item, "variables"):
            inner = item.variables
            out.extend(_variables(inner() if callable(inner) else inner))
        else:
            raise TypeError(f"broadcast_variables takes variables, or objects with .variables "
                            f"(a model, an optimizer), got {type(item).__name__}")
    return list({id(v): v for v in out}.values())


def _groups(tensors, floating_only=True):
    """Indices by (device, dtype), in an order every rank agrees on."""
    groups = {}
    for i, t in enumerate(tensors):
        if not floating_only or is_floating(t.dtype):
            groups.setdefault((t.device, t.dtype.name), []).append(i)
    return sorted(groups.items())


def _describe(t, i):
    return f"variable {i} '{t.path}'" if isinstance(t, Variable) else f"source {i} ({t.shape})"


def _world():
    init()
    return _w.comm


def _collective(buf, kind, what, root=0, op="sum"):
    """Reduce or broadcast ``buf`` in place: NCCL for device arrays, MPI for host arrays."""
    start = time.perf_counter()
    if backend.is_device_array(buf):
        if _w.nccl is None:
            uid = _w.comm.bcast(backend.nccl_unique_id() if _w.rank == 0 else None, root=0)
            _w.nccl = backend.nccl_communicator(_w.size, uid, _w.rank)
        event = backend.nccl_collective(_w.nccl, kind, buf, root)
        done = lambda: event.done  # noqa: E731
        _w.stats["nccl_calls"] += 1
    elif kind == "allreduce":
        mpi_op = _w.mpi.SUM if op == "sum" else _w.mpi.MAX
        done = _w.comm.Iallreduce(_w.mpi.IN_PLACE, buf, op=mpi_op).Test
    else:
        done = _w.comm.Ibcast(buf, root=root).Test
    _wait(done, what, buf.nbytes)
    _w.stats["seconds"] += time.perf_counter() - start


def _wait(done, what, nbytes):
    """Poll a started collective, aborting the job if a rank it waits for has left or stalls."""
    _w.calls += 1
    _w.stats["calls"] += 1
    _w.stats["bytes"] += nbytes
    limit = float(os.environ.get("FRAMEWORK_DISTRIBUTED_TIMEOUT") or 0)
    start = time.perf_counter()
    status = _w.mpi.Status()
    while not done():
        while _w.comm.Iprobe(source=_w.mpi.ANY_SOURCE, tag=_BYE, status=status):
            count = np.zeros(1, np.int64)
            _w.comm.Recv(count, source=status.Get_source(), tag=_BYE)
            _w.departed[status.Get_source()] = int(count[0])
        gone = [r for r, n in _w.departed.items() if n < _w.calls]
        if gone:
            _abort(f"rank {gone[0]} stopped early: it exited (sys.exit or the end of its script) "
                   f"after {_w.departed[gone[0]]} collective calls, while rank {_w.rank} waited "
                   f"for it in call {_w.calls} ({what}); stopping all ranks")
        waited = time.perf_counter() - start
        if limit and waited > limit:
            _abort(f"rank {_w.rank}: no answer from the other ranks in {what} for {limit:g} s "
                   f"(FRAMEWORK_DISTRIBUTED_TIMEOUT); a rank is stuck; stopping all ranks")
        if waited > 0.01:  # past a short spin, let a rank that waits leave the CPU to others
            time.sleep(0.0002)


def _abort(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    if _w.nccl is not None:
        _w.nccl.abort()
    _w.comm.Abort(1)


def _excepthook(kind, value, tb):
    """An uncaught exception on one rank stops them all, instead of leaving them waiting."""
    text = "".join(traceback.format_exception(kind, value, tb))
    _abort(f"rank {_w.rank} failed: {kind.__name__}: {value}\n{text}")


def _say_goodbye():
    """At exit, tell the other ranks how far this one got, so none waits for it forever."""
    if _w.mpi.Is_finalized():
        return
    count = np.array([_w.calls], np.int64)
    for peer in range(_w.size):
        if peer != _w.rank:
            try:  # a tiny eager send: it returns at once, even to a peer that has already left
                _w.comm.Send(count, dest=peer, tag=_BYE)
            except _w.mpi.Exception:
                pass
