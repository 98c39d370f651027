"""Gradients of every differentiable op, checked against finite differences.

One table of cases (op, NumPy reference, float64 inputs kept away from kinks), three checks per
case: the forward equals NumPy; first and second derivatives match finite differences along
random directions (``fw.test.check_gradients``, order=2); and a Jacobian computed in one
vectorized pass (the VJPs see a cotangent with a leading batch axis) equals the rows obtained
one ``gradient`` call at a time. Hypothesis then drives broadcasting, scalars, ``(1, n)`` shapes,
``keepdims`` and matmul's batch/vector shapes.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays, mutually_broadcastable_shapes

import framework as fw
from framework.tuning import host
from framework.test import check_gradients

_rng = np.random.default_rng(20240601)


def normal(*shape):
    return _rng.standard_normal(shape)


def positive(*shape):
    """Inputs for log, sqrt, pow's base and divisors: in [0.5, 2]."""
    return _rng.uniform(0.5, 2.0, shape)


def away(*shape, margin=0.2):
    """Values with |x| >= margin, so abs, relu and friends stay off their kinks."""
    return _rng.choice([-1.0, 1.0], shape) * _rng.uniform(margin, 2.0, shape)


def apart(x, margin=0.2):
    """A partner for ``x`` that differs from it by at least ``margin`` everywhere."""
    return x + away(*np.shape(x), margin=margin)


def off_bounds(*shape, bound=1.0):
    """Values inside (-bound, bound) or outside it, none within 0.1 of a bound."""
    inside = _rng.uniform(0.0, bound - 0.1, shape)
    outside = _rng.uniform(bound + 0.1, 2 * bound, shape)
    return _rng.choice([-1.0, 1.0], shape) * np.where(_rng.random(shape) < 0.5, inside, outside)


def labels_for(logits):
    return _rng.integers(0, logits.shape[-1], logits.shape[:-1]).astype(np.int32)


def soft_labels(*shape):
    p = _rng.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


# --- NumPy references -----------------------------------------------------------------------
_erf = np.vectorize(math.erf)


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_sparse_xent(labels, logits):
    return -np.take_along_axis(np_log_softmax(logits), labels[..., None].astype(np.int64), -1)[..., 0]


def np_gelu(x, approximate=False):
    if approximate:
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_clip(x, lo, hi):
    return np.clip(x, lo, hi)


# --- the table ------------------------------------------------------------------------------
# (id, function of tensors, NumPy reference of arrays, inputs)
X34, Y34 = normal(3, 4), normal(3, 4)
M = normal(3, 3)
T2334 = normal(2, 3, 3, 4)
LOGITS = normal(4, 5)
MAXABLE = away(3, 4)
GATHER = normal(5, 3)
MASK = normal(3, 4) > 0

ELEMENTWISE = [
    ("add", fw.add, np.add, [X34, Y34]),
    ("add_row_broadcast", fw.add, np.add, [X34, normal(1, 4)]),
    ("add_scalar", fw.add, np.add, [X34, normal()]),
    ("add_rank_broadcast", fw.add, np.add, [normal(2, 1, 4), normal(3, 1)]),
    ("subtract", fw.subtract, np.subtract, [X34, normal(3, 1)]),
    ("multiply", fw.multiply, np.multiply, [X34, normal(4)]),
    ("multiply_scalar", fw.multiply, np.multiply, [normal(), X34]),
    ("divide", fw.divide, np.divide, [X34, positive(3, 4)]),
    ("divide_broadcast", fw.divide, np.divide, [normal(1, 4), positive(3, 1)]),
    ("negative", fw.negative, np.negative, [X34]),
    ("pow", fw.pow, np.power, [positive(3, 4), normal(3, 4)]),
    ("pow_scalar_exponent", fw.pow, np.power, [positive(3, 4), np.array(2.5)]),
    ("pow_integer_exponent", lambda x: fw.pow(x, 3.0), lambda x: x ** 3, [normal(3, 4)]),
    ("square", fw.square, np.square, [X34]),
    ("sqrt", fw.sqrt, np.sqrt, [positive(3, 4)]),
    ("exp", fw.exp, np.exp, [X34]),
    ("log", fw.log, np.log, [positive(3, 4)]),
    ("abs", fw.abs, np.abs, [away(3, 4)]),
    ("sin", fw.sin, np.sin, [X34]),
    ("cos", fw.cos, np.cos, [X34]),
    ("tanh", fw.tanh, np.tanh, [X34]),
    ("sigmoid", fw.sigmoid, np_sigmoid, [X34]),
    ("maximum", fw.maximum, np.maximum, [MAXABLE, apart(MAXABLE)]),
    ("maximum_broadcast", fw.maximum, np.maximum, [MAXABLE, np.array(0.05)]),
    ("minimum", fw.minimum, np.minimum, [MAXABLE, apart(MAXABLE)]),
    ("minimum_broadcast", fw.minimum, np.minimum, [np.full((3, 1), 0.05), MAXABLE]),
    ("clip_by_value", lambda x: fw.clip_by_value(x, -1.0, 1.0),
     lambda x: np_clip(x, -1.0, 1.0), [off_bounds(3, 4)]),
    ("clip_by_value_inside", lambda x: fw.clip_by_value(x, -5.0, 5.0),
     lambda x: np_clip(x, -5, 5), [X34]),
    ("cast_same", lambda x: fw.cast(x, fw.float64), lambda x: x, [X34]),
    ("identity", fw.identity, lambda x: x, [X34]),
    ("operators", lambda x, y: (x + 1.0) * y - x / (y * y + 1.0) + (-x) ** 2.0,
     lambda x, y: (x + 1) * y - x / (y * y + 1) + x ** 2, [X34, Y34]),
    ("reflected_operators", lambda x: 2.0 - 3.0 / (1.0 + x * x) + 2.0 ** x,
     lambda x: 2 - 3 / (1 + x * x) + 2.0 ** x, [X34]),
]

