"""The W5 small-CNN training step: ours eagerly and under fw.function (a ``Sequential`` of
Keras layers), NumPy by hand, and PyTorch eager, TensorFlow's ``tf.function`` and JAX's
``jax.jit`` built from their own ops when an interpreter that has them is given, in paired
rounds.

The step (float32, 2 BLAS threads): a batch of 64 images 28x28x1; ``Conv2D(32, 3, relu)``,
``MaxPooling2D(2)``, ``Conv2D(64, 3, relu)``, ``MaxPooling2D(2)``, ``Flatten``,
``Dense(128, relu)``, ``Dense(10)``; sparse softmax cross-entropy on the logits (the batch's
mean); Adam (1e-3, epsilon 1e-7) on all 8 weights. Every implementation starts from the same
weights, and the script checks that their step-1 losses agree (within 1e-4 relatively)
before it times anything. PyTorch, TensorFlow and JAX run in worker processes of their own
(``--torch-python``, ``--tf-python``, ``--jax-python``: the interpreters that have them;
default this one; one that lacks its package is listed as unavailable); the others in this
process. JAX runs on the CPU with one Eigen thread (as in ``function_step.py``) whatever the
BLAS threads. As in ``transformer_step.py``, every round times a short burst of each
implementation in a rotating order. The table gives per implementation the median
milliseconds per step (the fastest and slowest round's beside it), the GFLOP/s of the
products at the median, and "vs" columns: the median of each round's own ratio to PyTorch,
TensorFlow, JAX and NumPy (the lowest and highest round's beside it; above 1 is slower).
``--clock cpu`` with one BLAS thread times the CPU each step takes in the process that runs
it, which moves far less on a crowded machine.

    python benchmarks/cnn_step.py --torch-python /tmp/torchenv/bin/python \\
        --tf-python /tmp/tfenv/bin/python --jax-python /tmp/jaxenv/bin/python
    python benchmarks/cnn_step.py --rounds 31 --impl function --impl numpy
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/cnn_step.py --clock cpu
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

BATCH, SIZE, CLASSES, LR = 64, 28, 10, 1e-3
FILTERS, HIDDEN = (32, 64), 128
IMPLS = ("numpy", "eager", "function", "torch", "tf", "jax")
PACKAGES = {"torch": "torch", "tf": "tensorflow", "jax": "jax"}  # run in worker processes


def shapes():
    """The feature maps' sizes: after each convolution and each pool."""
    c1 = SIZE - 2
    p1 = c1 // 2
    c2 = p1 - 2
    p2 = c2 // 2
    return c1, p1, c2, p2


def data():
    rng = np.random.default_rng(0)
    return (rng.random((BATCH, SIZE, SIZE, 1), dtype=np.float32),
            rng.integers(0, CLASSES, BATCH).astype(np.int32))


def weights():
    """Both convolutions' kernels (HWIO) and biases, then both Dense layers': Keras's order."""
    rng = np.random.default_rng(1)
    p2 = shapes()[3]

    def glorot(shape, fan_in, fan_out):
        limit = (6 / (fan_in + fan_out)) ** 0.5
        return rng.uniform(-limit, limit, shape).astype(np.float32)

    def small(n):
        return (0.01 * rng.standard_normal(n)).astype(np.float32)
    f1, f2 = FILTERS
    flat = p2 * p2 * f2
    return [glorot((3, 3, 1, f1), 9, 9 * f1), small(f1),
            glorot((3, 3, f1, f2), 9 * f1, 9 * f2), small(f2),
            glorot((flat, HIDDEN), flat, HIDDEN), small(HIDDEN),
            glorot((HIDDEN, CLASSES), HIDDEN, CLASSES), small(CLASSES)]


def flops():
    """Matrix-product FLOPs of one step: the forward's, twice that again for the backward,
    less the first convolution's input gradient (nobody asks for the images' gradient)."""
    c1, _, c2, p2 = shapes()
    f1, f2 = FILTERS
    conv1 = 2 * BATCH * c1 * c1 * 9 * f1
    rest = (2 * BATCH * c2 * c2 * 9 * f1 * f2 + 2 * BATCH * p2 * p2 * f2 * HIDDEN
            + 2 * BATCH * HIDDEN * CLASSES)
    return 2 * conv1 + 3 * rest


