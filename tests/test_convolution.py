"""fw.nn.conv2d, max_pool2d, avg_pool2d, their 1-D forms and Keras's convolution layers:
outputs and gradients as
recorded from TensorFlow 2.21 and Keras 3 (tests/reference/make_conv_reference.py), float64
finite differences at orders 1 and 2, refusals, and a small CNN trained eagerly and under
fw.function."""
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw
import layers
from optimizers import Adam

REFERENCE = json.loads((Path(__file__).parent / "reference" / "conv_reference.json").read_text())


def close(got, expected, tolerance=2e-5):
    expected = np.asarray(expected, np.float32)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=tolerance,
                               atol=tolerance * max(1.0, float(np.abs(expected).max())))


def _op(case):
    if case["op"] == "conv2d":
        return lambda x, w: fw.nn.conv2d(x, w, case["strides"], case["padding"],
                                         dilations=case["dilations"])
    if case["op"] == "conv1d":
        return lambda x, w: fw.nn.conv1d(x, w, case["strides"], case["padding"],
                                         dilations=case["dilations"])
    if case["op"] == "conv2d_transpose":
        return lambda x, w: fw.nn.conv2d_transpose(x, w, case["output_shape"], case["strides"],
                                                   case["padding"], dilations=case["dilations"])
    pool = getattr(fw.nn, case["op"])
    return lambda x: pool(x, case["ksize"], case["strides"], case["padding"])


def _op_id(index):
    case = REFERENCE["ops"][index]
    padding = case["padding"] if isinstance(case["padding"], str) else "explicit"
    return f"{case['op']}-{padding}-{index}"


@pytest.mark.parametrize("index", range(len(REFERENCE["ops"])), ids=_op_id)
def test_ops_give_tensorflows_outputs_and_gradients(index):
    case = REFERENCE["ops"][index]
    inputs = [fw.constant(np.asarray(case["x"], np.float32))]
    if "filters" in case:
        inputs.append(fw.constant(np.asarray(case["filters"], np.float32)))
    with fw.GradientTape() as tape:
        tape.watch(inputs)
        out = _op(case)(*inputs)
        total = fw.reduce_sum(out * fw.constant(np.asarray(case["cotangent"], np.float32)))
    close(out.numpy(), case["out"])
    grads = tape.gradient(total, inputs)
    close(grads[0].numpy(), case["grad_x"])
    if "filters" in case:
        close(grads[1].numpy(), case["grad_filters"])


@pytest.mark.parametrize("index", range(len(REFERENCE["layers"])),
                         ids=[f"{c['layer']}-{i}" for i, c in enumerate(REFERENCE["layers"])])
def test_layers_give_keras_outputs_shapes_and_configs(index):
    case = REFERENCE["layers"][index]
    layer = getattr(layers, case["layer"])(**case["kwargs"])
    x = fw.constant(np.asarray(case["x"], np.float32))
    layer(x)
    layer.set_weights([np.asarray(w, np.float32) for w in case["weights"]])
    close(layer(x).numpy(), case["out"])
    assert list(layer.compute_output_shape(x.shape)) == case["output_shape"]
    config = layer.get_config()
    for key, value in case["config"].items():
        if key in ("activity_regularizer", "kernel_constraint", "bias_constraint"):
            continue  # (no constraints here; the activity regularizer is Layer's own key)
        got = config[key]
        assert (list(got) if isinstance(got, tuple) else got) == value, key
    rebuilt = type(layer).from_config(config)
    assert rebuilt.get_config() == config


def _x(shape, seed=0):
    return fw.constant(np.random.default_rng(seed).standard_normal(shape))


@pytest.mark.parametrize("padding, strides, dilations", [
    ("VALID", 1, 1), ("SAME", 2, 1), ("SAME", 1, 2), ([[0, 0], [1, 0], [2, 1], [0, 0]], 1, 1)])
def test_conv2d_finite_differences_orders_one_and_two(padding, strides, dilations):
    x, w = _x((2, 5, 4, 2), 1), _x((2, 3, 2, 3), 2)
    fw.test.check_gradients(lambda x: fw.nn.conv2d(x, w, strides, padding, dilations=dilations),
                            x, order=2)
    fw.test.check_gradients(lambda w: fw.nn.conv2d(x, w, strides, padding, dilations=dilations),
                            w, order=2)
    # second order through a nonlinearity: d/dw of (d/dx of sum(tanh(conv)^2))
    fw.test.check_gradients(
        lambda w: fw.nn.conv2d(fw.tanh(fw.nn.conv2d(x, w, strides, padding,
                                                    dilations=dilations)), fw.transpose(
            w[:1, :1], (0, 1, 3, 2)), 1, "VALID"), w, order=2)