MATMUL = [
    ("matmul", {}, [normal(3, 4), normal(4, 5)]),
    ("transpose_a", {"transpose_a": True}, [normal(4, 3), normal(4, 5)]),
    ("transpose_b", {"transpose_b": True}, [normal(3, 4), normal(5, 4)]),
    ("transpose_ab", {"transpose_a": True, "transpose_b": True}, [normal(4, 3), normal(5, 4)]),
    ("vector_a", {}, [normal(4), normal(4, 5)]),
    ("vector_b", {}, [normal(3, 4), normal(4)]),
    ("vector_vector", {}, [normal(4), normal(4)]),
    ("vector_a_transpose_b", {"transpose_b": True}, [normal(4), normal(5, 4)]),
    ("vector_b_transpose_a", {"transpose_a": True}, [normal(4, 3), normal(4)]),
    ("batched", {}, [normal(2, 3, 4), normal(2, 4, 5)]),
    ("batched_broadcast_b", {}, [normal(2, 3, 4), normal(4, 5)]),
    ("batched_broadcast_a", {}, [normal(3, 4), normal(2, 4, 5)]),
    ("batched_broadcast_ones", {}, [normal(2, 1, 3, 4), normal(1, 3, 4, 2)]),
    ("batched_transposes", {"transpose_a": True, "transpose_b": True},
     [normal(2, 4, 3), normal(1, 5, 4)]),
    ("batched_vector_b", {}, [normal(2, 3, 4), normal(4)]),
    ("batched_vector_a", {}, [normal(4), normal(2, 4, 3)]),
    ("batched_vector_b_transpose_a", {"transpose_a": True}, [normal(2, 4, 3), normal(4)]),
    ("batched_vector_a_transpose_b", {"transpose_b": True}, [normal(4), normal(2, 3, 4)]),
]


def _np_matmul(transpose_a=False, transpose_b=False):
    def ref(a, b):
        a = np.swapaxes(a, -1, -2) if transpose_a else a
        b = np.swapaxes(b, -1, -2) if transpose_b else b
        return np.matmul(a, b)
    return ref


MATMUL_CASES = [(f"matmul_{name}", lambda a, b, kw=kw: fw.matmul(a, b, **kw),
                 _np_matmul(**kw), args) for name, kw, args in MATMUL]
MATMUL_CASES.append(("matmul_operator", lambda a, b: a @ b, np.matmul,
                     [normal(3, 4), normal(4, 2)]))

REDUCE_OPS = {"reduce_sum": np.sum, "reduce_mean": np.mean, "reduce_max": np.max,
              "reduce_min": np.min}
REDUCE_INPUT = normal(2, 3, 4)  # continuous values: no ties among the maxima
REDUCE_CASES = [
    (f"{name}_axis{axis}_keepdims{keepdims}".replace(" ", ""),
     lambda x, name=name, axis=axis, keepdims=keepdims: getattr(fw, name)(
         x, axis=axis, keepdims=keepdims),
     lambda x, ref=ref, axis=axis, keepdims=keepdims: ref(x, axis=axis, keepdims=keepdims),
     [REDUCE_INPUT])
    for name, ref in REDUCE_OPS.items()
    for axis in (None, 0, -1, (0, 2), (-1, 1))
    for keepdims in (False, True)
]
REDUCE_CASES.append(("reduce_sum_scalar", fw.reduce_sum, np.sum, [normal()]))
REDUCE_CASES.append(("reduce_max_row", lambda x: fw.reduce_max(x, axis=1),
                     lambda x: np.max(x, axis=1), [normal(1, 5)]))

