"""fw.function against eager, NumPy by hand and JAX ``jit``, in paired rounds.

Cases (float32, 2 BLAS threads):
- ``small``, ``small-2opt``, ``large``: the training steps of ``mlp_step.py`` (the seed's MLP
  on digits' shapes with Adam; its two-optimizer variant with a persistent tape; 784-1024-1024-10
  at batch 256).
- ``chain``: 400 tiny elementwise ops on 16 values, forward and backward (``tape_overhead.py``'s
  chain); the figure is per op.
- ``jacobian``: the 100x100 Jacobian of ``tanh(W @ x)`` (vectorised rows).
- ``seed-spelling``: the layer-wise example as the tutorials write it: ``fw.nn.softmax`` in the
  model, then ``sparse_categorical_crossentropy`` on the probabilities (eager beside the fused
  logits loss, and under ``fw.function``).

Implementations: ``numpy`` (by hand, the floor), ``eager`` (the framework as a user writes it),
``function`` (the same under ``fw.function``), ``jax`` (``jax.jit`` of the same step with Adam by
hand, when JAX is installed). On a shared machine a process's speed drifts from second to
second, so all of a case's implementations run in one process, in paired rounds: each round
times a short burst of each in a rotating order, and "vs NumPy" is the median over rounds of
each round's ratio, the lowest and highest round's beside it.

    python benchmarks/function_step.py
    python benchmarks/function_step.py --case small --rounds 41
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks import mlp_step, tape_overhead  # noqa: E402
from benchmarks.common import jax_adam_step, jax_on_cpu, limit_threads, table  # noqa: E402

limit_threads()  # 2 BLAS threads, before NumPy loads
jax_on_cpu()

CASES = ("small", "small-2opt", "large", "chain", "jacobian", "seed-spelling")
IMPLS = ("numpy", "eager", "function", "jax")


def _fw_chain():
    import numpy as np
    import framework as fw
    x = fw.constant(np.linspace(0, 1, tape_overhead.SIZE, dtype=np.float32))

    def chain(x):
        with fw.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(tape_overhead.STEPS):
                y = y * 1.0001 + 0.0001
        return tape.gradient(y, x)
    return chain, x


def _fw_jacobian():
    import framework as fw
    W, x = fw.constant(tape_overhead.W_np), fw.constant(tape_overhead.x_np)

    def jac(x):
        with fw.GradientTape() as tape:
            tape.watch(x)
            y = fw.tanh(W @ x)
        return tape.jacobian(y, x)
    return jac, x


def _seed_spelling():
    """The layer-wise example's step as written: softmax output, loss on probabilities."""
    import numpy as np
    import framework as fw
    from layers import Dense, Sequential
    from optimizers import Adam
    n_in, hidden, n_out, batch = mlp_step.SHAPES["small"]
    x, y = mlp_step.make_data(n_in, n_out, batch)
    x, y = fw.constant(x), fw.constant(y.astype(np.int32))
    model = Sequential([Dense(hidden[0], activation="relu"), Dense(n_out)])
    model(x)
    for layer, (w, b) in zip(model.layers, mlp_step.init_weights(n_in, hidden, n_out)):
        layer.set_weights([w, b])
    opt = Adam(1e-3)

    def step():
        with fw.GradientTape() as tape:
            probabilities = fw.nn.softmax(model(x))
            loss = fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(y, probabilities))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step


def _jax_step(case):
    import jax
    import jax.numpy as jnp
    n_in, hidden, n_out, batch = mlp_step.SHAPES[case]
    params = [p for layer in mlp_step.init_weights(n_in, hidden, n_out) for p in layer]
    rates = [1e-3] * len(params) if case != "small-2opt" else [1e-3, 1e-3, 1e-2, 1e-2]

    def loss_fn(params, x, y):
        h = x
        for i in range(0, len(params) - 2, 2):
            h = jax.nn.relu(h @ params[i] + params[i + 1])
        logits = h @ params[-2] + params[-1]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(logp[jnp.arange(batch), y])
    return jax_adam_step(loss_fn, params, mlp_step.make_data(n_in, n_out, batch), rates)


