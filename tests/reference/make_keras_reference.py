"""Write keras_reference.json: Keras 3's numbers that tests compare this framework against.

Run it where TensorFlow and Keras 3 are installed (they are not needed by the tests):
``python tests/reference/make_keras_reference.py``. It trains a small ported model for a few
steps with each optimizer configuration, from initial weights and data drawn with NumPy, and
evaluates every loss on fixed inputs and every schedule at fixed steps.
"""
import json
import os

import keras
import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 5

OPTIMIZERS = {
    "sgd": ("SGD", {"learning_rate": 0.1}),
    "sgd_momentum": ("SGD", {"learning_rate": 0.1, "momentum": 0.9}),
    "sgd_nesterov": ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
    "adam": ("Adam", {"learning_rate": 0.01}),
    "adam_amsgrad": ("Adam", {"learning_rate": 0.01, "amsgrad": True}),
    "adamw": ("AdamW", {"learning_rate": 0.01, "weight_decay": 0.1}),
    "rmsprop": ("RMSprop", {"learning_rate": 0.01}),
    "rmsprop_centered_momentum": ("RMSprop", {"learning_rate": 0.01, "momentum": 0.5,
                                              "centered": True}),
    "adagrad": ("Adagrad", {"learning_rate": 0.1}),
    "sgd_clipnorm": ("SGD", {"learning_rate": 0.1, "clipnorm": 0.5}),
    "sgd_clipvalue": ("SGD", {"learning_rate": 0.1, "clipvalue": 0.05}),
    "adam_global_clipnorm": ("Adam", {"learning_rate": 0.01, "global_clipnorm": 0.5}),
    "sgd_exponential_decay": ("SGD", {"learning_rate": {
        "class": "ExponentialDecay", "config": {"initial_learning_rate": 0.5,
                                                "decay_steps": 2, "decay_rate": 0.5}}}),
}

SCHEDULES = {
    "exponential": ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 3,
                                         "decay_rate": 0.5}),
    "exponential_staircase": ("ExponentialDecay", {"initial_learning_rate": 0.1,
                                                   "decay_steps": 3, "decay_rate": 0.5,
                                                   "staircase": True}),
    "cosine": ("CosineDecay", {"initial_learning_rate": 0.1, "decay_steps": 10, "alpha": 0.1}),
    "cosine_warmup": ("CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 10,
                                      "warmup_target": 0.1, "warmup_steps": 4}),
    "piecewise": ("PiecewiseConstantDecay", {"boundaries": [2, 5], "values": [1.0, 0.5, 0.1]}),
}


def problem():
    rng = np.random.default_rng(0)
    weights = [rng.normal(0, 0.5, (5, 4)), rng.normal(0, 0.1, 4),
               rng.normal(0, 0.5, (4, 3)), rng.normal(0, 0.1, 3)]
    x = rng.normal(0, 1, (8, 5))
    y = rng.integers(0, 3, 8)
    return [w.astype(np.float32) for w in weights], x.astype(np.float32), y


def make_learning_rate(value):
    if isinstance(value, dict):
        return getattr(keras.optimizers.schedules, value["class"])(**value["config"])
    return value


def train(class_name, config):
    weights, x, y = problem()
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(4, activation="relu"),
                              keras.layers.Dense(3)])
    model.set_weights(weights)
    config = dict(config, learning_rate=make_learning_rate(config["learning_rate"]))
    optimizer = getattr(keras.optimizers, class_name)(**config)
    losses = []
    for _ in range(STEPS):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(
                y, model(x), from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    return {"losses": losses, "weights": [w.tolist() for w in model.get_weights()]}


def loss_values():
    rng = np.random.default_rng(1)
    logits = (rng.normal(0, 3, (4, 3))).astype(np.float32)
    logits[0] = [1000.0, -1000.0, 0.0]
    probs = tf.nn.softmax(logits).numpy()
    labels = np.array([0, 2, 1, 1])
    onehot = np.eye(3, dtype=np.float32)[labels]
    binary_logits = rng.normal(0, 3, (4, 2)).astype(np.float32)
    binary_logits[0] = [80.0, -80.0]
    binary_targets = rng.integers(0, 2, (4, 2)).astype(np.float32)
    regression = rng.normal(0, 1, (4, 2)).astype(np.float32)
    L = keras.losses
    out = {
        "inputs": {"logits": logits.tolist(), "probs": probs.tolist(), "labels": labels.tolist(),
                   "binary_logits": binary_logits.tolist(),
                   "binary_targets": binary_targets.tolist(),
                   "regression": regression.tolist()},
        "sparse_probs": L.sparse_categorical_crossentropy(labels, probs),
        "sparse_logits": L.sparse_categorical_crossentropy(labels, logits, from_logits=True),
        "categorical_probs": L.categorical_crossentropy(onehot, probs),
        "categorical_logits": L.categorical_crossentropy(onehot, logits, from_logits=True),
        "categorical_smoothing": L.categorical_crossentropy(onehot, logits, from_logits=True,
                                                           label_smoothing=0.2),
        "binary_probs": L.binary_crossentropy(binary_targets, tf.sigmoid(binary_logits)),
        "binary_logits": L.binary_crossentropy(binary_targets, binary_logits, from_logits=True),
        "binary_smoothing": L.binary_crossentropy(binary_targets, binary_logits,
                                                  from_logits=True, label_smoothing=0.1),
        "mse": L.mean_squared_error(binary_targets, regression),
        "class_sparse_mean": L.SparseCategoricalCrossentropy(from_logits=True)(labels, logits),
        "class_binary_weighted": L.BinaryCrossentropy(from_logits=True)(
            binary_targets, binary_logits, sample_weight=np.array([1.0, 0.5, 2.0, 0.0])),
        "class_mse_sum": L.MeanSquaredError(reduction="sum")(binary_targets, regression),
    }
    for key, value in out.items():
        if key != "inputs":
            out[key] = np.asarray(value).tolist()
    with tf.GradientTape() as tape:
        z = tf.constant(binary_logits)
        tape.watch(z)
        total = tf.reduce_sum(L.binary_crossentropy(binary_targets, z, from_logits=True))
    out["binary_logits_grad"] = tape.gradient(total, z).numpy().tolist()
    return out


def schedule_values():
    steps = [0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 14, 20]
    out = {"steps": steps}
    for key, (class_name, config) in SCHEDULES.items():
        schedule = getattr(keras.optimizers.schedules, class_name)(**config)
        out[key] = [float(schedule(step)) for step in steps]
    return out


def main():
    reference = {
        "about": f"Keras {keras.__version__} (TensorFlow {tf.__version__}); "
                 f"written by make_keras_reference.py",
        "problem": {"steps": STEPS},
        "optimizers": {key: dict(train(name, config), class_name=name, config=config)
                       for key, (name, config) in OPTIMIZERS.items()},
        "schedules": {"configs": {k: {"class_name": c, "config": cfg}
                                  for k, (c, cfg) in SCHEDULES.items()},
                      **schedule_values()},
        "losses": loss_values(),
    }
    with open(os.path.join(HERE, "keras_reference.json"), "w") as f:
        json.dump(reference, f, indent=1)


if __name__ == "__main__":
    main()
