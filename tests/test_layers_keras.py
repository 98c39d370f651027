"""The new layers, regularizers, variable names and functional models against Keras 3's own
numbers (recorded by tests/reference/make_keras_layers_reference.py; no TensorFlow needed)."""
import json
import pathlib

import numpy as np
import pytest

import framework as fw
import layers
from layers import (BatchNormalization, Concatenate, Dense, Embedding, Input, Model, ReLU,
                    Sequential, regularizers)

REFERENCE = json.loads((pathlib.Path(__file__).parent / "reference" /
                        "keras_layers_reference.json").read_text())
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected, dtype=np.float32),
                               **TOLERANCE)


@pytest.mark.parametrize("case", sorted(REFERENCE["layers"]))
def test_forward_gradients_and_state_match_keras(case):
    ref = REFERENCE["layers"][case]
    layer = getattr(layers, ref["class"])(**ref["config"])
    x = fw.constant(np.array(ref["x"], np.float32))
    layer.build(x.shape)
    layer.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, **ref["call"])
        loss = fw.reduce_sum(y * np.array(ref["cotangent"], np.float32))
    grads = tape.gradient(loss, [x, *layer.trainable_variables])
    close(y, ref["y"])
    close(grads[0], ref["grad_x"])
    assert len(grads) - 1 == len(ref["grad_weights"])
    for grad, expected in zip(grads[1:], ref["grad_weights"]):
        close(grad, expected)
    for variable, expected in zip(layer.variables, ref["weights_after"], strict=True):
        close(variable, expected)  # BatchNormalization's moving statistics, after the call


def test_embedding_lookup_its_gradient_and_default_initializer_match_keras():
    ref = REFERENCE["embedding"]
    layer = Embedding(7, 3)
    layer.build(None)
    layer.set_weights([np.array(ref["table"], np.float32)])
    with fw.GradientTape() as tape:
        y = layer(np.array(ref["ids"]))
        loss = fw.reduce_sum(y * np.array(ref["cotangent"], np.float32))
    close(y, ref["y"])
    close(fw.convert_to_tensor(tape.gradient(loss, layer.embeddings)), ref["grad_table"])
    fresh = Embedding(1000, 8)
    fresh.build(None)
    table = fresh.embeddings.numpy()
    bounds = ref["initializer"]
    assert bounds["minval"] <= table.min() < -0.04 and 0.04 < table.max() <= bounds["maxval"]


def test_dense_casts_uint8_pixels_to_its_dtype_as_keras():
    ref = REFERENCE["dense_uint8"]
    dense = Dense(2)
    dense.build((None, 3))
    dense.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    y = dense(np.array(ref["x"], np.uint8))
    assert y.dtype.name == ref["dtype"]
    close(y, ref["y"])


def test_regularizers_match_keras_without_a_half_factor():
    ref = REFERENCE["regularizers"]
    x = fw.constant(np.array(ref["x"], np.float32))
    made = {"l1": regularizers.L1(0.3), "l2": regularizers.L2(0.2),
            "l1l2": regularizers.L1L2(l1=0.1, l2=0.05), "l1_default": regularizers.L1(),
            "l2_default": regularizers.L2(), "l1l2_default": regularizers.L1L2()}
    for name, regularizer in made.items():
        close(regularizer(x), ref[name])


def test_dense_losses_weights_and_activity_per_batch_size_as_keras():
    ref = REFERENCE["regularizers"]["dense"]
    dense = Dense(3, kernel_regularizer=regularizers.L2(0.1), bias_regularizer=regularizers.L1(0.2),
                  activity_regularizer=regularizers.L2(0.05))
    dense.build((None, 4))
    dense.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    batch = np.array(ref["x"], np.float32)
    dense(batch)
    close([float(loss) for loss in dense.losses], ref["losses"])
    dense(batch[:2])  # the activity loss is recomputed per call, not accumulated
    close([float(loss) for loss in dense.losses], ref["losses_after_second_call"])


def test_variable_names_and_paths_as_keras_builds_them():
    ref = REFERENCE["names"]
    dense = Dense(2, name="d")
    dense.build((None, 3))
    assert [[v.name, v.path] for v in dense.variables] == ref["dense"]
    sequential = Sequential([Dense(2, name="a"), Dense(3, name="b")], name="seq")
    sequential(np.zeros((1, 3), np.float32))
    assert [[v.name, v.path] for v in sequential.variables] == ref["sequential"]

    class Net(Model):
        def __init__(self):
            super().__init__(name="net")
            self.first = Dense(2, name="first")
            self.norm = BatchNormalization(name="norm")

        def call(self, x):
            return self.norm(self.first(x))

    net = Net()
    net(np.zeros((1, 3), np.float32))
    assert [[v.name, v.path] for v in net.variables] == ref["subclassed"]


def test_functional_model_orders_layers_and_variables_as_keras_and_predicts_its_numbers():
    ref = REFERENCE["functional"]
    inputs, other = Input((3,), name="x"), Input((2,), name="z")
    late, early, side, head = (Dense(4, name="late"), Dense(4, name="early"),
                               Dense(4, name="side"), Dense(1, name="head"))
    a = early(inputs)
    b = late(ReLU(name="act")(a))
    c = side(other)
    out = head(Concatenate(name="cat")([b, c]))
    model = Model([inputs, other], out, name="branchy")
    assert [layer.name for layer in model.layers] == ref["layers"]
    assert [[v.name, v.path] for v in model.variables] == ref["variables"]
    model.set_weights([np.array(w, np.float32) for w in ref["weights"]])
    x, z = np.array(ref["x"], np.float32), np.array(ref["z"], np.float32)
    prediction = model.predict([x, z], verbose=0)
    assert isinstance(prediction, np.ndarray)
    close(prediction, ref["y"])
    close(model([x, z]), ref["y"])
