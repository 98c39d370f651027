"""Record the TensorFlow 2.21 / Keras 3 behaviours that ports from TF2 rely on
(``ports_reference.json``).

Run with the TensorFlow environment, from the repository root:

    /tmp/tfenv/bin/python tests/reference/make_ports_reference.py

- ``divide``: the dtype and values of true division of every integer dtype (``/`` on a tensor
  and a Python int, a NumPy array or another tensor, either side; ``tf.divide``,
  ``tf.math.truediv``, ``tf.math.divide``), and what it refuses; ``uint8_dense``: uint8 images
  divided by 255 fed to a float32 ``Dense``.
- ``creation``: ``tf.zeros`` / ``tf.ones`` with a positional second argument (TensorFlow's
  dtype enum values included): the dtype and shape, or the error.
- ``cnn``: a small Keras CNN on ``Input(shape=(None, None, 3))``: its symbolic shapes, its
  weights and its outputs on two spatial sizes.
- ``products``: the gradients (orders 1 and 2) of ``cumprod`` (every ``exclusive`` /
  ``reverse``, each axis) and ``reduce_prod`` at float64 inputs with one zero, two zeros and
  none (where TensorFlow's division by the input, ``div_no_nan``, is exact).
- ``names``: ``tf.Variable(...).name`` outside and inside ``tf.name_scope`` and a module's
  ``name_scope``, a Keras layer's weight ``name`` / ``path`` inside a scope, and a tf.Variable
  made in a Keras layer's ``build``.

``tests/test_port_behaviours.py`` replays every entry on ``framework``.
"""
import json
import os

