"""Record TensorFlow's numbers and messages for ``tf.image``, ``tf.TensorArray`` and
``tf.numpy_function`` / ``tf.py_function`` into tfpieces_reference.json.

``resize``: for each case (input shape and dtype, size, method, antialias,
preserve_aspect_ratio) the input (drawn here and stored), the output, its dtype, and where
TensorFlow has a gradient, that of ``sum(cotangent * output)`` for the images. The other
``tf.image`` functions: inputs and outputs. ``TensorArray``: the messages of its errors and a
loop's stacked result with its gradient. ``tests/test_tfpieces.py`` replays them without
TensorFlow. Run with TensorFlow 2.21 (``/tmp/tfenv/bin/python``):

    python tests/reference/make_tfpieces_reference.py
"""
import json
import os

import numpy as np
import tensorflow as tf

import tensor_array_misuses  # (this folder: the script's own)

RESIZE = [  # (input shape, dtype, size, method, antialias, preserve_aspect_ratio)
    ((1, 4, 5, 2), "float32", (7, 9), "bilinear", False, False),
    ((2, 6, 7, 1), "float32", (3, 4), "bilinear", False, False),
    ((5, 4, 3), "float32", (8, 2), "bilinear", False, False),
    ((1, 9, 7, 2), "float32", (4, 3), "bilinear", True, False),
    ((1, 4, 5, 2), "float32", (7, 9), "bilinear", True, False),
    ((1, 4, 5, 2), "float32", (7, 9), "nearest", False, False),
    ((2, 7, 6, 1), "float32", (3, 4), "nearest", False, False),
    ((5, 4, 3), "uint8", (9, 7), "nearest", False, False),
    ((1, 4, 5, 2), "float32", (7, 9), "area", False, False),
    ((2, 7, 9, 1), "float32", (3, 4), "area", False, False),
    ((6, 6, 2), "float32", (4, 5), "area", False, False),
    ((1, 4, 5, 2), "float32", (7, 9), "bicubic", False, False),
    ((2, 8, 7, 1), "float32", (3, 5), "bicubic", False, False),
    ((3, 3, 1), "float32", (10, 10), "bicubic", False, False),
    ((1, 9, 8, 2), "float32", (4, 3), "bicubic", True, False),
    ((1, 9, 8, 1), "float32", (4, 5), "lanczos3", False, False),
    ((1, 5, 4, 1), "float32", (9, 7), "lanczos5", True, False),
    ((1, 9, 8, 1), "float32", (4, 5), "gaussian", True, False),
    ((1, 5, 8, 1), "float32", (7, 6), "mitchellcubic", False, False),
    ((5, 4, 3), "uint8", (9, 7), "bilinear", False, False),
    ((4, 6, 1), "float64", (5, 3), "bilinear", False, False),
    ((4, 6, 1), "float32", (10, 20), "bilinear", False, True),
    ((7, 5, 1), "float32", (4, 9), "area", False, True),
    ((5, 5, 1), "float32", (5, 5), "bicubic", False, False),
]
CONVERT = [  # (values, dtype, target dtype, saturate)
    ([[0, 1, 127, 200, 255]], "uint8", "float32", False),
    ([[0, 1, 127, 200, 255]], "uint8", "int16", False),
    ([[0, 1000, 32767, -5, -32768]], "int16", "uint8", False),
    ([[0, 1000, 32767, -5, -32768]], "int16", "uint8", True),
    ([[0, 1000, 32767, -5]], "int16", "int32", False),
    ([[-128, -1, 0, 5, 127]], "int8", "float64", False),
    ([[0.0, 0.25, 0.5, 0.999, 1.0, 1.5, -0.2]], "float32", "uint8", False),
    ([[0.0, 0.25, 0.5, 0.999, 1.0, 1.5, -0.2]], "float32", "uint8", True),
    ([[0.0, 0.25, 0.5, 0.999, 1.0]], "float32", "int16", False),
    ([[0.0, 0.25, 0.5]], "float32", "float64", False),
    ([[0.0, 0.25, 0.5]], "float64", "float16", False),
    ([[7, 8]], "uint8", "uint8", False),
]


def listed(array):
    return np.asarray(array).tolist()


def resize_cases(rng):
    cases = []
    for shape, dtype, size, method, antialias, preserve in RESIZE:
        if dtype == "uint8":
            x = rng.integers(0, 256, shape).astype(np.uint8)
        else:
            x = rng.standard_normal(shape).astype(dtype)
        images = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(images)
            out = tf.image.resize(images, size, method=method, antialias=antialias,
                                  preserve_aspect_ratio=preserve)
            cotangent = rng.standard_normal(out.shape).astype(out.dtype.as_numpy_dtype) \
                if out.dtype.is_floating else None
            total = tf.reduce_sum(out * cotangent) if cotangent is not None else None
        case = {"shape": list(shape), "dtype": dtype, "size": list(size), "method": method,
                "antialias": antialias, "preserve_aspect_ratio": preserve, "x": listed(x),
                "out": listed(out), "out_dtype": out.dtype.name}
        if total is not None and dtype != "uint8":
            case["cotangent"] = listed(cotangent)
            try:
                case["grad"] = listed(tape.gradient(total, images))
            except LookupError:  # (area: TensorFlow registers no gradient)
                case["grad"] = None
        cases.append(case)
    return cases


