"""Write fit_reference.json: Keras 3's training API and callbacks, recorded on TensorFlow.

Run it where TensorFlow and Keras 3 are installed (the tests do not need them):
``python tests/reference/make_fit_reference.py``. Every case trains a small model from set
initial weights on data drawn here with NumPy, with ``shuffle=False``, so the tests rebuild the
same model and data and compare: the ``History`` (keys and values per epoch, ``val_*``
included), ``evaluate``/``predict``/``*_on_batch`` values, what callbacks did (EarlyStopping's
stop epoch, ReduceLROnPlateau's rates, CSVLogger's file, ModelCheckpoint's files), and Keras's
error messages for bad input.
"""
import json
import os
import tempfile
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
L = keras.layers


def data():
    """The arrays every case uses (stored in the JSON too)."""
    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, (40, 4)).astype(np.float32)
    labels = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 0.8).astype(np.int64)
    return {
        "x": x, "labels": labels, "one_hot": np.eye(3, dtype=np.float32)[labels],
        "binary": (x[:, 0] > 0).astype(np.float32).reshape(-1, 1),
        "target": (x @ rng.normal(0, 1, (4, 2))).astype(np.float32),
        "x2": rng.normal(0, 1, (40, 3)).astype(np.float32),
        "weights": rng.uniform(0, 2, 40).astype(np.float32),
    }


def weights(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(0, 0.5, s).astype(np.float32) for s in shapes]


def mlp(outputs, hidden=6, seed=1, activation=None):
    model = keras.Sequential([L.Input((4,)), L.Dense(hidden, activation="tanh"),
                              L.Dense(outputs, activation=activation)])
    model.set_weights(weights([(4, hidden), (hidden,), (hidden, outputs), (outputs,)], seed))
    return model


def history(h):
    return {"history": {k: [float(v) for v in vs] for k, vs in h.history.items()},
            "epoch": list(h.epoch), "params": dict(h.params)}


