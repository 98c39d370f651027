"""The wider optimizer surface against Keras 3 (keras_optimizers_reference.json, written by
reference/make_keras_optimizers_reference.py): 50-step trajectories of Nadam, Adamax, Adadelta,
Lion and FTRL, with default and other arguments, and of every optimizer with weight decay,
moving averages, gradient accumulation and loss scaling; their slots, counters and defaults."""
import json
import os

import numpy as np
import pytest

import framework as fw
import optimizers
from optimizers import schedules

with open(os.path.join(os.path.dirname(__file__), "reference",
                       "keras_optimizers_reference.json")) as f:
    REFERENCE = json.load(f)
TRAJECTORIES = REFERENCE["trajectories"]


def problem():
    """The recorded problem: initial weights, curvature, minimum, and each step's noise."""
    recorded = REFERENCE["problem"]
    start, curvature, minimum = ([np.array(w, np.float32) for w in recorded[key]]
                                 for key in ("start", "curvature", "minimum"))
    noise = [[np.array(n, np.float32) for n in step] for step in recorded["noise"]]
    return start, curvature, minimum, noise


def make(case):
    config = dict(TRAJECTORIES[case]["config"])
    if isinstance(config.get("learning_rate"), dict):
        config["learning_rate"] = schedules.SCHEDULES.get(config["learning_rate"])
    return optimizers.get(TRAJECTORIES[case]["class_name"], **config)


def run(case, optimizer=None):
    """The case's 50 steps here: the weights after each step, the variables, the optimizer."""
    start, curvature, minimum, noise = problem()
    variables = [fw.Variable(w, name=f"w{i}") for i, w in enumerate(start)]
    optimizer = optimizer or make(case)
    steps = []
    for step_noise in noise:
        grads = [a * (v.numpy() - c) + n
                 for v, a, c, n in zip(variables, curvature, minimum, step_noise)]
        optimizer.apply_gradients(zip([fw.constant(g) for g in grads], variables))
        steps.append([v.numpy() for v in variables])
    return steps, variables, optimizer


def assert_close(mine, keras, what):
    np.testing.assert_allclose(mine, np.asarray(keras, np.float32), rtol=2e-5, atol=2e-6,
                               err_msg=what)


@pytest.mark.parametrize("case", sorted(TRAJECTORIES))
def test_trajectory_follows_keras(case):
    reference = TRAJECTORIES[case]
    steps, variables, optimizer = run(case)
    for step, (mine, keras) in enumerate(zip(steps, reference["weights"], strict=True)):
        for i, (w, k) in enumerate(zip(mine, keras)):
            assert_close(w, k, f"{case}: w{i} after step {step + 1}")
    assert int(optimizer.iterations) == reference["iterations"]
    assert int(optimizer._iterations) == reference["calls"]
    for key, keras in reference["slots"].items():
        index, name = key.split("_", 1)
        assert_close(optimizer.get_slot(variables[int(index[1:])], name).numpy(), keras,
                     f"{case}: slot {key}")
    assert {key.split("_", 1)[1] for key in reference["slots"]} == set(
        optimizer.get_slot_names())
    optimizer.finalize_variable_values(variables)
    for i, (v, keras) in enumerate(zip(variables, reference["finalized"])):
        assert_close(v.numpy(), keras, f"{case}: w{i} finalized")


@pytest.mark.parametrize("name", sorted(REFERENCE["optimizer_defaults"]))
def test_defaults_are_kerass(name):
    mine = getattr(optimizers, name)().get_config()
    for key, value in REFERENCE["optimizer_defaults"][name].items():
        if key == "learning_rate":
            np.testing.assert_allclose(mine[key], value, rtol=1e-7)  # (Keras's is float32)
        else:
            assert mine[key] == value, (name, key)
