"""What a test of ``fw.function`` under a None ``input_signature`` may expect of the trace
count. On NumPy one trace serves every size (``framework/tracing/sizes.py``); a device backend
traces without free sizes, as before them: a None batch is proved on two traces
(``plan.generalize``) and any other None dimension traces per size. Eager's numbers are
checked on every backend alike."""
import functools

import pytest

import framework as fw

FORCED = False  # --free-sizes: every function's batch is free, so counts say nothing here


def on_host():
    return fw.get_backend() == "numpy"


def traces(f, on_host_count, on_device_count):
    """Whether ``f`` traced as often as the backend's way says."""
    if FORCED:
        return True
    want = on_host_count if on_host() else on_device_count
    return f.experimental_get_tracing_count() == want


def host_only(test):
    """Skip ``test`` on a device backend (decided when it runs, once the backend is set)."""
    @functools.wraps(test)
    def run(*args, **kwargs):
        if not on_host():
            pytest.skip("free sizes trace NumPy arrays only")
        return test(*args, **kwargs)
    return run
