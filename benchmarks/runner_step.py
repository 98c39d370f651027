"""``tape-train``'s time per training step on real configs, this tree against another one (the
runner before it trained through ``fit``, say).

Each measurement is a run of the runner in a process of its own (``training.loop.train`` on the
config, ``--epochs`` epochs, no progress bar, a temporary run folder), with the tree's own
code on ``PYTHONPATH``. The time of an epoch's steps is taken from the first batch drawn to the
end of the last step (the runner's batches come from ``training.data.iterate_batches``, which
this script wraps in either tree), so it holds everything the runner does per step (the step,
the loss and the metrics it keeps, the records, the callbacks) and not the epoch's evaluation
and checkpoint. The first epoch (where ``fw.function`` traces) is left out; a run's figure is the
median of its other epochs' time per step. Runs go in rounds that alternate the trees' order;
the table gives each tree's median over rounds, with the lowest and highest, and the median of
the rounds' ratios. 2 BLAS threads; ``--clock process`` counts CPU seconds instead of wall
seconds.

    python benchmarks/runner_step.py --other /path/to/the/other/tree
    python benchmarks/runner_step.py --configs configs/digits_cnn.toml --rounds 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.common import limit_threads, table  # noqa: E402

CONFIGS = ["configs/mlp_digits.toml", "configs/layerwise_mlp.toml", "configs/digits_cnn.toml"]

# Run in the measured tree: the runner on one config, the epochs' step times as JSON.
CHILD = r"""
import importlib, importlib.util, json, sys, tempfile, time
from training.config.reading import load_config
config_path, epochs = sys.argv[1], int(sys.argv[2])
clock = time.process_time if sys.argv[3] == "process" else time.perf_counter
spans = []

def timed(iterate):
    def batches(*args, **kwargs):
        start, count = None, 0
        for batch in iterate(*args, **kwargs):
            if start is None:
                start = clock()
            count += 1
            yield batch
        spans.append(((clock() - start) / count, count))
    return batches

for name in ("training.loop", "training.callbacks"):  # where each tree draws its batches
    module = importlib.util.find_spec(name) and importlib.import_module(name)
    if hasattr(module, "iterate_batches"):
        module.iterate_batches = timed(module.iterate_batches)
from training.loop import train
with tempfile.TemporaryDirectory() as folder:
    config, source = load_config(config_path, [f"epochs={epochs}", "output.plot=false",
                                               f"output_dir={json.dumps(folder + '/run')}"])
    train(config, source, progress=False)
print(json.dumps(spans))
"""


def run(tree, config, epochs, clock):
    """Seconds per step of each epoch after the first, in a fresh process on ``tree``."""
    env = {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run([sys.executable, "-c", CHILD, os.path.join(ROOT, config), str(epochs),
                          clock],
                         env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{tree}: {config}: the run failed:\n{out.stderr}")
    spans = json.loads(out.stdout.strip().splitlines()[-1])
    return statistics.median(seconds for seconds, _ in spans[1:]), spans[0][1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", help="the tree to compare with (a checkout's root)")
    parser.add_argument("--configs", nargs="+", default=CONFIGS)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clock", choices=("wall", "process"), default="wall",
                        help="wall seconds, or the process's CPU seconds (steadier on a loaded "
                             "machine; they add up the BLAS threads)")
    args = parser.parse_args()
    limit_threads()
    trees = [("this tree", ROOT)] + ([("other", os.path.abspath(args.other))]
                                     if args.other else [])
    rows = []
    for config in args.configs:
        times = {name: [] for name, _ in trees}
        for round_ in range(args.rounds):
            for name, tree in trees[::-1] if round_ % 2 else trees:
                seconds, steps = run(tree, config, args.epochs, args.clock)
                times[name].append(seconds)
        row = [config, steps]
        for name, _ in trees:
            row.append(_ms(times[name]))
        if len(trees) == 2:
            ratios = [a / b for a, b in zip(times["this tree"], times["other"])]
            row.append(f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
        rows.append(row)
    headers = ["config", "steps/epoch", *(f"{name}: ms/step" for name, _ in trees)]
    table(headers + (["this / other"] if len(trees) == 2 else []), rows)


def _ms(samples):
    return (f"{1000 * statistics.median(samples):.3f} "
            f"({1000 * min(samples):.3f}-{1000 * max(samples):.3f})")


if __name__ == "__main__":
    main()
