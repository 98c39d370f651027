"""The GradientTape notebook, cell by cell, with ``fw`` in place of ``tf``.

Seed tutorial "GradientTape" (a notebook): derivatives of scalar functions, two variables at once,
a composite of a matrix function, gradients with respect to an intermediate result, Python
control flow inside the tape, and higher orders from nested tapes.

Run: ``python examples/tutorial_notebook.py``
"""
import framework as fw

# ---- one variable ------------------------------------------------------------------------
print("1D derivation")
x = fw.constant(value=3.0)  # differentiable tensors must be floating point
with fw.GradientTape(persistent=True, watch_accessed_variables=True) as tape:
    tape.watch(x)  # watch decides what is differentiated
    y1 = x * 2
    y2 = x * x + 2
    y3 = x * x + 2 * x
dy1_dx = tape.gradient(target=y1, sources=x)
dy2_dx = tape.gradient(target=y2, sources=x)
dy3_dx = tape.gradient(target=y3, sources=x)
print("dy1_dx:", dy1_dx)  # 2.0
print("dy2_dx:", dy2_dx)  # 6.0
print("dy3_dx:", dy3_dx)  # 8.0

# ---- two variables -----------------------------------------------------------------------
print("2D derivation")
x = fw.constant(value=3.0)
y = fw.constant(value=2.0)
with fw.GradientTape(persistent=True) as tape:
    tape.watch([x, y])
    z = x * x * y + x * y
dz_dx = tape.gradient(sources=x, target=z)  # 2xy + y = 14
dz_dx_dy = tape.gradient(sources=[x, y], target=z)  # [14, x^2 + x = 12]
print(dz_dx)
print(dz_dx_dy)

# ---- a composite function of a matrix ----------------------------------------------------
# y = sum of x's entries, z = y^2, so dz/dx = 2y = 8 in every entry. The notebook asks the same
# tape twice (it re-ran the cell in between); a persistent tape says that in code.
x = fw.ones((2, 2))
with fw.GradientTape(persistent=True) as t:
    t.watch(x)
    y = fw.reduce_sum(x)
    z = fw.multiply(y, y)
dz_dx = t.gradient(z, x)
for i in [0, 1]:
    for j in [0, 1]:
        assert dz_dx[i][j].numpy() == 8
print("dz_dx =", dz_dx.numpy().tolist())  # [[8, 8], [8, 8]]
dz_dy = t.gradient(z, y)  # gradients with respect to an intermediate result work too
print(dz_dy.numpy())  # 8.0
del t


# ---- control flow ------------------------------------------------------------------------
def f(x, y):
    output = 1.0
    for i in range(y):
        if 1 < i < 5:
            output = fw.multiply(output, x)
    return output


def grad(x, y):
    with fw.GradientTape() as t:
        t.watch(x)
        out = f(x, y)  # which function this is depends on y; the tape records what ran
    return t.gradient(out, x)


x = fw.convert_to_tensor(2.0)
assert grad(x, 6).numpy() == 12.0  # x^3 -> 3x^2
assert grad(x, 5).numpy() == 12.0  # x^3
assert grad(x, 4).numpy() == 4.0  # x^2 -> 2x
print("control flow:", [float(grad(x, n)) for n in (6, 5, 4)])

# ---- higher orders -----------------------------------------------------------------------
x = fw.Variable(1.0)
with fw.GradientTape() as t:
    with fw.GradientTape() as t2:
        y = x * x * x
    dy_dx = t2.gradient(y, x)
d2y_dx2 = t.gradient(dy_dx, x)
assert dy_dx.numpy() == 3.0
assert d2y_dx2.numpy() == 6.0
print(dy_dx.numpy(), d2y_dx2.numpy())  # 3.0 6.0
