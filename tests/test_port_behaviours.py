"""TensorFlow behaviours that ports from TF2 programs rely on, replayed from
``reference/ports_reference.json`` (recorded by ``reference/make_ports_reference.py`` with
TensorFlow 2.21 and Keras 3): true division of integers, ``zeros``/``ones`` with a positional
dtype, a functional CNN on unknown spatial sizes, exact gradients of products at zeros, and the
names of variables created inside name scopes."""
import json
import os

import numpy as np
import pytest

import framework as fw
import layers
from framework.test import check_gradients
from reference import replay

with open(os.path.join(os.path.dirname(__file__), "reference", "ports_reference.json")) as _f:
    REFERENCE = json.load(_f)

LEFT, RIGHT = [3, 4, 100], [2, 8, 5]


def _matches(fn, want):
    """``fn()`` gives the recorded tensor (dtype, shape, values), or raises where TF raised."""
    if "raises" in want:
        with pytest.raises(TypeError if want["raises"] == "TypeError" else ValueError):
            fn()
        return
    out = fn()
    assert (out.dtype.name, list(out.shape)) == (want["dtype"], want["shape"])
    np.testing.assert_allclose(out.numpy(), want["value"], rtol=1e-6)


# --- true division -------------------------------------------------------------------------------
def _operand(kind, values, dtype):
    if kind == "tensor":
        return fw.constant(np.array(values, dtype))
    if kind == "int32_tensor":
        return fw.constant(values)
    if kind == "int":
        return values[0]
    if kind == "float":
        return 2.5
    if kind == "numpy":
        return np.array(values, dtype)
    if kind == "numpy_int64":
        return np.array(values, np.int64)
    return list(values)


def _divide(op, x, y):
    return x / y if op == "operator" else replay.resolve(fw, op)(x, y)


DIVISIONS = REFERENCE["divide"]


@pytest.mark.parametrize("case", DIVISIONS, ids=[
    f"{c['op']}-{c.get('input_dtype', 'python')}-{c.get('left', '')}-{c.get('right', '')}"
    for c in DIVISIONS])
def test_true_division_has_tensorflows_dtype(case):
    if "python" in case:
        x, y = case["python"]
    else:
        x = _operand(case["left"], LEFT, case["input_dtype"])
        y = _operand(case["right"], RIGHT, case["input_dtype"])
    _matches(lambda: _divide(case["op"], x, y), case)


