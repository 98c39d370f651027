"""Record TensorFlow's and Keras's numbers for convolution and pooling into conv_reference.json.

For each case of ``tf.nn.conv2d`` / ``conv2d_transpose`` / ``max_pool2d`` / ``avg_pool2d`` and
``conv1d`` / ``max_pool1d`` / ``avg_pool1d``: the inputs (drawn here with
NumPy and stored), the output, and the gradients of ``sum(cotangent * output)`` for the input
(and the filters); for the Keras layers ``Conv2D``, ``Conv2DTranspose``, ``MaxPooling2D``,
``AveragePooling2D``, ``GlobalAveragePooling2D``, ``GlobalMaxPooling2D`` and their 1-D forms
(``Conv1D`` with causal padding too): the output for stored weights, the output
shape and ``get_config()``. ``tests/test_convolution.py`` replays them without TensorFlow.
Run with TensorFlow 2.21 and Keras 3 (``/work/tfenv/bin/python``):

    python tests/reference/make_conv_reference.py
"""
import json
import os

import keras
import numpy as np
import tensorflow as tf

CONV = [  # (input shape, filter shape, strides, padding, dilations)
    ((2, 6, 7, 3), (3, 3, 3, 4), 1, "VALID", 1),
    ((2, 6, 7, 3), (3, 3, 3, 4), 1, "SAME", 1),
    ((2, 7, 6, 2), (3, 2, 2, 3), 2, "SAME", 1),
    ((1, 8, 8, 1), (2, 2, 1, 2), (1, 2, 3, 1), "VALID", 1),
    ((2, 7, 7, 2), (3, 3, 2, 2), 1, "SAME", 2),
    ((1, 5, 6, 2), (2, 3, 2, 3), 1, [[0, 0], [1, 2], [0, 1], [0, 0]], 1),
]
TRANSPOSE = [  # (input shape, filter shape, output shape, strides, padding, dilations)
    ((2, 5, 5, 3), (3, 3, 4, 3), (2, 10, 10, 4), 2, "SAME", 1),
    ((2, 5, 4, 3), (3, 2, 2, 3), (2, 11, 8, 2), 2, "VALID", 1),
    ((1, 4, 4, 2), (4, 4, 3, 2), (1, 8, 8, 3), 2, "SAME", 1),
    ((1, 5, 5, 2), (3, 3, 2, 2), (1, 9, 9, 2), 1, "VALID", 2),
    ((1, 3, 3, 1), (2, 2, 2, 1), (1, 9, 9, 2), 3, "VALID", 1),
]
POOL = [  # (input shape, ksize, strides, padding)
    ((2, 6, 7, 3), 2, 2, "VALID"),
    ((2, 7, 7, 2), 3, 2, "SAME"),
    ((1, 5, 8, 1), (2, 3), (1, 2), "SAME"),
    ((2, 6, 6, 2), 3, 1, "VALID"),
]
CONV1D = [  # (input shape, filter shape, stride, padding, dilations)
    ((2, 9, 3), (3, 3, 4), 1, "VALID", 1),
    ((2, 9, 3), (3, 3, 4), 2, "SAME", 1),
    ((1, 10, 2), (2, 2, 3), 1, "SAME", 3),
    ((2, 6, 2), (3, 2, 2), 3, "VALID", 1),
]
POOL1D = [  # (input shape, ksize, strides, padding)
    ((2, 9, 3), 2, 2, "VALID"),
    ((2, 8, 2), 3, 2, "SAME"),
]
LAYERS = [  # (class name, constructor arguments, input shape)
    ("Conv2D", {"filters": 3, "kernel_size": 3, "activation": "relu"}, (2, 7, 6, 2)),
    ("Conv2D", {"filters": 2, "kernel_size": (2, 3), "strides": 2, "padding": "same"},
     (2, 7, 6, 2)),
    ("Conv2D", {"filters": 2, "kernel_size": 3, "dilation_rate": 2, "use_bias": False},
     (1, 8, 8, 1)),
    ("MaxPooling2D", {}, (2, 7, 6, 2)),
    ("MaxPooling2D", {"pool_size": 3, "strides": 2, "padding": "same"}, (2, 7, 6, 2)),
    ("AveragePooling2D", {"pool_size": (2, 3), "padding": "same"}, (2, 7, 6, 2)),
    ("GlobalAveragePooling2D", {}, (2, 5, 4, 3)),
    ("GlobalMaxPooling2D", {"keepdims": True}, (2, 5, 4, 3)),
    ("Conv2DTranspose", {"filters": 3, "kernel_size": 3, "strides": 2, "padding": "same",
                         "activation": "tanh"}, (2, 4, 5, 2)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": (2, 3), "strides": 2}, (1, 3, 4, 2)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same",
                         "output_padding": 0, "use_bias": False}, (1, 4, 4, 3)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 3, "strides": 3, "padding": "valid",
                         "output_padding": (1, 2)}, (1, 3, 3, 1)),
    ("Conv1D", {"filters": 3, "kernel_size": 3, "activation": "relu"}, (2, 9, 2)),
    ("Conv1D", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"}, (2, 9, 2)),
    ("Conv1D", {"filters": 2, "kernel_size": 2, "padding": "causal", "dilation_rate": 2,
                "use_bias": False}, (1, 8, 3)),
    ("MaxPooling1D", {}, (2, 9, 2)),
    ("AveragePooling1D", {"pool_size": 3, "strides": 2, "padding": "same"}, (2, 8, 2)),
    ("GlobalAveragePooling1D", {}, (2, 5, 3)),
    ("GlobalMaxPooling1D", {"keepdims": True}, (2, 5, 3)),
]


