"""Model.compile / fit / evaluate / predict and the steps, against Keras 3's numbers recorded by
tests/reference/make_fit_reference.py (TensorFlow backend)."""
import numpy as np
import pytest

import framework as fw
import layers
import optimizers
from framework.engine import backend
from layers import epoch_data
from fit_cases import DATA, REFERENCE, assert_history, close, mlp, sparse_logits, weights

x, labels = DATA["x"], DATA["labels"]
FIT = REFERENCE["fit"]

CASES = {
    "sparse_accuracy": (lambda: mlp(3), lambda: dict(
        optimizer=optimizers.Adam(0.05), loss=sparse_logits(), metrics=["accuracy"]),
        dict(x=x, y=labels, batch_size=16, epochs=3, validation_split=0.25, shuffle=False),
        dict(x=x, y=labels, batch_size=16)),
    "binary_logits_acc": (lambda: mlp(1), lambda: dict(
        optimizer="adam", loss=fw.losses.BinaryCrossentropy(from_logits=True),
        metrics=["acc"]),
        dict(x=x, y=DATA["binary"], batch_size=10, epochs=2, shuffle=False),
        dict(x=x, y=DATA["binary"], batch_size=10)),
    "one_hot_weighted": (lambda: mlp(3, activation="softmax"), lambda: dict(
        optimizer=optimizers.SGD(0.1), loss="categorical_crossentropy",
        metrics=["accuracy", "mae"], weighted_metrics=["accuracy"]),
        dict(x=x, y=DATA["one_hot"], sample_weight=DATA["weights"], batch_size=16, epochs=2,
             shuffle=False),
        dict(x=x, y=DATA["one_hot"], sample_weight=DATA["weights"], batch_size=16)),
    "class_weight": (lambda: mlp(3), lambda: dict(
        optimizer=optimizers.RMSprop(0.01), loss=sparse_logits(), metrics=["acc"]),
        dict(x=x, y=labels, class_weight={0: 1.0, 1: 2.0, 2: 0.5}, batch_size=12, epochs=2,
             shuffle=False),
        dict(x=x, y=labels, batch_size=12)),
    "regression_validation_freq": (lambda: mlp(2), lambda: dict(
        optimizer=optimizers.SGD(0.05, momentum=0.9), loss="mse", metrics=["mae"]),
        dict(x=x[:30], y=DATA["target"][:30], validation_data=(x[30:], DATA["target"][30:]),
             validation_freq=2, batch_size=8, epochs=4, shuffle=False),
        dict(x=x, y=DATA["target"], batch_size=8)),
    "initial_epoch_steps": (lambda: mlp(2), lambda: dict(
        optimizer=optimizers.Adam(0.01), loss="mae"),
        dict(x=x, y=DATA["target"], batch_size=8, epochs=4, initial_epoch=1,
             steps_per_epoch=3, shuffle=False),
        dict(x=x, y=DATA["target"], batch_size=8)),
    "dataset": (lambda: mlp(3), lambda: dict(
        optimizer=optimizers.Adam(0.02), loss=sparse_logits(), metrics=["accuracy"]),
        dict(x=fw.data.Dataset.from_tensor_slices((x, labels)).batch(16),
             validation_data=fw.data.Dataset.from_tensor_slices((x[:10], labels[:10])).batch(4),
             epochs=2),
        dict(x=fw.data.Dataset.from_tensor_slices((x, labels)).batch(16))),
    "regularized": (lambda: _regularized(), lambda: dict(
        optimizer=optimizers.SGD(0.1), loss="mse"),
        dict(x=x, y=DATA["target"][:, :1].repeat(3, 1), batch_size=16, epochs=2,
             shuffle=False),
        dict(x=x, y=DATA["target"][:, :1].repeat(3, 1), batch_size=16)),
}


def _regularized():
    model = layers.Sequential([layers.Input((4,)), layers.Dense(
        3, kernel_regularizer=layers.regularizers.L2(0.1))])
    model.set_weights(weights([(4, 3), (3,)], 3))
    return model


