"""The CuPy backend on a real GPU in one run of under 8 minutes: ``gpu_check.py OUT``.

Run from the repository root on a machine with an NVIDIA GPU, CuPy and (for the comparison)
PyTorch with CUDA; nothing is installed or downloaded. Six stages, each in a process of its own
with its own time budget (stopped at the budget, and a stage that fails or runs out of time
never stops the next ones):

- ``versions``: the GPU, its driver, CUDA, CuPy, NumPy, PyTorch, and the optional packages that
  the test suite and the runner use;
- ``kernels``: every fused kernel of ``framework/kernels.py`` (compiled by CuPy with NVRTC) run
  through the op or optimizer that uses it, against the NumPy path, float32 and float64;
- ``suite``: the test suite on the CuPy backend (``--backend cupy``), fast files first, the
  slowest last, stopped (with pytest's summary of what ran) at its budget;
- ``benchmark``: ``benchmarks/gpu_mlp_step.py`` (the large MLP step at batch 256 and 4096 on
  NumPy, CuPy eager, ``fw.function``, ``fw.function`` as a CUDA graph, and PyTorch CUDA eager);
- ``runner``: the runner's default training (configs/layerwise_mlp.toml) on ``backend = "cupy"``,
  then a run trained on the GPU resumed on the CPU, and that one resumed on the GPU again;
- ``nccl``: the NCCL collectives on one GPU, raw and through ``fw.distributed`` (a one-rank
  job: MPI's own when mpi4py is installed, else a one-rank stand-in for the communicator).

Everything goes into the folder OUT: ``summary.json`` (every stage's status, seconds, results),
``<stage>.log`` (its output), ``pytest.log``, ``benchmark.md`` and ``benchmark.json``, and
``runner/`` (the runs). ``--dry-run`` runs every stage on the tests' CuPy emulator with tiny
budgets and sizes (tests/test_gpu_check.py runs it, so the script cannot rot unnoticed).
The exit status is 0 when every stage passed, else 1.
"""
import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# name: (budget in seconds on the GPU, in a dry run). Together under 8 minutes.
STAGES = {"versions": (20, 30), "kernels": (80, 60), "suite": (200, 60), "benchmark": (100, 60),
          "runner": (45, 60), "nccl": (20, 30)}
TOTAL = 480  # seconds, all stages together (a dry run: the sum of its budgets)
GRACE = 15  # seconds between asking a stage to stop (SIGINT) and killing it

# Test files by how long they take (the suite on the emulated backend), slowest last; files not
# listed take a few seconds at most and run first, by name.
SLOW_FILES = ["test_normalized_config.py", "test_tape.py", "test_kernel_sources.py",
              "test_probability_loss.py", "test_gpu.py", "test_runner_readme.py",
              "test_losses.py", "test_distributed.py", "test_optimizers.py",
              "test_digits_cnn_config.py", "test_runner_faults.py", "test_ops_gradients.py",
              "test_runner.py", "test_optimizers_contract.py", "test_runner_mpi.py"]
# Left out of the suite on the GPU: this script's own dry run on the emulator.
GPU_DESELECT = ["tests/test_gpu_check.py::"
                "test_the_dry_run_passes_every_stage_and_writes_every_result"]
# A dry run's suite: a handful of quick tests.
DRY_SUITE = ["tests/test_kernel_sources.py::test_kernel_sources_declare_known_parameters",
             "tests/test_optimizers_gpu.py"]


# --- the driver: each stage in a child process with a budget -----------------------------------
def run_stage(name, out, dry_run, budget):
    """Run stage ``name`` in a child process; its status, seconds and results."""
    command = [sys.executable, __file__, str(out), "--stage", name, "--child"]
    command += ["--dry-run"] * dry_run
    start = time.perf_counter()
    with open(out / f"{name}.log", "w") as log:
        code = run_with_budget(command, budget, log)
    seconds = round(time.perf_counter() - start, 1)
    result_file = out / f"{name}.json"
    results = json.loads(result_file.read_text()) if result_file.exists() else {}
    if code == "timeout":
        status = "timed out"
    elif code != 0:
        status = "failed"
    else:
        status = "passed" if results.get("ok", False) else "failed"
    return {"status": status, "seconds": seconds, "budget": budget, "exit": code, **results}


