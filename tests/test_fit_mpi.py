"""``fit`` under ``mpiexec -n 2`` with ``fw.keras.callbacks.DataParallel``: every rank ends with
the weights one process reaches on the ranks' batches put together (to float32 rounding: the
ranks add their gradients in another order), compiled or eager; the epoch logs are the whole
data's; the callbacks given to ``DataParallel`` write on rank 0 alone. Skips where mpi4py or
mpiexec is missing, as the other MPI tests do."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from framework import distributed
from mpi_launch import find_mpiexec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "mpi_scripts"))
import fit_worker  # noqa: E402

TIMEOUT = 120


def launch(out, *args):
    env = {k: v for k, v in os.environ.items() if k not in distributed._LAUNCH_VARS}
    env.update({"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                "OMP_NUM_THREADS": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    cmd = [find_mpiexec(), "-n", "2", sys.executable, fit_worker.__file__, str(out), *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"


@pytest.mark.mpi
@pytest.mark.parametrize("eager", [False, True])
def test_fit_on_two_ranks_gives_one_process_weights_on_the_doubled_batch(tmp_path, eager):
    launch(tmp_path, *(["--eager"] if eager else []))
    weights, history = fit_worker.reference(2, eager)
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(2)]
    for result in ranks:
        for i, want in enumerate(weights):
            np.testing.assert_allclose(result[f"arr_{i}"], want, rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(result[f"arr_{i}"], ranks[0][f"arr_{i}"])
        np.testing.assert_allclose(result["loss"], history["loss"], rtol=1e-5)
    assert sorted(p.name for p in tmp_path.glob("log*.csv")) == ["log0.csv"]  # rank 0 alone
    lines = (tmp_path / "log0.csv").read_text().splitlines()
    assert lines[0].startswith("epoch,accuracy,loss,") and len(lines) == 1 + fit_worker.EPOCHS


def test_in_one_process_data_parallel_changes_nothing(tmp_path):
    x, y = fit_worker.data()
    from layers import callbacks as cb
    plain = fit_worker.model(0)
    plain.fit(x, y, batch_size=8, epochs=2, verbose=0)
    parallel = fit_worker.model(0)
    parallel.fit(x, y, batch_size=8, epochs=2, verbose=0, callbacks=[
        cb.DataParallel(cb.CSVLogger(str(tmp_path / "log.csv")))])
    for a, b in zip(plain.get_weights(), parallel.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert len((tmp_path / "log.csv").read_text().splitlines()) == 3