SHAPE_CASES = [
    ("reshape", lambda x: fw.reshape(x, (4, -1)), lambda x: x.reshape(4, -1), [X34]),
    ("reshape_to_scalar", lambda x: fw.reshape(x, ()), lambda x: x.reshape(()), [normal(1, 1)]),
    ("transpose_default", fw.transpose, np.transpose, [X34]),
    ("transpose_perm", lambda x: fw.transpose(x, (1, 2, 0)),
     lambda x: np.transpose(x, (1, 2, 0)), [normal(2, 3, 4)]),
    ("expand_dims_0", lambda x: fw.expand_dims(x, 0), lambda x: x[None], [X34]),
    ("expand_dims_neg", lambda x: fw.expand_dims(x, -1), lambda x: x[..., None], [X34]),
    ("squeeze_all", fw.squeeze, np.squeeze, [normal(1, 3, 1, 2)]),
    ("squeeze_axis", lambda x: fw.squeeze(x, axis=-2), lambda x: np.squeeze(x, -2),
     [normal(1, 3, 1, 2)]),
    ("concat_axis0", lambda x, y: fw.concat([x, y, x], axis=0),
     lambda x, y: np.concatenate([x, y, x], 0), [normal(2, 3), normal(1, 3)]),
    ("concat_axis_neg", lambda x, y: fw.concat([x, y], axis=-1),
     lambda x, y: np.concatenate([x, y], -1), [normal(2, 3), normal(2, 2)]),
    ("stack_axis0", lambda x, y: fw.stack([x, y, y]), lambda x, y: np.stack([x, y, y]),
     [normal(2, 3), normal(2, 3)]),
    ("stack_axis_neg", lambda x, y: fw.stack([x, y], axis=-1),
     lambda x, y: np.stack([x, y], -1), [normal(2, 3), normal(2, 3)]),
    ("gather_repeated", lambda x: fw.gather(x, [4, 0, 4, 2]),
     lambda x: x[[4, 0, 4, 2]], [GATHER]),
    ("gather_axis1_2d_indices", lambda x: fw.gather(x, fw.constant([[2, 0], [2, 2]]), axis=1),
     lambda x: x[:, [[2, 0], [2, 2]]], [GATHER]),
    ("where", lambda x, y: fw.where(fw.constant(MASK), x, y),
     lambda x, y: np.where(MASK, x, y), [X34, Y34]),
    ("where_broadcast", lambda x, y: fw.where(fw.constant(MASK), x, y),
     lambda x, y: np.where(MASK, x, y), [normal(4), normal(3, 1)]),
    ("where_scalar_branch", lambda x: fw.where(fw.constant(MASK), x, 0.0),
     lambda x: np.where(MASK, x, 0.0), [X34]),
    ("getitem_slice", lambda x: x[1:, ::2], lambda x: x[1:, ::2], [X34]),
    ("getitem_int", lambda x: x[1], lambda x: x[1], [X34]),
    ("getitem_negative_step", lambda x: x[::-1, -1], lambda x: x[::-1, -1], [X34]),
    ("getitem_ellipsis_none", lambda x: x[None, ..., 2], lambda x: x[None, ..., 2],
     [normal(2, 3, 4)]),
    ("getitem_list", lambda x: x[[0, 2, 0]], lambda x: x[[0, 2, 0]], [X34]),
    ("getitem_bool_mask", lambda x: x[fw.constant(MASK)], lambda x: x[MASK], [X34]),
    ("getitem_tensor_index", lambda x: x[:, fw.constant([3, 1, 3])],
     lambda x: x[:, [3, 1, 3]], [X34]),
    ("broadcast_to", lambda x: fw.broadcast_to(x, (2, 3, 4)),
     lambda x: np.broadcast_to(x, (2, 3, 4)), [normal(3, 1)]),
]

EINSUM_CASES = [
    (f"einsum_{eq}", lambda *xs, eq=eq: fw.einsum(eq, *xs),
     lambda *xs, eq=eq: np.einsum(eq, *xs), args)
    for eq, args in [
        ("ij,jk->ik", [normal(3, 4), normal(4, 2)]),
        ("ij->j", [X34]),
        ("ij->", [X34]),
        ("i,j->ij", [normal(3), normal(4)]),
        ("bij,bjk->bik", [normal(2, 3, 4), normal(2, 4, 2)]),
        ("...ij,jk->...ik", [normal(2, 3, 4), normal(4, 2)]),
        ("ij,ij->i", [X34, Y34]),
        ("ijk->kji", [normal(2, 3, 4)]),
        ("ii->", [M]),
        ("ii->i", [M]),
        ("biij,j->bi", [T2334, normal(4)]),
    ]
]

