"""The framework keeps a step's freed memory for the next step (``framework.tuning.memory``):
a fresh process whose steps hold a few dozen 1 MB arrays at their peak takes no page faults
for them step after step, where NumPy alone, on glibc, faults every page back in."""
import os
import subprocess
import sys

import pytest

from framework.tuning.memory import keep_freed_memory

resource = pytest.importorskip("resource")  # (the page-fault count: Unix only)

STEPS = """
import resource, sys
if sys.argv[1] == "framework":
    import framework
import numpy as np
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    peak = [np.ones(1 << 18, np.float32) for _ in range(30)]  # 30 MB alive at each step's peak
    del peak
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _page_faults(imports):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", STEPS, imports], capture_output=True,
                          text=True, check=True, cwd=root, env=dict(os.environ, PYTHONPATH=root))
    return int(done.stdout)


def test_steps_of_large_arrays_take_no_page_faults_once_the_framework_is_imported():
    if not keep_freed_memory():
        pytest.skip("the C library has no mallopt (not glibc)")
    with_framework, numpy_alone = _page_faults("framework"), _page_faults("numpy")
    assert with_framework < 50 * 30 * 256 // 10  # (a tenth of one fault per page per step)
    assert with_framework * 10 < numpy_alone