def run_with_budget(command, budget, log):
    """The exit status of ``command`` (output to ``log``), or "timeout": at ``budget`` seconds
    its process group gets SIGINT (pytest then prints what ran), GRACE seconds later SIGKILL."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        return process.wait(timeout=max(budget, 1))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=GRACE)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        return "timeout"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder every result is written to")
    parser.add_argument("--dry-run", action="store_true",
                        help="every stage on the CuPy emulator, with tiny budgets and sizes")
    parser.add_argument("--stage", choices=STAGES, action="append",
                        help="run only this stage (repeatable)")
    parser.add_argument("--budget", type=float, default=None,
                        help=f"seconds for all stages (default: {TOTAL})")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # run_stage's
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.child:
        return child(args.stage[0], args.out, args.dry_run)
    total = args.budget or (sum(b[1] for b in STAGES.values()) if args.dry_run else TOTAL)
    deadline = time.monotonic() + total
    summary = {"dry_run": args.dry_run, "budget": total, "stages": {}}
    for name in args.stage or STAGES:
        budget = min(STAGES[name][args.dry_run], deadline - time.monotonic() - GRACE)
        if budget < 1:
            summary["stages"][name] = {"status": "not run", "why": "no time left"}
        else:
            print(f"== {name} (budget {budget:.0f} s)", flush=True)
            summary["stages"][name] = run_stage(name, args.out, args.dry_run, budget)
        stage = summary["stages"][name]
        print(f"== {name}: {stage['status']}" + (f" in {stage['seconds']} s"
                                                  if "seconds" in stage else ""), flush=True)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    report(summary, args.out)
    print(json.dumps({k: v["status"] for k, v in summary["stages"].items()}))
    return 0 if all(v["status"] == "passed" for v in summary["stages"].values()) else 1


def report(summary, out):
    """The findings in a few lines on the console (the rest is in ``out``)."""
    stages = summary["stages"]
    versions = stages.get("versions", {})
    print("\n" + ", ".join(f"{k} {versions[k]}" for k in (
        "gpu", "driver", "cuda_runtime", "cupy", "numpy", "torch", "torch_cuda")
        if versions.get(k) is not None))
    for name, stage in stages.items():
        if stage.get("error"):
            print(f"{name}: {stage['error']}")
    failed = [k for k, c in stages.get("kernels", {}).get("cases", {}).items() if not c["ok"]]
    if failed:
        print(f"kernels failing: {', '.join(failed)}")
    if stages.get("kernels", {}).get("not_exercised"):
        print(f"kernels not run: {', '.join(stages['kernels']['not_exercised'])}")
    if "suite" in stages:
        print(f"suite: {stages['suite'].get('summary')} "
              f"({', '.join(f'{k} {v}' for k, v in stages['suite'].items() if k in OUTCOMES)})")
    if (out / "benchmark.md").exists():
        print((out / "benchmark.md").read_text())


# --- the stages, each in its own process --------------------------------------------------------
def child(name, out, dry_run):
    """Run one stage here, writing ``out/<name>.json`` as it goes (a stage stopped at its
    budget leaves what it had)."""
    if dry_run:
        sys.path.insert(0, str(ROOT / "tests"))
        import cupy_emulator
        sys.modules.update(cupy_emulator.modules())
    results = {"ok": False}
    path = out / f"{name}.json"

    def save():
        path.write_text(json.dumps(results, indent=1, default=str))
    save()
    try:
        globals()[f"stage_{name}"](out, dry_run, results, save)
    except KeyboardInterrupt:  # the driver's SIGINT at the budget
        results.update(ok=False, error="stopped at its time budget")
    except Exception as error:  # noqa: BLE001 - recorded, and the driver goes on
        import traceback
        traceback.print_exc()
        results.update(ok=False, error=f"{type(error).__name__}: {error}")
    save()
    return 0


def stage_versions(out, dry_run, results, save):
    import numpy as np
    import framework as fw
    results.update(python=sys.version.split()[0], numpy=np.__version__,
                   framework=fw.__version__ if hasattr(fw, "__version__") else None)
    cupy = fw.backend.cupy_module()
    emulated = cupy.__name__ == "cupy_emulator"
    results["cupy"] = "the tests' CuPy emulator" if emulated else cupy.__version__
    runtime = cupy.cuda.runtime
    if hasattr(runtime, "getDeviceProperties"):
        properties = runtime.getDeviceProperties(0)
        name = properties["name"]
        results.update(
            gpu=name.decode() if isinstance(name, bytes) else name, gpu_memory_gib=round(
                properties["totalGlobalMem"] / 2**30, 1),
            compute_capability=f"{properties['major']}.{properties['minor']}",
            driver=_cuda_version(runtime.driverGetVersion()),
            cuda_runtime=_cuda_version(runtime.runtimeGetVersion()))
    try:
        import torch
        results.update(torch=torch.__version__, torch_cuda=torch.version.cuda,
                       torch_sees_gpu=torch.cuda.is_available())
    except ImportError:
        results["torch"] = None
    results["optional"] = {m: importlib.util.find_spec(m) is not None for m in (
        "pytest", "hypothesis", "sklearn", "tqdm", "mpi4py", "h5py", "matplotlib")}
    for key, value in results.items():
        print(f"{key}: {value}")
    results["ok"] = True


def _cuda_version(number):
    return f"{number // 1000}.{number % 1000 // 10}"


def stage_kernels(out, dry_run, results, save):
    """Each kernel through its op or optimizer, on the GPU against the host (NumPy path)."""
    import numpy as np
    import framework as fw
    from framework.tuning import kernels
    fw.set_backend("cupy")
    launched = set()
    build, build_rows = kernels._kernel, kernels._row_kernel
    kernels._kernel = lambda name: launched.add(name) or build(name)
    kernels._row_kernel = lambda name, *d: launched.add(name) or build_rows(name, *d)
    results["cases"] = cases = {}
    for label, case in kernel_cases(dry_run):
        start = time.perf_counter()
        try:
            error, tolerance = case()
            cases[label] = {"ok": bool(error <= 1), "error_over_tolerance": float(error),
                            "tolerance": tolerance}
        except Exception as failure:  # a kernel that does not compile or run: the next one runs
            cases[label] = {"ok": False, "error": f"{type(failure).__name__}: {failure}"}
        cases[label]["seconds"] = round(time.perf_counter() - start, 2)
        print(label, cases[label], flush=True)
        save()
    every = set(kernels.SOURCES) | set(kernels.ROW_SOURCES)
    results["not_exercised"] = sorted(every - launched) if not dry_run else []
    results["ok"] = all(c["ok"] for c in cases.values()) and not results["not_exercised"]


TOLERANCES = {"float32": {"rtol": 1e-4, "atol": 1e-5}, "float64": {"rtol": 1e-10, "atol": 1e-12}}


def _excess(actual, expected, dtype):
    """max |actual - expected| / (atol + rtol |expected|): at most 1 passes."""
    import numpy as np
    t = TOLERANCES[dtype]
    worst = 0.0
    for a, e in zip(actual, expected, strict=True):
        a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
        if not np.array_equal(np.isnan(a), np.isnan(e)):
            return float("inf")
        finite = ~np.isnan(e)
        worst = max(worst, float(np.max(np.abs(a - e)[finite] / (t["atol"] + t["rtol"]
                                                                 * np.abs(e[finite])),
                                        initial=0.0)))
    return worst


def kernel_cases(dry_run):
    """(label, case) pairs; a case returns its error over the tolerance, and the tolerance."""
    import numpy as np
    import framework as fw
    import optimizers
    rng = np.random.default_rng(0)

    def on_both(f, arrays, dtype):
        """f's value and gradients (of a random cotangent) on the host and on the GPU."""
        runs = []
        for device in ("cpu", "gpu"):
            inputs = [fw.to_device(fw.constant(a), device) for a in arrays]
            with fw.GradientTape() as tape:
                floats = [x for x in inputs if x.dtype.kind == "f"]
                tape.watch(floats)
                y = f(*inputs)
                cotangent = np.random.default_rng(1).standard_normal(y.shape).astype(dtype)
                total = fw.reduce_sum(y * fw.to_device(fw.constant(cotangent), device))
            runs.append([y.numpy()] + [g.numpy() for g in tape.gradient(total, floats)])
        return _excess(runs[1], runs[0], dtype), TOLERANCES[dtype]

    def relu_case(dtype, rows, units):
        x = rng.standard_normal((rows, units)).astype(dtype)
        b = rng.standard_normal(units).astype(dtype)
        return lambda: on_both(fw.nn.bias_add_relu, [x, b], dtype)

    def xent_case(dtype, rows, classes):
        logits = (rng.standard_normal((rows, classes)) * 4).astype(dtype)
        labels = rng.integers(0, classes, rows).astype(np.int64)
        return lambda: on_both(
            lambda z, y: fw.nn.sparse_softmax_cross_entropy_with_logits(y, z),
            [logits, labels], dtype)

    def optimizer_case(dtype, make, shape):
        start = rng.standard_normal(shape).astype(dtype)
        grads = [rng.standard_normal(shape).astype(dtype) for _ in range(3)]

        def case():
            runs = []
            for device in ("cpu", "gpu"):
                variable = fw.Variable(fw.to_device(fw.constant(start), device))
                optimizer = make()
                for g in grads:
                    optimizer.apply_gradients([(fw.to_device(fw.constant(g), device), variable)])
                runs.append([v.numpy() for v in [variable] + optimizer.variables[1:]])
            return _excess(runs[1], runs[0], dtype), TOLERANCES[dtype]
        return case

    makers = {"adam": lambda: optimizers.Adam(0.01),
              "adam_amsgrad": lambda: optimizers.Adam(0.01, amsgrad=True),
              "sgd": lambda: optimizers.SGD(0.1),
              "sgd_momentum": lambda: optimizers.SGD(0.1, momentum=0.9, nesterov=True),
              "nadam": lambda: optimizers.Nadam(0.01), "adamax": lambda: optimizers.Adamax(0.01),
              "adadelta": lambda: optimizers.Adadelta(1.0), "lion": lambda: optimizers.Lion(0.01),
              "ftrl": lambda: optimizers.Ftrl(0.1, l1_regularization_strength=0.01,
                                              l2_regularization_strength=0.01)}
    if dry_run:  # kernels the tests compile anyway, on tiny shapes
        yield "bias_add_relu float32", relu_case("float32", 4, 8)
        yield "sparse_xent float32, 300 classes by blocks", xent_case("float32", 2, 300)
        yield "adam float32", optimizer_case("float32", makers["adam"], (5,))
        return
    for dtype in ("float32", "float64"):
        yield f"bias_add_relu {dtype}", relu_case(dtype, 512, 1024)
        for rows, classes in ((4096, 10), (256, 1000), (64, 50_000)):
            yield f"sparse_xent {dtype}, {classes} classes", xent_case(dtype, rows, classes)
        for name, make in makers.items():
            yield f"{name} {dtype}", optimizer_case(dtype, make, (257, 129))