@pytest.mark.parametrize("padding, strides, out",
                         [("SAME", 2, 8), ("VALID", 2, 9), ("VALID", 3, 12)])
def test_conv2d_transpose_is_conv2ds_transpose_and_differentiates(padding, strides, out):
    x, w = _x((2, 4, 4, 3), 4), _x((3, 3, 2, 3), 5)
    z = _x((2, out, out, 2), 6)
    shape = (2, out, out, 2)
    forward = fw.reduce_sum(fw.nn.conv2d(z, w, strides, padding) * x)
    transposed = fw.reduce_sum(z * fw.nn.conv2d_transpose(x, w, shape, strides, padding))
    assert float(forward) == pytest.approx(float(transposed), rel=1e-12)
    fw.test.check_gradients(lambda x: fw.nn.conv2d_transpose(fw.tanh(x), w, shape, strides,
                                                             padding), x, order=2)
    fw.test.check_gradients(lambda w: fw.nn.conv2d_transpose(x, fw.sin(w), shape, strides,
                                                             padding), w, order=2)


@pytest.mark.parametrize("pool", [fw.nn.max_pool2d, fw.nn.avg_pool2d])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_pools_finite_differences_orders_one_and_two(pool, padding):
    x = _x((2, 5, 6, 2), 3)  # distinct values: no ties for the max
    fw.test.check_gradients(lambda x: pool(fw.tanh(x), 3, 2, padding) ** 2, x, order=2)


def test_refusals_name_the_culprit():
    x, w = fw.zeros((1, 5, 5, 2)), fw.zeros((3, 3, 2, 4))
    with pytest.raises(ValueError, match="has 2 channels but the filters"):
        fw.nn.conv2d(x, fw.zeros((3, 3, 3, 4)), 1, "VALID")
    with pytest.raises(ValueError, match="padding must be 'SAME', 'VALID'"):
        fw.nn.conv2d(x, w, 1, "FULL")
    with pytest.raises(ValueError, match="strides and dilations cannot both"):
        fw.nn.conv2d(x, w, 2, "SAME", dilations=2)
    with pytest.raises(ValueError, match="does not fit an input of 5x5"):
        fw.nn.conv2d(x, fw.zeros((7, 7, 2, 1)), 1, "VALID")
    with pytest.raises(ValueError, match="input must be 4-D"):
        fw.nn.max_pool2d(fw.zeros((5, 5, 2)), 2, 2, "VALID")
    with pytest.raises(ValueError, match="only data_format='NHWC'"):
        fw.nn.avg_pool2d(x, 2, 2, "VALID", data_format="NCHW")
    with pytest.raises(ValueError, match="Conv2D: groups must be a positive int dividing"):
        layers.Conv2D(4, 3, groups=3)
    with pytest.raises(ValueError, match="MaxPooling2D: padding must be"):
        layers.MaxPooling2D(padding="full")
    with pytest.raises(ValueError, match="does not come from a convolution"):
        fw.nn.conv2d_transpose(fw.zeros((1, 4, 4, 2)), fw.zeros((3, 3, 1, 2)), (1, 20, 20, 1),
                               2, "SAME")
    with pytest.raises(ValueError, match="output_padding must be an int or a pair"):
        layers.Conv2DTranspose(2, 3, strides=2, output_padding=2)


@pytest.mark.parametrize("padding, stride, dilations", [("VALID", 1, 1), ("SAME", 2, 1),
                                                       ("SAME", 1, 2)])
def test_conv1d_and_the_1d_pools_finite_differences_orders_one_and_two(padding, stride,
                                                                       dilations):
    x, w = _x((2, 7, 2), 11), _x((3, 2, 3), 12)
    fw.test.check_gradients(lambda x: fw.nn.conv1d(fw.tanh(x), w, stride, padding,
                                                   dilations=dilations), x, order=2)
    fw.test.check_gradients(lambda w: fw.nn.conv1d(x, fw.sin(w), stride, padding,
                                                   dilations=dilations), w, order=2)
    for pool in (fw.nn.max_pool1d, fw.nn.avg_pool1d):
        fw.test.check_gradients(lambda x: pool(fw.tanh(x), 3, stride, padding) ** 2, x,
                                order=2)


