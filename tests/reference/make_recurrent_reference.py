"""Record Keras 3's numbers for the recurrent layers into recurrent_reference.json.

For each case of ``recurrent_cases.CASES`` (SimpleRNN, GRU, LSTM, their cells in RNN and
StackedRNNCells, Bidirectional in every merge mode, TimeDistributed, Masking; with masks,
initial states, go_backwards, return_state): the inputs (drawn here with NumPy and stored), the
weights' names and shapes in Keras's order and the values set, every output (states included),
and the gradients of ``sum(cotangent * output)`` with respect to the inputs, the initial
states and the weights. Then a stateful LSTM called three times (``reset_states`` before the
third), Keras 3's ``hard_sigmoid``, and ``CLASSIFIER`` (Embedding(mask_zero) -> LSTM -> Dense)
trained 20 Adam steps from recorded initial weights (the gradients made dense, see
``record_classifier``): the loss of every step.
``tests/test_recurrent_keras.py`` replays them without TensorFlow. Run with TensorFlow 2.21
and Keras 3 (``/tmp/tfenv/bin/python``):

    python tests/reference/make_recurrent_reference.py
"""
import json
import os
import sys
import types

import keras
import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recurrent_cases import CASES, CLASSIFIER, make  # noqa: E402

# What the cases' class names name: Keras's layers, and Sequential (``keras.Sequential``).
KERAS = types.SimpleNamespace(**vars(keras.layers), Sequential=keras.Sequential)


def flatten(value):
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def inputs_of(case, rng):
    x = rng.normal(size=case["input"]).astype(np.float32)
    for b, t in case.get("zero_steps", ()):
        x[b, t] = 0.0
    states = [rng.normal(size=shape).astype(np.float32)
              for shape in case.get("initial_state", ())]
    return x, states


def record_case(name, case, seed):
    rng = np.random.default_rng(seed)
    x, states = inputs_of(case, rng)
    layer = make(KERAS, case["layer"])
    kwargs = {}
    if "mask" in case:
        kwargs["mask"] = tf.constant(np.array(case["mask"], dtype=bool))
    state_tensors = [tf.constant(s) for s in states]
    if states:
        kwargs["initial_state"] = state_tensors
    first = layer(x, **kwargs)
    weights = [rng.uniform(-0.6, 0.6, size=w.shape).astype(np.float32) for w in layer.weights]
    layer.set_weights(weights)
    cotangents = [rng.normal(size=o.shape).astype(np.float32) for o in flatten(first)]
    x_tensor = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x_tensor)
        tape.watch(state_tensors)
        outputs = flatten(layer(x_tensor, **kwargs))
        loss = tf.add_n([tf.reduce_sum(o * c) for o, c in zip(outputs, cotangents)])
    grads = tape.gradient(loss, [x_tensor, *state_tensors, *layer.trainable_weights])
    return {"x": x.tolist(), "initial_state": [s.tolist() for s in states],
            "weight_names": [w.name for w in layer.weights],
            "weight_shapes": [list(w.shape) for w in layer.weights],
            "weights": [w.tolist() for w in weights],
            "outputs": [np.asarray(o).tolist() for o in outputs],
            "output_masks": [None if getattr(o, "_keras_mask", None) is None
                             else np.asarray(o._keras_mask).tolist() for o in outputs],
            "cotangents": [c.tolist() for c in cotangents],
            "grads": [np.asarray(g).tolist() for g in grads]}


def record_stateful(rng):
    x = rng.normal(size=(2, 3, 2)).astype(np.float32)
    layer = keras.layers.LSTM(3, stateful=True, return_state=True)
    layer(x)
    weights = [rng.uniform(-0.6, 0.6, size=w.shape).astype(np.float32) for w in layer.weights]
    layer.set_weights(weights)
    layer.reset_states()
    calls = []
    for reset in (False, False, True):
        if reset:
            layer.reset_states()
        calls.append([np.asarray(o).tolist() for o in layer(x)])
    return {"x": x.tolist(), "weights": [w.tolist() for w in weights], "calls": calls}


def record_classifier(rng):
    spec = CLASSIFIER
    lengths = rng.integers(2, spec["steps"] + 1, size=spec["batch"])
    tokens = rng.integers(1, spec["layers"][0]["config"]["input_dim"],
                          size=(spec["batch"], spec["steps"]))
    tokens = np.where(np.arange(spec["steps"]) < lengths[:, None], tokens, 0)
    tokens[1] = np.roll(tokens[1], spec["steps"] - lengths[1])  # one row padded in front
    labels = rng.integers(0, 3, size=spec["batch"])
    model = keras.Sequential(make(KERAS, spec["layers"]))
    model(tokens)
    initial = [w.numpy().tolist() for w in model.weights]
    optimizer = keras.optimizers.Adam(spec["learning_rate"])
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses = []
    for _ in range(spec["train_steps"]):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(tokens, training=True))
        # The embedding's gradient made dense: Keras's Adam squares IndexedSlices' rows before
        # adding repeated ones, where a dense gradient squares their sum (the framework follows
        # both: tests/reference/make_sparse_optimizers_reference.py records the sparse case).
        grads = [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_weights)]
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        losses.append(float(loss))
    return {"tokens": tokens.tolist(), "labels": labels.tolist(), "initial_weights": initial,
            "weight_names": [w.name for w in model.weights], "losses": losses}


def main():
    keras.utils.set_random_seed(0)
    reference = {"versions": {"tensorflow": tf.__version__, "keras": keras.__version__},
                 "cases": {name: record_case(name, case, seed)
                           for seed, (name, case) in enumerate(CASES.items())}}
    rng = np.random.default_rng(1234)
    reference["stateful"] = record_stateful(rng)
    points = np.linspace(-4, 4, 17).astype(np.float32)
    reference["hard_sigmoid"] = {"x": points.tolist(), "y": np.asarray(
        keras.activations.hard_sigmoid(points)).tolist()}
    reference["classifier"] = record_classifier(rng)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recurrent_reference.json")
    with open(path, "w") as f:
        json.dump(reference, f)
    print(f"wrote {path}: {len(reference['cases'])} cases")


if __name__ == "__main__":
    main()