@pytest.mark.parametrize("run_eagerly", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_fit_matches_keras(name, run_eagerly):
    build, compile_args, fit_args, eval_args = CASES[name]
    model = build()
    recorded = FIT[name]
    model.compile(**compile_args(), run_eagerly=run_eagerly)
    history = model.fit(**fit_args, verbose=0)
    assert_history(history, recorded)
    assert history.params == recorded["params"]
    for actual, expected in zip(model.get_weights(), recorded["weights"], strict=True):
        close(actual, expected, atol=5e-5)
    evaluated = model.evaluate(**eval_args, verbose=0, return_dict=True)
    assert list(evaluated) == list(recorded["evaluate"])
    close(list(evaluated.values()), list(recorded["evaluate"].values()))
    close(np.atleast_1d(model.evaluate(**eval_args, verbose=0)), recorded["evaluate_list"])
    close(model.predict(x[:5], verbose=0), recorded["predict"], atol=5e-5)


def test_multiple_inputs_and_outputs_as_dicts():
    recorded = REFERENCE["multi_io"]
    a, b = layers.Input((4,), name="a"), layers.Input((3,), name="b")
    hidden = layers.Concatenate()([layers.Dense(5, activation="tanh", name="da")(a),
                                   layers.Dense(5, activation="tanh", name="db")(b)])
    model = layers.Model({"a": a, "b": b}, {"cls": layers.Dense(3, name="cls")(hidden),
                                            "reg": layers.Dense(2, name="reg")(hidden)})
    model.set_weights([np.asarray(w, np.float32) for w in recorded["initial"]])
    model.compile(optimizer=optimizers.Adam(0.02),
                  loss={"cls": sparse_logits(), "reg": "mse"},
                  loss_weights={"cls": 1.0, "reg": 0.5},
                  metrics={"cls": ["accuracy"], "reg": ["mae"]})
    inputs = {"a": x, "b": DATA["x2"]}
    targets = {"cls": labels, "reg": DATA["target"]}
    history = model.fit(inputs, targets, batch_size=16, epochs=2, shuffle=False, verbose=0,
                        validation_split=0.25)
    assert_history(history, recorded)
    evaluated = model.evaluate(inputs, targets, batch_size=16, verbose=0, return_dict=True)
    assert list(evaluated) == list(recorded["evaluate"])
    close(list(evaluated.values()), list(recorded["evaluate"].values()))
    predicted = model.predict(inputs, verbose=0)
    for key, values in recorded["predict"].items():
        close(predicted[key][:3], values, atol=5e-5)


class Small(layers.Model):
    """The guide's 4-6-2 network as a subclassed model (a functional subclass is built
    elsewhere)."""

    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(6, activation="tanh")
        self.out = layers.Dense(2)

    def call(self, inputs):
        return self.out(self.hidden(inputs))


class GuideModel(Small):
    """The "customizing what happens in fit" guide's model, ported by tf -> fw."""

    def train_step(self, data):
        x, y = data
        with fw.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply(gradients, trainable_vars)
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


class TrackerModel(Small):
    """The guide's lower-level model: its own loss tracker and metric, no compiled loss."""

    def __init__(self):
        super().__init__()
        self.loss_tracker = fw.metrics.Mean(name="loss")
        self.mae_metric = fw.metrics.MeanAbsoluteError(name="mae")
        self.loss_fn = fw.losses.MeanSquaredError()

    def train_step(self, data):
        x, y = data
        with fw.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.loss_fn(y, y_pred)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(gradients, self.trainable_variables)
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.loss_tracker.update_state(self.loss_fn(y, y_pred))
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]


@pytest.mark.parametrize("run_eagerly", [False, True])
@pytest.mark.parametrize("name,cls,compile_args", [
    ("guide", GuideModel, lambda: dict(optimizer=optimizers.SGD(0.05), loss="mse",
                                       metrics=["mae"])),
    ("tracker", TrackerModel, lambda: dict(optimizer=optimizers.SGD(0.05)))])
def test_custom_train_step(name, cls, compile_args, run_eagerly):
    recorded = REFERENCE["custom"][name]
    model = cls()
    model(x[:1])
    model.set_weights(weights([(4, 6), (6,), (6, 2), (2,)], 1))
    model.compile(**compile_args(), run_eagerly=run_eagerly)
    history = model.fit(x, DATA["target"], batch_size=8, epochs=3, shuffle=False, verbose=0)
    assert_history(history, recorded)
    for actual, expected in zip(model.get_weights(), recorded["weights"], strict=True):
        close(actual, expected, atol=5e-5)
    if "evaluate" in recorded:
        evaluated = model.evaluate(x, DATA["target"], batch_size=8, verbose=0,
                                   return_dict=True)
        close([evaluated[k] for k in recorded["evaluate"]], list(recorded["evaluate"].values()))