def test_conv1d_is_conv2d_on_one_row_and_max_pool_takes_either_rank():
    x, w = _x((2, 9, 3), 13), _x((4, 3, 2), 14)
    one_row = fw.nn.conv2d(fw.reshape(x, (2, 1, 9, 3)), fw.reshape(w, (1, 4, 3, 2)), 2, "SAME")
    np.testing.assert_array_equal(fw.nn.conv1d(x, w, 2, "SAME").numpy(),
                                  one_row.numpy()[:, 0])
    np.testing.assert_array_equal(fw.nn.max_pool(x, 2, 2, "VALID").numpy(),
                                  fw.nn.max_pool1d(x, 2, 2, "VALID").numpy())
    image = fw.reshape(x, (2, 9, 3, 1))
    np.testing.assert_array_equal(fw.nn.avg_pool(image, 2, 2, "SAME").numpy(),
                                  fw.nn.avg_pool2d(image, 2, 2, "SAME").numpy())


def test_a_causal_conv1d_output_never_sees_a_later_step():
    layer = layers.Conv1D(2, 3, padding="causal", dilation_rate=2)
    x = _x((1, 10, 2), 15).numpy()
    before = layer(fw.constant(x)).numpy()
    x[:, 6:] += 100.0
    after = layer(fw.constant(x)).numpy()
    np.testing.assert_array_equal(before[:, :6], after[:, :6])
    assert not np.allclose(before[:, 6:], after[:, 6:])


