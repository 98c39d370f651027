"""benchmarks/gpu_check.py, the one prepared run on a GPU machine, kept from rotting: its dry
run (every stage on the CuPy emulator, tiny sizes) passes and writes every result; a stage
over its budget is stopped; the ``gpu`` extras name CuPy's wheels."""
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_check)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="the CuPy emulator needs g++")
def test_the_dry_run_passes_every_stage_and_writes_every_result(tmp_path):
    out = tmp_path / "results"
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), str(out),
                           "--dry-run"], capture_output=True, text=True, timeout=400)
    summary = json.loads((out / "summary.json").read_text())
    statuses = {name: stage["status"] for name, stage in summary["stages"].items()}
    assert statuses == dict.fromkeys(gpu_check.STAGES, "passed"), done.stdout[-4000:]
    assert done.returncode == 0 and summary["dry_run"]
    stages = summary["stages"]
    assert stages["versions"]["cupy"] == "the tests' CuPy emulator"
    assert all(case["ok"] for case in stages["kernels"]["cases"].values())
    suite = stages["suite"]
    assert suite["passed"] >= 10 and "failed" not in suite
    assert " passed" in suite["summary"] and "PASSED" in (out / "pytest.log").read_text()
    table = (out / "benchmark.md").read_text()
    assert "| framework, CuPy, fw.function " in table and "memory added (MiB)" in table
    assert {r["implementation"] for r in stages["benchmark"]["rows"]} >= {
        "framework, NumPy", "framework, CuPy", "framework, CuPy, fw.function"}
    assert stages["runner"]["largest_loss_difference"] < 1e-3
    assert stages["nccl"]["distributed"]["nccl_calls"] >= 2 and all(stages["nccl"]["raw"].values())
    for name in gpu_check.STAGES:
        assert (out / f"{name}.log").exists()
    assert (out / "gpu_check.log").read_text().endswith(json.dumps(statuses) + "\n")


def test_a_stage_over_its_budget_is_stopped(tmp_path):
    with open(tmp_path / "log", "w") as log:
        status = gpu_check.run_with_budget(
            [sys.executable, "-c", "import time; time.sleep(120)"], 1, log)
    assert status == "timeout"


def test_pytest_outcomes_are_counted_from_a_log_cut_short():
    log = ("tests/test_a.py::test_one PASSED [ 10%]\ntests/test_a.py::test_two FAILED [ 20%]\n"
           "tests/test_b.py::test_three[cupy] SKIPPED (no GPU) [ 30%]\n"
           "tests/test_b.py::test_four PASSED [ 40%]\n")
    assert gpu_check.count_outcomes(log) == {"passed": 2, "failed": 1, "skipped": 1,
                                             "summary": None}
    log += "========= 1 failed, 2 passed, 1 skipped in 3.20s =========\n"
    assert gpu_check.count_outcomes(log)["summary"] == "1 failed, 2 passed, 1 skipped in 3.20s"


def test_the_gpu_extras_name_cupys_wheels_for_cuda_12_and_13():
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert extras["gpu-cuda12"] == ["cupy-cuda12x>=13"]
    assert extras["gpu-cuda13"] == ["cupy-cuda13x>=14"]
    assert extras["gpu"] == ["tape-framework[gpu-cuda12]"]  # the alias: CUDA 12 wheels