def test_on_batch_methods():
    recorded = REFERENCE["on_batch"]
    model = mlp(3)
    model.compile(optimizer=optimizers.Adam(0.05), loss=sparse_logits(), metrics=["accuracy"])
    close(model.train_on_batch(x[:16], labels[:16]), recorded["train"][0])
    second = model.train_on_batch(x[16:32], labels[16:32], return_dict=True)
    close([second[k] for k in recorded["train"][1]], list(recorded["train"][1].values()))
    tested = model.test_on_batch(x[:20], labels[:20], return_dict=True)
    close([tested[k] for k in recorded["test"]], list(recorded["test"].values()))
    close(model.predict_on_batch(x[:3]), recorded["predict"], atol=5e-5)


def test_errors_are_keras_s():
    errors = REFERENCE["errors"]
    with pytest.raises(ValueError, match=errors["fit_before_compile"][1].replace("(", r"\(")
                       .replace(")", r"\)")):
        mlp(3).fit(x, labels, verbose=0)
    model = mlp(3)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="`validation_split` is only supported for tensors or "
                                         "NumPy arrays"):
        model.fit(fw.data.Dataset.from_tensor_slices((x, labels)).batch(8),
                  validation_split=0.2, verbose=0)
    model = mlp(3)
    model.compile(optimizer="sgd", loss="mse")
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(ValueError, match=r"loss 'mse' does not fit the labels: y_true has "
                                         r"shape \(32, 2\), y_pred \(32, 3\)"):
        model.fit(x, DATA["target"], verbose=0)
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)


def test_train_step_returning_a_non_dict_names_the_step():
    class NonDict(Small):
        def train_step(self, data):
            return fw.constant(1.0)

    model = NonDict()
    model.compile(optimizer="sgd", loss="mse")
    assert REFERENCE["errors"]["train_step_non_dict"][0] == "AttributeError"
    with pytest.raises(AttributeError, match="NonDict.train_step must return a dict"):
        model.fit(x, DATA["target"], verbose=0)


def test_epoch_loss_is_weighted_by_batch_size_and_metrics_reset_each_epoch():
    model = mlp(2)
    model.compile(optimizer=optimizers.SGD(0.0), loss="mse", metrics=["mae"])
    history = model.fit(x[:25], DATA["target"][:25], batch_size=10, epochs=2, shuffle=False,
                        verbose=0)
    errors = (model.predict(x[:25], verbose=0) - DATA["target"][:25]) ** 2
    close(history.history["loss"], [errors.mean()] * 2, atol=1e-6)


def test_shuffle_draws_from_fw_random_and_is_repeatable():
    def run():
        fw.random.set_seed(3)
        model = mlp(2)
        model.compile(optimizer=optimizers.SGD(0.05), loss="mse")
        return model.fit(x, DATA["target"], batch_size=8, epochs=2, verbose=0).history["loss"]
    first, second = run(), run()
    assert first == second
    model = mlp(2)
    model.compile(optimizer=optimizers.SGD(0.05), loss="mse")
    unshuffled = model.fit(x, DATA["target"], batch_size=8, epochs=2, verbose=0,
                           shuffle=False).history["loss"]
    assert first[1] != unshuffled[1]


def test_compiled_step_gives_eager_numbers_on_later_calls():
    histories = []
    for eager in (True, False):
        model = mlp(3)
        model.compile(optimizer=optimizers.Adam(0.05), loss=sparse_logits(),
                      metrics=["accuracy"], run_eagerly=eager)
        histories.append(model.fit(x, labels, batch_size=7, epochs=3, shuffle=False,
                                   verbose=0).history)
    for key in histories[0]:
        close(histories[1][key], histories[0][key], atol=1e-6)