NN_CASES = [
    ("nn.relu", fw.nn.relu, lambda x: np.maximum(x, 0), [away(3, 4)]),
    ("nn.sigmoid", fw.nn.sigmoid, np_sigmoid, [X34]),
    ("nn.tanh", fw.nn.tanh, np.tanh, [X34]),
    ("nn.softmax", fw.nn.softmax, np_softmax, [LOGITS]),
    ("nn.softmax_axis0", lambda x: fw.nn.softmax(x, axis=0), lambda x: np_softmax(x, 0),
     [LOGITS]),
    ("nn.softmax_1d", fw.nn.softmax, np_softmax, [normal(5)]),
    ("nn.log_softmax", fw.nn.log_softmax, np_log_softmax, [LOGITS]),
    ("nn.log_softmax_axis0", lambda x: fw.nn.log_softmax(x, axis=0),
     lambda x: np_log_softmax(x, 0), [LOGITS]),
    ("nn.bias_add", fw.nn.bias_add, np.add, [X34, normal(4)]),
    ("nn.bias_add_3d", fw.nn.bias_add, np.add, [normal(2, 3, 4), normal(4)]),
    ("nn.bias_add_relu", fw.nn.bias_add_relu, lambda x, b: np.maximum(x + b, 0),
     [away(3, 4, margin=0.5), _rng.uniform(-0.2, 0.2, 4)]),
    ("nn.bias_add_relu_3d", fw.nn.bias_add_relu, lambda x, b: np.maximum(x + b, 0),
     [away(2, 3, 4, margin=0.5), _rng.uniform(-0.2, 0.2, 4)]),
    ("nn.dense", fw.nn.dense, lambda x, w, b: x @ w + b, [X34, normal(4, 5), normal(5)]),
    ("nn.dense_3d", fw.nn.dense, lambda x, w, b: x @ w + b,
     [normal(2, 3, 4), normal(4, 5), normal(5)]),
    ("nn.dense_vector", fw.nn.dense, lambda x, w, b: x @ w + b, [normal(4), normal(4, 5),
                                                                  normal(5)]),
    ("nn.dense_relu", lambda x, w, b: fw.nn.dense(x, w, b, relu=True),  # kept off the kink
     lambda x, w, b: np.maximum(x @ w + b, 0),
     [away(2, 3, 4, margin=0.5), np.eye(4) + _rng.uniform(-0.02, 0.02, (4, 4)),
      _rng.uniform(-0.05, 0.05, 4)]),
    ("nn.softplus", fw.nn.softplus, lambda x: np.logaddexp(x, 0), [X34]),
    ("nn.gelu", fw.nn.gelu, np_gelu, [X34]),
    ("nn.gelu_approximate", lambda x: fw.nn.gelu(x, approximate=True),
     lambda x: np_gelu(x, approximate=True), [X34]),
    ("nn.sparse_softmax_cross_entropy_with_logits",
     lambda labels, logits: fw.nn.sparse_softmax_cross_entropy_with_logits(labels, logits),
     np_sparse_xent, [labels_for(LOGITS), LOGITS]),
    ("nn.sparse_softmax_cross_entropy_3d",
     lambda labels, logits: fw.nn.sparse_softmax_cross_entropy_with_logits(labels, logits),
     np_sparse_xent, [np.array([[0, 2], [1, 1]], np.int32), normal(2, 2, 3)]),
    ("nn.softmax_cross_entropy_with_logits",
     lambda labels, logits: fw.nn.softmax_cross_entropy_with_logits(labels, logits),
     lambda labels, logits: -(labels * np_log_softmax(logits)).sum(-1),
     [soft_labels(4, 5), LOGITS]),
    ("nn.softmax_cross_entropy_axis0",
     lambda labels, logits: fw.nn.softmax_cross_entropy_with_logits(labels, logits, axis=0),
     lambda labels, logits: -(labels.T * np_log_softmax(logits.T)).sum(-1),
     [soft_labels(5, 4).T.copy(), LOGITS]),
]

CASES = ELEMENTWISE + MATMUL_CASES + REDUCE_CASES + SHAPE_CASES + EINSUM_CASES + NN_CASES
IDS = [c[0] for c in CASES]
assert len(set(IDS)) == len(IDS), "case ids must be unique"


def _tensors(args):
    return [fw.constant(a) for a in args]