def stage_suite(out, dry_run, results, save):
    """The test suite on the CuPy backend, fast files first; the log is ``pytest.log``."""
    if importlib.util.find_spec("pytest") is None:
        raise RuntimeError("pytest is not installed, so the suite cannot run")
    if dry_run:
        targets = DRY_SUITE
    else:
        files = sorted(p.name for p in (ROOT / "tests").glob("test_*.py"))
        slow = [f for f in SLOW_FILES if f in files]
        targets = [f"tests/{f}" for f in [f for f in files if f not in slow] + slow]
        targets += [f"--deselect={test}" for test in GPU_DESELECT]
    backend = "emulated-cupy" if dry_run else "cupy"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "-rfE",
               "--continue-on-collection-errors", "--durations=25", "--backend", backend,
               *targets]
    results["command"] = " ".join(command[1:])
    save()
    env = dict(os.environ, FRAMEWORK_TEST_BACKEND=backend)
    with open(out / "pytest.log", "w") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
        try:
            results["exit"] = process.wait()
        except KeyboardInterrupt:  # the budget: pytest got SIGINT too and prints its summary
            results["exit"] = process.wait()
            results["stopped_at_budget"] = True
        finally:
            results.update(count_outcomes((out / "pytest.log").read_text()))
            save()
    results["ok"] = results["exit"] == 0 and results.get("passed", 0) > 0


