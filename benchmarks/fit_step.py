"""``Model.fit`` against the same compiled step in a hand-written loop, per training step, with
Keras 3's ``fit`` on TensorFlow beside them when TensorFlow is importable.

The model is the small MLP on digits (64-100-10, ReLU, logits), Adam(1e-3), sparse categorical
crossentropy from logits, batch 50, 1750 samples (35 steps an epoch), float32, 2 BLAS threads,
no shuffling (so both loops see the same batches). The hand-written loop is the one a TF2 user
writes: a ``fw.function`` step (tape, loss, ``apply_gradients``) called on slices of the arrays;
``fit`` adds its loss tracker, logs and callback hooks; a third row is that loop with a ``Mean``
of the loss updated in the step, as TF2's custom-training tutorial writes it; a fourth calls
``fit``'s own compiled ``train_step`` (``model.train_function``: the loss tracker's update and
the logs in the step) in a loop over ready-made batch tensors, so that ``fit``'s row less this
one is what ``fit`` itself adds per step (batches, hooks, epochs). All run in one
process in paired rounds (each round times ``--epochs`` epochs of each, in alternating
order); the figure is the median over rounds of each round's ratio, the lowest and highest beside it. ``--clock
process`` times CPU seconds instead of wall seconds (steadier on a loaded machine; it adds up
the threads of a process, TensorFlow's included).

    python benchmarks/fit_step.py
    python benchmarks/fit_step.py --rounds 21 --keras /tmp/tfenv/bin/python
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.common import limit_threads, table  # noqa: E402

limit_threads()  # 2 BLAS threads, before NumPy loads
BATCH, SAMPLES = 50, 1750


def digits():
    import numpy as np
    from sklearn.datasets import load_digits
    data = load_digits()
    return (data.data[:SAMPLES] / 16.0).astype(np.float32), data.target[:SAMPLES].astype(np.int64)


def framework_loops():
    """(fit one run of ``epochs``, the hand-written loop over as many epochs, the same loop
    whose step also updates a ``Mean`` of the loss, as TF2's custom-training tutorial does)."""
    import framework as fw
    import layers
    import optimizers
    x, y = digits()

    def model():
        fw.random.set_seed(0)
        m = layers.Sequential([layers.Input((64,)), layers.Dense(100, activation="relu"),
                               layers.Dense(10)])
        return m

    fitted = model()
    fitted.compile(optimizer=optimizers.Adam(1e-3),
                   loss=fw.losses.SparseCategoricalCrossentropy(from_logits=True))

    hand = model()
    optimizer = optimizers.Adam(1e-3)
    loss_fn = fw.losses.SparseCategoricalCrossentropy(from_logits=True)

    @fw.function
    def step(xb, yb):
        with fw.GradientTape() as tape:
            loss = loss_fn(yb, hand(xb, training=True))
        variables = hand.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    tracked = model()
    tracked_optimizer = optimizers.Adam(1e-3)
    train_loss = fw.metrics.Mean(name="train_loss")

    @fw.function
    def tracked_step(xb, yb):
        with fw.GradientTape() as tape:
            loss = loss_fn(yb, tracked(xb, training=True))
        variables = tracked.trainable_variables
        tracked_optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        train_loss(loss)
        return loss

    def fit(epochs):
        fitted.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=False, verbose=0)

    def loops(one_step):
        def loop(epochs):
            for _ in range(epochs):
                train_loss.reset_state()
                for start in range(0, SAMPLES, BATCH):
                    one_step(x[start:start + BATCH], y[start:start + BATCH])
        return loop

    fit(1)  # (builds fit's compiled train step, which the last loop calls)
    train_function = fitted.train_function
    batches = [(fw.constant(x[start:start + BATCH]), fw.constant(y[start:start + BATCH]))
               for start in range(0, SAMPLES, BATCH)]  # (made once: the step alone is timed)

    def own_step(epochs):
        for _ in range(epochs):
            for batch in batches:
                train_function(batch)
    return fit, loops(step), loops(tracked_step), own_step


def keras_seconds_per_step(epochs, rounds, clock):
    """Run under TensorFlow's Python: Keras 3's fit, the median seconds per step."""
    import keras
    x, y = digits()
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(100, activation="relu"),
                              keras.layers.Dense(10)])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)  # trace, warm up
    times = []
    for _ in range(rounds):
        start = clock()
        model.fit(x, y, batch_size=BATCH, epochs=epochs, shuffle=False, verbose=0)
        times.append((clock() - start) / (epochs * SAMPLES // BATCH))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--keras", default="/tmp/tfenv/bin/python",
                        help="a Python with TensorFlow and Keras 3 (skipped if absent)")
    parser.add_argument("--clock", choices=("wall", "process"), default="wall")
    parser.add_argument("--keras-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    if args.keras_worker:
        print(json.dumps(keras_seconds_per_step(args.epochs, args.rounds, clock)))
        return
    fit, loop, tracked, own = framework_loops()
    runs = {"loop": loop, "tracked": tracked, "own": own, "fit": fit}
    for run in runs.values():
        run(1)  # traces, slots, caches
    steps = args.epochs * SAMPLES // BATCH
    times = {name: [] for name in runs}
    ratios = {name: [] for name in runs}
    for index in range(args.rounds):
        order = list(runs) if index % 2 == 0 else list(reversed(runs))
        timed = {}
        for name in order:
            start = clock()
            runs[name](args.epochs)
            timed[name] = (clock() - start) / steps
        for name in runs:
            times[name].append(timed[name])
            ratios[name].append(timed[name] / timed["loop"])
    loop_times = times["loop"]
    labels = {"loop": "hand-written loop (fw.function step)",
              "tracked": "the same loop, the step also updating a Mean of the loss",
              "own": "fit's own compiled train_step (loss tracker, logs) in the loop",
              "fit": "Model.fit"}
    rows = [[labels[name], f"{1e3 * statistics.median(times[name]):.3f}",
             f"{statistics.median(ratios[name]):.2f}x",
             "" if name == "loop" else f"{min(ratios[name]):.2f}-{max(ratios[name]):.2f}x"]
            for name in ("loop", "tracked", "own", "fit")]
    if os.path.exists(args.keras):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", OMP_NUM_THREADS="2",
                   TF_NUM_INTEROP_THREADS="1", TF_NUM_INTRAOP_THREADS="2")
        out = subprocess.run([args.keras, os.path.abspath(__file__), "--keras-worker",
                              "--rounds", str(args.rounds), "--epochs", str(args.epochs),
                              "--clock", args.clock],
                             capture_output=True, text=True, env=env, check=False)
        if out.returncode == 0:
            keras = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(["Keras 3 fit on TensorFlow (CPU)", f"{1e3 * keras:.3f}",
                         f"{keras / statistics.median(loop_times):.2f}x", ""])
        else:
            print(f"Keras run failed: {out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    print(f"digits MLP 64-100-10, Adam, batch {BATCH}, {args.rounds} rounds of "
          f"{args.epochs} epochs ({SAMPLES // BATCH} steps each), {args.clock} clock")
    table(["per training step", "ms", "vs hand loop", "rounds' range"], rows)


if __name__ == "__main__":
    main()
