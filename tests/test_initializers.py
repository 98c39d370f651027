"""Initializers: Keras's formulas (fans, limits, truncation), seeds, names and bad inputs."""
import json
import math
import os
import re

import numpy as np
import pytest

import framework as fw
from layers import Dense, initializers

SHAPE = (300, 200)  # fan_in 300, fan_out 200: large enough for tight statistics


def draw(initializer, shape=SHAPE):
    return initializer(shape=shape, dtype=fw.float32).numpy()


def test_constant_initializers():
    assert np.array_equal(initializers.Zeros()(shape=[3], dtype=fw.float32).numpy(), np.zeros(3))
    ones = initializers.Ones()([2, 2], dtype=fw.int32)
    assert ones.dtype == fw.int32 and np.array_equal(ones.numpy(), np.ones((2, 2)))
    filled = initializers.Constant(0.5)(shape=(2, 3))
    assert filled.dtype == fw.float32 and np.array_equal(filled.numpy(), np.full((2, 3), 0.5))
    assert initializers.Constant([1.0, 2.0])((3, 2)).numpy().tolist() == [[1.0, 2.0]] * 3


@pytest.mark.parametrize("shape, fans", [((), (1, 1)), ((7,), (7, 7)), ((3, 5), (3, 5)),
                                         ((3, 3, 4, 8), (36, 72))])
def test_fans_follow_keras(shape, fans):
    assert initializers.compute_fans(shape) == fans


def test_fans_over_given_axes():
    assert initializers.compute_fans((2, 3, 4, 5), input_axes=[0, 2], output_axes=[1]) == (8, 3)
    values = draw(initializers.HeUniform(input_axes=[1], output_axes=[0]), (50, 2000))
    assert values.max() <= math.sqrt(6 / 2000) < values.max() * 1.01


@pytest.mark.parametrize("initializer, limit", [
    (initializers.GlorotUniform(), math.sqrt(6 / (300 + 200))),
    (initializers.HeUniform(), math.sqrt(6 / 300)),
    (initializers.LecunUniform(), math.sqrt(3 / 300)),
    (initializers.RandomUniform(), 0.05),
])
def test_uniform_initializers_fill_their_interval(initializer, limit):
    values = draw(initializer)
    assert values.min() >= -limit and values.max() <= limit
    assert values.min() < -0.99 * limit and values.max() > 0.99 * limit
    assert abs(values.std() - limit / math.sqrt(3)) < 0.02 * limit


@pytest.mark.parametrize("initializer, stddev", [
    (initializers.GlorotNormal(), math.sqrt(2 / (300 + 200))),
    (initializers.HeNormal(), math.sqrt(2 / 300)),
    (initializers.LecunNormal(), math.sqrt(1 / 300)),
    (initializers.TruncatedNormal(stddev=0.1), 0.1 * 0.87962566103423978),
])
def test_truncated_normal_initializers_have_kerass_stddev_after_truncation(initializer, stddev):
    """Keras divides by 0.8796 (the stddev of a unit normal cut at +-2) so that the truncated
    values end with the variance the formula asks for; the cut is at 2 of the raw stddev."""
    values = draw(initializer)
    raw = stddev / 0.87962566103423978
    assert np.abs(values).max() <= 2 * raw
    assert abs(values.std() - stddev) < 0.02 * stddev


def test_random_normal_defaults_and_untruncated_variance_scaling():
    values = draw(initializers.RandomNormal())
    assert abs(values.mean()) < 0.002 and abs(values.std() - 0.05) < 0.001
    assert np.abs(values).max() > 2 * 0.05  # not truncated
    scaled = draw(initializers.VarianceScaling(2.0, "fan_out", "untruncated_normal"))
    assert abs(scaled.std() - math.sqrt(2 / 200)) < 0.02 * math.sqrt(2 / 200)


def test_a_seed_gives_the_same_values_on_every_call_and_no_seed_follows_the_global_seed():
    seeded = initializers.GlorotUniform(seed=5)
    assert np.array_equal(draw(seeded), draw(seeded))
    assert np.array_equal(draw(seeded), draw(initializers.GlorotUniform(seed=5)))
    assert not np.array_equal(draw(seeded), draw(initializers.GlorotUniform(seed=6)))
    fw.random.set_seed(11)
    first = [draw(initializers.HeNormal(), (4, 4)) for _ in range(2)]
    fw.random.set_seed(11)
    again = [draw(initializers.HeNormal(), (4, 4)) for _ in range(2)]
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[1], again[1])
    assert not np.array_equal(first[0], first[1])