OUTCOMES = ("passed", "failed", "skipped", "error", "xfail", "xpass")


def count_outcomes(log):
    """How many tests passed, failed... from pytest -v lines (complete even if it was stopped),
    and the summary line."""
    import re
    counts = {}
    for outcome in re.findall(rf" ({'|'.join(o.upper() for o in OUTCOMES)})\b", log):
        counts[outcome.lower()] = counts.get(outcome.lower(), 0) + 1
    summary = [line for line in log.splitlines() if re.match(r"^=+ .*( in [0-9.]+s)", line)]
    counts["summary"] = summary[-1].strip("= ") if summary else None
    return counts


def stage_benchmark(out, dry_run, results, save):
    """benchmarks/gpu_mlp_step.py; its table is benchmark.md, its numbers benchmark.json."""
    sizes = (["--batch", "8", "--seconds", "0.05", "--repeats", "1", "--warmup", "1",
              "--emulated"] if dry_run else
             ["--batch", "256", "--batch", "4096", "--seconds", "2", "--repeats", "3"])
    command = [sys.executable, str(ROOT / "benchmarks" / "gpu_mlp_step.py"), *sizes,
               "--json", str(out / "benchmark.json")]
    with open(out / "benchmark.md", "w") as table:
        results["exit"] = subprocess.run(command, cwd=ROOT, stdout=table).returncode
    print((out / "benchmark.md").read_text())
    measured = json.loads((out / "benchmark.json").read_text())
    results.update(measured)
    cupy_rows = [r for r in measured["rows"] if "CuPy" in r["implementation"]]
    results["ok"] = results["exit"] == 0 and bool(cupy_rows)


