"""The examples run and print the numbers their tutorials promise.

Each script runs in this process through ``runpy`` (no interpreter start-up per script), with
its command-line switch for a short run where a full one would take more than a few seconds.
"""

import re
import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# script: (arguments, lines or fragments its output must contain)
EXPECTED = {
    "tutorial_tape_guide.py": ([], [
        "dy_dx = Tensor(6.0, shape=(), dtype=float32)",
        "dy_dx = Tensor(4.0,", "dy2_dx2 = Tensor(2.0,",
        "dz_dx = Tensor(108.0,", "dy_da = Tensor(4.0,", "dz_db = None",
        "gradients of a's variables = [None, None]",
        "batch_jacobian = [[[2.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 8.0]]]",
        "jacobian = [[2.0, 0.0], [0.0, 4.0]]",
        "two tapes: Tensor(3.0,", "reset: Tensor(3.0,",
        "gradient shapes = [(2, 1), (1,)]"]),
    "tutorial_tape_explained.py": ([], [
        "y = Tensor(9.0, shape=(), dtype=float32) y_grad = Tensor(6.0,",
        "ValueError: Tape is not recording.",
        "dz_dc unwatched = None", "dz_dc watched = Tensor(6.0,",
        "dy_dx = Tensor(6.0, shape=(), dtype=float32) d2y_dx2 = Tensor(2.0,",
        "y_grad_1 = Tensor(6.0, shape=(), dtype=float32) y_grad_2 = Tensor(12.0,",
        "grad outside the block = Tensor(33.0,"]),
    "tutorial_several_targets.py": ([], [
        "<class 'list'>\n4\n[[4.0, 4.0, 4.0], [2.0, 2.0, 2.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]",
        "Tensor(108.0, shape=(), dtype=float32)\nTensor(3.0, shape=(), dtype=float32)",
        "gradient shapes = [(2, 2), (2,)]",
        "Tensor(4.0, shape=(), dtype=float32)\nTensor(12.0, shape=(), dtype=float32)"]),
    "tutorial_notebook.py": ([], [
        "dy1_dx: Tensor(2.0,", "dy2_dx: Tensor(6.0,", "dy3_dx: Tensor(8.0,",
        "[Tensor(14.0, shape=(), dtype=float32), Tensor(12.0, shape=(), dtype=float32)]",
        "dz_dx = [[8.0, 8.0], [8.0, 8.0]]\n8.0",
        "control flow: [12.0, 12.0, 4.0]", "3.0 6.0"]),
    "tutorial_api_examples.py": ([], [
        "Tensor(6.0, shape=(), dtype=float32)\nTensor(10.0, shape=(), dtype=float32)\n"
        "Tensor(2.0, shape=(), dtype=float32)\nTensor(4.0, shape=(), dtype=float32)\nNone",
        "[[[2. 0.]\n  [0. 4.]]\n\n [[6. 0.]\n  [0. 8.]]]",
        "after reset: Tensor(2.0,"]),
    "higher_order.py": ([], [
        "d^1/dx^1 sin(x) at 0.5 = +0.877583  (exact +0.877583)",
        "d^4/dx^4 sin(x) at 0.5 = +0.479426  (exact +0.479426)",
        "Hessian-vector product: [3.0, 1.0, -27.0]  exact: [3.0, 1.0, -27.0]",
        "minimum at x = 1.13090112"]),
    "jacobian.py": ([], [
        "jacobian of W x, shape (2, 3) : [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]",
        "batch_jacobian shape (4, 2, 3)",
        "d(a*b)/da = [[3.0, 0.0], [0.0, 3.0]]  d(a*b)/db = [1.0, 2.0]"]),
    "layerwise_mlp.py": ([], ["batch 0: loss", "batches trained: 280"]),
    "custom_loop.py": (["--epochs", "3"], ["epoch 3: loss"]),
}
# The trainings' least test accuracy: the seed's layer-wise example, in full, beats 0.95.
LEAST_ACCURACY = {"layerwise_mlp.py": 0.95, "custom_loop.py": 0.9}


def run_example(name, args, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / name), *args])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


# The porting pair: tests/test_porting.py checks the one against the other and runs the port
# (the original needs TensorFlow).
PORTING = ("tf2_original.py", "tf2_port.py")


def test_every_example_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted([*EXPECTED, *PORTING])


@pytest.mark.filterwarnings("ignore:Calling GradientTape.gradient on a persistent tape")
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_prints_its_numbers(name, monkeypatch, capsys):
    args, expected = EXPECTED[name]
    out = run_example(name, args, monkeypatch, capsys)
    for fragment in expected:
        assert fragment in out, f"{name}: {fragment!r} not in its output:\n{out}"
    if name in LEAST_ACCURACY:
        accuracy = float(re.search(r"^test accuracy: (\S+)$", out, re.M).group(1))
        assert accuracy > LEAST_ACCURACY[name]


def test_small_errors_in_the_jacobian_example(monkeypatch, capsys):
    out = run_example("jacobian.py", [], monkeypatch, capsys)
    errors = [float(e) for e in re.findall(r"max error (\S+)", out)]
    assert len(errors) == 4 and max(errors) < 1e-12


def test_layerwise_example_has_a_quick_switch(monkeypatch, capsys):
    out = run_example("layerwise_mlp.py", ["--steps", "3"], monkeypatch, capsys)
    assert "batches trained: 3" in out
