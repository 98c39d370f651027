"""One rank of the data-parallel tests, launched by tests/test_distributed.py with mpiexec.

``python dp_worker.py MODE OUT_DIR [--steps N] [--save-at K] [--resume FILE]``

The model is a small MLP on raw ``fw.Variable``s with a NumPy Adam whose state is held in
variables too, so that ``broadcast_variables`` carries it on a resume. ``train`` is also what the
test calls in its own (non-MPI) process to get the one-process reference on the whole batch:
there ``shard`` and ``DistributedGradientTape`` are no-ops, so both sides run the same code.

Modes: ``train`` (writes ``OUT_DIR/rank{r}.npz``); at step 2 rank 1 ``raise``s, calls
``exit`` (``sys.exit(0)``) or is ``kill``ed (SIGKILL); ``mismatch`` (rank 1 builds ``w2`` with
another shape); ``fewer`` (rank 1 leaves Adam's step counter out of the broadcast); ``none``
(rank 1 leaves ``b2`` out of its loss); ``keras`` (layers and optimizers instead of raw
variables); ``gpu`` (the CuPy/NCCL path).
"""
import argparse
import os
import signal
import sys

import numpy as np

import framework as fw

D, H, C = 8, 16, 3  # features, hidden units, classes
N, BATCH = 64, 16  # examples, global batch (divisible by the 2 ranks)


def make_data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(N, D)).astype(np.float32), rng.integers(0, C, N).astype(np.int32)


def make_params(seed, w2_rows=H):
    """Weights from ``seed``: each rank draws its own, so only the broadcast makes them agree."""
    rng = np.random.default_rng(seed)
    return [fw.Variable(rng.normal(0, 0.5, (D, H)).astype(np.float32), name="w1"),
            fw.Variable(rng.normal(0, 0.1, (H,)).astype(np.float32), name="b1"),
            fw.Variable(rng.normal(0, 0.5, (w2_rows, C)).astype(np.float32), name="w2"),
            fw.Variable(rng.normal(0, 0.1, (C,)).astype(np.float32), name="b2")]


def make_adam_state(params):
    def slots(kind):
        return [fw.Variable(np.zeros(p.shape, np.float32), trainable=False, name=f"{p.path}/{kind}")
                for p in params]
    return {"m": slots("m"), "v": slots("v"),
            "t": fw.Variable(np.int64(0), trainable=False, name="t")}


def loss_fn(params, x, y, skip_b2=False):
    w1, b1, w2, b2 = params
    logits = fw.tanh(x @ w1 + b1) @ w2
    if not skip_b2:
        logits = logits + b2
    return fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def adam_step(params, grads, state, lr=0.05, b1=0.9, b2=0.999, eps=1e-7):
    state["t"].assign(state["t"].numpy() + 1)
    t = int(state["t"].numpy())
    for p, g, m, v in zip(params, grads, state["m"], state["v"], strict=True):
        g = g.numpy()
        m.assign(b1 * m.numpy() + (1 - b1) * g)
        v.assign(b2 * v.numpy() + (1 - b2) * g * g)
        m_hat, v_hat = m.numpy() / (1 - b1 ** t), v.numpy() / (1 - b2 ** t)
        p.assign(p.numpy() - lr * m_hat / (np.sqrt(v_hat) + eps))


def train(params, state, x, y, start, steps, save_at=None, save_to=None, hook=None):
    """Steps ``start..steps-1`` on global batches; returns the mean loss of each step."""
    losses = []
    for step in range(start, steps):
        lo = step * BATCH % N
        xb, yb = fw.distributed.shard(x[lo:lo + BATCH], y[lo:lo + BATCH])
        if hook:
            hook(step)
        with fw.GradientTape() as tape:
            loss = loss_fn(params, xb, yb)
        tape = fw.distributed.DistributedGradientTape(tape)
        adam_step(params, tape.gradient(loss, params), state)
        losses.append(fw.distributed.allreduce_mean(float(loss)))
        if save_at is not None and step + 1 == save_at and fw.distributed.is_root():
            save(save_to, params, state)
    return losses


