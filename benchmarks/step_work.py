"""What one training step does besides its arithmetic: Python calls and peak memory, eager
beside ``fw.function``, and beside the hand-written NumPy step.

Time on a shared machine moves from run to run; these counts do not. Per step:
- ``python calls``: functions entered, Python's and C's (``sys.setprofile``), over one step
  after warm-up. Eager pays for the layers, the tape's records and the walk; a replay calls
  the raw array functions only.
- ``peak MiB``: the most memory the step's arrays held at once above what lived before it
  (``tracemalloc``; NumPy reports its buffers to it). A replay drops each array after its last
  reader, as eager code does.

    python benchmarks/step_work.py
"""
import os
import sys
import tracemalloc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.common import limit_threads, table  # noqa: E402

limit_threads()


def calls_per_step(step):
    """Functions entered during one call of ``step``."""
    count = [0]

    def hook(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1
    sys.setprofile(hook)
    try:
        step()
    finally:
        sys.setprofile(None)
    return count[0] - 1  # (setprofile(None) itself)


def peak_bytes(step):
    """The most memory traced during one call of ``step``, above what lived before it."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        step()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def cases():
    """(case, implementation, step) for each step this script knows."""
    from benchmarks import mlp_step, transformer_step
    import framework as fw
    for case in ("small", "large"):
        yield f"MLP {case}", "numpy", mlp_step.numpy_step(case)
        eager = mlp_step.framework_step(case)
        yield f"MLP {case}", "eager", eager
        yield f"MLP {case}", "fw.function", fw.function(eager)
    yield "W6 Transformer (ops)", "numpy", transformer_step.numpy_step()
    yield "W6 Transformer (ops)", "eager", transformer_step.fw_ops_step(False)
    yield "W6 Transformer (ops)", "fw.function", transformer_step.fw_ops_step(True)


def main():
    rows = []
    for case, impl, step in cases():
        for _ in range(3):  # (traces, slots, lazy builds)
            step()
        rows.append([case, impl, calls_per_step(step), f"{peak_bytes(step) / 2 ** 20:.2f}"])
    table(["step", "implementation", "python calls", "peak MiB"], rows)


if __name__ == "__main__":
    main()
