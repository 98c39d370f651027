"""Shared helpers of the benchmark scripts: robust timing and a printed table."""
import os
import statistics
import time


def adam_by_hand(params, grads, m, v, step, rate):
    """Adam (beta 0.9 / 0.999, epsilon 1e-7) in place on NumPy arrays, as a careful hand-written
    step does it: the hand-written baselines' update (``grads`` is used as scratch)."""
    import numpy as np
    rate = rate * np.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
    for p, g, m_, v_ in zip(params, grads, m, v):
        m_ *= 0.9
        m_ += 0.1 * g
        v_ *= 0.999
        g *= g
        v_ += 0.001 * g
        update = np.sqrt(v_)
        update += 1e-7
        np.divide(m_, update, out=update)
        update *= rate
        p -= update


def jax_on_cpu():
    """JAX on the CPU with one Eigen thread, the settings of every JAX step here (before JAX
    loads)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")


def jax_adam_step(loss_fn, params, data, rates):
    """A training step of ``loss_fn(params, *data)`` as a JAX user writes it: ``jax.jit`` of
    the loss, its gradient and Adam by hand (``adam_by_hand``'s constants, a learning rate per
    weight in ``rates``), the weights and slots donated (updated in place: no copy of them per
    step), the data passed in, already on the device. Returns a function that runs one step
    and returns its loss, waited for."""
    import functools
    import jax
    import jax.numpy as jnp
    import numpy as np

    @functools.partial(jax.jit, donate_argnums=(0, 1, 2))
    def step(params, m, v, t, *data):
        loss, grads = jax.value_and_grad(loss_fn)(params, *data)
        t = t + 1
        out_p, out_m, out_v = [], [], []
        for p, g, mm, vv, lr in zip(params, grads, m, v, rates):
            mm = 0.9 * mm + 0.1 * g
            vv = 0.999 * vv + 0.001 * g * g
            lr_t = lr * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
            out_p.append(p - lr_t * mm / (jnp.sqrt(vv) + 1e-7))
            out_m.append(mm)
            out_v.append(vv)
        return loss, out_p, out_m, out_v, t

    params = [jax.device_put(p) for p in params]
    data = [jax.device_put(a) for a in data]
    state = [params, [jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params],
             jnp.asarray(0.0, np.float32)]

    def run():
        loss, state[0], state[1], state[2], state[3] = step(*state, *data)
        return loss.block_until_ready()
    return run


def fw_classifier_step(model, x, labels, rate, compiled):
    """The framework's training step as a Keras user writes it for a classifier on logits:
    a ``GradientTape`` over ``model(x, training=True)`` and the mean sparse cross-entropy, Adam
    (``rate``, epsilon 1e-7) on the trainable variables; under ``fw.function`` when
    ``compiled``. Returns a function that runs one step and returns its loss."""
    import framework as fw
    from optimizers import Adam
    x, labels = fw.constant(x), fw.constant(labels)
    optimizer = Adam(rate, epsilon=1e-7)
    variables = model.trainable_variables

    def step(x, labels):
        with fw.GradientTape() as tape:
            logits = model(x, training=True)
            loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(labels,
                                                                                 logits))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        return loss
    step = fw.function(step) if compiled else step
    return lambda: float(step(x, labels))


def tf_threads():
    """TensorFlow's thread pools as the BLAS ones (``limit_threads``): ``OMP_NUM_THREADS``
    threads within an op, one op at a time."""
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(int(os.environ["OMP_NUM_THREADS"]))
    tf.config.threading.set_inter_op_parallelism_threads(1)


def paired_parser(description, impls):
    """The command line of the paired-round benchmarks (``cnn_step``, ``transformer_step``)."""
    import argparse
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--impl", choices=impls, action="append")
    parser.add_argument("--rounds", type=int, default=15, help="paired rounds")
    parser.add_argument("--seconds", type=float, default=0.3, help="seconds per burst")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall-clock time per step, or the CPU time of the process that "
                             "runs it (steadier on a shared machine; use one BLAS thread)")
    parser.add_argument("--steps", type=int, default=3, help="steps per burst with --clock cpu")
    for flag, package in (("torch", "PyTorch"), ("tf", "TensorFlow"), ("jax", "JAX")):
        parser.add_argument(f"--{flag}-python",
                            help=f"the interpreter that has {package} (default: this one)")
    return parser


def run_paired(args, make, title, gflop, bases):
    """The paired-round benchmarks' run: each implementation ``make(impl)`` (one that cannot
    be made is listed with why), the step-1 losses checked equal, the rounds on ``args.clock``,
    and the table of ratios to ``bases``."""
    from benchmarks.function_step import interleaved
    fns, missing = {}, {}
    for impl in args.impl:
        try:
            fns[impl] = make(impl)
        except ImportError as e:
            missing[impl] = str(e)
    check_first_losses(fns, 1e-4)
    times = (interleaved(fns, args.rounds, args.seconds) if args.clock == "wall"
             else cpu_rounds(fns, args.rounds, args.steps))
    print(f"\n{title}, {args.rounds} paired rounds, {args.clock} time, "
          f"{os.environ['OMP_NUM_THREADS']} thread(s) ({gflop:.2f} GFLOP of products per step)\n")
    ratio_table(times, missing, gflop, bases)


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


def cpu_burst(step, n):
    """CPU seconds of this process for ``n`` steps: on a machine shared by many processes the
    CPU time a step takes moves far less than its wall-clock time (``--clock cpu``, with one
    BLAS thread)."""
    start = time.process_time()
    for _ in range(n):
        step()
    return time.process_time() - start


def _serve(module, factory):
    """Steps of ``module.factory()`` for a parent process over standard input and output (a
    process of its own: PyTorch's OpenMP threads spin after each op and would slow NumPy's
    BLAS threads down in a shared process, and TensorFlow may live in another interpreter): a
    line ``n`` runs ``n`` steps and answers the first one's loss and the CPU seconds the others
    took."""
    import importlib
    import sys
    step = getattr(importlib.import_module(module), factory)()
    for line in sys.stdin:
        n = int(line)
        loss = step()
        print(loss, cpu_burst(step, n - 1) if n > 1 else 0.0, flush=True)


def remote_step(module, factory, package, python=None):
    """A function that runs one step of ``module.factory()`` in a worker process (under the
    interpreter ``python``, default this one) and returns its loss; its ``cpu_burst(n)`` times
    ``n`` steps there. ImportError where that interpreter lacks ``package``."""
    import subprocess
    import sys
    python = python or sys.executable
    if subprocess.run([python, "-c", f"import {package}"], capture_output=True).returncode:
        raise ImportError(f"{package} is not installed for {python}")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    worker = subprocess.Popen(
        [python, "-c", f"from benchmarks.common import _serve; _serve({module!r}, {factory!r})"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=root,
        env=dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="2"))

    def ask(n):
        worker.stdin.write(f"{n}\n")
        worker.stdin.flush()
        answer = worker.stdout.readline().split()
        if not answer:
            raise RuntimeError(f"the {package} worker stopped (its error is above)")
        return float(answer[0]), float(answer[1])

    def step():
        return ask(1)[0]
    step.cpu_burst = lambda n: ask(n + 1)[1]
    return step


def cpu_rounds(fns, rounds, steps):
    """Per implementation, the CPU seconds per step of each round (a rotating order); each
    function has a ``cpu_burst(n)``."""
    names, times = list(fns), {name: [] for name in fns}
    for round_ in range(rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(fns[name].cpu_burst(steps) / steps)
    return times


def check_first_losses(fns, tolerance):
    """Run step 1 of every implementation (from the same weights) and stop the benchmark if
    any loss departs from the first one's by more than ``tolerance`` relatively."""
    first = {impl: float(fn()) for impl, fn in fns.items()}
    reference = next(iter(first.values()))
    for impl, loss in first.items():
        print(f"step-1 loss {impl}: {loss:.6f}")
        if abs(loss - reference) > tolerance * abs(reference):
            raise SystemExit(f"{impl}'s step-1 loss {loss} differs from {reference}")


def ratio_table(times, missing, gflop, bases):
    """Print per implementation its median (min-max) milliseconds, its GFLOP/s, and the median
    (min-max) over rounds of each round's ratio to each of ``bases`` that ran."""
    bases = [b for b in bases if b in times]
    rows = []
    for impl, done in times.items():
        row = [impl, f"{statistics.median(done) * 1e3:.2f} ({min(done) * 1e3:.2f}-"
                     f"{max(done) * 1e3:.2f})", f"{gflop / statistics.median(done):.0f}"]
        for base in bases:
            ratios = [a / b for a, b in zip(done, times[base])]
            row.append(f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")
        rows.append(row)
    rows += [[impl, "unavailable: " + why[:60], ""] + [""] * len(bases)
             for impl, why in missing.items()]
    table(["implementation", "ms per step (min-max)", "GFLOP/s"] + [f"vs {b}" for b in bases],
          rows)
