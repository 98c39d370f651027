"""fw.losses: Keras's numbers (from keras_reference.json), stable logits paths and their
gradients, Keras's reductions, and the bad inputs the losses reject."""
import json
import os

import numpy as np
import pytest

import framework as fw

L = fw.losses
with open(os.path.join(os.path.dirname(__file__), "reference", "keras_reference.json")) as f:
    REFERENCE = json.load(f)["losses"]
INPUTS = {key: np.array(value, np.float32) for key, value in REFERENCE["inputs"].items()}
LABELS = np.array(REFERENCE["inputs"]["labels"])
ONE_HOT = np.eye(3, dtype=np.float32)[LABELS]
TARGETS, LOGITS, BINARY_LOGITS = INPUTS["binary_targets"], INPUTS["logits"], INPUTS["binary_logits"]

CASES = {
    "sparse_probs": lambda: L.sparse_categorical_crossentropy(LABELS, INPUTS["probs"]),
    "sparse_logits": lambda: L.sparse_categorical_crossentropy(LABELS, LOGITS, from_logits=True),
    "categorical_probs": lambda: L.categorical_crossentropy(ONE_HOT, INPUTS["probs"]),
    "categorical_logits": lambda: L.categorical_crossentropy(ONE_HOT, LOGITS, from_logits=True),
    "categorical_smoothing": lambda: L.categorical_crossentropy(ONE_HOT, LOGITS, True, 0.2),
    "binary_probs": lambda: L.binary_crossentropy(TARGETS, fw.nn.sigmoid(BINARY_LOGITS)),
    "binary_logits": lambda: L.binary_crossentropy(TARGETS, BINARY_LOGITS, from_logits=True),
    "binary_smoothing": lambda: L.binary_crossentropy(TARGETS, BINARY_LOGITS, True, 0.1),
    "mse": lambda: L.mean_squared_error(TARGETS, INPUTS["regression"]),
    "class_sparse_mean": lambda: L.SparseCategoricalCrossentropy(from_logits=True)(LABELS,
                                                                                   LOGITS),
    "class_binary_weighted": lambda: L.BinaryCrossentropy(from_logits=True)(
        TARGETS, BINARY_LOGITS, sample_weight=np.array([1.0, 0.5, 2.0, 0.0])),
    "class_mse_sum": lambda: L.MeanSquaredError(reduction="sum")(TARGETS, INPUTS["regression"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_losses_give_kerass_numbers(case):
    """The inputs include logits of +-1000 and +-80 and probabilities that round to 0 and 1."""
    value = CASES[case]()
    assert value.dtype == fw.float32
    np.testing.assert_allclose(value.numpy(), REFERENCE[case], rtol=1e-6, atol=1e-6)


def test_binary_logits_gradient_matches_keras_and_is_exact_at_zero():
    logits = fw.Variable(BINARY_LOGITS)
    with fw.GradientTape() as tape:
        total = fw.reduce_sum(L.binary_crossentropy(TARGETS, logits, from_logits=True))
    np.testing.assert_allclose(tape.gradient(total, logits).numpy(),
                               REFERENCE["binary_logits_grad"], atol=1e-7)
    zero = fw.Variable([[0.0]])
    with fw.GradientTape() as tape:
        loss = L.binary_crossentropy([[1.0]], zero, from_logits=True)
    assert np.isclose(tape.gradient(loss, zero).numpy()[0, 0], 0.5 - 1.0)


@pytest.mark.parametrize("loss", [
    lambda logits: L.sparse_categorical_crossentropy([0, 2], logits, from_logits=True),
    lambda logits: L.categorical_crossentropy([[0.2, 0.8, 0.0], [0, 0, 1]], logits, True, 0.1),
    lambda logits: L.binary_crossentropy([[1.0, 0.0, 0.3], [0, 1, 1]], logits, from_logits=True),
    lambda p: L.sparse_categorical_crossentropy([0, 2], fw.nn.softmax(p)),
    lambda p: L.categorical_crossentropy([[0.2, 0.8, 0.0], [0, 0, 1]], fw.nn.softmax(p)),
    lambda p: L.binary_crossentropy([[1.0, 0.0, 0.3], [0, 1, 1]], fw.nn.sigmoid(p)),
    lambda y: L.mean_squared_error([[1.0, 0.0, 2.0], [0, 1, 1]], y),
], ids=["sparse_logits", "categorical_logits", "binary_logits", "sparse_probs",
        "categorical_probs", "binary_probs", "mse"])
def test_loss_gradients_match_finite_differences(loss):
    logits = np.array([[0.3, -1.2, 2.0], [1.5, 0.2, -0.7]])
    fw.test.check_gradients(loss, logits, order=2)


def test_logits_paths_are_finite_and_exact_at_extreme_logits():
    logits = fw.Variable([[1000.0, -1000.0, 0.0]])
    with fw.GradientTape() as tape:
        loss = L.sparse_categorical_crossentropy([1], logits, from_logits=True)
    assert loss.numpy()[0] == pytest.approx(2000.0)
    assert np.allclose(tape.gradient(loss, logits).numpy(), [[1.0, -1.0, 0.0]])
    binary = L.binary_crossentropy([[0.0, 1.0]], [[500.0, -500.0]], from_logits=True)
    assert binary.numpy()[0] == pytest.approx(500.0)


def test_probability_paths_clip_like_keras():
    """A probability of exactly 0 costs -log(1e-7), not infinity."""
    loss = L.sparse_categorical_crossentropy([1], [[1.0, 0.0]]).numpy()[0]
    assert loss == pytest.approx(-np.log(1e-7), rel=1e-3)
    assert L.binary_crossentropy([[1.0]], [[0.0]]).numpy()[0] == pytest.approx(16.118, rel=1e-3)


def test_label_shapes_and_dtypes_keras_accepts():
    logits = LOGITS
    expected = L.sparse_categorical_crossentropy(LABELS, logits, from_logits=True).numpy()
    trailing = L.sparse_categorical_crossentropy(LABELS[:, None], logits, from_logits=True)
    floats = L.sparse_categorical_crossentropy(LABELS.astype(np.float32), logits, True)
    assert np.array_equal(trailing.numpy(), expected) and np.array_equal(floats.numpy(), expected)
    column = L.mean_squared_error(np.array([1.0, 2.0]), np.array([[1.5], [2.0]], np.float32))
    assert np.allclose(column.numpy(), [0.25, 0.0])


def test_reductions():
    per_example = L.SparseCategoricalCrossentropy(from_logits=True, reduction=None)(LABELS,
                                                                                   LOGITS)
    assert per_example.shape == (4,)
    total = L.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")(LABELS, LOGITS)
    mean = L.SparseCategoricalCrossentropy(from_logits=True)(LABELS, LOGITS)
    assert np.isclose(total.numpy(), per_example.numpy().sum())
    assert np.isclose(mean.numpy(), per_example.numpy().mean())
    weighted = L.CategoricalCrossentropy(from_logits=True)(ONE_HOT, LOGITS,
                                                           sample_weight=[1.0, 0.0, 0.0, 0.0])
    assert np.isclose(weighted.numpy(), per_example.numpy()[0] / 4)


@pytest.mark.parametrize("call, error, message", [
    (lambda: L.categorical_crossentropy([[1.0, 0.0]], [[0.5, 0.3, 0.2]]), ValueError,
     r"shape \(1, 2\) and y_pred of shape \(1, 3\)"),
    (lambda: L.binary_crossentropy([[1.0, 0.0]], [[0.5]]), ValueError, "must have the same shape"),
    (lambda: L.sparse_categorical_crossentropy([0, 1, 2], [[0.5, 0.5]] * 2), ValueError,
     "do not match logits"),
    (lambda: L.sparse_categorical_crossentropy([0], [[0.5, 0.5]], axis=0), ValueError,
     "only the last axis"),
    (lambda: L.SparseCategoricalCrossentropy(reduction="mean_of_sum"), ValueError,
     "reduction must be one of"),
])
def test_bad_loss_inputs(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("labels, bad", [([0, -1], -1), (np.array([3, 1], np.uint8), 3),
                                         (np.array([1, -7], np.int64), -7)])
def test_out_of_range_labels_are_refused_on_the_host(labels, bad):
    """As TensorFlow's CPU kernel refuses them (its GPU kernel, like ours, does not check)."""
    fw.set_backend("numpy")
    with pytest.raises(ValueError, match=rf"label value of {bad} which is outside the valid "
                                         rf"range of \[0, 2\)"):
        fw.nn.sparse_softmax_cross_entropy_with_logits(labels, [[0.5, 0.5]] * 2)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("shape", [(70,), (7, 10)])
@pytest.mark.parametrize("depth", [5, 40])
def test_sparse_cross_entropy_gradient_for_every_label_dtype(dtype, shape, depth):
    """The label positions are NumPy's index type whatever the labels' (70 examples of 5
    classes overflow int8 and uint8; uint64 and int64 do not mix), and 2-D labels flatten. A
    batch of rows of a few classes is worked out classes first, of more classes rows first."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, depth, shape).astype(dtype)
    logits = fw.Variable(rng.standard_normal(shape + (depth,)))
    with fw.GradientTape() as tape:
        loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    grad = tape.gradient(loss, logits).numpy()
    values = logits.numpy()
    softmax = np.exp(values - values.max(-1, keepdims=True))
    softmax /= softmax.sum(-1, keepdims=True)
    expected = (softmax - np.eye(depth)[labels]) / labels.size
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-15)
    picked = np.take_along_axis(np.log(softmax), labels[..., None].astype(np.intp), -1)[..., 0]
    np.testing.assert_allclose(loss.numpy(), -picked.mean(), rtol=1e-12)


with open(os.path.join(os.path.dirname(__file__), "reference",
                       "keras_metrics_reference.json")) as f:
    MORE = json.load(f)
MORE_INPUTS = {key: np.array(value, np.float32 if np.array(value).dtype.kind == "f" else None)
               for key, value in MORE["inputs"].items()}
FUNCTIONS, CLASSES = MORE["losses"]["functions"], MORE["losses"]["classes"]


@pytest.mark.parametrize("case", sorted(FUNCTIONS))
def test_every_loss_function_gives_kerass_numbers(case):
    """Includes hinge with {0, 1}, {-1, 1} and other labels (only {0, 1} are mapped), and the
    cosine similarity along either axis (negative, as Keras)."""
    name, y_true, y_pred, kwargs = MORE["losses"]["function_args"][case]
    value = getattr(L, name)(MORE_INPUTS[y_true], MORE_INPUTS[y_pred], **kwargs)
    assert value.dtype == fw.float32
    np.testing.assert_allclose(value.numpy(), FUNCTIONS[case], rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("reduction", L.REDUCTIONS)
@pytest.mark.parametrize("case", sorted(CLASSES))
def test_every_loss_class_and_reduction_gives_kerass_numbers(case, reduction):
    spec = CLASSES[case]
    loss = getattr(L, spec["class"])(reduction=reduction, **spec["kwargs"])
    y_true, y_pred = MORE_INPUTS[spec["y_true"]], MORE_INPUTS[spec["y_pred"]]
    expected = spec["results"][str(reduction)]
    np.testing.assert_allclose(loss(y_true, y_pred).numpy(), expected["plain"], rtol=2e-6,
                               atol=1e-6)
    weighted = loss(fw.constant(y_true), fw.constant(y_pred),
                    sample_weight=MORE_INPUTS["weights6"].tolist())
    np.testing.assert_allclose(weighted.numpy(), expected["weighted"], rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CLASSES))
def test_loss_configs_are_kerass_and_round_trip(case):
    """Keras's configs, plus the settings Keras's Huber and CosineSimilarity leave out of
    theirs (delta, axis), so that ours round-trip."""
    spec = CLASSES[case]
    loss = getattr(L, spec["class"])(**spec["kwargs"])
    extra = {key: value for key, value in loss.get_config().items()
             if key not in spec["config"]}
    assert extra == {"Huber": {"delta": 0.5}, "CosineSimilarity": {"axis": -1}}.get(case, {})
    assert {k: v for k, v in loss.get_config().items() if k not in extra} == spec["config"]
    again = L.deserialize(L.serialize(loss))
    assert type(again) is type(loss) and again.get_config() == loss.get_config()


def test_sum_over_batch_size_divides_by_the_count_not_the_weights():
    per_example = L.mean_absolute_error([[0.0], [0.0], [0.0]], [[1.0], [2.0], [4.0]]).numpy()
    weights = [2.0, 0.0, 0.5]
    mean = L.MeanAbsoluteError()([[0.0], [0.0], [0.0]], [[1.0], [2.0], [4.0]], weights)
    by_weights = L.MeanAbsoluteError(reduction="mean_with_sample_weight")(
        [[0.0], [0.0], [0.0]], [[1.0], [2.0], [4.0]], weights)
    assert float(mean) == pytest.approx((per_example * weights).sum() / 3)
    assert float(by_weights) == pytest.approx((per_example * weights).sum() / 2.5)


@pytest.mark.parametrize("identifier, expected", [
    ("mse", L.mean_squared_error), ("MSE", L.mean_squared_error), ("kld", L.kl_divergence),
    ("mae", L.mean_absolute_error), ("huber", L.huber), ("log_cosh", L.log_cosh),
    ("bce", L.binary_crossentropy), ("categorical_hinge", L.categorical_hinge)])
def test_get_returns_functions_by_their_names(identifier, expected):
    assert L.get(identifier) is expected


def test_get_instantiates_classes_and_configs():
    assert type(L.get("Huber")) is L.Huber
    loss = L.get({"class_name": "CategoricalCrossentropy", "config": {"from_logits": True}})
    assert isinstance(loss, L.CategoricalCrossentropy) and loss.from_logits
    assert L.get(None) is None and L.get(L.hinge) is L.hinge
    with pytest.raises(ValueError, match="unknown loss 'hubber'; did you mean 'huber'"):
        L.get("hubber")


def test_classes_take_kerass_positional_arguments():
    assert L.MeanSquaredError("sum").reduction == "sum"
    assert L.Huber(0.3, None).delta == 0.3 and L.Huber(0.3, None).reduction is None
    assert L.BinaryCrossentropy(True, 0.1).label_smoothing == 0.1


def test_loss_classes_compute_in_their_dtype():
    """Keras's dtype (floatx by default): float64 predictions give a float32 loss unless the
    loss is asked for float64, which keeps float64 gradients."""
    y = np.array([[0.5, 1.5]])
    assert L.LogCosh()(y, y * 2).dtype == fw.float32
    x = fw.Variable(y * 2)
    with fw.GradientTape() as tape:
        value = L.LogCosh(dtype="float64")(y, x)
    assert value.dtype == fw.float64 and tape.gradient(value, x).dtype == fw.float64


def test_cosine_similarity_is_minus_one_for_aligned_vectors_and_zero_vectors_stay_finite():
    assert L.cosine_similarity([[1.0, 2.0]], [[2.0, 4.0]]).numpy()[0] == pytest.approx(-1.0)
    assert L.cosine_similarity([[0.0, 0.0]], [[1.0, 1.0]]).numpy()[0] == 0.0


def test_log_cosh_does_not_overflow():
    value = L.log_cosh([[0.0]], [[200.0]]).numpy()[0]
    assert value == pytest.approx(200.0 - np.log(2.0))


TARGETS_REG = np.array([[1.0, -2.0, 0.5], [0.3, 2.0, -1.0]])
PREDICTIONS = np.array([[0.3, -1.2, 2.0], [1.5, 0.2, -0.7]])


@pytest.mark.parametrize("loss", [
    lambda y: L.mean_absolute_error(TARGETS_REG, y),
    lambda y: L.mean_absolute_percentage_error(TARGETS_REG, y),
    lambda y: L.mean_squared_logarithmic_error(np.abs(TARGETS_REG), y * y + 0.1),
    lambda y: L.huber(TARGETS_REG, y, delta=1.0),
    lambda y: L.log_cosh(TARGETS_REG, y),
    lambda y: L.kl_divergence([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]], fw.nn.softmax(y)),
    lambda y: L.poisson(np.abs(TARGETS_REG), fw.exp(y)),
    lambda y: L.cosine_similarity(TARGETS_REG, y),
    lambda y: L.cosine_similarity(TARGETS_REG, y, axis=0),
    lambda y: L.hinge([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], y),
    lambda y: L.squared_hinge([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]], y),
    lambda y: L.categorical_hinge([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], y),
    lambda y: L.Huber(0.5, dtype="float64")(TARGETS_REG, y, sample_weight=[1.0, 2.0]),
    lambda y: L.CosineSimilarity(reduction="sum", dtype="float64")(TARGETS_REG, y),
], ids=["mae", "mape", "msle", "huber", "log_cosh", "kl_divergence", "poisson", "cosine",
        "cosine_axis0", "hinge", "squared_hinge", "categorical_hinge", "Huber_weighted",
        "CosineSimilarity_sum"])
def test_new_loss_gradients_match_finite_differences(loss):
    """Orders 1 and 2 in float64, at points away from the kinks (|error| = delta, a margin of
    exactly 1, a zero error)."""
    fw.test.check_gradients(loss, PREDICTIONS, order=2)


def test_unsupported_keras_settings_are_refused():
    with pytest.raises(ValueError, match="ignore_class=3 is not supported"):
        L.SparseCategoricalCrossentropy(ignore_class=3)
    with pytest.raises(ValueError, match="reduction must be one of"):
        L.Huber(reduction="average")


def test_every_registered_loss_declares_its_labels():
    from framework.losses.functions import LABEL_FORMS
    for name in fw.losses.LOSSES.names():
        loss = fw.losses.LOSSES.lookup(name)
        if loss is not fw.losses.Loss and loss is not fw.losses.LossFunctionWrapper:
            assert getattr(loss, "labels", None) in LABEL_FORMS, name


def test_hinge_reads_its_labels_form_on_every_compiled_call():
    """{0, 1} labels are mapped to {-1, 1}; labels already -1/1 are not: a compiled loss
    checks which on every call instead of keeping the first call's answer."""
    compiled = fw.function(fw.losses.hinge)
    pred = fw.constant([[0.3, -0.8]])
    for labels in ([[0.0, 1.0]], [[-1.0, 1.0]], [[1.0, 0.0]]):
        y = fw.constant(labels)
        np.testing.assert_allclose(compiled(y, pred).numpy(), fw.losses.hinge(y, pred).numpy())
