"""One MLP training step, three ways: this framework, NumPy by hand, and PyTorch eager.

Cases (float32, Adam, 2 threads, each implementation in its own process):
- ``small``: 64 -> Dense(100, relu) -> Dense(10), softmax cross-entropy (mean), batch 50: the
  seed's example on digits. ``small-2opt`` is the seed's own variant: a persistent tape and two
  Adam optimizers, one per layer.
- ``large``: 784 -> 1024 relu -> 1024 relu -> 10, batch 256, with the achieved FLOP rate beside
  NumPy's own matmul rate on the same shapes.
- ``memory``: the peak resident memory that 50 large steps add after a warm-up step.

The handwritten NumPy step is the floor a framework on NumPy can reach: forward, a manual
backward and an in-place Adam, written as tightly as we could.

The runs go in rounds, one process per implementation each, in an order that rotates: a
machine that slows down for a while slows each implementation alike, and "vs NumPy" is the
median over rounds of each round's ratio, the lowest and highest round's beside it.

    python benchmarks/mlp_step.py            # all cases
    python benchmarks/mlp_step.py --case large --runs 5
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = {"small": (64, [100], 10, 50), "small-2opt": (64, [100], 10, 50),
          "large": (784, [1024, 1024], 10, 256), "memory": (784, [1024, 1024], 10, 256)}


def glorot(rng, fan_in, fan_out):
    limit = (6 / (fan_in + fan_out)) ** 0.5
    return rng.uniform(-limit, limit, (fan_in, fan_out)).astype("float32")


def make_data(n_in, n_out, batch):
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, n_in)).astype(np.float32)
    y = rng.integers(0, n_out, batch)
    return x, y


def init_weights(n_in, hidden, n_out):
    import numpy as np
    rng = np.random.default_rng(1)
    sizes = [n_in] + hidden + [n_out]
    return [(glorot(rng, a, b), np.zeros(b, np.float32)) for a, b in zip(sizes, sizes[1:])]


# --- the three implementations: each returns a function that runs one step ----------------------
def numpy_step(case):
    """Forward, backward and Adam by hand, in place wherever it saves an allocation."""
    import numpy as np
    n_in, hidden, n_out, batch = SHAPES[case]
    x, y = make_data(n_in, n_out, batch)
    params = [p for layer in init_weights(n_in, hidden, n_out) for p in layer]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    grads = [np.empty_like(p) for p in params]
    b1, b2, eps, lr, t = 0.9, 0.999, 1e-7, 1e-3, [0]
    rows = np.arange(batch)

    def step():
        acts = [x]
        for i in range(0, len(params) - 2, 2):
            h = acts[-1] @ params[i]
            h += params[i + 1]
            np.maximum(h, 0, out=h)
            acts.append(h)
        logits = acts[-1] @ params[-2]
        logits += params[-1]
        logits -= logits.max(axis=1, keepdims=True)
        np.exp(logits, out=logits)
        logits /= logits.sum(axis=1, keepdims=True)
        loss = -np.log(logits[rows, y]).mean()
        g = logits
        g[rows, y] -= 1
        g /= batch
        for i in range(len(params) - 2, -1, -2):
            np.matmul(acts[i // 2].T, g, out=grads[i])
            g.sum(axis=0, out=grads[i + 1])
            if i:
                g = g @ params[i].T
                g *= acts[i // 2] > 0
        t[0] += 1
        lr_t = lr * (1 - b2 ** t[0]) ** 0.5 / (1 - b1 ** t[0])
        for p, gr, mm, vv in zip(params, grads, m, v):
            mm *= b1
            mm += (1 - b1) * gr
            vv *= b2
            gr *= gr
            gr *= 1 - b2
            vv += gr
            np.sqrt(vv, out=gr)
            gr += eps
            np.divide(mm, gr, out=gr)
            gr *= lr_t
            p -= gr
        return loss
    return step


def framework_step(case):
    """The step exactly as a user writes it with layers, optimizers and the tape."""
    import numpy as np
    sys.path.insert(0, ROOT)
    import framework as fw
    from layers import Dense, Sequential
    from optimizers import Adam
    n_in, hidden, n_out, batch = SHAPES[case]
    x, y = make_data(n_in, n_out, batch)
    x, y = fw.constant(x), fw.constant(y.astype(np.int32))
    model = Sequential([Dense(h, activation="relu") for h in hidden] + [Dense(n_out)])
    model(x)
    for layer, (w, b) in zip(model.layers, init_weights(n_in, hidden, n_out)):
        layer.set_weights([w, b])

    if case == "small-2opt":
        dense1, dense2 = model.layers
        opt1, opt2 = Adam(1e-3), Adam(1e-2)

        def step():
            with fw.GradientTape(persistent=True) as tape:
                logits = model(x)
                loss = fw.reduce_mean(
                    fw.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            g1 = tape.gradient(loss, dense1.variables)
            g2 = tape.gradient(loss, dense2.variables)
            opt1.apply_gradients(zip(g1, dense1.variables))
            opt2.apply_gradients(zip(g2, dense2.variables))
            return loss
        return step

    opt = Adam(1e-3)

    def step():
        with fw.GradientTape() as tape:
            logits = model(x)
            loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step


def torch_step(case):
    import torch
    torch.set_num_threads(2)
    n_in, hidden, n_out, batch = SHAPES[case]
    x, y = make_data(n_in, n_out, batch)
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    sizes = [n_in] + hidden + [n_out]
    mods = []
    for (w, b), (a, c) in zip(init_weights(n_in, hidden, n_out), zip(sizes, sizes[1:])):
        lin = torch.nn.Linear(a, c)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w.T))
            lin.bias.copy_(torch.from_numpy(b))
        mods += [lin, torch.nn.ReLU()]
    model = torch.nn.Sequential(*mods[:-1])
    layers = [m for m in model if isinstance(m, torch.nn.Linear)]
    if case == "small-2opt":
        opts = [torch.optim.Adam(layers[0].parameters(), 1e-3, eps=1e-7),
                torch.optim.Adam(layers[1].parameters(), 1e-2, eps=1e-7)]
    else:
        opts = [torch.optim.Adam(model.parameters(), 1e-3, eps=1e-7)]

    def step():
        for o in opts:
            o.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        for o in opts:
            o.step()
        return loss
    return step


IMPLEMENTATIONS = {"framework": framework_step, "numpy": numpy_step, "torch": torch_step}


# --- one process per implementation ----------------------------------------------------------------
def worker(impl, case, seconds):
    step = IMPLEMENTATIONS[impl](case)
    step()
    if case == "memory":
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for _ in range(50):
            step()
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return {"added_mb": (after - before) / 1024}
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 5:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return {"step_s": statistics.median(times)}


def matmul_rate(case):
    """NumPy's own GFLOP/s on the step's matmuls (forward and both backward products)."""
    import numpy as np
    n_in, hidden, n_out, batch = SHAPES[case]
    sizes = [n_in] + hidden + [n_out]
    rng = np.random.default_rng(0)
    mats = [(rng.standard_normal((batch, a)).astype(np.float32),
             rng.standard_normal((a, b)).astype(np.float32),
             rng.standard_normal((batch, b)).astype(np.float32)) for a, b in zip(sizes, sizes[1:])]
    products = lambda: [(x @ w, x.T @ g, g @ w.T) for x, w, g in mats]  # noqa: E731
    products()
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < 1.0:
        products()
        n += 1
    return step_flops(case) / ((time.perf_counter() - t0) / n) / 1e9


def step_flops(case):
    n_in, hidden, n_out, batch = SHAPES[case]
    sizes = [n_in] + hidden + [n_out]
    return sum(3 * 2 * batch * a * b for a, b in zip(sizes, sizes[1:]))


def run_worker(impl, case, seconds):
    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", MKL_NUM_THREADS="2")
    out = subprocess.run([sys.executable, __file__, "--worker", impl, "--case", case,
                          "--seconds", str(seconds)], capture_output=True, text=True, env=env)
    if out.returncode:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"
    return json.loads(out.stdout.strip().splitlines()[-1]), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=list(SHAPES), action="append")
    parser.add_argument("--runs", type=int, default=3,
                        help="rounds: processes per implementation")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per run")
    parser.add_argument("--worker", choices=list(IMPLEMENTATIONS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.case[0], args.seconds)))
        return
    sys.path.insert(0, ROOT)
    from benchmarks.common import table
    names = list(IMPLEMENTATIONS)
    for case in args.case or list(SHAPES):
        runs = {impl: [] for impl in names}
        for round_ in range(args.runs):
            shift = round_ % len(names)
            for impl in names[shift:] + names[:shift]:
                runs[impl].append(run_worker(impl, case, args.seconds))
        results = {}
        for impl, done in runs.items():
            errors = [e for r, e in done if e]
            if errors:
                results[impl] = errors[0]
                continue
            key = "added_mb" if case == "memory" else "step_s"
            results[impl] = [r[key] for r, _ in done]
        print(f"\n{case}: {SHAPES[case]}, {args.runs} processes each\n")
        if case == "memory":
            rows = [[impl, r if isinstance(r, str) else f"{statistics.median(r):.1f} MB"]
                    for impl, r in results.items()]
            table(["implementation", "peak RSS added by 50 steps"], rows)
            continue
        base = results["numpy"] if isinstance(results["numpy"], list) else None
        rows = []
        for impl, r in results.items():
            if isinstance(r, str):
                rows.append([impl, "unavailable: " + r[:60], "", ""])
                continue
            med = statistics.median(r)
            spread = f"{min(r) * 1e3:.3f}-{max(r) * 1e3:.3f}"
            rate = f"{step_flops(case) / med / 1e9:.1f}" if case == "large" else ""
            ratios = [a / b for a, b in zip(r, base)] if base else None
            vs = (f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
                  if base else "")
            rows.append([impl, f"{med * 1e3:.3f} ({spread})", vs, rate])
        table(["implementation", "ms per step (min-max)", "vs NumPy (min-max of rounds)",
               "GFLOP/s"], rows)
        if case == "large":
            print(f"\nNumPy matmul rate on the step's shapes: {matmul_rate(case):.1f} GFLOP/s")


if __name__ == "__main__":
    main()
