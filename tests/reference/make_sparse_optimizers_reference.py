"""Write sparse_optimizers_reference.json: Keras 3's updates of an ``Embedding`` table from
its sparse gradient (``tf.IndexedSlices``) when the ids repeat.

Run it where TensorFlow and Keras 3 are installed (the tests do not need them):
``python tests/reference/make_sparse_optimizers_reference.py``. An ``Embedding(6, 3)`` looks
up ids in which rows repeat, and the loss is the mean squared distance of the looked-up vectors
to fixed targets, so each occurrence of a row contributes its own gradient row. Three steps of
``optimizer.apply`` per configuration record the table after each step and the final slots.

What this pins down: Keras 3 (TensorFlow backend) applies each update formula to the
``IndexedSlices`` themselves. Linear terms add the occurrences' rows up (as a dense gradient
would), but ``ops.square`` / ``ops.abs`` act on each occurrence's row before they are added, so
a second moment takes the sum of the squares (Adam, Nadam, RMSprop, Adagrad, Ftrl, Adadelta)
and Adamax's norm the sum of the absolute values, where the dense gradient's would take the
square (absolute value) of the sum. ``dense`` records the same steps on the dense gradient.
"""
import json
import os

import keras
import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 3

CONFIGS = {
    "sgd": ("SGD", {"learning_rate": 0.1}),
    "sgd_momentum": ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}),
    "adam": ("Adam", {"learning_rate": 0.1}),
    "adam_amsgrad": ("Adam", {"learning_rate": 0.1, "amsgrad": True}),
    "adamw": ("AdamW", {"learning_rate": 0.1}),
    "adagrad": ("Adagrad", {"learning_rate": 0.1}),
    "rmsprop": ("RMSprop", {"learning_rate": 0.1}),
    "rmsprop_centered": ("RMSprop", {"learning_rate": 0.1, "momentum": 0.5, "centered": True}),
    "adamax": ("Adamax", {"learning_rate": 0.1}),
    "nadam": ("Nadam", {"learning_rate": 0.1}),
    "ftrl": ("Ftrl", {"learning_rate": 0.1, "l1_regularization_strength": 0.01,
                      "l2_regularization_strength": 0.1,
                      "l2_shrinkage_regularization_strength": 0.05, "beta": 0.2}),
    "adadelta": ("Adadelta", {"learning_rate": 1.0}),
    "lion": ("Lion", {"learning_rate": 0.1}),
    "adam_accumulated": ("Adam", {"learning_rate": 0.1, "gradient_accumulation_steps": 2}),
}


def problem():
    rng = np.random.default_rng(27)
    table = rng.normal(0, 1, (6, 3)).astype(np.float32)
    ids = np.array([[1, 2, 1, 4], [1, 4, 0, 1]], np.int32)  # 1 four times, 4 twice, 3 and 5 never
    targets = rng.normal(0, 1, (2, 4, 3)).astype(np.float32)
    return table, ids, targets


def trajectory(class_name, kwargs, table, ids, targets, dense):
    layer = keras.layers.Embedding(6, 3)
    layer.build((None, 4))
    layer.embeddings.assign(table)
    optimizer = getattr(keras.optimizers, class_name)(**kwargs)
    tables = []
    for _ in range(STEPS):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(layer(ids) - targets))
        (grad,) = tape.gradient(loss, [layer.embeddings])
        assert isinstance(grad, tf.IndexedSlices)
        if dense:
            grad = tf.convert_to_tensor(grad)
        optimizer.apply([grad], [layer.embeddings])
        tables.append(layer.embeddings.numpy().tolist())
    slots = {v.name.split("embeddings_")[-1]: v.numpy().tolist()
             for v in optimizer.variables if v.shape == (6, 3)}
    return {"tables": tables, "slots": slots}


def main():
    table, ids, targets = problem()
    out = {"versions": {"tensorflow": tf.__version__, "keras": keras.__version__},
           "table": table.tolist(), "ids": ids.tolist(), "targets": targets.tolist(),
           "configs": {name: {"class_name": c, "kwargs": k} for name, (c, k) in CONFIGS.items()},
           "sparse": {}, "dense": {}}
    for name, (class_name, kwargs) in CONFIGS.items():
        for kind in ("sparse", "dense"):
            out[kind][name] = trajectory(class_name, kwargs, table, ids, targets,
                                         kind == "dense")
    with open(os.path.join(HERE, "sparse_optimizers_reference.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