def listed(array):
    return np.asarray(array).tolist()


def recorded(rng, op, fn, x, w=None, **fields):
    """A case of ``op``: its inputs, ``fields``, the output of ``fn`` on them, a cotangent drawn
    for it and the gradients of ``sum(cotangent * output)``."""
    tensors = [tf.constant(x)] + ([] if w is None else [tf.constant(w)])
    with tf.GradientTape() as tape:
        tape.watch(tensors)
        out = fn(*tensors)
        cotangent = rng.standard_normal(out.shape).astype(np.float32)
        total = tf.reduce_sum(out * cotangent)
    grads = tape.gradient(total, tensors)
    case = {"op": op, "x": listed(x), **fields, "out": listed(out),
            "cotangent": listed(cotangent), "grad_x": listed(grads[0])}
    if w is not None:
        case.update(filters=listed(w), grad_filters=listed(grads[1]))
    return case


def op_cases(rng):
    cases = []
    draw = lambda shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    for shape, fshape, strides, padding, dilations in CONV:
        cases.append(recorded(
            rng, "conv2d", lambda x, w: tf.nn.conv2d(x, w, strides, padding, dilations=dilations),
            draw(shape), draw(fshape), strides=strides, padding=padding, dilations=dilations))
    for shape, fshape, out_shape, strides, padding, dilations in TRANSPOSE:
        cases.append(recorded(
            rng, "conv2d_transpose", lambda x, w: tf.nn.conv2d_transpose(
                x, w, out_shape, strides, padding, dilations=dilations),
            draw(shape), draw(fshape), output_shape=list(out_shape), strides=strides,
            padding=padding, dilations=dilations))
    for op in ("max_pool2d", "avg_pool2d"):
        for shape, ksize, strides, padding in POOL:
            cases.append(recorded(
                rng, op, lambda x: getattr(tf.nn, op)(x, ksize, strides, padding), draw(shape),
                ksize=ksize, strides=strides, padding=padding))
    for shape, fshape, stride, padding, dilations in CONV1D:
        cases.append(recorded(
            rng, "conv1d", lambda x, w: tf.nn.conv1d(x, w, stride, padding, dilations=dilations),
            draw(shape), draw(fshape), strides=stride, padding=padding, dilations=dilations))
    for op in ("max_pool1d", "avg_pool1d"):
        for shape, ksize, strides, padding in POOL1D:
            cases.append(recorded(
                rng, op, lambda x: getattr(tf.nn, op)(x, ksize, strides, padding), draw(shape),
                ksize=ksize, strides=strides, padding=padding))
    return cases


def layer_cases(rng):
    cases = []
    for name, kwargs, shape in LAYERS:
        layer = getattr(keras.layers, name)(**kwargs)
        x = rng.standard_normal(shape).astype(np.float32)
        layer.build(shape)
        weights = [rng.standard_normal(w.shape).astype(np.float32) for w in layer.get_weights()]
        layer.set_weights(weights)
        config = {k: (list(v) if isinstance(v, tuple) else v) for k, v in layer.get_config().items()
                  if k not in ("name", "dtype", "kernel_initializer", "bias_initializer")}
        cases.append({"layer": name, "kwargs": kwargs, "x": listed(x),
                      "weights": [listed(w) for w in weights], "out": listed(layer(x)),
                      "output_shape": list(layer.compute_output_shape(shape)),
                      "config": config})
    return cases


def main():
    rng = np.random.default_rng(2026)
    record = {"ops": op_cases(rng), "layers": layer_cases(rng), "tensorflow": tf.__version__,
              "keras": keras.__version__}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_reference.json")
    with open(path, "w") as file:
        json.dump(record, file)
        file.write("\n")


if __name__ == "__main__":
    main()
