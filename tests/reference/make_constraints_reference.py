"""Record Keras 3's weight constraints (through ``tf.keras``, TF 2.21): each constraint on a
fixed matrix, and a tape loop whose optimizer projects the constrained variables after each
update (a Dense layer's ``kernel_constraint``/``bias_constraint``, an Embedding's, and a bare
``tf.Variable(constraint=...)``). ``tests/test_constraints.py`` replays them.

    /tmp/tfenv/bin/python tests/reference/make_constraints_reference.py
"""
import json
import os

import numpy as np
import tensorflow as tf

W = np.array([[0.3, -1.2, 0.05], [2.0, 0.4, -0.7], [-0.1, 0.9, 1.6], [0.0, 0.0, 0.0]],
             np.float32)
X = np.array([[0.5, -1.0, 2.0, 0.3], [1.5, 0.2, -0.4, 1.0]], np.float32)
Y = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], np.float32)

CONSTRAINTS = {
    "NonNeg()": "keras.constraints.NonNeg()",
    "MaxNorm()": "keras.constraints.MaxNorm()",
    "MaxNorm(1.0, axis=1)": "keras.constraints.MaxNorm(1.0, axis=1)",
    "UnitNorm()": "keras.constraints.UnitNorm()",
    "UnitNorm(axis=[0, 1])": "keras.constraints.UnitNorm(axis=[0, 1])",
    "MinMaxNorm()": "keras.constraints.MinMaxNorm()",
    "MinMaxNorm(0.5, 1.5, rate=0.7, axis=1)": "keras.constraints.MinMaxNorm(0.5, 1.5, 0.7, 1)",
    "get('max_norm')": "keras.constraints.get('max_norm')",
    "get(dict)": "keras.constraints.get({'class_name': 'MinMaxNorm', "
                 "'config': {'min_value': 0.2, 'max_value': 0.4}})",
}


def dense_loop(optimizer_line, steps=3):
    keras = tf.keras
    dense = keras.layers.Dense(3, kernel_constraint=keras.constraints.MaxNorm(1.0),
                               bias_constraint="non_neg")
    dense.build((None, 4))
    dense.set_weights([W, np.array([0.1, -0.2, 0.3], np.float32)])
    table = keras.layers.Embedding(5, 3, embeddings_constraint=keras.constraints.UnitNorm(1))
    table.build((None,))
    table.set_weights([np.arange(15, dtype=np.float32).reshape(5, 3) / 10 - 0.5])
    scale = tf.Variable([1.5, -0.5, 2.0], constraint=lambda v: tf.clip_by_value(v, -1.0, 1.0))
    untouched = tf.Variable([5.0], constraint=keras.constraints.NonNeg())  # (no gradient)
    optimizer = eval(optimizer_line, {"keras": keras})
    variables = [*dense.trainable_variables, *table.trainable_variables, scale, untouched]
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            out = dense(X) * scale + table(tf.constant([1, 3]))
            loss = tf.reduce_mean(tf.square(out - Y))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        losses.append(float(loss))
    return {"losses": losses, "weights": [v.numpy().tolist() for v in variables]}


def main():
    keras = tf.keras
    out = {"tensorflow": tf.__version__, "W": W.tolist(), "X": X.tolist(), "Y": Y.tolist(),
           "constraints": {}, "loops": {}}
    for name, line in CONSTRAINTS.items():
        constraint = eval(line, {"keras": keras})
        out["constraints"][name] = {"line": line, "value": constraint(W).numpy().tolist(),
                                    "config": constraint.get_config()}
    for optimizer in ("keras.optimizers.SGD(0.5)", "keras.optimizers.Adam(0.3)"):
        out["loops"][optimizer] = dense_loop(optimizer)
    try:
        tf.Variable(1.0, constraint=3)
    except ValueError as error:
        out["not callable"] = str(error)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "constraints_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
