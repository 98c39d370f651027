"""Mixed precision (``fw.keras.mixed_precision``) against Keras 3's recorded numbers
(tests/reference/make_mixed_precision_reference.py): the ``mixed_float16`` policy computes in
float16 over float32 variables, the loss in float32, and ``LossScaleOptimizer`` scales the loss
dynamically in a hand-written tape loop (a step with overflowing gradients skipped, the scale
halved and doubled as Keras does), eagerly and under ``fw.function``."""
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw
from framework import keras

REFERENCE = json.loads(
    (Path(__file__).parent / "reference" / "mixed_precision_reference.json").read_text())
ERRORS = {"ValueError": ValueError}


@pytest.fixture
def mixed():
    keras.mixed_precision.set_global_policy("mixed_float16")
    yield
    keras.mixed_precision.set_global_policy(None)


@pytest.mark.parametrize("name", sorted(REFERENCE["lines"]))
def test_the_policy_and_optimizer_lines_give_keras_answers(name):
    case = REFERENCE["lines"][name]
    scope = {"keras": keras, "tf": fw}
    if "error" in case:
        with pytest.raises(ERRORS[case["error"]]) as raised:
            eval(case["line"], scope)  # noqa: S307 - the recorded TF2 line, renamed
        if "float8" not in case["line"]:  # (Keras's list of valid names includes bfloat16)
            assert str(raised.value) == case["message"]
        else:
            assert str(raised.value).startswith("Cannot convert 'float8'")
    else:
        got = eval(case["line"], scope)  # noqa: S307
        assert (list(got) if isinstance(got, tuple) else got) == case["result"]


def _model():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(3),
                              keras.layers.Activation("linear", dtype="float32")])
    model.set_weights([np.asarray(w, np.float32) for w in REFERENCE["weights"]])
    return model


def test_layers_compute_in_float16_over_float32_variables(mixed):
    facts = REFERENCE["loop"]["facts"]
    model = _model()
    x = np.asarray(REFERENCE["X"], np.float32)
    dense = model.layers[0]
    assert dense.compute_dtype == facts["compute_dtype"]
    assert dense.variable_dtype == facts["variable_dtype"]
    assert dense.kernel.dtype.name == facts["kernel dtype"]
    assert dense.dtype_policy.name == facts["policy"]
    assert model.layers[1](dense(x)).dtype.name == facts["hidden dtype"]
    assert model(x).dtype.name == facts["output dtype"]
    assert isinstance(dense.kernel, fw.Variable)  # (the call put the variable back)
    assert dense.get_config()["dtype"] == "mixed_float16"
    assert keras.layers.Dense(2, dtype="float32").compute_dtype == "float32"


def _loop(compiled):
    model = _model()  # (built under the test's policy)
    optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1),
                                                         dynamic_growth_steps=2)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x, y = fw.constant(REFERENCE["X"]), fw.constant(REFERENCE["Y"])

    def step(x):
        with fw.GradientTape() as tape:
            loss = loss_fn(y, model(x))
            scaled = optimizer.scale_loss(loss)
        grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, scaled, grads

    step = fw.function(step) if compiled else step
    steps = []
    for scale in REFERENCE["scales"]:
        loss, scaled, grads = step(x * scale)
        steps.append((float(loss), float(scaled), loss.dtype.name,
                      [g.dtype.name for g in grads], float(optimizer.dynamic_scale.numpy()),
                      int(optimizer.iterations)))
    return steps, [w.numpy() for w in model.trainable_variables]


@pytest.mark.filterwarnings("ignore:overflow encountered")  # (the step that overflows)
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "fw.function"])
def test_a_tape_loop_with_dynamic_loss_scaling_gives_keras_numbers(mixed, compiled):
    steps, weights = _loop(compiled)
    for got, expected in zip(steps, REFERENCE["loop"]["steps"]):
        loss, scaled, loss_dtype, grad_dtypes, scale, iterations = got
        assert loss == pytest.approx(expected["loss"], rel=2e-3)
        assert scaled == pytest.approx(expected["scaled"], rel=2e-3)
        assert loss_dtype == expected["loss dtype"] and grad_dtypes == expected["grad dtypes"]
        assert scale == expected["scale after"]
        assert iterations == expected["iterations after"]
    for got, expected in zip(weights, REFERENCE["loop"]["weights"]):
        np.testing.assert_allclose(got, expected, rtol=5e-3, atol=5e-4)


def test_the_scale_doubles_after_growth_steps_and_halves_on_a_bad_step():
    optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1),
                                                         initial_scale=4.0,
                                                         dynamic_growth_steps=2)
    v = fw.Variable([1.0, 2.0])
    history = []
    for grad in ([4.0, 4.0], [8.0, 8.0], [np.inf, 1.0], [np.nan, 0.0], [2.0, 2.0]):
        before = v.numpy()
        optimizer.apply_gradients([(fw.constant(grad), v)])
        history.append((float(optimizer.dynamic_scale.numpy()), int(optimizer.iterations),
                        np.array_equal(before, v.numpy())))
    assert history == [(4.0, 1, False), (8.0, 2, False), (4.0, 2, True), (2.0, 2, True),
                       (2.0, 3, False)]
    np.testing.assert_allclose(v.numpy(), [1.0 - 0.4, 2.0 - 0.4], rtol=1e-6)  # 4/4, 8/4, 2/2


def test_the_optimizer_config_round_trips_and_bad_arguments_are_one_line():
    optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(0.01),
                                                    initial_scale=128.0)
    again = keras.optimizers.LossScaleOptimizer.from_config(optimizer.get_config())
    assert isinstance(again.inner_optimizer, keras.optimizers.Adam)
    assert again.learning_rate == pytest.approx(0.01) and again.initial_scale == 128.0
    with pytest.raises(TypeError, match="inner_optimizer must be an optimizer"):
        keras.mixed_precision.LossScaleOptimizer("sgd")
    with pytest.raises(ValueError, match="dynamic_growth_steps"):
        keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), dynamic_growth_steps=0)
    with pytest.raises(ValueError, match="Cannot convert 'mixed_bfloat16'"):
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
    assert keras.mixed_precision.global_policy().name == "float32"
    with pytest.raises(AttributeError, match="did you mean fw.keras.mixed_precision.Policy"):
        keras.mixed_precision.Polcy


@pytest.mark.parametrize("make, x", [
    (lambda: keras.layers.BatchNormalization(), np.random.default_rng(0).random((4, 3))),
    (lambda: keras.layers.LayerNormalization(), np.random.default_rng(1).random((4, 3))),
    (lambda: keras.layers.Conv2D(2, 3), np.ones((2, 4, 4, 3))),
    (lambda: keras.layers.Embedding(5, 3), np.array([[1, 2]]))],
    ids=["BatchNormalization", "LayerNormalization", "Conv2D", "Embedding"])
def test_layers_with_weights_run_mixed_with_float32_variables_and_gradients(mixed, make, x):
    layer = make()
    with fw.GradientTape() as tape:
        y = layer(x, training=True)
        loss = fw.reduce_sum(fw.cast(y, "float32"))
    grads = tape.gradient(loss, layer.trainable_variables)
    assert y.dtype == fw.float16 and layer.compute_dtype == "float16"
    assert all(v.dtype == fw.float32 for v in layer.variables)
    assert grads and all(g is not None and fw.convert_to_tensor(g).dtype == fw.float32
                         for g in grads)
