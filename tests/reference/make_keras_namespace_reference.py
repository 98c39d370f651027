"""Record Keras 3's answers (through ``tf.keras``, TF 2.21) for the ``tf.keras`` helpers TF2
programs call: ``keras.backend`` (``K.``), ``keras.utils``, a model's shapes and ``get_layer``
errors, the datasets' splits. Each case is one line of TF2 code; ``tests/test_keras_namespace.py``
runs the same line with ``tf`` bound to ``framework`` (the porting rule) and compares.
Results are nested lists of numbers with their shape, or the exception's type and message.

    /tmp/tfenv/bin/python tests/reference/make_keras_namespace_reference.py
"""
import json
import os

import numpy as np
import tensorflow as tf

# x: a float32 2x3 matrix, b: booleans, t: a 2x3x4 tensor, w: a 4x5 matrix
SETUP = ("x = tf.constant([[1.0, -2.0, 3.0], [0.5, 0.0, -1.5]]); "
         "b = tf.constant([[True, False, True], [False, False, True]]); "
         "t = tf.reshape(tf.range(24, dtype=tf.float32), (2, 3, 4)) / 10.0; "
         "w = tf.reshape(tf.range(20, dtype=tf.float32), (4, 5)) / 7.0; "
         "K = tf.keras.backend; keras = tf.keras; "
         "seq = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name='d1'), "
         "keras.layers.Dense(2, name='d2')])")

CASES = {
    "K.floatx": "K.floatx()",
    "K.epsilon": "K.epsilon()",
    "K.mean": "K.mean(x, axis=0)",
    "K.mean keepdims": "K.mean(x, axis=1, keepdims=True)",
    "K.mean bool": "K.mean(b)",
    "K.std": "K.std(x, axis=1)",
    "K.sum": "K.sum(x)",
    "K.max": "K.max(x, axis=1)",
    "K.square sqrt": "K.sqrt(K.square(x))",
    "K.exp log": "K.log(K.exp(x))",
    "K.abs": "K.abs(x)",
    "K.dot 2d": "K.dot(x, tf.transpose(x))",
    "K.dot 3d": "K.dot(t, w)",
    "K.concatenate": "K.concatenate([x, x * 2.0])",
    "K.concatenate axis 0": "K.concatenate([x, x], axis=0)",
    "K.reshape": "K.reshape(x, (3, 2))",
    "K.shape": "K.shape(t)",
    "K.int_shape": "K.int_shape(t)",
    "K.ones_like": "K.ones_like(x)",
    "K.zeros_like": "K.zeros_like(x)",
    "K.clip": "K.clip(x, -1.0, 2.0)",
    "K.clip max below min": "K.clip(x, 1.0, 0.0)",
    "K.clip no upper": "K.clip(x, 0.0, None)",
    "K.maximum minimum": "K.minimum(K.maximum(x, -1.0), 1.0)",
    "K.cast": "K.cast(x, 'int32')",
    "K.variable dtype": "K.variable([[1, 2]]).dtype",
    "K.constant dtype": "K.constant(3).dtype",
    "K.get_value": "K.get_value(K.variable([1.5, 2.5]))",
    "K.eval": "K.eval(x * 2.0)",
    "K.random_normal shape dtype": "(K.random_normal((2, 3), seed=1).shape, "
                                   "K.random_normal((2, 3), seed=1).dtype)",
    "K.random_bernoulli p=1": "K.random_bernoulli((2, 2), p=1.0)",
    "K.random_bernoulli p=0": "K.random_bernoulli((2, 2), p=0.0)",
    "K.random_uniform bounds": "float(tf.reduce_min(K.random_uniform((50,), 2.0, 3.0))) >= 2.0",
    "utils.to_categorical": "keras.utils.to_categorical([1, 0, 2])",
    "utils.to_categorical column": "keras.utils.to_categorical(np.array([[1], [3]]), 5)",
    "utils.to_categorical dtype": "keras.utils.to_categorical([1, 0]).dtype",
    "utils.to_categorical tensor": "keras.utils.to_categorical(tf.constant([2, 0]), 3)",
    "utils.normalize numpy": "keras.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))",
    "utils.normalize numpy order 1": "keras.utils.normalize(np.array([[3.0, -1.0]]), "
                                     "order=1)",
    "utils.normalize numpy axis 0": "keras.utils.normalize(np.array([[3.0, 4.0], [4.0, 3.0]]), "
                                    "axis=0)",
    "utils.normalize tensor": "keras.utils.normalize(x)",
    "utils.normalize tensor order 1": "keras.utils.normalize(x, order=1)",
    "utils.normalize bad order": "keras.utils.normalize(x, order=0)",
    "utils.set_random_seed bad": "keras.utils.set_random_seed(1.5)",
    "utils.pad_sequences": "keras.utils.pad_sequences([[1, 2, 3], [4], [5, 6]], maxlen=2)",
    "utils.pad_sequences post": "keras.utils.pad_sequences([[1, 2, 3], [4]], padding='post', "
                                "truncating='post', value=9)",
    "utils.pad_sequences longest": "keras.utils.pad_sequences([[1, 2, 3], [4]])",
    "seq output_shape": "seq.output_shape",
    "seq input_shape": "seq.input_shape",
    "seq get_layer index": "seq.get_layer(index=1).name",
    "seq get_layer name": "seq.get_layer('d1').name",
    "seq get_layer missing": "seq.get_layer('nope')",
    "seq get_layer index too big": "seq.get_layer(index=7)",
    "seq get_layer neither": "seq.get_layer()",
    "seq get_layer both": "seq.get_layer('d1', 0)",
    "unbuilt output_shape": "keras.Sequential([keras.layers.Dense(3)], name='s').output_shape",
    "unbuilt input_shape": "keras.Sequential([keras.layers.Dense(3)], name='s').input_shape",
    "InputLayer input_shape": "keras.Sequential([keras.layers.InputLayer(input_shape=(6,)), "
                              "keras.layers.Dense(2)]).output_shape",
    "InputLayer shape": "keras.layers.InputLayer(shape=(5, 2)).output.shape",
    "functional output_shape": "(lambda i: keras.Model(i, [keras.layers.Dense(3)(i), "
                               "keras.layers.Dense(1)(i)]).output_shape)(keras.Input((4,)))",
}


