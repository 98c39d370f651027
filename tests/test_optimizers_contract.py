"""The optimizer contract: grouped and block-wise updates only for a step declared elementwise
(a subclass's own step is updated per variable, whole), bit-identical grouped and alone for
every built-in optimizer and common argument; the common arguments' behaviour (moving averages,
accumulation, loss scaling), state round trips, configs, bad arguments, and convergence of the
newer optimizers."""
import warnings

import numpy as np
import pytest

import framework as fw
import optimizers
from optimizers import (SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, Ftrl, Lion, Nadam,
                        Optimizer, RMSprop, schedules)
from test_optimizers import (assert_identical, assert_resumes_bit_exact, host, run_steps,
                             ungrouped)  # noqa: F401 - ungrouped: a fixture


# --- a subclass's step is not assumed elementwise ---------------------------------------------
class NormalizedSGD(Optimizer):
    """A step that divides by the gradient's norm: not elementwise."""

    def __init__(self, learning_rate=0.1, **kwargs):
        super().__init__(learning_rate, **kwargs)

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        variable -= learning_rate * gradient / np.sqrt(np.sum(gradient * gradient))


class NormalizedAdam(Adam):
    """A built-in optimizer's subclass with a step of its own: not elementwise either."""

    def _update_step(self, gradient, variable, slots, learning_rate, step):
        super()._update_step(gradient / np.sqrt(np.sum(gradient * gradient)), variable, slots,
                             learning_rate, step)


def test_only_declared_steps_are_elementwise():
    for cls in (SGD, Adam, AdamW, RMSprop, Adagrad, Nadam, Adamax, Adadelta, Lion, Ftrl):
        assert cls.elementwise_update, cls
    assert not Optimizer.elementwise_update
    assert not NormalizedSGD.elementwise_update and not NormalizedAdam.elementwise_update

    class Declared(NormalizedSGD):
        elementwise_update = True

    class Renamed(SGD):  # the same step: still elementwise
        pass

    assert Declared.elementwise_update and Renamed.elementwise_update


@pytest.mark.parametrize("cls", [NormalizedSGD, NormalizedAdam])
def test_a_norm_dividing_step_is_the_same_alone_and_with_another_variable(cls):
    start = [np.array([3.0, -1.0, 2.0], np.float32), np.array([[0.5, 4.0]], np.float32)]
    grads = [np.array([1.0, 2.0, 2.0], np.float32), np.array([[8.0, -6.0]], np.float32)]
    alone = fw.Variable(host(start[0]))
    cls(0.5).apply_gradients([(host(grads[0]), alone)])
    together = [fw.Variable(host(w)) for w in start]
    cls(0.5).apply_gradients(zip([host(g) for g in grads], together))
    assert_identical([together[0].numpy()], [alone.numpy()])
    if cls is NormalizedSGD:  # w - 0.5 g / |g|, |g| = 3
        np.testing.assert_allclose(alone.numpy(), start[0] - 0.5 * grads[0] / 3, rtol=1e-6)


def test_a_big_variable_is_not_cut_in_blocks_for_a_step_that_is_not_elementwise(monkeypatch):
    monkeypatch.setattr(optimizers.layout, "BLOCK_BYTES", 1024)
    rng = np.random.default_rng(0)
    start, grad = rng.normal(size=(64, 32)), rng.normal(size=(64, 32))
    variable = fw.Variable(host(start))
    NormalizedSGD(0.5).apply_gradients([(host(grad), variable)])
    np.testing.assert_allclose(variable.numpy(), start - 0.5 * grad / np.linalg.norm(grad))


