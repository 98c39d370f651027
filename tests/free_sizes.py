"""What a test of ``fw.function`` under a None ``input_signature`` may expect of the trace
count. On NumPy one trace serves every size (``framework/tracing/sizes.py``); a device backend
traces without free sizes, as before them: a None batch is proved on two traces
(``plan.generalize``) and any other None dimension traces per size. Eager's numbers are
checked on every backend alike."""
import pytest

import framework as fw


def on_host():
    return fw.get_backend() == "numpy"


def traces(f, on_host_count, on_device_count):
    """Whether ``f`` traced as often as the backend's way says."""
    want = on_host_count if on_host() else on_device_count
    return f.experimental_get_tracing_count() == want


host_only = pytest.mark.skipif(not on_host(), reason="free sizes trace NumPy arrays only")