def test_verbose_lines(capsys):
    model = mlp(3)
    model.compile(optimizer="sgd", loss=sparse_logits(), metrics=["accuracy"])
    model.fit(x, labels, batch_size=16, epochs=2, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2"
    assert lines[1].startswith("3/3 - ") and " - accuracy: " in lines[1] and "loss: " in lines[1]
    model.evaluate(x, labels, verbose=1)
    assert capsys.readouterr().out.startswith("2/2 - ")


def test_tensors_and_steps_per_execution():
    seen = []
    model = mlp(3)
    model.compile(optimizer=optimizers.SGD(0.1), loss=sparse_logits(), steps_per_execution=2)
    reference = mlp(3)
    reference.compile(optimizer=optimizers.SGD(0.1), loss=sparse_logits())
    history = model.fit(fw.constant(x), fw.constant(labels), batch_size=8, epochs=1,
                        shuffle=False, verbose=0, callbacks=[layers.callbacks.LambdaCallback(
                            on_train_batch_end=lambda batch, logs: seen.append(batch))])
    assert seen == [1, 3, 4]  # the hooks once per execution of 2 steps, the last one alone
    close(history.history["loss"], reference.fit(x, labels, batch_size=8, shuffle=False,
                                                 verbose=0).history["loss"], atol=1e-7)


def test_bad_compile_arguments_leave_the_model_as_it_was():
    model = mlp(3)
    model.compile(optimizer="sgd", loss="mse")
    optimizer = model.optimizer
    for kwargs, message in ((dict(steps_per_execution=0), "steps_per_execution"),
                            (dict(metrics="accuracy"), "Expected `metrics` argument"),
                            (dict(optimizer="nonexistent"), "nonexistent")):
        with pytest.raises(ValueError, match=message):
            model.compile(**{"optimizer": "adam", "loss": "mae", **kwargs})
        assert model.optimizer is optimizer and model.loss == "mse"


def test_optimizer_apply_takes_two_lists_of_the_same_length():
    model = mlp(2)
    optimizer = optimizers.SGD(0.5)
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(ValueError, match="1 gradients for 4 variables"):
        optimizer.apply([fw.ones((4, 6))], model.trainable_variables)
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)
    optimizer.apply([fw.ones_like(v) for v in model.trainable_variables],
                    model.trainable_variables)
    np.testing.assert_allclose(model.get_weights()[1], before[1] - 0.5)


def test_batch_logs_of_the_compiled_step_are_the_eager_ones():
    """The compiled step hands its logs back as a plain dict of tensors, each batch's own,
    as the eager step does."""
    seen = {}
    for eager in (True, False):
        model = mlp(3)
        model.compile(optimizer=optimizers.Adam(0.05), loss=sparse_logits(),
                      metrics=["accuracy"], run_eagerly=eager)
        logs = seen[eager] = []
        model.fit(x, labels, batch_size=7, epochs=2, shuffle=False, verbose=0,
                  callbacks=[layers.callbacks.LambdaCallback(
                      on_train_batch_end=lambda batch, batch_logs, logs=logs: logs.append(
                          {k: float(v) for k, v in batch_logs.items()}))])
    assert [list(logs) for logs in seen[False]] == [list(logs) for logs in seen[True]]
    assert len(seen[True]) == 2 * 6 and set(seen[True][0]) == {"accuracy", "loss"}
    for compiled, eager in zip(seen[False], seen[True]):
        close(list(compiled.values()), list(eager.values()), atol=1e-6)


def test_array_batches_are_views_of_the_data():
    """fit cuts host arrays into batches without copying them."""
    data = epoch_data.make(x.astype(np.float32), labels, batch_size=8)
    batches = list(data.epoch())
    assert len(batches) == data.steps
    for index, (xb, yb) in enumerate(batches):
        np.testing.assert_array_equal(xb, data.data[0][index * 8:(index + 1) * 8])
        if not backend.is_device_array(xb._value):  # (a device backend copies it there)
            assert np.shares_memory(xb._value, data.data[0])


def test_unshuffled_host_batches_are_made_once_per_fit():
    """Each pass over unshuffled host arrays yields the same batch tensors (made on the first
    pass, views: free to keep); a new batch size makes new ones; shuffled passes are new."""
    data = epoch_data.make(x.astype(np.float32), labels, batch_size=8)
    first, again = list(data.epoch()), list(data.epoch())
    if backend.get_backend() == "numpy":
        assert all(a is b for a, b in zip(first, again))
    data.batch_size = 16
    assert [b[0].shape[0] for b in data.epoch()] == [16, 16, 8]
    shuffled = epoch_data.make(x.astype(np.float32), labels, batch_size=8, shuffle=True)
    assert not any(a is b for a, b in zip(shuffled.epoch(), shuffled.epoch()))