# --- every built-in optimizer and common argument, grouped and alone --------------------------
CASES = {
    "nadam": lambda: Nadam(0.01), "adamax": lambda: Adamax(0.01),
    "adadelta": lambda: Adadelta(1.0), "lion": lambda: Lion(0.001),
    "ftrl": lambda: Ftrl(0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.1,
                         l2_shrinkage_regularization_strength=0.01, beta=0.2),
    "nadam_ema_accumulation": lambda: Nadam(0.01, use_ema=True, ema_overwrite_frequency=2,
                                            gradient_accumulation_steps=2),
    "sgd_loss_scale_decay": lambda: SGD(0.1, momentum=0.9, loss_scale_factor=8.0,
                                        weight_decay=0.01),
    "adam_accumulation_schedule": lambda: Adam(schedules.CosineDecayRestarts(0.01, 2),
                                               gradient_accumulation_steps=3),
    "lion_ema_decay": lambda: Lion(0.001, use_ema=True, weight_decay=0.1),
}


@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_grouped_updates_equal_per_variable_updates_bit_for_bit(make, ungrouped):
    grouped, optimizer, variables = run_steps(make, steps=6)
    assert any(optimizer.get_slot(v, optimizer.get_slot_names()[0])._value.base is not None
               for v in variables) or not optimizer.get_slot_names()
    ungrouped()
    assert_identical(grouped, run_steps(make, steps=6)[0])


@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_updates_in_blocks_equal_whole_updates_bit_for_bit(make, ungrouped, monkeypatch):
    ungrouped()
    monkeypatch.setattr(optimizers.layout, "BLOCK_BYTES", 2 ** 40)
    whole = run_steps(make, steps=6)[0]
    monkeypatch.setattr(optimizers.layout, "BLOCK_BYTES", 1024)
    assert_identical(run_steps(make, steps=6)[0], whole)


@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_state_round_trip_then_more_steps_equals_an_uninterrupted_run(make):
    """Slots, moving averages, accumulators (one call into an accumulation here) and the call
    counter, from which Nadam's momentum schedule and the schedule follow: bit-exact."""
    assert_resumes_bit_exact(make, before=5, after=4)


# --- moving averages, accumulation, loss scaling ----------------------------------------------
def trajectory(optimizer, steps=5, shape=(3,)):
    w = fw.Variable(np.linspace(-1, 1, np.prod(shape)).reshape(shape))
    for step in range(steps):
        optimizer.minimize(lambda: fw.reduce_sum((w - 0.3 * step) ** 2), [w])
    return w, optimizer


def test_moving_averages_change_nothing_until_finalized():
    plain, _ = trajectory(Adam(0.1))
    averaged, optimizer = trajectory(Adam(0.1, use_ema=True, ema_momentum=0.5))
    assert_identical([averaged.numpy()], [plain.numpy()])
    average = optimizer.get_slot(averaged, "average").numpy()
    assert not np.array_equal(average, averaged.numpy())
    optimizer.finalize_variable_values([averaged])
    assert_identical([averaged.numpy()], [average])
    finalized_plain = fw.Variable(plain.numpy())
    Adam().finalize_variable_values([finalized_plain])  # no use_ema: nothing to write
    assert_identical([finalized_plain.numpy()], [plain.numpy()])
    with pytest.raises(ValueError, match="no moving average of variable 'stranger:0'"):
        optimizer.finalize_variable_values([averaged, fw.Variable([1.0], name="stranger")])
    assert_identical([averaged.numpy()], [average])


def test_the_first_average_is_the_weights_and_overwrites_come_every_n_updates():
    w, optimizer = trajectory(SGD(0.1, use_ema=True, ema_momentum=0.9,
                                  ema_overwrite_frequency=3), steps=1)
    assert_identical([optimizer.get_slot(w, "average").numpy()], [w.numpy()])
    for step in range(1, 6):
        optimizer.minimize(lambda: fw.reduce_sum(w ** 2), [w])
        same = np.array_equal(optimizer.get_slot(w, "average").numpy(), w.numpy())
        assert same == (step + 1 in (3, 6)), step


def test_accumulation_counts_updates_while_schedules_read_the_calls():
    seen = []

    class Recording(schedules.LearningRateSchedule):
        def __call__(self, step):
            seen.append(step)
            return 0.1

    optimizer = SGD(Recording(), gradient_accumulation_steps=2)
    w, _ = trajectory(optimizer, steps=5)
    assert seen == [0, 1, 2, 3, 4]
    assert int(optimizer.iterations) == 2 and int(optimizer._iterations) == 5
    assert optimizer.get_slot(w, "gradient_accumulator").numpy().any()  # the fifth call's