def stage_runner(out, dry_run, results, save):
    """The default training on the GPU, and a GPU run resumed on the CPU and back."""
    from training.cli import main as tape_train
    config = str(ROOT / "configs" / "layerwise_mlp.toml")
    epochs = (1, 2, 3) if dry_run else (4, 6, 8)

    def run(folder, backend, last_epoch, *extra):
        code = tape_train([config, "--no-progress", "--output", str(out / "runner" / folder),
                           "--set", f"backend={backend}", "--set", "output.plot=false",
                           "--set", f"epochs={last_epoch}", *extra])
        lines = (out / "runner" / folder / "metrics.jsonl").read_text().splitlines()
        return code, [json.loads(line) for line in lines]

    code, straight = run("gpu", "cupy", epochs[2], "--overwrite")
    results["gpu"] = {"exit": code, "last_epoch": straight[-1]}
    steps = [run("moved", "cupy", epochs[0], "--overwrite"), run("moved", "numpy", epochs[1],
                                                                 "--resume"),
             run("moved", "cupy", epochs[2], "--resume")]
    moved = steps[-1][1]
    results["gpu_cpu_gpu"] = {"exit": [c for c, _ in steps], "last_epoch": moved[-1]}
    # Losses only: an accuracy moves by a whole example when rounding flips one prediction.
    difference = max(abs(a[k] - b[k]) / abs(b[k]) for a, b in zip(moved, straight, strict=True)
                     for k in a if "loss" in k)
    results["largest_loss_difference"] = difference  # relative
    print(json.dumps(results, indent=1))
    results["ok"] = (code == 0 and all(c == 0 for c, _ in steps) and difference < 1e-3
                     and len(moved) == epochs[2])


