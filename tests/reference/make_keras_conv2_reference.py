"""Write keras_conv2_reference.json: Keras 3's numbers for the depthwise, separable, grouped and
transposed 1-D convolutions, GroupNormalization and PReLU that tests/test_keras_conv2.py
compares this framework against (outputs, the gradients of the input and of every weight for a
random cotangent, configs, symbolic output shapes, and one functional model).

Run it where TensorFlow and Keras 3 are installed (the tests do not need them):
``python tests/reference/make_keras_conv2_reference.py``. Inputs and weights are drawn with
NumPy, set explicitly (biases and PReLU's alpha nonzero) and stored with the results.
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from replay import jsonable  # noqa: E402  (this folder: the script's own)

HERE = os.path.dirname(os.path.abspath(__file__))

IMAGE, SEQUENCE = (2, 7, 6, 4), (2, 7, 4)
# name -> (Keras class, constructor arguments, input shape)
CASES = {
    "depthwise": ("DepthwiseConv2D", {"kernel_size": 3}, IMAGE),
    "depthwise_same_strided": ("DepthwiseConv2D", {"kernel_size": (3, 2), "strides": 2,
                                                   "padding": "same", "depth_multiplier": 2},
                               IMAGE),
    "depthwise_strided": ("DepthwiseConv2D", {"kernel_size": 2, "strides": 2,
                                              "activation": "relu"}, IMAGE),
    "depthwise_dilated": ("DepthwiseConv2D", {"kernel_size": 3, "dilation_rate": 2,
                                              "padding": "same", "depth_multiplier": 3,
                                              "use_bias": False}, IMAGE),
    "separable": ("SeparableConv2D", {"filters": 5, "kernel_size": 3}, IMAGE),
    "separable_same_strided": ("SeparableConv2D", {"filters": 3, "kernel_size": (2, 3),
                                                   "strides": 2, "padding": "same",
                                                   "depth_multiplier": 2,
                                                   "activation": "relu"}, IMAGE),
    "separable_dilated": ("SeparableConv2D", {"filters": 2, "kernel_size": 2,
                                              "dilation_rate": (1, 2), "use_bias": False},
                          IMAGE),
    "conv2d_groups": ("Conv2D", {"filters": 6, "kernel_size": 3, "groups": 2}, IMAGE),
    "conv2d_groups_depthwise": ("Conv2D", {"filters": 4, "kernel_size": 2, "groups": 4,
                                           "strides": 2, "padding": "same",
                                           "activation": "relu"}, IMAGE),
    "conv1d_groups": ("Conv1D", {"filters": 6, "kernel_size": 3, "groups": 2}, SEQUENCE),
    "conv1d_groups_causal": ("Conv1D", {"filters": 4, "kernel_size": 2, "groups": 4,
                                        "padding": "causal", "dilation_rate": 2}, SEQUENCE),
    "conv1d_transpose": ("Conv1DTranspose", {"filters": 3, "kernel_size": 3}, SEQUENCE),
    "conv1d_transpose_same_strided": ("Conv1DTranspose", {"filters": 2, "kernel_size": 4,
                                                          "strides": 2, "padding": "same"},
                                      SEQUENCE),
    "conv1d_transpose_output_padding": ("Conv1DTranspose", {"filters": 2, "kernel_size": 3,
                                                            "strides": 3, "output_padding": 1,
                                                            "activation": "tanh"}, SEQUENCE),
    "conv1d_transpose_strided": ("Conv1DTranspose", {"filters": 2, "kernel_size": 5,
                                                     "strides": 2, "use_bias": False},
                                 SEQUENCE),
    "group_normalization": ("GroupNormalization", {"groups": 2}, (2, 3, 4, 6)),
    "group_normalization_instance": ("GroupNormalization", {"groups": -1, "epsilon": 1e-5},
                                     (2, 5, 3)),
    "group_normalization_axis1": ("GroupNormalization", {"groups": 3, "axis": 1,
                                                         "center": False}, (2, 6, 5)),
    "group_normalization_layer": ("GroupNormalization", {"groups": 1, "scale": False},
                                  (3, 8)),
    "prelu": ("PReLU", {}, (2, 3, 4)),
    "prelu_shared": ("PReLU", {"shared_axes": [1, 2]}, (2, 3, 4, 5)),
    "prelu_shared_one": ("PReLU", {"shared_axes": 1}, (2, 3, 4)),
}


def draw(rng, shape):
    return rng.normal(size=shape).astype(np.float32)



def set_weights(rng, layer_or_model):
    weights = [draw(rng, w.shape) * 0.5 for w in layer_or_model.weights]
    layer_or_model.set_weights(weights)
    return [w.tolist() for w in weights]


def layer_case(rng, class_name, config, shape):
    layer = getattr(keras.layers, class_name)(**config)
    x = tf.constant(draw(rng, shape))
    layer.build(x.shape)
    weights = set_weights(rng, layer)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        cotangent = draw(np.random.default_rng(1), y.shape)
        loss = tf.reduce_sum(y * cotangent)
    grads = tape.gradient(loss, [x] + list(layer.trainable_weights))
    symbolic = getattr(keras.layers, class_name)(**config)(keras.Input(shape[1:]))
    return {"class": class_name, "config": jsonable(config), "x": x.numpy().tolist(),
            "weights": weights, "weight_names": [w.name for w in layer.weights],
            "y": y.numpy().tolist(), "cotangent": cotangent.tolist(),
            "grad_x": grads[0].numpy().tolist(),
            "grad_weights": [g.numpy().tolist() for g in grads[1:]],
            "keras_config": jsonable(layer.get_config()),
            "symbolic_shape": jsonable(symbolic.shape)}


def model_case(rng):
    """A small functional image model through every new layer: outputs and the gradients of
    its weights."""
    pixels = keras.Input((8, 8, 3))
    x = keras.layers.SeparableConv2D(8, 3, padding="same", depth_multiplier=2)(pixels)
    x = keras.layers.GroupNormalization(groups=4)(x)
    x = keras.layers.PReLU(shared_axes=[1, 2])(x)
    x = keras.layers.DepthwiseConv2D(3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2D(4, 1, groups=2)(x)
    seq = keras.layers.Reshape((16, 4))(x)
    seq = keras.layers.Conv1DTranspose(2, 3, strides=2, padding="same")(seq)
    seq = keras.layers.Conv1D(2, 3, groups=2)(seq)
    model = keras.Model(pixels, keras.layers.Dense(2)(keras.layers.Flatten()(seq)))
    weights = set_weights(rng, model)
    x = draw(rng, (3, 8, 8, 3))
    with tf.GradientTape() as tape:
        y = model(x)
        cotangent = draw(np.random.default_rng(1), y.shape)
        loss = tf.reduce_sum(y * cotangent)
    grads = tape.gradient(loss, model.trainable_weights)
    return {"x": x.tolist(), "weights": weights, "y": y.numpy().tolist(),
            "cotangent": cotangent.tolist(), "grads": [g.numpy().tolist() for g in grads],
            "output_shape": jsonable(model.output_shape)}


def main():
    rng = np.random.default_rng(0)
    out = {"layers": {name: layer_case(rng, *case) for name, case in CASES.items()},
           "model": model_case(rng),
           "versions": {"tensorflow": tf.__version__, "keras": keras.__version__}}
    with open(os.path.join(HERE, "keras_conv2_reference.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
