"""Shared checks for tables of op cases ``(id, f, numpy_reference, args)``: the forward equals
NumPy's in float64; first and second derivatives equal finite differences
(``fw.test.check_gradients``); the vectorized Jacobian (one backward pass with a leading batch
axis on the cotangent) equals the Jacobian built one row at a time."""
import numpy as np
import pytest

import framework as fw
from framework.test import check_gradients

__all__ = ["check_forward", "check_gradients", "check_jacobian_pfor_equals_loop", "table_tests"]


def check_forward(f, ref, args, rtol=1e-10, atol=1e-12):
    out = f(*[fw.constant(a) for a in args])
    expected = ref(*args)
    for got, want in zip(_flat(out), _flat(expected)):
        assert got.shape == np.shape(want), (got.shape, np.shape(want))
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol)


def _flat(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def check_jacobian_pfor_equals_loop(f, args):
    """For every float output of ``f`` and every float argument."""
    xs = [fw.constant(a) for a in args]
    sources = [x for x in xs if x.dtype == fw.float64]
    with fw.GradientTape(persistent=True) as tape:
        tape.watch(sources)
        outputs = [y for y in _flat(f(*xs)) if y.dtype == fw.float64]
    for y in outputs:
        fast = tape.jacobian(y, sources, unconnected_gradients="zero")
        slow = tape.jacobian(y, sources, unconnected_gradients="zero",
                             experimental_use_pfor=False)
        for j, s, x in zip(fast, slow, sources):
            assert j.shape == y.shape + x.shape
            np.testing.assert_allclose(j.numpy(), s.numpy(), rtol=1e-12, atol=1e-12)


def table_tests(cases, device_cases):
    """The tests of a table of op cases, for a test module to bind to names of its own:
    forward, gradients of orders 1 and 2, the vectorized Jacobian, and (for ``device_cases``)
    the forward and first-order gradients on the device backend."""
    ids = [c[0] for c in cases]
    assert len(set(ids)) == len(ids), "case ids must be unique"
    each_case = pytest.mark.parametrize("name, f, ref, args", cases, ids=ids)

    @each_case
    def forward(name, f, ref, args):
        check_forward(f, ref, args)

    @each_case
    def gradients(name, f, ref, args):
        check_gradients(f, *args, order=2)

    @each_case
    def jacobian(name, f, ref, args):
        check_jacobian_pfor_equals_loop(f, args)

    @pytest.mark.parametrize("name, f, ref, args", device_cases,
                             ids=[c[0] for c in device_cases])
    def on_device(name, f, ref, args, device_backend):
        check_forward(f, ref, args)
        check_gradients(f, *args, order=1)

    return forward, gradients, jacobian, on_device