def test_dense_defaults_to_glorot_uniform_kernel_and_zero_bias():
    dense = Dense(50)
    dense.build((None, 70))
    limit = math.sqrt(6 / (70 + 50))
    assert np.abs(dense.kernel.numpy()).max() <= limit
    assert np.abs(dense.kernel.numpy()).max() > 0.9 * limit
    assert np.array_equal(dense.bias.numpy(), np.zeros(50))
    fw.random.set_seed(1)
    a = Dense(3)
    a.build((None, 2))
    fw.random.set_seed(1)
    b = Dense(3)
    b.build((None, 2))
    assert np.array_equal(a.kernel.numpy(), b.kernel.numpy())


def test_initializers_by_name_class_instance_or_callable():
    assert isinstance(initializers.get("glorot_uniform"), initializers.GlorotUniform)
    assert isinstance(initializers.get("HeNormal"), initializers.HeNormal)
    assert isinstance(initializers.get(initializers.Zeros), initializers.Zeros)
    instance = initializers.RandomNormal(stddev=1.0)
    assert initializers.get(instance) is instance

    def custom(shape, dtype=None):
        return fw.fill(shape, 3.0)

    dense = Dense(2, kernel_initializer=custom)
    dense.build((None, 2))
    assert np.array_equal(dense.kernel.numpy(), np.full((2, 2), 3.0))


@pytest.mark.parametrize("make, error, message", [
    (lambda: initializers.get("glorot"), ValueError, "unknown initializer 'glorot'"),
    (lambda: initializers.get(3), TypeError, "must be a name"),
    (lambda: initializers.GlorotUniform()((2, 2), dtype=fw.int32), ValueError,
     "cannot initialize a weight of dtype int32"),
    (lambda: initializers.VarianceScaling(scale=0), ValueError, "scale must be positive"),
    (lambda: initializers.VarianceScaling(mode="fan_sum"), ValueError, "mode must be one of"),
    (lambda: initializers.VarianceScaling(distribution="cauchy"), ValueError,
     "distribution must be one of"),
    (lambda: initializers.RandomNormal(seed=1.5), ValueError, "seed must be an integer"),
])
def test_bad_initializer_inputs(make, error, message):
    with pytest.raises(error, match=message):
        make()


# --- against Keras 3's statistics (keras_optimizers_reference.json) ---------------------------
with open(os.path.join(os.path.dirname(__file__), "reference",
                       "keras_optimizers_reference.json")) as f:
    KERAS = json.load(f)["initializers"]
BOUNDED = re.compile(r"(?<!un)truncated|uniform|lecun_normal|glorot_normal|he_normal")


@pytest.mark.parametrize("case", sorted(KERAS))
def test_statistics_of_big_draws_are_kerass(case):
    """Mean, standard deviation and range of a large draw (NumPy's numbers, Keras's
    distribution), the Gram matrix of an orthogonal one, an identity's every value."""
    reference = KERAS[case]
    initializer = initializers.get({"class_name": reference["class_name"],
                                    "config": reference["config"]})
    for stats in reference["stats"]:
        values = draw(initializer, stats["shape"]).astype(np.float64)
        spread = max(stats["std"], 1e-3)
        assert abs(values.mean() - stats["mean"]) < 0.01 * spread, case
        assert values.std() == pytest.approx(stats["std"], rel=0.01, abs=1e-7), case
        if BOUNDED.search(case):  # the range of a bounded distribution is reached, not passed
            assert values.min() == pytest.approx(stats["min"], abs=0.01 * spread), case
            assert values.max() == pytest.approx(stats["max"], abs=0.01 * spread), case
        if "gram_error" in stats:
            q = values.reshape(-1, stats["shape"][-1])
            q = q if q.shape[0] >= q.shape[1] else q.T
            gain = reference["config"].get("gain", 1.0)
            assert np.abs(q.T @ q - gain ** 2 * np.eye(q.shape[1])).max() < 1e-5 * gain ** 2
        if "values" in stats:
            assert values.tolist() == stats["values"]


