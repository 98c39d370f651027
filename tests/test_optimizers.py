"""Optimizers: trajectories against the update formulas (NumPy, float64) and against Keras 3
(keras_reference.json), convergence, lazy slots, clipping, weight decay, schedules, minimize,
gradient accumulation, every bad input apply_gradients rejects, and the grouped updates of
small variables against the per-variable path, bit for bit."""
import json
import os
import warnings

import numpy as np
import pytest

import framework as fw
import optimizers
from layers import Dense, Sequential
from optimizers import SGD, Adagrad, Adam, AdamW, RMSprop, schedules

STEPS = 6
with open(os.path.join(os.path.dirname(__file__), "reference", "keras_reference.json")) as f:
    REFERENCE = json.load(f)


def gradient_sequence(shape=(3, 2), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for _ in range(STEPS)]


# --- the formulas, written out independently in NumPy float64 -------------------------------
def sgd(w, grads, lr, momentum=0.0, nesterov=False):
    m = np.zeros_like(w)
    for g in grads:
        if momentum:
            m = momentum * m - lr * g
            w = w + (momentum * m - lr * g if nesterov else m)
        else:
            w = w - lr * g
    return w


def adam(w, grads, lr, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False, weight_decay=None):
    m, v, vhat = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        if weight_decay:
            w = w - w * weight_decay * lr
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vhat = np.maximum(vhat, v)
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w = w - lr_t * m / (np.sqrt(vhat if amsgrad else v) + eps)
    return w


