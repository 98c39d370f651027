"""fw.metrics: Keras 3's numbers (from keras_metrics_reference.json) through several updates,
with and without sample_weight, and after reset; state, configs, names, devices, bad input."""
import json
import os
import re

import numpy as np
import pytest

import framework as fw

M = fw.metrics
with open(os.path.join(os.path.dirname(__file__), "reference",
                       "keras_metrics_reference.json")) as f:
    REFERENCE = json.load(f)


def _array(value):
    array = np.array(value)
    return array.astype(np.float32) if array.dtype.kind == "f" else array


INPUTS = {key: _array(value) for key, value in REFERENCE["inputs"].items()}
CASES = REFERENCE["metrics"]


def replay(case, convert=lambda a: a):
    """The recorded calls on a new metric: its result after each, the last call repeated
    after reset_state, as the recording script made them."""
    metric = getattr(M, case["class"])(**case["kwargs"])
    calls = case["calls"] + case["calls"][-1:]
    results = []
    for position, call in enumerate(calls):
        if position == len(case["calls"]):
            metric.reset_state()
        args = [convert(INPUTS[key]) for key in call[:-1]]
        weight = None if call[-1] is None else convert(INPUTS[call[-1]])
        metric.update_state(*args, sample_weight=weight)
        result = metric.result()
        assert isinstance(result, fw.Tensor) and result.dtype == fw.float32
        results.append(result.numpy())
    return metric, results


@pytest.mark.parametrize("name", sorted(CASES))
def test_metrics_give_kerass_numbers(name):
    """Inputs include predictions of exactly 0.5 (strict '>'), 0 and 1 (AUC's outer
    thresholds), tied scores (top-k, argmax) and rank-2 values and weights (Mean)."""
    case = CASES[name]
    metric, results = replay(case)
    for got, expected in zip(results, case["results"], strict=True):
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)
    config = metric.get_config()
    expected = dict(case["config"])
    # Keras numbers the default names of a class's later instances (precision_1, auc_2): a
    # session-wide counter this framework does not keep.
    assert config.pop("name") == re.sub(r"_\d+$", "", expected.pop("name"))
    assert config == expected


@pytest.mark.parametrize("name", ["sparse_categorical_accuracy", "auc", "mean_2d_weights",
                                  "precision_top_k", "root_mean_squared_error"])
@pytest.mark.parametrize("form", ["tensor", "list"])
def test_tensors_and_lists_give_the_numbers_of_arrays(name, form):
    convert = fw.constant if form == "tensor" else (lambda a: a.tolist())
    _, expected = replay(CASES[name])
    _, got = replay(CASES[name], convert)
    np.testing.assert_array_equal(np.array(got), np.array(expected))


def test_calling_a_metric_accumulates_like_update_state_then_result():
    called, updated = M.Mean(), M.Mean()
    assert float(called([1.0, 3.0])) == 2.0
    assert float(called([5.0, 7.0, 9.0])) == 5.0  # (1 + 3 + 5 + 7 + 9) / 5: not the last batch's
    updated.update_state([1.0, 3.0])
    updated.update_state([5.0, 7.0, 9.0])
    assert float(updated.result()) == float(called.result())


def test_state_is_non_trainable_variables_and_reset_zeroes_them():
    metric = M.AUC(num_thresholds=4)
    assert [v.name for v in metric.variables] == ["true_positives", "false_positives",
                                                  "true_negatives", "false_negatives"]
    assert all(isinstance(v, fw.Variable) and not v.trainable and v.shape == (4,)
               for v in metric.variables)
    metric.update_state([1, 0, 1], [0.9, 0.2, 0.4])
    assert any(v.numpy().any() for v in metric.variables)
    metric.reset_state()
    assert not any(v.numpy().any() for v in metric.variables)
    assert float(metric.result()) == 0.0
    assert [v.name for v in M.Mean().variables] == ["total", "count"]
    assert metric.dtype == "float32" and M.Mean(dtype="float64").result().dtype == fw.float64


