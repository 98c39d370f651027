"""Finding ``mpiexec`` for the tests that launch several ranks (shared by the MPI test files)."""
import importlib.util
import shutil
import sys
from pathlib import Path

import pytest


def find_mpiexec():
    """mpiexec next to this Python (the mpich wheel puts it there), else on PATH; else skip."""
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py is not installed (pip install '.[test]' or '.[mpi]' brings it)")
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if not found:
        pytest.skip("no mpiexec next to the Python executable or on PATH "
                    "(pip install '.[test]' brings MPICH's)")
    return found
