"""Every entry that tests/reference/make_tf_reference.py recorded from TensorFlow 2.21, replayed
on ``framework`` (no TensorFlow needed): each op case's outputs and dtypes, its gradient and
second-order term for the same weights and directions, or, where TensorFlow refused the
inputs, an error here too; then the conversion dtypes, ``format`` texts and ``//``/``%``."""
import io
import json
import os

import numpy as np
import pytest

import framework as fw
from reference import replay

with open(os.path.join(os.path.dirname(__file__), "reference", "tf_reference.json")) as _f:
    REFERENCE = json.load(_f)

TOLERANCE = {"rtol": 2e-5, "atol": 2e-5}  # float32 arithmetic in a different order
# second-order terms go through two chains of float32 rounding (solves, decompositions)
SECOND_ORDER_TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}


def build(spec):
    return replay.build(spec, fw.constant)


def _case_id(case):
    kwargs = ",".join(f"{k}={v}" for k, v in case["kwargs"].items() if not isinstance(v, dict))
    return f"{case['op']}({kwargs})"


CASES = REFERENCE["cases"]
IDS = [f"{i}-{_case_id(c)}" for i, c in enumerate(CASES)]


def _close(got, want, what, tolerance=TOLERANCE):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               err_msg=what, **tolerance)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_op_matches_tensorflow(case):
    op = replay.resolve(fw, case["op"])
    args = [build(a) for a in case["args"]]
    kwargs = {k: build(v) for k, v in case["kwargs"].items()}
    if "raises" in case:
        with pytest.raises((TypeError, ValueError)):
            op(*args, **kwargs)
        return

    def recorded(key):
        return lambda tensors: [fw.constant(np.asarray(w, t.dtype))
                                for t, w in zip(tensors, case[key])]

    with np.errstate(over="ignore", invalid="ignore"):  # (an empty segment: the lowest float)
        result, outs, _, grads, _, grads2 = replay.run(
            fw, op, args, kwargs, recorded("weights"), recorded("directions"), case["order"])
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
    assert len(grads2) == len(case["grads2"])
    for k, (g, want) in enumerate(zip(grads2, case["grads2"])):
        _close(g.numpy(), want, f"second-order term {k}", SECOND_ORDER_TOLERANCE)


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


@pytest.mark.parametrize("entry", REFERENCE["prints"], ids=lambda e: repr(e["text"][:30]))
def test_print_matches_tensorflow(entry):
    stream = io.StringIO()
    inputs = [replay.build_nested(x, fw.constant) for x in entry["inputs"]]
    fw.print(*inputs, output_stream=stream, **entry["kwargs"])
    assert stream.getvalue() == entry["text"]