@pytest.fixture
def backend(each_backend):
    """The table's tests run once per backend: NumPy, CuPy and the CuPy emulator (conftest.py);
    one suite, not a copied GPU suite."""
    return each_backend


@pytest.mark.parametrize("name, f, ref, args", CASES, ids=IDS)
def test_forward_matches_numpy(name, f, ref, args, backend):
    out = f(*_tensors(args))
    expected = ref(*args)
    assert out.shape == np.shape(expected)
    assert out.dtype == fw.float64
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, f, ref, args", CASES, ids=IDS)
def test_first_and_second_order_gradients(name, f, ref, args, backend):
    check_gradients(f, *args, order=2)


@pytest.mark.parametrize("name, f, ref, args", [c for c in CASES if c[0] != "cast_same"],
                         ids=[i for i in IDS if i != "cast_same"])
def test_float32_values_and_gradients_stay_float32(name, f, ref, args, backend):
    xs = [fw.constant(np.asarray(a, np.float32) if np.asarray(a).dtype.kind == "f" else a)
          for a in args]
    sources = [x for x in xs if x.dtype.kind == "f"]
    with fw.GradientTape() as tape:
        tape.watch(sources)
        y = f(*xs)
    assert y.dtype == fw.float32
    np.testing.assert_allclose(y.numpy(), ref(*args), rtol=2e-4, atol=2e-4)
    for g in tape.gradient(y, sources, unconnected_gradients="zero"):
        assert g.dtype == fw.float32


def _recorded(f, args):
    """``f`` on the case's arguments under a persistent tape watching its float64 ones."""
    xs = _tensors(args)
    sources = [x for x in xs if x.dtype == fw.float64]
    with fw.GradientTape(persistent=True) as tape:
        tape.watch(sources)
        y = f(*xs)
    return tape, y, sources


