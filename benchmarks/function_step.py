"""fw.function against eager, NumPy by hand and JAX ``jit``, in paired rounds.

Cases (float32, 2 BLAS threads, each implementation in its own process):
- ``small``, ``small-2opt``, ``large``: the training steps of ``mlp_step.py`` (the seed's MLP
  on digits' shapes with Adam; its two-optimizer variant with a persistent tape; 784-1024-1024-10
  at batch 256).
- ``chain``: 400 tiny elementwise ops on 16 values, forward and backward (``tape_overhead.py``'s
  chain); the figure is per op.
- ``jacobian``: the 100x100 Jacobian of ``tanh(W @ x)`` (vectorised rows).
- ``seed-spelling``: the layer-wise example as the tutorials write it, eager: ``fw.nn.softmax``
  in the model, then ``sparse_categorical_crossentropy`` on the probabilities.

Implementations: ``numpy`` (by hand, the floor), ``eager`` (the framework as a user writes it),
``function`` (the same under ``fw.function``), ``jax`` (``jax.jit`` of the same step with Adam by
hand, when JAX is installed). Rounds run one process per implementation in a rotating order, and
"vs NumPy" is the median over rounds of each round's ratio, the lowest and highest beside it.

    python benchmarks/function_step.py
    python benchmarks/function_step.py --case small --runs 7
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks import mlp_step, tape_overhead  # noqa: E402
from benchmarks.common import measure, table  # noqa: E402

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
    import numpy as np
    n_in, hidden, n_out, batch = mlp_step.SHAPES[case]
    x, y = mlp_step.make_data(n_in, n_out, batch)
    x, y = jnp.asarray(x), jnp.asarray(y)
    params = [jnp.asarray(p) for layer in mlp_step.init_weights(n_in, hidden, n_out)
              for p in layer]
    m = [jnp.zeros_like(p) for p in params]
    v = [jnp.zeros_like(p) for p in params]
    rates = [1e-3] * len(params) if case != "small-2opt" else [1e-3, 1e-3, 1e-2, 1e-2]

    def loss_fn(params):
        h = x
        for i in range(0, len(params) - 2, 2):
            h = jax.nn.relu(h @ params[i] + params[i + 1])
        logits = h @ params[-2] + params[-1]
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(logp[jnp.arange(batch), y])

    @jax.jit
    def step(params, m, v, t):
        loss, grads = jax.value_and_grad(loss_fn)(params)
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

    state = [params, m, v, jnp.asarray(0.0, np.float32)]

    def run():
        loss, state[0], state[1], state[2], state[3] = step(*state)
        loss.block_until_ready()
        return loss
    return run


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
        if case == "chain":
            return _jax_chain()
        if case == "jacobian":
            return _jax_jacobian()
        if case == "seed-spelling":
            return _jax_step("small")
        return _jax_step(case)
    if case == "chain":
        if impl == "numpy":
            return tape_overhead.chain_numpy
        import framework as fw
        chain, x = _fw_chain()
        fn = fw.function(chain) if impl == "function" else chain
        return lambda: fn(x)
    if case == "jacobian":
        if impl == "numpy":
            return tape_overhead.jacobian_numpy
        import framework as fw
        jac, x = _fw_jacobian()
        fn = fw.function(jac) if impl == "function" else jac
        return lambda: fn(x)
    step_case = "small" if case == "seed-spelling" else case
    if impl == "numpy":
        return mlp_step.numpy_step(step_case)
    step = _seed_spelling() if case == "seed-spelling" else mlp_step.framework_step(case)
    if impl == "function":
        import framework as fw
        return fw.function(step)
    return step


def worker(impl, case, seconds):
    fn = make(impl, case)
    for _ in range(3):
        fn()  # warm-up: the trace, JAX's compilation, caches
    median, _, _ = measure(fn, repeats=7, min_time=seconds)
    return {"s": median}


def run_worker(impl, case, seconds):
    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", MKL_NUM_THREADS="2",
               JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_cpu_multi_thread_eigen=false")
    out = subprocess.run([sys.executable, __file__, "--worker", impl, "--case", case,
                          "--seconds", str(seconds)], capture_output=True, text=True, env=env)
    if out.returncode:
        lines = out.stderr.strip().splitlines()
        return None, lines[-1] if lines else "failed"
    return json.loads(out.stdout.strip().splitlines()[-1])["s"], None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=CASES, action="append")
    parser.add_argument("--impl", choices=IMPLS, action="append")
    parser.add_argument("--runs", type=int, default=5, help="rounds: processes per implementation")
    parser.add_argument("--seconds", type=float, default=1.0, help="timed seconds per process")
    parser.add_argument("--worker", choices=IMPLS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.case[0], args.seconds)))
        return
    names = args.impl or list(IMPLS)
    if "numpy" not in names:
        names = ["numpy"] + names
    for case in args.case or CASES:
        impls = [n for n in names if not (case == "seed-spelling" and n == "function")]
        runs = {impl: [] for impl in impls}
        for round_ in range(args.runs):
            shift = round_ % len(impls)
            for impl in impls[shift:] + impls[:shift]:
                runs[impl].append(run_worker(impl, case, args.seconds))
        per = tape_overhead.OPS if case == "chain" else 1
        unit = "us per op" if case == "chain" else "ms per step"
        scale = 1e6 if case == "chain" else 1e3
        base = [t for t, _ in runs["numpy"]]
        rows = []
        for impl, done in runs.items():
            errors = [e for _, e in done if e]
            if errors:
                rows.append([impl, "unavailable: " + errors[0][:70], ""])
                continue
            times = [t for t, _ in done]
            ratios = [a / b for a, b in zip(times, base)]
            med = statistics.median(times) / per * scale
            rows.append([impl, f"{med:.3f} ({min(times) / per * scale:.3f}-"
                               f"{max(times) / per * scale:.3f})",
                         f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-"
                         f"{max(ratios):.2f})"])
        print(f"\n{case}: {args.runs} rounds, one process per implementation each\n")
        table(["implementation", f"{unit} (min-max)", "vs NumPy (min-max of rounds)"], rows)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
