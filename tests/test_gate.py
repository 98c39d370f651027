"""The one gate: every public function computes through primitives, so ``fw.function`` never
freezes a value. Each function of the namespaces, discovered (a new op is covered with no
edit), is called under ``fw.function`` on two different inputs of one signature; the second
call must equal eager (a second trace is allowed: where the values decide a shape, a replay
traces again). Arguments come from ``tests/gate_cases.py``."""
import inspect

import numpy as np
import pytest

import framework as fw
from framework.engine import nest
from gate_cases import CASES, GENERIC, NOT_COMPUTATIONS

NAMESPACES = {"fw": fw, "fw.math": fw.math, "fw.linalg": fw.linalg, "fw.nn": fw.nn,
              "fw.random": fw.random, "fw.random.experimental": fw.random.experimental,
              "fw.losses": fw.losses, "fw.metrics": fw.metrics}
if hasattr(fw, "image"):
    NAMESPACES["fw.image"] = fw.image

# Functions that cannot be traced, each with the error it gives (none at present).
UNTRACEABLE = {}


def _public_functions():
    found = []
    for label, module in NAMESPACES.items():
        for name in sorted(dir(module)):
            value = getattr(module, name)
            if name.startswith("_") or inspect.isclass(value) or inspect.ismodule(value) \
                    or not callable(value):
                continue
            if name[:1].isupper():  # Keras's short aliases of loss classes (MSE, BCE)
                continue
            found.append((label, name, value))
    return found


FUNCTIONS = _public_functions()


def _reason_not_computed(label, name):
    return NOT_COMPUTATIONS.get(f"{label}.{name}", NOT_COMPUTATIONS.get(name))


def _arguments(name, fn):
    """Two draws of arguments ``fn`` accepts eagerly, and its eager answers on them."""
    makers = [CASES[name]] if name in CASES else GENERIC
    for make in makers:
        first, second = [make(np.random.default_rng(seed)) for seed in (1, 2)]
        # Python arguments (axes, sizes, functions) the same in both: one signature
        draws = [first, tuple(b if _holds_tensor(b) else a for a, b in zip(first, second))]
        try:
            answers = [fn(*args) for args in draws]
        except Exception:  # noqa: BLE001 - the next pattern of arguments
            if name in CASES:
                raise
            continue
        if _holds_tensor(answers[0]):
            return draws, answers
    return None, None


def computed_arguments(label, name, fn):
    """``_arguments`` of a function of the namespaces; the test is skipped, with the reason,
    for what computes nothing."""
    reason = _reason_not_computed(label, name)
    if reason:
        pytest.skip(reason)
    return _arguments(name, fn)


def _holds_tensor(value):
    return any(isinstance(leaf, fw.Tensor) for leaf in nest.flatten(value))


def _as_arrays(value):
    return [np.asarray(leaf.numpy() if isinstance(leaf, fw.Tensor) else leaf)
            for leaf in nest.flatten(value) if leaf is not None]


@pytest.mark.parametrize("label, name, fn", FUNCTIONS,
                         ids=[f"{label}.{name}" for label, name, _ in FUNCTIONS])
def test_a_second_call_under_function_gives_eagers_answer(label, name, fn):
    draws, answers = computed_arguments(label, name, fn)
    assert draws is not None, (
        f"{label}.{name}: no arguments in tests/gate_cases.py that it accepts: give it a "
        f"case in CASES (or, if it computes nothing, a reason in NOT_COMPUTATIONS)")
    compiled = fw.function(lambda *args: fn(*args))
    if name in UNTRACEABLE:
        with pytest.raises(Exception, match=UNTRACEABLE[name]):
            compiled(*draws[0])
        return
    compiled(*draws[0])
    second = compiled(*draws[1])
    for got, want in zip(_as_arrays(second), _as_arrays(answers[1]), strict=True):
        assert got.shape == want.shape, f"{label}.{name}: shape {got.shape} != eager's"
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True,
                                   err_msg=f"{label}.{name} under fw.function")