@pytest.mark.parametrize("case", sorted(KERAS))
def test_configs_hold_kerass_and_round_trip(case):
    reference = KERAS[case]
    initializer = initializers.get({"class_name": reference["class_name"],
                                    "config": reference["config"]})
    config = initializer.get_config()
    assert {k: config[k] for k in reference["keras_config"]} == reference["keras_config"]
    again = initializers.get(json.loads(json.dumps(initializers.INITIALIZERS.serialize(
        initializer))))
    assert type(again) is type(initializer) and again.get_config() == config


def test_tensorflows_aliases_are_the_same_classes():
    from framework import initializers as framework_initializers
    assert fw.zeros_initializer is initializers.Zeros is framework_initializers.Zeros
    assert fw.ones_initializer is initializers.Ones
    assert fw.constant_initializer is initializers.Constant
    assert fw.random_normal_initializer is initializers.RandomNormal
    assert fw.random_uniform_initializer is initializers.RandomUniform
    assert fw.glorot_uniform_initializer is initializers.GlorotUniform
    assert initializers.INITIALIZERS is framework_initializers.INITIALIZERS
    values = fw.random_normal_initializer(mean=1.0, stddev=0.5, seed=2)((4000,)).numpy()
    assert abs(values.mean() - 1.0) < 0.05 and abs(values.std() - 0.5) < 0.05
    assert fw.constant_initializer(2.0)((2,)).numpy().tolist() == [2.0, 2.0]
    for name, cls in [("zero", initializers.Zeros), ("one", initializers.Ones),
                      ("normal", initializers.RandomNormal), ("orthogonal",
                                                               initializers.Orthogonal)]:
        assert type(initializers.get(name)) is cls


def test_orthogonal_is_seeded_and_identity_is_an_eye():
    seeded = initializers.Orthogonal(seed=4)
    assert np.array_equal(draw(seeded, (6, 4)), draw(seeded, (6, 4)))
    assert draw(initializers.Identity(2.0), (2, 3)).tolist() == [[2, 0, 0], [0, 2, 0]]
    wide = draw(initializers.Orthogonal(seed=1), (3, 8))
    np.testing.assert_allclose(wide @ wide.T, np.eye(3), atol=1e-6)


@pytest.mark.parametrize("make, message", [
    (lambda: initializers.Orthogonal()((5,)), r"rank 2 or more, got shape \(5,\)"),
    (lambda: initializers.Identity()((2, 2, 2)), r"2-D weight, got shape \(2, 2, 2\)"),
    (lambda: initializers.Orthogonal()((2, 2), dtype=fw.int32), "dtype int32"),
])
def test_bad_shapes_name_themselves(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("draw", [
    lambda: fw.random.uniform((3, 50), -0.5, 2.0, seed=4),
    lambda: fw.random.normal((3, 50), 1.0, 0.5, seed=4),
], ids=["uniform", "normal"])
def test_a_float32_draw_in_chunks_has_the_values_of_one_draw(monkeypatch, draw):
    """Large float32 tensors are drawn a chunk of float64 values at a time (no float64 copy of
    the whole beside them): the values are those drawn at once, here with chunks of 7."""
    import framework.random
    whole = draw().numpy()
    monkeypatch.setattr(framework.random, "CHUNK", 7)
    chunked = draw()
    assert chunked.dtype == fw.float32 and chunked.shape == (3, 50)
    np.testing.assert_array_equal(chunked.numpy(), whole)


def test_a_large_float32_initializer_never_holds_its_float64_draw():
    """Glorot's uniform draw of a 4-million-entry float32 kernel peaks at the kernel and one
    chunk (1.5 times the kernel), not the kernel beside its float64 draw (3 times)."""
    if fw.get_backend() != "numpy":
        pytest.skip("measures host memory: on a device backend the draw is copied over")
    import tracemalloc
    tracemalloc.start()
    try:
        kernel = initializers.GlorotUniform(seed=1)((2000, 2000), dtype="float32")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    nbytes = kernel.numpy().nbytes
    assert nbytes == 16_000_000 and peak < 2 * nbytes, peak