import keras
import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ports_reference.json")
INTEGERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def outcome(fn):
    """``{"dtype", "shape", "value"}`` of ``fn()``'s tensor, or ``{"raises": class name}``."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the class is what is recorded
        return {"raises": type(e).__name__, "message": str(e).splitlines()[0]}
    value = out.numpy()
    return {"dtype": out.dtype.name, "shape": list(out.shape),
            "value": value.tolist() if value.dtype.kind not in "SOU" else None}


# --- true division ---------------------------------------------------------------------------
LEFT, RIGHT = [3, 4, 100], [2, 8, 5]


def operand(kind, values, dtype):
    """The operand a case names: ``tensor``, ``int`` (a Python int), ``numpy`` (an array of the
    dtype), ``numpy_int64`` (a NumPy int64 array), ``list``."""
    if kind == "tensor":
        return tf.constant(np.array(values, dtype))
    if kind == "int":
        return values[0]
    if kind == "numpy":
        return np.array(values, dtype)
    if kind == "numpy_int64":
        return np.array(values, np.int64)
    return list(values)


DIVISIONS = [("operator", "tensor", "tensor"), ("operator", "tensor", "int"),
             ("operator", "int", "tensor"), ("operator", "tensor", "numpy"),
             ("operator", "numpy", "tensor"), ("operator", "tensor", "numpy_int64"),
             ("operator", "tensor", "list"), ("operator", "list", "tensor"),
             ("divide", "tensor", "tensor"), ("divide", "tensor", "int"),
             ("divide", "int", "tensor"), ("divide", "numpy", "int"),
             ("divide", "numpy", "numpy"), ("math.truediv", "tensor", "tensor"),
             ("math.truediv", "tensor", "int"), ("math.truediv", "numpy", "int"),
             ("math.divide", "tensor", "tensor"), ("math.divide", "int", "tensor")]


def resolve(root, path):
    for part in path.split("."):
        root = getattr(root, part)
    return root


def divide(op, x, y):
    return x / y if op == "operator" else resolve(tf, op)(x, y)


def division_cases():
    cases = []
    for dtype in INTEGERS:
        for op, left, right in DIVISIONS:
            x, y = operand(left, LEFT, dtype), operand(right, RIGHT, dtype)
            cases.append({"op": op, "input_dtype": dtype, "left": left, "right": right,
                          **outcome(lambda: divide(op, x, y))})
    # Python numbers alone, floats, and what TensorFlow refuses
    for op, x, y in [("divide", 7, 2), ("divide", 7.0, 2), ("math.truediv", 7, 2)]:
        cases.append({"op": op, "python": [x, y], **outcome(lambda: divide(op, x, y))})
    for dtype in ["float16", "float32", "float64"]:
        x, y = tf.constant(np.array(LEFT, dtype)), tf.constant(np.array(RIGHT, dtype))
        cases.append({"op": "operator", "input_dtype": dtype, "left": "tensor",
                      "right": "tensor",
                      **outcome(lambda: x / y)})
    x8 = tf.constant(np.array(LEFT, np.int8))
    cases.append({"op": "operator", "input_dtype": "int8", "left": "tensor", "right": "float",
                  **outcome(lambda: x8 / 2.5)})
    cases.append({"op": "operator", "input_dtype": "int8", "left": "tensor",
                  "right": "int32_tensor",
                  **outcome(lambda: x8 / tf.constant(RIGHT))})
    flags = tf.constant([True, False, True])
    cases.append({"op": "operator", "input_dtype": "bool", "left": "tensor", "right": "tensor",
                  **outcome(lambda: flags / flags)})
    return cases


def uint8_dense():
    """uint8 images / 255 into a Dense of float32 weights (Keras's default dtype)."""
    rng = np.random.default_rng(29)
    images = rng.integers(0, 256, (2, 6), dtype=np.uint8)
    kernel = rng.standard_normal((6, 3)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    dense = keras.layers.Dense(3)
    scaled = tf.constant(images) / 255
    dense.build((None, 6))
    dense.set_weights([kernel, bias])
    out = dense(scaled)
    return {"images": images.tolist(), "kernel": kernel.tolist(), "bias": bias.tolist(),
            "scaled_dtype": scaled.dtype.name, "output_dtype": out.dtype.name,
            "output": out.numpy().tolist()}


# --- zeros / ones with a positional dtype ------------------------------------------------------
CREATION_ARGS = [[1, 1], [[2], 3], [2, 2], [[2, 2], 1], [[2], 9], [[2], 4], [[2], 5], [[2], 6],
                 [[2], 10], [[2], 17], [[2], 19], [[2], 22], [[2], 23], [[2], 101], [[2], 103],
                 [[2], 0], [[2], 100], [[2], 1.0], [[2], True], [[2], None], [[2], "int32"],
                 [[2], "float"], [[2], "float32x"], [[], 3], [[2], 7]]


def creation_cases():
    cases = []
    for fn in ("zeros", "ones"):
        for args in CREATION_ARGS:
            cases.append({"fn": fn, "args": args,
                          **outcome(lambda: getattr(tf, fn)(*args))})
    return cases


# --- a CNN on unknown spatial sizes --------------------------------------------------------------
def cnn():
    keras.utils.set_random_seed(29)
    inputs = keras.Input(shape=(None, None, 3))
    x = keras.layers.Conv2D(4, 3, activation="relu")(inputs)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(5, 3, padding="same", strides=2)(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(2)(x)
    model = keras.Model(inputs, outputs)
    rng = np.random.default_rng(7)
    weights = [rng.standard_normal(w.shape).astype(np.float32) * 0.5
               for w in model.get_weights()]
    model.set_weights(weights)
    runs = []
    for size in [(2, 9, 9, 3), (1, 13, 7, 3)]:
        images = rng.standard_normal(size).astype(np.float32)
        runs.append({"input": images.tolist(),
                     "output": model(images).numpy().tolist()})
    return {"input_shape": list(model.input_shape), "output_shape": list(model.output_shape),
            "layer_output_shapes": [list(layer.output.shape) for layer in model.layers],
            "weights": [w.tolist() for w in weights], "runs": runs}


# --- exact gradients of products at zeros ------------------------------------------------------
POINTS = {"one_zero": [[2.0, 0.0, 3.0, -1.5], [0.5, 4.0, -2.0, 1.25], [1.5, -0.5, 0.0, 2.0]],
          "two_zeros": [[2.0, 0.0, 3.0, 0.0], [0.5, 4.0, -2.0, 1.25], [0.0, -0.5, 1.5, 2.0]],
          "no_zeros": [[2.0, 0.7, 3.0, -1.5], [0.5, 4.0, -2.0, 1.25], [1.5, -0.5, 0.9, 2.0]]}


def gradients(fn, x, weights_seed):
    """``fn(x)``, the gradient of ``sum(w * fn(x))`` and the gradient of
    ``sum(v * gradient)`` for fixed ``w`` and ``v`` (float64)."""
    rng = np.random.default_rng(weights_seed)
    x = tf.constant(x, tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
            w = tf.constant(rng.standard_normal(y.shape.as_list()), tf.float64)
            total = tf.reduce_sum(w * y)
        g = inner.gradient(total, x)
        v = tf.constant(rng.standard_normal(x.shape.as_list()), tf.float64)
        second = tf.reduce_sum(v * g)
    g2 = outer.gradient(second, x)
    return {"input": x.numpy().tolist(), "output": y.numpy().tolist(),
            "weights": w.numpy().tolist(),
            "directions": v.numpy().tolist(), "grad": g.numpy().tolist(),
            "grad2": g2.numpy().tolist()}


def product_cases():
    cases = []
    for point, x in POINTS.items():
        for axis in (0, 1, -1):
            for exclusive in (False, True):
                for reverse in (False, True):
                    kwargs = {"axis": axis, "exclusive": exclusive, "reverse": reverse}
                    cases.append({"op": "cumprod", "point": point, "kwargs": kwargs,
                                  **gradients(lambda t: tf.math.cumprod(t, **kwargs), x,
                                              len(cases))})
        for kwargs in ({"axis": None}, {"axis": 1}, {"axis": 0, "keepdims": True},
                       {"axis": [0, 1]}):
            cases.append({"op": "reduce_prod", "point": point, "kwargs": kwargs,
                          **gradients(lambda t: tf.reduce_prod(t, **kwargs), x, len(cases))})
    return cases


# --- variable names ------------------------------------------------------------------------------
class Scaled(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = tf.Variable(1.0, name="x")
            self.v = tf.Variable(2.0)


class Outer(tf.Module):
    def __init__(self):
        super().__init__(name="outer_module")
        with self.name_scope:
            self.inner = Scaled(name="inner_module")


class Holder(keras.layers.Layer):
    """A Keras layer whose build makes a tf.Variable beside its own weight."""

    def build(self, input_shape):
        self.tv = tf.Variable(1.0, name="tv")
        self.k = self.add_weight(shape=(), name="k")

    def call(self, x):
        return x * self.k * self.tv


class Wrapper(keras.Model):
    def __init__(self):
        super().__init__(name="outer")
        self.inner = Holder(name="inner")

    def call(self, x):
        return self.inner(x)


def keras_build():
    """``[tf.Variable name, the weight's path]`` for a layer built directly, by its first call,
    inside a subclassed model and inside ``tf.name_scope``."""
    built = Holder(name="built")
    built.build(None)
    called = Holder(name="called")
    called(tf.ones((1,)))
    wrapper = Wrapper()
    wrapper(tf.ones((1,)))
    with tf.name_scope("top"):
        scoped = Holder(name="scoped")
        scoped.build(None)
    return {key: [layer.tv.name, layer.k.path] for key, layer in
            [("built", built), ("called", called), ("in_model", wrapper.inner),
             ("in_scope", scoped)]}


def names():
    entries = {"plain": tf.Variable(1.0, name="x").name, "unnamed": tf.Variable(1.0).name,
               "with_colon": tf.Variable(1.0, name="x:0").name}
    with tf.name_scope("model") as scope:
        entries["scope_value"] = scope
        entries["in_scope"] = tf.Variable(1.0, name="x").name
        entries["unnamed_in_scope"] = tf.Variable(1.0).name
        with tf.name_scope("inner") as inner:
            entries["nested_scope_value"] = inner
            entries["nested"] = tf.Variable(1.0, name="x").name
        with tf.name_scope("top/") as absolute:
            entries["absolute_scope_value"] = absolute
            entries["absolute"] = tf.Variable(1.0, name="x").name
        with tf.name_scope(""):
            entries["reset"] = tf.Variable(1.0, name="x").name
        module = Scaled(name="in_model")
        dense = keras.layers.Dense(2, name="dense_in_scope")
        dense.build((None, 3))
    entries["after_scope"] = tf.Variable(1.0, name="x").name
    entries["module"] = [Scaled(name="model").w.name, Scaled(name="model").v.name,
                         Scaled(name="model").name_scope.name]
    entries["default_module"] = [Scaled().w.name, Scaled().name_scope.name]
    entries["module_in_scope"] = [module.w.name, module.name_scope.name]
    outer = Outer()
    entries["nested_modules"] = [outer.inner.w.name, outer.inner.name_scope.name]
    entries["keras_in_scope"] = [dense.kernel.name, dense.kernel.path, dense.bias.path]
    entries["keras_build"] = keras_build()
    try:
        with tf.name_scope(None):
            pass
    except ValueError as e:
        entries["none_scope"] = {"raises": "ValueError", "message": str(e)}
    return entries


def main():
    reference = {"tensorflow": tf.__version__, "keras": keras.__version__,
                 "divide": division_cases(), "uint8_dense": uint8_dense(),
                 "creation": creation_cases(), "cnn": cnn(), "products": product_cases(),
                 "names": names()}
    with open(OUT, "w") as f:
        json.dump(reference, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
