"""Write keras_layers2_reference.json: Keras 3's numbers for the reshaping, merging,
normalization and rescaling layers that tests/test_keras_layers2.py compares this framework
against (outputs, input gradients of a random cotangent, configs, symbolic output shapes, and
two functional models).

Run it where TensorFlow and Keras 3 are installed (the tests do not need them):
``python tests/reference/make_keras_layers2_reference.py``. Inputs and weights are drawn with
NumPy and stored with the results.
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from replay import jsonable  # noqa: E402  (this folder: the script's own)

HERE = os.path.dirname(os.path.abspath(__file__))

CF = {"data_format": "channels_first"}
# name -> (Keras class, constructor arguments, input shapes (one per input), how to draw them:
# "normal", "uint8", "ties" (the second input equals the first at half the entries) or "zero
# row" (the first example all zeros))
CASES = {
    "rescaling": ("Rescaling", {"scale": 1 / 127.5, "offset": -1.0}, [(2, 3, 4)], "uint8"),
    "rescaling_float": ("Rescaling", {"scale": 0.25, "offset": 0.5}, [(2, 3)], "normal"),
    "rescaling_channels": ("Rescaling", {"scale": [0.5, 2.0, -1.0], "offset": [0.0, 1.0, 2.0]},
                           [(2, 2, 3)], "normal"),
    "identity": ("Identity", {}, [(2, 3)], "normal"),
    "permute": ("Permute", {"dims": (2, 1)}, [(2, 3, 4)], "normal"),
    "permute_3": ("Permute", {"dims": (3, 1, 2)}, [(2, 3, 4, 5)], "normal"),
    "repeat_vector": ("RepeatVector", {"n": 3}, [(2, 4)], "normal"),
    "zero_padding1d": ("ZeroPadding1D", {}, [(2, 3, 4)], "normal"),
    "zero_padding1d_pair": ("ZeroPadding1D", {"padding": (1, 3)}, [(2, 3, 4)], "normal"),
    "zero_padding1d_cf": ("ZeroPadding1D", {"padding": 2, **CF}, [(2, 3, 4)], "normal"),
    "zero_padding2d": ("ZeroPadding2D", {}, [(2, 3, 4, 2)], "normal"),
    "zero_padding2d_int": ("ZeroPadding2D", {"padding": 2}, [(2, 3, 4, 2)], "normal"),
    "zero_padding2d_pair": ("ZeroPadding2D", {"padding": (1, 2)}, [(2, 3, 4, 2)], "normal"),
    "zero_padding2d_pairs": ("ZeroPadding2D", {"padding": ((1, 0), (2, 3))}, [(2, 3, 4, 2)],
                             "normal"),
    "zero_padding2d_cf": ("ZeroPadding2D", {"padding": ((0, 1), (2, 1)), **CF}, [(2, 2, 3, 4)],
                          "normal"),
    "cropping1d": ("Cropping1D", {}, [(2, 5, 3)], "normal"),
    "cropping1d_int": ("Cropping1D", {"cropping": 2}, [(2, 5, 3)], "normal"),
    "cropping1d_pair": ("Cropping1D", {"cropping": (2, 0)}, [(2, 5, 3)], "normal"),
    "cropping2d": ("Cropping2D", {}, [(2, 5, 6, 2)], "normal"),
    "cropping2d_int": ("Cropping2D", {"cropping": 1}, [(2, 5, 6, 2)], "normal"),
    "cropping2d_pair": ("Cropping2D", {"cropping": (1, 2)}, [(2, 5, 6, 2)], "normal"),
    "cropping2d_pairs": ("Cropping2D", {"cropping": ((1, 0), (0, 2))}, [(2, 5, 6, 2)], "normal"),
    "cropping2d_cf": ("Cropping2D", {"cropping": ((2, 1), (1, 0)), **CF}, [(2, 2, 5, 6)],
                      "normal"),
    "up_sampling1d": ("UpSampling1D", {}, [(2, 3, 4)], "normal"),
    "up_sampling1d_3": ("UpSampling1D", {"size": 3}, [(2, 3, 4)], "normal"),
    "up_sampling2d": ("UpSampling2D", {}, [(2, 3, 4, 2)], "normal"),
    "up_sampling2d_pair": ("UpSampling2D", {"size": (3, 2)}, [(2, 3, 4, 2)], "normal"),
    "up_sampling2d_cf": ("UpSampling2D", {"size": (2, 3), **CF}, [(2, 2, 3, 4)], "normal"),
    "up_sampling2d_bilinear": ("UpSampling2D", {"size": (2, 3), "interpolation": "bilinear"},
                               [(2, 3, 4, 2)], "normal"),
    "up_sampling2d_bicubic": ("UpSampling2D", {"size": 2, "interpolation": "bicubic"},
                              [(1, 3, 4, 2)], "normal"),
    "add_ranks": ("Add", {}, [(2, 3, 4), (2, 4)], "normal"),
    "subtract": ("Subtract", {}, [(2, 3, 4), (2, 3, 4)], "normal"),
    "subtract_broadcast": ("Subtract", {}, [(2, 3, 4), (2, 1, 4)], "normal"),
    "multiply": ("Multiply", {}, [(2, 3), (2, 3), (2, 3)], "normal"),
    "average": ("Average", {}, [(2, 3), (2, 3), (2, 3)], "normal"),
    "maximum_ties": ("Maximum", {}, [(2, 4), (2, 4)], "ties"),
    "minimum_ties": ("Minimum", {}, [(2, 4), (2, 4)], "ties"),
    "maximum_three": ("Maximum", {}, [(2, 4), (2, 4), (2, 4)], "normal"),
    "dot_vectors": ("Dot", {"axes": -1}, [(3, 4), (3, 4)], "normal"),
    "dot_vectors_normalized": ("Dot", {"axes": 1, "normalize": True}, [(3, 4), (3, 4)],
                               "zero row"),
    "dot_sequences": ("Dot", {"axes": (1, 1)}, [(2, 3, 4), (2, 3, 5)], "normal"),
    "dot_last": ("Dot", {"axes": 2}, [(2, 3, 4), (2, 5, 4)], "normal"),
    "dot_default_3d": ("Dot", {"axes": -1}, [(2, 3, 4), (2, 5, 4)], "normal"),
    "dot_vector_matrix": ("Dot", {"axes": (1, 1)}, [(2, 4), (2, 4, 3)], "normal"),
    "dot_matrix_vector": ("Dot", {"axes": (2, 1)}, [(2, 3, 4), (2, 4)], "normal"),
    "dot_4d": ("Dot", {"axes": (3, 1)}, [(2, 2, 3, 4), (2, 4, 2, 2)], "normal"),
    "dot_normalized": ("Dot", {"axes": (2, 2), "normalize": True}, [(2, 3, 4), (2, 2, 4)],
                       "normal"),
    "unit_normalization": ("UnitNormalization", {}, [(3, 4)], "zero row"),
    "unit_normalization_axes": ("UnitNormalization", {"axis": [1, 2]}, [(2, 3, 4)], "normal"),
    "unit_normalization_axis1": ("UnitNormalization", {"axis": 1}, [(2, 3, 4)], "normal"),
}


def draw(rng, shape):
    return rng.normal(size=shape).astype(np.float32)


def inputs_for(rng, shapes, kind):
    if kind == "uint8":
        return [rng.integers(0, 256, size=s).astype(np.uint8) for s in shapes]
    xs = [draw(rng, s) for s in shapes]
    if kind == "ties":
        same = rng.random(shapes[1]) < 0.5
        xs[1] = np.where(same, xs[0], xs[1])
    if kind == "zero row":
        xs[0][0] = 0.0
    return xs



def layer_case(rng, class_name, config, shapes, kind):
    layer = getattr(keras.layers, class_name)(**config)
    xs = inputs_for(rng, shapes, kind)
    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        tape.watch([t for t in ts if t.dtype.is_floating])
        y = layer(ts if len(ts) > 1 else ts[0])
        cotangent = draw(np.random.default_rng(1), y.shape)
        loss = tf.reduce_sum(tf.cast(y, tf.float32) * cotangent)
    floats = [t for t in ts if t.dtype.is_floating]
    grads = tape.gradient(loss, floats) if floats else []
    symbolic_inputs = [keras.Input(s[1:], dtype=x.dtype.name) for s, x in zip(shapes, xs)]
    symbolic = getattr(keras.layers, class_name)(**config)(
        symbolic_inputs if len(xs) > 1 else symbolic_inputs[0])
    return {"class": class_name, "config": jsonable(config), "x": [x.tolist() for x in xs],
            "dtype": xs[0].dtype.name, "y": y.numpy().tolist(), "y_dtype": y.dtype.name,
            "cotangent": cotangent.tolist(), "grads": [g.numpy().tolist() for g in grads],
            "keras_config": jsonable(layer.get_config()),
            "symbolic_shape": jsonable(symbolic.shape)}


def activity_regularization(rng):
    layer = keras.layers.ActivityRegularization(l1=0.1, l2=0.02)
    x = draw(rng, (4, 3))
    y = layer(x)
    return {"x": x.tolist(), "y": np.asarray(y).tolist(),
            "losses": [float(loss) for loss in layer.losses],
            "keras_config": jsonable(layer.get_config())}


def dense_weights(rng, model):
    weights = [draw(rng, w.shape) * 0.5 for w in model.weights]
    model.set_weights(weights)
    return [w.tolist() for w in weights]


def merge_model(rng):
    """A functional model with two inputs through the merges, noise (inactive) and the
    sequence reshapes: outputs and the gradients of its weights."""
    a, b = keras.Input((6,), name="a"), keras.Input((6,), name="b")
    x = keras.layers.Rescaling(2.0, offset=0.5)(a)
    d1, d2 = keras.layers.Dense(4)(x), keras.layers.Dense(4)(b)
    mixed = keras.layers.Average()([keras.layers.Maximum()([keras.layers.Multiply()([d1, d2]),
                                                            keras.layers.Subtract()([d1, d2])]),
                                    keras.layers.Minimum()([d1, d2]), d2])
    mixed = keras.layers.GaussianNoise(0.5)(keras.layers.GaussianDropout(0.3)(mixed))
    seq = keras.layers.RepeatVector(3)(keras.layers.UnitNormalization()(mixed))
    seq = keras.layers.Permute((2, 1))(keras.layers.ActivityRegularization(0.01, 0.01)(seq))
    seq = keras.layers.UpSampling1D(2)(keras.layers.Cropping1D((0, 1))(
        keras.layers.ZeroPadding1D(1)(seq)))
    seq = keras.layers.SpatialDropout1D(0.4)(seq)
    pairs = keras.layers.Dot(axes=(1, 1))([seq, seq])
    flat = keras.layers.Concatenate()([keras.layers.Flatten()(pairs), keras.layers.Identity()(d1)])
    model = keras.Model([a, b], keras.layers.Dense(2)(flat))
    return model_case(rng, model, [(5, 6), (5, 6)])


def image_model(rng):
    """An image model through the 2-D reshapes: uint8 pixels rescaled, padded, convolved,
    up-sampled, cropped and spatially dropped (inactive)."""
    pixels = keras.Input((5, 5, 3), dtype="uint8")
    x = keras.layers.Rescaling(1 / 255.0)(pixels)
    x = keras.layers.Conv2D(2, 3)(keras.layers.ZeroPadding2D(((1, 0), (1, 2)))(x))
    x = keras.layers.UpSampling2D((2, 1))(x)
    x = keras.layers.UpSampling2D(2, interpolation="bilinear")(x)
    x = keras.layers.SpatialDropout2D(0.3)(keras.layers.Cropping2D(((1, 2), (0, 1)))(x))
    model = keras.Model(pixels, keras.layers.Dense(3)(keras.layers.Flatten()(x)))
    return model_case(rng, model, [(2, 5, 5, 3)], uint8=True)


def model_case(rng, model, shapes, uint8=False):
    weights = dense_weights(rng, model)
    xs = [rng.integers(0, 256, size=s).astype(np.uint8) if uint8 else draw(rng, s)
          for s in shapes]
    with tf.GradientTape() as tape:
        y = model(xs if len(xs) > 1 else xs[0], training=False)
        cotangent = draw(np.random.default_rng(1), y.shape)
        loss = tf.reduce_sum(y * cotangent) + tf.add_n(model.losses or [tf.constant(0.0)])
    grads = tape.gradient(loss, model.trainable_weights)
    return {"x": [x.tolist() for x in xs], "weights": weights, "y": y.numpy().tolist(),
            "losses": [float(v) for v in model.losses], "cotangent": cotangent.tolist(),
            "grads": [g.numpy().tolist() for g in grads],
            "output_shape": jsonable(model.output_shape)}


def main():
    rng = np.random.default_rng(0)
    out = {"layers": {name: layer_case(rng, *case) for name, case in CASES.items()},
           "activity_regularization": activity_regularization(rng),
           "merge_model": merge_model(rng), "image_model": image_model(rng),
           "versions": {"tensorflow": tf.__version__, "keras": keras.__version__}}
    with open(os.path.join(HERE, "keras_layers2_reference.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
