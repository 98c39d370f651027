"""How much does the tape cost? Two measurements from the tape issue, each beside NumPy by hand.

1. A chain of 400 tiny elementwise ops (``y = y * 1.0001 + 0.0001``, 200 times) on a
   16-element float32 vector, recorded and differentiated: microseconds per op. At this size
   NumPy's own work is tiny, so the figure is the framework's dispatch, recording and backward
   walk. Target: at most 3x the handwritten NumPy forward+backward.
2. The 100x100 Jacobian of ``tanh(W @ x)``: the vectorised (pfor) Jacobian against the row loop
   and a handwritten NumPy Jacobian. Targets: pfor >= 10x faster than the loop, within 10x of NumPy.

PyTorch autograd (and torch.func.jacrev) run too when torch is installed.

    python benchmarks/tape_overhead.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.common import limit_threads, measure, table  # noqa: E402

limit_threads()
import numpy as np  # noqa: E402

import framework as fw  # noqa: E402

STEPS, SIZE = 200, 16
OPS = 2 * STEPS


def chain_framework():
    x = fw.constant(np.linspace(0, 1, SIZE, dtype=np.float32))
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(STEPS):
            y = y * 1.0001 + 0.0001
    return tape.gradient(y, x)


def chain_numpy():
    x = np.linspace(0, 1, SIZE, dtype=np.float32)
    a, b = np.float32(1.0001), np.float32(0.0001)
    y = x
    for _ in range(STEPS):  # forward, keeping what the backward pass needs (nothing here)
        y = y * a + b
    g = np.ones_like(y)
    for _ in range(STEPS):  # backward: d(y * a + b)/dy = a
        g = g * a
    return g


def chain_torch(torch):
    def run():
        x = torch.linspace(0, 1, SIZE, dtype=torch.float32, requires_grad=True)
        y = x
        for _ in range(STEPS):
            y = y * 1.0001 + 0.0001
        y.backward(torch.ones_like(y))
        return x.grad
    return run


N = 100
rng = np.random.default_rng(0)
W_np = (rng.standard_normal((N, N)) / np.sqrt(N)).astype(np.float32)
x_np = rng.standard_normal(N).astype(np.float32)


def jacobian_framework(use_pfor):
    W, x = fw.constant(W_np), fw.constant(x_np)

    def run():
        with fw.GradientTape() as tape:
            tape.watch(x)
            y = fw.tanh(W @ x)
        return tape.jacobian(y, x, experimental_use_pfor=use_pfor)
    return run


def jacobian_numpy():
    y = np.tanh(W_np @ x_np)
    return (1 - y * y)[:, None] * W_np


def jacobian_torch(torch):
    W, x = torch.from_numpy(W_np), torch.from_numpy(x_np)
    f = lambda v: torch.tanh(W @ v)  # noqa: E731
    return lambda: torch.func.jacrev(f)(x)


def main():
    try:
        import torch
        torch.set_num_threads(2)
    except ImportError:
        torch = None
    np.testing.assert_allclose(chain_framework().numpy(), chain_numpy(), rtol=1e-5)
    base, _, _ = measure(chain_numpy)
    rows = [["handwritten NumPy", f"{base / OPS * 1e6:.2f}", "1.00x"]]
    for name, fn in [("framework tape", chain_framework)] + (
            [("PyTorch autograd", chain_torch(torch))] if torch else []):
        t, lo, hi = measure(fn)
        rows.append([name, f"{t / OPS * 1e6:.2f} ({lo / OPS * 1e6:.2f}-{hi / OPS * 1e6:.2f})",
                     f"{t / base:.2f}x"])
    print(f"Chain of {OPS} elementwise ops on {SIZE} float32 values, forward + backward\n")
    table(["implementation", "us per op (min-max)", "vs NumPy"], rows)

    np.testing.assert_allclose(jacobian_framework(True)().numpy(), jacobian_numpy(), rtol=1e-4,
                               atol=1e-6)
    base, _, _ = measure(jacobian_numpy)
    rows = [["handwritten NumPy", f"{base * 1e6:.0f}", "1.0x"]]
    loop = None
    for name, fn in [("framework pfor", jacobian_framework(True)),
                     ("framework row loop", jacobian_framework(False))] + (
            [("torch.func.jacrev", jacobian_torch(torch))] if torch else []):
        t, _, _ = measure(fn, repeats=5)
        loop = t if name == "framework row loop" else loop
        rows.append([name, f"{t * 1e6:.0f}", f"{t / base:.1f}x"])
    print(f"\nJacobian of tanh(W @ x), {N}x{N}\n")
    table(["implementation", "us per Jacobian", "vs NumPy"], rows)
    pfor = float(rows[1][1])
    print(f"\npfor is {loop * 1e6 / pfor:.0f}x faster than the row loop")


if __name__ == "__main__":
    main()
