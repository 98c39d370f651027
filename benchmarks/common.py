"""Shared helpers of the benchmark scripts: robust timing and a printed table."""
import os
import statistics
import time


def limit_threads(n=2):
    """Pin BLAS thread pools before NumPy loads, so runs compare like for like."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(n))


def measure(fn, repeats=7, min_time=0.2):
    """Median and spread (min, max) of seconds per call, over ``repeats`` timed batches."""
    fn()  # warm-up: imports, caches, lazy builds
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= min_time / 4 or calls >= 1 << 20:
            break
        calls *= 2
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples), min(samples), max(samples)


def table(headers, rows):
    """Print rows as an aligned Markdown table (pastes straight into the README)."""
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    print(line(headers))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in cells[1:]:
        print(line(r))
