"""The MLP training step on the GPU: this framework on NumPy, on CuPy, and PyTorch on CUDA.

784 -> Dense(1024, relu) -> Dense(1024, relu) -> Dense(10), softmax cross-entropy (mean) from
the logits, Adam(1e-3), float32, at batch 256 and 4096: the step a user writes with layers,
the tape and an optimizer, on data that already lives on the device. Each row warms up first
(CuPy compiles its kernels, cuBLAS picks its algorithms), then times whole seconds of steps
between two device synchronisations, several times, and reports the median. Neither library
uses TF32 for float32 matmuls by default (PyTorch since 1.12, CuPy without CUPY_TF32=1), so
both run the same cuBLAS SGEMMs. The target is a CuPy step within 1.3x of PyTorch's at 4096.

A backend that cannot run here (no CuPy, no GPU, a PyTorch without CUDA) is one line saying
why; without a GPU only the NumPy rows are measured.

    python benchmarks/gpu_mlp_step.py
    python benchmarks/gpu_mlp_step.py --batch 4096 --seconds 5
"""
import argparse
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


def framework_step(backend_name, batch):
    """One training step of this framework on ``backend_name``, and the device synchronisation."""
    fw.set_backend(backend_name)  # a RuntimeError says what is missing for "cupy"
    sync = (fw.backend.cupy_module().cuda.Device().synchronize if backend_name == "cupy"
            else lambda: None)
    fw.random.set_seed(0)
    x, y = (fw.constant(a) for a in data(batch))
    model = Sequential([Dense(n, activation="relu") for n in SIZES[1:-1]] + [Dense(SIZES[-1])])
    optimizer = Adam(1e-3)

    def step():
        with fw.GradientTape() as tape:
            loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(y, model(x)))
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return step, sync


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
    return step, torch.cuda.synchronize


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, action="append", help="default: 256 and 4096")
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per row")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    args = parser.parse_args()
    implementations = {"framework, NumPy": lambda b: framework_step("numpy", b),
                       "framework, CuPy": lambda b: framework_step("cupy", b),
                       "PyTorch, CUDA": torch_step}
    skipped, results = {}, {}
    for batch in args.batch or [256, 4096]:
        for name, make in implementations.items():
            if name in skipped:
                continue
            try:
                step, sync = make(batch)
            except RuntimeError as error:
                skipped[name] = str(error)
                continue
            results[name, batch] = seconds_per_step(step, sync, args.seconds, args.repeats,
                                                    args.warmup)
        fw.set_backend("numpy")
    print(f"\nMLP {' -> '.join(map(str, SIZES))}, Adam, float32; median of {args.repeats} runs "
          f"of {args.seconds / args.repeats:.1f} s after {args.warmup} warm-up steps\n")
    rows = []
    for (name, batch), seconds in results.items():
        torch_seconds = results.get(("PyTorch, CUDA", batch))
        ratio = f"{seconds / torch_seconds:.2f}x" if torch_seconds else "n/a"
        rows.append([name, batch, f"{1 / seconds:.1f}", f"{seconds * 1e3:.3f}", ratio])
    table(["implementation", "batch", "steps/s", "ms/step", "time / PyTorch CUDA"], rows)
    for name, reason in skipped.items():
        print(f"{name}: skipped ({reason})")
    cupy, torch = results.get(("framework, CuPy", 4096)), results.get(("PyTorch, CUDA", 4096))
    if cupy and torch:
        verdict = "met" if cupy / torch <= TARGET else "missed"
        print(f"\nbatch 4096: CuPy step {cupy / torch:.2f}x PyTorch's "
              f"(target <= {TARGET}x: {verdict})")


if __name__ == "__main__":
    main()