def stage_nccl(out, dry_run, results, save):
    """NCCL on one GPU: raw collectives of each dtype, then fw.distributed's gradient average
    and broadcast through them."""
    import numpy as np
    import framework as fw
    from framework import distributed
    from framework.engine import backend
    fw.set_backend("cupy")
    cupy = backend.cupy_module()
    communicator = backend.nccl_communicator(1, backend.nccl_unique_id(), 0)
    raw = {}
    for dtype in ("float16", "float32", "float64", "int32", "int64", "uint8"):
        host = (np.arange(1000) % 97).astype(dtype)
        array = cupy.asarray(host)
        for kind in ("allreduce", "broadcast"):
            event = backend.nccl_collective(communicator, kind, array)
            event.synchronize()
        raw[dtype] = bool(event.done and np.array_equal(array.get(), host))
    results["raw"] = raw
    save()
    results["world"] = _one_rank_world(distributed)
    from layers import Dense
    layer = Dense(4)
    x = fw.constant(np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32))
    layer(x)
    before = [v.numpy() for v in layer.variables]
    distributed.broadcast_variables(layer.variables)
    with fw.GradientTape() as tape:
        loss = fw.reduce_sum(layer(x) ** 2)
    plain = [g.numpy() for g in tape.gradient(loss, layer.variables)]
    with fw.GradientTape() as tape:
        loss = fw.reduce_sum(layer(x) ** 2)
    averaged = distributed.DistributedGradientTape(tape).gradient(loss, layer.variables)
    stats = distributed.communication_stats()
    results["distributed"] = {
        "broadcast_kept_values": all(np.array_equal(b, v.numpy())
                                     for b, v in zip(before, layer.variables, strict=True)),
        "average_of_one_rank_is_the_gradient": all(
            np.array_equal(p, a.numpy()) and a.device == "gpu"
            for p, a in zip(plain, averaged, strict=True)),
        "nccl_calls": stats["nccl_calls"]}
    print(json.dumps(results, indent=1))
    results["ok"] = (all(raw.values()) and stats["nccl_calls"] >= 2
                     and all(v for k, v in results["distributed"].items() if k != "nccl_calls"))


def _one_rank_world(distributed):
    """Make this process a one-rank fw.distributed job: MPI's singleton when mpi4py is there
    (its collectives run), else a stand-in communicator of one rank (for what MPI carries
    beside the GPU buffers: the NCCL id, and the host-side checks)."""
    try:
        from mpi4py import MPI  # noqa: F401 - loaded, fw.distributed joins MPI's world
    except ImportError:
        import types

        class Done:
            Test = staticmethod(lambda: True)

        class OneRank:
            bcast = staticmethod(lambda obj, root=0: obj)
            Iallreduce = staticmethod(lambda send, recv, op=None: Done)
            Ibcast = staticmethod(lambda buf, root=0: Done)
            Iprobe = staticmethod(lambda **kwargs: False)
            Get_rank = staticmethod(lambda: 0)
            Get_size = staticmethod(lambda: 1)

        distributed._w.mpi = types.SimpleNamespace(SUM="sum", MAX="max", IN_PLACE=None,
                                                   Status=lambda: None)
        distributed._w.comm, distributed._w.ready = OneRank(), True
        return "a one-rank stand-in for MPI (mpi4py is not installed)"
    distributed.init()
    return f"MPI's own world of {distributed.size()} rank"


if __name__ == "__main__":
    sys.exit(main())