@pytest.mark.parametrize("name, f, ref, args", CASES, ids=IDS)
def test_vectorized_jacobian_matches_gradient_rows(name, f, ref, args, backend):
    """The VJPs under a leading batch axis (jacobian's pfor path) agree with plain VJPs."""
    tape, y, sources = _recorded(f, args)
    jac = tape.jacobian(y, sources, unconnected_gradients="zero")
    chunked = tape.jacobian(y, sources, parallel_iterations=5, unconnected_gradients="zero")
    n = int(np.prod(y.shape))
    rows = [[] for _ in sources]
    for r in range(n):
        seed = np.zeros(n)
        seed[r] = 1.0
        grads = tape.gradient(y, sources, output_gradients=fw.constant(seed.reshape(y.shape)),
                              unconnected_gradients="zero")
        for row, g in zip(rows, grads):
            row.append(fw.convert_to_tensor(g).numpy())  # (gather: IndexedSlices)
    for j, c, row, x in zip(jac, chunked, rows, sources):
        assert j.shape == y.shape + x.shape
        expected = np.stack(row).reshape(y.shape + x.shape)
        np.testing.assert_allclose(j.numpy(), expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(c.numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, f, ref, args", CASES, ids=IDS)
def test_array_vjps_equal_the_tensor_vjps(name, f, ref, args, backend):
    """A gradient no tape records runs the array VJPs; under an outer tape, the tensor VJPs."""
    tape, y, sources = _recorded(f, args)
    cotangent = fw.constant(_rng.standard_normal(y.shape))
    on_arrays = tape.gradient(y, sources, cotangent, unconnected_gradients="zero")
    with fw.GradientTape():  # recording the backward pass: the tensor VJPs
        tensor = tape.gradient(y, sources, cotangent, unconnected_gradients="zero")
    for r, t, x in zip(on_arrays, tensor, sources):
        assert r.shape == t.shape == x.shape and r.dtype == t.dtype == x.dtype
        assert type(r) is type(t)  # (gather: IndexedSlices both ways)
        np.testing.assert_allclose(fw.convert_to_tensor(r).numpy(),
                                   fw.convert_to_tensor(t).numpy(), rtol=1e-12, atol=1e-12)


ARRAY_VJP_CASES = [
    ("add", fw.add, [X34, normal(4)]), ("subtract", fw.subtract, [X34, normal(4)]),
    ("multiply", fw.multiply, [X34, normal(3, 1)]), ("negative", fw.negative, [X34]),
    ("square", fw.square, [X34]), ("matmul", fw.matmul, [normal(3, 4), normal(4, 5)]),
    ("matmul_vector", fw.matmul, [normal(4), normal(4, 5)]),
    ("bias_add", fw.nn.bias_add, [X34, normal(4)]),
    ("bias_add_relu", fw.nn.bias_add_relu, [X34, normal(4)]),
    ("dense", lambda x, w, b: fw.nn.dense(x, w, b, relu=True), [X34, normal(4, 5), normal(5)]),
    ("relu", fw.nn.relu, [X34]), ("reduce_sum", lambda x: fw.reduce_sum(x, axis=0), [X34]),
    ("reduce_mean", fw.reduce_mean, [X34]),
    ("sparse_xent", lambda labels, logits: fw.nn.sparse_softmax_cross_entropy_with_logits(
        labels, logits), [labels_for(LOGITS), LOGITS]),
]


@pytest.mark.parametrize("name, f, args", ARRAY_VJP_CASES, ids=[c[0] for c in ARRAY_VJP_CASES])
def test_array_vjps_compute_just_the_gradients_asked_for(name, f, args, backend):
    """``needs`` says which arguments the walk wants: the others get None (no wasted work, and
    no gradient collected for a constant), the wanted ones their tensor VJP's value; so does
    the host form, where host tuning registered one."""
    xs = _tensors(args)
    with fw.GradientTape() as tape:
        tape.watch([x for x in xs if x.dtype == fw.float64])
        y = f(*xs)
    (r,) = tape._records[-1:]
    prim, inputs, out, params = r.op, r.inputs, r.output, r.params
    assert prim.array_vjp is not None
    g = fw.constant(_rng.standard_normal(out.shape))
    # An array VJP writes into none of what it is given: a persistent tape shares the
    # cotangents between gradient() calls, and the record's arrays serve every later pass.
    arrays = [g._value, out._value] + [a._value for a in inputs] + list(
        params.get("saved") or ())
    for array in arrays:
        if isinstance(array, np.ndarray):
            array.flags.writeable = False
    for k, (x, vjp) in enumerate(zip(inputs, prim.vjps)):
        if vjp is None:
            continue
        needs = tuple(i == k for i in range(len(inputs)))
        expected = vjp(g, out, *inputs, **params)
        on_host = isinstance(g._value, np.ndarray)  # (the host form takes NumPy arrays only)
        for array_vjp in {prim.array_vjp, prim.host_array_vjp if on_host else prim.array_vjp}:
            grads = array_vjp(g._value, out._value, needs, *[a._value for a in inputs], **params)
            assert [i for i, r in enumerate(grads) if r is not None] == [k]
            np.testing.assert_allclose(fw.constant(grads[k]).numpy(), expected.numpy(),
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, f, ref, args", CASES, ids=IDS)
def test_vectorized_hessian_matches_gradient_rows(name, f, ref, args, backend):
    """Second order under a leading axis: the jacobian of a gradient (the VJPs' own VJPs)."""
    xs = _tensors(args)
    sources = [x for x in xs if x.dtype == fw.float64]
    with fw.GradientTape(persistent=True) as outer:
        outer.watch(sources)
        with fw.GradientTape() as inner:
            inner.watch(sources)
            y = f(*xs)
            total = fw.reduce_sum(y * fw.constant(_rng.standard_normal(y.shape)))
        grad = fw.convert_to_tensor(  # (gather: IndexedSlices, densified on the outer tape)
            inner.gradient(total, sources[0], unconnected_gradients="zero"))
    hessians = outer.jacobian(grad, sources, unconnected_gradients="zero")
    n = int(np.prod(grad.shape))
    for h, x in zip(hessians, sources):
        rows = []
        for r in range(n):
            seed = np.zeros(n)
            seed[r] = 1.0
            rows.append(outer.gradient(grad, x, output_gradients=fw.constant(
                seed.reshape(grad.shape)), unconnected_gradients="zero").numpy())
        np.testing.assert_allclose(h.numpy(), np.stack(rows).reshape(grad.shape + x.shape),
                                   rtol=1e-10, atol=1e-12)


def test_third_order_through_fused_ops():
    check_gradients(fw.nn.log_softmax, LOGITS, order=3)
    check_gradients(lambda x: fw.reduce_sum(fw.tanh(x) * fw.sin(x), axis=1), X34, order=3)


def test_cast_through_float32_and_back():
    f = lambda x: fw.cast(fw.cast(x, fw.float32), fw.float64) * 3.0  # noqa: E731
    check_gradients(f, X34, order=2, eps=1e-2, rtol=1e-3, atol=1e-4)
    x = fw.constant(X34)
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = fw.cast(x, fw.float32)
    g = tape.gradient(y, x)
    assert g.dtype == fw.float64
    np.testing.assert_array_equal(g.numpy(), np.ones((3, 4)))


def test_cast_to_integer_has_no_gradient():
    x = fw.constant(X34)
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = fw.cast(fw.cast(x, fw.int32), fw.float64)
    assert tape.gradient(y, x) is None


def test_reduce_max_ties_share_the_gradient():
    x = fw.constant([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = fw.reduce_max(x, axis=1)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)


def test_gelu_forms_are_close():
    x = fw.constant(np.linspace(-3, 3, 13))
    np.testing.assert_allclose(fw.nn.gelu(x).numpy(), fw.nn.gelu(x, approximate=True).numpy(),
                               atol=1e-3)


# --- property tests: broadcasting, scalars, keepdims ------------------------------------------
FEW = settings(max_examples=25, deadline=None)


def numeric_gradient(f, args, i, weights, eps=1e-6):
    """d sum(weights * f(args)) / d args[i], one element at a time (central differences)."""
    base = [np.array(a, dtype=np.float64) for a in args]
    grad = np.zeros_like(base[i])
    for idx in np.ndindex(base[i].shape):
        total = []
        for sign in (1, -1):
            shifted = [a.copy() for a in base]
            shifted[i][idx] += sign * eps
            total.append(np.sum(weights * f(*[fw.constant(a) for a in shifted]).numpy()))
        grad[idx] = (total[0] - total[1]) / (2 * eps)
    return grad


def check_tape_gradients(f, args, weights):
    """Each input's gradient has that input's shape and equals finite differences."""
    xs = _tensors(args)
    with fw.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    grads = tape.gradient(y, xs, output_gradients=fw.constant(weights),
                          unconnected_gradients="zero")
    for i, (g, a) in enumerate(zip(grads, args)):
        assert g.shape == np.shape(a)
        assert g.dtype == fw.float64
        np.testing.assert_allclose(g.numpy(), numeric_gradient(f, args, i, weights),
                                   rtol=1e-5, atol=1e-7)


def floats(lo=-2.0, hi=2.0):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def grid(offset):
    """Multiples of 0.5 shifted by ``offset``: two grids with different offsets never tie."""
    return st.integers(-4, 4).map(lambda k: k * 0.5 + offset)


BINARY = {
    "add": (fw.add, np.add, floats(), floats()),
    "subtract": (fw.subtract, np.subtract, floats(), floats()),
    "multiply": (fw.multiply, np.multiply, floats(), floats()),
    "divide": (fw.divide, np.divide, floats(), floats(0.5, 2.0)),
    "pow": (fw.pow, np.power, floats(0.5, 2.0), floats()),
    "maximum": (fw.maximum, np.maximum, grid(0.0), grid(0.25)),
    "minimum": (fw.minimum, np.minimum, grid(0.25), grid(0.0)),
    "operator_mul_add": (lambda x, y: x * y + x, lambda x, y: x * y + x, floats(), floats()),
}


@FEW
@pytest.mark.parametrize("name", sorted(BINARY))
@given(data=st.data(),
       shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3))
def test_binary_broadcasting(name, data, shapes):
    op, ref, ex, ey = BINARY[name]
    sx, sy = shapes.input_shapes
    x = data.draw(arrays(np.float64, sx, elements=ex), label="x")
    y = data.draw(arrays(np.float64, sy, elements=ey), label="y")
    out = op(fw.constant(x), fw.constant(y))
    assert out.shape == shapes.result_shape
    np.testing.assert_allclose(out.numpy(), ref(x, y), rtol=1e-12)
    weights = data.draw(arrays(np.float64, shapes.result_shape, elements=floats()), label="w")
    check_tape_gradients(op, [x, y], weights)


@FEW
@given(data=st.data(),
       shapes=mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3))
def test_where_broadcasting(data, shapes):
    sc, sx, sy = shapes.input_shapes
    cond = data.draw(arrays(np.bool_, sc), label="condition")
    x = data.draw(arrays(np.float64, sx, elements=floats()), label="x")
    y = data.draw(arrays(np.float64, sy, elements=floats()), label="y")
    f = lambda a, b: fw.where(fw.constant(cond), a, b)  # noqa: E731
    out = f(fw.constant(x), fw.constant(y))
    np.testing.assert_array_equal(out.numpy(), np.where(cond, x, y))
    weights = data.draw(arrays(np.float64, shapes.result_shape, elements=floats()), label="w")
    check_tape_gradients(f, [x, y], weights)


@st.composite
def reductions(draw):
    shape = draw(st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple))
    ndim = len(shape)
    axes = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
    axis = draw(st.one_of(st.none(), axes,
                          st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim,
                                   unique=True).map(tuple) if ndim else st.nothing()))
    keepdims = draw(st.booleans())
    # distinct values on a 0.1 grid: no ties, so max/min are differentiable
    x = draw(arrays(np.float64, shape, elements=st.integers(-60, 60).map(lambda k: k / 10),
                    unique=True))
    return x, axis, keepdims


