"""Learning-rate schedules against Keras 3 (keras_optimizers_reference.json): every schedule's
value at steps 0 to 60 and far beyond, to 1e-7; configs (Keras's, and round trips through the
registry), names, bad arguments, and a plain callable as the learning rate."""
import json
import os

import numpy as np
import pytest

import framework as fw
from optimizers import SGD, Adam, schedules
from optimizers.schedules import SCHEDULES

with open(os.path.join(os.path.dirname(__file__), "reference",
                       "keras_optimizers_reference.json")) as f:
    REFERENCE = json.load(f)["schedules"]


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_values_are_kerass(case):
    reference = REFERENCE[case]
    schedule = getattr(schedules, reference["class_name"])(**reference["config"])
    for step, value in reference["values"].items():
        assert schedule(int(step)) == pytest.approx(value, abs=1e-7, rel=0), (case, step)
    assert schedule.get_config() == reference["keras_config"]


@pytest.mark.parametrize("case", sorted(REFERENCE))
def test_configs_round_trip_through_the_registry(case):
    reference = REFERENCE[case]
    schedule = getattr(schedules, reference["class_name"])(**reference["config"])
    serialized = SCHEDULES.serialize(schedule)
    again = SCHEDULES.get(json.loads(json.dumps(serialized)))
    assert type(again) is type(schedule) and again.get_config() == schedule.get_config()
    assert [again(s) for s in range(30)] == [schedule(s) for s in range(30)]


def test_names_are_kerass():
    assert {"polynomial_decay", "inverse_time_decay", "cosine_decay_restarts", "cosine_decay",
            "exponential_decay", "piecewise_constant_decay"} <= set(SCHEDULES.names())
    assert SCHEDULES.lookup("CosineDecayRestarts") is schedules.CosineDecayRestarts


@pytest.mark.parametrize("make, message", [
    (lambda: schedules.PolynomialDecay(0.1, 0), "PolynomialDecay: decay_steps must be > 0"),
    (lambda: schedules.InverseTimeDecay(0.1, -1, 0.5), "InverseTimeDecay: decay_steps must"),
    (lambda: schedules.CosineDecayRestarts(0.1, 0), "SGDRDecay: first_decay_steps must be > 0"),
    (lambda: schedules.CosineDecay(0.1, "10"), "CosineDecay: decay_steps must be > 0"),
])
def test_bad_arguments_name_themselves(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_plain_callable_is_called_before_each_step():
    rates = iter([0.5, 0.25])
    w = fw.Variable([1.0])
    optimizer = SGD(lambda: next(rates))
    optimizer.apply_gradients([(fw.constant([1.0]), w)])
    optimizer.apply_gradients([(fw.constant([1.0]), w)])
    assert w.numpy()[0] == pytest.approx(0.25)
    assert optimizer.get_state()["learning_rate"] is None


def test_an_optimizer_reads_its_schedule_at_its_call_count():
    schedule = schedules.CosineDecayRestarts(0.1, 3, t_mul=1.0)
    optimizer, w = Adam(schedule), fw.Variable([1.0])
    for step in range(7):
        assert optimizer.learning_rate == schedule(step)
        optimizer.apply_gradients([(fw.constant([1.0]), w)])
    with pytest.raises(TypeError, match="created with a learning-rate schedule"):
        optimizer.learning_rate = 0.1
    np.testing.assert_allclose(schedule(3), 0.1)  # restarted
