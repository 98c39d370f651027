"""The MLP training step on the GPU: this framework on NumPy, on CuPy, and PyTorch on CUDA.

784 -> Dense(1024, relu) -> Dense(1024, relu) -> Dense(10), softmax cross-entropy (mean) from
the logits, Adam(1e-3), float32, at batch 256 and 4096: the step a user writes with layers,
the tape and an optimizer, on data that already lives on the device; on CuPy eagerly, under
``fw.function``, and under ``fw.function`` replayed as a CUDA graph (captured from one step by
stream capture; timing only, its values are not checked). Each row warms up first (CuPy
compiles its kernels, cuBLAS picks its algorithms), then times whole seconds of steps between
two device synchronisations, several times, and reports the median, and the device memory the
row added to its library's pool (CuPy's memory pool, PyTorch's caching allocator: data,
weights, slots and cached temporaries). Neither library uses TF32 for float32 matmuls by
default (PyTorch since 1.12, CuPy without CUPY_TF32=1), so both run the same cuBLAS SGEMMs.
The target is a CuPy step within 1.3x of PyTorch's at 4096.

A backend that cannot run here (no CuPy, no GPU, a PyTorch without CUDA) is one line saying
why; without a GPU only the NumPy rows are measured. ``--emulated`` runs the CuPy rows on the
CuPy emulator of the tests (which checks that the script runs, nothing about speed).

    python benchmarks/gpu_mlp_step.py
    python benchmarks/gpu_mlp_step.py --batch 4096 --seconds 5 --json results.json
"""
import argparse
import gc
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.common import table  # noqa: E402

import numpy as np  # noqa: E402

import framework as fw  # noqa: E402
from layers import Dense, Sequential  # noqa: E402
from optimizers import Adam  # noqa: E402

SIZES = (784, 1024, 1024, 10)
TARGET = 1.3  # CuPy's step time over PyTorch's, at batch 4096


def data(batch):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((batch, SIZES[0])).astype(np.float32),
            rng.integers(0, SIZES[-1], batch).astype(np.int64))


def framework_step(backend_name, batch, compiled=False):
    """One training step of this framework on ``backend_name`` (under ``fw.function`` when
    ``compiled``), the device synchronisation, and the bytes its memory pool holds."""
    fw.set_backend(backend_name)  # a RuntimeError says what is missing for "cupy"
    sync, held = lambda: None, None
    if backend_name == "cupy":
        cupy = fw.backend.cupy_module()
        sync = cupy.cuda.Device().synchronize
        if hasattr(cupy, "get_default_memory_pool"):  # not on the emulator
            held = cupy.get_default_memory_pool().total_bytes
    fw.random.set_seed(0)
    x, y = (fw.constant(a) for a in data(batch))
    model = Sequential([Dense(n, activation="relu") for n in SIZES[1:-1]] + [Dense(SIZES[-1])])
    optimizer = Adam(1e-3)

    def step():
        with fw.GradientTape() as tape:
            loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(y, model(x)))
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss
    return (fw.function(step) if compiled else step), sync, held


def graph_step(batch):
    """The ``fw.function`` step captured once as a CUDA graph, and each call a replay of it."""
    step, sync, held = framework_step("cupy", batch, compiled=True)
    cupy = fw.backend.cupy_module()
    if not hasattr(cupy.cuda, "Stream"):
        raise RuntimeError("the CuPy emulator has no CUDA graphs")
    for _ in range(3):  # the trace, and every kernel compiled, before the capture
        step()
    sync()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        try:
            step()
        finally:
            graph = stream.end_capture()
    return lambda: graph.launch(stream), stream.synchronize, held


def torch_step(batch):
    try:
        import torch
    except ImportError:
        raise RuntimeError("PyTorch is not installed") from None
    if not torch.cuda.is_available():
        raise RuntimeError(f"PyTorch {torch.__version__} sees no CUDA device")
    device = torch.device("cuda")
    x, y = (torch.from_numpy(a).to(device) for a in data(batch))
    layers = []
    for a, b in zip(SIZES, SIZES[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), 1e-3, eps=1e-7)

    def step():
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    return step, torch.cuda.synchronize, torch.cuda.memory_reserved