@FEW
@pytest.mark.parametrize("name", sorted(REDUCE_OPS))
@given(data=st.data(), case=reductions())
def test_reductions_keepdims_and_axes(name, data, case):
    x, axis, keepdims = case
    op = lambda t: getattr(fw, name)(t, axis=axis, keepdims=keepdims)  # noqa: E731
    out = op(fw.constant(x))
    expected = REDUCE_OPS[name](x, axis=axis, keepdims=keepdims)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    weights = data.draw(arrays(np.float64, np.shape(expected), elements=floats()), label="w")
    check_tape_gradients(op, [x], weights)


@FEW
@given(data=st.data(),
       shapes=mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=2,
                                            max_side=3))
def test_matmul_batch_and_vector_shapes(data, shapes):
    sa, sb = shapes.input_shapes
    a = data.draw(arrays(np.float64, sa, elements=floats()), label="a")
    b = data.draw(arrays(np.float64, sb, elements=floats()), label="b")
    out = fw.matmul(fw.constant(a), fw.constant(b))
    assert out.shape == shapes.result_shape
    np.testing.assert_allclose(out.numpy(), np.matmul(a, b), rtol=1e-10, atol=1e-12)
    weights = data.draw(arrays(np.float64, shapes.result_shape, elements=floats()), label="w")
    check_tape_gradients(fw.matmul, [a, b], weights)


