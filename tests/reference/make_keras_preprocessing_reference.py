"""Write keras_preprocessing_reference.json: Keras 3's numbers for the preprocessing layers
that tests/test_keras_preprocessing.py compares this framework against (outputs, configs,
what ``adapt`` learned, and a small model starting with ``Normalization``).

Run it where TensorFlow and Keras 3 are installed (the tests do not need them):
``python tests/reference/make_keras_preprocessing_reference.py``. Inputs are drawn with NumPy
and stored with the results.
"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from replay import jsonable  # noqa: E402  (this folder: the script's own)

HERE = os.path.dirname(os.path.abspath(__file__))



def normal(rng, shape, scale=1.0, shift=0.0):
    return (rng.normal(size=shape) * scale + shift).astype(np.float32)


def case(layer, x, adapt=None, **call_kwargs):
    """The layer's output on ``x`` (after adapting it to ``adapt``), its config and its
    weights by name."""
    if adapt is not None:
        layer.adapt(adapt)
    y = layer(x, **call_kwargs)
    y_dtype = "string" if y.dtype == tf.string else np.asarray(y).dtype.name
    y = np.char.decode(np.asarray(y).astype(bytes)) if y_dtype == "string" else np.asarray(y)
    x = np.asarray(x)
    return {"x": jsonable(x), "x_dtype": "str" if x.dtype.kind == "U" else x.dtype.name,
            "y": y.tolist(), "y_dtype": y_dtype,
            "keras_config": jsonable(layer.get_config()),
            "weights": {w.name: jsonable(np.asarray(w)) for w in layer.weights},
            "call_kwargs": jsonable(call_kwargs)}


def normalization_cases(rng):
    x = normal(rng, (4, 3), 2.0, 1.0)
    data = normal(rng, (20, 3), 3.0, -2.0)
    images = normal(rng, (6, 2, 2, 3), 1.5, 0.5)
    batches = [normal(rng, (n, 3), 2.0, 4.0) for n in (5, 7, 3)]
    L = keras.layers.Normalization
    out = {
        "given": (L(mean=[1.0, 2.0, 3.0], variance=[4.0, 0.25, 1.0]), x, None),
        "given_scalar": (L(axis=None, mean=2.0, variance=9.0), x, None),
        "given_invert": (L(mean=[1.0, 2.0, 3.0], variance=[4.0, 0.25, 0.0], invert=True), x,
                         None),
        "adapt_array": (L(), x, data),
        "adapt_axis_none": (L(axis=None), x, data),
        "adapt_invert": (L(invert=True), x, data),
        "adapt_images_axis_12": (L(axis=(1, 2)), images[:2], images),
        "adapt_batches": (L(), x, batches),
        "adapt_dataset": (L(), x, tf.data.Dataset.from_tensor_slices(np.concatenate(batches))
                          .batch(4)),
    }
    cases = {name: case(layer, xx, adapt) for name, (layer, xx, adapt) in out.items()}
    cases["adapt_batches"]["adapt"] = [b.tolist() for b in batches]
    cases["adapt_dataset"]["adapt"] = np.concatenate(batches).tolist()
    for name in ("adapt_array", "adapt_axis_none", "adapt_invert"):
        cases[name]["adapt"] = data.tolist()
    cases["adapt_images_axis_12"]["adapt"] = images.tolist()
    return cases


def encoding_cases():
    C = keras.layers.CategoryEncoding
    ints = np.array([[0, 1], [2, 2], [3, 0]], np.int64)
    return {
        "one_hot": case(C(num_tokens=4, output_mode="one_hot"), np.array([3, 2, 0, 1])),
        "one_hot_column": case(C(num_tokens=4, output_mode="one_hot"),
                               np.array([[3], [0], [1]])),
        "multi_hot": case(C(num_tokens=4), ints),
        "multi_hot_1d": case(C(num_tokens=5), np.array([1, 4, 4])),
        "count": case(C(num_tokens=4, output_mode="count"), ints),
        "count_weights": case(C(num_tokens=4, output_mode="count"), ints,
                              count_weights=np.array([[0.5, 1.0], [2.0, 0.25], [1.5, 3.0]],
                                                     np.float32)),
    }


def discretization_cases(rng):
    D = keras.layers.Discretization
    x = np.array([[-1.5, 0.0, 0.2], [1.0, 2.5, -0.1]], np.float32)
    small = np.array([[0.1, 0.9, 0.4, 0.6, 0.3, 0.2, 0.8, 0.7, 0.5, 1.0]], np.float32).T
    data = normal(rng, (200, 1))
    return {
        "boundaries": case(D(bin_boundaries=[-1.0, 0.0, 1.0]), x),
        "boundaries_one_hot": case(D(bin_boundaries=[0.0, 1.0], output_mode="one_hot"),
                                   np.array([-1.0, 0.5, 3.0], np.float32)),
        "boundaries_multi_hot": case(D(bin_boundaries=[0.0, 1.0], output_mode="multi_hot"), x),
        "boundaries_count": case(D(bin_boundaries=[0.0, 1.0], output_mode="count"), x),
        "adapt_small": dict(case(D(num_bins=4), small, adapt=small), adapt=small.tolist()),
        "adapt_normal": dict(case(D(num_bins=5), data[:6], adapt=data), adapt=data.tolist()),
        "adapt_normal_eps": dict(case(D(num_bins=3, epsilon=0.001), data[:6], adapt=data),
                                 adapt=data.tolist()),
    }


def lookup_cases():
    L = keras.layers.IntegerLookup
    x = np.array([[12, 1138, 42], [42, 1000, 36]], np.int64)
    vocab = [12, 36, 1138, 42]
    adapt = np.array([[5, 7, 5], [9, 7, 5], [3, 9, 11]], np.int64)
    adapted = L()
    adapted_case = dict(case(adapted, np.array([[5, 9, 3], [11, 2, 7]]), adapt=adapt),
                        adapt=adapt.tolist(), vocabulary=jsonable(adapted.get_vocabulary()))
    return {
        "vocabulary": case(L(vocabulary=vocab), x),
        "mask_token": case(L(vocabulary=vocab, mask_token=0), np.array([[12, 0, 42], [7, 36, 0]])),
        "no_oov": case(L(vocabulary=vocab, num_oov_indices=0), np.array([[12, 36], [42, 1138]])),
        "three_oov": case(L(vocabulary=vocab, num_oov_indices=3, mask_token=0),
                          np.array([[7, 1000, 0], [12, -5, 11]])),
        "invert": case(L(vocabulary=vocab, invert=True), np.array([[1, 3, 4], [0, 2, 4]])),
        "invert_mask": case(L(vocabulary=vocab, invert=True, mask_token=0),
                            np.array([[2, 0, 5], [1, 3, 4]])),
        "one_hot": case(L(vocabulary=vocab, output_mode="one_hot"), np.array([12, 7, 42])),
        "multi_hot": case(L(vocabulary=vocab, output_mode="multi_hot"), x),
        "count": case(L(vocabulary=vocab, output_mode="count"), x),
        "adapt": adapted_case,
    }


def string_lookup_cases():
    L = keras.layers.StringLookup
    x = np.array([["a", "c", "d"], ["d", "zz", "b"]])
    vocab = ["a", "b", "c", "d"]
    adapt = np.array([["fox", "the", "dog"], ["the", "cat", "dog"], ["a", "fox", "the"]])
    adapted = L()
    adapted_case = dict(case(adapted, np.array([["the", "cat"], ["emu", "a"]]), adapt=adapt),
                        adapt=adapt.tolist(), vocabulary=jsonable(adapted.get_vocabulary()))
    limited = L(max_tokens=3)
    limited_case = dict(case(limited, np.array(["the", "dog", "fox"]), adapt=adapt),
                        adapt=adapt.tolist(), vocabulary=jsonable(limited.get_vocabulary()))
    return {
        "vocabulary": case(L(vocabulary=vocab), x),
        "mask_token": case(L(vocabulary=vocab, mask_token=""), np.array([["a", ""], ["q", "d"]])),
        "no_oov": case(L(vocabulary=vocab, num_oov_indices=0), np.array([["a", "b"], ["d", "c"]])),
        "invert": case(L(vocabulary=vocab, invert=True), np.array([[1, 0, 4], [2, 3, 9]])),
        "invert_mask": case(L(vocabulary=vocab, invert=True, mask_token="[MASK]"),
                            np.array([[0, 1, 2], [3, 4, 5]])),
        "one_hot": case(L(vocabulary=vocab, output_mode="one_hot"), np.array(["b", "q", "d"])),
        "multi_hot": case(L(vocabulary=vocab, output_mode="multi_hot"), x),
        "count": case(L(vocabulary=vocab, output_mode="count"), np.array([["a", "a", "q"],
                                                                           ["d", "q", "q"]])),
        "adapt": adapted_case,
        "adapt_max_tokens": limited_case,
    }


def image_cases(rng):
    images = normal(rng, (2, 5, 6, 3))
    R, C = keras.layers.Resizing, keras.layers.CenterCrop
    return {
        "resizing": case(R(3, 4), images),
        "resizing_nearest": case(R(7, 4, interpolation="nearest"), images),
        "resizing_crop": case(R(4, 4, crop_to_aspect_ratio=True), images),
        "resizing_crop_tall": case(R(6, 2, crop_to_aspect_ratio=True), images),
        "center_crop": case(C(3, 4), images),
        "center_crop_odd": case(C(2, 3), images),
        "center_crop_larger": case(C(6, 6), images),
        "random_flip": case(keras.layers.RandomFlip(), images, training=False),
        "random_contrast": case(keras.layers.RandomContrast(0.5), images, training=False),
    }


def transform_cases(rng):
    """The geometric augmentations with a range of one value each (a fixed angle, zoom or
    shift: Keras's draw is then that value), so their outputs are Keras's exactly."""
    images = normal(rng, (2, 5, 6, 2))
    Rot, Zoom, Move = (keras.layers.RandomRotation, keras.layers.RandomZoom,
                       keras.layers.RandomTranslation)
    cases = {
        "rotation": (Rot((0.1, 0.1)), images),
        "rotation_constant_nearest": (Rot((-0.3, -0.3), fill_mode="constant",
                                          interpolation="nearest", fill_value=0.5), images),
        "rotation_wrap": (Rot((0.2, 0.2), fill_mode="wrap"), images),
        "rotation_nearest": (Rot((0.15, 0.15), fill_mode="nearest"), images),
        "rotation_unbatched": (Rot((0.4, 0.4)), images[0]),
        "zoom_in": (Zoom((-0.4, -0.4)), images),
        "zoom_out_constant": (Zoom((0.5, 0.5), (0.3, 0.3), fill_mode="constant"), images),
        "zoom_out_reflect": (Zoom((0.9, 0.9), (0.7, 0.7)), images),
        "zoom_out_wrap": (Zoom((0.8, 0.8), fill_mode="wrap"), images),
        "translation": (Move((0.3, 0.3), (-0.25, -0.25)), images),
        "translation_far_reflect": (Move((0.9, 0.9), (-0.8, -0.8)), images),
        "translation_wrap": (Move((-0.5, -0.5), (0.45, 0.45), fill_mode="wrap"), images),
        "translation_nearest": (Move((0.4, 0.4), (0.5, 0.5), fill_mode="nearest"), images),
        "translation_constant": (Move((-0.2, -0.2), (0.1, 0.1), fill_mode="constant",
                                      fill_value=-1.0), images),
    }
    return {name: case(layer, x, training=True) for name, (layer, x) in cases.items()}


def normalization_model(rng):
    """Normalization adapted to data, then Dense: the outputs, saved and loaded by the test."""
    data = normal(rng, (30, 4), 2.0, 3.0)
    norm = keras.layers.Normalization()
    norm.adapt(data)
    model = keras.Sequential([keras.Input((4,)), norm, keras.layers.Dense(2)])
    weights = [normal(rng, w.shape) for w in model.layers[1].weights]
    model.layers[1].set_weights(weights)
    x = normal(rng, (5, 4), 2.0, 3.0)
    return {"adapt": data.tolist(), "dense": [w.tolist() for w in weights], "x": x.tolist(),
            "y": np.asarray(model(x)).tolist(),
            "weight_paths": [w.path for w in model.weights],
            "datasets": keras_weights_file(model)}


def keras_weights_file(model):
    """``{dataset key: value}`` of the ``.weights.h5`` file Keras writes for ``model``."""
    import tempfile

    import h5py
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.weights.h5")
        model.save_weights(path)
        datasets = {}
        with h5py.File(path, "r") as f:
            f.visititems(lambda key, item: datasets.update(
                {key: jsonable(item[()])} if isinstance(item, h5py.Dataset) else {}))
    return datasets


def main():
    rng = np.random.default_rng(0)
    out = {"normalization": normalization_cases(rng), "category_encoding": encoding_cases(),
           "discretization": discretization_cases(rng), "integer_lookup": lookup_cases(),
           "string_lookup": string_lookup_cases(),
           "images": image_cases(rng), "transforms": transform_cases(rng),
           "normalization_model": normalization_model(rng),
           "versions": {"tensorflow": tf.__version__, "keras": keras.__version__}}
    with open(os.path.join(HERE, "keras_preprocessing_reference.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
