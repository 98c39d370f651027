"""fw.image: resize (every method, 3-D and 4-D, up and down, antialias, preserve_aspect_ratio),
convert_image_dtype, flips, crops, standardisation and grayscale as recorded from TensorFlow 2.21
(tests/reference/make_tfpieces_reference.py); resize's gradients against TensorFlow's and float64
finite differences at orders 1 and 2; every public function under fw.function on a second,
different input; the refusals."""
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw
from framework import image
from framework.test import check_gradients

REFERENCE = json.loads((Path(__file__).parent / "reference" /
                        "tfpieces_reference.json").read_text())
RESIZE = REFERENCE["resize"]


def close(got, expected, tolerance=2e-6):
    expected = np.asarray(expected, np.float64)
    np.testing.assert_allclose(np.asarray(got, np.float64), expected, rtol=tolerance,
                               atol=tolerance * max(1.0, float(np.abs(expected).max())))


def _resize_id(case):
    return (f"{case['method']}-{'x'.join(map(str, case['shape']))}-to-"
            f"{'x'.join(map(str, case['size']))}-{case['dtype']}"
            f"{'-antialias' if case['antialias'] else ''}"
            f"{'-aspect' if case['preserve_aspect_ratio'] else ''}")


def _resize_of(case):
    return lambda x: image.resize(x, case["size"], method=case["method"],
                                  antialias=case["antialias"],
                                  preserve_aspect_ratio=case["preserve_aspect_ratio"])


@pytest.mark.parametrize("case", RESIZE, ids=[_resize_id(c) for c in RESIZE])
def test_resize_matches_tensorflow(case):
    x = fw.constant(np.asarray(case["x"], case["dtype"]))
    cotangent = case.get("cotangent")
    with fw.GradientTape() as tape:
        if x.dtype.is_floating:
            tape.watch(x)
        out = _resize_of(case)(x)
        total = None if cotangent is None else fw.reduce_sum(
            out * fw.constant(np.asarray(cotangent, out.dtype.name)))
    assert out.dtype.name == case["out_dtype"]
    assert out.shape == np.shape(case["out"])
    close(out.numpy(), case["out"])
    if case.get("grad") is not None:  # (TensorFlow has no gradient for area: ours is exact)
        close(tape.gradient(total, x).numpy(), case["grad"])


DIFFERENTIABLE = [("bilinear", False, (3, 5)), ("bilinear", True, (2, 2)),
                  ("bicubic", False, (6, 4)), ("bicubic", True, (2, 3)), ("area", False, (2, 3)),
                  ("area", False, (5, 7)), ("lanczos3", False, (5, 2)),
                  ("mitchellcubic", True, (2, 6))]


@pytest.mark.parametrize("method, antialias, size", DIFFERENTIABLE,
                         ids=[f"{m}{'-antialias' if a else ''}-{s[0]}x{s[1]}"
                              for m, a, s in DIFFERENTIABLE])
def test_resize_gradients_orders_1_and_2(method, antialias, size):
    x = np.random.default_rng(0).standard_normal((2, 4, 3, 2))
    check_gradients(lambda t: fw.sin(image._resized(t, *size, method, antialias)), x, order=2)


def test_nearest_gradient_orders_1_and_2():
    x = np.random.default_rng(1).standard_normal((3, 4, 2))  # (float64 kept by nearest)
    check_gradients(lambda t: fw.sin(image.resize(t, [5, 3], "nearest")), x, order=2)


@pytest.mark.parametrize("case", REFERENCE["convert"],
                         ids=[f"{c['dtype']}-to-{c['target']}{'-saturate' * c['saturate']}"
                              for c in REFERENCE["convert"]])
def test_convert_image_dtype_matches_tensorflow(case):
    out = image.convert_image_dtype(fw.constant(np.asarray(case["x"], case["dtype"])),
                                    case["target"], saturate=case["saturate"])
    assert out.dtype.name == case["out_dtype"]
    close(out.numpy(), case["out"], 1e-7)


def _args(case):
    return [fw.constant(np.asarray(a["tensor"], a["dtype"])) if isinstance(a, dict) else a
            for a in case["args"]]


@pytest.mark.parametrize("case", REFERENCE["image"],
                         ids=[f"{c['name']}-{i}" for i, c in enumerate(REFERENCE["image"])])
def test_image_functions_match_tensorflow(case):
    out = getattr(image, case["name"])(*_args(case), **case["kwargs"])
    assert out.dtype.name == case["out_dtype"]
    assert out.shape == np.shape(case["out"])
    close(out.numpy(), case["out"])


def test_flip_and_crop_gradients_orders_1_and_2():
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 3))
    check_gradients(lambda t: fw.sin(image.central_crop(image.flip_left_right(t), 0.5)), x,
                    order=2)
    check_gradients(lambda t: fw.sin(image.flip_up_down(t)), x, order=2)