def test_a_metric_is_not_recorded_by_a_tape():
    """Metrics are read, not differentiated: updating one inside a tape records nothing."""
    metric, x = M.MeanSquaredError(), fw.Variable([[1.0, 2.0]])
    with fw.GradientTape() as tape:
        loss = fw.reduce_sum(x * x)
        metric.update_state([[0.0, 0.0]], x)
    assert np.allclose(tape.gradient(loss, x).numpy(), [[2.0, 4.0]])
    assert float(metric.result()) == 2.5


def test_binary_accuracy_and_precision_threshold_is_strict():
    assert float(M.BinaryAccuracy()([1.0, 0.0], [0.5, 0.5])) == 0.5
    assert float(M.Precision()([1.0, 1.0], [0.5, 0.51])) == 1.0
    assert float(M.Recall()([1.0, 1.0], [0.5, 0.51])) == 0.5


def test_mean_of_rank_2_values_averages_rows_first():
    """With weights per row, the rows are averaged first, then weighted."""
    metric = M.Mean()
    metric.update_state([[1.0, 3.0], [10.0, 20.0]], sample_weight=[1.0, 3.0])
    assert float(metric.result()) == pytest.approx((2.0 * 1 + 15.0 * 3) / 4)


def test_mean_metric_wrapper_wraps_a_loss_function():
    metric = M.MeanMetricWrapper(fw.losses.mean_absolute_error, name="mae_of_rows")
    metric.update_state([[0.0, 0.0], [1.0, 1.0]], [[1.0, 3.0], [1.0, 1.0]])
    assert metric.name == "mae_of_rows" and float(metric.result()) == 1.0
    assert metric.get_config()["fn"] == "mean_absolute_error"


def test_metric_functions_are_per_sample():
    np.testing.assert_array_equal(M.sparse_categorical_accuracy([1, 0], [[0.2, 0.8],
                                                                         [0.3, 0.7]]).numpy(),
                                  [1.0, 0.0])
    np.testing.assert_array_equal(M.top_k_categorical_accuracy(
        [[0, 0, 1], [1, 0, 0]], [[0.5, 0.3, 0.3], [0.1, 0.5, 0.4]], k=2).numpy(), [1.0, 0.0])


@pytest.mark.parametrize("name, cls", [("accuracy", "Accuracy"), ("mse", "MeanSquaredError"),
                                       ("MAE", "MeanAbsoluteError"), ("auc", "AUC"),
                                       ("SparseCategoricalAccuracy", "SparseCategoricalAccuracy"),
                                       ("root_mean_squared_error", "RootMeanSquaredError")])
def test_get_builds_the_named_metric(name, cls):
    assert type(M.get(name)) is getattr(M, cls)


def test_get_and_serialize_round_trip_every_registered_metric():
    assert M.get(None) is None
    for name in M.METRICS.names():
        cls = M.METRICS.lookup(name)
        if cls in (M.Metric, M.MeanMetricWrapper):
            continue
        metric = cls(name="mine") if cls is not M.AUC else cls(num_thresholds=7, curve="PR")
        again = M.deserialize(M.serialize(metric))
        assert type(again) is cls and again.get_config() == metric.get_config()
    with pytest.raises(ValueError, match="unknown metric 'acuracy'; did you mean 'accuracy'"):
        M.get("acuracy")


@pytest.mark.parametrize("call, message", [
    (lambda: M.AUC(curve="ROCK"), "curve must be 'ROC' or 'PR', got 'ROCK'"),
    (lambda: M.AUC(summation_method="simpson"), "summation_method must be one of"),
    (lambda: M.AUC(num_thresholds=1), "num_thresholds must be an integer > 1, got 1"),
    (lambda: M.AUC(multi_label=True), "multi_label, num_labels and label_weights are not"),
    (lambda: M.Precision(thresholds=[0.5, 1.5]), r"thresholds must be in \[0, 1\], got \[1.5\]"),
    (lambda: M.Recall(class_id=1)([1, 0], [0.3, 0.6]), "with class_id, y_pred must have shape"),
    (lambda: M.Mean(dtype="int32"), "dtype must be a floating dtype, got int32"),
])
def test_bad_metric_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("name", ["sparse_categorical_accuracy", "auc", "precision_top_k",
                                  "mean_2d_weights", "top_k", "recall_thresholds"])
