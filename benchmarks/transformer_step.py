"""The W6 Transformer-block training step: ours eagerly and under fw.function (``-ops``: the
attention from the framework's ops; ``-layers``: ``MultiHeadAttention`` in a
``TransformerEncoder``), NumPy by hand, and PyTorch eager, TensorFlow's ``tf.function`` and
JAX's ``jax.jit`` built from the same ops when an interpreter that has them is given, in
paired rounds.

The step (float32, 2 BLAS threads): ``x`` of shape (batch 32, sequence 64, dim 128); 4 heads of
32; ``a = LN(x + MHA(x))``, ``y = LN(a + Dense(128)(relu(Dense(256)(a))))`` (post-LN,
epsilon 1e-5); the loss ``mean((y - target) ** 2)``; Adam (1e-3, epsilon 1e-7) on all 16
weights. Every implementation starts from the same weights, and the script checks that their
step-1 losses agree (within 1e-4 relatively) before it times anything. On a shared machine
speed drifts from second to second, so the implementations run side by side (ours and NumPy
in this process; PyTorch, TensorFlow and JAX in worker processes of their own, under
``--torch-python``, ``--tf-python``, ``--jax-python``: the interpreters that have them;
default this one; one that lacks its package is listed as unavailable), in rounds of a short
burst each in a rotating order. JAX runs on the CPU with one Eigen thread (as in
``function_step.py``) whatever the BLAS threads. The table gives per implementation the
median milliseconds per step (the fastest and slowest round's beside it), the GFLOP/s of the
products at the median, and "vs" columns: the median of each round's own ratio to PyTorch,
TensorFlow, JAX and NumPy (the lowest and highest round's beside it; above 1 is slower).
Where the machine is crowded, ``--clock cpu`` with one BLAS thread times the CPU each step
takes in the process that runs it, which moves far less than wall-clock time.

    python benchmarks/transformer_step.py
    python benchmarks/transformer_step.py --rounds 41 --impl torch --impl function-ops \\
        --torch-python /tmp/torchenv/bin/python
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/transformer_step.py \\
        --clock cpu --torch-python /tmp/torchenv/bin/python \\
        --tf-python /tmp/tfenv/bin/python --jax-python /tmp/jaxenv/bin/python
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.common import (adam_by_hand, cpu_burst, jax_adam_step,  # noqa: E402
                               jax_on_cpu, limit_threads, paired_parser, remote_step,
                               run_paired, tf_threads)

limit_threads()  # 2 BLAS threads, before NumPy loads

import numpy as np  # noqa: E402

BATCH, SEQ, DIM, HEADS, FF = 32, 64, 128, 4, 256
HEAD = DIM // HEADS
EPS, LR = 1e-5, 1e-3
IMPLS = ("numpy", "eager-ops", "function-ops", "eager-layers", "function-layers", "torch", "tf",
         "jax")
PACKAGES = {"torch": "torch", "tf": "tensorflow", "jax": "jax"}  # run in worker processes


def data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((BATCH, SEQ, DIM)).astype(np.float32),
            rng.standard_normal((BATCH, SEQ, DIM)).astype(np.float32))


def weights():
    """Wq, bq, Wk, bk, Wv, bv (as matrices (dim, heads * head)), Wo, bo, the first
    LayerNormalization's gamma and beta, the second's, W1, b1, W2, b2: the TransformerEncoder's
    order."""
    rng = np.random.default_rng(1)

    def glorot(fan_in, fan_out):
        limit = (6 / (fan_in + fan_out)) ** 0.5
        return rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32)

    def small(n):
        return (0.1 * rng.standard_normal(n)).astype(np.float32)
    return [glorot(DIM, DIM), small(DIM), glorot(DIM, DIM), small(DIM), glorot(DIM, DIM),
            small(DIM), glorot(DIM, DIM), small(DIM), 1 + small(DIM), small(DIM), 1 + small(DIM),
            small(DIM), glorot(DIM, FF), small(FF), glorot(FF, DIM), small(DIM)]


def flops():
    """Matrix-product FLOPs of one step: the forward's, twice that again for the backward."""
    rows = BATCH * SEQ
    forward = 2 * rows * DIM * DIM * 4 + 2 * 2 * BATCH * HEADS * SEQ * SEQ * HEAD
    forward += 2 * 2 * rows * DIM * FF
    return 3 * forward