def seconds_per_step(step, sync, seconds, repeats, warmup):
    """Median seconds per step over ``repeats`` timed runs of at least ``seconds / repeats``."""
    for _ in range(warmup):
        step()
    sync()
    samples = []
    for _ in range(repeats):
        count, start = 0, time.perf_counter()
        while count < 3 or time.perf_counter() - start < seconds / repeats:
            step()  # on the GPU this only queues the step's kernels
            count += 1
        sync()  # the clock stops once the device has run everything queued
        samples.append((time.perf_counter() - start) / count)
    return statistics.median(samples)


def release():
    """Give the rows' cached device memory back, so the next row's pool starts empty."""
    gc.collect()
    cupy = fw.backend._cupy
    if cupy is not None and hasattr(cupy, "get_default_memory_pool"):
        cupy.get_default_memory_pool().free_all_blocks()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


IMPLEMENTATIONS = {
    "framework, NumPy": lambda b: framework_step("numpy", b),
    "framework, CuPy": lambda b: framework_step("cupy", b),
    "framework, CuPy, fw.function": lambda b: framework_step("cupy", b, compiled=True),
    "PyTorch, CUDA": torch_step,
    # Last: a capture that fails must not take the other rows with it.
    "framework, CuPy, fw.function + CUDA graph": graph_step,
}


def measure_row(make, batch, args):
    """Seconds per step and the memory the row added (None where its library does not say)."""
    release()
    step, sync, held = make(batch)
    before = held() if held else None
    seconds = seconds_per_step(step, sync, args.seconds, args.repeats, args.warmup)
    added = held() - before if held else None
    del step
    release()
    return seconds, added


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, action="append", help="default: 256 and 4096")
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per row")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    parser.add_argument("--skip", action="append", default=[], choices=IMPLEMENTATIONS,
                        help="leave out an implementation (repeatable)")
    parser.add_argument("--json", metavar="PATH", help="also write the results to PATH")
    parser.add_argument("--emulated", action="store_true",
                        help="CuPy rows on the tests' CuPy emulator (checks the script only)")
    args = parser.parse_args()
    if args.emulated:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "tests"))
        import cupy_emulator
        sys.modules.update(cupy_emulator.modules())
    skipped, results, memory = {}, {}, {}
    for batch in args.batch or [256, 4096]:
        for name, make in IMPLEMENTATIONS.items():
            if name in skipped or name in args.skip:
                continue
            try:
                results[name, batch], memory[name, batch] = measure_row(make, batch, args)
                print(f"{name}, batch {batch}: {results[name, batch] * 1e3:.3f} ms/step",
                      flush=True)  # as it goes: a run stopped early still says this much
            except RuntimeError as error:  # what is missing: CuPy, a GPU, PyTorch's CUDA
                skipped[name] = str(error)
            except Exception as error:  # noqa: BLE001 - a failing row must not stop the others
                skipped[name] = f"failed: {type(error).__name__}: {error}"
            fw.set_backend("numpy")
    print(f"\nMLP {' -> '.join(map(str, SIZES))}, Adam, float32; median of {args.repeats} runs "
          f"of {args.seconds / args.repeats:.1f} s after {args.warmup} warm-up steps\n")
    rows = []
    for (name, batch), seconds in results.items():
        torch_seconds = results.get(("PyTorch, CUDA", batch))
        ratio = f"{seconds / torch_seconds:.2f}x" if torch_seconds else "n/a"
        added = memory[name, batch]
        rows.append([name, batch, f"{1 / seconds:.1f}", f"{seconds * 1e3:.3f}", ratio,
                     "n/a" if added is None else f"{added / 2**20:.0f}"])
    table(["implementation", "batch", "steps/s", "ms/step", "time / PyTorch CUDA",
           "memory added (MiB)"], rows)
    for name, reason in skipped.items():
        print(f"{name}: skipped ({reason})")
    cupy, torch = results.get(("framework, CuPy", 4096)), results.get(("PyTorch, CUDA", 4096))
    if cupy and torch:
        verdict = "met" if cupy / torch <= TARGET else "missed"
        print(f"\nbatch 4096: CuPy step {cupy / torch:.2f}x PyTorch's "
              f"(target <= {TARGET}x: {verdict})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"sizes": SIZES, "target": TARGET, "skipped": skipped, "rows": [
                {"implementation": name, "batch": batch, "seconds_per_step": seconds,
                 "memory_added_bytes": memory[name, batch]}
                for (name, batch), seconds in results.items()]}, f, indent=1)


if __name__ == "__main__":
    main()
