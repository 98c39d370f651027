"""Derivatives of any order from nested tapes, a Hessian-vector product, and Newton's method.

A tape records every op run while it is active, and ``tape.gradient`` is itself made of ops. So
an outer tape records the inner tape's backward pass, and its own ``gradient`` differentiates the
derivative again: n nested tapes give the n-th derivative, with no special machinery.

Run: ``python examples/higher_order.py``
"""
import math
from contextlib import ExitStack

import numpy as np

import framework as fw


def derivatives(f, x, order):
    """[f(x), f'(x), ..., f^(order)(x)] from ``order`` nested tapes (innermost used first)."""
    with ExitStack() as stack:
        tapes = [stack.enter_context(fw.GradientTape()) for _ in range(order)]
        for tape in tapes:
            tape.watch(x)
        results = [f(x)]
        for tape in reversed(tapes):  # each gradient is recorded by the tapes still outside it
            results.append(tape.gradient(results[-1], x))
    return results


# ---- the first four derivatives of sin at 0.5: cos, -sin, -cos, sin -------------------------
x = fw.constant(0.5, dtype=fw.float64)
expected = [math.sin(0.5), math.cos(0.5), -math.sin(0.5), -math.cos(0.5), math.sin(0.5)]
for n, (value, exact) in enumerate(zip(derivatives(fw.sin, x, 4), expected)):
    print(f"d^{n}/dx^{n} sin(x) at 0.5 = {float(value):+.6f}  (exact {exact:+.6f})")

# ---- a Hessian-vector product without forming the Hessian ---------------------------------
# For f(w) = sum(w^4) / 4 + w0 * w1 the Hessian is diag(3 w^2) plus ones off the diagonal in
# (0, 1). H v is the gradient of (grad f . v): two tapes, memory linear in the size of w.
w = fw.Variable([1.0, 2.0, 3.0], dtype=fw.float64, name="w")
v = fw.constant([1.0, 0.0, -1.0], dtype=fw.float64)


def f(w):
    return fw.reduce_sum(w ** 4) / 4 + w[0] * w[1]


with fw.GradientTape() as outer:
    with fw.GradientTape() as inner:
        loss = f(w)
    grad = inner.gradient(loss, w)
    grad_dot_v = fw.reduce_sum(grad * v)
hvp = outer.gradient(grad_dot_v, w)
hessian = np.diag(3 * w.numpy() ** 2)
hessian[0, 1] = hessian[1, 0] = 1.0
print("Hessian-vector product:", hvp.numpy().tolist(), " exact:", (hessian @ v.numpy()).tolist())

# ---- Newton's method: x <- x - f'(x) / f''(x) ---------------------------------------------
# f(x) = x^4 - 3x^2 + x has a minimum near x = 1.13; from x = 2 Newton gets there in a few steps.
def quartic(x):
    return x ** 4 - 3 * x ** 2 + x


x = fw.Variable(2.0, dtype=fw.float64, name="x")
for step in range(6):
    _, first, second = derivatives(quartic, x, 2)
    print(f"Newton step {step}: x = {float(x):.10f}, f'(x) = {float(first):+.3e}")
    x.assign_sub(first / second)
print(f"minimum at x = {float(x):.10f}")