# --- NumPy by hand --------------------------------------------------------------------------------
def numpy_step():
    """Forward, backward and Adam written out, in place wherever it saves an allocation."""
    x, target = data()
    params = weights()
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = [0]
    rows, scale = BATCH * SEQ, np.float32(1 / np.sqrt(HEAD))
    x2 = x.reshape(rows, DIM)

    def heads(a):  # (rows, dim) -> (batch, heads, seq, head), a view
        return a.reshape(BATCH, SEQ, HEADS, HEAD).transpose(0, 2, 1, 3)

    def merge(a):  # (batch, heads, seq, head) -> (rows, dim)
        return a.transpose(0, 2, 1, 3).reshape(rows, DIM)

    def layer_norm(r, gamma, beta):
        mean = r.mean(-1, keepdims=True)
        centered = r - mean
        inv = 1 / np.sqrt((centered * centered).mean(-1, keepdims=True) + EPS)
        normed = centered * inv
        return normed * gamma + beta, (normed, inv)

    def layer_norm_grad(dy, gamma, cache):
        normed, inv = cache
        dgamma, dbeta = (dy * normed).sum(0), dy.sum(0)
        dn = dy * gamma
        dx = dn - dn.mean(-1, keepdims=True) - normed * (dn * normed).mean(-1, keepdims=True)
        dx *= inv
        return dx, dgamma, dbeta

    def step():
        wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, g2, be2, w1, b1, w2, b2 = params
        q, k, vv = heads(x2.dot(wq) + bq), heads(x2.dot(wk) + bk), heads(x2.dot(wv) + bv)
        qs = q * scale
        s = np.matmul(qs, k.transpose(0, 1, 3, 2))
        s -= s.max(-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(-1, keepdims=True)
        p = s
        o = merge(np.matmul(p, vv))
        h1, c1 = layer_norm(x2 + o.dot(wo) + bo, g1, be1)
        f1 = h1.dot(w1)
        f1 += b1
        np.maximum(f1, 0, out=f1)
        f2 = f1.dot(w2)
        f2 += b2
        f2 += h1
        y, c2 = layer_norm(f2, g2, be2)
        diff = y - target.reshape(rows, DIM)
        loss = float(np.mean(diff * diff))
        dy = diff * np.float32(2 / diff.size)
        dr2, dg2, dbe2 = layer_norm_grad(dy, g2, c2)
        dw2, db2 = f1.T.dot(dr2), dr2.sum(0)
        df1 = dr2.dot(w2.T)
        df1 *= f1 > 0
        dw1, db1 = h1.T.dot(df1), df1.sum(0)
        dh1 = df1.dot(w1.T)
        dh1 += dr2
        dr1, dg1, dbe1 = layer_norm_grad(dh1, g1, c1)
        dwo, dbo = o.T.dot(dr1), dr1.sum(0)
        do = heads(dr1.dot(wo.T))
        dp = np.matmul(do, vv.transpose(0, 1, 3, 2))
        dv = np.matmul(p.transpose(0, 1, 3, 2), do)
        dp -= (dp * p).sum(-1, keepdims=True)
        dp *= p
        dq = np.matmul(dp, k)
        dq *= scale
        dk = np.matmul(dp.transpose(0, 1, 3, 2), qs)
        dq, dk, dv = merge(dq), merge(dk), merge(dv)
        grads = [x2.T.dot(dq), dq.sum(0), x2.T.dot(dk), dk.sum(0), x2.T.dot(dv), dv.sum(0),
                 dwo, dbo, dg1, dbe1, dg2, dbe2, dw1, db1, dw2, db2]
        t[0] += 1
        adam_by_hand(params, grads, m, v, t[0], LR)
        return loss
    return step


# --- ours -----------------------------------------------------------------------------------------
def _fw_train(forward, variables, compiled):
    import framework as fw
    from optimizers import Adam
    x, target = (fw.constant(a) for a in data())
    optimizer = Adam(LR, epsilon=1e-7)

    def step(x, target):
        with fw.GradientTape() as tape:
            diff = forward(x) - target
            loss = fw.reduce_mean(diff * diff)
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        return loss
    step = fw.function(step) if compiled else step
    return lambda: float(step(x, target))


def fw_ops_step(compiled):
    """The attention from the framework's ops, as a TensorFlow user writes it by hand
    (``fw.nn.dense`` projections, ``fw.matmul``, ``fw.nn.softmax``), around Keras's
    ``LayerNormalization`` layers (as the TensorFlow Transformer tutorial has them)."""
    import framework as fw
    from layers import LayerNormalization
    params = [fw.Variable(w) for w in weights()]
    wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, g2, be2, w1, b1, w2, b2 = params
    norms = [LayerNormalization(epsilon=EPS), LayerNormalization(epsilon=EPS)]
    for norm, gamma, beta in zip(norms, (g1, g2), (be1, be2)):
        norm.build((None, DIM))
        norm.gamma, norm.beta = gamma, beta  # (the same variables the optimizer updates)
    scale = 1 / np.sqrt(HEAD)

    def heads(a):
        return fw.transpose(fw.reshape(a, (BATCH, SEQ, HEADS, HEAD)), (0, 2, 1, 3))

    def forward(x):
        rows = fw.reshape(x, (BATCH * SEQ, DIM))
        q = heads(fw.nn.dense(rows, wq, bq)) * scale
        k, v = heads(fw.nn.dense(rows, wk, bk)), heads(fw.nn.dense(rows, wv, bv))
        p = fw.nn.softmax(fw.matmul(q, k, transpose_b=True))
        o = fw.reshape(fw.transpose(fw.matmul(p, v), (0, 2, 1, 3)), (BATCH * SEQ, DIM))
        h1 = norms[0](rows + fw.nn.dense(o, wo, bo))
        f = fw.nn.dense(fw.nn.dense(h1, w1, b1, relu=True), w2, b2)
        return fw.reshape(norms[1](h1 + f), (BATCH, SEQ, DIM))
    return _fw_train(forward, params, compiled)


def fw_layers_step(compiled):
    """The block as a ``TransformerEncoder`` (``MultiHeadAttention``, ``LayerNormalization``,
    ``Dense``) with the same weights."""
    import framework as fw
    from layers import TransformerEncoder
    block = TransformerEncoder(FF, HEADS, layer_norm_epsilon=EPS)
    block(fw.zeros((1, SEQ, DIM)))
    w = weights()
    kernels = [w[0].reshape(DIM, HEADS, HEAD), w[1].reshape(HEADS, HEAD),
               w[2].reshape(DIM, HEADS, HEAD), w[3].reshape(HEADS, HEAD),
               w[4].reshape(DIM, HEADS, HEAD), w[5].reshape(HEADS, HEAD),
               w[6].reshape(HEADS, HEAD, DIM), w[7]]
    block.set_weights(kernels + w[8:])
    return _fw_train(lambda x: block(x, training=True), block.trainable_variables, compiled)


# --- PyTorch, TensorFlow and JAX (worker processes) -----------------------------------------------
def torch_step():
    """The same block from PyTorch's ops (matmul, softmax, layer_norm, relu), eagerly."""
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))  # (limit_threads': 2)
    x, target = (torch.from_numpy(a) for a in data())
    params = [torch.tensor(w, requires_grad=True) for w in weights()]
    wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, g2, be2, w1, b1, w2, b2 = params
    optimizer = torch.optim.Adam(params, lr=LR, eps=1e-7)
    scale = 1 / np.sqrt(HEAD)

    def heads(a):
        return a.reshape(BATCH, SEQ, HEADS, HEAD).transpose(1, 2)

    def step():
        rows = x.reshape(BATCH * SEQ, DIM)
        q = heads(torch.addmm(bq, rows, wq)) * scale
        k, v = heads(torch.addmm(bk, rows, wk)), heads(torch.addmm(bv, rows, wv))
        p = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        o = (p @ v).transpose(1, 2).reshape(BATCH * SEQ, DIM)
        h1 = F.layer_norm(rows + torch.addmm(bo, o, wo), (DIM,), g1, be1, EPS)
        f = torch.addmm(b2, torch.relu(torch.addmm(b1, h1, w1)), w2)
        y = F.layer_norm(h1 + f, (DIM,), g2, be2, EPS)
        loss = ((y - target.reshape(BATCH * SEQ, DIM)) ** 2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()
    return step


def tf_step():
    """The same block from TensorFlow's ops (``tf.matmul``, ``tf.nn.softmax``, the layer norms
    from ``tf.nn.moments`` and ``tf.nn.batch_normalization`` as Keras's ``LayerNormalization``
    computes them) under ``tf.function``, with Keras's Adam (as in ``cnn_step.py``)."""
    import tensorflow as tf
    tf_threads()
    x, target = (tf.constant(a) for a in data())
    params = [tf.Variable(w) for w in weights()]
    wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, g2, be2, w1, b1, w2, b2 = params
    optimizer = tf.keras.optimizers.Adam(LR, epsilon=1e-7)
    scale = 1 / np.sqrt(HEAD)

    def heads(a):
        return tf.transpose(tf.reshape(a, (BATCH, SEQ, HEADS, HEAD)), (0, 2, 1, 3))

    def layer_norm(a, gamma, beta):
        mean, variance = tf.nn.moments(a, axes=[-1], keepdims=True)
        return tf.nn.batch_normalization(a, mean, variance, beta, gamma, EPS)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            rows = tf.reshape(x, (BATCH * SEQ, DIM))
            q = heads(tf.matmul(rows, wq) + bq) * scale
            k, v = heads(tf.matmul(rows, wk) + bk), heads(tf.matmul(rows, wv) + bv)
            p = tf.nn.softmax(tf.matmul(q, k, transpose_b=True))
            o = tf.reshape(tf.transpose(tf.matmul(p, v), (0, 2, 1, 3)), (BATCH * SEQ, DIM))
            h1 = layer_norm(rows + tf.matmul(o, wo) + bo, g1, be1)
            f = tf.matmul(tf.nn.relu(tf.matmul(h1, w1) + b1), w2) + b2
            y = layer_norm(h1 + f, g2, be2)
            loss = tf.reduce_mean(tf.square(y - tf.reshape(target, (BATCH * SEQ, DIM))))
        optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
        return loss
    return lambda: float(step())


def jax_step():
    """The same block from ``jax.numpy`` ops under ``jax.jit``, with Adam by hand."""
    jax_on_cpu()
    import jax
    import jax.numpy as jnp
    scale = 1 / np.sqrt(HEAD)

    def heads(a):
        return a.reshape(BATCH, SEQ, HEADS, HEAD).transpose(0, 2, 1, 3)

    def layer_norm(a, gamma, beta):
        mean = a.mean(-1, keepdims=True)
        variance = jnp.square(a - mean).mean(-1, keepdims=True)
        return (a - mean) * jax.lax.rsqrt(variance + EPS) * gamma + beta

    def loss_fn(params, x, target):
        wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, g2, be2, w1, b1, w2, b2 = params
        rows = x.reshape(BATCH * SEQ, DIM)
        q = heads(rows @ wq + bq) * scale
        k, v = heads(rows @ wk + bk), heads(rows @ wv + bv)
        p = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2), axis=-1)
        o = (p @ v).transpose(0, 2, 1, 3).reshape(BATCH * SEQ, DIM)
        h1 = layer_norm(rows + o @ wo + bo, g1, be1)
        f = jax.nn.relu(h1 @ w1 + b1) @ w2 + b2
        y = layer_norm(h1 + f, g2, be2)
        return jnp.mean(jnp.square(y - target.reshape(BATCH * SEQ, DIM)))
    step = jax_adam_step(loss_fn, weights(), data(), [LR] * 16)
    return lambda: float(step())


def make(impl, pythons):
    if impl in PACKAGES:
        return remote_step("benchmarks.transformer_step", f"{impl}_step", PACKAGES[impl],
                           pythons[impl])
    if impl == "numpy":
        step = numpy_step()
    else:
        kind, variant = impl.split("-")
        step = (fw_ops_step if variant == "ops" else fw_layers_step)(kind == "function")
    step.cpu_burst = lambda n: cpu_burst(step, n)
    return step


def main():
    args = paired_parser(__doc__.splitlines()[0], IMPLS).parse_args()
    args.impl = args.impl or list(IMPLS)
    pythons = {impl: getattr(args, f"{impl}_python") for impl in PACKAGES}
    run_paired(args, lambda impl: make(impl, pythons), "W6 Transformer block step",
               flops() / 1e9, ("torch", "tf", "jax", "numpy"))


if __name__ == "__main__":
    main()