def fit_cases(d):
    """Each case: the compile and fit arguments (the test reads them back) and the results."""
    cases = {}

    def run(name, build, compile_args, fit_args, evaluate=True):
        model = build()
        model.compile(**compile_args["make"]())
        h = model.fit(**fit_args["make"](), verbose=0)
        case = {**history(h), "weights": [w.tolist() for w in model.get_weights()]}
        if evaluate:
            case["evaluate"] = {k: float(v) for k, v in model.evaluate(
                **fit_args["eval"](), verbose=0, return_dict=True).items()}
            case["evaluate_list"] = [float(v) for v in np.atleast_1d(model.evaluate(
                **fit_args["eval"](), verbose=0))]
            case["predict"] = np.asarray(model.predict(d["x"][:5], verbose=0)).tolist()
        cases[name] = case

    x, labels = d["x"], d["labels"]
    run("sparse_accuracy", lambda: mlp(3),
        {"make": lambda: dict(optimizer=keras.optimizers.Adam(0.05), loss=keras.losses.
                              SparseCategoricalCrossentropy(from_logits=True),
                              metrics=["accuracy"])},
        {"make": lambda: dict(x=x, y=labels, batch_size=16, epochs=3, validation_split=0.25,
                              shuffle=False),
         "eval": lambda: dict(x=x, y=labels, batch_size=16)})
    run("binary_logits_acc", lambda: mlp(1),
        {"make": lambda: dict(optimizer="adam", loss=keras.losses.BinaryCrossentropy(
            from_logits=True), metrics=["acc"])},
        {"make": lambda: dict(x=x, y=d["binary"], batch_size=10, epochs=2, shuffle=False),
         "eval": lambda: dict(x=x, y=d["binary"], batch_size=10)})
    run("one_hot_weighted", lambda: mlp(3, activation="softmax"),
        {"make": lambda: dict(optimizer=keras.optimizers.SGD(0.1), loss="categorical_crossentropy",
                              metrics=["accuracy", "mae"], weighted_metrics=["accuracy"])},
        {"make": lambda: dict(x=x, y=d["one_hot"], sample_weight=d["weights"], batch_size=16,
                              epochs=2, shuffle=False),
         "eval": lambda: dict(x=x, y=d["one_hot"], sample_weight=d["weights"], batch_size=16)})
    run("class_weight", lambda: mlp(3),
        {"make": lambda: dict(optimizer=keras.optimizers.RMSprop(0.01), loss=keras.losses.
                              SparseCategoricalCrossentropy(from_logits=True),
                              metrics=["acc"])},
        {"make": lambda: dict(x=x, y=labels, class_weight={0: 1.0, 1: 2.0, 2: 0.5},
                              batch_size=12, epochs=2, shuffle=False),
         "eval": lambda: dict(x=x, y=labels, batch_size=12)})
    run("regression_validation_freq", lambda: mlp(2),
        {"make": lambda: dict(optimizer=keras.optimizers.SGD(0.05, momentum=0.9), loss="mse",
                              metrics=["mae"])},
        {"make": lambda: dict(x=x[:30], y=d["target"][:30], validation_data=(x[30:],
                              d["target"][30:]), validation_freq=2, batch_size=8, epochs=4,
                              shuffle=False),
         "eval": lambda: dict(x=x, y=d["target"], batch_size=8)})
    run("initial_epoch_steps", lambda: mlp(2),
        {"make": lambda: dict(optimizer=keras.optimizers.Adam(0.01), loss="mae")},
        {"make": lambda: dict(x=x, y=d["target"], batch_size=8, epochs=4, initial_epoch=1,
                              steps_per_epoch=3, shuffle=False),
         "eval": lambda: dict(x=x, y=d["target"], batch_size=8)})
    run("dataset", lambda: mlp(3),
        {"make": lambda: dict(optimizer=keras.optimizers.Adam(0.02), loss=keras.losses.
                              SparseCategoricalCrossentropy(from_logits=True),
                              metrics=["accuracy"])},
        {"make": lambda: dict(x=tf.data.Dataset.from_tensor_slices((x, labels)).batch(16),
                              validation_data=tf.data.Dataset.from_tensor_slices(
                                  (x[:10], labels[:10])).batch(4), epochs=2),
         "eval": lambda: dict(x=tf.data.Dataset.from_tensor_slices((x, labels)).batch(16))})
    def regularized():
        model = keras.Sequential([L.Input((4,)), L.Dense(
            3, kernel_regularizer=keras.regularizers.L2(0.1))])
        model.set_weights(weights([(4, 3), (3,)], 3))
        return model

    run("regularized", regularized,
        {"make": lambda: dict(optimizer=keras.optimizers.SGD(0.1), loss="mse")},
        {"make": lambda: dict(x=x, y=d["target"][:, :1].repeat(3, 1), batch_size=16, epochs=2,
                              shuffle=False),
         "eval": lambda: dict(x=x, y=d["target"][:, :1].repeat(3, 1), batch_size=16)})
    return cases


def multi_io(d):
    """A functional model with two named inputs and two named outputs, dicts everywhere."""
    a, b = L.Input((4,), name="a"), L.Input((3,), name="b")
    hidden = L.Concatenate()([L.Dense(5, activation="tanh", name="da")(a),
                              L.Dense(5, activation="tanh", name="db")(b)])
    model = keras.Model({"a": a, "b": b}, {"cls": L.Dense(3, name="cls")(hidden),
                                           "reg": L.Dense(2, name="reg")(hidden)})
    model.set_weights(weights([w.shape for w in model.get_weights()], 9))
    model.compile(optimizer=keras.optimizers.Adam(0.02),
                  loss={"cls": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                        "reg": "mse"},
                  loss_weights={"cls": 1.0, "reg": 0.5},
                  metrics={"cls": ["accuracy"], "reg": ["mae"]})
    inputs = {"a": d["x"], "b": d["x2"]}
    targets = {"cls": d["labels"], "reg": d["target"]}
    h = model.fit(inputs, targets, batch_size=16, epochs=2, shuffle=False, verbose=0,
                  validation_split=0.25)
    out = model.predict(inputs, verbose=0)
    return {**history(h), "layer_order": [w.path for w in model.weights],
            "initial": [w.tolist() for w in weights([w.shape for w in model.get_weights()], 9)],
            "evaluate": {k: float(v) for k, v in model.evaluate(
                inputs, targets, batch_size=16, verbose=0, return_dict=True).items()},
            "predict": {k: np.asarray(v)[:3].tolist() for k, v in out.items()}}


class GuideModel(keras.Model):
    """The "customizing what happens in fit" guide's first model (TensorFlow backend)."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
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


class TrackerModel(keras.Model):
    """The guide's lower-level model: its own loss tracker and metric, no compiled loss."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")
        self.loss_fn = keras.losses.MeanSquaredError()

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
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


