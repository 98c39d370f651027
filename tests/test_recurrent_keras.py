"""The recurrent layers replay Keras 3's recorded numbers (tests/reference/
make_recurrent_reference.py, TensorFlow 2.21 / Keras 3.15): outputs, states and output masks,
the weights' names and shapes in Keras's order, the gradients with respect to the inputs,
initial states and weights; a stateful LSTM across calls; hard_sigmoid; and a text classifier
trained 20 Adam steps, eagerly and under fw.function, with Keras's losses (and the same
losses bit for bit between the two)."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import framework as fw
import layers
import optimizers

sys.path.insert(0, str(Path(__file__).parent / "reference"))
from recurrent_cases import CASES, CLASSIFIER, make  # noqa: E402

REFERENCE = json.loads((Path(__file__).parent / "reference" /
                        "recurrent_reference.json").read_text())


def _flatten(value):
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _replay(name):
    case, recorded = CASES[name], REFERENCE["cases"][name]
    layer = make(layers, case["layer"])
    x = fw.constant(np.array(recorded["x"], dtype=np.float32))
    states = [fw.constant(np.array(s, dtype=np.float32)) for s in recorded["initial_state"]]
    kwargs = {}
    if "mask" in case:
        kwargs["mask"] = fw.constant(np.array(case["mask"], dtype=bool))
    if states:
        kwargs["initial_state"] = states
    layer(x, **kwargs)
    layer.set_weights([np.array(w, dtype=np.float32) for w in recorded["weights"]])
    with fw.GradientTape() as tape:
        tape.watch(x)
        tape.watch(states)
        outputs = _flatten(layer(x, **kwargs))
        loss = fw.add_n([fw.reduce_sum(o * np.array(c, dtype=np.float32))
                         for o, c in zip(outputs, recorded["cotangents"], strict=True)])
    grads = tape.gradient(loss, [x, *states, *layer.trainable_weights])
    return layer, outputs, grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_keras(name):
    recorded = REFERENCE["cases"][name]
    layer, outputs, grads = _replay(name)
    assert [v.name for v in layer.weights] == recorded["weight_names"]
    assert [list(v.shape) for v in layer.weights] == recorded["weight_shapes"]
    assert len(outputs) == len(recorded["outputs"])
    for output, expected, mask in zip(outputs, recorded["outputs"], recorded["output_masks"],
                                      strict=True):
        np.testing.assert_allclose(output.numpy(), expected, rtol=1e-5, atol=1e-6)
        got_mask = getattr(output, "_keras_mask", None)
        assert (got_mask is None) == (mask is None)
        if mask is not None:
            np.testing.assert_array_equal(got_mask.numpy(), mask)
    assert len(grads) == len(recorded["grads"])
    for grad, expected in zip(grads, recorded["grads"], strict=True):
        np.testing.assert_allclose(fw.convert_to_tensor(grad).numpy(), expected, rtol=1e-4,
                                   atol=1e-5)


def test_stateful_lstm_carries_and_resets_like_keras():
    recorded = REFERENCE["stateful"]
    x = np.array(recorded["x"], dtype=np.float32)
    layer = layers.LSTM(3, stateful=True, return_state=True)
    layer(x)
    layer.set_weights([np.array(w, dtype=np.float32) for w in recorded["weights"]])
    layer.reset_states()
    for reset, expected in zip((False, False, True), recorded["calls"], strict=True):
        if reset:
            layer.reset_states()
        for got, want in zip(layer(x), expected, strict=True):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    assert layer.weights and all(v.trainable for v in layer.weights)  # the states are no weights


def test_hard_sigmoid_is_keras_3s():
    recorded = REFERENCE["hard_sigmoid"]
    got = layers.activations.hard_sigmoid(fw.constant(np.array(recorded["x"], np.float32)))
    np.testing.assert_allclose(got.numpy(), recorded["y"], rtol=1e-6)


def _train_classifier(compiled):
    recorded = REFERENCE["classifier"]
    tokens = fw.constant(np.array(recorded["tokens"], dtype=np.int32))
    labels = fw.constant(np.array(recorded["labels"], dtype=np.int32))
    model = layers.Sequential(make(layers, CLASSIFIER["layers"]))
    model(tokens)
    assert [v.name for v in model.weights] == recorded["weight_names"]
    model.set_weights([np.array(w, dtype=np.float32) for w in recorded["initial_weights"]])
    optimizer = optimizers.Adam(CLASSIFIER["learning_rate"])
    loss_fn = fw.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(tokens, labels):
        with fw.GradientTape() as tape:
            loss = loss_fn(labels, model(tokens, training=True))
        # dense, as the reference makes the embedding's gradient (tests/test_sparse_optimizers.py
        # holds the sparse one to Keras)
        grads = [fw.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_variables)]
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    step = fw.function(step) if compiled else step
    return [float(step(tokens, labels).numpy()) for _ in range(CLASSIFIER["train_steps"])]


def test_lstm_text_classifier_trains_as_keras_eager_and_compiled():
    eager, compiled = _train_classifier(False), _train_classifier(True)
    assert eager == compiled  # bit for bit
    np.testing.assert_allclose(eager, REFERENCE["classifier"]["losses"], rtol=2e-5, atol=1e-6)
    assert eager[-1] < 0.5 * eager[0]