# --- NumPy by hand --------------------------------------------------------------------------------
def numpy_step():
    """Forward, backward and Adam written out as a careful NumPy programmer would: each
    convolution one product over a strided window view, its filter gradient one product, its
    input gradient nine strided additions, pooling by reshape with a comparison mask, Adam in
    place on preallocated slots."""
    x, labels = data()
    params = weights()
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = [0]
    c1, p1, c2, p2 = shapes()
    f1, f2 = FILTERS
    windows = np.lib.stride_tricks.sliding_window_view
    rows1 = windows(x[..., 0], (3, 3), axis=(1, 2)).reshape(-1, 9)  # the images never change
    ticks = np.arange(BATCH)

    def pool(a, n):  # 2x2 max pool of a (batch, 2n(+1), 2n(+1), c) map, and its tiles
        tiles = a[:, :2 * n, :2 * n].reshape(BATCH, n, 2, n, 2, a.shape[-1])
        return tiles.max(axis=(2, 4)), tiles

    def unpool(g, tiles, pooled, shape):  # the cotangent to each window's maximum (after a
        # ReLU only zeros tie, whose gradient the ReLU's mask drops)
        mask = tiles == pooled[:, :, None, :, None]
        out = np.zeros(shape, np.float32)
        n = pooled.shape[1]
        np.multiply(mask, g[:, :, None, :, None],
                    out=out[:, :2 * n, :2 * n].reshape(tiles.shape))
        return out

    def step():
        w1, b1, w2, b2, w3, b3, w4, b4 = params
        a1 = rows1.dot(w1.reshape(9, f1))
        a1 += b1
        np.maximum(a1, 0, out=a1)
        a1 = a1.reshape(BATCH, c1, c1, f1)
        h1, tiles1 = pool(a1, p1)
        patches = windows(h1, (3, 3), axis=(1, 2))  # (batch, c2, c2, f1, 3, 3), a view
        rows2 = patches.transpose(0, 1, 2, 4, 5, 3).reshape(-1, 9 * f1)  # one copy
        a2 = rows2.dot(w2.reshape(9 * f1, f2))
        a2 += b2
        np.maximum(a2, 0, out=a2)
        a2 = a2.reshape(BATCH, c2, c2, f2)
        h2, tiles2 = pool(a2, p2)
        flat = h2.reshape(BATCH, -1)
        a3 = flat.dot(w3)
        a3 += b3
        np.maximum(a3, 0, out=a3)
        logits = a3.dot(w4)
        logits += b4
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        total = e.sum(axis=1)
        loss = float(np.mean(np.log(total) - logits[ticks, labels]))
        d4 = e / total[:, None]
        d4[ticks, labels] -= 1
        d4 /= BATCH
        g3, gb3 = a3.T.dot(d4), d4.sum(0)
        d3 = d4.dot(w4.T)
        d3 *= a3 > 0
        g2_, gb2_ = flat.T.dot(d3), d3.sum(0)
        dflat = d3.dot(w3.T).reshape(h2.shape)
        da2 = unpool(dflat, tiles2, h2, a2.shape)
        da2 *= a2 > 0
        d2rows = da2.reshape(-1, f2)
        gw2, gb2 = rows2.T.dot(d2rows), d2rows.sum(0)
        dwin = d2rows.dot(w2.reshape(9 * f1, f2).T).reshape(BATCH, c2, c2, 3, 3, f1)
        dh1 = np.zeros(h1.shape, np.float32)
        for i in range(3):
            for j in range(3):
                dh1[:, i:i + c2, j:j + c2] += dwin[:, :, :, i, j]
        da1 = unpool(dh1, tiles1, h1, a1.shape)
        da1 *= a1 > 0
        d1rows = da1.reshape(-1, f1)
        gw1, gb1 = rows1.T.dot(d1rows), d1rows.sum(0)
        grads = [gw1.reshape(3, 3, 1, f1), gb1, gw2.reshape(3, 3, f1, f2), gb2, g2_, gb2_, g3,
                 gb3]
        t[0] += 1
        adam_by_hand(params, grads, m, v, t[0], LR)
        return loss
    return step