def test_every_integer_dtype_is_recorded_with_tensorflows_rule():
    """Float32 for 8- and 16-bit integers, float64 for the wider ones, in every recorded form."""
    integers = [c for c in DIVISIONS if "raises" not in c
                and np.dtype(c.get("input_dtype", "float32")).kind in "iu"]
    assert {c["input_dtype"] for c in integers} == {
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
    for case in integers:
        narrow = np.dtype(case["input_dtype"]).itemsize <= 2
        assert case["dtype"] == ("float32" if narrow else "float64")


def test_uint8_images_over_255_feed_a_float32_dense():
    ref = REFERENCE["uint8_dense"]
    images = fw.constant(np.array(ref["images"], np.uint8))
    scaled = images / 255
    assert scaled.dtype.name == ref["scaled_dtype"] == "float32"
    dense = layers.Dense(3)
    dense.build((None, 6))
    dense.set_weights([np.array(ref["kernel"], np.float32), np.array(ref["bias"], np.float32)])
    out = dense(scaled)
    assert out.dtype.name == ref["output_dtype"]
    np.testing.assert_allclose(out.numpy(), ref["output"], rtol=1e-5, atol=1e-6)


def test_integer_division_under_function_follows_its_inputs():
    divide = fw.function(lambda x, y: x / y)
    first = divide(fw.constant(np.array([3, 4], np.uint8)), fw.constant(np.array([2, 8],
                                                                                  np.uint8)))
    second = divide(fw.constant(np.array([9, 1], np.uint8)), fw.constant(np.array([4, 5],
                                                                                   np.uint8)))
    assert first.dtype == second.dtype == fw.float32
    np.testing.assert_allclose(second.numpy(), [2.25, 0.2], rtol=1e-6)


def test_bool_division_is_refused_in_one_line():
    flags = fw.constant([True, False])
    with pytest.raises(TypeError, match=r"^divide: expected a numeric tensor, got bool"):
        flags / flags


# --- zeros / ones with a positional dtype -------------------------------------------------------
CREATION = REFERENCE["creation"]
SUPPORTED = [c for c in CREATION if c.get("dtype") != "string"]


@pytest.mark.parametrize("case", SUPPORTED, ids=[f"{c['fn']}{c['args']}" for c in SUPPORTED])
def test_zeros_and_ones_read_the_second_argument_as_tensorflow_does(case):
    _matches(lambda: getattr(fw, case["fn"])(*case["args"]), case)


def test_a_string_dtype_is_refused_naming_the_function():
    assert [c["args"] for c in CREATION if c.get("dtype") == "string"] == [[[2], 7]]
    with pytest.raises(TypeError, match=r"^zeros: cannot interpret 7 as a dtype"):
        fw.zeros([2], 7)


def test_the_dtype_enum_reaches_every_dtype_argument_as_in_tensorflow():
    assert fw.cast(fw.constant([1, 2]), 1).dtype == fw.float32
    assert fw.constant(1, 2).dtype == fw.float64
    assert fw.as_dtype(9) == fw.int64
    assert fw.zeros([2], "double").dtype == fw.float64


# --- exact gradients of products at zeros --------------------------------------------------------
PRODUCTS = REFERENCE["products"]
PRODUCT_IDS = [f"{c['op']}-{c['point']}-" + ",".join(f"{k}={v}" for k, v in c["kwargs"].items())
               for c in PRODUCTS]


def _product(case):
    op = fw.math.cumprod if case["op"] == "cumprod" else fw.reduce_prod
    return lambda t: op(t, **case["kwargs"])


def _gradients(fn, case):
    """``fn(x)``, the gradient of ``sum(w * fn(x))`` and that of ``sum(v * gradient)``, for the
    recorded input, weights ``w`` and directions ``v``."""
    x = fw.constant(np.array(case["input"]))
    with fw.GradientTape() as outer:
        outer.watch(x)
        with fw.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
            total = fw.reduce_sum(y * fw.constant(np.array(case["weights"])))
        grad = inner.gradient(total, x)
        second = fw.reduce_sum(grad * fw.constant(np.array(case["directions"])))
    return y.numpy(), grad.numpy(), outer.gradient(second, x).numpy()


@pytest.mark.parametrize("case", PRODUCTS, ids=PRODUCT_IDS)
def test_products_are_differentiable_exactly_at_zeros(case):
    """Finite differences at orders 1 and 2 (float64), zeros among the inputs or not."""
    check_gradients(_product(case), fw.constant(np.array(case["input"])), order=2)


@pytest.mark.parametrize("case", PRODUCTS, ids=PRODUCT_IDS)
def test_products_match_tensorflow_wherever_its_division_is_exact(case):
    """TensorFlow's gradients divide by the input with ``div_no_nan``: exact with no zero among
    the inputs, where every value is compared; with zeros, its first-order ``reduce_prod``
    gradient (two exclusive cumprods) is exact too, and elsewhere the values at nonzero inputs
    are (a zero input gets TensorFlow's 0, and the exact value here)."""
    output, grad, grad2 = _gradients(_product(case), case)
    np.testing.assert_allclose(output, case["output"], rtol=1e-12)
    x = np.array(case["input"])
    exact = np.ones(x.shape, bool) if case["point"] == "no_zeros" else x != 0
    tf_grad, tf_grad2 = np.array(case["grad"]), np.array(case["grad2"])
    if case["op"] == "reduce_prod":  # first order exact everywhere, second at nonzero inputs
        np.testing.assert_allclose(grad, tf_grad, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grad2[exact], tf_grad2[exact], rtol=1e-12, atol=1e-12)
        assert np.all(tf_grad2[~exact] == 0)
    else:  # first order exact at nonzero inputs, second with no zero at all
        np.testing.assert_allclose(grad[exact], tf_grad[exact], rtol=1e-12, atol=1e-12)
        assert np.all(tf_grad[~exact] == 0)
        if case["point"] == "no_zeros":
            np.testing.assert_allclose(grad2, tf_grad2, rtol=1e-12, atol=1e-12)


def test_cumprod_at_a_zero_has_the_closed_form_gradient():
    """d/dx1 of sum(w * cumprod([2, x1, 3, 4])) at x1 = 0: 2*w1 + 2*3*w2 + 2*3*4*w3."""
    x = fw.constant([2.0, 0.0, 3.0, 4.0], fw.float64)
    with fw.GradientTape() as tape:
        tape.watch(x)
        total = fw.reduce_sum(fw.math.cumprod(x) * fw.constant([1.0, 2.0, 3.0, 4.0],
                                                                fw.float64))
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), [1.0, 118.0, 0.0, 0.0])


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprods_jacobian_at_zeros_is_its_finite_difference(exclusive, reverse):
    """A Jacobian runs the VJP with a cotangent of extra leading axes."""
    x0 = np.array([[2.0, 0.0, 3.0], [0.5, 0.0, 0.0]])

    def cumprod(values):
        return fw.math.cumprod(fw.constant(values), axis=1, exclusive=exclusive,
                               reverse=reverse).numpy()

    x = fw.constant(x0)
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = fw.math.cumprod(x, axis=1, exclusive=exclusive, reverse=reverse)
    jacobian = tape.jacobian(y, x).numpy()
    for index in np.ndindex(x0.shape):
        step = np.zeros_like(x0)
        step[index] = 1e-6
        column = (cumprod(x0 + step) - cumprod(x0 - step)) / 2e-6
        np.testing.assert_allclose(jacobian[(Ellipsis, *index)], column, atol=1e-8)