def custom_steps(d):
    out = {}
    for name, cls, compile_args in (
            ("guide", GuideModel, dict(optimizer=keras.optimizers.SGD(0.05), loss="mse",
                                       metrics=["mae"])),
            ("tracker", TrackerModel, dict(optimizer=keras.optimizers.SGD(0.05)))):
        inputs = keras.Input((4,))
        model = cls(inputs, L.Dense(2)(L.Dense(6, activation="tanh")(inputs)))
        model.set_weights(weights([(4, 6), (6,), (6, 2), (2,)], 1))
        model.compile(**compile_args)
        h = model.fit(d["x"], d["target"], batch_size=8, epochs=3, shuffle=False, verbose=0)
        out[name] = {**history(h), "weights": [w.tolist() for w in model.get_weights()]}
        if name == "tracker":
            out[name]["evaluate"] = {k: float(v) for k, v in model.evaluate(
                d["x"], d["target"], batch_size=8, verbose=0, return_dict=True).items()}
    return out


def on_batch(d):
    model = mlp(3)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss=keras.losses.
                  SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    x, labels = d["x"], d["labels"]
    return {
        "train": [[float(v) for v in model.train_on_batch(x[:16], labels[:16])],
                  {k: float(v) for k, v in model.train_on_batch(
                      x[16:32], labels[16:32], return_dict=True).items()}],
        "test": {k: float(v) for k, v in model.test_on_batch(
            x[:20], labels[:20], return_dict=True).items()},
        "predict": np.asarray(model.predict_on_batch(x[:3])).tolist(),
    }


def callbacks(d):
    x, labels = d["x"], d["labels"]
    out = {}

    def compiled(lr=0.05):
        model = mlp(3)
        model.compile(optimizer=keras.optimizers.SGD(lr), loss=keras.losses.
                      SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        return model

    def fit(model, cbs, epochs=8, **kwargs):
        return model.fit(x, labels, batch_size=10, epochs=epochs, shuffle=False, verbose=0,
                         callbacks=cbs, **kwargs)

    for name, kwargs in (("min_delta", dict(monitor="loss", min_delta=0.06, patience=1)),
                         ("restore", dict(monitor="val_loss", patience=1, min_delta=0.02,
                                          restore_best_weights=True)),
                         ("start_from_epoch", dict(monitor="loss", min_delta=0.06, patience=0,
                                                   start_from_epoch=3)),
                         ("baseline", dict(monitor="accuracy", baseline=0.99, patience=2))):
        model, stop = compiled(), keras.callbacks.EarlyStopping(**kwargs)
        h = fit(model, [stop], validation_split=0.25)
        out[f"early_stopping_{name}"] = {**history(h), "stopped_epoch": stop.stopped_epoch,
                                         "weights": [w.tolist() for w in model.get_weights()]}

    rates = []
    model = compiled(0.5)
    h = fit(model, [keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1,
                                                      min_delta=0.05, min_lr=0.07),
                    keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: rates.append(
                        float(model.optimizer.learning_rate)))])
    out["reduce_lr"] = {**history(h), "rates": rates}

    model = compiled(0.4)
    h = fit(model, [keras.callbacks.LearningRateScheduler(
        lambda epoch, lr: lr if epoch < 2 else lr * 0.5)], epochs=4)
    out["scheduler"] = history(h)

    with tempfile.TemporaryDirectory() as tmp:
        for name, kwargs in (("plain", {}), ("validation", dict(validation_split=0.25))):
            path = os.path.join(tmp, f"{name}.csv")
            fit(compiled(), [keras.callbacks.CSVLogger(path)], epochs=2, **kwargs)
            with open(path) as f:
                out[f"csv_{name}"] = f.read()
        path = os.path.join(tmp, "append.csv")
        fit(compiled(), [keras.callbacks.CSVLogger(path, separator=";")], epochs=1)
        fit(compiled(), [keras.callbacks.CSVLogger(path, separator=";", append=True)],
            epochs=1, validation_split=0.25)
        with open(path) as f:
            out["csv_append_validation"] = f.read()

        for name, kwargs in (
                ("best", dict(filepath="{epoch:02d}-{loss:.2f}.weights.h5", monitor="loss",
                              save_best_only=True, save_weights_only=True)),
                ("every", dict(filepath="w-{epoch}.weights.h5", save_weights_only=True)),
                ("best_max", dict(filepath="m{epoch:02d}-{val_accuracy:.3f}.weights.h5",
                                  monitor="val_accuracy", mode="max", save_best_only=True,
                                  save_weights_only=True))):
            folder = os.path.join(tmp, name)
            os.mkdir(folder)
            kwargs["filepath"] = os.path.join(folder, kwargs["filepath"])
            fit(compiled(0.5), [keras.callbacks.ModelCheckpoint(**kwargs)], epochs=5,
                validation_split=0.25)
            out[f"checkpoint_{name}"] = sorted(os.listdir(folder))

    model = compiled()
    nan_labels = d["target"].copy()
    nan_labels[25, 0] = np.nan
    model = mlp(2)
    model.compile(optimizer="sgd", loss="mse")
    batches = []
    h = model.fit(x, nan_labels, batch_size=10, epochs=3, shuffle=False, verbose=0,
                  callbacks=[keras.callbacks.TerminateOnNaN(), keras.callbacks.LambdaCallback(
                      on_train_batch_end=lambda batch, logs: batches.append(batch))])
    out["terminate_on_nan"] = {"history": {k: [repr(float(v)) for v in vs]
                                           for k, vs in h.history.items()},
                               "batches": batches}

    hooks = []
    names = ["on_train_begin", "on_epoch_begin", "on_train_batch_begin", "on_train_batch_end",
             "on_test_begin", "on_test_batch_begin", "on_test_batch_end", "on_test_end",
             "on_epoch_end", "on_train_end"]

    def hook(name):
        def record(*args, logs=None):
            hooks.append([name, args[0] if args else None,
                          None if logs is None else sorted(logs)])
        return record

    cb = keras.callbacks.Callback()
    for name in names:
        setattr(cb, name, hook(name))
    model = compiled()
    model.fit(x[:20], labels[:20], batch_size=10, epochs=1, shuffle=False, verbose=0,
              validation_data=(x[20:30], labels[20:30]), callbacks=[cb])
    out["hooks"] = hooks
    out["params"] = cb.params
    return out


