"""Weight constraints (``fw.keras.constraints``, ``kernel_constraint=``, ``Variable.constraint``)
against Keras 3's numbers (tests/reference/make_constraints_reference.py): each constraint's
projection, and tape loops whose optimizer projects the variables after every update, eagerly
and under ``fw.function``."""
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw
import layers
from framework import keras

REFERENCE = json.loads(
    (Path(__file__).parent / "reference" / "constraints_reference.json").read_text())
W = np.array(REFERENCE["W"], np.float32)


@pytest.mark.parametrize("name", sorted(REFERENCE["constraints"]))
def test_each_constraint_projects_as_keras(name):
    case = REFERENCE["constraints"][name]
    constraint = eval(case["line"], {"keras": keras})  # noqa: S307 - the recorded line
    np.testing.assert_allclose(constraint(fw.constant(W)).numpy(), case["value"], rtol=1e-6,
                               atol=1e-7)
    assert constraint.get_config() == case["config"]
    rebuilt = keras.constraints.get(keras.constraints.serialize(constraint))
    assert type(rebuilt) is type(constraint) and rebuilt.get_config() == case["config"]


def _loop(optimizer_line, compiled):
    keras.backend.clear_session()
    dense = keras.layers.Dense(3, kernel_constraint=keras.constraints.MaxNorm(1.0),
                               bias_constraint="non_neg")
    dense.build((None, 4))
    dense.set_weights([W, np.array([0.1, -0.2, 0.3], np.float32)])
    table = keras.layers.Embedding(5, 3, embeddings_constraint=keras.constraints.UnitNorm(1))
    table.build((None,))
    table.set_weights([np.arange(15, dtype=np.float32).reshape(5, 3) / 10 - 0.5])
    scale = fw.Variable([1.5, -0.5, 2.0], constraint=lambda v: fw.clip_by_value(v, -1.0, 1.0))
    untouched = fw.Variable([5.0], constraint=keras.constraints.NonNeg())
    optimizer = eval(optimizer_line, {"keras": keras})  # noqa: S307
    variables = [*dense.trainable_variables, *table.trainable_variables, scale]
    x, y = fw.constant(REFERENCE["X"]), fw.constant(REFERENCE["Y"])

    def step(x, y):
        with fw.GradientTape() as tape:
            out = dense(x) * scale + table(fw.constant([1, 3]))
            loss = fw.reduce_mean(fw.square(out - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    step = fw.function(step) if compiled else step
    losses = [float(step(x, y)) for _ in range(3)]
    return losses, [v.numpy() for v in [*variables, untouched]]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "fw.function"])
@pytest.mark.parametrize("optimizer", sorted(REFERENCE["loops"]))
def test_an_optimizer_projects_constrained_variables_after_each_update(optimizer, compiled):
    expected = REFERENCE["loops"][optimizer]
    losses, weights = _loop(optimizer, compiled)
    np.testing.assert_allclose(losses, expected["losses"], rtol=2e-5)
    for got, want in zip(weights, expected["weights"]):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_the_constraint_is_part_of_the_layer_config_and_the_variable():
    dense = layers.Dense(2, kernel_constraint="max_norm",
                         bias_constraint=layers.constraints.NonNeg())
    config = dense.get_config()
    assert config["kernel_constraint"] == {"class_name": "max_norm",
                                           "config": {"max_value": 2, "axis": 0}}
    clone = layers.Dense.from_config(config)
    clone.build((None, 3))
    assert isinstance(clone.kernel.constraint, layers.constraints.MaxNorm)
    assert isinstance(clone.bias.constraint, layers.constraints.NonNeg)
    assert layers.Dense(2).get_config()["kernel_constraint"] is None


def test_bad_constraints_are_one_clear_error():
    with pytest.raises(ValueError, match="constraint.*must be a callable.*'w'"):
        fw.Variable(1.0, constraint=3, name="w")
    with pytest.raises(ValueError, match="max_nrom"):
        layers.Dense(2, kernel_constraint="max_nrom")


def test_the_constraints_differentiate_at_orders_one_and_two():
    w = fw.constant(np.random.default_rng(0).uniform(0.5, 1.5, (3, 2)))
    for constraint in (keras.constraints.MaxNorm(1.0), keras.constraints.UnitNorm(),
                       keras.constraints.MinMaxNorm(0.5, 2.0, rate=0.5)):
        fw.test.check_gradients(constraint, w, order=2)