def test_loss_scaling_divides_gradients_and_minimize_scales_the_loss():
    scaled, _ = trajectory(SGD(0.1, loss_scale_factor=1024.0))
    plain, _ = trajectory(SGD(0.1))
    assert_identical([scaled.numpy()], [plain.numpy()])  # powers of two: exact
    assert SGD(loss_scale_factor=4.0).scale_loss(3.0) == 12.0 and SGD().scale_loss(3.0) == 3.0
    w = fw.Variable([1.0])
    SGD(1.0, loss_scale_factor=4.0).apply_gradients([(fw.constant([8.0]), w)])
    assert w.numpy()[0] == -1.0


# --- configs and arguments ----------------------------------------------------------------------
ALL = [SGD, Adam, AdamW, RMSprop, Adagrad, Nadam, Adamax, Adadelta, Lion, Ftrl]


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_config_round_trips_with_every_common_argument(cls):
    optimizer = cls(learning_rate=schedules.PolynomialDecay(0.1, 10), weight_decay=0.01,
                    clipnorm=1.0, use_ema=True, ema_momentum=0.9, ema_overwrite_frequency=5,
                    loss_scale_factor=2.0, gradient_accumulation_steps=4, name="mine")
    serialized = optimizers.OPTIMIZERS.serialize(optimizer)
    assert serialized["class_name"] == cls.__name__.lower()
    again = optimizers.get(serialized)
    assert type(again) is cls and again.get_config() == optimizer.get_config()
    assert again.get_slot_names()[-2:] == ["average", "gradient_accumulator"]
    with pytest.raises(ValueError, match="plain callable cannot be serialized"):
        cls(learning_rate=lambda: 0.1).get_config()


