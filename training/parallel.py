"""What the runner does differently under MPI (``mpiexec -n 4 tape-train CONFIG``).

Every rank runs the whole runner on the same config and data. The shuffling generator is seeded
alike everywhere, so all ranks cut the same global batches; each trains on its shard of every
batch, ``fw.distributed.average_gradients`` averages the gradients inside the compiled step
(``training.step``), and the ranks take the same step. Files are the root's alone: it prepares
the run folder, reads the checkpoint on ``--resume`` (the others get what they need by
broadcast, so no shared disk is needed) and writes the config, metrics, checkpoints and curves.
In one process (no launcher, or no MPI installed) every function here reduces to what the
runner always did.

Dropout is the one random draw made per shard. Rank 0 keeps drawing from the run's seeded
stream; rank r > 0 draws from a stream of its own, seeded ``[seed, RANK_STREAM, r]``, so no two
shards share masks. Every rank's state goes into each checkpoint, so a resume under MPI draws
the very masks the uninterrupted run would have drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

import framework as fw

from .config.reading import Source

RANK_STREAM = 2  # [seed, 2, rank]: the dropout stream of a rank > 0, apart from the others
T = TypeVar("T")


class ReportedByRoot(Exception):
    """A step run on the root failed with an error the root has already printed; the other
    ranks stop with it quietly, rather than print the same line once per rank."""


def on_root(action: Callable[[], T], errors: tuple[type[Exception], ...]) -> T:
    """``action()`` run on the root only (it touches files), its result given to every rank.

    One of ``errors`` raised by it is raised on every rank, so that all ranks stop together: on
    the root the error itself, on the others ``ReportedByRoot``. Any other exception is a crash
    of the root, which ``fw.distributed`` turns into an abort of the whole job.
    """
    if fw.distributed.size() == 1:
        return action()
    result, failure = None, None
    if fw.distributed.is_root():
        try:
            result = action()
        except errors as error:
            failure = error
    result, failed = fw.distributed.broadcast_object((result, failure is not None))
    if failure is not None:
        raise failure
    if failed:
        raise ReportedByRoot()
    return result


def check_batch_size(config: dict[str, Any], source: Source) -> str | None:
    """Refuse a batch too small to give every rank a row; say so when it splits unevenly.

    Uneven shards train correctly (``train_step`` weights each rank's loss by its rows), but
    the ranks wait for the largest shard at every step. Returns a line to log, or None.
    """
    ranks, batch = fw.distributed.size(), config["batch_size"]
    if batch < ranks:
        raise source.error("batch_size", f"{batch} is smaller than the {ranks} MPI ranks: some "
                                         f"ranks would get no rows in any batch; use at least "
                                         f"{ranks} (a multiple of {ranks} splits evenly)")
    if batch % ranks:
        return (f"note: batch_size {batch} does not split evenly over {ranks} ranks (shards of "
                f"{batch // ranks} and {batch // ranks + 1} rows); each rank's loss is weighted "
                f"by its rows, so every step is still the whole batch's, but a multiple of "
                f"{ranks} keeps the ranks equally busy")
    return None


def start_rank_stream(seed: int) -> None:
    """Under MPI, move rank r > 0 to a dropout stream of its own (see the module's docstring)."""
    if fw.distributed.rank() > 0:
        fw.random.set_seed([seed, RANK_STREAM, fw.distributed.rank()])


def random_states() -> list[dict[str, Any]] | None:
    """Every rank's ``fw.random`` state, in rank order, for the root's checkpoint (collective);
    None in one process, whose single state the checkpoint already holds."""
    ranks = fw.distributed.size()
    if ranks == 1:
        return None
    return [fw.distributed.broadcast_object(fw.random.get_state(), root=r) for r in range(ranks)]


def restore_random_state(extra: dict[str, Any], seed: int) -> None:
    """Give this rank the ``fw.random`` state it had at the checkpoint.

    A checkpoint from fewer ranks (one process, say) has no state for the extra ranks: they
    start the stream of their own that a fresh run would give them.
    """
    states = extra.get("fw_rng_ranks") or [extra["fw_rng"]]
    rank = fw.distributed.rank()
    if rank < len(states):
        fw.random.set_state(states[rank])
    else:
        start_rank_stream(seed)


def synchronize(model: Any, optimizers: list[Any]) -> None:
    """Give every rank the root's weights and optimizer state (a no-op in one process)."""
    fw.distributed.broadcast_variables([model, *optimizers], root=0)



def metric_results(metrics: dict[str, Any]) -> dict[str, float]:
    """Each ``fw.metrics`` object's result over the rows of every rank, by name; then every
    metric is reset for the next pass.

    A metric's state variables are sums (totals, counts, confusion counts: Keras's
    ``aggregation="sum"``), so adding each one over the ranks gives the state of the whole
    data, and the result is the whole data's, whatever the metric (one collective for all).
    """
    ranks = fw.distributed.size()
    variables = [v for metric in metrics.values() for v in metric.variables]
    if ranks > 1 and variables:
        means = fw.distributed.allreduce_mean([v.numpy() for v in variables])
        for variable, mean in zip(variables, means, strict=True):
            total = np.asarray(mean * ranks, variable.dtype)
            variable.assign(fw.to_device(total, variable.device))
    results = {name: float(metric.result()) for name, metric in metrics.items()}
    for metric in metrics.values():
        metric.reset_state()
    return results