def convert_cases():
    cases = []
    for values, dtype, target, saturate in CONVERT:
        out = tf.image.convert_image_dtype(tf.constant(values, dtype=dtype), target,
                                           saturate=saturate)
        cases.append({"x": values, "dtype": dtype, "target": target, "saturate": saturate,
                      "out": listed(out), "out_dtype": out.dtype.name})
    return cases


def image_cases(rng):
    """Inputs and outputs of the other functions, one case each (name, args, kwargs)."""
    x3 = rng.standard_normal((5, 6, 3)).astype(np.float32)
    x4 = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    u8 = rng.integers(0, 256, (4, 5, 3)).astype(np.uint8)
    calls = [
        ("flip_left_right", [x3], {}), ("flip_left_right", [x4], {}),
        ("flip_up_down", [x3], {}), ("flip_up_down", [x4], {}),
        ("central_crop", [x3], {"central_fraction": 0.5}),
        ("central_crop", [x4], {"central_fraction": 0.7}),
        ("central_crop", [x4], {"central_fraction": 1.0}),
        ("per_image_standardization", [x3], {}), ("per_image_standardization", [x4], {}),
        ("per_image_standardization", [u8], {}),
        ("per_image_standardization", [np.full((2, 3, 1), 4.0, np.float32)], {}),
        ("rgb_to_grayscale", [x4], {}), ("rgb_to_grayscale", [u8], {}),
        ("resize_with_pad", [x3, 8, 4], {}), ("resize_with_pad", [x4, 5, 9], {}),
        ("resize_with_pad", [x4, 9, 5], {"method": "nearest"}),
        ("stateless_random_flip_left_right", [x4], {"seed": [1, 2]}),
        ("stateless_random_flip_left_right", [x4], {"seed": [7, 3]}),
        ("stateless_random_flip_left_right", [x3], {"seed": [1, 2]}),
        ("stateless_random_flip_left_right", [x3], {"seed": [5, 5]}),
        ("stateless_random_flip_up_down", [x4], {"seed": [3, 4]}),
    ]
    cases = []
    for name, args, kwargs in calls:
        out = getattr(tf.image, name)(*[tf.constant(a) if isinstance(a, np.ndarray) else a
                                        for a in args], **kwargs)
        cases.append({"name": name, "args": [{"tensor": listed(a), "dtype": a.dtype.name}
                                             if isinstance(a, np.ndarray) else a for a in args],
                      "kwargs": kwargs, "out": listed(out), "out_dtype": out.dtype.name})
    return cases


def messages():
    """TensorFlow's error message (type and text) for each misuse, by a name of ours."""
    found = {}
    for key, misuse in tensor_array_misuses.misuses(tf).items():
        try:
            misuse()
        except Exception as e:  # noqa: BLE001 - recording whatever TensorFlow raises
            found[key] = {"type": type(e).__name__,
                          "message": getattr(e, "message", None) or str(e)}
    return found


def tensor_array_cases(rng):
    """A loop writing ``tanh(w * x[t] + state)``, stacked; and the other readers."""
    x = rng.standard_normal((5, 3)).astype(np.float32)
    w = rng.standard_normal((3,)).astype(np.float32)
    xs, ws = tf.constant(x), tf.constant(w)
    with tf.GradientTape() as tape:
        tape.watch([xs, ws])
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        state = tf.zeros(3)
        for t in range(5):
            state = tf.tanh(ws * xs[t] + state)
            ta = ta.write(t, state)
        stacked = ta.stack()
        total = tf.reduce_sum(stacked * tf.range(1.0, 4.0))
    gx, gw = tape.gradient(total, [xs, ws])
    ta = tf.TensorArray(tf.float32, size=5, clear_after_read=False).unstack(xs)
    gathered = ta.gather([4, 0, 2])
    scattered = tf.TensorArray(tf.float32, size=4).scatter([3, 0], xs[:2]).stack()
    grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(3, [1.0, 2.0])
    concat = tf.TensorArray(tf.float32, size=2, infer_shape=False).write(
        0, [1.0]).write(1, [2.0, 3.0]).concat()
    return {"x": listed(x), "w": listed(w), "stacked": listed(stacked), "grad_x": listed(gx),
            "grad_w": listed(gw), "gathered": listed(gathered), "scattered": listed(scattered),
            "grown": listed(grown.stack()), "grown_size": int(grown.size()),
            "concat": listed(concat), "empty_known": list(
                tf.TensorArray(tf.float32, size=0, element_shape=[2]).stack().shape)}


def python_function_cases():
    """py_function's gradient (through the ops inside func) and numpy_function's (None)."""
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.py_function(lambda a: a * a * tf.sin(a), [x], tf.float32)
        z = tf.numpy_function(lambda a: a * a, [x], tf.float32)
    return {"x": listed(x), "py_out": listed(y), "py_grad": listed(tape.gradient(y, x)),
            "numpy_grad_is_none": tape.gradient(z, x) is None,
            "decorated": listed(tf.numpy_function(Tout=tf.float32)(lambda a: a * 2)(x)),
            "python_value_out": listed(tf.py_function(lambda a: 3, [x], tf.float32))}


def main():
    rng = np.random.default_rng(2032)
    record = {"resize": resize_cases(rng), "convert": convert_cases(),
              "image": image_cases(rng), "messages": messages(),
              "tensor_array": tensor_array_cases(rng), "python_function": python_function_cases(),
              "tensorflow": tf.__version__}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tfpieces_reference.json")
    with open(path, "w") as file:
        json.dump(record, file)
        file.write("\n")


if __name__ == "__main__":
    main()