@pytest.mark.parametrize("make, message", [
    (lambda: Adam(gradient_accumulation_steps=1), "gradient_accumulation_steps must be an"),
    (lambda: Adam(use_ema=True, ema_momentum=1.5), r"ema_momentum must be in \[0, 1\]"),
    (lambda: SGD(use_ema=True, ema_overwrite_frequency=0), "ema_overwrite_frequency must be"),
    (lambda: Lion(loss_scale_factor=0), "loss_scale_factor must be a positive"),
    (lambda: Nadam(beta_1=1.0), r"Nadam: beta_1 must be in \[0, 1\)"),
    (lambda: Adamax(epsilon=-1), "Adamax: epsilon must be >= 0"),
    (lambda: Adadelta(rho=2), r"Adadelta: rho must be in \[0, 1\]"),
    (lambda: Lion(beta_1=0), r"Lion: beta_1 must be in \(0, 1\]"),
    (lambda: Ftrl(learning_rate_power=0.5), "Ftrl: learning_rate_power must be <= 0"),
    (lambda: Ftrl(l1_regularization_strength=-1), "Ftrl: l1_regularization_strength must"),
])
def test_bad_arguments_name_themselves(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# --- convergence ------------------------------------------------------------------------------
NEW = {"nadam": lambda: Nadam(0.1), "adamax": lambda: Adamax(0.1),
       "adadelta": lambda: Adadelta(10.0, rho=0.9),
       "lion": lambda: Lion(schedules.CosineDecay(0.03, 400)),  # (a constant rate circles)
       "ftrl": lambda: Ftrl(1.0)}


@pytest.mark.parametrize("make", NEW.values(), ids=NEW.keys())
def test_convergence_on_a_parabola(make):
    target = np.array([1.5, -2.0, 0.5], np.float32)
    w = fw.Variable(np.zeros(3, np.float32))
    optimizer = make()
    for _ in range(400):
        optimizer.minimize(lambda: fw.reduce_sum(fw.square(w - target)), [w])
    np.testing.assert_allclose(w.numpy(), target, atol=0.02)


# Adadelta's step grows only as its accumulated updates do: it crawls along the floor of the
# usual valley (b = 100) for tens of thousands of steps, so it gets a shallower one.
@pytest.mark.parametrize("make, steps, b", [
    (lambda: Nadam(0.02), 3000, 100), (lambda: Adamax(0.1, beta_2=0.99), 3000, 100),
    (lambda: Adadelta(1.0, rho=0.95), 4000, 10), (lambda: Lion(0.001, beta_1=0.95), 4000, 100),
    (lambda: Ftrl(0.5), 6000, 100)], ids=NEW.keys())
def test_convergence_on_rosenbrock(make, steps, b):
    xy = fw.Variable([-1.2, 1.0], dtype=fw.float64)
    optimizer = make()

    def rosenbrock():
        return (1 - xy[0]) ** 2 + b * (xy[1] - xy[0] ** 2) ** 2

    for _ in range(steps):
        optimizer.minimize(rosenbrock, [xy])
    np.testing.assert_allclose(xy.numpy(), [1.0, 1.0], atol=0.02)


def test_an_update_zeroes_every_accumulator_as_kerass_does():
    """A variable without a gradient in the updating call is not updated, and its accumulated
    gradient is dropped with the others'."""
    a, b = fw.Variable([1.0]), fw.Variable([2.0])
    optimizer = SGD(1.0, gradient_accumulation_steps=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optimizer.apply_gradients([(fw.constant([1.0]), a), (fw.constant([4.0]), b)])
        optimizer.apply_gradients([(fw.constant([3.0]), a), (None, b)])
    assert a.numpy()[0] == -1.0 and b.numpy()[0] == 2.0  # a: 1 - (1 + 3) / 2
    assert optimizer.get_slot(b, "gradient_accumulator").numpy()[0] == 0.0


def test_a_checkpoint_resumes_averages_and_accumulators_bit_exact(tmp_path):
    """Through the runner's checkpoint files: the slots it writes are ``get_slot_names()``."""
    from layers import Dense, Sequential
    from training.checkpoint import restore_checkpoint, save_checkpoint
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(6, 4)).astype(np.float32), rng.normal(size=(6, 2)).astype(np.float32)

    def fresh():
        fw.random.set_seed(0)
        model = Sequential([Dense(5, "tanh"), Dense(2)])
        model.build((None, 4))
        return model, Nadam(0.05, use_ema=True, ema_overwrite_frequency=3,
                            gradient_accumulation_steps=2)

    def steps(model, optimizer, count):
        for _ in range(count):
            optimizer.minimize(lambda: fw.reduce_mean((model(x) - y) ** 2),
                               model.trainable_variables)

    model, optimizer = fresh()
    steps(model, optimizer, 5)  # mid-accumulation
    save_checkpoint(tmp_path / "run.npz", model, {"main": optimizer})
    steps(model, optimizer, 5)
    resumed_model, resumed = fresh()
    restore_checkpoint(tmp_path / "run.npz", resumed_model, {"main": resumed})
    steps(resumed_model, resumed, 5)
    assert_identical([v.numpy() for v in resumed_model.variables + resumed.variables],
                     [v.numpy() for v in model.variables + optimizer.variables])


def test_sparse_gradients_are_unscaled_and_clipped_like_dense_ones():
    values, indices = np.array([[3.0, 4.0], [1.0, 2.0]], np.float32), np.array([0, 2])
    dense = np.zeros((4, 2), np.float32)
    dense[indices] = values
    results = []
    for grad in (fw.IndexedSlices(fw.constant(values), fw.constant(indices), [4, 2]),
                 fw.constant(dense)):
        w = fw.Variable(np.ones((4, 2), np.float32))
        SGD(0.1, loss_scale_factor=4.0, clipnorm=0.5).apply_gradients([(grad, w)])
        results.append(w.numpy())
    expected = 1 - 0.1 * 0.5 * dense / np.linalg.norm(dense)  # |g / 4| > 0.5: clipped
    for result in results:
        np.testing.assert_allclose(result, expected, rtol=1e-6)