def _jax_chain():
    import jax
    import jax.numpy as jnp
    import numpy as np
    x = jnp.asarray(np.linspace(0, 1, tape_overhead.SIZE, dtype=np.float32))

    def f(x):
        y = x
        for _ in range(tape_overhead.STEPS):
            y = y * 1.0001 + 0.0001
        return jnp.sum(y)
    grad = jax.jit(jax.grad(f))
    return lambda: grad(x).block_until_ready()


def _jax_jacobian():
    import jax
    import jax.numpy as jnp
    W, x = jnp.asarray(tape_overhead.W_np), jnp.asarray(tape_overhead.x_np)
    jac = jax.jit(jax.jacrev(lambda v: jnp.tanh(W @ v)))
    return lambda: jac(x).block_until_ready()


def make(impl, case):
    """A function that runs one step of ``case`` the ``impl`` way."""
    if impl == "jax":
        builders = {"chain": _jax_chain, "jacobian": _jax_jacobian}
        return builders[case]() if case in builders else _jax_step(
            "small" if case == "seed-spelling" else case)
    if case in ("chain", "jacobian"):  # a function of one input tensor
        if impl == "numpy":
            return tape_overhead.chain_numpy if case == "chain" else tape_overhead.jacobian_numpy
        fn, x = _fw_chain() if case == "chain" else _fw_jacobian()
        fn = _compiled(fn) if impl == "function" else fn
        return lambda: fn(x)
    if impl == "numpy":
        return mlp_step.numpy_step("small" if case == "seed-spelling" else case)
    step = _seed_spelling() if case == "seed-spelling" else mlp_step.framework_step(case)
    return _compiled(step) if impl == "function" else step


def _compiled(fn):
    import framework as fw
    return fw.function(fn)


def calibrate(fn, seconds):
    """How many calls of ``fn`` take about ``seconds`` (after a warm-up)."""
    for _ in range(3):
        fn()  # the trace, JAX's compilation, caches
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= seconds or calls >= 1 << 16:
            return calls
        calls *= 2


def interleaved(fns, rounds, seconds):
    """Per implementation, the seconds per call of each round: every round times a burst of
    each implementation in turn (a rotating order), so a round's ratios share its load."""
    calls = {name: calibrate(fn, seconds) for name, fn in fns.items()}
    names, times = list(fns), {name: [] for name in fns}
    for round_ in range(rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            fn, n = fns[name], calls[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            times[name].append((time.perf_counter() - start) / n)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=CASES, action="append")
    parser.add_argument("--impl", choices=IMPLS, action="append")
    parser.add_argument("--rounds", type=int, default=21, help="paired rounds per case")
    parser.add_argument("--seconds", type=float, default=0.05, help="seconds per burst")
    args = parser.parse_args()
    names = args.impl or list(IMPLS)
    if "numpy" not in names:
        names = ["numpy"] + names
    for case in args.case or CASES:
        fns, missing = {}, {}
        for impl in names:
            try:
                fns[impl] = make(impl, case)
            except ImportError as e:
                missing[impl] = str(e)
        if case == "seed-spelling":  # beside it, the step with the fused logits loss
            fns["eager, logits loss"] = make("eager", "small")
        times = interleaved(fns, args.rounds, args.seconds)
        per = tape_overhead.OPS if case == "chain" else 1
        unit = "us per op" if case == "chain" else "ms per step"
        scale = (1e6 if case == "chain" else 1e3) / per
        rows = []
        for impl, done in times.items():
            ratios = [a / b for a, b in zip(done, times["numpy"])]
            rows.append([impl, f"{statistics.median(done) * scale:.3f} ({min(done) * scale:.3f}-"
                               f"{max(done) * scale:.3f})",
                         f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-"
                         f"{max(ratios):.2f})"])
        rows += [[impl, "unavailable: " + why[:60], ""] for impl, why in missing.items()]
        print(f"\n{case}: {args.rounds} paired rounds in one process\n")
        table(["implementation", f"{unit} (min-max)", "vs NumPy (min-max of rounds)"], rows)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
