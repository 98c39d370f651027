"""An LSTM classifier's training step: ours eagerly, under fw.function and as a cell loop,
NumPy by hand, and PyTorch eager's ``nn.LSTM``, TensorFlow's Keras ``LSTM`` under
``tf.function`` and JAX's ``lax.scan`` under ``jax.jit`` when an interpreter that has them is
given, in paired rounds.

The step (float32, 2 BLAS threads): batch 32, 50 steps of 32 features, ``LSTM(128)`` (gates
i, f, c, o), ``Dense(10)`` on the last output, sparse softmax cross-entropy on the logits (the
batch's mean), Adam (1e-3, epsilon 1e-7) on all 5 weights. ``numpy`` is the floor: the whole
forward pass and backpropagation through time written by hand (the input projection of all
steps in one product, the weight gradients as products over all steps at the end), with Adam
by hand. ``function, cell loop`` is our model with ``RNN(LSTMCell)``: the cell's dozen ops
recorded per step, which LSTM's fused sequence primitive replaces. ``torch`` is PyTorch's
``nn.LSTM`` + ``nn.Linear`` with ``torch.optim.Adam`` (its second bias, ``bias_hh``, held at
zero so the model is the same; its Adam adds epsilon to the bias-corrected root, so its
losses part from the others' by about 1e-4 from step 2 on); ``tf`` is
``tf.keras.layers.LSTM`` + ``Dense`` called in a ``tf.function`` step (no XLA) with
``tf.GradientTape`` and Keras's Adam; ``jax`` is the cell from ``jax.numpy`` ops in a
``lax.scan`` over time (the input projection of all steps hoisted before it), ``jax.jit``
with Adam by hand. Every implementation starts from the same weights,
and the script checks that their step-1 losses agree (within 1e-4 relatively) before it times
anything. PyTorch, TensorFlow and JAX run in worker processes of their own
(``--torch-python``, ``--tf-python``, ``--jax-python``: the interpreters that have them;
default this one; one that lacks its package is listed as unavailable); the others in this
process. JAX runs on the CPU with one Eigen thread whatever the BLAS threads. As in
``transformer_step.py``, every round times a short burst of each implementation in a rotating
order. The table gives per implementation the median milliseconds per step (the fastest and
slowest round's beside it), the GFLOP/s of the products at the median, and "vs" columns: the
median of each round's own ratio to PyTorch, TensorFlow, JAX and NumPy (the lowest and highest
round's beside it; above 1 is slower). ``--clock cpu`` with one BLAS thread times the CPU each
step takes in the process that runs it, which moves far less on a crowded machine.

    python benchmarks/lstm_step.py --rounds 21
    python benchmarks/lstm_step.py --impl function --impl "function, cell loop" --impl numpy
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/lstm_step.py --clock cpu \\
        --torch-python /tmp/torchenv/bin/python --tf-python /tmp/tfenv/bin/python \\
        --jax-python /tmp/jaxenv/bin/python
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.common import (adam_by_hand, cpu_burst, fw_classifier_step,  # noqa: E402
                               jax_adam_step, jax_on_cpu, limit_threads, paired_parser,
                               remote_step, run_paired, tf_threads)

limit_threads()  # 2 BLAS threads, before NumPy loads

import numpy as np  # noqa: E402

BATCH, STEPS, FEATURES, UNITS, CLASSES, LR = 32, 50, 32, 128, 10, 1e-3
IMPLS = ("numpy", "eager", "function", "function, cell loop", "torch", "tf", "jax")
PACKAGES = {"torch": "torch", "tf": "tensorflow", "jax": "jax"}  # run in worker processes


def data():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(BATCH, STEPS, FEATURES)).astype(np.float32),
            rng.integers(0, CLASSES, size=BATCH).astype(np.int32))


def weights():
    """The LSTM's kernel (features, 4 units), recurrent kernel (units, 4 units) and bias, each
    in Keras's gate order i, f, c, o, then the Dense kernel and bias: Keras's order."""
    rng = np.random.default_rng(1)
    return [rng.normal(0, 0.1, size=s).astype(np.float32) for s in
            [(FEATURES, 4 * UNITS), (UNITS, 4 * UNITS), (4 * UNITS,), (UNITS, CLASSES),
             (CLASSES,)]]


def flops():
    """Matrix-product FLOPs of one step: the input projection's forward and kernel gradient,
    the recurrent product's forward and both its gradients, the Dense layer's three (nobody
    asks for the inputs' gradient)."""
    projection = 2 * BATCH * STEPS * FEATURES * 4 * UNITS
    recurrent = 2 * BATCH * STEPS * UNITS * 4 * UNITS
    return 2 * projection + 3 * recurrent + 3 * 2 * BATCH * UNITS * CLASSES


# --- NumPy by hand --------------------------------------------------------------------------------
def _sigmoid(z):
    return 0.5 * np.tanh(0.5 * z) + 0.5


def numpy_step():
    x, y = data()
    params = weights()
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = [0]
    ticks = np.arange(BATCH)

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
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        total = p.sum(1)
        loss = float(np.mean(np.log(total) - logits[ticks, y]))
        p /= total[:, None]
        p[ticks, y] -= 1
        dlogits = p / BATCH
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
        adam_by_hand(params, grads, m, v, t[0], LR)
        return loss
    return step


# --- ours -----------------------------------------------------------------------------------------
def fw_step(compiled, cell_loop=False):
    """The model as a Keras user writes it (``LSTM``, or ``RNN(LSTMCell)``, then ``Dense``),
    with the shared weights, trained by a ``GradientTape`` step."""
    import layers
    lstm = layers.RNN(layers.LSTMCell(UNITS)) if cell_loop else layers.LSTM(UNITS)
    model = layers.Sequential([lstm, layers.Dense(CLASSES)])
    model.build((None, STEPS, FEATURES))
    model.set_weights(weights())
    return fw_classifier_step(model, *data(), LR, compiled)


# --- PyTorch, TensorFlow and JAX (worker processes) -----------------------------------------------
def torch_step():
    """``nn.LSTM`` + ``nn.Linear`` eagerly: PyTorch's gates are i, f, g, o as Keras's, its
    matrices the transposes of Keras's kernels."""
    import torch
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))  # (limit_threads': 2)
    x, y = (torch.from_numpy(a) for a in data())
    y = y.long()
    lstm = torch.nn.LSTM(FEATURES, UNITS, batch_first=True)
    dense = torch.nn.Linear(UNITS, CLASSES)
    kernel, recurrent, bias, dense_kernel, dense_bias = weights()
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.from_numpy(kernel.T))
        lstm.weight_hh_l0.copy_(torch.from_numpy(recurrent.T))
        lstm.bias_ih_l0.copy_(torch.from_numpy(bias))
        lstm.bias_hh_l0.zero_()
        dense.weight.copy_(torch.from_numpy(dense_kernel.T))
        dense.bias.copy_(torch.from_numpy(dense_bias))
    lstm.bias_hh_l0.requires_grad_(False)
    params = [p for p in [*lstm.parameters(), *dense.parameters()] if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=LR, eps=1e-7)

    def step():
        out, _ = lstm(x)
        loss = torch.nn.functional.cross_entropy(dense(out[:, -1]), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()
    return step


def tf_step():
    """``tf.keras.layers.LSTM`` + ``Dense`` with the shared weights, called in a
    ``tf.function`` step with ``tf.GradientTape`` and Keras's Adam."""
    import tensorflow as tf
    tf_threads()
    x, y = (tf.constant(a) for a in data())
    lstm, dense = tf.keras.layers.LSTM(UNITS), tf.keras.layers.Dense(CLASSES)
    lstm.build((None, STEPS, FEATURES))
    dense.build((None, UNITS))
    w = weights()
    lstm.set_weights(w[:3])
    dense.set_weights(w[3:])
    variables = lstm.trainable_variables + dense.trainable_variables
    optimizer = tf.keras.optimizers.Adam(LR, epsilon=1e-7)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            logits = dense(lstm(x, training=True))
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss
    return lambda: float(step())


def jax_step():
    """The cell from ``jax.numpy`` ops in a ``lax.scan`` over the time-major projected inputs,
    under ``jax.jit`` with Adam by hand."""
    jax_on_cpu()
    import jax
    import jax.numpy as jnp

    def loss_fn(params, x, labels):
        kernel, recurrent, bias, dense, dense_bias = params
        projected = (x @ kernel + bias).transpose(1, 0, 2)  # (steps, batch, 4 units)

        def cell(carry, z_x):
            h, c = carry
            z_i, z_f, z_c, z_o = jnp.split(z_x + h @ recurrent, 4, axis=-1)
            c = jax.nn.sigmoid(z_f) * c + jax.nn.sigmoid(z_i) * jnp.tanh(z_c)
            h = jax.nn.sigmoid(z_o) * jnp.tanh(c)
            return (h, c), None
        zeros = jnp.zeros((BATCH, UNITS), jnp.float32)
        (h, _), _ = jax.lax.scan(cell, (zeros, zeros), projected)
        logp = jax.nn.log_softmax(h @ dense + dense_bias)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))
    step = jax_adam_step(loss_fn, weights(), data(), [LR] * 5)
    return lambda: float(step())


def make(impl, pythons):
    if impl in PACKAGES:
        return remote_step("benchmarks.lstm_step", f"{impl}_step", PACKAGES[impl],
                           pythons[impl])
    step = (numpy_step() if impl == "numpy" else
            fw_step(impl != "eager", cell_loop=impl == "function, cell loop"))
    step.cpu_burst = lambda n: cpu_burst(step, n)
    return step


def main():
    args = paired_parser(__doc__.splitlines()[0], IMPLS).parse_args()
    args.impl = args.impl or list(IMPLS)
    pythons = {impl: getattr(args, f"{impl}_python") for impl in PACKAGES}
    run_paired(args, lambda impl: make(impl, pythons), "LSTM step", flops() / 1e9,
               ("torch", "tf", "jax", "numpy"))


if __name__ == "__main__":
    main()
