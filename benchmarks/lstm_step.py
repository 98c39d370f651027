"""An LSTM classifier's training step: the framework eager and under fw.function, beside a
NumPy step by hand and PyTorch eager's ``nn.LSTM``, in paired rounds.

The step (float32, 2 threads, or ``OMP_NUM_THREADS``): batch 32, 50 steps of 32 features,
``LSTM(128)``, ``Dense(10)``, softmax cross-entropy on logits, Adam. ``numpy`` is the floor:
the whole forward pass and backpropagation through time written by hand (the input projection
of all steps in one product, the weight gradients as products over all steps at the end),
with Adam by hand. ``function, cell loop`` is the same model with ``RNN(LSTMCell)``: the cell's
dozen ops recorded per step, which LSTM's fused sequence primitive replaces. ``torch`` is
PyTorch's ``nn.LSTM`` + ``nn.Linear`` with ``torch.optim.Adam``, when PyTorch is installed.
As in ``function_step.py``, every round times a burst of each implementation in a rotating
order; the ratios are medians over rounds of each round's ratio.

    python benchmarks/lstm_step.py --rounds 21
"""
import argparse
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.common import limit_threads, table  # noqa: E402
from benchmarks.function_step import interleaved  # noqa: E402

limit_threads()

import numpy as np  # noqa: E402

BATCH, STEPS, FEATURES, UNITS, CLASSES = 32, 50, 32, 128, 10
IMPLS = ("numpy", "eager", "function", "function, cell loop", "torch")


def _data():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(BATCH, STEPS, FEATURES)).astype(np.float32),
            rng.integers(0, CLASSES, size=BATCH).astype(np.int32))


def _framework(compiled, cell_loop=False):
    import framework as fw
    import layers
    import optimizers
    x, y = (fw.constant(a) for a in _data())
    lstm = layers.RNN(layers.LSTMCell(UNITS)) if cell_loop else layers.LSTM(UNITS)
    model = layers.Sequential([lstm, layers.Dense(CLASSES)])
    optimizer = optimizers.Adam(1e-3)

    def step(x, y):
        with fw.GradientTape() as tape:
            logits = model(x, training=True)
            loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    step = fw.function(step) if compiled else step
    return lambda: step(x, y)


def _sigmoid(z):
    return 0.5 * np.tanh(0.5 * z) + 0.5


def _numpy():
    x, y = _data()
    rng = np.random.default_rng(1)
    params = [rng.normal(0, 0.1, size=s).astype(np.float32) for s in
              [(FEATURES, 4 * UNITS), (UNITS, 4 * UNITS), (4 * UNITS,), (UNITS, CLASSES),
               (CLASSES,)]]
    moments = [[np.zeros_like(p), np.zeros_like(p)] for p in params]
    t = [0]
    onehot = np.eye(CLASSES, dtype=np.float32)[y]

    def step():
        kernel, recurrent, bias, dense, dense_bias = params
        projected = (x.reshape(-1, FEATURES) @ kernel + bias).reshape(BATCH, STEPS, -1)
        h = np.zeros((BATCH, UNITS), np.float32)
        c = np.zeros_like(h)
        saved = []
        for s in range(STEPS):
            z = projected[:, s] + h @ recurrent
            i, f, o = (_sigmoid(z[:, k * UNITS:(k + 1) * UNITS]) for k in (0, 1, 3))
            g = np.tanh(z[:, 2 * UNITS:3 * UNITS])
            c_prev, h_prev = c, h
            c = f * c + i * g
            tc = np.tanh(c)
            h = o * tc
            saved.append((i, f, g, o, c_prev, tc, h_prev))
        logits = h @ dense + dense_bias
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        dlogits = (p - onehot) / BATCH
        grads = [None, None, None, h.T @ dlogits, dlogits.sum(0)]
        dh = dlogits @ dense.T
        dc = np.zeros_like(dh)
        dz = np.empty((BATCH, STEPS, 4 * UNITS), np.float32)
        hs = np.empty((BATCH, STEPS, UNITS), np.float32)
        for s in reversed(range(STEPS)):
            i, f, g, o, c_prev, tc, h_prev = saved[s]
            do = dh * tc
            dc = dc + dh * o * (1 - tc * tc)
            dz[:, s, :UNITS] = dc * g * i * (1 - i)
            dz[:, s, UNITS:2 * UNITS] = dc * c_prev * f * (1 - f)
            dz[:, s, 2 * UNITS:3 * UNITS] = dc * i * (1 - g * g)
            dz[:, s, 3 * UNITS:] = do * o * (1 - o)
            hs[:, s] = h_prev
            dh = dz[:, s] @ recurrent.T
            dc = dc * f
        flat = dz.reshape(-1, 4 * UNITS)
        grads[0] = x.reshape(-1, FEATURES).T @ flat
        grads[1] = hs.reshape(-1, UNITS).T @ flat
        grads[2] = flat.sum(0)
        t[0] += 1
        scale = 1e-3 * np.sqrt(1 - 0.999 ** t[0]) / (1 - 0.9 ** t[0])
        for p_, g_, (m, v) in zip(params, grads, moments):
            m += (g_ - m) * 0.1
            v += (g_ * g_ - v) * 0.001
            p_ -= scale * m / (np.sqrt(v) + 1e-7)
    return step


def _torch():
    import torch
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))  # (limit_threads's count)
    x, y = (torch.from_numpy(a) for a in _data())
    y = y.long()
    lstm, dense = torch.nn.LSTM(FEATURES, UNITS, batch_first=True), torch.nn.Linear(UNITS,
                                                                                  CLASSES)
    optimizer = torch.optim.Adam([*lstm.parameters(), *dense.parameters()], 1e-3)

    def step():
        optimizer.zero_grad()
        out, _ = lstm(x)
        loss = torch.nn.functional.cross_entropy(dense(out[:, -1]), y)
        loss.backward()
        optimizer.step()
    return step


MAKERS = {"numpy": _numpy, "eager": lambda: _framework(False),
          "function": lambda: _framework(True),
          "function, cell loop": lambda: _framework(True, cell_loop=True), "torch": _torch}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=IMPLS, action="append")
    parser.add_argument("--rounds", type=int, default=11, help="paired rounds")
    parser.add_argument("--seconds", type=float, default=0.2, help="seconds per burst")
    args = parser.parse_args()
    fns, missing = {}, {}
    for impl in args.impl or IMPLS:
        try:
            fns[impl] = MAKERS[impl]()
        except ImportError as e:
            missing[impl] = str(e)
    times = interleaved(fns, args.rounds, args.seconds)
    base = "torch" if "torch" in times else next(iter(times))
    rows = []
    for impl, done in times.items():
        ratios = [a / b for a, b in zip(done, times[base])]
        rows.append([impl, f"{statistics.median(done) * 1e3:.2f} ({min(done) * 1e3:.2f}-"
                           f"{max(done) * 1e3:.2f})",
                     f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"])
    rows += [[impl, "unavailable: " + why[:60], ""] for impl, why in missing.items()]
    print(f"\nLSTM step: {args.rounds} paired rounds in one process\n")
    table(["implementation", "ms per step (min-max)", f"vs {base} (min-max of rounds)"], rows)


if __name__ == "__main__":
    main()