def test_product_gradients_under_function_follow_new_inputs():
    def second_derivative(x):
        with fw.GradientTape() as outer:
            outer.watch(x)
            with fw.GradientTape() as inner:
                inner.watch(x)
                y = fw.reduce_sum(fw.math.cumprod(x, reverse=True)) + fw.reduce_prod(x)
            g = inner.gradient(y, x)
            s = fw.reduce_sum(g)
        return g, outer.gradient(s, x)

    compiled = fw.function(second_derivative)
    compiled(fw.constant([1.0, 2.0, 3.0], fw.float64))
    x = fw.constant([2.0, 0.0, 5.0], fw.float64)
    traced = compiled(x)
    for got, want in zip(traced, second_derivative(x)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    assert traced[0].numpy()[1] != 0  # the exact gradient at the zero


# --- variable names in name scopes ---------------------------------------------------------------
NAMES = REFERENCE["names"]


class Scaled(fw.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = fw.Variable(1.0, name="x")
            self.v = fw.Variable(2.0)


class Outer(fw.Module):
    def __init__(self):
        super().__init__(name="outer_module")
        with self.name_scope:
            self.inner = Scaled(name="inner_module")


def _names():
    """What make_ports_reference.names records, with ``fw`` in place of ``tf``."""
    got = {"plain": fw.Variable(1.0, name="x").name, "unnamed": fw.Variable(1.0).name,
           "with_colon": fw.Variable(1.0, name="x:0").name}
    with fw.name_scope("model") as scope:
        got["scope_value"] = scope
        got["in_scope"] = fw.Variable(1.0, name="x").name
        got["unnamed_in_scope"] = fw.Variable(1.0).name
        with fw.name_scope("inner") as inner:
            got["nested_scope_value"] = inner
            got["nested"] = fw.Variable(1.0, name="x").name
        with fw.name_scope("top/") as absolute:
            got["absolute_scope_value"] = absolute
            got["absolute"] = fw.Variable(1.0, name="x").name
        with fw.name_scope(""):
            got["reset"] = fw.Variable(1.0, name="x").name
        module = Scaled(name="in_model")
        dense = layers.Dense(2, name="dense_in_scope")
        dense.build((None, 3))
    got["after_scope"] = fw.Variable(1.0, name="x").name
    got["module"] = [Scaled(name="model").w.name, Scaled(name="model").v.name,
                     Scaled(name="model").name_scope.name]
    got["default_module"] = [Scaled().w.name, Scaled().name_scope.name]
    got["module_in_scope"] = [module.w.name, module.name_scope.name]
    outer = Outer()
    got["nested_modules"] = [outer.inner.w.name, outer.inner.name_scope.name]
    got["keras_in_scope"] = [dense.kernel.name, dense.kernel.path, dense.bias.path]
    got["keras_build"] = _keras_build()
    return got


class Holder(layers.Layer):
    def build(self, input_shape):
        self.tv = fw.Variable(1.0, name="tv")
        self.k = self.add_weight(shape=(), name="k")

    def call(self, x):
        return x * self.k * self.tv


class Wrapper(layers.Model):
    def __init__(self):
        super().__init__(name="outer")
        self.inner = Holder(name="inner")

    def call(self, x):
        return self.inner(x)


def _keras_build():
    built = Holder(name="built")
    built.build(None)
    called = Holder(name="called")
    called(fw.ones((1,)))
    wrapper = Wrapper()
    wrapper(fw.ones((1,)))
    with fw.name_scope("top"):
        scoped = Holder(name="scoped")
        scoped.build(None)
    return {key: [layer.tv.name, layer.k.path] for key, layer in
            [("built", built), ("called", called), ("in_model", wrapper.inner),
             ("in_scope", scoped)]}


def test_variable_names_in_name_scopes_are_tensorflows():
    want = {k: v for k, v in NAMES.items() if k != "none_scope"}
    assert _names() == want


def test_a_name_scope_of_none_is_refused_as_in_tensorflow():
    assert NAMES["none_scope"]["raises"] == "ValueError"
    with pytest.raises(ValueError, match="^name for name_scope must be a string"):
        fw.name_scope(None)


def test_keras_weights_and_metric_variables_keep_keras_names():
    dense = layers.Dense(2)
    dense.build((None, 3))
    assert dense.kernel.name == "kernel" and dense.kernel.path == f"{dense.name}/kernel"
    assert [v.name for v in fw.metrics.Mean().variables] == ["total", "count"]


# --- a functional CNN on unknown spatial sizes ---------------------------------------------------
CNN = REFERENCE["cnn"]


def _cnn():
    """The recorded Keras model, layer for layer; also each symbolic tensor's shape."""
    inputs = layers.Input(shape=(None, None, 3))
    tensors = [inputs]
    for layer in [layers.Conv2D(4, 3, activation="relu"), layers.MaxPooling2D(),
                  layers.Conv2D(5, 3, padding="same", strides=2),
                  layers.GlobalAveragePooling2D(), layers.Dense(2)]:
        tensors.append(layer(tensors[-1]))
    return layers.Model(inputs, tensors[-1]), [t.shape for t in tensors]


def test_a_cnn_on_unknown_sizes_has_keras_shapes_and_runs_on_any_size():
    model, shapes = _cnn()
    assert [list(s) for s in shapes] == CNN["layer_output_shapes"]
    assert (list(model.input_shape), list(model.output_shape)) == (CNN["input_shape"],
                                                                   CNN["output_shape"])
    assert model.layers[1].kernel.shape == (3, 3, 3, 4)  # built from the channels alone
    model.set_weights([np.array(w, np.float32) for w in CNN["weights"]])
    for run in CNN["runs"]:
        out = model(np.array(run["input"], np.float32))
        np.testing.assert_allclose(out.numpy(), run["output"], rtol=1e-5, atol=1e-6)


def test_a_cnn_on_unknown_sizes_under_function_follows_each_size():
    model, _ = _cnn()
    model.set_weights([np.array(w, np.float32) for w in CNN["weights"]])
    step = fw.function(lambda x: model(x))
    for run in CNN["runs"] + CNN["runs"]:
        images = np.array(run["input"], np.float32)
        np.testing.assert_allclose(step(fw.constant(images)).numpy(), model(images).numpy(),
                                   rtol=1e-6)


def test_a_dense_on_an_unknown_last_axis_is_refused_naming_it():
    flat = layers.Flatten()(layers.Input(shape=(None, None, 3)))
    assert flat.shape == (None, None)
    dense = layers.Dense(2, name="head")
    with pytest.raises(ValueError, match="^Dense 'head' needs inputs with a known last "
                                         "dimension, got input shape \\(None, None\\)$"):
        dense(flat)
    assert not dense.built and dense.variables == []


def test_a_sequential_and_a_subclassed_model_build_on_unknown_sizes():
    sequential = layers.Sequential([layers.Input(shape=(None, None, 3)), layers.Conv2D(4, 3),
                                    layers.GlobalAveragePooling2D(), layers.Dense(2)])
    assert sequential.compute_output_shape((None, None, None, 3)) == (None, 2)
    assert sequential(np.zeros((1, 5, 6, 3), np.float32)).shape == (1, 2)

    class Net(layers.Model):
        def __init__(self):
            super().__init__()
            self.conv, self.pool = layers.Conv2D(4, 3), layers.GlobalMaxPooling2D()

        def call(self, x):
            return self.pool(self.conv(x))

    net = Net()
    net.build((None, None, None, 3))
    assert net.conv.kernel.shape == (3, 3, 3, 4)
    assert net.compute_output_shape((None, None, None, 3)) == (None, 4)
    assert net.compute_output_shape((2, 7, 7, 3)) == (2, 4)