@FEW
@given(data=st.data(), n=st.integers(1, 4), m=st.integers(1, 3))
def test_row_vector_broadcasts_in_a_small_network(data, n, m):
    """A (1, n) bias and a scalar scale broadcast against a (m, n) batch, as in a layer."""
    x = data.draw(arrays(np.float64, (m, n), elements=floats()), label="x")
    b = data.draw(arrays(np.float64, (1, n), elements=floats()), label="b")
    s = data.draw(arrays(np.float64, (), elements=floats(0.5, 2.0)), label="s")
    f = lambda x, b, s: fw.nn.softplus(x * s + b)  # noqa: E731
    np.testing.assert_allclose(f(*_tensors([x, b, s])).numpy(), np.logaddexp(x * s + b, 0),
                               rtol=1e-12)
    weights = data.draw(arrays(np.float64, (m, n), elements=floats()), label="w")
    check_tape_gradients(f, [x, b, s], weights)


@pytest.mark.parametrize("width", [31, 32, 100])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relus_give_numpys_maximum_bit_for_bit(width, dtype, backend):
    """The ReLUs compare a long row with a row of zeros instead of the scalar 0 (faster on the
    host): the same values, NaN, infinities and the sign of zero included."""
    x = _rng.standard_normal((5, width)).astype(dtype)
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    bias, kernel = _rng.standard_normal(width).astype(dtype), np.eye(width, dtype=dtype)
    with np.errstate(invalid="ignore"):  # inf * 0 in the product: NaN, as expected
        cases = [(fw.nn.relu(x), x), (fw.nn.bias_add_relu(x, bias), x + bias),
                 (fw.nn.dense(x, kernel, bias, relu=True), x @ kernel + bias)]
    for got, before in cases:
        expected = np.maximum(before, 0)
        np.testing.assert_array_equal(got.numpy(), expected)
        assert np.array_equal(np.signbit(got.numpy()), np.signbit(expected))


@pytest.mark.parametrize("rows", [1, 7, 300])
def test_bias_gradients_are_the_column_sums(rows):
    """On the host a 2-D bias gradient is a product with ones (faster than NumPy's sum), on
    row-major cotangents and on column-major ones (a few classes' cross-entropy gives those)."""
    g = _rng.standard_normal((rows, 33))
    for array in (g, np.asfortranarray(g)):
        np.testing.assert_allclose(host.column_sums(array), g.sum(axis=0), rtol=1e-12)
    single = host.column_sums(g.astype(np.float32))  # as accurate as NumPy's row-major sum
    assert single.dtype == np.float32
    np.testing.assert_allclose(single, g.astype(np.float32).astype(np.float64).sum(axis=0),
                               rtol=0, atol=1e-6 * rows)
    x, kernel, bias = normal(rows, 5), fw.Variable(normal(5, 33)), fw.Variable(normal(33))
    for relu, f in [(True, lambda: fw.nn.dense(x, kernel, bias, relu=True)),
                    (False, lambda: fw.nn.bias_add(fw.matmul(x, kernel), bias))]:
        with fw.GradientTape() as tape:
            y = f()
        got = tape.gradient(y, bias, output_gradients=fw.constant(g)).numpy()
        expected = (g * (y.numpy() > 0) if relu else g).sum(axis=0)
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