def rmsprop(w, grads, lr, rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    v, a, mom = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        v = rho * v + (1 - rho) * g * g
        a = rho * a + (1 - rho) * g
        increment = lr * g / np.sqrt((v - a * a if centered else v) + eps)
        mom = momentum * mom + increment
        w = w - (mom if momentum else increment)
    return w


def adagrad(w, grads, lr, initial=0.1, eps=1e-7):
    acc = np.full_like(w, initial)
    for g in grads:
        acc = acc + g * g
        w = w - lr * g / np.sqrt(acc + eps)
    return w


FORMULA_CASES = [
    (lambda: SGD(0.1), lambda w, g: sgd(w, g, 0.1)),
    (lambda: SGD(0.1, momentum=0.9), lambda w, g: sgd(w, g, 0.1, 0.9)),
    (lambda: SGD(0.1, momentum=0.9, nesterov=True), lambda w, g: sgd(w, g, 0.1, 0.9, True)),
    (lambda: Adam(0.01), lambda w, g: adam(w, g, 0.01)),
    (lambda: Adam(0.01, beta_1=0.5, beta_2=0.9, epsilon=1e-3),
     lambda w, g: adam(w, g, 0.01, 0.5, 0.9, 1e-3)),
    (lambda: Adam(0.01, amsgrad=True), lambda w, g: adam(w, g, 0.01, amsgrad=True)),
    (lambda: AdamW(0.01, weight_decay=0.1), lambda w, g: adam(w, g, 0.01, weight_decay=0.1)),
    (lambda: RMSprop(0.01), lambda w, g: rmsprop(w, g, 0.01)),
    (lambda: RMSprop(0.01, momentum=0.5, centered=True),
     lambda w, g: rmsprop(w, g, 0.01, momentum=0.5, centered=True)),
    (lambda: Adagrad(0.1), lambda w, g: adagrad(w, g, 0.1)),
    (lambda: Adagrad(0.1, initial_accumulator_value=1.0, epsilon=1e-3),
     lambda w, g: adagrad(w, g, 0.1, 1.0, 1e-3)),
]


FORMULA_IDS = ["sgd", "sgd_momentum", "sgd_nesterov", "adam", "adam_custom", "adam_amsgrad",
               "adamw", "rmsprop", "rmsprop_centered_momentum", "adagrad", "adagrad_custom"]


@pytest.mark.parametrize("make, formula", FORMULA_CASES, ids=FORMULA_IDS)
def test_trajectory_follows_the_update_formula(make, formula):
    start = np.random.default_rng(1).normal(size=(3, 2))
    grads = gradient_sequence()
    variable = fw.Variable(start, dtype=fw.float64)
    optimizer = make()
    for g in grads:
        optimizer.apply_gradients([(fw.constant(g), variable)])
    np.testing.assert_allclose(variable.numpy(), formula(start, grads), rtol=1e-12, atol=1e-14)
    assert int(optimizer.iterations) == STEPS and optimizer.iterations.dtype == fw.int64


def test_changed_adam_hyperparameters_take_effect_on_the_next_step():
    variable, gradient = fw.Variable(np.zeros(3)), fw.constant(np.ones(3))
    optimizer = Adam(0.1)
    optimizer.apply_gradients([(gradient, variable)])
    np.testing.assert_allclose(optimizer.get_slot(variable, "momentum").numpy(), 0.1)
    optimizer.beta_1 = 0.5  # m += (g - m) * (1 - beta_1): 0.1 + 0.9 * 0.5
    optimizer.apply_gradients([(gradient, variable)])
    np.testing.assert_allclose(optimizer.get_slot(variable, "momentum").numpy(), 0.55)


def test_keras_defaults():
    assert (SGD().learning_rate, SGD().momentum, SGD().nesterov) == (0.01, 0.0, False)
    adam_ = Adam()
    assert (adam_.learning_rate, adam_.beta_1, adam_.beta_2, adam_.epsilon, adam_.amsgrad) == (
        0.001, 0.9, 0.999, 1e-7, False)
    assert AdamW().weight_decay == 0.004
    rms = RMSprop()
    assert (rms.learning_rate, rms.rho, rms.momentum, rms.epsilon, rms.centered) == (
        0.001, 0.9, 0.0, 1e-7, False)
    ada = Adagrad()
    assert (ada.learning_rate, ada.initial_accumulator_value, ada.epsilon) == (0.001, 0.1, 1e-7)


@pytest.mark.parametrize("case", sorted(REFERENCE["optimizers"]))
def test_ported_model_follows_the_keras_trajectory(case):
    """A Keras model's initial weights and data, trained here: the same numbers in float32."""
    reference = REFERENCE["optimizers"][case]
    rng = np.random.default_rng(0)
    weights = [rng.normal(0, 0.5, (5, 4)), rng.normal(0, 0.1, 4), rng.normal(0, 0.5, (4, 3)),
               rng.normal(0, 0.1, 3)]
    x, y = rng.normal(0, 1, (8, 5)).astype(np.float32), rng.integers(0, 3, 8)
    model = Sequential([Dense(4, activation="relu"), Dense(3)])
    model.build((None, 5))
    model.set_weights([w.astype(np.float32) for w in weights])
    config = dict(reference["config"])
    if isinstance(config["learning_rate"], dict):
        rate = config["learning_rate"]
        config["learning_rate"] = getattr(schedules, rate["class"])(**rate["config"])
    optimizer = getattr(optimizers, reference["class_name"])(**config)
    losses = []
    for _ in range(REFERENCE["problem"]["steps"]):
        with fw.GradientTape() as tape:
            loss = fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(y, model(x), True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    np.testing.assert_allclose(losses, reference["losses"], rtol=1e-6)
    for mine, keras in zip(model.get_weights(), reference["weights"]):
        np.testing.assert_allclose(mine, np.array(keras, np.float32), rtol=1e-5, atol=1e-7)


# --- convergence ------------------------------------------------------------------------------
@pytest.mark.parametrize("make, steps", [
    (lambda: SGD(0.1), 100), (lambda: SGD(0.05, momentum=0.9, nesterov=True), 150),
    (lambda: Adam(0.1), 300), (lambda: AdamW(0.1, weight_decay=1e-4), 300),
    (lambda: RMSprop(0.05), 300), (lambda: Adagrad(1.0), 300)],
    ids=["sgd", "sgd_nesterov", "adam", "adamw", "rmsprop", "adagrad"])
def test_convergence_on_a_parabola(make, steps):
    target = np.array([1.5, -2.0, 0.5], np.float32)
    w = fw.Variable(np.zeros(3, np.float32))
    optimizer = make()
    for _ in range(steps):
        optimizer.minimize(lambda: fw.reduce_sum(fw.square(w - target)), [w])
    np.testing.assert_allclose(w.numpy(), target, atol=0.02)


@pytest.mark.parametrize("make", [lambda: Adam(0.02), lambda: SGD(0.001, momentum=0.9)],
                         ids=["adam", "sgd_momentum"])
def test_convergence_on_rosenbrock(make):
    xy = fw.Variable([-1.2, 1.0], dtype=fw.float64)
    optimizer = make()

    def rosenbrock():
        return (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2

    for _ in range(3000):
        optimizer.minimize(rosenbrock, [xy])
    np.testing.assert_allclose(xy.numpy(), [1.0, 1.0], atol=0.02)


# --- slots, in-place updates, several optimizers ----------------------------------------------
def test_slots_are_created_lazily_for_whatever_variables_arrive():
    a, b = fw.Variable([1.0, 2.0]), fw.Variable([[3.0]])
    optimizer = Adam(0.1)
    optimizer.apply_gradients([(fw.constant([1.0, 1.0]), a)])
    assert optimizer.get_slot(a, "momentum").shape == (2,)
    with pytest.raises(ValueError, match="no slots for variable"):
        optimizer.get_slot(b, "momentum")
    optimizer.apply_gradients([(fw.constant([[1.0]]), b)])  # a new variable, any time
    optimizer.apply_gradients([(fw.constant([1.0, 1.0]), a), (fw.constant([[1.0]]), b)])
    assert optimizer.get_slot_names() == ["momentum", "velocity"]
    assert np.allclose(optimizer.get_slot(b, "momentum").numpy(), [[0.19]])
    assert len(optimizer.variables) == 1 + 2 * 2


def test_updates_are_in_place_and_bump_the_variable_version():
    w = fw.Variable(np.ones((4, 3), np.float32))
    array, version = w._value, w._version
    optimizer = RMSprop(0.1, momentum=0.5, centered=True)
    for _ in range(3):
        optimizer.apply_gradients([(fw.ones((4, 3)), w)])
    assert w._value is array and w._version == version + 3
    with fw.GradientTape() as tape:
        loss = fw.reduce_sum(w * w)
    read = w.numpy()
    optimizer.apply_gradients([(fw.ones((4, 3)), w)])
    assert w._value is array  # (the tape kept a copy of what it read: TensorFlow's gradient)
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), 2 * read)


def test_two_optimizers_on_disjoint_variables_keep_separate_state():
    """Each optimizer moves its own variable exactly as it would alone."""
    a, b = fw.Variable([1.0]), fw.Variable([1.0])
    first, second = Adam(0.1), SGD(0.5, momentum=0.9)
    for _ in range(3):
        with fw.GradientTape(persistent=True) as tape:
            loss = fw.reduce_sum(a * a + b * b)
        first.apply_gradients(zip(tape.gradient(loss, [a]), [a]))
        second.apply_gradients(zip(tape.gradient(loss, [b]), [b]))
    for variable, optimizer in ((a, Adam(0.1)), (b, SGD(0.5, momentum=0.9))):
        alone = fw.Variable([1.0])
        for _ in range(3):
            optimizer.minimize(lambda alone=alone: fw.reduce_sum(alone * alone), [alone])
        assert np.array_equal(variable.numpy(), alone.numpy())
    assert int(first.iterations) == int(second.iterations) == 3
    assert first.get_slot(a, "momentum") is not None and second.get_slot(b, "momentum") is not None
    with pytest.raises(ValueError, match="no slots for variable"):
        first.get_slot(b, "momentum")


# --- clipping, weight decay, schedules, minimize ----------------------------------------------
def f64(values):
    """A float64 gradient on the current backend (a NumPy array would be host memory)."""
    return fw.constant(values, fw.float64)


def test_clipnorm_clipvalue_and_global_clipnorm():
    g = f64([3.0, 4.0])
    w = fw.Variable([0.0, 0.0], dtype=fw.float64)
    SGD(1.0, clipnorm=1.0).apply_gradients([(g, w)])
    assert np.allclose(w.numpy(), [-0.6, -0.8])
    w.assign([0.0, 0.0])
    SGD(1.0, clipvalue=3.5).apply_gradients([(g, w)])
    assert np.allclose(w.numpy(), [-3.0, -3.5])
    u, v = fw.Variable([0.0], dtype=fw.float64), fw.Variable([0.0], dtype=fw.float64)
    optimizer = SGD(1.0, global_clipnorm=2.5)
    optimizer.apply_gradients([(f64([3.0]), u), (f64([4.0]), v)])
    assert optimizer.global_norm == pytest.approx(5.0)
    assert np.allclose([u.numpy(), v.numpy()], [[-1.5], [-2.0]])
    optimizer.apply_gradients([(f64([0.3]), u), (f64([0.4]), v)])
    assert optimizer.global_norm == pytest.approx(0.5)
    assert np.allclose([u.numpy(), v.numpy()], [[-1.8], [-2.4]])


def test_weight_decay_and_its_exclusions():
    kernel = fw.Variable([2.0], dtype=fw.float64, name="dense/kernel")
    bias = fw.Variable([2.0], dtype=fw.float64, name="dense/bias")
    optimizer = SGD(0.1, weight_decay=0.5)
    optimizer.exclude_from_weight_decay(var_names=["bias"])
    optimizer.apply_gradients([(f64([0.0]), kernel), (f64([0.0]), bias)])
    assert kernel.numpy()[0] == pytest.approx(2.0 - 2.0 * 0.5 * 0.1) and bias.numpy()[0] == 2.0
    optimizer.exclude_from_weight_decay(var_list=[kernel])
    optimizer.apply_gradients([(f64([0.0]), kernel), (f64([0.0]), bias)])
    assert kernel.numpy()[0] == pytest.approx(1.9) and bias.numpy()[0] == pytest.approx(1.9)


@pytest.mark.parametrize("key", sorted(REFERENCE["schedules"]["configs"]))
def test_schedules_give_kerass_values(key):
    config = REFERENCE["schedules"]["configs"][key]
    schedule = getattr(schedules, config["class_name"])(**config["config"])
    for step, expected in zip(REFERENCE["schedules"]["steps"], REFERENCE["schedules"][key]):
        assert schedule(step) == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_current_learning_rate_is_readable_at_every_step_and_settable():
    schedule = schedules.PiecewiseConstantDecay([1, 2], [1.0, 0.5, 0.25])
    optimizer = SGD(schedule)
    w = fw.Variable([0.0], dtype=fw.float64)
    seen = []
    for _ in range(4):
        seen.append(optimizer.learning_rate)
        optimizer.apply_gradients([(f64([1.0]), w)])
    assert seen == [1.0, 1.0, 0.5, 0.25] and w.numpy()[0] == pytest.approx(-2.75)
    with pytest.raises(TypeError, match="learning-rate schedule"):
        optimizer.learning_rate = 0.1
    plain = Adam(0.1)
    plain.learning_rate = 0.2
    assert plain.learning_rate == 0.2
    assert SGD(lambda: 0.3).learning_rate == 0.3


def test_minimize_with_a_callable_or_a_recorded_tensor():
    w = fw.Variable([3.0], trainable=False)  # watched explicitly, as tf.keras does
    SGD(0.25).minimize(lambda: fw.reduce_sum(w * w), var_list=lambda: [w])
    assert w.numpy()[0] == pytest.approx(1.5)
    v = fw.Variable([3.0])
    with fw.GradientTape() as tape:
        loss = fw.reduce_sum(v * v)
    SGD(0.25).minimize(loss, [v], tape=tape)
    assert v.numpy()[0] == pytest.approx(1.5)
    with pytest.raises(ValueError, match="needs the tape"):
        SGD().minimize(loss, [v])


def test_optimizers_by_name():
    assert isinstance(optimizers.get("Adam", learning_rate=0.1), Adam)
    instance = SGD()
    assert optimizers.get(instance) is instance
    with pytest.raises(ValueError, match="unknown optimizer 'adamx'; did you mean 'adamax'"):
        optimizers.get("adamx")


# --- gradient accumulation --------------------------------------------------------------------
def test_accumulated_micro_batches_equal_one_step_on_the_combined_batch():
    """``gradient_accumulation_steps=3``: three micro-batches' calls make one update with the
    mean gradient, which is the combined batch's (the loss is a mean over equal parts)."""
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(12, 4)).astype(np.float32), rng.integers(0, 3, 12)

    def model_and_optimizer(**kwargs):
        model = Sequential([Dense(5, "tanh"), Dense(3)])
        model.build((None, 4))
        model.set_weights([np.full(v.shape, 0.1 * (i + 1), np.float32) + rng_weights[i]
                           for i, v in enumerate(model.variables)])
        return model, Adam(0.05, **kwargs)

    rng_weights = [rng.normal(0, 0.3, s).astype(np.float32) for s in [(4, 5), (5,), (5, 3), (3,)]]

    def grads(model, xs, ys):
        with fw.GradientTape() as tape:
            loss = fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(ys, model(xs), True))
        return tape.gradient(loss, model.trainable_variables)

    whole, whole_opt = model_and_optimizer()
    micro, micro_opt = model_and_optimizer(gradient_accumulation_steps=3)
    for _ in range(2):
        whole_opt.apply_gradients(zip(grads(whole, x, y), whole.trainable_variables))
        for part in range(3):
            before = micro.get_weights()
            xs, ys = x[part * 4:(part + 1) * 4], y[part * 4:(part + 1) * 4]
            micro_opt.apply_gradients(zip(grads(micro, xs, ys), micro.trainable_variables))
            if part < 2:  # accumulated only
                assert all(np.array_equal(a, b) for a, b in zip(before, micro.get_weights()))
    for a, b in zip(whole.get_weights(), micro.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert int(micro_opt.iterations) == 2 and int(micro_opt._iterations) == 6
    kernel = micro.trainable_variables[0]
    assert not micro_opt.get_slot(kernel, "gradient_accumulator").numpy().any()


# --- bad inputs -------------------------------------------------------------------------------
def test_none_gradients_are_skipped_with_one_warning_naming_the_variables():
    used, unused = fw.Variable([1.0], name="used"), fw.Variable([1.0], name="head/unused")
    also = fw.Variable([1.0], name="head/also_unused")
    optimizer = Adam(0.1)
    with pytest.warns(UserWarning) as caught:
        optimizer.apply_gradients(zip([fw.constant([1.0]), None, None], [used, unused, also]))
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "'head/unused'" in message and "'head/also_unused'" in message
    assert "the loss does not depend on them" in message
    assert unused.numpy()[0] == 1.0 and used.numpy()[0] != 1.0 and unused not in optimizer._slots


def test_all_none_gradients_raise():
    w = fw.Variable([1.0], name="lonely")
    with pytest.raises(ValueError, match=r"No gradients provided for any variable: \['lonely'\]"):
        Adam().apply_gradients([(None, w)])


@pytest.mark.parametrize("bad_pair, message", [
    (lambda: (fw.zeros((3,)), fw.Variable(np.zeros(2, np.float32), name="v")),
     r"variable 'v' has shape \(3,\), the variable \(2,\)"),
    (lambda: (fw.zeros((2,), dtype=fw.float64), fw.Variable(np.zeros(2, np.float32), name="v")),
     "variable 'v' has dtype float64, the variable float32"),
    (lambda: (fw.zeros((2,), dtype=fw.int32), fw.Variable(np.zeros(2, np.int32), name="v")),
     "variable 'v' has dtype int32; only floating"),
])
def test_a_mismatch_is_a_value_error_naming_the_variable_and_nothing_changes(bad_pair, message):
    good = fw.Variable(np.ones(2, np.float32), name="good")
    optimizer = Adam(0.1)
    optimizer.apply_gradients([(fw.ones(2), good)])
    before, slots = good.numpy(), optimizer.get_slot(good, "momentum").numpy()
    grad, variable = bad_pair()
    variable_before = variable.numpy()
    with pytest.raises(ValueError, match=message):
        optimizer.apply_gradients(iter([(fw.ones(2), good), (grad, variable)]))
    assert np.array_equal(good.numpy(), before) and int(optimizer.iterations) == 1
    assert np.array_equal(optimizer.get_slot(good, "momentum").numpy(), slots)
    assert np.array_equal(variable.numpy(), variable_before)


def test_a_one_shot_zip_is_read_once():
    variables = [fw.Variable([1.0]), fw.Variable([2.0])]
    pairs = zip([fw.constant([1.0]), fw.constant([1.0])], variables)
    SGD(0.5).apply_gradients(pairs)
    assert [v.numpy()[0] for v in variables] == [0.5, 1.5]
    assert list(pairs) == []


@pytest.mark.parametrize("pairs, error, message", [
    (lambda w: [], ValueError, r"got no \(gradient, variable\) pairs"),
    (lambda w: [(fw.ones(1), w), (fw.ones(1), w)], ValueError, "appears twice"),
    (lambda w: [(w, fw.ones(1))], TypeError, r"zip\(grads, variables\)"),
    (lambda w: [(fw.ones(1), np.ones(1))], TypeError, "not a fw.Variable"),
    (lambda w: [fw.ones(1)], TypeError, r"takes \(gradient, variable\) pairs"),
    (lambda w: [([1.0], w)], TypeError, "expected a tensor or an array"),
])
def test_malformed_pairs(pairs, error, message):
    w = fw.Variable([1.0], name="w")
    with pytest.raises(error, match=message):
        SGD().apply_gradients(pairs(w))
    assert w.numpy()[0] == 1.0


@pytest.mark.parametrize("make, message", [
    (lambda: SGD(clipnorm=1.0, clipvalue=1.0), "only one of clipnorm, clipvalue"),
    (lambda: SGD(clipnorm=0.0), "clipnorm must be a positive number"),
    (lambda: SGD(global_clipnorm=-1), "global_clipnorm must be a positive number"),
    (lambda: SGD(learning_rate=-0.1), "learning_rate must be a non-negative number"),
    (lambda: SGD(learning_rate="fast"), "learning_rate must be a non-negative number"),
    (lambda: SGD(momentum=1.5), r"momentum must be a number in \[0, 1\]"),
    (lambda: Adam(beta_1=1.0), r"beta_1 must be in \[0, 1\)"),
    (lambda: Adam(epsilon=-1.0), "epsilon must be >= 0"),
    (lambda: AdamW(weight_decay=None), "weight_decay must be a number"),
    (lambda: SGD(weight_decay=-0.1), "weight_decay must be a non-negative number"),
    (lambda: RMSprop(rho=2.0), r"rho must be in \[0, 1\]"),
    (lambda: Adagrad(initial_accumulator_value=-1.0), "initial_accumulator_value must be"),
    (lambda: schedules.ExponentialDecay(0.1, 0, 0.5), "decay_steps must be > 0"),
    (lambda: schedules.CosineDecay(0.1, -5), "decay_steps must be > 0"),
    (lambda: schedules.PiecewiseConstantDecay([1, 2], [1.0]), "one entry fewer than values"),
    (lambda: schedules.PiecewiseConstantDecay([3, 2], [1.0, 0.5, 0.1]), "must increase"),
])
def test_bad_optimizer_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_unknown_slot_name():
    w = fw.Variable([1.0])
    optimizer = SGD(0.1, momentum=0.9)
    optimizer.apply_gradients([(fw.ones(1), w)])
    with pytest.raises(ValueError, match="has no slot 'velocity'"):
        optimizer.get_slot(w, "velocity")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SGD(0.1).apply_gradients([(fw.ones(1), w)])


# --- grouped ("multi-tensor") updates ---------------------------------------------------------
def host(array):
    """A tensor in host memory whatever the backend: small host variables are grouped."""
    return fw.to_device(fw.constant(array), "cpu")


def grouped_shapes():
    """Variables of mixed dtypes and sizes, and the groups they make (lists of indices):
    float32 ones in two groups, too many bytes for one, float64 ones (a scalar too) in a third,
    and two just over the size limit left alone."""
    largest = optimizers.layout.GROUPED_VARIABLE_BYTES // 4  # float32 elements
    fit = optimizers.layout.GROUP_BYTES // optimizers.layout.GROUPED_VARIABLE_BYTES
    mlp = [(64, 100), (100,), (100, 10), (10,)]  # less than one largest
    float32 = mlp + [(largest,)] * (fit + 1) + [(largest + 1,)]
    float64 = [(30, 20), (20,), (largest // 2,), (largest // 2 + 1,), ()]
    first, second, alone = len(mlp) + fit - 1, len(mlp) + fit + 1, len(float32)
    groups = [list(range(first)), list(range(first, second)),
              [alone, alone + 1, alone + 2, alone + 4]]
    shapes = [(s, np.float32) for s in float32] + [(s, np.float64) for s in float64]
    return shapes, groups, [second, alone + 3]


# Before any test turns the grouping off.
GROUPED_SHAPES, EXPECTED_GROUPS, EXPECTED_ALONE = grouped_shapes()


def new_variables(seed=0):
    rng = np.random.default_rng(seed)
    return [fw.Variable(host(rng.normal(size=shape).astype(dtype)), name=f"layer{i}/{kind}")
            for i, (shape, dtype) in enumerate(GROUPED_SHAPES)
            for kind in ["bias" if len(shape) == 1 else "kernel"]]


def random_grads(variables, seed):
    rng = np.random.default_rng(seed)
    return [host(rng.normal(size=v.shape).astype(v.dtype)) for v in variables]


def state_of(variables, optimizer):
    """Every variable and slot value, and the step count, as host arrays."""
    return ([v.numpy() for v in variables] + [s.numpy() for s in optimizer.variables[1:]]
            + [optimizer.iterations.numpy()])


def assert_identical(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and np.array_equal(a, e), "not bit-identical"


@pytest.fixture
def ungrouped(monkeypatch):
    """Run what follows on the per-variable path only (nothing small enough to group)."""
    def switch():
        monkeypatch.setattr(optimizers.layout, "GROUPED_VARIABLE_BYTES", 0)
    return switch


def adamw_sparing_biases():
    optimizer = AdamW(0.01, weight_decay=0.1)
    optimizer.exclude_from_weight_decay(var_names=["bias"])
    return optimizer


GROUPED_CASES = {
    "adam": lambda: Adam(0.01), "amsgrad": lambda: Adam(0.01, amsgrad=True),
    "adamw": lambda: AdamW(0.01, weight_decay=0.1), "adamw_excluding": adamw_sparing_biases,
    "adam_global_clipnorm": lambda: Adam(0.01, global_clipnorm=1.0),
    "sgd": lambda: SGD(0.1), "sgd_momentum": lambda: SGD(0.1, momentum=0.9),
    "sgd_nesterov": lambda: SGD(0.1, momentum=0.9, nesterov=True),
    "rmsprop": lambda: RMSprop(0.01),
    "rmsprop_centered": lambda: RMSprop(0.01, momentum=0.5, centered=True),
    "adagrad": lambda: Adagrad(0.1),
    "adam_schedule": lambda: Adam(schedules.ExponentialDecay(0.01, 2, 0.5)),
}


def run_steps(make, steps=4, calls=None):
    """``steps`` steps of ``make()`` on fresh variables; ``calls(step, variables)`` picks the
    variables (and None gradients) of each step. Returns the final state and the optimizer."""
    variables, optimizer = new_variables(), make()
    for step in range(steps):
        chosen = calls(step, variables) if calls else variables
        grads = random_grads(variables, seed=step)
        pairs = [(None if v is None else g, v if v is not None else u)
                 for g, v, u in zip(grads, chosen, variables)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the None gradients of a subset
            optimizer.apply_gradients(pairs)
    return state_of(variables, optimizer), optimizer, variables


@pytest.mark.parametrize("make", GROUPED_CASES.values(), ids=GROUPED_CASES.keys())
def test_grouped_updates_equal_per_variable_updates_bit_for_bit(make, ungrouped):
    grouped, optimizer, variables = run_steps(make)
    ungrouped()
    assert_identical(grouped, run_steps(make)[0])
    # each group's variables, and each of its slots, are views of one flat buffer
    assert_grouped_views([v._value.base for v in variables])
    for name in optimizer.get_slot_names():
        assert_grouped_views([optimizer.get_slot(v, name)._value.base for v in variables])
        assert all(optimizer.get_slot(v, name).shape == v.shape for v in variables)


@pytest.mark.parametrize("make", GROUPED_CASES.values(), ids=GROUPED_CASES.keys())
def test_updates_in_blocks_equal_whole_updates_bit_for_bit(make, ungrouped, monkeypatch):
    """A big variable's update runs a block at a time (in the cache); elementwise, it gives
    each element what the whole-array update gives it. Blocks of 1 KB here, so that these
    small variables (and the last, shorter block of each) take that path."""
    ungrouped()
    monkeypatch.setattr(optimizers.layout, "BLOCK_BYTES", 2 ** 40)
    whole = run_steps(make)[0]
    monkeypatch.setattr(optimizers.layout, "BLOCK_BYTES", 1024)
    cls, calls = type(make()), []
    update = cls._update_step
    monkeypatch.setattr(cls, "_update_step", lambda self, g, *rest: (
        calls.append(g.shape) or update(self, g, *rest)))
    assert_identical(run_steps(make)[0], whole)
    assert (256,) in calls and (128,) in calls and len(calls) > 4 * len(GROUPED_SHAPES)


def test_a_gradient_that_is_not_contiguous_gives_the_same_update(monkeypatch):
    monkeypatch.setattr(optimizers.layout, "BLOCK_BYTES", 1024)
    rng = np.random.default_rng(0)
    start, grad = rng.normal(size=(40, 30)), np.asfortranarray(rng.normal(size=(40, 30)))
    blocked, whole = fw.Variable(host(start)), fw.Variable(host(start))
    Adam(0.1).apply_gradients([(grad, blocked)])  # a raw array, as a array VJP may return
    monkeypatch.setattr(optimizers.layout, "BLOCK_BYTES", 2 ** 40)
    Adam(0.1).apply_gradients([(np.ascontiguousarray(grad), whole)])
    assert_identical([blocked.numpy()], [whole.numpy()])


def assert_grouped_views(buffers):
    firsts = [buffers[group[0]] for group in EXPECTED_GROUPS]
    assert all(b is not None for b in firsts) and len(set(map(id, firsts))) == 3
    for group, buffer in zip(EXPECTED_GROUPS, firsts):
        assert all(buffers[i] is buffer for i in group)
    assert all(buffers[i] is None for i in EXPECTED_ALONE)


def test_an_assign_to_a_grouped_variable_reaches_its_next_update(ungrouped):
    """The group's buffer is the variables' storage: set_weights, a restore or an assign
    between steps writes into it, and the next update starts from the assigned value."""
    runs = []
    for grouping in (True, False):
        if not grouping:
            ungrouped()
        variables, optimizer = new_variables(), Adam(0.01)
        for step in range(4):
            optimizer.apply_gradients(zip(random_grads(variables, step), variables))
            if step == 1:
                variables[2].assign(host(np.full(variables[2].shape, 0.25, variables[2].dtype)))
        runs.append(state_of(variables, optimizer))
    assert_identical(*runs)


def test_optimizers_taking_turns_on_the_same_variables_stay_exact(ungrouped):
    """Each optimizer's plan takes the variables into its own group when it runs; turns
    re-copy them, and every update still sees the values the other one left."""
    def turns():
        variables = new_variables()
        first, second = Adam(0.01), SGD(0.1, momentum=0.9)
        for step in range(6):
            optimizer = first if step % 2 else second
            optimizer.apply_gradients(zip(random_grads(variables, step), variables))
        return state_of(variables, first) + state_of(variables, second)[len(variables):]
    grouped = turns()
    ungrouped()
    assert_identical(grouped, turns())


def test_another_set_of_variables_regroups_and_the_slots_carry_on(ungrouped):
    """Subsets (a None gradient, per-layer calls, one variable) and the whole set again, in
    turns: every call sees the slots the previous ones left."""
    def calls(step, variables):
        return [variables,
                [None if i == 1 else v for i, v in enumerate(variables)],  # a None gradient
                [v if i < 4 else None for i, v in enumerate(variables)],  # one layer
                [v if i >= 4 else None for i, v in enumerate(variables)],  # the others
                [v if i == 0 else None for i, v in enumerate(variables)],  # one variable
                variables][step % 6]
    grouped, optimizer, _ = run_steps(lambda: Adam(0.01, amsgrad=True), 9, calls)
    assert len(optimizer._plans) == 1  # the plans a regrouping superseded are dropped
    ungrouped()
    assert_identical(grouped, run_steps(lambda: Adam(0.01, amsgrad=True), 9, calls)[0])


def test_grouped_slots_read_and_write_through_get_slot(ungrouped):
    runs = []
    for grouping in (True, False):
        if not grouping:
            ungrouped()
        variables, optimizer = new_variables(), RMSprop(0.01, momentum=0.5, centered=True)
        seen = []
        for step in range(4):
            optimizer.apply_gradients(zip(random_grads(variables, step), variables))
            seen.append([optimizer.get_slot(v, name).numpy() for v in variables
                         for name in optimizer.get_slot_names()])
            if step == 1:  # a write through a slot variable reaches the next grouped update
                optimizer.get_slot(variables[2], "momentum").assign(
                    np.full(variables[2].shape, 0.5, np.float32))
        runs.append([array for arrays in seen for array in arrays]
                    + state_of(variables, optimizer))
    assert_identical(*runs)


@pytest.mark.parametrize("into", ["a fresh optimizer", "the same optimizer"])
def test_state_round_trip_then_more_steps_equals_an_uninterrupted_run(into):
    assert_resumes_bit_exact(lambda: Adam(0.01, amsgrad=True), into)


def assert_resumes_bit_exact(make, into="a fresh optimizer", before=3, after=3):
    """``before`` steps, ``get_state``, ``after`` more; then the weights and that state loaded
    ``into`` an optimizer, and the same ``after`` steps: the same bits."""
    variables, optimizer = new_variables(), make()
    for step in range(before):
        optimizer.apply_gradients(zip(random_grads(variables, step), variables))
    weights, state = [v.numpy() for v in variables], optimizer.get_state()
    for step in range(before, before + after):
        optimizer.apply_gradients(zip(random_grads(variables, step), variables))
    uninterrupted = state_of(variables, optimizer)
    if into == "the same optimizer":  # its slots are grouped already: set_state writes into them
        resumed, restored = optimizer, variables
    else:
        resumed, restored = make(), new_variables(seed=1)
        state["slots"] = {new: state["slots"][old] for old, new in zip(variables, restored)}
    for variable, value in zip(restored, weights):
        variable.assign(host(value))
    resumed.set_state(state)
    for step in range(before, before + after):
        resumed.apply_gradients(zip(random_grads(restored, step), restored))
    assert_identical(state_of(restored, resumed), uninterrupted)


def test_a_failing_step_leaves_grouped_variables_and_slots_as_they_were(ungrouped):
    def attempt():
        variables, optimizer = new_variables(), AdamW(0.01)
        for step in range(2):
            optimizer.apply_gradients(zip(random_grads(variables, step), variables))
        before = state_of(variables, optimizer)
        for pairs in (list(zip(random_grads(variables, 2), variables)),
                      list(zip(random_grads(variables, 2), variables))[1:]):  # another set
            pairs[-1] = (host(np.zeros(3, pairs[-1][1].dtype)), pairs[-1][1])  # bad shape
            with pytest.raises(ValueError, match=r"has shape \(3,\), the variable"):
                optimizer.apply_gradients(pairs)
            assert_identical(state_of(variables, optimizer), before)
        optimizer.apply_gradients(zip(random_grads(variables, 3), variables))
        return state_of(variables, optimizer)
    grouped = attempt()
    ungrouped()
    assert_identical(grouped, attempt())


@pytest.mark.parametrize("moved", ["one variable", "every variable"])
def test_grouped_variables_moved_to_the_device_and_back(device_backend, moved):
    """A move regroups: the moved variables leave their group, and their slots follow them."""
    runs = []
    for move in (False, True):
        variables, optimizer = new_variables(), Adam(0.01)
        travellers = variables[:1] if moved == "one variable" else variables
        for step in range(6):
            if move and step in (2, 4):
                for variable in travellers:
                    variable.to_device("gpu" if step == 2 else "cpu")
            grads = [fw.to_device(g, v.device)
                     for g, v in zip(random_grads(variables, step), variables)]
            optimizer.apply_gradients(zip(grads, variables))
            if move and step == 2:
                assert all(optimizer.get_slot(v, name).device == "gpu" for v in travellers
                           for name in ("momentum", "velocity"))
        assert all(v.device == "cpu" for v in variables)
        assert optimizer.get_slot(variables[0], "momentum")._value.base is not None  # regrouped
        runs.append(state_of(variables, optimizer))
    for expected, actual in zip(*runs, strict=True):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def test_errors_name_a_layer_variable_by_its_path():
    layer = Dense(2, name="head")
    layer(np.ones((1, 3), np.float32))
    with pytest.raises(ValueError, match=r"variable 'head/kernel' has shape \(4, 2\)"):
        Adam().apply_gradients([(fw.ones((4, 2)), layer.kernel)])
    with pytest.warns(UserWarning, match=r"\['head/bias'\]"):
        SGD().apply_gradients([(fw.ones((3, 2)), layer.kernel), (None, layer.bias)])
