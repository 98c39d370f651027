"""Every entry that tests/reference/make_tf_reference.py recorded from TensorFlow 2.21, replayed
on ``framework`` (no TensorFlow needed): each op case's outputs and dtypes, its gradient and
second-order term for the same weights and directions, or, where TensorFlow refused the
inputs, an error here too; then the conversion dtypes, ``format`` texts and ``//``/``%``."""
import json
import os

import numpy as np
import pytest

import framework as fw

with open(os.path.join(os.path.dirname(__file__), "reference", "tf_reference.json")) as _f:
    REFERENCE = json.load(_f)

TOLERANCE = {"rtol": 2e-5, "atol": 2e-5}  # float32 arithmetic in a different order


def resolve(path):
    value = fw
    for part in path.split("."):
        value = getattr(value, part)
    return value


def build(spec):
    if isinstance(spec, dict) and "tensor" in spec:
        return fw.constant(np.asarray(spec["tensor"], dtype=spec["dtype"]))
    if isinstance(spec, list) and spec and all(isinstance(s, dict) for s in spec):
        return [build(s) for s in spec]
    return spec


def _flatten(value):
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _paired(outs, weights):
    terms = [fw.reduce_sum(o * fw.constant(np.asarray(w, o.dtype))) for o, w in zip(outs, weights)]
    return fw.math.add_n(terms)


def _case_id(case):
    kwargs = ",".join(f"{k}={v}" for k, v in case["kwargs"].items() if not isinstance(v, dict))
    return f"{case['op']}({kwargs})"


CASES = REFERENCE["cases"]
IDS = [f"{i}-{_case_id(c)}" for i, c in enumerate(CASES)]


def _close(got, want, what):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               err_msg=what, **TOLERANCE)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_op_matches_tensorflow(case):
    op = resolve(case["op"])
    args = [build(a) for a in case["args"]]
    kwargs = {k: build(v) for k, v in case["kwargs"].items()}
    if "raises" in case:
        with pytest.raises((TypeError, ValueError)):
            op(*args, **kwargs)
        return
    sources = [x for x in _flatten([args, list(kwargs.values())])
               if isinstance(x, fw.Tensor) and x.dtype.kind == "f"]
    with fw.GradientTape(persistent=True) as outer:
        outer.watch(sources)
        with fw.GradientTape(persistent=True) as inner:
            inner.watch(sources)
            result = op(*args, **kwargs)
            outs = _flatten(result)
            differentiable = [o for o in outs if o.dtype.kind == "f"]
            total = _paired(differentiable, case["weights"]) if differentiable else None
        grads = (inner.gradient(total, sources, unconnected_gradients="zero")
                 if total is not None and sources else [])
        second = _paired(grads, case["directions"]) if grads else None
    if case["structure"] not in ("EagerTensor", "list", "tuple"):
        assert type(result).__name__ == case["structure"]
    assert len(outs) == len(case["outputs"])
    for k, (out, want) in enumerate(zip(outs, case["outputs"])):
        assert out.dtype.name == want["dtype"], f"output {k}: dtype"
        assert list(out.shape) == want["shape"], f"output {k}: shape"
        _close(out.numpy(), want["value"], f"output {k}")
    assert len(grads) == len(case["grads"])
    for k, (g, want) in enumerate(zip(grads, case["grads"])):
        _close(g.numpy(), want, f"gradient {k}")
    if case["grads2"]:
        grads2 = outer.gradient(second, sources, unconnected_gradients="zero")
        for k, (g, want) in enumerate(zip(grads2, case["grads2"])):
            _close(g.numpy(), want, f"second-order term {k}")


def test_every_case_checks_something():
    assert len(CASES) > 150
    assert sum(bool(c.get("grads2")) for c in CASES) > 100


@pytest.mark.parametrize("entry", REFERENCE["conversions"], ids=str)
def test_conversion_dtype_matches_tensorflow(entry):
    assert fw.constant(entry["value"]).dtype.name == entry["dtype"]


@pytest.mark.parametrize("entry", REFERENCE["formats"], ids=lambda e: f"{e['value']}:{e['spec']}")
def test_format_matches_tensorflow(entry):
    assert format(fw.constant(entry["value"], dtype=entry["dtype"]), entry["spec"]) == entry["text"]


@pytest.mark.parametrize("entry", REFERENCE["operators"], ids=str)
def test_floor_operators_match_tensorflow(entry):
    a, b = fw.constant(entry["a"]), fw.constant(entry["b"])
    result = a // b if entry["op"] == "floordiv" else a % b
    assert result.dtype.name == entry["dtype"] and result.numpy().item() == entry["value"]