def test_device_arrays_give_the_host_numbers(device_backend, name):
    """On the GPU backend the state lives on the device; predictions there meet host labels
    and weights, as a training loop gives them."""
    case = CASES[name]
    metric, results = replay(case, lambda a: fw.constant(a) if a.dtype.kind == "f" else a)
    assert all(v.device == "gpu" for v in metric.variables)
    for got, expected in zip(results, case["results"], strict=True):
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)


RUN = """
seed = 3
epochs = 1
batch_size = 32
metrics = {metrics}

[data]
name = "moons"
n_samples = 200

[[model.layers]]
type = "dense"
units = 8
activation = "relu"

[[model.layers]]
type = "dense"
units = 1

[loss]
name = "binary_crossentropy"

[optimizer]
type = "adam"
learning_rate = 0.01
"""


def test_the_runner_builds_its_metrics_from_the_registry(tmp_path):
    """Any metric of labels and predictions that METRICS names is usable from a config; the
    AUC gets the loss's from_logits, so it ranks the logits rather than clipping them."""
    from training.cli import main
    config = tmp_path / "run.toml"
    config.write_text(RUN.format(metrics='["accuracy", "AUC", "precision", "recall"]'))
    assert main([str(config), "--no-progress", "--output", str(tmp_path / "run")]) == 0
    record = json.loads((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()[-1])
    assert {"accuracy", "AUC", "precision", "recall", "test_AUC"} <= set(record)
    assert 0.5 < record["test_AUC"] <= 1.0 and 0.0 <= record["test_precision"] <= 1.0


@pytest.mark.parametrize("metrics, message", [
    ('["mean"]', "'mean' does not compare labels with predictions"),
    ('["rmse"]', r"metrics\[0\]: expected one of"),
    ('["root_mean_squared_error"]', "compares the outputs with real-valued targets"),
])
def test_the_runner_refuses_metrics_it_cannot_feed(tmp_path, capsys, metrics, message):
    from training.cli import main
    config = tmp_path / "run.toml"
    config.write_text(RUN.format(metrics=metrics))
    assert main([str(config), "--no-progress", "--output", str(tmp_path / "run")]) != 0
    assert re.search(message, capsys.readouterr().err)


@pytest.mark.parametrize("fn, kwargs", [(fw.losses.mean_absolute_error, {}),
                                        (M.binary_accuracy, {"threshold": 0.3}),
                                        (fw.losses.huber, {"delta": 0.5})])
def test_mean_metric_wrapper_round_trips_its_function(fn, kwargs):
    metric = M.MeanMetricWrapper(fn, **kwargs)
    again = M.deserialize(M.serialize(metric))
    assert again._fn is fn and again.get_config() == metric.get_config()
    y_true, y_pred = [[0.0, 1.0], [1.0, 1.0]], [[0.2, 0.6], [0.9, 0.1]]
    assert float(again(y_true, y_pred)) == float(metric(y_true, y_pred))
    with pytest.raises(ValueError, match="needs a function, but 'Huber' names the class"):
        M.MeanMetricWrapper.from_config({"fn": "Huber"})


class BinaryTruePositives(M.Metric):
    """The subclass of Keras's Metric documentation, ported by renaming."""

    def __init__(self, name="binary_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_variable(shape=(), initializer="zeros",
                                                name="true_positives")

    def update_state(self, y_true, y_pred, sample_weight=None):
        values = fw.cast(fw.logical_and(fw.cast(y_true, "bool"), fw.cast(y_pred, "bool")),
                         self.dtype)
        if sample_weight is not None:
            values = values * fw.cast(sample_weight, self.dtype)
        self.true_positives.assign(self.true_positives + fw.reduce_sum(values))

    def result(self):
        return self.true_positives


def test_a_user_metric_written_as_in_kerass_documentation():
    metric = BinaryTruePositives()
    metric.update_state([1, 1, 0, 1], [1, 0, 1, 1], sample_weight=[1.0, 1.0, 1.0, 0.5])
    assert float(metric.result()) == 1.5 and metric.variables == [metric.true_positives]
    metric.reset_state()
    assert float(metric.result()) == 0.0
    with pytest.raises(ValueError, match="aggregation must be 'sum'"):
        metric.add_variable((), "zeros", aggregation="mean", name="x")
