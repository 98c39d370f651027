"""One forward and backward pass of ``fw.nn.depthwise_conv2d`` (float32, a batch of 64
28x28x32 images, a 3x3 kernel, "SAME"): the primitive (a strided multiply-add per kernel cell,
its array VJP the same loop backwards), the composition it replaces (the windows gathered,
times the kernel, summed), and for scale the full ``conv2d`` of 32 to 32 channels, in paired
rounds; the median milliseconds of each (the fastest and slowest round's beside it).

    python benchmarks/depthwise_step.py --rounds 9
"""
import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.common import limit_threads  # noqa: E402

limit_threads()  # 2 BLAS threads, before NumPy loads

import numpy as np  # noqa: E402

import framework as fw  # noqa: E402
from framework.ops import convolution  # noqa: E402

SHAPE, KERNEL = (64, 28, 28, 32), (3, 3)


def composed(x, w):
    """The depthwise convolution as the windows' ops: what the primitive's tensor VJPs are."""
    padded = fw.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]])
    windows = convolution._windows(padded, geometry=(KERNEL, (1, 1), (1, 1)))
    return fw.reduce_sum(windows * w[:, :, :, 0], axis=(3, 4))


def step(f, x, w):
    with fw.GradientTape() as tape:
        tape.watch([x, w])
        loss = fw.reduce_sum(f(x, w))
    return tape.gradient(loss, [x, w])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    rounds = parser.parse_args().rounds
    rng = np.random.default_rng(0)
    x = fw.constant(rng.normal(size=SHAPE).astype(np.float32))
    w = fw.constant(rng.normal(size=KERNEL + (SHAPE[3], 1)).astype(np.float32))
    full = fw.constant(rng.normal(size=KERNEL + (SHAPE[3], SHAPE[3])).astype(np.float32))
    impls = {"depthwise_conv2d": (lambda a, b: fw.nn.depthwise_conv2d(a, b, 1, "SAME"), w),
             "composition": (composed, w),
             "conv2d 32->32": (lambda a, b: fw.nn.conv2d(a, b, 1, "SAME"), full)}
    np.testing.assert_allclose(composed(x, w).numpy(),
                               fw.nn.depthwise_conv2d(x, w, 1, "SAME").numpy(), rtol=1e-4,
                               atol=1e-4)
    times = {name: [] for name in impls}
    for _ in range(rounds):
        for name, (f, weight) in impls.items():
            step(f, x, weight)  # (warm: the same shapes as timed)
            start = time.perf_counter()
            step(f, x, weight)
            times[name].append(1000 * (time.perf_counter() - start))
    print(f"{'forward + backward':<20} {'median ms':>10} {'min':>8} {'max':>8}")
    for name, ms in times.items():
        print(f"{name:<20} {np.median(ms):>10.1f} {min(ms):>8.1f} {max(ms):>8.1f}")


if __name__ == "__main__":
    main()