def errors(d):
    """Keras's messages for bad input (the first line), and the warning for an unknown
    monitor."""
    x, labels = d["x"], d["labels"]
    out = {}

    def first_line(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 (recording whatever Keras raises)
            return [type(e).__name__, str(e).strip().splitlines()[0]]
        return None

    out["fit_before_compile"] = first_line(lambda: mlp(3).fit(x, labels, verbose=0))
    model = mlp(3)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    out["validation_split_dataset"] = first_line(lambda: model.fit(
        tf.data.Dataset.from_tensor_slices((x, labels)).batch(8), validation_split=0.2,
        verbose=0))

    class NonDict(keras.Model):
        def train_step(self, data):
            return 1.0

    inputs = keras.Input((4,))
    bad = NonDict(inputs, L.Dense(3)(inputs))
    bad.compile(optimizer="sgd", loss="mse")
    out["train_step_non_dict"] = first_line(lambda: bad.fit(x, d["one_hot"], verbose=0))

    model = mlp(3)
    model.compile(optimizer="sgd", loss="mse")
    out["loss_shape"] = first_line(lambda: model.fit(x, d["target"], verbose=0))

    model = mlp(3)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(x, labels, verbose=0, epochs=1, callbacks=[
            keras.callbacks.EarlyStopping(monitor="val_nope", mode="min"),
            keras.callbacks.ReduceLROnPlateau(monitor="nope", mode="min")])
    out["unknown_monitor_auto"] = first_line(lambda: model.fit(
        x, labels, verbose=0, epochs=1, callbacks=[keras.callbacks.EarlyStopping("val_nope")]))
    out["unknown_monitor"] = [str(w.message) for w in caught if "nope" in str(w.message)]
    return out


def main():
    keras.utils.set_random_seed(0)
    d = data()
    result = {
        "versions": {"tensorflow": tf.__version__, "keras": keras.__version__},
        "data": {k: v.tolist() for k, v in d.items()},
        "fit": fit_cases(d), "multi_io": multi_io(d), "custom": custom_steps(d),
        "on_batch": on_batch(d), "callbacks": callbacks(d), "errors": errors(d),
    }
    path = os.path.join(HERE, "fit_reference.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