TRACED = [  # (name, function of one image tensor, input shape, input dtype)
    ("resize-bilinear", lambda x: image.resize(x, [5, 3]), (2, 4, 6, 2), "float32"),
    ("resize-nearest", lambda x: image.resize(x, [5, 3], "nearest"), (4, 6, 2), "float32"),
    ("resize-area", lambda x: image.resize(x, [3, 2], "area"), (2, 4, 6, 2), "float32"),
    ("resize-bicubic", lambda x: image.resize(x, [7, 9], "bicubic"), (4, 6, 1), "float32"),
    ("resize-lanczos3", lambda x: image.resize(x, [2, 3], "lanczos3", antialias=True),
     (4, 6, 1), "float32"),
    ("resize_with_pad", lambda x: image.resize_with_pad(x, 6, 8), (4, 6, 2), "float32"),
    ("convert_image_dtype", lambda x: image.convert_image_dtype(x, fw.uint8, saturate=True),
     (4, 5, 3), "float32"),
    ("flip_left_right", image.flip_left_right, (2, 3, 4, 1), "float32"),
    ("flip_up_down", image.flip_up_down, (3, 4, 2), "float32"),
    ("central_crop", lambda x: image.central_crop(x, 0.6), (2, 5, 7, 3), "float32"),
    ("per_image_standardization", image.per_image_standardization, (2, 4, 4, 3), "float32"),
    ("rgb_to_grayscale", image.rgb_to_grayscale, (4, 4, 3), "float32"),
    ("stateless_random_flip_left_right",
     lambda x: image.stateless_random_flip_left_right(x, [3, 9]), (6, 3, 4, 1), "float32"),
    ("stateless_random_flip_up_down",
     lambda x: image.stateless_random_flip_up_down(x, [1, 1]), (3, 4, 2), "float32"),
]


@pytest.mark.parametrize("name, f, shape, dtype", TRACED, ids=[t[0] for t in TRACED])
def test_image_functions_under_fw_function_equal_eager_on_a_second_input(name, f, shape, dtype):
    rng = np.random.default_rng(3)
    traced = fw.function(f)
    for _ in range(3):
        x = fw.constant(rng.uniform(-0.2, 1.2, shape).astype(dtype))
        np.testing.assert_array_equal(traced(x).numpy(), f(x).numpy())


def test_resize_to_a_size_given_as_tensors_under_fw_function():
    traced = fw.function(lambda x, size: image.resize(x, size))
    x = fw.constant(np.random.default_rng(4).standard_normal((4, 5, 1)).astype(np.float32))
    for size in ([3, 2], [6, 7], [3, 2]):
        size = fw.constant(size)
        np.testing.assert_array_equal(traced(x, size).numpy(), image.resize(x, size).numpy())
        assert traced(x, size).shape == (int(size[0]), int(size[1]), 1)


def test_random_flip_mirrors_each_image_or_keeps_it_and_draws_on_every_call():
    x = fw.constant(np.arange(64 * 2 * 3, dtype=np.float32).reshape(64, 2, 3, 1))
    mirror = image.flip_left_right(x).numpy()

    def flipped(out):
        out = out.numpy()
        same = np.all(out == x.numpy(), axis=(1, 2, 3))
        mirrored = np.all(out == mirror, axis=(1, 2, 3))
        assert np.all(same | mirrored)
        return mirrored

    seeded = [flipped(image.random_flip_left_right(x, seed=5)) for _ in range(2)]
    np.testing.assert_array_equal(seeded[0], seeded[1])  # one seed, one draw
    assert 0 < seeded[0].sum() < 64
    traced = fw.function(image.random_flip_left_right)
    draws = [flipped(traced(x)) for _ in range(3)]
    assert not np.array_equal(draws[0], draws[1]) or not np.array_equal(draws[1], draws[2])
    single = image.random_flip_up_down(x[0], seed=1).numpy()
    assert np.array_equal(single, x[0].numpy()) or np.array_equal(
        single, image.flip_up_down(x[0]).numpy())


@pytest.mark.parametrize("call, message", [
    (lambda: image.resize(fw.ones((4, 4)), [2, 2]), "'images' must have either 3 or 4"),
    (lambda: image.resize(fw.ones((4, 4, 1)), [2, 2], "cubic"), "method 'cubic' is not one"),
    (lambda: image.resize(fw.ones((4, 4, 1)), [2]), "size must be two integers"),
    (lambda: image.resize(fw.ones((4, 4, 1)), [0, 2]), "size must be positive"),
    (lambda: image.central_crop(fw.ones((4, 4, 1)), 0.0), "central_fraction must be within"),
    (lambda: image.central_crop(fw.ones((4, 4)), 0.5), "rank = 3 or rank = 4"),
    (lambda: image.flip_left_right(fw.ones((4, 4))), "must be at least three-dimensional"),
    (lambda: image.rgb_to_grayscale(fw.ones((4, 4, 2))), "must hold 3 channels"),
    (lambda: image.convert_image_dtype(fw.ones((2, 2, 1)), fw.bool), "dtype must be either"),
    (lambda: image.resize_with_pad(fw.ones((4, 4, 1)), 0, 3),
     "resize_with_pad: size must be positive"),
])
def test_refusals_name_the_culprit(call, message):
    with pytest.raises((ValueError, AttributeError), match=message):
        call()