def encode(value):
    if isinstance(value, (tf.DType, np.dtype)):
        return {"dtype": value.name}
    if isinstance(value, (tf.Tensor, tf.Variable, np.ndarray)):
        array = np.asarray(value)
        return {"values": array.tolist(), "shape": list(array.shape), "dtype": array.dtype.name}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, tf.TensorShape):
        return list(value)
    return value


def record():
    results = {}
    for name, line in CASES.items():
        scope = {"tf": tf, "np": np}
        exec(SETUP, scope)
        try:
            results[name] = {"line": line, "result": encode(eval(line, scope))}
        except Exception as error:  # noqa: BLE001 - the exception is the recorded answer
            results[name] = {"line": line, "error": type(error).__name__,
                             "message": str(error)}
    return results


def record_datasets():
    """Keras's splits of small stand-in files (its ``get_file`` pointed at them, no network)."""
    import tempfile

    import keras.src.datasets.boston_housing as boston
    import keras.src.datasets.imdb as imdb
    rng = np.random.RandomState(0)
    folder = tempfile.mkdtemp()
    boston_path = os.path.join(folder, "boston_housing.npz")
    np.savez(boston_path, x=rng.rand(11, 3).round(3), y=np.arange(11.0))
    boston.get_file = lambda *a, **k: boston_path
    (x_train, y_train), (x_test, y_test) = boston.load_data(test_split=0.3)
    imdb_path = os.path.join(folder, "imdb.npz")
    reviews = np.empty(5, dtype=object)
    for i, review in enumerate([[5, 1, 9], [2, 2], [7, 8, 3, 1, 1, 4], [6], [9, 9, 9, 2]]):
        reviews[i] = review
    np.savez(imdb_path, x_train=reviews[:3], y_train=np.array([0, 1, 0]),
             x_test=reviews[3:], y_test=np.array([1, 1]))
    imdb.get_file = lambda *a, **k: imdb_path
    (ix_train, iy_train), (ix_test, iy_test) = imdb.load_data(num_words=10, maxlen=6)
    return {"boston_x": np.load(boston_path)["x"].tolist(), "boston_test_split": 0.3,
            "boston": [x_train.tolist(), y_train.tolist(), x_test.tolist(), y_test.tolist()],
            "imdb_reviews": [list(r) for r in reviews],
            "imdb": [[list(r) for r in ix_train], iy_train.tolist(),
                     [list(r) for r in ix_test], iy_test.tolist()]}


if __name__ == "__main__":
    out = {"tensorflow": tf.__version__, "keras": tf.keras.__version__, "setup": SETUP,
           "cases": record(), "datasets": record_datasets()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "keras_namespace_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {len(out['cases'])} cases to {path}")
