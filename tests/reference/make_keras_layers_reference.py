"""Write keras_layers_reference.json: Keras 3's numbers for the layers, regularizers, variable
names and functional models that tests/test_layers_keras.py compares this framework against.

Run it where TensorFlow and Keras 3 are installed (the tests do not need them):
``python tests/reference/make_keras_layers_reference.py``. Inputs and weights are drawn with
NumPy and stored with the results, so the tests rebuild the same layers with the same weights.
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (Keras class, constructor arguments, input shape, call keyword arguments)
LAYERS = {
    "softmax": ("Softmax", {}, (4, 5), {}),
    "softmax_axes": ("Softmax", {"axis": [1, 2]}, (2, 3, 4), {}),
    "activation_tanh": ("Activation", {"activation": "tanh"}, (4, 5), {}),
    "relu": ("ReLU", {}, (4, 5), {}),
    "relu_options": ("ReLU", {"max_value": 1.0, "negative_slope": 0.1, "threshold": 0.3},
                     (4, 5), {}),
    "leaky_relu": ("LeakyReLU", {}, (4, 5), {}),
    "elu": ("ELU", {"alpha": 0.7}, (4, 5), {}),
    "layer_norm": ("LayerNormalization", {}, (4, 5), {}),
    "layer_norm_axes": ("LayerNormalization", {"axis": [1, 2], "epsilon": 0.01}, (2, 3, 4), {}),
    "layer_norm_rms": ("LayerNormalization", {"rms_scaling": True}, (4, 5), {}),
    "batch_norm_training": ("BatchNormalization", {"momentum": 0.9}, (6, 5), {"training": True}),
    "batch_norm_inference": ("BatchNormalization", {}, (6, 5), {"training": False}),
    "batch_norm_axis1": ("BatchNormalization", {"axis": 1}, (4, 3, 2), {"training": True}),
    "dense_tanh": ("Dense", {"units": 3, "activation": "tanh"}, (4, 5), {}),
}


def draw(rng, shape):
    return rng.normal(size=shape).astype(np.float32)


def layer_case(rng, class_name, config, shape, call_kwargs):
    layer = getattr(keras.layers, class_name)(**config)
    x = draw(rng, shape)
    layer.build(shape)
    weights = [draw(rng, w.shape) for w in layer.weights]
    if class_name == "BatchNormalization":  # a positive moving variance
        weights[3] = np.abs(weights[3]) + 0.5
    layer.set_weights(weights)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt, **call_kwargs)
        cotangent = draw(np.random.default_rng(1), y.shape)
        loss = tf.reduce_sum(y * cotangent)
    grads = tape.gradient(loss, [xt, *layer.trainable_weights])
    return {"class": class_name, "config": config, "call": call_kwargs, "x": x.tolist(),
            "weights": [w.tolist() for w in weights], "y": y.numpy().tolist(),
            "cotangent": cotangent.tolist(), "grad_x": grads[0].numpy().tolist(),
            "grad_weights": [g.numpy().tolist() for g in grads[1:]],
            "weights_after": [w.numpy().tolist() for w in layer.weights]}


def embedding_case(rng):
    layer = keras.layers.Embedding(7, 3)
    layer.build((None, 2))
    table = draw(rng, (7, 3))
    layer.set_weights([table])
    ids = np.array([[1, 4], [4, 6], [0, 1]])
    with tf.GradientTape() as tape:
        y = layer(ids)
        cotangent = draw(np.random.default_rng(1), y.shape)
        loss = tf.reduce_sum(y * cotangent)
    grad = tf.convert_to_tensor(tape.gradient(loss, layer.embeddings))
    config = layer.get_config()["embeddings_initializer"]["config"]
    return {"ids": ids.tolist(), "table": table.tolist(), "y": y.numpy().tolist(),
            "cotangent": cotangent.tolist(), "grad_table": grad.numpy().tolist(),
            "initializer": {"minval": config["minval"], "maxval": config["maxval"]}}


def dense_uint8_case(rng):
    layer = keras.layers.Dense(2)
    layer.build((None, 3))
    weights = [draw(rng, (3, 2)), draw(rng, (2,))]
    layer.set_weights(weights)
    pixels = np.array([[0, 128, 255], [7, 9, 200]], dtype=np.uint8)
    y = layer(pixels)
    return {"x": pixels.tolist(), "weights": [w.tolist() for w in weights],
            "y": np.asarray(y).tolist(), "dtype": str(y.dtype.name if hasattr(y.dtype, "name")
                                                      else y.dtype)}


def regularizer_cases(rng):
    x = draw(rng, (3, 4))
    cases = {"x": x.tolist()}
    for name, regularizer in {"l1": keras.regularizers.L1(0.3), "l2": keras.regularizers.L2(0.2),
                              "l1l2": keras.regularizers.L1L2(l1=0.1, l2=0.05),
                              "l1_default": keras.regularizers.L1(),
                              "l2_default": keras.regularizers.L2(),
                              "l1l2_default": keras.regularizers.L1L2()}.items():
        cases[name] = float(regularizer(tf.constant(x)))
    dense = keras.layers.Dense(3, kernel_regularizer=keras.regularizers.L2(0.1),
                               bias_regularizer=keras.regularizers.L1(0.2),
                               activity_regularizer=keras.regularizers.L2(0.05))
    dense.build((None, 4))
    weights = [draw(rng, (4, 3)), draw(rng, (3,))]
    dense.set_weights(weights)
    batch = draw(rng, (5, 4))
    dense(batch)
    cases["dense"] = {"weights": [w.tolist() for w in weights], "x": batch.tolist(),
                      "losses": [float(loss) for loss in dense.losses]}
    dense(batch[:2])  # a second call replaces the activity loss of the first
    cases["dense"]["losses_after_second_call"] = [float(loss) for loss in dense.losses]
    return cases


def names():
    out = {}
    dense = keras.layers.Dense(2, name="d")
    dense.build((None, 3))
    out["dense"] = [[v.name, v.path] for v in dense.weights]
    sequential = keras.Sequential([keras.layers.Dense(2, name="a"), keras.layers.Dense(3,
                                                                                      name="b")],
                                  name="seq")
    sequential(np.zeros((1, 3), np.float32))
    out["sequential"] = [[v.name, v.path] for v in sequential.weights]

    class Net(keras.Model):
        def __init__(self):
            super().__init__(name="net")
            self.first = keras.layers.Dense(2, name="first")
            self.norm = keras.layers.BatchNormalization(name="norm")

        def call(self, x):
            return self.norm(self.first(x))

    net = Net()
    net(np.zeros((1, 3), np.float32))
    out["subclassed"] = [[v.name, v.path] for v in net.weights]
    return out


def functional():
    """A branching model whose definition order differs from Keras's layer order."""
    inputs = keras.Input((3,), name="x")
    other = keras.Input((2,), name="z")
    late = keras.layers.Dense(4, name="late")
    early = keras.layers.Dense(4, name="early")
    side = keras.layers.Dense(4, name="side")
    head = keras.layers.Dense(1, name="head")
    a = early(inputs)
    b = late(keras.layers.ReLU(name="act")(a))
    c = side(other)
    out = head(keras.layers.Concatenate(name="cat")([b, c]))
    model = keras.Model([inputs, other], out, name="branchy")
    rng = np.random.default_rng(3)
    weights = [draw(rng, w.shape) for w in model.weights]
    model.set_weights(weights)
    x, z = draw(rng, (2, 3)), draw(rng, (2, 2))
    return {"layers": [layer.name for layer in model.layers],
            "variables": [[v.name, v.path] for v in model.weights],
            "weights": [w.tolist() for w in weights], "x": x.tolist(), "z": z.tolist(),
            "y": model.predict([x, z], verbose=0).tolist()}


def main():
    rng = np.random.default_rng(0)
    reference = {
        "versions": {"keras": keras.__version__, "tensorflow": tf.__version__},
        "layers": {name: layer_case(rng, *spec) for name, spec in LAYERS.items()},
        "embedding": embedding_case(rng),
        "dense_uint8": dense_uint8_case(rng),
        "regularizers": regularizer_cases(rng),
        "names": names(),
        "functional": functional(),
    }
    with open(os.path.join(HERE, "keras_layers_reference.json"), "w") as f:
        json.dump(reference, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