def test_1d_refusals_name_the_culprit():
    x = fw.zeros((1, 6, 2))
    with pytest.raises(ValueError, match="conv1d: filters must be 3-D"):
        fw.nn.conv1d(x, fw.zeros((3, 3, 2, 4)), 1, "VALID")
    with pytest.raises(ValueError, match="conv1d: input must be 3-D"):
        fw.nn.conv1d(fw.zeros((1, 6, 6, 2)), fw.zeros((3, 2, 4)), 1, "VALID")
    with pytest.raises(ValueError, match="conv1d: padding must be 'SAME' or 'VALID'"):
        fw.nn.conv1d(x, fw.zeros((3, 2, 4)), 1, [[0, 0], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match="conv1d: stride must be a positive int"):
        fw.nn.conv1d(x, fw.zeros((3, 2, 4)), (1, 2), "VALID")
    with pytest.raises(ValueError, match="only data_format='NWC'"):
        fw.nn.max_pool1d(x, 2, 2, "VALID", data_format="NCW")
    with pytest.raises(ValueError, match="Conv1D: padding must be 'valid' or 'same' or "
                                         "'causal'"):
        layers.Conv1D(2, 3, padding="full")
    with pytest.raises(ValueError, match="Conv1D: kernel_size must be a positive int"):
        layers.Conv1D(2, (3, 3))
    with pytest.raises(ValueError, match="needs inputs \\(batch, steps, channels\\)"):
        layers.Conv1D(2, 3)(fw.zeros((1, 6, 6, 2)))


def _fit(model, x, y, learning_rate, steps, compiled):
    """The losses of ``steps`` Adam steps on one batch, eager or under fw.function, and the
    model's variables after them."""
    opt = Adam(learning_rate)

    def step():
        with fw.GradientTape() as tape:
            loss = fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(
                y, model(x), from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    run = fw.function(step) if compiled else step
    losses = [float(run()) for _ in range(steps)]
    return losses, [v.numpy() for v in model.variables]


def _train(compiled):
    fw.random.set_seed(5)
    rng = np.random.default_rng(6)
    x = fw.constant(rng.standard_normal((16, 8, 8, 1)).astype(np.float32))
    y = fw.constant((x.numpy()[:, :4].sum(axis=(1, 2, 3)) > 0).astype(np.int32))
    model = layers.Sequential([layers.Conv2D(4, 3, activation="relu", padding="same"),
                               layers.MaxPooling2D(), layers.Conv2D(4, 3),
                               layers.GlobalAveragePooling2D(), layers.Dense(2)])
    return _fit(model, x, y, 0.02, 40, compiled)


def test_vectorized_jacobians_equal_the_row_by_row_ones():
    """The windows' VJPs take a Jacobian's stacked rows (extra leading axes) through."""
    x, w = _x((1, 4, 4, 2), 7), _x((2, 2, 2, 2), 8)
    with fw.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        y = fw.nn.avg_pool2d(fw.tanh(fw.nn.conv2d(x, w, 1, "SAME")), 2, 1, "SAME")
    for source in (x, w):
        vectorized = tape.jacobian(y, source).numpy()
        looped = tape.jacobian(y, source, experimental_use_pfor=False).numpy()
        np.testing.assert_allclose(vectorized, looped, rtol=1e-12, atol=1e-14)
    with fw.GradientTape() as outer:  # second order with stacked rows: the jacobian of a gradient
        outer.watch(w)
        with fw.GradientTape() as inner:
            inner.watch(w)
            total = fw.reduce_sum(fw.nn.conv2d(x, w, 1, "VALID") ** 2)
        grad = inner.gradient(total, w)
    hessian = outer.jacobian(grad, w).numpy().reshape(16, 16)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10, atol=1e-12)


def _gan(compiled):
    """TF2's DCGAN tutorial step, shrunk: a generator of Conv2DTranspose, BatchNormalization
    and LeakyReLU layers, a Conv2D discriminator with Dropout, two tapes, two Adams."""
    fw.random.set_seed(9)
    generator = layers.Sequential([
        layers.Dense(2 * 2 * 8, use_bias=False), layers.BatchNormalization(), layers.LeakyReLU(),
        layers.Reshape((2, 2, 8)),
        layers.Conv2DTranspose(4, (5, 5), strides=(2, 2), padding="same", use_bias=False),
        layers.BatchNormalization(), layers.LeakyReLU(),
        layers.Conv2DTranspose(1, (5, 5), strides=(2, 2), padding="same", use_bias=False,
                               activation="tanh")])
    discriminator = layers.Sequential([
        layers.Conv2D(4, (5, 5), strides=(2, 2), padding="same"), layers.LeakyReLU(),
        layers.Dropout(0.3), layers.Flatten(), layers.Dense(1)])
    cross_entropy = fw.losses.BinaryCrossentropy(from_logits=True)
    g_opt, d_opt = Adam(1e-3), Adam(1e-3)
    images = fw.constant(np.random.default_rng(0).uniform(-1, 1, (8, 8, 8, 1))
                         .astype(np.float32))

    def train_step(images):
        noise = fw.random.normal([8, 6])
        with fw.GradientTape() as gen_tape, fw.GradientTape() as disc_tape:
            fake = discriminator(generator(noise, training=True), training=True)
            real = discriminator(images, training=True)
            gen_loss = cross_entropy(fw.ones_like(fake), fake)
            disc_loss = (cross_entropy(fw.ones_like(real), real)
                         + cross_entropy(fw.zeros_like(fake), fake))
        g_vars, d_vars = generator.trainable_variables, discriminator.trainable_variables
        g_opt.apply_gradients(zip(gen_tape.gradient(gen_loss, g_vars), g_vars))
        d_opt.apply_gradients(zip(disc_tape.gradient(disc_loss, d_vars), d_vars))
        return gen_loss, disc_loss

    step = fw.function(train_step) if compiled else train_step
    losses = [tuple(float(v) for v in step(images)) for _ in range(4)]
    return losses, [v.numpy() for v in generator.variables + discriminator.variables]


def test_the_dcgan_tutorials_step_runs_eagerly_and_compiled_with_the_same_numbers():
    eager, compiled = _gan(False), _gan(True)
    assert eager[0] == compiled[0] and all(np.isfinite(eager[0]).ravel())
    for a, b in zip(eager[1], compiled[1]):
        np.testing.assert_array_equal(a, b)


def _text_cnn(compiled):
    """A sequence classifier as TF2's text tutorials build it: Embedding, Conv1D, pools."""
    fw.random.set_seed(3)
    rng = np.random.default_rng(4)
    tokens = fw.constant(rng.integers(0, 20, (12, 10)).astype(np.int32))
    y = fw.constant((tokens.numpy()[:, :3] < 10).sum(axis=1) % 2)
    model = layers.Sequential([layers.Embedding(20, 4), layers.Conv1D(6, 3, activation="relu"),
                               layers.MaxPooling1D(), layers.Conv1D(4, 2, padding="causal"),
                               layers.GlobalMaxPooling1D(), layers.Dense(2)])
    return _fit(model, tokens, y, 0.03, 30, compiled)


@pytest.mark.parametrize("train", [_train, _text_cnn], ids=["image CNN", "text CNN"])
def test_a_small_cnn_learns_and_fw_function_gives_eagers_numbers(train):
    eager, compiled = train(False), train(True)
    assert eager[0][-1] < 0.5 * eager[0][0]
    assert eager[0] == compiled[0]
    for a, b in zip(eager[1], compiled[1]):
        np.testing.assert_array_equal(a, b)