# --- ours -----------------------------------------------------------------------------------------
def fw_step(compiled):
    """The model as a Keras user writes it: a ``Sequential`` of the framework's layers, with
    the shared weights, trained by a ``GradientTape`` step."""
    from layers import Conv2D, Dense, Flatten, MaxPooling2D, Sequential
    model = Sequential([Conv2D(FILTERS[0], 3, activation="relu"), MaxPooling2D(2),
                        Conv2D(FILTERS[1], 3, activation="relu"), MaxPooling2D(2), Flatten(),
                        Dense(HIDDEN, activation="relu"), Dense(CLASSES)])
    model.build((None, SIZE, SIZE, 1))
    model.set_weights(weights())
    return fw_classifier_step(model, *data(), LR, compiled)


# --- PyTorch, TensorFlow and JAX (worker processes) -----------------------------------------------
def torch_step():
    """The same network from PyTorch's functional ops on NCHW tensors, eagerly; the first
    Dense kernel's rows reordered for PyTorch's (channels, height, width) flattening."""
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))  # (limit_threads': 2)
    images, labels = data()
    x = torch.from_numpy(images.transpose(0, 3, 1, 2).copy())
    y = torch.from_numpy(labels).long()
    p2, f2 = shapes()[3], FILTERS[1]
    w = weights()
    w[0], w[2] = w[0].transpose(3, 2, 0, 1).copy(), w[2].transpose(3, 2, 0, 1).copy()
    w[4] = w[4].reshape(p2, p2, f2, HIDDEN).transpose(2, 0, 1, 3).reshape(-1, HIDDEN).copy()
    params = [torch.tensor(a, requires_grad=True) for a in w]
    k1, b1, k2, b2, w3, b3, w4, b4 = params
    optimizer = torch.optim.Adam(params, lr=LR, eps=1e-7)

    def step():
        h = F.max_pool2d(torch.relu(F.conv2d(x, k1, b1)), 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, k2, b2)), 2)
        h = torch.relu(torch.addmm(b3, h.reshape(BATCH, -1), w3))
        loss = F.cross_entropy(torch.addmm(b4, h, w4), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()
    return step


def tf_step():
    """The same network from TensorFlow's ``tf.nn`` ops under ``tf.function``, with Keras's
    Adam."""
    import tensorflow as tf
    tf_threads()
    images, labels = data()
    x, y = tf.constant(images), tf.constant(labels)
    params = [tf.Variable(a) for a in weights()]
    k1, b1, k2, b2, w3, b3, w4, b4 = params
    optimizer = tf.keras.optimizers.Adam(LR, epsilon=1e-7)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k1, 1, "VALID"), b1))
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, k2, 1, "VALID"), b2))
            h = tf.nn.max_pool2d(h, 2, 2, "VALID")
            h = tf.nn.relu(tf.matmul(tf.reshape(h, (BATCH, -1)), w3) + b3)
            logits = tf.matmul(h, w4) + b4
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
        return loss
    return lambda: float(step())


def jax_step():
    """The same network as a JAX user writes it: ``lax.conv_general_dilated`` on NHWC images
    and HWIO kernels, ``lax.reduce_window`` max pools, ``jax.jit`` with Adam by hand."""
    jax_on_cpu()
    import jax
    import jax.numpy as jnp
    from jax import lax

    def conv_relu(h, kernel, bias):
        return jax.nn.relu(lax.conv_general_dilated(h, kernel, (1, 1), "VALID",
                                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
                           + bias)

    def pool(h):
        return lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def loss_fn(params, x, labels):
        k1, b1, k2, b2, w3, b3, w4, b4 = params
        h = pool(conv_relu(pool(conv_relu(x, k1, b1)), k2, b2))
        h = jax.nn.relu(h.reshape(BATCH, -1) @ w3 + b3)
        logp = jax.nn.log_softmax(h @ w4 + b4)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))
    step = jax_adam_step(loss_fn, weights(), data(), [LR] * 8)
    return lambda: float(step())


def make(impl, pythons):
    if impl in PACKAGES:
        return remote_step("benchmarks.cnn_step", f"{impl}_step", PACKAGES[impl], pythons[impl])
    step = numpy_step() if impl == "numpy" else fw_step(impl == "function")
    step.cpu_burst = lambda n: cpu_burst(step, n)
    return step


def main():
    args = paired_parser(__doc__.splitlines()[0], IMPLS).parse_args()
    args.impl = args.impl or list(IMPLS)
    pythons = {impl: getattr(args, f"{impl}_python") for impl in PACKAGES}
    run_paired(args, lambda impl: make(impl, pythons), "W5 small-CNN step", flops() / 1e9,
               ("torch", "tf", "jax", "numpy"))


if __name__ == "__main__":
    main()
