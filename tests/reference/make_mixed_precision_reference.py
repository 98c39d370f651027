"""Record Keras 3's mixed precision (through ``tf.keras``, TF 2.21): the ``mixed_float16``
policy's dtypes, and a hand-written tape loop with ``LossScaleOptimizer`` (Keras 3's API:
``scale_loss`` in the tape, ``apply_gradients`` on the scaled gradients) including a step whose
float16 activations overflow, which is skipped and halves the scale.
``tests/test_mixed_precision.py`` replays it.

    /tmp/tfenv/bin/python tests/reference/make_mixed_precision_reference.py
"""
import json
import os

import numpy as np
import tensorflow as tf

keras = tf.keras
RNG = np.random.default_rng(5)
X = RNG.standard_normal((6, 4)).astype(np.float32)
Y = np.array([0, 2, 1, 1, 0, 2])
WEIGHTS = [RNG.standard_normal((4, 8)).astype(np.float32) * 0.5,
           RNG.standard_normal(8).astype(np.float32) * 0.1,
           RNG.standard_normal((8, 3)).astype(np.float32) * 0.5,
           RNG.standard_normal(3).astype(np.float32) * 0.1]
# the inputs of each step: the 4th overflows float16 (activations of ~1e5)
SCALES = [1.0, 1.0, 1.0, 3e4, 1.0, 1.0]

LINES = {
    "Policy compute_dtype": "keras.mixed_precision.Policy('mixed_float16').compute_dtype",
    "Policy variable_dtype": "keras.mixed_precision.Policy('mixed_float16').variable_dtype",
    "Policy float64": "(keras.mixed_precision.Policy('float64').compute_dtype, "
                      "keras.mixed_precision.Policy('float64').variable_dtype)",
    "Policy bad": "keras.mixed_precision.Policy('float8')",
    "global_policy default": "keras.mixed_precision.global_policy().name",
    "LossScaleOptimizer dynamic=False": "keras.mixed_precision.LossScaleOptimizer("
                                        "keras.optimizers.SGD(), dynamic=False)",
    "LossScaleOptimizer clipnorm": "keras.mixed_precision.LossScaleOptimizer("
                                   "keras.optimizers.SGD(), clipnorm=1.0)",
    "LossScaleOptimizer other": "keras.mixed_precision.LossScaleOptimizer("
                                "keras.optimizers.SGD(), foo=1)",
    "scale_loss": "float(keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), "
                  "initial_scale=8.0).scale_loss(tf.constant(0.5)))",
}


def lines():
    out = {}
    for name, line in LINES.items():
        try:
            out[name] = {"line": line, "result": eval(line)}
        except Exception as error:  # noqa: BLE001 - the exception is the recorded answer
            out[name] = {"line": line, "error": type(error).__name__, "message": str(error)}
    return out


def loop():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                                  keras.layers.Dense(3),
                                  keras.layers.Activation("linear", dtype="float32")])
        dense = model.layers[0]
        facts = {"compute_dtype": dense.compute_dtype, "variable_dtype": dense.variable_dtype,
                 "kernel dtype": dense.kernel.dtype, "policy": dense.dtype_policy.name,
                 "hidden dtype": model.layers[1](dense(X)).dtype.name,
                 "output dtype": model(X).dtype.name}
    finally:
        keras.mixed_precision.set_global_policy("float32")
    model.set_weights(WEIGHTS)
    optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1),
                                                         dynamic_growth_steps=2)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    steps = []
    for scale in SCALES:
        with tf.GradientTape() as tape:
            loss = loss_fn(Y, model(X * scale))
            scaled = optimizer.scale_loss(loss)
        grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        steps.append({"loss": float(loss), "scaled": float(scaled),
                      "loss dtype": loss.dtype.name,
                      "grad dtypes": [g.dtype.name for g in grads],
                      "scale after": float(optimizer.dynamic_scale.numpy()),
                      "iterations after": int(optimizer.iterations.numpy())})
    return {"facts": facts, "steps": steps,
            "weights": [w.numpy().tolist() for w in model.trainable_variables]}


if __name__ == "__main__":
    out = {"tensorflow": tf.__version__, "X": X.tolist(), "Y": Y.tolist(),
           "weights": [w.tolist() for w in WEIGHTS], "scales": SCALES, "lines": lines(),
           "loop": loop()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "mixed_precision_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {path}")