def keras_run(seed, steps):
    """The same training with layers and optimizers, as the training runner does it: eager
    optimizer slots on every rank, one broadcast of model and optimizer, sharded batches."""
    from layers import Dense, Sequential, initializers
    from optimizers import Adam
    model = Sequential([
        Dense(H, activation="tanh", kernel_initializer=initializers.GlorotUniform(seed=seed)),
        Dense(C, kernel_initializer=initializers.GlorotUniform(seed=seed + 100))])
    x, y = make_data()
    model(x[:1])
    optimizer = Adam(learning_rate=0.05)
    optimizer.build(model.trainable_variables)  # so every rank holds the same optimizer state
    fw.distributed.broadcast_variables([model, optimizer], root=0)
    for step in range(steps):
        lo = step * BATCH % N
        xb, yb = fw.distributed.shard(x[lo:lo + BATCH], y[lo:lo + BATCH])
        with fw.GradientTape() as tape:
            loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(yb, model(xb)))
        tape = fw.distributed.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    return model.get_weights()


def save(path, params, state):
    arrays = {v.path: v.numpy() for v in params + state["m"] + state["v"] + [state["t"]]}
    np.savez(path, **arrays)


def load(path, params, state):
    with np.load(path) as f:
        for v in params + state["m"] + state["v"] + [state["t"]]:
            v.assign(f[v.path])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode")
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--save-at", type=int)
    ap.add_argument("--resume")
    args = ap.parse_args()
    dist = fw.distributed
    dist.init()
    r = dist.rank()
    x, y = make_data()
    params = make_params(seed=1000 + r, w2_rows=H + 1 if args.mode == "mismatch" and r == 1 else H)
    state = make_adam_state(params)
    start = 0
    if args.resume:
        start = args.save_at
        if dist.is_root():  # only the root reads the checkpoint; the broadcast brings the rest
            load(args.resume, params, state)
    counter = [] if args.mode == "fewer" and r == 1 else [state["t"]]
    dist.broadcast_variables([params, state["m"], state["v"], counter], root=0)

    def hook(step):
        if step == 2 and r == 1 and args.mode == "raise":
            raise RuntimeError("injected failure on purpose")
        if step == 2 and r == 1 and args.mode == "exit":
            sys.exit(0)
        if step == 2 and r == 1 and args.mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)

    if args.mode == "none":
        with fw.GradientTape() as tape:
            loss = loss_fn(params, *dist.shard(x[:BATCH], y[:BATCH]), skip_b2=r == 1)
        dist.DistributedGradientTape(tape).gradient(loss, params)
    if args.mode == "gpu":
        return gpu_check(params, x, y, args.out)
    if args.mode == "keras":
        weights = keras_run(seed=r, steps=args.steps)
        return np.savez(os.path.join(args.out, f"rank{r}.npz"), *weights)
    losses = train(params, state, x, y, start, args.steps, args.save_at,
                   os.path.join(args.out, "ckpt.npz"), hook)
    np.savez(os.path.join(args.out, f"rank{r}.npz"), losses=np.array(losses),
             size=dist.size(), local_rank=dist.local_rank(),
             mean_rank=dist.allreduce_mean(float(r)),
             weighted=dist.allreduce_mean({"a": float(r), "b": np.full(2, r)}, weight=r + 1)["a"],
             from_root=dist.broadcast_object({"rank": r, "rng": np.random.default_rng(r)
                                              .bit_generator.state})["rank"],
             **{v.path: v.numpy() for v in params + [state["t"]]})
    dist.barrier()


def gpu_check(params, x, y, out):
    """On the CuPy backend: gradients and broadcasts go through NCCL and match the plain tape."""
    dist = fw.distributed
    for p in params:
        p.to_device("gpu")
    xb, yb = dist.shard(fw.to_device(x[:BATCH], "gpu"), fw.to_device(y[:BATCH], "gpu"))
    with fw.GradientTape(persistent=True) as tape:
        loss = loss_fn(params, xb, yb)
    plain = tape.gradient(loss, params)
    before = dist.communication_stats(reset=True)
    averaged = dist.DistributedGradientTape(tape).gradient(loss, params)
    dist.broadcast_variables(params)
    stats = dist.communication_stats()
    assert all(g.device == "gpu" for g in averaged), [g.device for g in averaged]
    assert stats["nccl_calls"] >= 2, (before, stats)
    if dist.size() == 1:
        for a, b in zip(plain, averaged, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    np.savez(os.path.join(out, f"rank{dist.rank()}.npz"), nccl_calls=stats["nccl_calls"],
             **{f"g{i}": g.numpy() for i, g in enumerate(averaged)})


if __name__ == "__main__":
    main()
