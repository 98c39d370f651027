"""One rank of ``fit`` under MPI with ``fw.keras.callbacks.DataParallel``, launched by
tests/test_fit_mpi.py: ``python fit_worker.py OUT_DIR [--eager]``.

Each rank builds its model from a seed of its own (only the broadcast makes them agree), fits
its contiguous shard of the data unshuffled, with a ``CSVLogger`` that only rank 0 may run, and
writes its final weights to ``OUT_DIR/rank{r}.npz``. ``reference`` is the one-process run the
test compares with: the same model (rank 0's seed) on the ranks' batches put together.
"""
import sys

import numpy as np

import framework as fw
import layers
import optimizers
from layers import callbacks as cb

N, D, C, BATCH, EPOCHS = 64, 8, 3, 8, 3  # BATCH: rows per rank per step


def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(N, D)).astype(np.float32), rng.integers(0, C, N)


def model(seed, eager=False):
    fw.random.set_seed(seed)
    built = layers.Sequential([layers.Input((D,)), layers.Dense(16, activation="tanh"),
                               layers.Dense(C)])
    built.compile(optimizer=optimizers.Adam(0.05), metrics=["accuracy"], run_eagerly=eager,
                  loss=fw.losses.SparseCategoricalCrossentropy(from_logits=True))
    return built


def reference(ranks, eager=False):
    """One process on the global batches: batch i is every rank's batch i, in rank order."""
    x, y = data()
    shard = N // ranks
    order = [r * shard + i * BATCH + j for i in range(shard // BATCH) for r in range(ranks)
             for j in range(BATCH)]
    one = model(seed=1000, eager=eager)  # rank 0's, which the broadcast sends
    history = one.fit(x[order], y[order], batch_size=BATCH * ranks, epochs=EPOCHS,
                      shuffle=False, verbose=0)
    return one.get_weights(), history.history


def main(out, eager):
    fw.distributed.init()
    rank = fw.distributed.rank()
    x, y = fw.distributed.shard(*data())
    mine = model(seed=1000 + rank, eager=eager)
    logger = cb.CSVLogger(f"{out}/log{rank}.csv")
    history = mine.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=False, verbose=0,
                       callbacks=[cb.DataParallel(logger)])
    # fit over, the optimizer averages no more: its own apply_gradients, a fresh train step
    assert "apply_gradients" not in vars(mine.optimizer) and mine.train_function is None
    np.savez(f"{out}/rank{rank}.npz", *mine.get_weights(),
             loss=np.array(history.history["loss"]))


if __name__ == "__main__":
    main(sys.argv[1], "--eager" in sys.argv)
