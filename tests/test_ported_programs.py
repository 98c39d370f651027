"""Public TF2 programs that train with a tape and no ``compile``/``fit`` (tests/programs/),
ported by ``tf`` -> ``fw`` alone, against TensorFlow 2.21 / Keras 3's runs of the same code
(tests/reference/make_programs_reference.py): the deterministic ones number for number from the
same initial weights, the ones that draw random numbers while training within TensorFlow's
range over three seeds."""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw
from programs_setup import DETERMINISTIC, SEEDED, init_weights

HERE = Path(__file__).parent
REFERENCE = json.loads((HERE / "reference" / "programs_reference.json").read_text())


def load(name):
    spec = importlib.util.spec_from_file_location(f"program_{name}",
                                                  HERE / "programs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def close(got, expected, rtol):
    if isinstance(expected, dict):
        assert sorted(got) == sorted(expected)
        for key in expected:
            close(got[key], expected[key], rtol)
    elif isinstance(expected, list):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            close(g, e, rtol)
    elif isinstance(expected, float):
        assert got == pytest.approx(expected, rel=rtol, abs=rtol * 1e-2)
    else:
        assert got == expected


@pytest.fixture(autouse=True)
def _fresh_floatx():
    yield
    fw.keras.backend.set_floatx("float32")


# second derivatives through a float32 tanh network and Adam's normalized steps amplify
# float32 rounding over the steps; the others follow TensorFlow to a few ulps
TOLERANCE = {"pinn_burgers": 2e-3, "maml_sinusoid": 2e-3}


@pytest.mark.filterwarnings("ignore:Calling GradientTape.gradient on a persistent tape")
@pytest.mark.parametrize("name", sorted(DETERMINISTIC))  # (the PINN's warning is TF's too)
def test_a_deterministic_program_gives_tensorflows_numbers(name):
    kwargs = dict(DETERMINISTIC[name])
    if name != "custom_training_basics":
        kwargs["init"] = init_weights
    got = load(name).main(fw, **kwargs)
    close(got, REFERENCE["deterministic"][name], TOLERANCE.get(name, 1e-4))


def _within(got, runs, key_path, widen):
    """``got`` at ``key_path`` within the runs' range, widened by ``widen`` of its width."""
    def pick(result):
        for key in key_path:
            result = result[key]
        return np.asarray(result, float)

    values = np.stack([pick(run) for run in runs])
    low, high = values.min(axis=0), values.max(axis=0)
    margin = widen * np.maximum(high - low, 0.05 * np.abs(values).max(axis=0))
    value = pick(got)
    assert np.all((value >= low - margin) & (value <= high + margin)), (key_path, value, low,
                                                                        high)


@pytest.mark.parametrize("name, checks", [
    ("cvae", [("elbo",)]),
    ("dcgan", [("gen, disc losses",)])])
def test_a_program_with_random_draws_falls_in_tensorflows_range(name, checks):
    kwargs, seeds = SEEDED[name]
    runs = REFERENCE["seeded"][name]
    got = load(name).main(fw, seed=0, **kwargs)
    for key_path in checks:
        _within(got, runs, key_path, widen=1.0)
    for key in got:  # shapes and flags: the same as every TensorFlow run
        if not isinstance(got[key], (list, float)) or key.endswith("shape"):
            assert got[key] == runs[0][key]
    if name == "cvae":  # (probabilities: how high the samples reach varies too much to range)
        assert 0.0 <= got["sample range"][0] <= got["sample range"][1] <= 1.0
